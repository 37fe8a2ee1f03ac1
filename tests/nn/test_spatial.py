"""The spatial layers (3-D convolutions, pooling, unpooling, padding, resampling, channel dropout): their
PyTorch values are checked through tests/oracle/cases_spatial.py; here, what the corpus cannot show:
parameters and initialization, train/eval behaviour of dropout, gg.function and Session graphs, and
ONNX export of the layers checked in onnxruntime."""
from __future__ import annotations

import numpy as np
import pytest

import graphgrad as gg
from graphgrad import nn

RNG = np.random.default_rng(0)


def f32(*shape):
    return RNG.uniform(-1, 1, shape).astype(np.float32)


def test_conv3d_parameters_and_functional_form():
    conv = nn.Conv3d(4, 6, (2, 3, 3), stride=(1, 2, 1), padding=1, groups=2, bias=True)
    assert conv.weight.shape == (6, 2, 2, 3, 3) and conv.bias.shape == (6,)
    bound = 1 / np.sqrt(2 * 2 * 3 * 3)  # kaiming_uniform(a=sqrt(5)) gives U(-1/sqrt(fan_in), 1/sqrt(fan_in))
    assert np.abs(conv.weight.numpy()).max() <= bound and np.abs(conv.bias.numpy()).max() <= bound
    x = gg.tensor(f32(2, 4, 3, 5, 4))
    y = conv(x)
    np.testing.assert_allclose(y.numpy(), gg.conv3d(x, conv.weight, conv.bias, (1, 2, 1), 1, 1, 2).numpy())
    up = nn.ConvTranspose3d(4, 2, 2, stride=2)
    assert up.weight.shape == (4, 2, 2, 2, 2)
    assert up(gg.tensor(f32(1, 4, 2, 3, 2)), output_size=(5, 7, 4)).shape == (1, 2, 5, 7, 4)
    assert nn.Conv3d(2, 2, 3, padding=1, padding_mode="circular")(gg.tensor(f32(1, 2, 3, 4, 5))).shape == (1, 2, 3, 4, 5)


def test_channel_dropout_zeroes_whole_channels_and_is_identity_in_eval():
    x = gg.ones(8, 16, 3, 4)
    drop = nn.Dropout2d(0.5, generator=gg.Generator(1))
    y = drop(x).numpy().reshape(8, 16, -1)
    assert set(np.unique(y)) == {0.0, 2.0}
    assert (y.min(-1) == y.max(-1)).all()  # one value per channel
    assert drop.eval()(x) is x
    for layer, shape in ((nn.Dropout1d(0.3), (4, 6, 5)), (nn.Dropout1d(0.3), (6, 5)), (nn.Dropout3d(0.3), (2, 6, 2, 2, 2)),
                         (nn.FeatureAlphaDropout(0.3), (4, 6, 5))):
        out = layer(gg.ones(*shape)).numpy()
        flat = out.reshape(shape[:-1] + (-1,)) if len(shape) == 2 else out.reshape(shape[:2] + (-1,))
        assert (flat.min(-1) == flat.max(-1)).all(), type(layer).__name__
        assert layer.eval()(gg.ones(*shape)).numpy().tolist() == np.ones(shape).tolist()
    a = nn.AlphaDropout(0.2)(gg.randn(100_000)).numpy()
    assert abs(a.mean()) < 0.02 and abs(a.std() - 1) < 0.02  # keeps zero mean, unit variance


def test_padding_layers_argument_checks():
    with pytest.raises(ValueError):
        nn.ReflectionPad2d((1, 2, 3))
    with pytest.raises(gg.ShapeError):
        nn.ReflectionPad3d(1)(gg.ones(2, 3))
    assert nn.ZeroPad1d(2)(gg.ones(3, 4)).shape == (3, 8)
    assert nn.ConstantPad2d((1, 0, 2, 1), 7.0)(gg.ones(1, 2, 3)).numpy()[0, 0, 0] == 7.0


def test_pooling_error_messages():
    with pytest.raises(gg.ShapeError, match="max_pool3d"):
        gg.max_pool3d(gg.ones(2, 4, 4), 2)
    with pytest.raises(gg.ShapeError, match="max_unpool2d"):
        gg.max_unpool2d(gg.ones(1, 1, 2, 2), gg.zeros(1, 1, 2, 2, dtype="int64"), 2, output_size=(9, 9))
    with pytest.raises(gg.ShapeError, match="pixel_shuffle"):
        gg.pixel_shuffle(gg.ones(1, 3, 2, 2), 2)


