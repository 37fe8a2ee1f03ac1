"""PyTorch-agreement cases of the spatial ops and their layers: 3-D convolutions, pooling over 1-3 axes
(with indices), unpooling, adaptive and power-average pooling, 3-D and nearest-exact interpolation,
pixel and channel shuffles, padding layers and the resampling layers. Layers without parameters are
built inside both callables (``t.nn.MaxPool3d(...)(x)``, ``g.nn.MaxPool3d(...)(x)``)."""
from tests.oracle.cases import F32, C, F, I, P, nnf

X1 = (2, 3, 9)
X2 = (2, 3, 6, 7)
X3 = (2, 2, 4, 5, 6)


def _f(name, **kw):
    """The functional ``name`` with keyword arguments, in both frameworks."""
    return (lambda t, *xs: getattr(nnf(t), name)(*xs, **kw)), (lambda g, *xs: getattr(g.nn.functional, name)(*xs, **kw))


def _m(name, *args, **kw):
    """A layer ``name(*args, **kw)`` applied to the inputs, in both frameworks."""
    return (lambda t, *xs: getattr(t.nn, name)(*args, **kw)(*xs)), (lambda g, *xs: getattr(g.nn, name)(*args, **kw)(*xs))


# ---- 3-D convolutions ---------------------------------------------------------------------------------------
C("conv3d", [F((2, 2, 4, 5, 4)), F((3, 2, 2, 3, 2)), F((3,))], *_f("conv3d", stride=(1, 2, 1), padding=1))
C("conv3d[groups_dilation]", [F((1, 4, 5, 4, 4)), F((4, 2, 2, 2, 2))], *_f("conv3d", dilation=(2, 1, 1), groups=2))
C("conv3d[same_f32]", [F((1, 2, 4, 4, 4)), F((2, 2, 3, 2, 3))], *_f("conv3d", padding="same"), **F32)
C("conv_transpose3d", [F((2, 3, 2, 3, 2)), F((3, 2, 3, 2, 3)), F((2,))],
  *_f("conv_transpose3d", stride=2, padding=1, output_padding=(1, 0, 1)))
C("conv_transpose3d[groups]", [F((1, 4, 2, 2, 3)), F((4, 1, 2, 2, 2))], *_f("conv_transpose3d", groups=2, dilation=2))

# ---- max / average pooling ----------------------------------------------------------------------------------
C("max_pool1d", [F(X1)], *_f("max_pool1d", kernel_size=3, stride=2, padding=1))
C("max_pool1d[indices_ceil_dilation]", [F(X1)],
  *_f("max_pool1d", kernel_size=2, stride=2, dilation=2, ceil_mode=True, return_indices=True))
C("max_pool2d[indices_pad]", [F(X2)], *_f("max_pool2d", kernel_size=3, stride=2, padding=1, return_indices=True))
C("max_pool3d", [F(X3)], *_f("max_pool3d", kernel_size=2))
C("max_pool3d[indices_pad_ceil]", [F(X3)],
  *_f("max_pool3d", kernel_size=(2, 3, 2), stride=(1, 2, 2), padding=1, ceil_mode=True, return_indices=True))
C("max_pool3d[unbatched_f32]", [F((2, 4, 4, 5))], *_f("max_pool3d", kernel_size=2, stride=1), **F32)
C("avg_pool1d", [F(X1)], *_f("avg_pool1d", kernel_size=3, stride=2, padding=1, count_include_pad=False))
C("avg_pool1d[ceil]", [F(X1)], *_f("avg_pool1d", kernel_size=2, stride=2, padding=1, ceil_mode=True))
C("avg_pool3d", [F(X3)], *_f("avg_pool3d", kernel_size=2))
C("avg_pool3d[pad_ceil_exclude]", [F(X3)],
  *_f("avg_pool3d", kernel_size=3, stride=2, padding=1, ceil_mode=True, count_include_pad=False))
C("avg_pool3d[divisor_override]", [F(X3)], *_f("avg_pool3d", kernel_size=(2, 2, 3), stride=1, divisor_override=5))

# ---- unpooling: the indices of a max pooling of the same input ----------------------------------------------
C("max_unpool1d", [F(X1)],
  lambda t, x: nnf(t).max_unpool1d(*nnf(t).max_pool1d(x, 3, 2, return_indices=True), 3, 2, output_size=(9,)),
  lambda g, x: g.nn.functional.max_unpool1d(*g.nn.functional.max_pool1d(x, 3, 2, return_indices=True), 3, 2,
                                            output_size=(9,)))
