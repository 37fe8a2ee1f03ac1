"""The native 2-D max pooling and convolution window kernels (graphgrad/backend/native/conv_pool.c).

Each float32 op is compared with its NumPy path (``native.disabled()``), forward and gradient ops, over
odd and empty shapes, padding / stride / dilation / ceil_mode, ties, NaN and infinities, non-contiguous
inputs, and eager against ``gg.function``."""
import numpy as np
import pytest

import graphgrad as gg
from graphgrad.backend import native
from graphgrad.ops.pool import MaxPool2d, MaxPoolBackward, MaxPoolIndices
from tests.backend.native_checks import both, needs_native, three_ways



def _random(shape, seed=0, scale=1.0):
    return (np.random.default_rng(seed).standard_normal(shape) * scale).astype(np.float32)


# ---- max pooling ------------------------------------------------------------------------------------------
# (shape, kernel, stride, padding, dilation, ceil_mode)
POOL_CASES = [
    ((4, 16, 28, 28), (2, 2), (2, 2), (0, 0), (1, 1), False),  # W2's layers: the 2x2 fast path
    ((3, 5, 14, 14), (2, 2), (2, 2), (0, 0), (1, 1), False),
    ((2, 3, 9, 7), (2, 2), (2, 2), (0, 0), (1, 1), False),  # odd sizes: a last row / column left out
    ((2, 3, 9, 8), (2, 2), (2, 2), (0, 0), (1, 1), True),  # ceil_mode: a partial last window
    ((2, 3, 7, 9), (3, 2), (2, 1), (1, 1), (1, 2), True),  # overlapping, padded, dilated windows
    ((1, 2, 5, 5), (3, 3), (2, 2), (1, 1), (1, 1), True),
    ((3, 6, 6), (2, 3), (1, 2), (1, 0), (2, 1), False),  # no batch axis
    ((2, 2, 8, 8), (3, 3), (1, 1), (1, 1), (1, 1), False),  # stride 1: every element in 9 windows
    ((2, 3, 20, 21), (3, 3), (2, 2), (1, 1), (1, 1), False),  # ResNet's stem pooling: edges and inside
    ((2, 2, 16, 17), (2, 3), (1, 2), (0, 1), (2, 1), True),
    ((1, 1, 1, 1), (1, 1), (1, 1), (0, 0), (1, 1), False),
    ((0, 2, 4, 4), (2, 2), (2, 2), (0, 0), (1, 1), False),  # empty batch
    ((2, 0, 4, 4), (2, 2), (2, 2), (0, 0), (1, 1), False),
]


def _pool_input(shape, mode, seed):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape).astype(np.float32)
    if mode == "ties":  # after a ReLU: windows of zeros, and rounded values that repeat
        x = np.maximum(np.round(x), 0).astype(np.float32)
    elif mode == "nan":
        x[rng.random(shape) < 0.15] = np.nan
    elif mode == "inf":
        x[rng.random(shape) < 0.15] = np.inf
        x[rng.random(shape) < 0.15] = -np.inf
    return x


@needs_native
@pytest.mark.parametrize("mode", ["random", "ties", "nan", "inf"])
@pytest.mark.parametrize("case", POOL_CASES)
def test_max_pool2d_and_its_gradient_match_numpy(case, mode):
    shape, kernel, stride, padding, dilation, ceil_mode = case
    x = _pool_input(shape, mode, 1)
    args = (kernel, stride, padding, dilation, ceil_mode)
    y_on, y_off = both(lambda: MaxPool2d(*args).forward(np, x))
    assert y_on.dtype == np.float32 and y_on.shape == y_off.shape
    np.testing.assert_array_equal(y_on, y_off)  # a maximum is exact; NaN where NumPy has NaN
    g = _random(y_off.shape, 2)
    gx_on, gx_off = both(lambda: MaxPoolBackward(*args).forward(np, x, y_off, g))
    assert gx_on.dtype == np.float32 and gx_on.shape == x.shape
    if mode in ("nan", "inf"):
        # the NumPy path's general branch (indices, then bincount) sums overlapping windows in another
        # order; the same positions receive g, so only rounding differs
        np.testing.assert_allclose(gx_on, gx_off, rtol=1e-6, atol=1e-6)
        assert np.array_equal(gx_on != 0, gx_off != 0)
    else:
        np.testing.assert_array_equal(gx_on, gx_off)  # the same first maxima, the same order of sums


