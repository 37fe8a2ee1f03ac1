"""Convolution and pooling ops beyond the op table: error messages, 'same' padding, groups,
ceil_mode edge cases, count_include_pad, max-pool ties, adjointness, graph-mode shape rules."""
from __future__ import annotations

import numpy as np
import pytest

import graphgrad as gg
from graphgrad.errors import DTypeError, ShapeError

RNG = np.random.default_rng(0)


def randn(*shape, requires_grad=False):
    return gg.tensor(RNG.standard_normal(shape), requires_grad=requires_grad)


def symbolic(*shape, dtype="float32"):
    return gg.Tensor.symbolic(gg.TensorSpec(shape, dtype))


# ---- error messages ---------------------------------------------------------------------------------
def test_conv2d_channel_mismatch_names_op_and_both_shapes():
    with pytest.raises(ShapeError) as info:
        gg.conv2d(randn(2, 3, 5, 5), randn(4, 2, 3, 3))
    msg = str(info.value)
    assert "conv2d" in msg and "(2, 3, 5, 5)" in msg and "(4, 2, 3, 3)" in msg


def test_conv2d_channel_mismatch_in_graph_mode_names_the_user_line():
    with pytest.raises(ShapeError) as info:
        gg.conv2d(symbolic(None, 3, 8, 8), symbolic(4, 2, 3, 3))
    msg = str(info.value)
    assert "conv2d" in msg and "(None, 3, 8, 8)" in msg and "(4, 2, 3, 3)" in msg
    assert "test_conv_ops.py" in msg


@pytest.mark.parametrize("call, words", [
    (lambda: gg.conv2d(randn(5, 5), randn(4, 3, 3, 3)), ["conv2d", "4-D input", "(5, 5)"]),
    (lambda: gg.conv2d(randn(1, 3, 5, 5), randn(4, 3, 3)), ["conv2d", "weight", "(4, 3, 3)"]),
    (lambda: gg.conv2d(randn(1, 4, 5, 5), randn(3, 2, 3, 3), groups=2), ["conv2d", "groups=2"]),
    (lambda: gg.conv2d(randn(1, 3, 2, 2), randn(4, 3, 3, 3)), ["conv2d", "empty"]),
    (lambda: gg.conv2d(randn(1, 3, 5, 5), randn(4, 3, 3, 3), randn(5)), ["conv2d", "bias", "(5,)"]),
    (lambda: gg.conv2d(randn(1, 3, 5, 5), randn(4, 3, 3, 3), stride=0), ["conv2d", "stride"]),
    (lambda: gg.conv1d(randn(1, 3, 5, 5), randn(4, 3, 3)), ["conv1d", "3-D input"]),
    (lambda: gg.conv_transpose2d(randn(1, 3, 4, 4), randn(2, 3, 3, 3)), ["conv_transpose2d", "(2, 3, 3, 3)"]),
    (lambda: gg.conv_transpose2d(randn(1, 3, 4, 4), randn(3, 2, 3, 3), stride=2, output_padding=2),
     ["conv_transpose2d", "output_padding"]),
    (lambda: gg.max_pool2d(randn(1, 1, 6, 6), 2, padding=2), ["max_pool2d", "half"]),
    (lambda: gg.max_pool2d(randn(1, 1, 2, 2), 3), ["max_pool2d", "too small"]),
    (lambda: gg.avg_pool2d(randn(6, 6), 2), ["avg_pool2d", "(6, 6)"]),
    (lambda: gg.interpolate(randn(1, 1, 4), size=8, mode="bilinear"), ["interpolate", "bilinear", "4-D"]),
])
def test_shape_errors_name_the_op(call, words):
    with pytest.raises(ShapeError) as info:
        call()
    for word in words:
        assert word in str(info.value)


def test_conv_rejects_integer_inputs():
    with pytest.raises(DTypeError, match="conv2d"):
        gg.conv2d(gg.tensor(np.ones((1, 1, 3, 3), np.int64)), gg.tensor(np.ones((1, 1, 2, 2), np.int64)))


def test_interpolate_argument_errors():
    x = randn(1, 1, 4, 4)
    with pytest.raises(ValueError, match="align_corners"):
        gg.interpolate(x, size=8, mode="nearest", align_corners=True)
    with pytest.raises(ValueError, match="exactly one"):
        gg.interpolate(x, size=8, scale_factor=2)
    with pytest.raises(ValueError, match="mode"):
        gg.interpolate(x, size=8, mode="bicubic_typo")


