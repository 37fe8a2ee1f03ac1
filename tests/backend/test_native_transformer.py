"""The native transformer kernels (graphgrad/backend/native/transformer.c): GELU, layer norm, the attention
softmax, and their gradients.
Each float32 op is compared with its NumPy path (``native.disabled()``), forward and gradient ops, over
odd and empty shapes, NaN/inf, non-contiguous inputs, and eager against ``gg.function``."""
import numpy as np
import pytest

import graphgrad as gg
from graphgrad.backend import native
from graphgrad.ops.nn import LayerNorm, LayerNormGrad
from graphgrad.ops.unary import Gelu, GeluGrad
from tests.backend.native_checks import both, needs_native, openmp_team, three_ways


SHAPES = [(16, 64, 512), (7, 13), (1,), (), (0,), (3, 0, 5), (5, 1, 129)]


def _random(shape, seed=0, scale=3.0):
    return (np.random.default_rng(seed).standard_normal(shape) * scale).astype(np.float32)


# ---- GELU ---------------------------------------------------------------------------------------------------
@needs_native
@pytest.mark.parametrize("approximate", ["none", "tanh"])
@pytest.mark.parametrize("shape", SHAPES)
def test_gelu_and_its_gradient_match_numpy(approximate, shape):
    x, g = _random(shape, 1), _random(shape, 2, 1.0)
    y_on, y_off = both(lambda: Gelu(approximate).forward(np, x))
    assert y_on.shape == y_off.shape == shape and y_on.dtype == np.float32
    # the native exact form is the more accurate one for x < -3 (NumPy's 1 + erf cancels): absolute tolerance
    np.testing.assert_allclose(y_on, y_off, rtol=2e-6, atol=5e-7)
    d_on, d_off = both(lambda: GeluGrad(approximate).forward(np, x, y_off, g))
    assert d_on.dtype == np.float32
    np.testing.assert_allclose(d_on, d_off, rtol=2e-6, atol=5e-7)


@needs_native
@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu_against_float64(approximate):
    x = np.linspace(-12, 12, 200_001).astype(np.float32)
    x64 = x.astype(np.float64)
    y = Gelu(approximate).forward(np, x)
    dy = GeluGrad(approximate).forward(np, x, y, np.ones_like(x))
    with native.disabled():
        y64 = Gelu(approximate).forward(np, x64)
        dy64 = GeluGrad(approximate).forward(np, x64, y64, np.ones_like(x64))
    assert np.max(np.abs(y - y64)) < 1e-6 and np.max(np.abs(dy - dy64)) < 5e-7
    negative = (x < -1) & (x > -4)  # relative accuracy where 1 + erf would cancel
    assert np.max(np.abs(y - y64)[negative] / np.abs(y64[negative])) < 1e-3


@needs_native
@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu_nan_and_infinities_as_numpy(approximate):
    x = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 100.0, -100.0, 1e20, -1e20], np.float32)
    g = np.ones_like(x)
    with np.errstate(all="ignore"):
        y_on, y_off = both(lambda: Gelu(approximate).forward(np, x))
        np.testing.assert_array_equal(y_on, y_off)
        d_on, d_off = both(lambda: GeluGrad(approximate).forward(np, x, y_off, g))
    np.testing.assert_array_equal(d_on[:7], d_off[:7])


@needs_native
def test_gelu_non_contiguous_and_broadcast_inputs():
    x = _random((8, 20), 3)[:, ::2]
    g = _random((10,), 4)
    y_on, y_off = both(lambda: Gelu().forward(np, x))
    np.testing.assert_allclose(y_on, y_off, rtol=2e-6, atol=5e-7)
    d_on, d_off = both(lambda: GeluGrad().forward(np, x, y_off, g))  # g broadcasts: the NumPy path
    np.testing.assert_allclose(d_on, d_off, rtol=2e-6, atol=5e-7)
    d_on, d_off = both(lambda: GeluGrad().forward(np, x, y_off, np.broadcast_to(g, x.shape)))
    np.testing.assert_allclose(d_on, d_off, rtol=2e-6, atol=5e-7)