@needs_native
def test_max_pool2d_gradient_goes_to_the_first_maximum_and_the_last_nan():
    nan = np.nan
    x = np.array([[[[1, 1, 0, 2],
                    [1, 0, 2, 2],
                    [nan, 3, 4, nan],
                    [nan, 3, nan, 5]]]], np.float32)
    y = MaxPool2d((2, 2), (2, 2)).forward(np, x)
    np.testing.assert_array_equal(y, [[[[1, 2], [nan, nan]]]])
    gx = MaxPoolBackward((2, 2), (2, 2)).forward(np, x, y, np.ones_like(y))
    np.testing.assert_array_equal(gx, [[[[1, 0, 0, 1],
                                         [0, 0, 0, 0],
                                         [0, 0, 0, 0],
                                         [1, 0, 1, 0]]]])
    # the indices op agrees (it has no native kernel)
    index = MaxPoolIndices((2, 2), (2, 2)).forward(np, x)
    np.testing.assert_array_equal(index, [[[[0, 3], [12, 14]]]])


@needs_native
def test_max_pool2d_non_contiguous_and_broadcast_inputs():
    x = _random((3, 4, 20, 18), 3)[:, ::2, :, ::-1]
    args = ((2, 2), (2, 2), (0, 0), (1, 1), False)
    y_on, y_off = both(lambda: MaxPool2d(*args).forward(np, x))
    np.testing.assert_array_equal(y_on, y_off)
    g = np.broadcast_to(_random((1, 1, 1, 9), 4), y_off.shape)
    gx_on, gx_off = both(lambda: MaxPoolBackward(*args).forward(np, x, y_off, g))
    np.testing.assert_array_equal(gx_on, gx_off)


def test_max_pool2d_other_dtypes_take_the_numpy_path():
    x = np.arange(32, dtype=np.float64).reshape(1, 2, 4, 4)
    y = MaxPool2d((2, 2), (2, 2)).forward(np, x)
    assert y.dtype == np.float64
    np.testing.assert_array_equal(y[0, 0], [[5, 7], [13, 15]])
    xi = np.arange(16, dtype=np.int32).reshape(1, 1, 4, 4)
    assert MaxPool2d((2, 2), (2, 2)).forward(np, xi).dtype == np.int32


@pytest.mark.parametrize("ceil_mode", [False, True])
def test_max_pool2d_eager_equals_compiled(ceil_mode):
    x_np = _pool_input((2, 3, 11, 10), "ties", 5)

    def step(x):
        x.requires_grad_(True)
        y = gg.max_pool2d(x, 3, stride=2, padding=1, ceil_mode=ceil_mode) + gg.max_pool2d(x, 2).sum() * 0.5
        (gx,) = gg.grad((y * y).sum(), [x])
        return [y, gx]

    eager, compiled, numpy_only = three_ways(step, x_np)
    for e, c, n in zip(eager, compiled, numpy_only):
        np.testing.assert_allclose(c, e, rtol=1e-6, atol=1e-6)
        np.testing.assert_allclose(e, n, rtol=1e-6, atol=1e-6)


# ---- convolution: im2col / col2im ---------------------------------------------------------------------------
from graphgrad.ops import conv as C  # noqa: E402

# (input shape, weight shape, stride, padding pairs, dilation, groups)
CONV_CASES = [
    ((8, 1, 28, 28), (16, 1, 3, 3), (1, 1), ((1, 1), (1, 1)), (1, 1), 1),  # W2's layers ('same', stride 1)
    ((8, 16, 14, 14), (32, 16, 3, 3), (1, 1), ((1, 1), (1, 1)), (1, 1), 1),
    ((3, 16, 14, 14), (32, 16, 3, 3), (1, 1), ((1, 1), (1, 1)), (1, 1), 1),  # the whole-batch layout
    ((2, 4, 9, 7), (6, 2, 3, 2), (2, 1), ((1, 0), (2, 1)), (1, 2), 2),  # strided, asymmetric, grouped
    ((3, 3, 10, 11), (4, 3, 5, 3), (3, 2), ((2, 2), (0, 1)), (2, 1), 1),
    ((5, 3, 17, 17), (8, 3, 3, 3), (1, 1), ((2, 2), (2, 2)), (2, 2), 1),  # dilated 'same': shifts of 2
    ((2, 2, 6, 6), (4, 2, 2, 2), (1, 1), ((0, 1), (0, 1)), (1, 1), 1),  # 'same' with an even kernel
    ((2, 3, 7, 9), (4, 3, 5, 5), (1, 1), ((2, 2), (2, 2)), (1, 1), 1),  # 'same', kernel wider than padding
    ((2, 3, 4, 4), (2, 3, 1, 1), (2, 2), ((0, 0), (0, 0)), (1, 1), 1),  # 1x1 strided
    ((1, 2, 5, 5), (2, 2, 3, 3), (1, 1), ((1, 1), (1, 1)), (1, 1), 1),  # one sample
    ((2, 2, 3, 3), (3, 2, 3, 3), (1, 1), ((3, 3), (3, 3)), (1, 1), 1),  # padding wider than the input
    ((2, 6, 20, 20), (6, 2, 3, 3), (2, 2), ((1, 1), (1, 1)), (1, 1), 3),
    ((2, 3, 33, 40), (4, 3, 3, 3), (2, 2), ((1, 1), (1, 1)), (1, 1), 1),  # strided rows of 20: native, per sample
    ((3, 2, 9, 40), (4, 2, 3, 3), (2, 2), ((1, 1), (1, 2)), (1, 1), 1),  # 5 x 20 outputs: one GEMM per chunk
    ((0, 2, 6, 6), (4, 2, 3, 3), (1, 1), ((1, 1), (1, 1)), (1, 1), 1),  # empty batch
]