# ---- padding='same' ---------------------------------------------------------------------------------
@pytest.mark.parametrize("kernel, dilation", [((2, 4), 1), ((3, 2), 2), ((4, 4), (1, 3)), ((1, 5), 2)])
def test_same_padding_keeps_size_and_puts_the_extra_at_the_end(kernel, dilation):
    x, w = randn(2, 2, 7, 6), randn(3, 2, *kernel)
    y = gg.conv2d(x, w, padding="same", dilation=dilation)
    assert y.shape == (2, 3, 7, 6)
    d = (dilation, dilation) if isinstance(dilation, int) else dilation
    total = [di * (k - 1) for di, k in zip(d, kernel)]
    pads = [(t // 2, t - t // 2) for t in total]  # PyTorch: the odd one out goes bottom/right
    xpad = np.pad(x.numpy(), ((0, 0), (0, 0), *pads))
    expected = gg.conv2d(gg.tensor(xpad), w, dilation=dilation)
    np.testing.assert_allclose(y.numpy(), expected.numpy(), rtol=1e-12, atol=1e-12)


def test_same_padding_conv1d_and_gradient():
    x, w = randn(2, 2, 9, requires_grad=True), randn(3, 2, 4, requires_grad=True)
    assert gg.conv1d(x, w, padding="same", dilation=3).shape == (2, 3, 9)
    gg.check_grad(lambda x, w: gg.conv1d(x, w, padding="same", dilation=3), x, w, order=2)


def test_same_padding_rejects_stride():
    with pytest.raises(ShapeError, match="same"):
        gg.conv2d(randn(1, 1, 6, 6), randn(1, 1, 3, 3), padding="same", stride=2)


def test_valid_padding_is_zero_padding():
    x, w = randn(1, 2, 6, 6), randn(3, 2, 3, 3)
    np.testing.assert_array_equal(gg.conv2d(x, w, padding="valid").numpy(), gg.conv2d(x, w).numpy())


# ---- groups -----------------------------------------------------------------------------------------
def test_groups_equal_separate_convolutions():
    x, w, b = randn(2, 6, 5, 5), randn(9, 2, 3, 3), randn(9)
    y = gg.conv2d(x, w, b, padding=1, groups=3).numpy()
    for g in range(3):
        part = gg.conv2d(gg.tensor(x.numpy()[:, 2 * g:2 * g + 2]), gg.tensor(w.numpy()[3 * g:3 * g + 3]),
                         gg.tensor(b.numpy()[3 * g:3 * g + 3]), padding=1).numpy()
        np.testing.assert_allclose(y[:, 3 * g:3 * g + 3], part, rtol=1e-12, atol=1e-12)


def test_depthwise_conv_gradients():
    x, w = randn(2, 4, 5, 5, requires_grad=True), randn(8, 1, 3, 3, requires_grad=True)
    gg.check_grad(lambda x, w: gg.conv2d(x, w, stride=2, padding=1, groups=4), x, w, order=2)


def test_grouped_conv_transpose_gradients():
    x, w = randn(2, 4, 3, 3, requires_grad=True), randn(4, 3, 3, 3, requires_grad=True)
    y = gg.conv_transpose2d(x, w, stride=2, padding=1, output_padding=1, groups=2)
    assert y.shape == (2, 6, 6, 6)
    gg.check_grad(lambda x, w: gg.conv_transpose2d(x, w, stride=2, padding=1, output_padding=1, groups=2),
                  x, w, order=2)


# ---- adjoint identities (the gradients are these ops) -----------------------------------------------
@pytest.mark.parametrize("stride, padding, dilation, groups", [(1, 0, 1, 1), (2, 1, 1, 1), (2, 2, 2, 2), (3, 1, 1, 2)])
def test_conv_transpose_is_the_adjoint_of_conv(stride, padding, dilation, groups):
    x, w = randn(2, 4, 9, 8), randn(6, 4 // groups, 3, 2)
    y = gg.conv2d(x, w, stride=stride, padding=padding, dilation=dilation, groups=groups)
    g = randn(*y.shape)
    out_pad = [x.shape[2 + i] + 2 * padding - dilation * (w.shape[2 + i] - 1) - 1 - (y.shape[2 + i] - 1) * stride
               for i in range(2)]
    xt = gg.conv_transpose2d(g, w, stride=stride, padding=padding, output_padding=tuple(out_pad), groups=groups,
                             dilation=dilation)
    assert xt.shape == x.shape
    np.testing.assert_allclose(np.sum(xt.numpy() * x.numpy()), np.sum(g.numpy() * y.numpy()), rtol=1e-10)


def test_conv_gradient_matches_adjoints_with_unused_input_rows():
    # (8 - 3) // 2 + 1 = 3 outputs read rows 0..6: row 7 is never read, its gradient must be 0
    x, w = randn(1, 2, 8, 8, requires_grad=True), randn(3, 2, 3, 3, requires_grad=True)
    gg.conv2d(x, w, stride=2).sum().backward()
    assert np.all(x.grad.numpy()[:, :, 7, :] == 0) and np.all(x.grad.numpy()[:, :, :, 7] == 0)
    assert np.all(x.grad.numpy()[:, :, 6, :6] != 0)
    gg.check_grad(lambda x, w: gg.conv2d(x, w, stride=2), x, w, order=2)


# ---- max pooling ------------------------------------------------------------------------------------
def test_max_pool_ties_route_the_gradient_to_the_first_maximum():
    x = gg.tensor(np.ones((1, 1, 4, 4)), requires_grad=True)
    gg.max_pool2d(x, 2).sum().backward()
    expected = np.zeros((4, 4))
    expected[::2, ::2] = 1
    np.testing.assert_array_equal(x.grad.numpy()[0, 0], expected)


def test_max_pool_overlapping_windows_accumulate():
    x = gg.tensor(np.arange(25.0).reshape(1, 1, 5, 5), requires_grad=True)
    gg.max_pool2d(x, 3, stride=1).sum().backward()
    grad = x.grad.numpy()[0, 0]
    assert grad.sum() == 9 and grad[4, 4] == 1 and grad[2, 2] == 1 and grad[3, 4] == 1 and grad[4, 2] == 1


def test_max_pool_return_indices_are_flat_plane_positions():
    x = randn(2, 3, 6, 5)
    values, index = gg.max_pool2d(x, 2, stride=2, padding=1, return_indices=True)
    assert index.dtype == np.int64 and index.shape == values.shape == (2, 3, 4, 3)
    flat = x.numpy().reshape(2, 3, -1)
    np.testing.assert_array_equal(np.take_along_axis(flat, index.numpy().reshape(2, 3, -1), -1).reshape(values.shape),
                                  values.numpy())
    np.testing.assert_array_equal(values.numpy(), gg.max_pool2d(x, 2, stride=2, padding=1).numpy())


def test_max_pool_propagates_nan_and_padding_never_wins():
    x = np.full((1, 1, 3, 3), -5.0)
    x[0, 0, 1, 1] = np.nan
    y = gg.max_pool2d(gg.tensor(x), 2, stride=1).numpy()
    assert np.isnan(y).all()
    y = gg.max_pool2d(gg.tensor(np.full((1, 1, 3, 3), -np.inf)), 3, stride=2, padding=1, return_indices=True)[1]
    assert ((y.numpy() >= 0) & (y.numpy() < 9)).all()


def test_max_pool_float32_and_second_order():
    x = gg.tensor(RNG.standard_normal((2, 2, 6, 6)).astype(np.float32), requires_grad=True)
    y = gg.max_pool2d(x, 3, stride=2, padding=1, ceil_mode=True)
    (gx,) = gg.grad(y.sum() * 2, [x], create_graph=True)
    assert y.dtype == np.float32 and gx.dtype == np.float32
    assert gx.numpy().sum() == pytest.approx(2 * y.size)


# ---- ceil_mode --------------------------------------------------------------------------------------
@pytest.mark.parametrize("size, k, s, p, ceil, expected", [
    (5, 2, 2, 0, False, 2), (5, 2, 2, 0, True, 3),
    (6, 3, 2, 1, True, 4), (6, 3, 2, 1, False, 3),
    (5, 2, 2, 1, True, 3),  # the 4th window would start in the right padding: dropped
    (4, 3, 3, 1, True, 2), (7, 3, 3, 0, True, 3),
    (8, 2, 3, 1, True, 3),  # ceil gives 4, but window 4 would start at 8 = size + padding - 1 + 1: dropped
    (9, 2, 3, 1, True, 4),
])
def test_ceil_mode_output_sizes(size, k, s, p, ceil, expected):
    x = randn(1, 1, size, size)
    assert gg.max_pool2d(x, k, s, p, ceil_mode=ceil).shape[-1] == expected
    assert gg.avg_pool2d(x, k, s, p, ceil_mode=ceil).shape[-1] == expected


def test_avg_pool_ceil_mode_divisor_of_window_past_the_padded_edge():
    # 1-row input of ones, kernel 3, stride 2, padding 1, size 6: windows start at -1, 1, 3, 5;
    # the last covers [5, 8), clipped to the padded edge 7: 2 elements (one input, one pad).
    x = gg.tensor(np.ones((1, 1, 1, 6)))
    y = gg.avg_pool2d(x, (1, 3), (1, 2), (0, 1), ceil_mode=True).numpy()[0, 0, 0]
    np.testing.assert_allclose(y, [2 / 3, 1, 1, 1 / 2])
    y = gg.avg_pool2d(x, (1, 3), (1, 2), (0, 1), ceil_mode=True, count_include_pad=False).numpy()[0, 0, 0]
    np.testing.assert_allclose(y, [1, 1, 1, 1])
    y = gg.avg_pool2d(gg.tensor(np.ones((1, 1, 1, 5))), (1, 2), (1, 2), ceil_mode=True).numpy()[0, 0, 0]
    np.testing.assert_allclose(y, [1, 1, 1])  # no padding: the partial window divides by its own size


# ---- count_include_pad ------------------------------------------------------------------------------
def test_count_include_pad():
    x = gg.tensor(np.ones((1, 1, 4, 4)))
    inc = gg.avg_pool2d(x, 3, stride=1, padding=1).numpy()[0, 0]
    assert inc[0, 0] == pytest.approx(4 / 9) and inc[0, 1] == pytest.approx(6 / 9) and inc[1, 1] == 1
    exc = gg.avg_pool2d(x, 3, stride=1, padding=1, count_include_pad=False).numpy()[0, 0]
    np.testing.assert_allclose(exc, np.ones((4, 4)))
    over = gg.avg_pool2d(x, 3, stride=1, padding=1, divisor_override=2).numpy()[0, 0]
    assert over[0, 0] == 2 and over[1, 1] == 4.5


def test_avg_pool_gradient_is_the_adjoint():
    x = randn(2, 2, 7, 6, requires_grad=True)
    y = gg.avg_pool2d(x, 3, 2, 1, ceil_mode=True, count_include_pad=False)
    g = randn(*y.shape)
    (gx,) = gg.grad(y, [x], grad_outputs=[g])
    np.testing.assert_allclose(np.sum(gx.numpy() * x.numpy()), np.sum(g.numpy() * y.numpy()), rtol=1e-10)


# ---- adaptive pooling and interpolation -------------------------------------------------------------
def test_adaptive_avg_pool_global_and_unbatched():
    x = randn(2, 3, 5, 7)
    np.testing.assert_allclose(gg.adaptive_avg_pool2d(x, 1).numpy()[..., 0, 0], x.numpy().mean(axis=(2, 3)))
    assert gg.adaptive_avg_pool2d(randn(3, 5, 7), (2, None)).shape == (3, 2, 7)


def test_interpolate_nearest_scale_factor_uses_inverse_scale():
    # in=5, scale 1.1 -> out 5 (identity); in=4, scale 1.5 -> out 6 with src floor(dst / 1.5)
    x = gg.tensor(np.arange(4.0).reshape(1, 1, 4))
    np.testing.assert_array_equal(gg.interpolate(x, scale_factor=1.5).numpy()[0, 0], [0, 0, 1, 2, 2, 3])
    y = gg.tensor(np.arange(5.0).reshape(1, 1, 5))
    np.testing.assert_array_equal(gg.interpolate(y, scale_factor=1.1).numpy()[0, 0], np.arange(5.0))
    np.testing.assert_array_equal(gg.interpolate(y, size=3).numpy()[0, 0], [0, 1, 3])


def test_interpolate_bilinear_align_corners_keeps_corners():
    x = randn(1, 2, 3, 4)
    y = gg.interpolate(x, size=(7, 9), mode="bilinear", align_corners=True).numpy()
    np.testing.assert_allclose(y[..., [0, 0, -1, -1], [0, -1, 0, -1]], x.numpy()[..., [0, 0, -1, -1], [0, -1, 0, -1]])
    z = gg.interpolate(x, scale_factor=2, mode="bilinear")
    assert z.shape == (1, 2, 6, 8)


def test_interpolate_area_is_adaptive_avg_pool():
    x = randn(2, 2, 6, 6)
    np.testing.assert_allclose(gg.interpolate(x, size=(3, 2), mode="area").numpy(),
                               gg.adaptive_avg_pool2d(x, (3, 2)).numpy())


# ---- graph mode: shape rules with an unknown batch ---------------------------------------------------
@pytest.mark.parametrize("fn, shape, expected", [
    (lambda x: gg.conv2d(x, symbolic(8, 3, 3, 3), padding=1, stride=2), (None, 3, 9, 9), (None, 8, 5, 5)),
    (lambda x: gg.conv2d(x, symbolic(8, 3, 2, 2), symbolic(8), padding="same"), (None, 3, 9, 9), (None, 8, 9, 9)),
    (lambda x: gg.conv1d(x, symbolic(4, 3, 3)), (None, 3, 9), (None, 4, 7)),
    (lambda x: gg.conv_transpose2d(x, symbolic(3, 5, 3, 3), stride=2, padding=1, output_padding=1),
     (None, 3, 4, 4), (None, 5, 8, 8)),
    (lambda x: gg.max_pool2d(x, 2), (None, 3, 9, 9), (None, 3, 4, 4)),
    (lambda x: gg.avg_pool2d(x, 3, 2, 1, ceil_mode=True), (None, 3, 6, 6), (None, 3, 4, 4)),
    (lambda x: gg.adaptive_avg_pool2d(x, (2, 3)), (None, 3, 9, 9), (None, 3, 2, 3)),
    (lambda x: gg.interpolate(x, scale_factor=2, mode="bilinear"), (None, 3, 4, 5), (None, 3, 8, 10)),
    (lambda x: gg.conv2d(x, symbolic(8, 3, 3, 3)), (None, 3, None, 9), (None, 8, None, 7)),
])
def test_symbolic_shapes_with_unknown_batch(fn, shape, expected):
    y = fn(symbolic(*shape))
    assert y.is_symbolic and y.shape == expected and y.dtype == np.float32


# ---- grouped and depthwise convolutions, max-pool gradients: against PyTorch ---------------------------
# (kind, dims, channels in, channels out, groups, kernel, stride, padding, dilation)
GROUPED = [
    ("conv", 2, 6, 6, 6, 3, 1, 1, 1),  # depthwise
    ("conv", 2, 4, 8, 4, 3, 2, 1, 1),  # depthwise, channel multiplier 2, stride 2
    ("conv", 2, 4, 4, 4, 3, 1, 2, 2),  # depthwise, dilation 2
    ("conv", 2, 6, 4, 2, 2, 2, 0, 1),  # grouped
    ("conv", 2, 6, 9, 3, 3, 2, 2, 2),  # grouped, stride and dilation 2
    ("conv", 1, 5, 5, 5, 3, 2, 1, 1),  # 1-D depthwise
    ("conv", 2, 64, 64, 64, 3, 2, 1, 1),  # depthwise with many channels, stride 2
    ("conv", 2, 64, 128, 64, 5, 1, 2, 1),  # many channels, multiplier 2, 5x5
    ("transpose", 2, 6, 6, 6, 3, 2, 1, 1),  # depthwise transpose
    ("transpose", 2, 64, 64, 64, 3, 1, 1, 1),  # many channels
    ("transpose", 2, 3, 6, 3, 3, 1, 1, 2),  # one input channel per group, two outputs each
    ("transpose", 2, 6, 3, 3, 2, 2, 0, 1),  # grouped transpose
]


@pytest.mark.parametrize("size", [7, 17])  # small maps and larger ones take different depthwise kernels
@pytest.mark.parametrize("kind, nd, c, co, groups, k, stride, padding, dilation", GROUPED)
def test_grouped_and_depthwise_match_pytorch_to_second_order(kind, nd, c, co, groups, k, stride, padding, dilation,
                                                              size):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(11)
    x = rng.standard_normal((2, c) + (size,) * nd)
    w = rng.standard_normal(((co, c // groups) if kind == "conv" else (c, co // groups)) + (k,) * nd)
    args = dict(stride=stride, padding=padding, dilation=dilation, groups=groups)
    if kind == "transpose":
        args["output_padding"] = stride - 1
    name = f"conv{nd}d" if kind == "conv" else f"conv_transpose{nd}d"
    tx, tw = torch.tensor(x, requires_grad=True), torch.tensor(w, requires_grad=True)
    ty = getattr(torch.nn.functional, name)(tx, tw, **args)
    gx, gw = gg.tensor(x, requires_grad=True), gg.tensor(w, requires_grad=True)
    y = getattr(gg, name)(gx, gw, **args)
    np.testing.assert_allclose(y.numpy(), ty.detach().numpy(), atol=1e-10)
    up = rng.standard_normal(y.shape)
    tgrads = torch.autograd.grad(ty, (tx, tw), torch.tensor(up), create_graph=True)
    grads = gg.grad([y], [gx, gw], [gg.tensor(up)], create_graph=True)
    for g, t in zip(grads, tgrads):
        np.testing.assert_allclose(g.numpy(), t.detach().numpy(), atol=1e-10)
    t2 = torch.autograd.grad(sum((t * t).sum() for t in tgrads), (tx, tw))
    g2 = gg.grad([sum((g * g).sum() for g in grads)], [gx, gw])
    for g, t in zip(g2, t2):
        np.testing.assert_allclose(g.numpy(), t.numpy(), atol=1e-9)


@pytest.mark.parametrize("values", ["relu", "integers", "nan", "-inf"])
@pytest.mark.parametrize("args", [dict(kernel_size=2), dict(kernel_size=3, stride=2, padding=1),
                                  dict(kernel_size=2, stride=2, ceil_mode=True), dict(kernel_size=3, stride=1),
                                  dict(kernel_size=2, stride=3), dict(kernel_size=2, stride=1, dilation=2),
                                  dict(kernel_size=1)])
def test_max_pool_gradient_matches_pytorch_with_ties_nan_and_infinities(values, args):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(12)
    x = rng.standard_normal((2, 3, 7, 7)).astype(np.float32)
    x = {"relu": np.maximum(x, 0), "integers": np.round(x), "nan": x, "-inf": x}[values]
    if values == "nan":
        x[0, 1, 2, 3] = x[1, 0, 0, 0] = x[1, 0, 0, 1] = np.nan
    if values == "-inf":
        x[0, 0, :3, :3] = -np.inf
    tx = torch.tensor(x, requires_grad=True)
    ty = torch.nn.functional.max_pool2d(tx, **args)
    up = rng.standard_normal(tuple(ty.shape)).astype(np.float32)
    (tgx,) = torch.autograd.grad(ty, tx, torch.tensor(up))
    gx = gg.tensor(x, requires_grad=True)
    y = gg.max_pool2d(gx, **args)
    np.testing.assert_array_equal(y.numpy(), ty.detach().numpy())
    (g,) = gg.grad([y], [gx], [gg.tensor(up)])
    np.testing.assert_allclose(g.numpy(), tgx.numpy(), rtol=1e-6, atol=1e-6)  # overlaps sum in another order


# ---- eager == graph (Session) == compiled (gg.function) -----------------------------------------------
def _small_cnn_grads(x, w1, w2, w3):
    """A depthwise, a grouped and a plain convolution, ReLU, overlapping and tiling max pools."""
    h = gg.relu(gg.conv2d(x, w1, padding=1, groups=4))
    h = gg.max_pool2d(h, 3, stride=2, padding=1)
    h = gg.relu(gg.conv2d(h, w2, stride=1, padding=1, groups=2))
    h = gg.max_pool2d(gg.conv2d(h, w3, padding=1), 2)
    loss = (h * h).sum()
    return (loss,) + tuple(gg.grad([loss], [x, w1, w2, w3]))


def test_conv_and_pool_gradients_equal_in_eager_graph_and_compiled_modes():
    rng = np.random.default_rng(13)
    shapes = [(2, 4, 9, 9), (8, 1, 3, 3), (6, 4, 3, 3), (5, 6, 3, 3)]
    values = [rng.standard_normal(s) for s in shapes]
    eager = _small_cnn_grads(*[gg.tensor(v, requires_grad=True) for v in values])
    compiled = gg.function(_small_cnn_grads)(*[gg.tensor(v, requires_grad=True) for v in values])
    graph = gg.Graph()
    with graph.as_default():
        holders = [gg.placeholder("float64", s) for s in shapes]
        h = gg.relu(gg.conv2d(holders[0], holders[1], padding=1, groups=4))
        h = gg.max_pool2d(h, 3, stride=2, padding=1)
        h = gg.relu(gg.conv2d(h, holders[2], stride=1, padding=1, groups=2))
        h = gg.max_pool2d(gg.conv2d(h, holders[3], padding=1), 2)
        loss = (h * h).sum()
        fetches = [loss] + list(gg.gradients(loss, holders))
    session = gg.Session(graph).run(fetches, dict(zip(holders, values)))
    for e, c, s in zip(eager, compiled, session):
        np.testing.assert_allclose(c.numpy(), e.numpy(), rtol=1e-10, atol=1e-10)
        np.testing.assert_allclose(np.asarray(s), e.numpy(), rtol=1e-10, atol=1e-10)
