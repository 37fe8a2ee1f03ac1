"""The direct stride-1 convolution kernels (graphgrad/backend/native/conv_direct.c).

Forward, weight gradient and transposed convolution (the input gradient) against the NumPy path
(``native.disabled()``), over the kernels' block edges (output channels 1 to 33, rows narrower and
wider than a block, maps smaller than one block), kernel shapes (1x3 to 7x7, even sizes, the three-
column runs and the general path), asymmetric padding, dilation and empty batches; split over threads
or not; and the cases the kernels decline (NaN and infinities: test_native_conv_pool.py, on both paths). Then max pooling, which splits its planes over threads too:
the same bits on one thread or four."""
import numpy as np
import pytest

from graphgrad.backend import native
from graphgrad.ops import conv as C
from tests.backend.native_checks import both, needs_native

pytestmark = needs_native


def _random(shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


# (input shape, weight shape, padding pairs, dilation)
CASES = [
    ((4, 16, 14, 14), (32, 16, 3, 3), ((1, 1), (1, 1)), (1, 1)),  # W2's second layer
    ((3, 1, 28, 28), (16, 1, 3, 3), ((1, 1), (1, 1)), (1, 1)),  # W2's first: one input channel
    ((2, 5, 9, 11), (1, 5, 3, 3), ((1, 1), (1, 1)), (1, 1)),  # one output channel
    ((2, 3, 8, 8), (3, 3, 3, 3), ((0, 0), (0, 0)), (1, 1)),  # 'valid'; 2 + 1 channel blocks
    ((2, 7, 6, 5), (13, 7, 3, 3), ((1, 1), (1, 1)), (1, 1)),  # 8 + 4 + 1
    ((2, 9, 7, 7), (33, 9, 3, 3), ((1, 1), (1, 1)), (1, 1)),  # 17 and 33 lanes of gradient: 2 + 1 vectors
    ((2, 4, 5, 70), (6, 4, 3, 3), ((1, 1), (1, 1)), (1, 1)),  # rows longer than a block of positions
    ((2, 3, 1, 1), (4, 3, 3, 3), ((1, 1), (1, 1)), (1, 1)),  # a 1x1 map
    ((2, 3, 10, 9), (5, 3, 5, 5), ((2, 2), (2, 2)), (1, 1)),  # general offsets (not in threes)
    ((2, 3, 10, 9), (5, 3, 7, 7), ((3, 3), (3, 3)), (1, 1)),  # 49 offsets
    ((2, 4, 9, 8), (6, 4, 2, 2), ((0, 1), (1, 0)), (1, 1)),  # an even kernel, asymmetric padding
    ((2, 4, 9, 8), (6, 4, 1, 3), ((0, 0), (1, 1)), (1, 1)),  # one row
    ((2, 4, 9, 8), (6, 4, 3, 1), ((1, 1), (0, 0)), (1, 1)),  # one column
    ((2, 3, 12, 13), (4, 3, 3, 3), ((2, 2), (2, 2)), (2, 2)),  # dilated
    ((2, 3, 12, 13), (4, 3, 3, 3), ((1, 1), (2, 2)), (1, 2)),  # dilated along rows: no three-column runs
    ((2, 3, 6, 6), (4, 3, 3, 3), ((3, 0), (0, 3)), (1, 1)),  # padding on one side only, wider than the kernel
    ((0, 3, 6, 6), (4, 3, 3, 3), ((1, 1), (1, 1)), (1, 1)),  # empty batch
]
STRIDE = (1, 1)


def _out(case):
    xs, ws, padding, dilation = case
    return tuple(C._conv_out_size(xs[2 + i], ws[2 + i], 1, dilation[i], *padding[i]) for i in range(2))


def _ops(case, x, w, g):
    xs, ws, padding, dilation = case
    return [C._conv_forward(np, x, w, STRIDE, padding, dilation, 1),
            C._conv_weight_grad(np, x, g, ws[2:], STRIDE, padding, dilation, 1),
            C._conv_transpose_forward(np, g, w, STRIDE, padding, (0, 0), dilation, 1)]


def _close(a, b):
    scale = float(np.abs(b[np.isfinite(b)]).max(initial=1.0))
    np.testing.assert_allclose(a, b, rtol=1e-5, atol=2e-6 * scale)


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("threads", ["1", "3"])
def test_forward_and_gradients_match_numpy(case, threads, monkeypatch):
    monkeypatch.setenv("GRAPHGRAD_NATIVE_THREADS", threads)
    monkeypatch.setattr(C, "_DIRECT_SPLIT_MULTIPLY_ADDS", 0)  # split even the small cases
    xs, ws, padding, dilation = case
    x, w = _random(xs, 1), _random(ws, 2)
    g = _random((xs[0], ws[0]) + _out(case), 3)
    assert C._direct_usable(x, w, STRIDE, padding, 1, xs[1], ws[0], ws[2:])
    on, off = both(lambda: _ops(case, x, w, g))
    for a, b, shape in zip(on, off, [g.shape, ws, xs]):
        assert a.dtype == np.float32 and a.shape == b.shape == shape
        _close(a, b)


def _call_forward(x, w, padding, threads):
    n, c, h, wd = x.shape
    co, _, kh, kw = w.shape
    y = np.full((n, co, h + sum(padding[0]) - kh + 1, wd + sum(padding[1]) - kw + 1), np.nan, np.float32)
    ok = np.zeros(1, np.int64)
    native.kernel("conv2d_direct_f32")(x, w, y, n, c, h, wd, co, kh, kw, 1, 1, padding[0][0], padding[1][0],
                                       padding[0][1], padding[1][1], 1, 1, threads, ok)
    return y, bool(ok[0])


def test_threads_split_samples_and_give_the_same_bits():
    x, w = _random((5, 6, 9, 9), 1), _random((10, 6, 3, 3), 2)
    one, ok1 = _call_forward(x, w, ((1, 1), (1, 1)), 1)
    three, ok3 = _call_forward(x, w, ((1, 1), (1, 1)), 3)
    many, ok8 = _call_forward(x, w, ((1, 1), (1, 1)), 64)  # more threads than samples: one per sample
    assert ok1 and ok3 and ok8
    np.testing.assert_array_equal(one, three)
    np.testing.assert_array_equal(one, many)


def test_kernel_declines_more_than_64_offsets():
    x, w = _random((2, 2, 12, 12), 1), _random((3, 2, 9, 9), 2)
    _, ok = _call_forward(x, w, ((4, 4), (4, 4)), 1)
    assert not ok
    assert not C._direct_usable(x, w, STRIDE, ((4, 4), (4, 4)), 1, 2, 3, (9, 9))
    y = C._conv_forward(np, x, w, STRIDE, ((4, 4), (4, 4)), (1, 1), 1)  # im2col takes it
    with native.disabled():
        _close(y, C._conv_forward(np, x, w, STRIDE, ((4, 4), (4, 4)), (1, 1), 1))


# (input shape, weight shape, stride, padding pairs, dilation): strided forwards, row by row
STRIDED = [
    ((1, 3, 224, 224), (16, 3, 3, 3), (2, 2), ((1, 1), (1, 1)), (1, 1)),  # a MobileNet / EfficientNet stem
    ((2, 5, 17, 140), (9, 5, 3, 3), (2, 2), ((1, 1), (1, 1)), (1, 1)),   # odd sizes, 8 + 1 channels
    ((2, 4, 15, 150), (6, 4, 5, 3), (3, 2), ((2, 1), (0, 2)), (1, 2)),   # uneven strides, padding, dilation
    ((1, 2, 9, 133), (3, 2, 7, 7), (2, 2), ((3, 3), (3, 3)), (1, 1)),    # a ResNet stem's 7x7
    ((2, 3, 8, 256), (4, 3, 2, 2), (2, 2), ((0, 0), (0, 0)), (1, 1)),    # patches (stride = kernel)
    ((0, 3, 8, 160), (4, 3, 3, 3), (2, 2), ((1, 1), (1, 1)), (1, 1)),    # empty batch
]


@pytest.mark.parametrize("xs, ws, stride, padding, dilation", STRIDED)
def test_strided_forward_matches_numpy(xs, ws, stride, padding, dilation):
    x, w = _random(xs, 1), _random(ws, 2)
    assert C._direct_usable(x, w, stride, padding, 1, xs[1], ws[0], ws[2:], strided=True)
    on, off = both(lambda: C._conv_forward(np, x, w, stride, padding, dilation, 1))
    assert on.shape == off.shape and on.dtype == np.float32
    _close(on, off)


@pytest.mark.parametrize("kind", ["strided", "grouped", "float64", "thin channels on a large map"])
def test_other_convolutions_are_left_to_im2col(kind):
    """(Strided: the gradients; a strided forward is direct, above.)"""
    x, w, stride, groups = _random((2, 4, 8, 8)), _random((6, 4, 3, 3)), (1, 1), 1
    if kind == "strided":
        stride = (2, 1)
        x = _random((2, 4, 8, 100))  # (the gradients; and this forward's 100 columns are direct)
        assert C._direct_usable(x, w, stride, ((1, 1), (1, 1)), 1, 4, 6, (3, 3), strided=True)
        assert not C._direct_usable(_random((2, 4, 8, 60)), w, (1, 2), ((1, 1), (1, 1)), 1, 4, 6, (3, 3),
                                    strided=True)  # (30 columns out: im2col)
    elif kind == "grouped":
        w, groups = _random((6, 2, 3, 3)), 2
    elif kind == "float64":
        x = x.astype(np.float64)
    else:
        x, w = _random((1, 3, 80, 80)), _random((64, 3, 3, 3))
    assert not C._direct_usable(x, w, stride, ((1, 1), (1, 1)), groups, x.shape[1], w.shape[0], (3, 3))


def test_transposed_convolution_padded_past_the_kernel_is_cropped_by_im2col():
    """The input gradient of a convolution padded by more than the kernel reach (d * (k - 1)) would
    need negative padding as a forward convolution: the direct path declines it."""
    x, w = _random((2, 3, 4, 4), 1), _random((3, 5, 3, 3), 2)
    assert C._direct_transpose(x, w, ((3, 3), (3, 3)), (1, 1), (0, 0)) is None
    on, off = both(lambda: C._conv_transpose_forward(np, x, w, STRIDE, ((3, 3), (3, 3)), (0, 0), (1, 1), 1))
    _close(on, off)


def test_native_threads_setting(monkeypatch):
    monkeypatch.setenv("GRAPHGRAD_NATIVE_THREADS", "3")
    assert native.threads() == 3
    monkeypatch.setenv("GRAPHGRAD_NATIVE_THREADS", "100")
    assert native.threads() == 8
    monkeypatch.delenv("GRAPHGRAD_NATIVE_THREADS")
    assert 1 <= native.threads() <= 8


# ---- the other kernels that split their work over threads (parallel.c) ---------------------------------
def _with_threads(n, fn):
    previous = native.threads()
    native.set_threads(n)
    try:
        return fn()
    finally:
        native.set_threads(previous)


def test_split_max_pooling_on_any_thread_count():
    x, g = _random((64, 16, 28, 28), 3), _random((64, 16, 14, 14), 4)
    pool, pool_grad = native.kernel("max_pool2d_f32"), native.kernel("max_pool2d_backward_f32")
    geometry = (28, 28, 14, 14, 2, 2, 2, 2, 0, 0, 1, 1)
    odd = (28, 28, 13, 13, 3, 3, 2, 2, 0, 0, 1, 1)  # the general path

    def run():
        y, gx = np.empty((64 * 16, 14, 14), np.float32), np.empty_like(x)
        pool(x, y, 64 * 16, *geometry)
        pool_grad(x, g, gx, 64 * 16, *geometry)
        y2, gx2 = np.empty((64 * 16, 13, 13), np.float32), np.empty_like(x)
        pool(x, y2, 64 * 16, *odd)
        pool_grad(x, g[:, :, :13, :13].copy(), gx2, 64 * 16, *odd)
        return y, gx, y2, gx2
    for a, c in zip(_with_threads(1, run), _with_threads(4, run)):
        np.testing.assert_array_equal(a, c)
