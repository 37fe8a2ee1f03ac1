"""graphgrad against PyTorch, without PyTorch: every case of ``cases.py`` is run on the inputs stored in
``corpus.npz`` and its outputs and input gradients (for the stored upstream gradients) are compared with
the ones PyTorch computed when ``generate.py`` wrote the corpus."""
from __future__ import annotations

import json
import os

import numpy as np
import pytest

import graphgrad as gg
from tests.oracle.cases import BY_NAME, CASES, REQUIRED_OPS

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS_PATH = os.path.join(HERE, "corpus.npz")
MANIFEST_PATH = os.path.join(HERE, "corpus.json")

if not (os.path.exists(CORPUS_PATH) and os.path.exists(MANIFEST_PATH)):
    pytest.skip("tests/oracle/corpus.npz or corpus.json is missing: run `python tests/oracle/generate.py` "
                "with PyTorch installed (pip install torch==2.13.0) to write it", allow_module_level=True)

with open(MANIFEST_PATH) as _f:
    MANIFEST = json.load(_f)
CORPUS = np.load(CORPUS_PATH)
NAMES = list(MANIFEST["cases"])

MIN_CASES = 120


def _as_list(out):
    return list(out) if isinstance(out, (tuple, list)) else [out]


def _numpy(x):
    return x.numpy() if isinstance(x, gg.Tensor) else np.asarray(x)


def _gg_input(spec, stored, diff):
    """The graphgrad input for one stored array: its (possibly non-contiguous) view, kept as a view."""
    view = spec.view(stored.copy())
    if diff:
        return gg.Tensor(view, requires_grad=True)
    return gg.Tensor(view)


def _check(what, actual, expected, rtol, atol):
    assert actual.shape == expected.shape, f"{what}: shape {actual.shape}, PyTorch {expected.shape}"
    if expected.dtype.kind == "f":
        assert actual.dtype == expected.dtype, f"{what}: dtype {actual.dtype}, PyTorch {expected.dtype}"
        np.testing.assert_allclose(actual, expected, rtol=rtol, atol=atol, err_msg=what)
    elif expected.dtype.kind == "b":
        assert actual.dtype.kind == "b", f"{what}: dtype {actual.dtype}, PyTorch {expected.dtype}"
        np.testing.assert_array_equal(actual, expected, err_msg=what)
    else:
        assert actual.dtype.kind in "iu", f"{what}: dtype {actual.dtype}, PyTorch {expected.dtype}"
        np.testing.assert_array_equal(actual, expected, err_msg=what)


def test_corpus_size():
    assert len(NAMES) >= MIN_CASES, f"the corpus has {len(NAMES)} cases, fewer than {MIN_CASES}"


def test_corpus_up_to_date():
    """Every case of cases.py is in the corpus, made the same way; nothing in the corpus is orphaned."""
    missing = [c.name for c in CASES if c.name not in MANIFEST["cases"]]
    stale = [c.name for c in CASES if c.name in MANIFEST["cases"]
             and MANIFEST["cases"][c.name]["sig"] != c.signature()]
    orphaned = [n for n in NAMES if n not in BY_NAME]
    assert not (missing or stale or orphaned), (
        f"regenerate the corpus (python tests/oracle/generate.py): missing {missing}, stale {stale}, "
        f"orphaned {orphaned}")
    stored = set(CORPUS.files)
    absent = [f"{n}/{k}" for n in NAMES for k in MANIFEST["cases"][n]["arrays"] if f"{n}/{k}" not in stored]
    assert not absent, f"arrays named in corpus.json but not in corpus.npz: {absent[:10]}"


def test_every_op_covered():
    covered = {c.op for c in CASES}
    missing = [op for op in REQUIRED_OPS if op not in covered]
    assert not missing, f"ops without a PyTorch-agreement case: {missing}"


def test_cases_cover_varied_inputs():
    """The table exercises float32, non-contiguous, zero-size and broadcasting inputs, not only the easy path."""
    assert sum(c.dtype == "float32" for c in CASES) >= 20
    assert sum(any(getattr(m, "layout", None) for m in c.inputs) for c in CASES) >= 10
    assert sum(any(0 in getattr(m, "shape", ()) for m in c.inputs) for c in CASES) >= 10


@pytest.mark.parametrize("name", NAMES)
def test_matches_torch(name):
    case = BY_NAME.get(name)
    if case is None:
        pytest.fail(f"{name} is in the corpus but not in cases.py: regenerate the corpus")
    keys = MANIFEST["cases"][name]["arrays"]
    arrays = {k: CORPUS[f"{name}/{k}"] for k in keys}
    rtol, atol = case.tolerances()

    n_in = len(case.inputs)
    diff_in = [i for i in range(n_in) if f"grad{i}" in arrays]
    xs = [_gg_input(spec, arrays[f"in{i}"], i in diff_in) for i, spec in enumerate(case.inputs)]

    outs = _as_list(case.gg(gg, *xs))
    expected = [arrays[k] for k in sorted((k for k in keys if k.startswith("out")), key=lambda k: int(k[3:]))]
    assert len(outs) == len(expected), f"{len(outs)} outputs, PyTorch {len(expected)}"
    for j, (o, e) in enumerate(zip(outs, expected)):
        _check(f"{name}: output {j}", _numpy(o), e, rtol, atol)

    if not diff_in:
        return
    pairs = [(outs[j], arrays[f"gout{j}"]) for j in range(len(outs)) if f"gout{j}" in arrays]
    live = [(o, g) for o, g in pairs if isinstance(o, gg.Tensor) and o.requires_grad]
    if live:
        grads = gg.grad([o for o, _ in live], [xs[i] for i in diff_in],
                        grad_outputs=[gg.tensor(g) for _, g in live], allow_unused=True)
    else:  # graphgrad says no output depends on the inputs: only right if PyTorch's gradients are zero
        grads = [None] * len(diff_in)
    for i, gr in zip(diff_in, grads):
        want = arrays[f"grad{i}"]
        got = np.zeros(want.shape, want.dtype) if gr is None else _numpy(gr)
        _check(f"{name}: gradient of input {i}", got, want, rtol, atol)