C("max_unpool2d", [F(X2)],
  lambda t, x: nnf(t).max_unpool2d(*nnf(t).max_pool2d(x, 2, return_indices=True), 2, output_size=(6, 7)),
  lambda g, x: g.nn.functional.max_unpool2d(*g.nn.functional.max_pool2d(x, 2, return_indices=True), 2,
                                            output_size=(6, 7)))
C("max_unpool3d", [F(X3)],
  lambda t, x: t.nn.MaxUnpool3d(2)(*t.nn.MaxPool3d(2, return_indices=True)(x), output_size=x.shape),
  lambda g, x: g.nn.MaxUnpool3d(2)(*g.nn.MaxPool3d(2, return_indices=True)(x), output_size=x.shape))

# ---- adaptive pooling ----------------------------------------------------------------------------------------
C("adaptive_avg_pool1d", [F(X1)], *_f("adaptive_avg_pool1d", output_size=4))
C("adaptive_avg_pool3d", [F(X3)], *_f("adaptive_avg_pool3d", output_size=(3, None, 4)))
C("adaptive_max_pool1d", [F(X1)], *_f("adaptive_max_pool1d", output_size=4, return_indices=True))
C("adaptive_max_pool2d", [F(X2)], *_f("adaptive_max_pool2d", output_size=(4, 3), return_indices=True))
C("adaptive_max_pool2d[global]", [F(X2)], *_m("AdaptiveMaxPool2d", 1))
C("adaptive_max_pool3d", [F(X3)], *_f("adaptive_max_pool3d", output_size=(3, 2, 4), return_indices=True))
C("adaptive_max_pool3d[upsample]", [F((1, 2, 2, 3, 3))], *_m("AdaptiveMaxPool3d", (3, 4, 2)))

# ---- power-average pooling -----------------------------------------------------------------------------------
C("lp_pool1d", [P(X1)], *_f("lp_pool1d", norm_type=2, kernel_size=3, stride=2))
C("lp_pool2d", [P(X2)], *_f("lp_pool2d", norm_type=1.5, kernel_size=(2, 3), ceil_mode=True))
C("lp_pool3d", [P(X3)], *_m("LPPool3d", 3, 2))

# ---- interpolation and its layers ----------------------------------------------------------------------------
C("interpolate[trilinear]", [F(X3)], *_f("interpolate", size=(3, 7, 4), mode="trilinear"))
C("interpolate[trilinear_align_scale]", [F(X3)],
  *_f("interpolate", scale_factor=(1.5, 0.7, 2.0), mode="trilinear", align_corners=True))
C("interpolate[nearest_3d_scale]", [F(X3)], *_f("interpolate", scale_factor=1.7))
C("interpolate[nearest-exact]", [F(X2)], *_f("interpolate", size=(9, 4), mode="nearest-exact"))
C("interpolate[nearest-exact_1d_scale]", [F(X1)], *_f("interpolate", scale_factor=1.3, mode="nearest-exact"))
C("interpolate[area_3d]", [F(X3)], *_f("interpolate", size=(2, 3, 4), mode="area"))
C("interpolate[recompute_scale]", [F(X2)],
  *_f("interpolate", scale_factor=1.7, mode="bilinear", recompute_scale_factor=True))
# (PyTorch's CPU kernels take uint8 among the integer types)
C("interpolate[nearest_uint8]", [I((1, 2, 5, 7), 0, 100)],
  lambda t, x: nnf(t).interpolate(x.to(t.uint8), scale_factor=1.6),
  lambda g, x: g.nn.functional.interpolate(x.to(g.uint8), scale_factor=1.6))
C("interpolate[nearest-exact_uint8]", [I((1, 2, 5, 7), 0, 100)],
  lambda t, x: nnf(t).interpolate(x.to(t.uint8), size=(3, 9), mode="nearest-exact"),
  lambda g, x: g.nn.functional.interpolate(x.to(g.uint8), size=(3, 9), mode="nearest-exact"))
C("Upsample", [F(X2)], *_m("Upsample", scale_factor=2, mode="bilinear"))
C("Upsample[trilinear]", [F(X3)], *_m("Upsample", size=(5, 3, 7), mode="trilinear", align_corners=True))
C("UpsamplingNearest2d", [F(X2)], *_m("UpsamplingNearest2d", scale_factor=2))
C("UpsamplingBilinear2d", [F(X2)], *_m("UpsamplingBilinear2d", size=(8, 5)))