def _conv_ops(case, x, w, g):
    """Conv forward, its weight gradient and its input gradient (the transposed convolution) of a case."""
    xs, ws, stride, padding, dilation, groups = case
    op = C._output_padding(xs, g.shape, ws[2:], stride, padding, dilation)
    return [C._conv_forward(np, x, w, stride, padding, dilation, groups),
            C._conv_weight_grad(np, x, g, ws[2:], stride, padding, dilation, groups),
            C._conv_transpose_forward(np, g, w, stride, padding, op, dilation, groups)]


def _close(a, b):
    """Equal up to float32 rounding of the GEMMs (blocked per chunk of samples on the native path);
    NaN and infinities in the same places."""
    scale = float(np.abs(b[np.isfinite(b)]).max(initial=1.0))
    np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6 * scale)


def _conv_out(case):
    xs, ws, stride, padding, dilation, _ = case
    return tuple(C._conv_out_size(xs[2 + i], ws[2 + i], stride[i], dilation[i], *padding[i]) for i in range(2))


@needs_native
@pytest.mark.parametrize("case", CONV_CASES)
def test_im2col_kernel_writes_numpys_layouts(case):
    xs, ws, stride, padding, dilation, _ = case
    x, out, kernel = _random(xs, 1), _conv_out(case), ws[2:]
    n, c = xs[:2]
    rows, positions = c * kernel[0] * kernel[1], out[0] * out[1]
    im2col = native.kernel("im2col2d_f32")
    for per_sample in (True, False):
        cols = np.full((n, rows, positions) if per_sample else (rows, n * positions), np.nan, np.float32)
        strides = (rows * positions, positions) if per_sample else (positions, n * positions)
        im2col(x, cols, n, c, *C._window_args(xs, out, kernel, stride, padding, dilation), *strides)
        expected = C._im2col(np, x, out, kernel, stride, padding, dilation, 1, per_sample)
        np.testing.assert_array_equal(cols, expected.reshape(cols.shape))


@needs_native
@pytest.mark.parametrize("case", CONV_CASES)
def test_col2im_kernel_adds_as_numpy(case):
    xs, ws, stride, padding, dilation, _ = case
    out, kernel = _conv_out(case), ws[2:]
    n, c = xs[:2]
    rows, positions = c * kernel[0] * kernel[1], out[0] * out[1]
    col2im = native.kernel("col2im2d_f32")
    for per_sample in (True, False):
        cols = _random((n, rows, positions) if per_sample else (rows, n * positions), 4)
        strides = (rows * positions, positions) if per_sample else (positions, n * positions)
        scratch = cols.copy()  # (_col2im may add into its input: its start can be a view of it)
        if per_sample:
            view = scratch.reshape((n, c) + kernel + out)
        else:
            view = np.moveaxis(scratch.reshape((c,) + kernel + (n,) + out), 3, 0)
        expected = C._col2im(np, view, xs[2:], stride, padding, dilation)
        x = np.full(xs, np.nan, np.float32)
        col2im(cols.copy(), x, n, c, *C._window_args(xs, out, kernel, stride, padding, dilation), *strides)
        np.testing.assert_array_equal(x, expected)  # the NumPy path's order of sums: bit-identical