def test_gelu_eager_equals_compiled():
    x_np = _random((4, 33), 5)

    def step(x):
        x.requires_grad_(True)
        y = gg.gelu(x) * gg.gelu(x, approximate="tanh")
        (gx,) = gg.grad(y.sum(), [x])
        return [y, gx]

    eager, compiled, _ = three_ways(step, x_np)
    for e, c in zip(eager, compiled):
        np.testing.assert_allclose(c, e, rtol=1e-6, atol=1e-7)


# ---- layer norm -----------------------------------------------------------------------------------------------
LN_CASES = [((16, 64, 128), 1), ((7, 13), 1), ((3, 5, 7), 2), ((1, 1), 1), ((0, 9), 1), ((0, 3, 5), 2), ((2, 3, 33), 1)]


@needs_native
@pytest.mark.parametrize("shape, k", LN_CASES)
@pytest.mark.parametrize("has_weight, has_bias", [(True, True), (True, False), (False, True), (False, False)])
def test_layer_norm_and_its_gradient_match_numpy(shape, k, has_weight, has_bias):
    x, g = _random(shape, 1) + 2.0, _random(shape, 2, 1.0)
    params = [_random(shape[len(shape) - k:], s) for s in (3, 4)]
    params = [p for p, keep in zip(params, (has_weight, has_bias)) if keep]
    op = LayerNorm(k, 1e-5, has_weight, has_bias)
    y_on, y_off = both(lambda: op.forward(np, x, *params))
    assert y_on.shape == shape and y_on.dtype == np.float32
    np.testing.assert_allclose(y_on, y_off, rtol=1e-5, atol=2e-5)
    grad = LayerNormGrad(k, 1e-5, has_weight)
    d_on, d_off = both(lambda: grad.forward(np, x, *params[:int(has_weight)], g))
    assert d_on.shape == d_off.shape and d_on.dtype == np.float32
    rows = d_on.shape[0] - 2
    np.testing.assert_allclose(d_on[:rows], d_off[:rows], rtol=1e-5, atol=2e-5)
    np.testing.assert_allclose(d_on[rows:], d_off[rows:], rtol=1e-4, atol=1e-4)  # sums over the rows


@needs_native
def test_layer_norm_nan_non_contiguous_and_eps():
    x = _random((6, 40), 5)[:, ::2]  # strided rows
    x[1, 3] = np.nan
    x[2, 0] = np.inf
    w, b = _random((20,), 6), _random((20,), 7)
    g = _random((6, 40), 8)[:, 1::2]
    with np.errstate(all="ignore"):
        y_on, y_off = both(lambda: LayerNorm(1, 0.5).forward(np, x, w, b))
        np.testing.assert_allclose(y_on, y_off, rtol=1e-5, atol=2e-5)  # NaN rows stay NaN in both
        assert np.isnan(y_on[1]).all() and np.isnan(y_on[2]).all() and np.isfinite(y_on[0]).all()
        d_on, d_off = both(lambda: LayerNormGrad(1, 0.5, True).forward(np, x, w, g))
    np.testing.assert_allclose(d_on, d_off, rtol=1e-5, atol=2e-5)


def test_layer_norm_eager_equals_compiled():
    x_np = _random((4, 6, 10), 9)
    norm = gg.nn.LayerNorm(10)

    def step(x):
        norm.zero_grad()
        x.requires_grad_(True)
        loss = (norm(x) ** 2 * gg.tensor(np.arange(10, dtype=np.float32))).sum()
        (gx,) = gg.grad(loss, [x], retain_graph=True)
        loss.backward()
        return [loss, gx, norm.weight.grad, norm.bias.grad]

    eager, compiled, _ = three_ways(step, x_np)
    for e, c in zip(eager, compiled):
        np.testing.assert_allclose(c, e, rtol=1e-5, atol=1e-5)


