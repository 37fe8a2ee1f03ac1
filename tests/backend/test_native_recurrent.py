"""The native recurrent cells (graphgrad/backend/native/recurrent.c): the pointwise part of each LSTM or GRU
time step (LSTMScan, GRUScan) and of its backward (LSTMSequenceGrad, GRUSequenceGrad) as one C call,
and the LSTM's whole sequence (and its backward) in one call with its own products.
Each float32 op is compared with its NumPy path (``native.disabled()``), forward and gradient ops, over
odd and empty shapes, every flag (reverse, biases, initial states), NaN/inf, non-contiguous inputs, a
workspace of one path read by the other's backward, and eager against ``gg.function``."""
import itertools

import numpy as np
import pytest

import graphgrad as gg
from graphgrad.backend import native
from graphgrad.ops.recurrent import GRUScan, GRUSequenceGrad, LSTMScan, LSTMSequenceGrad
from tests.backend.native_checks import both, needs_native, three_ways


SHAPES = [(35, 32, 64, 128), (5, 3, 7, 9), (1, 1, 1, 1), (4, 2, 3, 17)]  # (T, B, I, H); W3's first
FLAGS = list(itertools.product([False, True], repeat=3))  # (reverse, has_bias, has_state)


# cell: (scan op, gradient op, gate blocks G, initial states, extra rows of the upstream gradient)
CELLS = {"lstm": (LSTMScan, LSTMSequenceGrad, 4, 2, 2), "gru": (GRUScan, GRUSequenceGrad, 3, 1, 1)}


def _case(cell, T, B, I, H, flags, seed=0, dtype=np.float32, scale=None):
    """The inputs of a scan with these flags (weights of PyTorch's scale 1/sqrt(H) unless given), and an
    upstream gradient for its gradient op."""
    _, _, G, n_states, extra = CELLS[cell]
    rng = np.random.default_rng(seed)
    reverse, has_bias, has_state = flags
    k = 1 / np.sqrt(max(H, 1)) if scale is None else scale
    args = [rng.standard_normal((T, B, I)), rng.standard_normal((G * H, I)) * k, rng.standard_normal((G * H, H)) * k]
    if has_bias:
        args += [rng.standard_normal(G * H) * 0.3, rng.standard_normal(G * H) * 0.3]
    if has_state:
        args += [rng.standard_normal((B, H)) for _ in range(n_states)]
    g = rng.standard_normal((T + extra, B, H)).astype(dtype)
    return [a.astype(dtype) for a in args], g


def _lstm_case(T, B, I, H, flags, seed=0, dtype=np.float32):
    return _case("lstm", T, B, I, H, flags, seed, dtype, scale=0.3)


def _scan_and_grad(flags, args, g, ws=None, cell="lstm"):
    """The workspace of the scan (or ``ws`` as given) and the gradient op's output from it."""
    scan, grad_op = CELLS[cell][:2]
    if ws is None:
        ws = scan(*flags).forward(np, *args)
    return ws, grad_op(*flags).forward(np, *args, ws, g)


# ---- LSTM -------------------------------------------------------------------------------------------------------
@pytest.fixture(params=["whole sequence", "step by step"])
def lstm_path(request, monkeypatch):
    """The native LSTM or GRU in one call per sequence (products in C), or one call per step beside BLAS."""
    from graphgrad.ops import recurrent

    monkeypatch.setattr(recurrent, "_WHOLE_SEQUENCE", request.param == "whole sequence")
    return request.param


@needs_native
@pytest.mark.parametrize("flags", FLAGS)
@pytest.mark.parametrize("shape", SHAPES + [(3, 7, 5, 40)])  # (H = 40: units past a whole vector)
def test_lstm_scan_and_its_gradient_match_numpy(shape, flags, lstm_path):
    args, g = _lstm_case(*shape, flags)
    (ws_on, d_on), (ws_off, d_off) = both(lambda: _scan_and_grad(flags, args, g))
    assert ws_on.shape == ws_off.shape and ws_on.dtype == d_on.dtype == np.float32
    # tanh/sigmoid within 6 ulp of NumPy's, carried through the recurrence
    np.testing.assert_allclose(ws_on, ws_off, rtol=1e-5, atol=5e-6)
    np.testing.assert_allclose(d_on, d_off, rtol=1e-4, atol=2e-5)
    # the gradient alone, from one workspace: closer
    (_, d_on), (_, d_off) = both(lambda: _scan_and_grad(flags, args, g, ws_off))
    np.testing.assert_allclose(d_on, d_off, rtol=1e-5, atol=5e-6)