# ---- shuffles -----------------------------------------------------------------------------------------------
C("pixel_shuffle", [F((2, 8, 3, 2))], *_f("pixel_shuffle", upscale_factor=2))
C("pixel_shuffle[5d]", [F((2, 2, 9, 2, 3))], *_m("PixelShuffle", 3))
C("pixel_unshuffle", [F((2, 3, 4, 6))], *_m("PixelUnshuffle", 2))
C("channel_shuffle", [F((2, 6, 5))], *_m("ChannelShuffle", 3))
C("channel_shuffle[4d]", [F((2, 8, 2, 3))], *_f("channel_shuffle", groups=2))

# ---- padding layers -----------------------------------------------------------------------------------------
C("ConstantPad1d", [F(X1)], *_m("ConstantPad1d", (1, 2), 3.5))
C("ConstantPad3d", [F(X3)], *_m("ConstantPad3d", (1, 0, 2, 1, 0, 3), -1.0))
C("ZeroPad2d", [F(X2)], *_m("ZeroPad2d", (1, 1, 2, 0)))
C("ZeroPad3d", [F(X3)], *_m("ZeroPad3d", 1))
C("ReflectionPad1d", [F(X1)], *_m("ReflectionPad1d", (3, 1)))
C("ReflectionPad2d", [F(X2)], *_m("ReflectionPad2d", (1, 2, 3, 0)))
C("ReflectionPad3d", [F(X3)], *_m("ReflectionPad3d", (1, 2, 0, 1, 2, 1)))
C("ReplicationPad1d", [F(X1)], *_m("ReplicationPad1d", 2))
C("ReplicationPad2d", [F(X2)], *_m("ReplicationPad2d", (0, 3, 1, 2)))
C("ReplicationPad3d", [F(X3)], *_m("ReplicationPad3d", (2, 1, 1, 0, 1, 2)))
C("CircularPad1d", [F(X1)], *_m("CircularPad1d", (2, 1)))
C("CircularPad2d", [F(X2)], *_m("CircularPad2d", 1))
C("CircularPad3d", [F(X3)], *_m("CircularPad3d", (1, 2, 2, 1, 0, 1)))
C("ReflectionPad2d[unbatched]", [F((3, 6, 7))], *_m("ReflectionPad2d", 2))

# ---- dropout in eval mode, and dropped rates -----------------------------------------------------------------
C("alpha_dropout[eval]", [F((4, 5))], *_f("alpha_dropout", p=0.3, training=False))
C("Dropout3d[eval]", [F(X3)], lambda t, x: t.nn.Dropout3d(0.5).eval()(x), lambda g, x: g.nn.Dropout3d(0.5).eval()(x))

# ---- per-sample normalizations ------------------------------------------------------------------------------
C("instance_norm", [F((2, 3, 4, 5)), F((3,)), F((3,))],
  lambda t, x, w, b: nnf(t).instance_norm(x, weight=w, bias=b),
  lambda g, x, w, b: g.nn.functional.instance_norm(x, weight=w, bias=b))
C("instance_norm[3d_f32]", [F((2, 2, 3, 2, 4))], *_f("instance_norm", eps=1e-3), **F32)
C("local_response_norm", [F((2, 6, 3, 3))], *_f("local_response_norm", size=3, alpha=0.1, beta=0.6, k=1.5))
C("local_response_norm[even_3d]", [F((2, 5, 2, 2, 3))], *_m("LocalResponseNorm", 4, 0.3))
C("InstanceNorm1d[unbatched]", [F((3, 7))], *_m("InstanceNorm1d", 3))
C("max_pool2d_with_indices", [F(X2)], *_f("max_pool2d_with_indices", kernel_size=3, stride=2))
C("adaptive_max_pool3d_with_indices", [F(X3)], *_f("adaptive_max_pool3d_with_indices", output_size=2))
C("interpolate[bicubic]", [F(X2)], *_f("interpolate", size=(9, 4), mode="bicubic"))
C("interpolate[bicubic_scale_align]", [F(X2)], *_f("interpolate", scale_factor=(1.5, 0.6), mode="bicubic",
                                                   align_corners=True))