def _model():
    return nn.Sequential(nn.Conv3d(2, 4, 3, padding=1), nn.ReLU(), nn.MaxPool3d(2), nn.AvgPool3d(1),
                         nn.Upsample(scale_factor=2, mode="trilinear"), nn.AdaptiveMaxPool3d((2, 2, 1)),
                         nn.Flatten(), nn.Linear(16, 3))


def test_layers_in_function_and_session_match_eager():
    model = _model()
    x = f32(2, 2, 4, 4, 4)
    eager = model(gg.tensor(x)).numpy()
    traced = gg.function(lambda t: model(t))
    np.testing.assert_allclose(traced(gg.tensor(x)).numpy(), eager, rtol=1e-5, atol=1e-6)
    graph = gg.Graph()
    with graph.as_default():
        p = gg.placeholder("float32", (None, 2, 4, 4, 4))
        out = model(p)
        grads = gg.gradients(out.sum(), [p])
    value, grad = gg.Session(graph).run([out, grads[0]], {p: x})
    np.testing.assert_allclose(value, eager, rtol=1e-5, atol=1e-6)
    xt = gg.tensor(x, requires_grad=True)
    model(xt).sum().backward()
    np.testing.assert_allclose(grad, xt.grad.numpy(), rtol=1e-4, atol=1e-6)
    pools = [nn.MaxPool1d(3, 2, return_indices=True), nn.AdaptiveMaxPool1d(3, return_indices=True)]
    x1 = f32(2, 3, 9)
    for pool in pools:
        v, i = pool(gg.tensor(x1))
        tv, ti = gg.function(lambda t: pool(t))(gg.tensor(x1))
        np.testing.assert_array_equal(tv.numpy(), v.numpy())
        np.testing.assert_array_equal(ti.numpy(), i.numpy())


ONNX_LAYERS = {
    "Conv3d": (lambda: nn.Conv3d(2, 3, (2, 3, 3), stride=(1, 2, 1), padding=1), (2, 2, 4, 5, 4)),
    "ConvTranspose3d": (lambda: nn.ConvTranspose3d(2, 3, 2, stride=2, padding=1, output_padding=1), (1, 2, 3, 3, 3)),
    "MaxPool1d": (lambda: nn.MaxPool1d(3, 2, padding=1), (2, 3, 9)),
    "MaxPool3d": (lambda: nn.MaxPool3d((2, 3, 2), (1, 2, 2), padding=1, ceil_mode=True), (2, 2, 4, 5, 6)),
    "MaxPool3d-unbatched": (lambda: nn.MaxPool3d(2), (2, 4, 4, 4)),
    "AvgPool1d": (lambda: nn.AvgPool1d(3, 2, padding=1), (2, 3, 9)),
    "AvgPool3d": (lambda: nn.AvgPool3d(3, 2, 1, count_include_pad=False), (2, 2, 5, 5, 6)),
    "AdaptiveAvgPool1d": (lambda: nn.AdaptiveAvgPool1d(4), (2, 3, 10)),
    "AdaptiveAvgPool3d": (lambda: nn.AdaptiveAvgPool3d((2, 3, 4)), (2, 2, 5, 6, 7)),
    "LPPool2d": (lambda: nn.LPPool2d(2, 2), (2, 2, 4, 6)),
    "Upsample-trilinear": (lambda: nn.Upsample(size=(3, 5, 4), mode="trilinear"), (1, 2, 2, 3, 3)),
    "Upsample-nearest-exact": (lambda: nn.Upsample(scale_factor=1.5, mode="nearest-exact"), (1, 2, 4, 4)),
    "UpsamplingBilinear2d": (lambda: nn.UpsamplingBilinear2d(scale_factor=2), (1, 2, 3, 3)),
    "Upsample-bicubic": (lambda: nn.Upsample(size=(5, 7), mode="bicubic"), (1, 2, 3, 4)),
    "PixelShuffle": (lambda: nn.PixelShuffle(2), (2, 8, 3, 3)),
    "PixelUnshuffle": (lambda: nn.PixelUnshuffle(2), (2, 2, 4, 6)),
    "PixelShuffle-5d": (lambda: nn.PixelShuffle(2), (2, 3, 8, 3, 2)),
    "PixelUnshuffle-5d": (lambda: nn.PixelUnshuffle(3), (2, 2, 3, 6, 9)),
    "ChannelShuffle": (lambda: nn.ChannelShuffle(2), (2, 6, 3, 3)),
    "ReflectionPad3d": (lambda: nn.ReflectionPad3d((1, 2, 0, 1, 1, 1)), (1, 2, 3, 4, 5)),
    "ReplicationPad2d": (lambda: nn.ReplicationPad2d(2), (1, 2, 3, 4)),
    "CircularPad1d": (lambda: nn.CircularPad1d((2, 1)), (1, 2, 5)),
    "ConstantPad3d": (lambda: nn.ConstantPad3d(1, 2.5), (1, 2, 2, 2, 2)),
    "Dropout3d-eval": (lambda: nn.Dropout3d(0.5).eval(), (1, 2, 2, 2, 2)),
    "MaxPool2d-indices": (lambda: nn.MaxPool2d(3, 2, padding=1, return_indices=True), (2, 3, 7, 6)),
    "MaxPool1d-indices-unbatched": (lambda: nn.MaxPool1d(2, dilation=2, return_indices=True), (3, 9)),
    "MaxPool3d-unpool": (lambda: _PoolUnpool(), (2, 2, 4, 5, 4)),
    "AdaptiveMaxPool2d-global": (lambda: nn.AdaptiveMaxPool2d(1), (2, 3, 5, 7)),
    "AdaptiveMaxPool3d-tiled": (lambda: nn.AdaptiveMaxPool3d((2, 1, 3), return_indices=True), (1, 2, 4, 5, 6)),
    "InstanceNorm2d": (lambda: nn.InstanceNorm2d(3, affine=True), (2, 3, 4, 5)),
    "LocalResponseNorm": (lambda: nn.LocalResponseNorm(3), (2, 5, 3, 3)),
}


