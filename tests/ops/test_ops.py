"""Table-driven op tests: every row of ``op_table.ROWS`` is checked four ways."""
from __future__ import annotations

import numpy as np
import pytest

import graphgrad as gg
from tests.ops.op_table import REQUIRED_OPS, ROWS, A, F

IDS = [row.name for row in ROWS]


def _tensors(row, dtype, requires_grad=False):
    values = row.make_inputs(dtype)
    diff = set(row.differentiable())
    out = []
    for i, (spec, v) in enumerate(zip(row.inputs, values)):
        if isinstance(v, np.ndarray):
            out.append(gg.tensor(v, requires_grad=requires_grad and i in diff))
        else:
            out.append(v)
    return values, out


def _outputs(result):
    return list(result) if isinstance(result, (tuple, list)) else [result]


@pytest.mark.parametrize("row", ROWS, ids=IDS)
def test_forward_matches_numpy_reference(row):
    if row.ref is None:
        pytest.skip("no NumPy reference for this row (checked by its own tests)")
    values, tensors = _tensors(row, "float64")
    expected = _outputs(row.ref(*[np.array(v, copy=True) if isinstance(v, np.ndarray) else v for v in values]))
    got = _outputs(row.fn(*tensors))
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        e = np.asarray(e)
        assert g.shape == e.shape, f"{row.name}: shape {g.shape} != reference {e.shape}"
        np.testing.assert_allclose(g.numpy(), e, rtol=row.rtol, atol=row.atol, err_msg=row.name)


@pytest.mark.parametrize("row", [r for r in ROWS if r.grad], ids=[r.name for r in ROWS if r.grad])
def test_gradient_matches_finite_differences(row):
    values, tensors = _tensors(row, "float64")
    wrt = row.differentiable()
    atol, rtol = row.grad_tol
    gg.check_grad(row.fn, *tensors, wrt=wrt, order=row.order, atol=atol, rtol=rtol, eps=row.eps)


@pytest.mark.parametrize("row", [r for r in ROWS if r.infer], ids=[r.name for r in ROWS if r.infer])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_shape_rule_matches_actual_output(row, dtype):
    if dtype not in row.dtypes:
        pytest.skip(f"row does not run in {dtype}")
    values, tensors = _tensors(row, dtype)
    actual = _outputs(row.fn(*tensors))
    with gg.Graph().as_default():
        symbolic = [gg.placeholder(t.dtype, t.shape) if isinstance(t, gg.Tensor) else t for t in tensors]
        inferred = _outputs(row.fn(*symbolic))
    for a, s in zip(actual, inferred):
        assert s.is_symbolic, f"{row.name}: symbolic inputs gave a concrete output"
        assert (s.shape, s.dtype) == (a.shape, a.dtype), f"{row.name}: inferred {s.spec} but got {a.spec}"


@pytest.mark.parametrize("row", ROWS, ids=IDS)
def test_float32_stays_float32(row):
    if "float32" not in row.dtypes:
        pytest.skip("row does not run in float32")
    values, tensors = _tensors(row, "float32", requires_grad=row.grad)
    outs = _outputs(row.fn(*tensors))
    floats_in = any(isinstance(v, np.ndarray) and v.dtype.kind == "f" for v in values)
    for out in outs:
        if floats_in and out.dtype.kind == "f":
            assert out.dtype == np.float32, f"{row.name}: float32 inputs gave {out.dtype}"
    if row.ref is not None:
        expected = _outputs(row.ref(*[v.astype(np.float64) if isinstance(v, np.ndarray) and v.dtype.kind == "f"
                                      else v for v in values]))
        for out, e in zip(outs, expected):
            np.testing.assert_allclose(out.numpy().astype(np.float64), np.asarray(e, dtype=np.float64),
                                       rtol=row.rtol32, atol=row.atol32, err_msg=row.name)
    live = [o for o in outs if o.requires_grad]
    if row.grad and live:
        diff = [tensors[i] for i in row.differentiable()]
        grads = gg.grad(live, diff, grad_outputs=[gg.ones_like(o) for o in live], allow_unused=True)
        for x, g in zip(diff, grads):
            if g is not None:
                assert g.dtype == np.float32 and g.shape == x.shape, f"{row.name}: gradient {g.dtype} {g.shape}"


def test_every_required_op_has_a_row():
    covered = {row.op for row in ROWS}
    missing = [op for op in REQUIRED_OPS if op not in covered]
    assert not missing, f"ops without an op-table row: {missing}"


def test_every_public_op_function_has_a_row():
    covered = {row.op for row in ROWS}
    covered_objects = {id(getattr(gg.ops, name)) for name in covered if hasattr(gg.ops, name)}
    missing = [name for name in gg.ops.__all__
               if name not in covered and id(getattr(gg.ops, name)) not in covered_objects]  # aliases count
    assert not missing, f"public op functions without an op-table row: {missing}"


def test_every_required_op_is_public():
    missing = [op for op in REQUIRED_OPS if op != "getitem" and not hasattr(gg, op)]
    assert not missing, f"ops missing from the graphgrad namespace: {missing}"
