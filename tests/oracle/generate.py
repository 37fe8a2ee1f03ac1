"""Write the PyTorch-agreement corpus (run by hand, with PyTorch installed):

    pip install torch==2.13.0
    python tests/oracle/generate.py            # all cases
    python tests/oracle/generate.py --check    # only report which cases are missing or stale

For every case of ``cases.py`` it makes the inputs (NumPy generator seeded by the case name), runs the
PyTorch callable, and for the outputs that require grad draws a random upstream gradient and takes the
input gradients with ``torch.autograd.grad``. Everything goes to ``corpus.npz`` (keys ``<case>/in0``,
``<case>/out0``, ``<case>/gout0``, ``<case>/grad0``; the number is the input's or output's position)
and a small manifest ``corpus.json`` (torch version, per case its array names and input signature).
graphgrad is not imported: the corpus records PyTorch's behaviour only.
"""
from __future__ import annotations

import argparse
import json
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(os.path.dirname(HERE)))

from tests.oracle.cases import CASES  # noqa: E402

CORPUS = os.path.join(HERE, "corpus.npz")
MANIFEST = os.path.join(HERE, "corpus.json")


def _as_list(out):
    return list(out) if isinstance(out, (tuple, list)) else [out]


def _to_torch(torch, spec, arr):
    t = _apply(spec, torch.tensor(arr))  # a copy: in-place updates (running stats) never touch ``arr``
    if getattr(spec, "diff", False) and arr.dtype.kind == "f":
        t.requires_grad_(True)
    return t


def _apply(spec, t):
    return spec.view(t) if hasattr(spec, "view") else t


def run_case(torch, case) -> dict:
    """The corpus arrays of one case, keyed ``in0``, ``out0``, ``gout0``, ``grad0``..."""
    arrays = {}
    xs = case.make_inputs()
    for i, x in enumerate(xs):
        arrays[f"in{i}"] = np.array(x, order="C")  # (ascontiguousarray would make 0-d 1-d)
    tins = [_to_torch(torch, spec, x) for spec, x in zip(case.inputs, xs)]
    outs = _as_list(case.torch(torch, *tins))
    for j, o in enumerate(outs):
        arrays[f"out{j}"] = o.detach().numpy().copy()
    diff_in = [i for i, t in enumerate(tins) if t.requires_grad]
    diff_out = [j for j, o in enumerate(outs) if o.requires_grad]
    if diff_in and diff_out:
        rng = np.random.default_rng(case.seed() + 1)
        gouts = []
        for j in diff_out:
            gout = rng.uniform(-1.0, 1.0, tuple(outs[j].shape)).astype(arrays[f"out{j}"].dtype)
            arrays[f"gout{j}"] = gout
            gouts.append(torch.tensor(gout))
        grads = torch.autograd.grad([outs[j] for j in diff_out], [tins[i] for i in diff_in], gouts,
                                    allow_unused=True)
        for i, gr in zip(diff_in, grads):
            arrays[f"grad{i}"] = (np.zeros(tuple(tins[i].shape), arrays[f"in{i}"].dtype) if gr is None
                                  else gr.detach().numpy().copy())
    for key, value in arrays.items():
        if not case.nonfinite and value.dtype.kind == "f" and not np.all(np.isfinite(value)):
            raise ValueError(f"{case.name}: {key} is not finite; fix the case")
    return arrays


def dump_manifest(manifest: dict) -> str:
    """The manifest as JSON with one line per case (small, and diffs well)."""
    head = {k: v for k, v in manifest.items() if k != "cases"}
    lines = ["{"] + [f"{json.dumps(k)}: {json.dumps(v)}," for k, v in head.items()] + ['"cases": {']
    rows = [f"{json.dumps(name)}: {json.dumps(entry, separators=(',', ':'))}"
            for name, entry in manifest["cases"].items()]
    lines.append(",\n".join(rows))
    lines += ["}", "}"]
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true", help="only list missing or stale cases")
    args = parser.parse_args(argv)

    if args.check:
        with open(MANIFEST) as f:
            manifest = json.load(f)
        bad = [c.name for c in CASES
               if manifest["cases"].get(c.name, {}).get("sig") != c.signature()]
        print("\n".join(bad) if bad else "corpus is up to date")
        return 1 if bad else 0

    import warnings

    import torch

    warnings.filterwarnings("ignore", category=UserWarning)
    torch.manual_seed(0)
    torch.set_num_threads(1)  # deterministic reduction order
    corpus = {}
    manifest = {"torch_version": torch.__version__, "numpy_version": np.__version__, "cases": {}}
    for case in CASES:
        arrays = run_case(torch, case)
        for key, value in arrays.items():
            corpus[f"{case.name}/{key}"] = value
        manifest["cases"][case.name] = {"sig": case.signature(), "arrays": list(arrays)}
    np.savez_compressed(CORPUS, **corpus)
    with open(MANIFEST, "w") as f:
        f.write(dump_manifest(manifest))
    size = os.path.getsize(CORPUS)
    print(f"{len(manifest['cases'])} cases, {len(corpus)} arrays, {CORPUS} ({size / 1024:.1f} KiB), "
          f"torch {torch.__version__}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
