"""Table-driven op tests: every row of ``op_table.ROWS`` is checked six ways: forward vs NumPy,
gradients vs finite differences, shape rule vs actual output, float32 behaviour, and graph mode vs
eager mode (forward and ``gg.gradients``), with static shapes and with an unknown batch dimension."""
from __future__ import annotations

import numpy as np
import pytest

import graphgrad as gg
from tests.ops.op_table import REQUIRED_OPS, ROWS

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


def _compatible(static, actual) -> bool:
    return static is not None and len(static) == len(actual) and all(
        s is None or s == a for s, a in zip(static, actual))


def _graph_vs_eager(row, batch_none: bool) -> None:
    """Build ``row.fn`` on placeholders in a fresh graph (first dimension ``None`` when
    ``batch_none``), run it and its ``gg.gradients`` in a Session, and compare with eager mode."""
    dtype = "float64" if "float64" in row.dtypes else row.dtypes[0]
    values, tensors = _tensors(row, dtype, requires_grad=row.grad)
    diff = row.differentiable() if row.grad else []
    eager = _outputs(row.fn(*tensors))
    rng = np.random.default_rng(7)
    upstream = [rng.standard_normal(o.shape).astype(o.dtype) if o.dtype.kind == "f" else None for o in eager]
    live = [k for k, o in enumerate(eager) if o.requires_grad]
    eager_grads = []
    if diff and live:
        eager_grads = gg.grad([eager[k] for k in live], [tensors[i] for i in diff],
                              grad_outputs=[gg.tensor(upstream[k]) for k in live], allow_unused=True)
    elif diff:
        eager_grads = [None] * len(diff)

    graph = gg.Graph()
    feed = {}
    with graph.as_default():
        inputs = []
        for v in values:
            if isinstance(v, np.ndarray):
                shape = (None,) + v.shape[1:] if batch_none else v.shape
                p = gg.placeholder(v.dtype, shape)
                feed[p] = v
                inputs.append(p)
            else:
                inputs.append(v)
        outs = _outputs(row.fn(*inputs))
        assert len(outs) == len(eager)
        graph_grads = []
        if diff:
            roots, seeds = [], []
            for o, u in zip(outs, upstream):
                if o.requires_grad and u is not None:
                    seed = gg.placeholder(u.dtype, o.shape)
                    feed[seed] = u
                    roots.append(o)
                    seeds.append(seed)
            graph_grads = gg.gradients(roots, [inputs[i] for i in diff], grad_ys=seeds)
    fetches = outs + [g for g in graph_grads if g is not None]
    results = gg.Session(graph).run(fetches, feed)
    where = f"{row.name} (graph{', batch None' if batch_none else ''})"
    for o, e, got in zip(outs, eager, results[:len(outs)]):
        assert got.shape == e.shape and got.dtype == e.dtype, f"{where}: {got.shape} {got.dtype} != {e.spec}"
        assert _compatible(o.shape, e.shape), f"{where}: static shape {o.shape} but ran to {e.shape}"
        np.testing.assert_allclose(got, e.numpy(), rtol=1e-9, atol=1e-12, err_msg=where)
    got_grads = iter(results[len(outs):])
    for i, ge, gs in zip(diff, eager_grads, graph_grads):
        assert (ge is None) == (gs is None), f"{where}: gradient of input {i} is None in only one mode"
        if gs is None:
            continue
        got = next(got_grads)
        assert _compatible(gs.shape, got.shape), f"{where}: gradient {i} static shape {gs.shape} ran to {got.shape}"
        assert got.shape == ge.shape and got.dtype == ge.dtype, f"{where}: gradient {i} {got.shape} {got.dtype}"
        np.testing.assert_allclose(got, ge.numpy(), rtol=1e-9, atol=1e-12, err_msg=f"{where}: gradient {i}")


def _expect_graph_error(row, error: type, batch_none: bool) -> None:
    """A row documented not to work in graph mode must fail with that graphgrad error and a message
    (not a crash deep in NumPy, and not a silently wrong result)."""
    with pytest.raises(error) as info:
        _graph_vs_eager(row, batch_none)
    assert isinstance(info.value, gg.GraphgradError) and str(info.value), f"{row.name}: {info.value!r}"


@pytest.mark.parametrize("row", ROWS, ids=IDS)
def test_graph_mode_matches_eager(row):
    if row.graph_error is not None:
        _expect_graph_error(row, row.graph_error, batch_none=False)
    else:
        _graph_vs_eager(row, batch_none=False)


BATCH_ROWS = [r for r in ROWS if r.batched() or r.batch_error is not None]


@pytest.mark.parametrize("row", BATCH_ROWS, ids=[r.name for r in BATCH_ROWS])
def test_graph_mode_with_unknown_batch_dim(row):
    if row.batch_error is not None:
        _expect_graph_error(row, row.batch_error, batch_none=True)
    else:
        _graph_vs_eager(row, batch_none=True)


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