class _PoolUnpool(nn.Module):
    def __init__(self):
        super().__init__()
        self.pool, self.unpool = nn.MaxPool3d(2, return_indices=True), nn.MaxUnpool3d(2)

    def forward(self, x):
        return self.unpool(*self.pool(x), output_size=x.shape)


@pytest.mark.parametrize("name", list(ONNX_LAYERS))
def test_layer_exports_to_onnx(name):
    pytest.importorskip("onnx")
    ort = pytest.importorskip("onnxruntime")
    make, shape = ONNX_LAYERS[name]
    layer = make()
    x = np.abs(f32(*shape)) if name.startswith("LPPool") else f32(*shape)
    model = gg.onnx.export(layer, None, [x])
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    got = session.run(None, {session.get_inputs()[0].name: x})
    want = layer(gg.tensor(x))
    want = list(want) if isinstance(want, tuple) else [want]
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.dtype == w.numpy().dtype and g.shape == w.shape
        np.testing.assert_allclose(g, w.numpy(), rtol=1e-4, atol=1e-5)


def test_reflect_and_circular_padding_limits_match_pytorch():
    x = gg.ones(1, 2, 3)
    with pytest.raises(gg.ShapeError, match="reflect"):
        nn.ReflectionPad1d(3)(x)
    with pytest.raises(gg.ShapeError, match="circular"):
        nn.CircularPad1d((4, 0))(x)
    assert nn.ReflectionPad1d(2)(x).shape == (1, 2, 7)
    assert nn.CircularPad1d(3)(x).shape == (1, 2, 9)
    assert nn.ReplicationPad1d(5)(x).shape == (1, 2, 13)


def test_fractional_max_pool_draws_offsets_and_routes_gradients():
    x = gg.tensor(f32(2, 3, 9, 9), requires_grad=True)
    pool = nn.FractionalMaxPool2d(2, output_ratio=0.5, return_indices=True)
    (a, ia), (b, ib) = pool(x), pool(x)
    assert a.shape == (2, 3, 4, 4) and ia.dtype == np.int64
    flat = x.numpy().reshape(2, 3, -1)
    np.testing.assert_array_equal(a.numpy(), np.take_along_axis(flat, ia.numpy().reshape(2, 3, -1), 2).reshape(a.shape))
    a.sum().backward()
    assert x.grad.numpy().sum() == a.numel()  # one unit of gradient per output, at its maximum
    graph = gg.Graph()
    with graph.as_default():
        p = gg.placeholder("float32", (None, 3, 9, 9))
        out = gg.fractional_max_pool3d(gg.reshape(p, (-1, 3, 1, 9, 9)), (1, 2, 2), output_size=(1, 5, 5))
    first, second = (gg.Session(graph).run(out, {p: x.numpy()}) for _ in range(2))
    assert first.shape == (2, 3, 1, 5, 5) and np.isin(first, x.numpy()).all()