@needs_native
def test_lstm_workspace_of_either_path_feeds_either_gradient():
    flags = (False, True, True)
    args, g = _lstm_case(6, 4, 5, 8, flags, seed=1)
    ws_on, ws_off = both(lambda: LSTMScan(*flags).forward(np, *args))
    with native.disabled():
        reference = _scan_and_grad(flags, args, g, ws_off)[1]
        from_native_ws = _scan_and_grad(flags, args, g, ws_on)[1]
    from_numpy_ws = _scan_and_grad(flags, args, g, ws_off)[1]
    np.testing.assert_allclose(from_native_ws, reference, rtol=1e-5, atol=5e-6)
    np.testing.assert_allclose(from_numpy_ws, reference, rtol=1e-5, atol=5e-6)


@pytest.mark.parametrize("shape", [(3, 0, 4, 5), (2, 3, 0, 4), (1, 2, 3, 0)])
def test_lstm_empty_batch_input_or_hidden(shape):
    flags = (False, True, True)
    args, g = _lstm_case(*shape, flags)
    (ws_on, d_on), (ws_off, d_off) = both(lambda: _scan_and_grad(flags, args, g))
    np.testing.assert_allclose(ws_on, ws_off, rtol=1e-5, atol=5e-6)
    np.testing.assert_allclose(d_on, d_off, rtol=1e-5, atol=5e-6)


@needs_native
def test_lstm_nan_and_infinities_as_numpy():
    flags = (False, True, True)
    args, g = _lstm_case(4, 5, 3, 6, flags, seed=2)
    args[0][1, 0, 0] = np.nan      # batch row 0 turns NaN from step 1 on
    args[0][2, 1, :] = np.inf      # row 1: +-inf pre-activations (saturated gates), NaN where inf - inf
    args[0][0, 2, :] = -np.inf
    args[6][3, 0] = np.inf         # c0 of row 3 infinite (c stays inf, tanh(c) = 1)
    g[1, 4, 2] = np.nan
    with np.errstate(all="ignore"):
        (ws_on, d_on), (ws_off, d_off) = both(lambda: _scan_and_grad(flags, args, g))
        (_, d1_on), (_, d1_off) = both(lambda: _scan_and_grad(flags, args, g, ws_off))
    assert np.isnan(ws_off).any() and np.isinf(ws_off).any()
    np.testing.assert_array_equal(np.isnan(ws_on), np.isnan(ws_off))
    np.testing.assert_allclose(ws_on, ws_off, rtol=1e-5, atol=5e-6)  # (NaN == NaN, inf == inf here)
    np.testing.assert_array_equal(np.isnan(d1_on), np.isnan(d1_off))
    np.testing.assert_allclose(d1_on, d1_off, rtol=1e-5, atol=5e-6)
    np.testing.assert_array_equal(np.isnan(d_on), np.isnan(d_off))


@needs_native
@pytest.mark.parametrize("reverse", [False, True])
def test_lstm_non_contiguous_inputs(reverse):
    flags = (reverse, True, True)
    rng = np.random.default_rng(3)
    T, B, I, H = 5, 4, 6, 7
    x = rng.standard_normal((B, T, I)).astype(np.float32).transpose(1, 0, 2)  # batch_first, as nn.LSTM
    w_ih = (rng.standard_normal((I, 4 * H)) * 0.3).astype(np.float32).T
    w_hh = (rng.standard_normal((8 * H, 2 * H)) * 0.3).astype(np.float32)[::2, ::2]
    b_ih, b_hh = (rng.standard_normal((2, 8 * H)) * 0.3).astype(np.float32)[:, ::2]
    h0, c0 = rng.standard_normal((2, H, B)).astype(np.float32).transpose(0, 2, 1)
    g = rng.standard_normal((B, T + 2, H)).astype(np.float32).transpose(1, 0, 2)
    args = [x, w_ih, w_hh, b_ih, b_hh, h0, c0]
    assert not any(a.flags.c_contiguous for a in args + [g])
    (ws_on, d_on), (ws_off, d_off) = both(lambda: _scan_and_grad(flags, args, g))
    contiguous = [np.ascontiguousarray(a) for a in args]
    ws_c, d_c = _scan_and_grad(flags, contiguous, np.ascontiguousarray(g))
    np.testing.assert_array_equal(ws_on, ws_c)
    np.testing.assert_array_equal(d_on, d_c)
    np.testing.assert_allclose(ws_on, ws_off, rtol=1e-5, atol=5e-6)
    np.testing.assert_allclose(d_on, d_off, rtol=1e-4, atol=2e-5)