@pytest.fixture(params=["direct", "im2col"])
def conv_path(request, monkeypatch):
    """Stride-1 convolutions through the direct kernels (conv_direct.c), or all of them through im2col."""
    if request.param == "im2col":
        monkeypatch.setattr(C, "_direct_usable", lambda *args, **kwargs: False)
    return request.param


@needs_native
@pytest.mark.parametrize("case", CONV_CASES)
def test_conv2d_forward_and_gradients_match_numpy(case, conv_path):
    xs, ws, stride, padding, dilation, groups = case
    x, w = _random(xs, 1), _random(ws, 2)
    with native.disabled():
        ys = C._conv_forward(np, x, w, stride, padding, dilation, groups).shape
    g = _random(ys, 3)
    on, off = both(lambda: _conv_ops(case, x, w, g))
    for a, b, shape in zip(on, off, [ys, ws, xs]):
        assert a.dtype == np.float32 and a.shape == b.shape == shape
        _close(a, b)


@needs_native
@pytest.mark.parametrize("case, rows, positions", [
    (CONV_CASES[1], 144, 196),  # per-sample GEMMs
    (((8, 6, 10, 10), (6, 2, 3, 3), (2, 2), ((1, 1), (1, 1)), (1, 1), 3), 54, 25),  # one GEMM per chunk, grouped
])
def test_conv2d_chunks_of_samples(monkeypatch, case, rows, positions):
    """Batches split into several chunks, the last one partial, give the same results."""
    monkeypatch.setattr(C, "_direct_usable", lambda *args, **kwargs: False)
    x, w = _random(case[0], 1), _random(case[1], 2)
    g = _random((8, case[1][0]) + _conv_out(case), 3)
    whole = _conv_ops(case, x, w, g)
    monkeypatch.setattr(C, "_CHUNK_BYTES", 3 * 4 * rows * positions)  # 3 samples per chunk: 3 + 3 + 2
    assert C._chunk(8, rows, positions) == 3
    for a, b in zip(_conv_ops(case, x, w, g), whole):
        _close(a, b)


@needs_native
def test_conv2d_nan_and_infinities_as_numpy(conv_path):
    case = CONV_CASES[1]
    x, w = _random(case[0], 1), _random(case[1], 2)
    x[0, 0, 0, :3] = [np.nan, np.inf, -np.inf]
    x[1, 2, 13, 13] = np.nan  # a corner: on the direct path, its neighbours in the padded row must not catch it
    g = _random((8, 32, 14, 14), 3)
    g[1, 2, 5, 5], g[2, 3, 0, 13] = np.nan, np.inf
    with np.errstate(all="ignore"):
        on, off = both(lambda: _conv_ops(case, x, w, g))
    for a, b in zip(on, off):
        np.testing.assert_array_equal(np.isnan(a), np.isnan(b))
        np.testing.assert_array_equal(np.isinf(a), np.isinf(b))
        _close(np.where(np.isfinite(a), a, 0), np.where(np.isfinite(b), b, 0))


@needs_native
def test_conv2d_non_contiguous_inputs():
    case = CONV_CASES[3]
    x = _random((2, 4, 18, 7), 1)[:, :, ::2]
    w = _random((6, 2, 3, 2), 2)
    with native.disabled():
        ys = C._conv_forward(np, x, w, *case[2:]).shape
    g = np.broadcast_to(_random(ys[1:], 3), ys)
    on, off = both(lambda: _conv_ops(case, x, w, g))
    for a, b in zip(on, off):
        _close(a, b)


def test_conv2d_empty_batch_in_both_layouts():
    y = gg.conv2d(gg.zeros(0, 2, 6, 6), gg.zeros(4, 2, 3, 3), padding=1)
    assert y.shape == (0, 4, 6, 6)


def test_conv2d_eager_equals_compiled():
    x_np, w_np = _random((3, 2, 9, 8), 1), _random((4, 2, 3, 3), 2)

    def step(x, w):
        x.requires_grad_(True)
        w.requires_grad_(True)
        h = gg.relu(gg.conv2d(x, w, padding=1))  # 'same': the flat-run kernels
        y = gg.conv2d(h, gg.ones(2, 4, 2, 2) * 0.1, stride=2)  # strided: row by row
        gx, gw = gg.grad((y * y).sum(), [x, w])
        return [y, gx, gw]

    eager, compiled, numpy_only = three_ways(step, x_np, w_np)
    for e, c, n in zip(eager, compiled, numpy_only):
        np.testing.assert_allclose(c, e, rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(e, n, rtol=1e-5, atol=1e-5)