def test_conv_layers_take_unbatched_inputs():
    x = gg.tensor(f32(2, 5, 6))
    for layer in (nn.Conv2d(2, 3, 3, padding=1, padding_mode="reflect"), nn.ConvTranspose2d(2, 3, 2, stride=2)):
        np.testing.assert_allclose(layer(x).numpy(), layer(gg.reshape(x, (1, 2, 5, 6))).numpy()[0], rtol=1e-6)
    with pytest.raises(gg.ShapeError, match="conv3d"):
        nn.Conv3d(2, 3, 2)(x)


@pytest.mark.parametrize("name, args, shape, weight_shape", [
    ("LazyConv1d", (8, 3), (2, 5, 10), (8, 5, 3)),
    ("LazyConv2d", (8, 3, 1, 1, 1, 2), (2, 4, 6, 6), (8, 2, 3, 3)),
    ("LazyConv3d", (3, 2), (1, 2, 3, 4, 4), (3, 2, 2, 2, 2)),
    ("LazyConvTranspose1d", (4, 3, 2), (2, 6, 5), (6, 4, 3)),
    ("LazyConvTranspose2d", (4, 2, 2), (1, 6, 3, 3), (6, 4, 2, 2)),
    ("LazyConvTranspose3d", (2, 2), (1, 3, 2, 2, 2), (3, 2, 2, 2, 2)),
])
def test_lazy_conv_layers_take_in_channels_from_the_first_input(name, args, shape, weight_shape):
    layer = getattr(nn, name)(*args)
    assert layer.is_lazy and layer.weight.shape == (0,)  # an empty placeholder until the first call
    x = gg.tensor(f32(*shape))
    y = layer(x)
    assert not layer.is_lazy and layer.weight.shape == weight_shape and layer.in_channels == shape[1]
    assert [n for n, _ in layer.named_parameters()] == ["weight", "bias"]
    fan_in = weight_shape[1] * int(np.prod(weight_shape[2:]))  # PyTorch's fan_in (dim 1 of the weight)
    assert np.abs(layer.bias.numpy()).max() <= 1 / np.sqrt(fan_in)
    regular = getattr(nn, name[4:])(*((shape[1],) + args))
    regular.load_state_dict(layer.state_dict())
    np.testing.assert_allclose(regular(x).numpy(), y.numpy(), rtol=1e-6)


def test_lazy_conv_in_a_graph():
    layer = nn.LazyConv2d(3, 3)
    graph = gg.Graph()
    with graph.as_default():
        p = gg.placeholder("float32", (None, 2, 5, 5))
        out = layer(p)
    assert layer.weight.shape == (3, 2, 3, 3)
    assert gg.Session(graph).run(out, {p: f32(4, 2, 5, 5)}).shape == (4, 3, 3, 3)
    with pytest.raises(gg.ShapeError, match="LazyConv2d"):
        nn.LazyConv2d(4, 3, groups=2)(gg.ones(1, 3, 4, 4))  # 3 channels into 2 groups


def test_lazy_conv_materializes_in_the_converted_dtype():
    layer = nn.LazyConv2d(3, 2, bias=False).double()
    layer(gg.tensor(f32(1, 2, 4, 4).astype(np.float64)))
    assert layer.weight.dtype == np.float64 and list(layer.state_dict()) == ["weight"]


@pytest.mark.parametrize("name, shape", [("LazyBatchNorm1d", (6, 4)), ("LazyBatchNorm2d", (3, 4, 5, 6)),
                                         ("LazyBatchNorm3d", (3, 4, 2, 3, 2)), ("LazyInstanceNorm1d", (4, 7)),
                                         ("LazyInstanceNorm2d", (3, 4, 5, 6)), ("LazyInstanceNorm3d", (2, 4, 2, 3, 2))])
def test_lazy_norm_layers_match_their_regular_forms(name, shape):
    lazy = getattr(nn, name)().double()
    assert lazy.is_lazy
    x = gg.tensor(f32(*shape).astype(np.float64))
    y = lazy(x)
    channels = shape[0] if name == "LazyInstanceNorm1d" else shape[1]  # (C, L): unbatched
    # PyTorch's lazy instance norms default to affine=True, track_running_stats=True
    regular = getattr(nn, name[4:])(channels, affine=True, track_running_stats=True).double()
    np.testing.assert_allclose(y.numpy(), regular(x).numpy(), rtol=1e-12, atol=1e-12)
    assert not lazy.is_lazy and lazy.num_features == channels
    state = lazy.state_dict()
    assert list(state) == list(regular.state_dict()) and state["running_mean"].dtype == np.float64
    for key, value in regular.state_dict().items():
        np.testing.assert_allclose(state[key].numpy(), value.numpy(), rtol=1e-12, atol=1e-12, err_msg=key)