# ---- attention softmax -----------------------------------------------------------------------------------------
def _attention_case(heads, mask_kind, mask_shape, causal, seed=0, L=9, S=9, N=3, D=4):
    rng = np.random.default_rng(seed)
    if heads:
        arrays = [rng.standard_normal((N, L, 3 * heads * D)).astype(np.float32)]
        g = rng.standard_normal((N, L, heads * D)).astype(np.float32)
    else:
        arrays = [rng.standard_normal(s).astype(np.float32) for s in ((N, 2, L, 8), (N, 2, S, 8), (N, 2, S, 5))]
        g = rng.standard_normal((N, 2, L, 5)).astype(np.float32)
    if mask_kind == "float":
        arrays.append(np.where(rng.random(mask_shape) < 0.3, -np.inf, rng.standard_normal(mask_shape)).astype(np.float32))
    elif mask_kind == "bool":
        arrays.append(rng.random(mask_shape) < 0.7)
    props = (0.35, causal, mask_kind, heads)
    return props, arrays, g


ATTENTION_CASES = [
    (4, "float", (9, 9), False),         # W5: packed heads, a causal float mask
    (4, None, None, True),
    (4, "bool", (3, 4, 9, 9), False),    # a mask per batch item and head
    (4, "float", (3, 1, 1, 9), True),    # a padding-like mask broadcast over heads and queries
    (None, None, None, False),
    (None, "float", (9, 7), False),
    (None, "bool", (7,), True),
    (None, "float", (3, 1, 9, 7), False)]


@needs_native
@pytest.mark.parametrize("heads, mask_kind, mask_shape, causal", ATTENTION_CASES)
def test_attention_softmax_and_its_gradient_match_numpy(heads, mask_kind, mask_shape, causal):
    from graphgrad.ops.attention import AttentionWeights, ScaledDotProductAttention, ScaledDotProductAttentionGrad

    props, arrays, g = _attention_case(heads, mask_kind, mask_shape, causal, S=9 if heads else 7)
    with np.errstate(invalid="ignore"):
        w_on, w_off = both(lambda: AttentionWeights(*props).forward(np, *arrays))
        np.testing.assert_allclose(w_on, w_off, rtol=1e-5, atol=1e-6)  # rows without keys: NaN in both
        assert np.array_equal(w_on == 0, w_off == 0)  # masked keys get exactly 0
        out = ScaledDotProductAttention(*props).forward(np, *arrays, w_off)
        d_on, d_off = both(lambda: ScaledDotProductAttentionGrad(*props).forward(np, *arrays, w_off, g))
    np.testing.assert_allclose(d_on, d_off, rtol=1e-5, atol=1e-5)
    assert out.dtype == d_on.dtype == np.float32


@needs_native
@pytest.mark.parametrize("D, L, mask_kind, mask_shape, causal", [
    (32, 64, None, None, True),              # W5's heads: whole native kernels per head
    (16, 9, "float", (9, 9), False),         # queries padded to a whole vector
    (16, 20, "bool", (3, 4, 20, 20), True),  # a mask per sample and head
    (48, 17, "float", (3, 1, 1, 17), False),  # 48 = a 32 and a 16 column run
])
def test_packed_attention_whole_heads_match_numpy(D, L, mask_kind, mask_shape, causal):
    """Packed heads of whole vectors (16 floats) go through the whole-head kernels: weights, output
    and gradients against the NumPy path."""
    from graphgrad.ops import attention as A

    props, arrays, g = _attention_case(4, mask_kind, mask_shape, causal, L=L, S=L, D=D)
    assert A._packed_kernel(A.AttentionWeights(*props), "attention_weights_packed_f32", arrays[0]) is not None
    w_on, w_off = both(lambda: A.AttentionWeights(*props).forward(np, *arrays))
    np.testing.assert_allclose(w_on, w_off, rtol=1e-5, atol=1e-6)
    assert np.array_equal(w_on == 0, w_off == 0)
    o_on, o_off = both(lambda: A.ScaledDotProductAttention(*props).forward(np, *arrays, w_off))
    np.testing.assert_allclose(o_on, o_off, rtol=1e-5, atol=1e-5)
    d_on, d_off = both(lambda: A.ScaledDotProductAttentionGrad(*props).forward(np, *arrays, w_off, g))
    np.testing.assert_allclose(d_on, d_off, rtol=1e-4, atol=1e-5)
    assert w_on.dtype == o_on.dtype == d_on.dtype == np.float32