def test_lstm_float64_takes_the_numpy_path():
    flags = (False, True, True)
    args, g = _lstm_case(4, 3, 5, 6, flags, dtype=np.float64)
    (ws_on, d_on), (ws_off, d_off) = both(lambda: _scan_and_grad(flags, args, g))
    assert ws_on.dtype == np.float64
    np.testing.assert_array_equal(ws_on, ws_off)
    np.testing.assert_array_equal(d_on, d_off)


def test_lstm_layer_against_float64():
    """The float32 layer (native where available) against float64 (NumPy), forward and gradients."""
    flags = (False, True, False)
    args, g = _lstm_case(35, 8, 16, 32, flags, seed=4)
    ws, d = _scan_and_grad(flags, args, g)
    ws64, d64 = _scan_and_grad(flags, [a.astype(np.float64) for a in args], g.astype(np.float64))
    assert np.max(np.abs(ws - ws64)) < 2e-5
    assert np.max(np.abs(d - d64)) < 1e-4 * max(1.0, np.max(np.abs(d64)))


def test_lstm_eager_equals_compiled():
    rng = np.random.default_rng(5)
    x_np = rng.standard_normal((3, 7, 5)).astype(np.float32)
    layer = gg.nn.LSTM(5, 6, batch_first=True)

    def step(x):
        layer.zero_grad()
        x.requires_grad_(True)
        out, (h, c) = layer(x)
        loss = (out * out).sum() + (h * c).sum()
        (gx,) = gg.grad(loss, [x], retain_graph=True)
        loss.backward()
        return [out, h, c, gx, layer.weight_ih_l0.grad, layer.weight_hh_l0.grad, layer.bias_hh_l0.grad]

    eager, compiled, numpy_path = three_ways(step, x_np)
    for e, c in zip(eager, compiled):
        np.testing.assert_allclose(c, e, rtol=1e-5, atol=1e-6)
    for e, n in zip(eager, numpy_path):
        np.testing.assert_allclose(e, n, rtol=1e-4, atol=1e-5)


# ---- GRU --------------------------------------------------------------------------------------------------------
@needs_native
@pytest.mark.parametrize("flags", FLAGS)
@pytest.mark.parametrize("shape", SHAPES + [(3, 7, 5, 40)])
def test_gru_scan_and_its_gradient_match_numpy(shape, flags, lstm_path):
    args, g = _case("gru", *shape, flags)
    (ws_on, d_on), (ws_off, d_off) = both(lambda: _scan_and_grad(flags, args, g, cell="gru"))
    assert ws_on.shape == ws_off.shape and d_on.shape == d_off.shape and ws_on.dtype == d_on.dtype == np.float32
    np.testing.assert_allclose(ws_on, ws_off, rtol=1e-5, atol=5e-6)
    np.testing.assert_allclose(d_on, d_off, rtol=1e-4, atol=2e-5)
    (_, d_on), (_, d_off) = both(lambda: _scan_and_grad(flags, args, g, ws_off, cell="gru"))
    np.testing.assert_allclose(d_on, d_off, rtol=1e-5, atol=5e-6)


def test_gru_with_large_weights_is_as_accurate_as_numpy():
    """Weights of scale 0.3 (not 1/sqrt(H)) make the W3-shaped recurrence amplify rounding: both float32
    paths drift ~1e-5 from float64 over 35 steps; the native one no further than the NumPy one."""
    flags = (False, True, False)
    args, g = _case("gru", 35, 32, 64, 128, flags, seed=6, scale=0.3)
    ws_on, ws_off = both(lambda: GRUScan(*flags).forward(np, *args))
    with native.disabled():
        ws64 = GRUScan(*flags).forward(np, *[a.astype(np.float64) for a in args])
    T = 35
    err_on, err_off = np.abs(ws_on[:T] - ws64[:T]).max(), np.abs(ws_off[:T] - ws64[:T]).max()
    assert err_on < 1e-4 and err_on < 3 * err_off


@needs_native
def test_gru_workspace_of_either_path_feeds_either_gradient():
    flags = (True, True, True)
    args, g = _case("gru", 6, 4, 5, 8, flags, seed=1)
    ws_on, ws_off = both(lambda: GRUScan(*flags).forward(np, *args))
    with native.disabled():
        reference = _scan_and_grad(flags, args, g, ws_off, cell="gru")[1]
        from_native_ws = _scan_and_grad(flags, args, g, ws_on, cell="gru")[1]
    from_numpy_ws = _scan_and_grad(flags, args, g, ws_off, cell="gru")[1]
    np.testing.assert_allclose(from_native_ws, reference, rtol=1e-5, atol=5e-6)
    np.testing.assert_allclose(from_numpy_ws, reference, rtol=1e-5, atol=5e-6)


