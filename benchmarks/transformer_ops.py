"""Transformer op micro-benchmarks on W5's shapes (../shared/BENCHMARKS.md): graphgrad's fused gelu,
layer_norm, self-attention (packed heads, causal float mask) and erf against PyTorch's (when
installed), forward alone and forward + backward, interleaved in one process.

    python benchmarks/transformer_ops.py [--json out.json] [--repeats 20] [--only gelu,layer_norm,attention,erf]
"""
from __future__ import annotations

import argparse
import contextlib
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from common import report, save_json, time_steps, torch_or_none  # noqa: E402  (first: sets the BLAS threads)

import numpy as np  # noqa: E402


N, L, E, H, FF = 16, 64, 128, 4, 512  # W5: batch, sequence, width, heads, feed-forward width


def _arrays(seed: int = 0) -> dict:
    rng = np.random.default_rng(seed)
    f32 = lambda *shape: rng.standard_normal(shape).astype(np.float32)  # noqa: E731
    return {"ff": f32(N, L, FF), "x": f32(N, L, E), "w": f32(E), "b": f32(E), "qkv": f32(N, L, 3 * E),
            "mask": np.triu(np.full((L, L), -np.inf, np.float32), 1), "g_ff": f32(N, L, FF), "g_x": f32(N, L, E)}


def graphgrad_cases(a: dict) -> dict:
    import graphgrad as gg
    from graphgrad.ops.attention import _apply_attention

    t = {k: gg.tensor(v, requires_grad=k in ("ff", "x", "w", "b", "qkv")) for k, v in a.items()}
    props = (1.0 / math.sqrt(E // H), False, "float", H)

    def attention():
        return _apply_attention(props, (t["qkv"], t["mask"]))

    return {
        "gelu": (lambda: gg.gelu(t["ff"]), lambda: gg.grad([gg.gelu(t["ff"])], [t["ff"]], [t["g_ff"]])),
        "layer_norm": (lambda: gg.layer_norm(t["x"], (E,), t["w"], t["b"]),
                       lambda: gg.grad([gg.layer_norm(t["x"], (E,), t["w"], t["b"])], [t["x"], t["w"], t["b"]],
                                       [t["g_x"]])),
        "attention": (attention, lambda: gg.grad([attention()], [t["qkv"]], [t["g_x"]])),
        "erf": (lambda: gg.erf(t["ff"]), None),
    }


def torch_cases(torch, a: dict) -> dict:
    f = torch.nn.functional
    t = {k: torch.tensor(v, requires_grad=k in ("ff", "x", "w", "b", "qkv")) for k, v in a.items()}

    def attention():
        q, k, v = t["qkv"].view(N, L, 3, H, E // H).permute(2, 0, 3, 1, 4)
        out = f.scaled_dot_product_attention(q, k, v, attn_mask=t["mask"])
        return out.transpose(1, 2).reshape(N, L, E)

    def grad(y, xs, g):
        return torch.autograd.grad(y, xs, g)

    return {
        "gelu": (lambda: f.gelu(t["ff"]), lambda: grad(f.gelu(t["ff"]), [t["ff"]], t["g_ff"])),
        "layer_norm": (lambda: f.layer_norm(t["x"], (E,), t["w"], t["b"]),
                       lambda: grad(f.layer_norm(t["x"], (E,), t["w"], t["b"]), [t["x"], t["w"], t["b"]], t["g_x"])),
        "attention": (attention, lambda: grad(attention(), [t["qkv"]], t["g_x"])),
        "erf": (lambda: torch.erf(t["ff"]), None),
    }


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", default=None)
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--only", default="gelu,layer_norm,attention,erf")
    args = parser.parse_args(argv)
    import graphgrad as gg

    arrays = _arrays()
    ours = graphgrad_cases(arrays)
    torch = torch_or_none()
    theirs = torch_cases(torch, arrays) if torch is not None else {}
    results = {}
    for name in args.only.split(","):
        for k, label in ((0, "forward"), (1, "forward + backward")):
            if ours[name][k] is None:
                continue
            steps = {"graphgrad": ours[name][k]}
            if name in theirs:
                steps[f"pytorch {torch.__version__}"] = theirs[name][k]
            no_grad = k == 0  # forward alone: no autograd recording in either library
            groups = {n: n.split()[0] for n in steps}  # pause between libraries: their threads spin
            with (gg.no_grad() if no_grad else contextlib.nullcontext()), \
                    (torch.no_grad() if no_grad and torch is not None else contextlib.nullcontext()):
                rows = time_steps(steps, warmup=3, repeats=args.repeats, inner=3, groups=groups)
            report(f"{name} ({label}), W5 shapes", "ms", 1e3, rows, "graphgrad", None)
            results[f"{name} {label}"] = rows
    save_json(args.json, results)
    return results


if __name__ == "__main__":
    main()