@needs_native
def test_attention_strided_and_empty_inputs():
    from graphgrad.ops.attention import AttentionWeights, ScaledDotProductAttentionGrad

    rng = np.random.default_rng(3)
    q = rng.standard_normal((2, 8, 16)).astype(np.float32)[:, ::2, ::2]  # (2, 4, 8) strided
    k = rng.standard_normal((2, 8, 6)).astype(np.float32).swapaxes(1, 2)  # (2, 6, 8) transposed
    v = rng.standard_normal((2, 6, 3)).astype(np.float32)
    g = rng.standard_normal((2, 4, 3)).astype(np.float32)
    props = (0.5, True, None, None)
    w_on, w_off = both(lambda: AttentionWeights(*props).forward(np, q, k, v))
    np.testing.assert_allclose(w_on, w_off, rtol=1e-5, atol=1e-6)
    d_on, d_off = both(lambda: ScaledDotProductAttentionGrad(*props).forward(np, q, k, v, w_off, g))
    np.testing.assert_allclose(d_on, d_off, rtol=1e-5, atol=1e-5)
    for L, S in ((0, 5), (4, 0)):
        q0, k0, v0 = np.ones((2, L, 8), np.float32), np.ones((2, S, 8), np.float32), np.ones((2, S, 3), np.float32)
        w_on, w_off = both(lambda: AttentionWeights(0.5).forward(np, q0, k0, v0))
        assert w_on.shape == w_off.shape == (2, S, L)


def test_transformer_layer_float32_eager_equals_compiled():
    # the W5 block in float32 (native kernels on when available): loss and every gradient
    rng = np.random.default_rng(8)
    x_np = rng.standard_normal((2, 6, 8)).astype(np.float32)
    mask = gg.tensor(np.triu(np.full((6, 6), -np.inf, np.float32), 1))
    layer = gg.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, activation="gelu", batch_first=True,
                                          norm_first=True)

    def step(x):
        layer.zero_grad()
        loss = (layer(x, src_mask=mask, is_causal=True) ** 2).mean()
        loss.backward()
        return [loss] + [p.grad for p in layer.parameters()]

    eager, compiled, numpy_path = three_ways(step, x_np)
    for e, c in zip(eager, compiled):
        np.testing.assert_allclose(c, e, rtol=1e-5, atol=1e-6)
    for e, n in zip(eager, numpy_path):
        np.testing.assert_allclose(e, n, rtol=1e-4, atol=1e-5)


# ---- softmax cross-entropy's gradient (ops/losses.py, one native call) ----------------------------------
@needs_native
@pytest.mark.parametrize("reduction", ["mean", "sum"])
@pytest.mark.parametrize("n, c", [(300, 3), (128, 10), (7, 65), (1, 1)])
def test_cross_entropy_gradient_matches_the_numpy_path(reduction, n, c):
    from graphgrad.ops.losses import SoftmaxCrossEntropyGrad

    rng = np.random.default_rng(n * c)
    x = (rng.standard_normal((n, c)) * 4).astype(np.float32)
    t = rng.integers(0, c, n)
    t[::5] = -100  # ignored rows
    g = np.asarray(np.float32(0.75))
    op = SoftmaxCrossEntropyGrad(reduction=reduction)
    on, off = both(lambda: op.forward(np, x, t, g))
    np.testing.assert_allclose(on, off, rtol=3e-6, atol=1e-8)


@needs_native
@pytest.mark.parametrize("reduction", ["mean", "sum"])
@pytest.mark.parametrize("n, c", [(300, 8), (1120, 65), (7, 65), (2, 300)])
def test_cross_entropy_with_gradient_matches_the_numpy_path(reduction, n, c):
    """The compiler's fused loss-and-gradient op: both outputs from the one native call."""
    from graphgrad.ops.losses import SoftmaxCrossEntropyWithGrad

    rng = np.random.default_rng(n + c)
    x = (rng.standard_normal((n, c)) * 4).astype(np.float32)
    t = rng.integers(0, c, n)
    t[1::4] = -100  # ignored rows
    g = np.asarray(np.float32(0.75))
    op = SoftmaxCrossEntropyWithGrad(reduction=reduction)
    (loss_on, grad_on), (loss_off, grad_off) = both(lambda: op.forward(np, x, t, g))
    assert loss_on.shape == loss_off.shape == () and loss_on.dtype == loss_off.dtype == np.float32
    np.testing.assert_allclose(loss_on, loss_off, rtol=2e-6)
    np.testing.assert_allclose(grad_on, grad_off, rtol=3e-6, atol=1e-8)