@pytest.mark.parametrize("shape", [(3, 0, 4, 5), (2, 3, 0, 4), (1, 2, 3, 0)])
def test_gru_empty_batch_input_or_hidden(shape):
    flags = (False, True, True)
    args, g = _case("gru", *shape, flags)
    (ws_on, d_on), (ws_off, d_off) = both(lambda: _scan_and_grad(flags, args, g, cell="gru"))
    np.testing.assert_allclose(ws_on, ws_off, rtol=1e-5, atol=5e-6)
    np.testing.assert_allclose(d_on, d_off, rtol=1e-5, atol=5e-6)


@needs_native
def test_gru_nan_and_infinities_as_numpy():
    flags = (False, True, True)
    args, g = _case("gru", 4, 5, 3, 6, flags, seed=2)
    args[0][1, 0, 0] = np.nan
    args[0][2, 1, :] = np.inf
    args[0][0, 2, :] = -np.inf
    args[5][3, 0] = np.inf         # h0 of row 3 infinite
    g[1, 4, 2] = np.nan
    with np.errstate(all="ignore"):
        (ws_on, d_on), (ws_off, d_off) = both(lambda: _scan_and_grad(flags, args, g, cell="gru"))
        (_, d1_on), (_, d1_off) = both(lambda: _scan_and_grad(flags, args, g, ws_off, cell="gru"))
    assert np.isnan(ws_off).any()
    np.testing.assert_array_equal(np.isnan(ws_on), np.isnan(ws_off))
    np.testing.assert_allclose(ws_on, ws_off, rtol=1e-5, atol=5e-6)
    np.testing.assert_array_equal(np.isnan(d1_on), np.isnan(d1_off))
    np.testing.assert_allclose(d1_on, d1_off, rtol=1e-5, atol=5e-6)
    np.testing.assert_array_equal(np.isnan(d_on), np.isnan(d_off))


@needs_native
@pytest.mark.parametrize("reverse", [False, True])
def test_gru_non_contiguous_inputs(reverse):
    flags = (reverse, True, True)
    rng = np.random.default_rng(3)
    T, B, I, H = 5, 4, 6, 7
    x = rng.standard_normal((B, T, I)).astype(np.float32).transpose(1, 0, 2)
    w_ih = (rng.standard_normal((I, 3 * H)) * 0.3).astype(np.float32).T
    w_hh = (rng.standard_normal((6 * H, 2 * H)) * 0.3).astype(np.float32)[::2, ::2]
    b_ih, b_hh = (rng.standard_normal((2, 6 * H)) * 0.3).astype(np.float32)[:, ::2]
    h0 = rng.standard_normal((H, B)).astype(np.float32).T
    g = rng.standard_normal((B, T + 1, H)).astype(np.float32).transpose(1, 0, 2)
    args = [x, w_ih, w_hh, b_ih, b_hh, h0]
    assert not any(a.flags.c_contiguous for a in args + [g])
    (ws_on, d_on), (ws_off, d_off) = both(lambda: _scan_and_grad(flags, args, g, cell="gru"))
    contiguous = [np.ascontiguousarray(a) for a in args]
    ws_c, d_c = _scan_and_grad(flags, contiguous, np.ascontiguousarray(g), cell="gru")
    np.testing.assert_array_equal(ws_on, ws_c)
    np.testing.assert_array_equal(d_on, d_c)
    np.testing.assert_allclose(ws_on, ws_off, rtol=1e-5, atol=5e-6)
    np.testing.assert_allclose(d_on, d_off, rtol=1e-4, atol=2e-5)


def test_gru_float64_takes_the_numpy_path():
    flags = (False, True, True)
    args, g = _case("gru", 4, 3, 5, 6, flags, dtype=np.float64)
    (ws_on, d_on), (ws_off, d_off) = both(lambda: _scan_and_grad(flags, args, g, cell="gru"))
    assert ws_on.dtype == np.float64
    np.testing.assert_array_equal(ws_on, ws_off)
    np.testing.assert_array_equal(d_on, d_off)


