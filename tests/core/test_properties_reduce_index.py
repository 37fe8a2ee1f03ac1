"""Property-based tests (hypothesis) for reductions and indexing, plus ``__setitem__`` and the error
messages of the reduce/shape/indexing ops."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import graphgrad as gg

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


# ---- strategies -----------------------------------------------------------------------------------
shapes = st.lists(st.integers(1, 4), min_size=1, max_size=4).map(tuple)


@st.composite
def array_and_axis(draw, ties: bool = False):
    shape = draw(shapes)
    seed = draw(st.integers(0, 2 ** 16))
    rng = np.random.default_rng(seed)
    x = rng.integers(-2, 3, shape).astype(np.float64) if ties else rng.standard_normal(shape)
    ndim = len(shape)
    kind = draw(st.sampled_from(["none", "int", "tuple"]))
    if kind == "none":
        axis = None
    elif kind == "int":
        axis = draw(st.integers(-ndim, ndim - 1))
    else:
        picked = draw(st.lists(st.integers(0, ndim - 1), unique=True, min_size=0, max_size=ndim))
        axis = tuple(a - ndim if draw(st.booleans()) else a for a in picked)
    return x, axis, draw(st.booleans())


def _axes(axis, ndim):
    if axis is None:
        return tuple(range(ndim))
    axis = (axis,) if isinstance(axis, int) else axis
    return tuple(a % ndim for a in axis)


def _expand(g, shape, axis, keepdims):
    """Broadcast a reduced array back to ``shape``."""
    if not keepdims:
        g = np.expand_dims(g, _axes(axis, len(shape)))
    return np.broadcast_to(g, shape)


def _grad(fn, x):
    t = gg.tensor(x, requires_grad=True)
    out = fn(t)
    out.backward(gg.ones_like(out))
    return out, t.grad.numpy()


# ---- reductions -----------------------------------------------------------------------------------
@SETTINGS
@given(array_and_axis())
def test_reductions_forward_match_numpy(case):
    x, axis, keepdims = case
    t = gg.tensor(x)
    for name in ("sum", "mean", "prod", "max", "min", "var", "std"):
        got = getattr(gg, name)(t, axis=axis, keepdims=keepdims)
        want = getattr(np, name)(x, axis=axis, keepdims=keepdims)
        assert got.shape == np.shape(want), name
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-10, atol=1e-12, err_msg=name)
    m = np.max(x, axis=axis, keepdims=True)
    lse = np.log(np.sum(np.exp(x - m), axis=axis, keepdims=True)) + m
    lse = lse if keepdims else np.squeeze(lse, _axes(axis, x.ndim))
    np.testing.assert_allclose(gg.logsumexp(t, axis, keepdims).numpy(), lse, rtol=1e-10)
    for name in ("all", "any"):
        b = x > 0
        np.testing.assert_array_equal(getattr(gg, name)(gg.tensor(b), axis, keepdims).numpy(),
                                      getattr(np, name)(b, axis=axis, keepdims=keepdims))


@SETTINGS
@given(array_and_axis())
def test_sum_and_mean_gradients_are_analytic(case):
    x, axis, keepdims = case
    _, g = _grad(lambda t: gg.sum(t, axis, keepdims), x)
    np.testing.assert_array_equal(g, np.ones_like(x))
    n = int(np.prod([x.shape[a] for a in _axes(axis, x.ndim)]))
    _, g = _grad(lambda t: gg.mean(t, axis, keepdims), x)
    np.testing.assert_allclose(g, np.full_like(x, 1.0 / n))


@SETTINGS
@given(array_and_axis(ties=True))
def test_max_min_gradients_split_ties_evenly(case):
    x, axis, keepdims = case
    for fn, ref in ((gg.max, np.max), (gg.min, np.min)):
        out, g = _grad(lambda t: fn(t, axis, keepdims), x)
        m = ref(x, axis=axis, keepdims=True)
        mask = (x == m).astype(float)
        want = mask / np.sum(mask, axis=axis, keepdims=True)
        np.testing.assert_allclose(out.numpy(), ref(x, axis=axis, keepdims=keepdims))
        np.testing.assert_allclose(g, want)
        assert np.allclose(np.sum(g, axis=axis), 1.0)


@SETTINGS
@given(array_and_axis())
def test_var_and_logsumexp_gradients_are_analytic(case):
    x, axis, keepdims = case
    axes = _axes(axis, x.ndim)
    n = int(np.prod([x.shape[a] for a in axes]))
    _, g = _grad(lambda t: gg.var(t, axis, keepdims), x)
    np.testing.assert_allclose(g, 2 * (x - x.mean(axis=axis, keepdims=True)) / n, atol=1e-12)
    _, g = _grad(lambda t: gg.logsumexp(t, axis, keepdims), x)
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    np.testing.assert_allclose(g, e / e.sum(axis=axis, keepdims=True), rtol=1e-10, atol=1e-12)


@SETTINGS
@given(array_and_axis(ties=True))
def test_prod_gradient_with_zeros_is_product_of_others(case):
    x, axis, keepdims = case
    axes = _axes(axis, x.ndim)
    _, g = _grad(lambda t: gg.prod(t, axis, keepdims), x)
    # product of the others, by brute force: move reduced axes last and drop one element at a time
    moved = np.moveaxis(x, axes, tuple(range(-len(axes), 0))) if axes else x[..., None]
    flat = moved.reshape(moved.shape[:moved.ndim - len(axes)] + (-1,)) if axes else moved
    n = flat.shape[-1]
    others = np.stack([np.prod(np.delete(flat, i, axis=-1), axis=-1) for i in range(n)], -1)
    want = np.moveaxis(others.reshape(moved.shape), tuple(range(-len(axes), 0)), axes) if axes else np.ones_like(x)
    np.testing.assert_allclose(g, want, atol=1e-12)


@SETTINGS
@given(st.integers(1, 6), st.integers(0, 2 ** 16), st.integers(0, 3))
def test_cumsum_cumprod_gradients_with_zeros(n, seed, zeros):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((2, n))
    x[0, rng.choice(n, min(zeros, n), replace=False)] = 0.0
    v = rng.standard_normal((2, n))
    t = gg.tensor(x, requires_grad=True)
    (gg.cumprod(t, axis=1) * gg.tensor(v)).sum().backward()
    want = np.zeros_like(x)
    for r in range(2):
        for j in range(n):
            want[r, j] = sum(v[r, i] * np.prod(np.delete(x[r, :i + 1], j)) for i in range(j, n))
    np.testing.assert_allclose(t.grad.numpy(), want, atol=1e-12)
    t = gg.tensor(x, requires_grad=True)
    (gg.cumsum(t, axis=-1) * gg.tensor(v)).sum().backward()
    np.testing.assert_allclose(t.grad.numpy(), np.cumsum(v[:, ::-1], axis=1)[:, ::-1])
    gg.check_grad(lambda a: gg.cumprod(a, 1), gg.tensor(x), order=2)


@pytest.mark.parametrize("ord_", [None, 2, 1, np.inf, -np.inf, 3])
def test_norm_gradient_at_zero_is_zero(ord_):
    x = gg.zeros(2, 3, dtype="float64", requires_grad=True)
    y = gg.norm(x, ord_, axis=1)
    y.sum().backward()
    assert np.all(x.grad.numpy() == 0)
    x = gg.zeros(4, dtype="float32", requires_grad=True)
    gg.norm(x).backward()
    assert np.all(x.grad.numpy() == 0) and x.grad.dtype == np.float32


@np.errstate(divide="ignore")
def test_logsumexp_is_stable():
    x = gg.tensor([[1000.0, 1000.0], [-np.inf, 0.0], [-1000.0, -1000.0]], dtype="float64")
    np.testing.assert_allclose(gg.logsumexp(x, axis=1).numpy(), [1000 + np.log(2), 0.0, -1000 + np.log(2)])
    assert gg.logsumexp(gg.tensor([-np.inf, -np.inf])).item() == -np.inf


def test_reduction_dtypes():
    i = gg.tensor(np.arange(6, dtype=np.int32).reshape(2, 3))
    assert gg.mean(i).dtype == np.float32 and gg.sum(i).dtype == np.int64  # integers: the default float
    assert gg.argmax(i, axis=1).dtype == np.int64 and gg.argmin(i).dtype == np.int64
    assert gg.cumsum(gg.tensor([True, True])).dtype == np.int64
    f = gg.tensor(np.ones((2, 3), np.float32))
    for name in ("sum", "mean", "prod", "max", "var", "std", "logsumexp", "norm", "cumsum", "cumprod"):
        assert getattr(gg, name)(f).dtype == np.float32, name


# ---- indexing -------------------------------------------------------------------------------------
@st.composite
def index_case(draw):
    shape = draw(st.lists(st.integers(1, 5), min_size=1, max_size=4).map(tuple))
    key, dim = [], 0
    adv_len = None  # length every advanced index must broadcast to (1-D arrays and masks only)
    while dim < len(shape):
        kind = draw(st.sampled_from(["int", "slice", "slice", "array", "mask", "none", "stop"]))
        n = shape[dim]
        if kind == "stop":
            break
        if kind == "none":
            key.append(None)
            continue
        if kind == "int":
            key.append(draw(st.integers(-n, n - 1)))
        elif kind == "slice":
            start = draw(st.one_of(st.none(), st.integers(-n - 1, n + 1)))
            stop = draw(st.one_of(st.none(), st.integers(-n - 1, n + 1)))
            step = draw(st.one_of(st.none(), st.sampled_from([-3, -2, -1, 1, 2, 3])))
            key.append(slice(start, stop, step))
        elif kind == "array":
            length = adv_len if adv_len is not None else draw(st.integers(1, 6))
            adv_len = length
            values = draw(st.lists(st.integers(-n, n - 1), min_size=length, max_size=length))
            key.append(np.array(values, dtype=np.int64))
        elif adv_len is None:
            key.append(np.array(draw(st.lists(st.booleans(), min_size=n, max_size=n)), dtype=bool))
            adv_len = int(key[-1].sum())
        else:
            key.append(slice(None))
        dim += 1
    if draw(st.booleans()) and dim < len(shape):
        key.insert(draw(st.integers(0, len(key))), Ellipsis)
    as_tensor = draw(st.booleans())
    if as_tensor:
        key = [gg.tensor(k) if isinstance(k, np.ndarray) else k for k in key]
    return shape, tuple(key), draw(st.integers(0, 2 ** 16))


def _np_key(key):
    return tuple(k.numpy() if isinstance(k, gg.Tensor) else k for k in key)


@SETTINGS
@given(index_case())
def test_getitem_forward_and_gradient_match_numpy(case):
    shape, key, seed = case
    x = np.random.default_rng(seed).standard_normal(shape)
    nkey = _np_key(key)
    try:
        want = x[nkey]
    except IndexError:
        with pytest.raises(IndexError):
            gg.tensor(x)[key]
        return
    t = gg.tensor(x, requires_grad=True)
    y = t[key]
    assert y.shape == want.shape
    np.testing.assert_array_equal(y.numpy(), want)
    y.sum().backward()
    counts = np.zeros(shape)
    np.add.at(counts, nkey, 1.0)
    np.testing.assert_array_equal(t.grad.numpy(), counts)
    # the shape rule agrees, on a symbolic tensor (masks are concrete here, so their size is known)
    s = gg.Tensor.symbolic(gg.TensorSpec(shape, np.float64))[key]
    assert s.is_symbolic and s.shape == want.shape


@SETTINGS
@given(index_case())
def test_getitem_second_order(case):
    shape, key, seed = case
    x = np.random.default_rng(seed).standard_normal(shape)
    try:
        x[_np_key(key)]
    except IndexError:
        return
    gg.check_grad(lambda a: a[key] ** 2, gg.tensor(x), order=2)


def test_repeated_indices_accumulate():
    x = gg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    x[gg.tensor([0, 0, 2, 0])].sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [3.0, 0.0, 1.0])


def test_symbolic_mask_gives_unknown_length():
    x = gg.Tensor.symbolic(gg.TensorSpec((3, 4), np.float32))
    m = gg.Tensor.symbolic(gg.TensorSpec((3,), np.bool_))
    assert x[m, 1:].shape == (None, 3)
    i = gg.Tensor.symbolic(gg.TensorSpec((None, 2), np.int64))
    assert x[:, i].shape == (3, None, 2)
    assert gg.Tensor.symbolic(gg.TensorSpec((None, 4), np.float32))[1:, ::2].shape == (None, 2)


def test_ops_are_hashable_and_keep_no_arrays():
    from graphgrad.ops.indexing import GetItem, _parse_key

    struct, arrays = _parse_key((gg.tensor([0, 2]), slice(1, None), None, Ellipsis, gg.tensor([True, False])))
    assert struct == (("array", 1), ("slice", 1, None, None), None, Ellipsis, ("mask", 1, 1)) and len(arrays) == 2
    op = GetItem(struct)
    assert op == GetItem(_parse_key((gg.tensor([1, 1]), slice(1, None), None, ..., gg.tensor([False, True])))[0])
    assert hash(op) == hash(GetItem(struct)) and {op: 1}[GetItem(struct)] == 1
    y = gg.ones(3, 3, requires_grad=True)[gg.tensor([0, 2]), 1:]
    assert isinstance(y.grad_fn.op, GetItem) and hash(y.grad_fn.op)


# ---- __setitem__ ----------------------------------------------------------------------------------
def test_setitem_on_tensor_without_grad():
    x = gg.zeros(3, 4)
    x[1] = 5.0
    x[:, gg.tensor([0, 3])] = gg.tensor([1.0, 2.0])
    x[x > 4] = -1.0
    want = np.zeros((3, 4), np.float32)
    want[1] = 5
    want[:, [0, 3]] = [1, 2]
    want[want > 4] = -1
    np.testing.assert_array_equal(x.numpy(), want)


def test_setitem_on_a_leaf_requiring_grad_raises_and_on_a_graph_tensor_is_recorded():
    x = gg.ones(3, requires_grad=True)
    with pytest.raises(gg.GradError, match="in-place"):
        x[0] = 2.0
    y = x * 2
    y[1] = 0.0  # as PyTorch: y's new value is recorded, the written position has no gradient
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 0.0, 2.0])
    with gg.no_grad():
        x[0] = 2.0  # allowed: parameter updates happen this way
    assert x.numpy()[0] == 2.0


# ---- error messages -------------------------------------------------------------------------------
def test_error_messages_name_the_op_and_shapes():
    a, b = gg.ones(2, 3), gg.ones(4, 5)
    with pytest.raises(gg.ShapeError, match=r"concatenate: shapes \(2, 3\) and \(4, 5\) differ on axis 1"):
        gg.concatenate([a, b], axis=0)
    with pytest.raises(gg.ShapeError, match=r"reshape.*\(2, 3\).*\(4, 2\)"):
        a.reshape(4, 2)
    with pytest.raises(gg.ShapeError, match="squeeze axis 0"):
        gg.squeeze(a, 0)
    with pytest.raises(gg.ShapeError, match="not a permutation"):
        gg.transpose(a, (0, 0))  # (the method follows PyTorch: a.transpose(0, 0) swaps dim 0 with itself)
    with pytest.raises(gg.ShapeError, match="out of range"):
        a.sum(axis=2)
    with pytest.raises(gg.ShapeError, match="equal sections"):
        gg.split(gg.ones(5), 2)
    with pytest.raises(gg.ShapeError, match="stack: all tensors must have the same shape"):
        gg.stack([a, b])
    with pytest.raises(gg.ShapeError, match="norm: matrix norm ord=3"):
        gg.norm(a, 3)
    with pytest.raises(gg.ShapeError, match="exceeds input shape"):
        gg.gather(a, 0, gg.tensor(np.zeros((2, 4), np.int64)))
    with pytest.raises(gg.ShapeError, match=r"BroadcastTo: shapes \(2, 3\) and \(3, 3\) cannot be broadcast"):
        gg.broadcast_to(a, (3, 3))
    with pytest.raises(gg.ShapeError, match="pad: unknown mode"):
        gg.pad(a, 1, mode="median")
    with pytest.raises(gg.DTypeError, match="one_hot|OneHot"):
        gg.one_hot(gg.ones(3))


def test_indexing_errors():
    x = gg.ones(3, 4)
    with pytest.raises(IndexError, match=r"index 3 is out of bounds for axis 0 with size 3"):
        x[3]
    with pytest.raises(gg.ShapeError, match="too many indices"):
        x[0, 0, 0]
    with pytest.raises(gg.DTypeError, match="getitem: index arrays must be integer or boolean"):
        x[gg.tensor([0.5])]
    with pytest.raises(gg.DTypeError, match="invalid index"):
        x["a"]
    with pytest.raises(IndexError, match="boolean mask of shape"):
        x[gg.tensor([True, False])]
    with pytest.raises(IndexError):
        x[gg.tensor([0, 7])]  # data-dependent: raised by the backend, named by the op
    with pytest.raises(gg.ShapeError, match="single ellipsis"):
        x[..., ...]


def test_symbolic_shape_errors_surface_at_construction():
    s = gg.Tensor.symbolic(gg.TensorSpec((None, 3), np.float32))
    with pytest.raises(gg.ShapeError, match="differ on axis 1"):
        gg.concatenate([s, gg.Tensor.symbolic(gg.TensorSpec((2, 4), np.float32))])
    assert gg.concatenate([s, gg.Tensor.symbolic(gg.TensorSpec((2, 3), np.float32))]).shape == (None, 3)
    with pytest.raises(gg.ShapeError, match="out of bounds"):
        s[:, 5]
    assert gg.sum(s, axis=0).shape == (3,) and gg.max(s, axis=1, keepdims=True).shape == (None, 1)