@needs_native
def test_cross_entropy_with_gradient_edge_cases_as_the_numpy_path():
    from graphgrad.ops.losses import SoftmaxCrossEntropyWithGrad

    x = np.zeros((2, 9), np.float32)
    x[0, 1], x[1, :3] = np.nan, [50.0, -50.0, 0.0]
    g = np.asarray(np.float32(1.0))
    op = SoftmaxCrossEntropyWithGrad()
    (loss_on, grad_on), (loss_off, grad_off) = both(lambda: op.forward(np, x, np.array([2, 1]), g))
    assert np.isnan(loss_on) and np.isnan(loss_off)  # a NaN logit: NaN loss, its gradient row NaN
    np.testing.assert_array_equal(np.isnan(grad_on), np.isnan(grad_off))
    (loss_on, _), (loss_off, _) = both(lambda: op.forward(np, x[1:], np.array([-100]), g))
    assert np.isnan(loss_on) and np.isnan(loss_off)  # every row ignored: 0 / 0
    with pytest.raises(IndexError):
        op.forward(np, x, np.array([0, 9]), g)


@needs_native
def test_cross_entropy_gradient_edge_cases_as_the_numpy_path():
    from graphgrad.ops.losses import SoftmaxCrossEntropyGrad

    x = np.array([[1.0, np.nan, 0.0], [50.0, -50.0, 0.0]], np.float32)
    g = np.asarray(np.float32(1.0))
    op = SoftmaxCrossEntropyGrad()
    on, off = both(lambda: op.forward(np, x, np.array([0, 2]), g))  # a NaN logit: its row is NaN
    np.testing.assert_allclose(on, off, rtol=1e-6, atol=1e-8)
    on, off = both(lambda: op.forward(np, x[1:], np.array([-100]), g))  # every row ignored: NaN, as NumPy's 0 * inf
    np.testing.assert_array_equal(np.isnan(on), np.isnan(off))
    assert np.isnan(on).all()
    with pytest.raises(IndexError):  # an out-of-range target: the NumPy path's error, not a native write
        op.forward(np, x, np.array([0, 3]), g)


# ---- split over an OpenMP team (parallel.c) ---------------------------------------------------------------
@needs_native
def test_split_over_an_openmp_team_gives_the_same_bits():
    """GELU (both forms, and gradients), layer norm (its gradient sums per chunk of rows) and the packed
    attention kernels split over the team: the same bits on one, two or three threads."""
    from graphgrad.ops import attention as A

    x, g = _random((48, 64, 128), seed=1), _random((48, 64, 128), seed=2)
    w, b = _random((128,), seed=3), _random((128,), seed=4)
    props, arrays, ga = _attention_case(4, None, None, True, L=64, S=64, N=6, D=32)

    def run():
        out = []
        for approximate in ("none", "tanh"):
            y = Gelu(approximate).forward(np, x)
            out += [y, GeluGrad(approximate).forward(np, x, y, g)]
        out.append(LayerNorm(1, 1e-5).forward(np, x, w, b))
        out.append(LayerNormGrad(1, 1e-5, True).forward(np, x, w, g))
        weights = A.AttentionWeights(*props).forward(np, *arrays)
        out += [weights, A.ScaledDotProductAttention(*props).forward(np, *arrays, weights),
                A.ScaledDotProductAttentionGrad(*props).forward(np, *arrays, weights, ga)]
        return out

    results = {}
    with openmp_team():
        for threads in (1, 2, 3):
            native.set_threads(threads)
            results[threads] = run()
    for threads in (2, 3):
        for one, many in zip(results[1], results[threads]):
            np.testing.assert_array_equal(many, one)