def test_gru_eager_equals_compiled():
    rng = np.random.default_rng(7)
    x_np = rng.standard_normal((3, 7, 5)).astype(np.float32)
    h_np = rng.standard_normal((1, 3, 6)).astype(np.float32)
    layer = gg.nn.GRU(5, 6, batch_first=True, bidirectional=True)
    h_np = np.concatenate([h_np, h_np * 0.5])

    def step(x, h):
        layer.zero_grad()
        x.requires_grad_(True)
        out, h_n = layer(x, h)
        loss = (out * out).sum() + h_n.sum()
        (gx,) = gg.grad(loss, [x], retain_graph=True)
        loss.backward()
        return [out, h_n, gx, layer.weight_ih_l0.grad, layer.weight_hh_l0_reverse.grad, layer.bias_hh_l0.grad]

    eager, compiled, numpy_path = three_ways(step, x_np, h_np)
    for e, c in zip(eager, compiled):
        np.testing.assert_allclose(c, e, rtol=1e-5, atol=1e-6)
    for e, n in zip(eager, numpy_path):
        np.testing.assert_allclose(e, n, rtol=1e-4, atol=1e-5)


# ---- the embedding gradient ---------------------------------------------------------------------------------
@pytest.mark.parametrize("shape, num, dim", [((32, 35), 65, 64), ((7,), 3, 5), ((2, 3, 4), 10, 1), ((0,), 4, 3),
                                             ((5,), 4, 0), ((3, 2), 0, 2)])
def test_embedding_backward_matches_numpy(shape, num, dim):
    from graphgrad.ops.nn import EmbeddingBackward

    rng = np.random.default_rng(8)
    idx = rng.integers(0, max(num, 1), shape) if num else np.zeros(shape, np.int64)
    g = rng.standard_normal(shape + (dim,)).astype(np.float32)
    if num == 0 and idx.size:
        pytest.skip("no table rows to index")
    for padding_idx in (None, 0):
        if padding_idx is not None and num == 0:
            continue
        on, off = both(lambda: EmbeddingBackward(num, padding_idx).forward(np, g, idx))
        assert on.shape == (num, dim) and on.dtype == np.float32
        np.testing.assert_allclose(on, off, rtol=1e-5, atol=1e-5)  # (add.reduceat's own summation order)


def test_embedding_backward_strided_nan_other_dtypes_and_bad_indices():
    from graphgrad.ops.nn import EmbeddingBackward

    rng = np.random.default_rng(9)
    idx = rng.integers(0, 6, (35, 32)).T                      # strided indices, as after a transpose
    g = rng.standard_normal((35, 32, 4)).astype(np.float32).transpose(1, 0, 2)
    g[0, 0, 1] = np.nan
    g[1, 3, 2] = np.inf
    on, off = both(lambda: EmbeddingBackward(6).forward(np, g, idx))
    np.testing.assert_allclose(on, off, rtol=1e-5, atol=1e-5)  # (NaN and inf where NumPy has them)
    for g2, i2 in ((g.astype(np.float64), idx), (g, idx.astype(np.int32))):  # the NumPy path
        on, off = both(lambda: EmbeddingBackward(6).forward(np, g2, i2))
        np.testing.assert_array_equal(on, off)
    bad = idx.copy()
    bad[0, 0] = -1                                            # outside [0, num): the NumPy path's answer
    on, off = both(lambda: EmbeddingBackward(6).forward(np, g, bad))
    np.testing.assert_array_equal(on, off)


def test_embedding_gradient_eager_equals_compiled():
    rng = np.random.default_rng(10)
    tokens = gg.tensor(rng.integers(0, 9, (4, 6)))
    embed = gg.nn.Embedding(9, 5, padding_idx=2)

    def step(t):
        embed.zero_grad()
        loss = (embed(t) ** 2).sum()
        loss.backward()
        return [loss, embed.weight.grad]

    eager = [v.numpy().copy() for v in step(tokens)]
    compiled = [v.numpy() for v in gg.function(step)(tokens)]
    for e, c in zip(eager, compiled):
        np.testing.assert_array_equal(c, e)


@needs_native
@pytest.mark.parametrize("flags", [(False, True, True), (True, False, False)])
@pytest.mark.parametrize("cell", ["lstm", "gru"])
def test_sequence_split_over_threads_gives_the_same_bits(flags, cell, monkeypatch):
    """The whole-sequence kernels split the batch rows over threads (each row's recurrence is its own):
    one thread or three, the same workspace and gradients to the bit."""
    from graphgrad.ops import recurrent

    monkeypatch.setattr(recurrent, "_SCAN_SPLIT_MULTIPLY_ADDS", 0)
    args, g = _case(cell, 5, 27, 6, 20, flags, seed=4)  # 27 rows: chunks of 8, the last one short
    previous = native.threads()
    try:
        native.set_threads(1)
        one = _scan_and_grad(flags, args, g, cell=cell)
        native.set_threads(3)
        three = _scan_and_grad(flags, args, g, cell=cell)
    finally:
        native.set_threads(previous)
    for a, b in zip(one, three):
        np.testing.assert_array_equal(a, b)