C("Upsample[bicubic]", [F(X2)], *_m("Upsample", scale_factor=2, mode="bicubic"))
C("Unfold", [F((2, 3, 5, 6))], *_m("Unfold", kernel_size=(2, 3), dilation=(1, 2), padding=1, stride=(2, 1)))
C("Fold", [F((2, 12, 12))], *_m("Fold", output_size=(4, 5), kernel_size=2))
C("native_channel_shuffle", [F((2, 6, 3), diff=False)], *_f("native_channel_shuffle", groups=2))

# ---- spatial transformers (grids partly outside [-1, 1]) ------------------------------------------------------
C("affine_grid", [F((2, 2, 3))], *_f("affine_grid", size=(2, 3, 4, 5)))
C("affine_grid[3d_align]", [F((2, 3, 4))], *_f("affine_grid", size=(2, 1, 2, 3, 4), align_corners=True))
for _mode in ("bilinear", "nearest"):
    for _padding in ("zeros", "border", "reflection"):
        for _align in (False, True):
            C(f"grid_sample[{_mode},{_padding},{'align' if _align else 'noalign'}]",
              [F((2, 3, 5, 6)), F((2, 3, 4, 2), -1.3, 1.3, diff=_mode == "bilinear")],
              *_f("grid_sample", mode=_mode, padding_mode=_padding, align_corners=_align))
C("grid_sample[3d_trilinear_reflection]", [F((2, 2, 3, 4, 5)), F((2, 2, 3, 2, 3), -1.3, 1.3)],
  *_f("grid_sample", padding_mode="reflection", align_corners=False))
C("grid_sample[3d_nearest_border_f32]", [F((1, 2, 3, 4, 5)), F((1, 2, 2, 3, 3), -1.3, 1.3, diff=False)],
  *_f("grid_sample", mode="nearest", padding_mode="border", align_corners=True), **F32)
C("spatial_transformer", [F((2, 3, 6, 5)), F((2, 2, 3), -0.8, 0.8)],
  lambda t, x, th: nnf(t).grid_sample(x, nnf(t).affine_grid(th, (2, 3, 4, 4), align_corners=False), align_corners=False),
  lambda g, x, th: g.nn.functional.grid_sample(x, g.nn.functional.affine_grid(th, (2, 3, 4, 4))))

# ---- fractional max pooling (PyTorch's offsets given as _random_samples) --------------------------------------
C("fractional_max_pool2d", [F((2, 3, 9, 8)), F((2, 3, 2), 0.0, 1.0, diff=False)],
  lambda t, x, u: nnf(t).fractional_max_pool2d(x, (2, 3), output_size=(5, 4), _random_samples=u),
  lambda g, x, u: g.nn.functional.fractional_max_pool2d(x, (2, 3), output_size=(5, 4), _random_samples=u))
C("fractional_max_pool2d[ratio_indices_f32]", [F((2, 2, 10, 9)), F((2, 2, 2), 0.0, 1.0, diff=False)],
  lambda t, x, u: nnf(t).fractional_max_pool2d(x, 2, output_ratio=(0.6, 0.6), return_indices=True, _random_samples=u),
  lambda g, x, u: g.nn.functional.fractional_max_pool2d(x, 2, output_ratio=0.6, return_indices=True,
                                                        _random_samples=u), **F32)
C("fractional_max_pool3d", [F((2, 2, 6, 7, 5)), F((2, 2, 3), 0.0, 1.0, diff=False)],
  lambda t, x, u: t.nn.FractionalMaxPool3d((2, 2, 3), output_size=(3, 4, 2), return_indices=True,
                                           _random_samples=u)(x),
  lambda g, x, u: g.nn.FractionalMaxPool3d((2, 2, 3), output_size=(3, 4, 2), return_indices=True,
                                           _random_samples=u)(x))
C("FractionalMaxPool2d[unbatched]", [F((3, 8, 8)), F((1, 3, 2), 0.0, 1.0, diff=False)],
  lambda t, x, u: t.nn.FractionalMaxPool2d(3, output_size=4, _random_samples=u)(x),
  lambda g, x, u: g.nn.FractionalMaxPool2d(3, output_size=4, _random_samples=u)(x))
C("conv1d[unbatched]", [F((3, 8)), F((2, 3, 3)), F((2,))], *_f("conv1d", stride=2))
C("conv3d[unbatched]", [F((2, 3, 4, 4)), F((3, 2, 2, 2, 2))], *_f("conv3d", padding=1))
C("conv_transpose2d[unbatched]", [F((3, 4, 3)), F((3, 2, 3, 3))], *_f("conv_transpose2d", stride=2, output_padding=1))
