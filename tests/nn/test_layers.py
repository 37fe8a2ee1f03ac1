"""Every layer: output shape, float64 gradient check of its parameters and input, state_dict round trip
into a fresh layer, repr; plus the behaviour particular to each (train/eval, lazy Linear, padding...)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np
import pytest

import graphgrad as gg
import graphgrad.nn.functional as F
from graphgrad import nn


def functional_call(module: nn.Module, params: dict, *args):
    """Run ``module(*args)`` with some parameters replaced by the given tensors (by dotted name)."""
    saved = []
    for dotted, value in params.items():
        *path, name = dotted.split(".")
        owner = module
        for part in path:
            owner = owner._modules[part]
        saved.append((owner, name, owner._parameters[name]))
        owner._parameters[name] = value
    try:
        return module(*args)
    finally:
        for owner, name, value in saved:
            owner._parameters[name] = value


def _floats(shape, seed=0, lo=-2.0, hi=2.0):
    return np.random.default_rng(seed).uniform(lo, hi, shape)


@dataclass
class LayerCase:
    name: str
    make: Callable[[], nn.Module]
    inputs: Callable[[], list]           # arrays (float ones are differentiated)
    out_shape: tuple
    repr_has: str = ""
    grad: bool = True
    order: int = 1
    train: bool = True                   # run the checks in training mode
    grad_tol: tuple = (1e-5, 1e-3)
    extra: dict = field(default_factory=dict)


def _ints(shape, hi, seed=0):
    return np.random.default_rng(seed).integers(0, hi, shape)


CASES = [
    LayerCase("Linear", lambda: nn.Linear(5, 3), lambda: [_floats((4, 5))], (4, 3),
              "Linear(in_features=5, out_features=3, bias=True)"),
    LayerCase("Linear-nobias-3d", lambda: nn.Linear(4, 2, bias=False), lambda: [_floats((2, 3, 4))], (2, 3, 2),
              "bias=False"),
    LayerCase("Bilinear", lambda: nn.Bilinear(3, 4, 2), lambda: [_floats((5, 3)), _floats((5, 4), 1)], (5, 2),
              "in1_features=3, in2_features=4, out_features=2"),
    LayerCase("Identity", lambda: nn.Identity(7, foo=1), lambda: [_floats((2, 3))], (2, 3), "Identity()"),
    LayerCase("Flatten", lambda: nn.Flatten(), lambda: [_floats((2, 3, 2, 2))], (2, 12), "start_dim=1, end_dim=-1"),
    LayerCase("Flatten-range", lambda: nn.Flatten(0, 1), lambda: [_floats((2, 3, 4))], (6, 4), "start_dim=0"),
    LayerCase("Unflatten", lambda: nn.Unflatten(1, (2, 3)), lambda: [_floats((4, 6))], (4, 2, 3),
              "unflattened_size=(2, 3)"),
    LayerCase("Unflatten-neg", lambda: nn.Unflatten(-1, (-1, 2)), lambda: [_floats((3, 4))], (3, 2, 2)),
    LayerCase("ReLU", nn.ReLU, lambda: [_floats((3, 4))], (3, 4), "ReLU()"),
    LayerCase("ReLU6", nn.ReLU6, lambda: [_floats((3, 4), 0, -8, 8)], (3, 4)),
    LayerCase("LeakyReLU", lambda: nn.LeakyReLU(0.2), lambda: [_floats((3, 4))], (3, 4), "negative_slope=0.2"),
    LayerCase("ELU", lambda: nn.ELU(0.5), lambda: [_floats((3, 4))], (3, 4), "alpha=0.5"),
    LayerCase("SELU", nn.SELU, lambda: [_floats((3, 4))], (3, 4)),
    LayerCase("GELU", nn.GELU, lambda: [_floats((3, 4))], (3, 4), "approximate='none'", order=2),
    LayerCase("GELU-tanh", lambda: nn.GELU("tanh"), lambda: [_floats((3, 4))], (3, 4), "approximate='tanh'"),
    LayerCase("SiLU", nn.SiLU, lambda: [_floats((3, 4))], (3, 4), order=2),
    LayerCase("Mish", nn.Mish, lambda: [_floats((3, 4))], (3, 4)),
    LayerCase("Softplus", lambda: nn.Softplus(2.0, 10.0), lambda: [_floats((3, 4))], (3, 4), "beta=2.0"),
    LayerCase("Hardtanh", lambda: nn.Hardtanh(-0.5, 0.5), lambda: [_floats((3, 4))], (3, 4), "min_val=-0.5"),
    LayerCase("Sigmoid", nn.Sigmoid, lambda: [_floats((3, 4))], (3, 4), order=2),
    LayerCase("Tanh", nn.Tanh, lambda: [_floats((3, 4))], (3, 4), order=2),
    LayerCase("Softmax", lambda: nn.Softmax(dim=1), lambda: [_floats((3, 4, 2))], (3, 4, 2), "dim=1", order=2),
    LayerCase("LogSoftmax", lambda: nn.LogSoftmax(dim=-1), lambda: [_floats((3, 4))], (3, 4), "dim=-1"),
    LayerCase("Conv1d", lambda: nn.Conv1d(2, 3, 3, stride=2, padding=1), lambda: [_floats((2, 2, 7))], (2, 3, 4),
              "Conv1d(2, 3, kernel_size=(3,), stride=(2,), padding=(1,))"),
    LayerCase("Conv1d-same", lambda: nn.Conv1d(2, 4, 4, padding="same", groups=2), lambda: [_floats((1, 2, 6))],
              (1, 4, 6), "padding='same'"),
    LayerCase("Conv2d", lambda: nn.Conv2d(3, 4, 3, padding=1), lambda: [_floats((2, 3, 5, 5))], (2, 4, 5, 5),
              "Conv2d(3, 4, kernel_size=(3, 3), stride=(1, 1), padding=(1, 1))"),
    LayerCase("Conv2d-groups-dilation", lambda: nn.Conv2d(4, 2, 2, dilation=2, groups=2, bias=False),
              lambda: [_floats((1, 4, 5, 5))], (1, 2, 3, 3), "dilation=(2, 2), groups=2, bias=False"),
    LayerCase("Conv2d-valid-stride", lambda: nn.Conv2d(1, 2, (2, 3), stride=(2, 1), padding="valid"),
              lambda: [_floats((2, 1, 5, 5))], (2, 2, 2, 3), "padding='valid'"),
    LayerCase("Conv2d-reflect", lambda: nn.Conv2d(2, 2, 3, padding=1, padding_mode="reflect"),
              lambda: [_floats((1, 2, 4, 4))], (1, 2, 4, 4), "padding_mode='reflect'"),
    LayerCase("Conv2d-circular-same", lambda: nn.Conv2d(1, 2, 3, padding="same", padding_mode="circular"),
              lambda: [_floats((1, 1, 4, 4))], (1, 2, 4, 4), "padding_mode='circular'"),
    LayerCase("ConvTranspose1d", lambda: nn.ConvTranspose1d(2, 3, 3, stride=2), lambda: [_floats((2, 2, 4))],
              (2, 3, 9), "ConvTranspose1d(2, 3"),
    LayerCase("ConvTranspose2d", lambda: nn.ConvTranspose2d(3, 2, 3, stride=2, padding=1, output_padding=1),
              lambda: [_floats((2, 3, 3, 3))], (2, 2, 6, 6), "output_padding=(1, 1)"),
    LayerCase("ConvTranspose2d-groups", lambda: nn.ConvTranspose2d(4, 6, 2, groups=2, dilation=2),
              lambda: [_floats((1, 4, 3, 3))], (1, 6, 5, 5), "groups=2"),
    LayerCase("MaxPool2d", lambda: nn.MaxPool2d(2), lambda: [_floats((2, 3, 4, 4))], (2, 3, 2, 2),
              "kernel_size=2, stride=2"),
    LayerCase("MaxPool2d-pad-stride", lambda: nn.MaxPool2d(3, stride=2, padding=1, ceil_mode=True),
              lambda: [_floats((1, 2, 6, 6))], (1, 2, 4, 4), "ceil_mode=True"),
    LayerCase("AvgPool2d", lambda: nn.AvgPool2d(2, padding=1, count_include_pad=False),
              lambda: [_floats((2, 2, 4, 4))], (2, 2, 3, 3), "kernel_size=2"),
    LayerCase("AdaptiveAvgPool2d", lambda: nn.AdaptiveAvgPool2d((2, 3)), lambda: [_floats((2, 3, 5, 7))],
              (2, 3, 2, 3), "output_size=(2, 3)"),
    LayerCase("BatchNorm1d", lambda: nn.BatchNorm1d(3), lambda: [_floats((5, 3))], (5, 3),
              "BatchNorm1d(3, eps=1e-05, momentum=0.1, affine=True, bias=True, track_running_stats=True)"),
    LayerCase("BatchNorm1d-3d", lambda: nn.BatchNorm1d(2), lambda: [_floats((3, 2, 4))], (3, 2, 4)),
    LayerCase("BatchNorm1d-eval", lambda: nn.BatchNorm1d(2), lambda: [_floats((3, 2, 4))], (3, 2, 4), train=False),
    LayerCase("BatchNorm2d", lambda: nn.BatchNorm2d(2, momentum=0.2), lambda: [_floats((3, 2, 2, 2))],
              (3, 2, 2, 2), "momentum=0.2"),
    LayerCase("BatchNorm2d-eval", lambda: nn.BatchNorm2d(2), lambda: [_floats((3, 2, 2, 2))], (3, 2, 2, 2),
              train=False),
    LayerCase("LayerNorm", lambda: nn.LayerNorm(4), lambda: [_floats((2, 3, 4))], (2, 3, 4),
              "LayerNorm((4,), eps=1e-05, elementwise_affine=True, bias=True)"),
    LayerCase("LayerNorm-2d-nobias", lambda: nn.LayerNorm((3, 4), bias=False), lambda: [_floats((2, 3, 4))],
              (2, 3, 4)),
    LayerCase("LayerNorm-noaffine", lambda: nn.LayerNorm(4, elementwise_affine=False), lambda: [_floats((2, 4))],
              (2, 4), "elementwise_affine=False"),
    LayerCase("GroupNorm", lambda: nn.GroupNorm(2, 4), lambda: [_floats((2, 4, 3))], (2, 4, 3),
              "GroupNorm(2, 4, eps=1e-05, affine=True, bias=True)"),
    LayerCase("Dropout-eval", lambda: nn.Dropout(0.3), lambda: [_floats((4, 5))], (4, 5), "p=0.3", train=False),
    LayerCase("Dropout-train", lambda: nn.Dropout(0.3, generator=gg.Generator(3)), lambda: [_floats((4, 5))], (4, 5),
              "p=0.3"),
    LayerCase("Embedding", lambda: nn.Embedding(6, 3), lambda: [_ints((2, 4), 6)], (2, 4, 3), "Embedding(6, 3)"),
    LayerCase("Embedding-padding", lambda: nn.Embedding(6, 3, padding_idx=-1), lambda: [_ints((5,), 6)], (5, 3),
              "padding_idx=5", grad=False),  # the padding row gets no gradient by design (tested below)
]
IDS = [c.name for c in CASES]


def _build(case: LayerCase) -> nn.Module:
    gg.manual_seed(0)
    layer = case.make().double()
    if not case.train:
        layer.eval()
    # norm layers start at weight 1 / bias 0: randomize so the checks see them used
    rng = np.random.default_rng(1)
    for name, p in layer.named_parameters():
        if "Norm" in type(layer).__name__:
            p.data[...] = rng.uniform(0.5, 1.5, p.shape)
    for name, b in layer.named_buffers():
        if name == "running_var":
            b.data[...] = rng.uniform(0.5, 1.5, b.shape)
        elif name == "running_mean":
            b.data[...] = rng.uniform(-0.5, 0.5, b.shape)
    return layer


def _call(layer, inputs):
    """Call a layer; a fresh generator for Dropout so every call draws the same mask."""
    if isinstance(layer, nn.Dropout) and layer.generator is not None:
        layer.generator.manual_seed(3)
    return layer(*inputs)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_output_shape_and_dtype(case):
    layer = _build(case)
    y = _call(layer, [gg.tensor(a) for a in case.inputs()])
    assert y.shape == case.out_shape
    assert y.dtype == gg.float64


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_float32_by_default(case):
    gg.manual_seed(0)
    layer = case.make()
    for p in layer.parameters():
        assert p.dtype == gg.float32 and p.requires_grad
    inputs = [gg.tensor(a.astype(np.float32) if a.dtype.kind == "f" else a) for a in case.inputs()]
    assert _call(layer, inputs).dtype == gg.float32


@pytest.mark.parametrize("case", [c for c in CASES if c.grad], ids=[c.name for c in CASES if c.grad])
def test_gradients_of_parameters_and_input(case):
    layer = _build(case)
    names = [n for n, _ in layer.named_parameters()]
    params = [p.data for _, p in layer.named_parameters()]
    inputs = case.inputs()
    n_in = len(inputs)
    # the running statistics must not change between the finite-difference evaluations
    frozen = {n: b.data.copy() for n, b in layer.named_buffers()}

    def fn(*xs):
        for n, b in layer.named_buffers():
            b.data[...] = frozen[n]
        return functional_call(layer, dict(zip(names, xs[n_in:])), *xs[:n_in])

    args = [gg.tensor(a) for a in inputs] + [gg.tensor(p) for p in params]
    wrt = [i for i, a in enumerate(args) if a.dtype.kind == "f"]
    if isinstance(layer, nn.Dropout) and layer.generator is not None:
        gen = layer.generator

        def fn_dropout(*xs, _fn=fn):
            gen.manual_seed(3)
            return _fn(*xs)

        gg.check_grad(fn_dropout, *args, wrt=wrt, atol=case.grad_tol[0], rtol=case.grad_tol[1])
    else:
        gg.check_grad(fn, *args, wrt=wrt, order=case.order, atol=case.grad_tol[0], rtol=case.grad_tol[1])


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_eager_backward_fills_parameter_grads(case):
    layer = _build(case)
    inputs = [gg.tensor(a, requires_grad=a.dtype.kind == "f") for a in case.inputs()]
    _call(layer, inputs).sum().backward()
    for name, p in layer.named_parameters():
        assert p.grad is not None and p.grad.shape == p.shape, name


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_state_dict_round_trip(case):
    layer = _build(case)
    inputs = case.inputs()
    layer.eval()
    gg.manual_seed(123)  # a fresh layer with different weights
    fresh = case.make().double().eval()
    fresh.load_state_dict(layer.state_dict())
    assert list(fresh.state_dict()) == list(layer.state_dict())
    with gg.no_grad():
        a = _call(layer, [gg.tensor(x) for x in inputs]).numpy()
        b = _call(fresh, [gg.tensor(x) for x in inputs]).numpy()
    np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_repr(case):
    text = repr(case.make())
    assert text.startswith(type(case.make()).__name__ + "(")
    assert case.repr_has in text


def test_parameter_names_and_shapes_follow_pytorch():
    expect = {
        nn.Linear(5, 3): {"weight": (3, 5), "bias": (3,)},
        nn.Bilinear(2, 3, 4): {"weight": (4, 2, 3), "bias": (4,)},
        nn.Conv1d(4, 6, 3, groups=2): {"weight": (6, 2, 3), "bias": (6,)},
        nn.Conv2d(4, 6, (2, 3), groups=2): {"weight": (6, 2, 2, 3), "bias": (6,)},
        nn.ConvTranspose2d(4, 6, 3, groups=2): {"weight": (4, 3, 3, 3), "bias": (6,)},
        nn.BatchNorm2d(3): {"weight": (3,), "bias": (3,), "running_mean": (3,), "running_var": (3,),
                            "num_batches_tracked": ()},
        nn.LayerNorm((2, 3)): {"weight": (2, 3), "bias": (2, 3)},
        nn.GroupNorm(2, 4): {"weight": (4,), "bias": (4,)},
        nn.Embedding(7, 2): {"weight": (7, 2)},
    }
    for layer, shapes in expect.items():
        state = layer.state_dict()
        assert {k: tuple(v.shape) for k, v in state.items()} == shapes, layer


def test_default_initialization_bounds():
    gg.manual_seed(0)
    fc = nn.Linear(400, 300)
    bound = 1 / np.sqrt(400)
    for p in (fc.weight, fc.bias):
        v = p.numpy()
        assert np.abs(v).max() <= bound and np.abs(v).max() > 0.9 * bound
    conv = nn.Conv2d(8, 16, 3, groups=2)
    bound = 1 / np.sqrt(4 * 9)
    assert np.abs(conv.weight.numpy()).max() <= bound and np.abs(conv.bias.numpy()).max() <= bound
    emb = nn.Embedding(1000, 50, padding_idx=3)
    assert abs(emb.weight.numpy().std() - 1) < 0.05 and not emb.weight.numpy()[3].any()
    bn = nn.BatchNorm1d(4)
    assert (bn.weight.numpy() == 1).all() and (bn.bias.numpy() == 0).all()
    assert (bn.running_var.numpy() == 1).all() and bn.num_batches_tracked.item() == 0


def test_generator_makes_initialization_reproducible():
    a = nn.Linear(4, 3, generator=gg.Generator(5))
    b = nn.Linear(4, 3, generator=gg.Generator(5))
    np.testing.assert_array_equal(a.weight.numpy(), b.weight.numpy())
    gg.manual_seed(9)
    c = nn.Conv2d(2, 2, 3)
    gg.manual_seed(9)
    d = nn.Conv2d(2, 2, 3)
    np.testing.assert_array_equal(c.weight.numpy(), d.weight.numpy())
    a.reset_parameters()
    assert not np.array_equal(a.weight.numpy(), b.weight.numpy())


# ---- Linear, lazy ---------------------------------------------------------------------------------
def test_lazy_linear_creates_weight_on_first_call():
    fc = nn.Linear(None, 3)
    assert fc.is_lazy and list(fc.parameters()) == []
    assert "in_features=None" in repr(fc)
    y = fc(gg.randn(2, 7))
    assert y.shape == (2, 3) and not fc.is_lazy
    assert fc.weight.shape == (3, 7) and fc.bias.shape == (3,)
    assert [n for n, _ in fc.named_parameters()] == ["weight", "bias"]
    assert "in_features=7" in repr(fc)
    # the optimizer is made after the first call: it then sees the parameters
    opt_params = list(fc.parameters())
    assert len(opt_params) == 2
    # later calls reuse the weight; a wrong size is an error
    w = fc.weight
    fc(gg.randn(5, 7))
    assert fc.weight is w
    with pytest.raises(gg.ShapeError):
        fc(gg.randn(2, 6))


def test_lazy_linear_in_sequential_and_state_dict():
    model = nn.Sequential(nn.Flatten(), nn.Linear(None, 4), nn.ReLU(), nn.Linear(None, 2))
    model(gg.randn(3, 2, 5))
    assert model[1].weight.shape == (4, 10) and model[3].weight.shape == (2, 4)
    other = nn.Sequential(nn.Flatten(), nn.Linear(10, 4), nn.ReLU(), nn.Linear(4, 2))
    other.load_state_dict(model.state_dict())
    x = gg.randn(3, 2, 5)
    np.testing.assert_array_equal(model(x).numpy(), other(x).numpy())


def test_lazy_linear_needs_known_last_dimension():
    with gg.Graph().as_default():
        x = gg.placeholder(gg.float32, None)
        with pytest.raises(gg.ShapeError, match="lazy"):
            nn.Linear(None, 2)(x)


def test_linear_shape_error_is_actionable():
    with pytest.raises(gg.ShapeError, match="in_features = 5"):
        nn.Linear(5, 2)(gg.randn(3, 4))


def test_functional_linear_matches_numpy():
    x, w, b = np.random.randn(3, 4), np.random.randn(2, 4), np.random.randn(2)
    np.testing.assert_allclose(F.linear(gg.tensor(x), gg.tensor(w), gg.tensor(b)).numpy(), x @ w.T + b)
    np.testing.assert_allclose(F.linear(gg.tensor(x), gg.tensor(w)).numpy(), x @ w.T)


def test_bilinear_matches_numpy():
    layer = nn.Bilinear(3, 4, 2).double()
    x1, x2 = np.random.randn(5, 3), np.random.randn(5, 4)
    w, b = layer.weight.numpy(), layer.bias.numpy()
    expect = np.einsum("bi,oij,bj->bo", x1, w, x2) + b
    np.testing.assert_allclose(layer(gg.tensor(x1), gg.tensor(x2)).numpy(), expect)


def test_unflatten_errors():
    with pytest.raises(gg.ShapeError, match="multiply"):
        nn.Unflatten(1, (2, 2))(gg.randn(3, 5))


# ---- activations against references --------------------------------------------------------------------
def test_activation_values():
    x = np.linspace(-3, 3, 13)
    t = gg.tensor(x)
    checks = {
        nn.ReLU(): np.maximum(x, 0), nn.ReLU6(): np.clip(x, 0, 6), nn.LeakyReLU(0.1): np.where(x > 0, x, 0.1 * x),
        nn.ELU(): np.where(x > 0, x, np.expm1(x)), nn.Sigmoid(): 1 / (1 + np.exp(-x)), nn.Tanh(): np.tanh(x),
        nn.SiLU(): x / (1 + np.exp(-x)), nn.Softplus(): np.log1p(np.exp(x)), nn.Hardtanh(): np.clip(x, -1, 1),
        nn.Mish(): x * np.tanh(np.log1p(np.exp(x))),
    }
    for layer, expect in checks.items():
        np.testing.assert_allclose(layer(t).numpy(), expect, rtol=1e-12, atol=1e-12, err_msg=repr(layer))
    sm = nn.Softmax(dim=0)(t).numpy()
    np.testing.assert_allclose(sm, np.exp(x) / np.exp(x).sum())
    np.testing.assert_allclose(nn.LogSoftmax(0)(t).numpy(), np.log(sm))


def test_gelu_rejects_unknown_approximation():
    with pytest.raises(ValueError):
        nn.GELU("fast")


# ---- convolutions -------------------------------------------------------------------------------------
@pytest.mark.parametrize("mode,np_mode", [("reflect", "reflect"), ("replicate", "edge"), ("circular", "wrap")])
def test_conv_padding_modes_pad_then_convolve(mode, np_mode):
    conv = nn.Conv2d(2, 3, 3, padding=(1, 2), padding_mode=mode).double()
    x = np.random.randn(2, 2, 5, 6)
    padded = np.pad(x, ((0, 0), (0, 0), (1, 1), (2, 2)), mode=np_mode)
    expect = gg.conv2d(gg.tensor(padded), conv.weight, conv.bias).numpy()
    np.testing.assert_allclose(conv(gg.tensor(x)).numpy(), expect, rtol=1e-12)


def test_conv_same_padding_keeps_size():
    for k, d in [(3, 1), (4, 1), (3, 2), (2, 3)]:
        for mode in ("zeros", "reflect"):
            conv = nn.Conv2d(1, 1, k, padding="same", dilation=d, padding_mode=mode)
            assert conv(gg.randn(1, 1, 9, 8)).shape == (1, 1, 9, 8)


def test_conv_argument_errors():
    with pytest.raises(ValueError, match="divisible"):
        nn.Conv2d(3, 4, 3, groups=2)
    with pytest.raises(ValueError, match="padding_mode"):
        nn.Conv2d(1, 1, 3, padding_mode="mirror")
    with pytest.raises(ValueError, match="strided"):
        nn.Conv2d(1, 1, 3, stride=2, padding="same")
    with pytest.raises(ValueError, match="padding_mode"):
        nn.ConvTranspose2d(1, 1, 3, padding_mode="reflect")


def test_conv_transpose_output_size():
    up = nn.ConvTranspose2d(4, 2, 3, stride=2, padding=1)
    x = gg.randn(1, 4, 5, 5)
    assert up(x).shape == (1, 2, 9, 9)
    assert up(x, output_size=(10, 10)).shape == (1, 2, 10, 10)
    assert up(x, output_size=(1, 2, 10, 9)).shape == (1, 2, 10, 9)
    with pytest.raises(gg.ShapeError, match="not reachable"):
        up(x, output_size=(12, 12))


def test_conv_transpose_inverts_conv_shape():
    down = nn.Conv2d(3, 5, 3, stride=2, padding=1)
    up = nn.ConvTranspose2d(5, 3, 3, stride=2, padding=1)
    x = gg.randn(2, 3, 8, 8)
    h = down(x)
    assert up(h, output_size=x.shape[2:]).shape == x.shape


def test_max_pool_return_indices():
    pool = nn.MaxPool2d(2, return_indices=True)
    y, idx = pool(gg.tensor(np.arange(16.0).reshape(1, 1, 4, 4)))
    np.testing.assert_array_equal(y.numpy().ravel(), [5, 7, 13, 15])
    np.testing.assert_array_equal(idx.numpy().ravel(), [5, 7, 13, 15])


# ---- batch norm: train/eval, running statistics ------------------------------------------------------------
def test_batch_norm_train_updates_running_stats_eval_uses_them():
    bn = nn.BatchNorm1d(3, momentum=0.1).double()
    x = np.random.default_rng(0).normal(2.0, 3.0, (50, 3))
    y = bn(gg.tensor(x)).numpy()
    np.testing.assert_allclose(y.mean(0), 0, atol=1e-12)
    np.testing.assert_allclose(y.var(0), 1, atol=1e-4)
    np.testing.assert_allclose(bn.running_mean.numpy(), 0.1 * x.mean(0))
    np.testing.assert_allclose(bn.running_var.numpy(), 0.9 + 0.1 * x.var(0, ddof=1))
    assert bn.num_batches_tracked.item() == 1
    bn.eval()
    rm, rv = bn.running_mean.numpy().copy(), bn.running_var.numpy().copy()
    y_eval = bn(gg.tensor(x)).numpy()
    np.testing.assert_allclose(y_eval, (x - rm) / np.sqrt(rv + 1e-5))
    np.testing.assert_array_equal(bn.running_mean.numpy(), rm)  # eval does not update
    assert bn.num_batches_tracked.item() == 1


def test_batch_norm_cumulative_average_with_momentum_none():
    bn = nn.BatchNorm2d(2, momentum=None).double()
    rng = np.random.default_rng(1)
    batches = [rng.normal(size=(3, 2, 2, 2)) for _ in range(3)]
    for b in batches:
        bn(gg.tensor(b))
    means = [b.mean(axis=(0, 2, 3)) for b in batches]
    np.testing.assert_allclose(bn.running_mean.numpy(), np.mean(means, axis=0))
    assert bn.num_batches_tracked.item() == 3


def test_batch_norm_without_running_stats_always_uses_batch_stats():
    bn = nn.BatchNorm1d(2, track_running_stats=False).double()
    assert bn.running_mean is None and "running_mean" not in bn.state_dict()
    x = np.random.randn(6, 2) * 4 + 1
    bn.eval()
    np.testing.assert_allclose(bn(gg.tensor(x)).numpy(), (x - x.mean(0)) / np.sqrt(x.var(0) + 1e-5))


def test_batch_norm_rank_and_channel_errors():
    with pytest.raises(gg.ShapeError, match="2-D or 3-D"):
        nn.BatchNorm1d(3)(gg.randn(2, 3, 4, 4))
    with pytest.raises(gg.ShapeError, match="4-D"):
        nn.BatchNorm2d(3)(gg.randn(2, 3))
    with pytest.raises(gg.ShapeError, match="channels"):
        nn.BatchNorm2d(3)(gg.randn(2, 4, 2, 2))


def test_batch_norm_reset_running_stats():
    bn = nn.BatchNorm1d(2)
    bn(gg.randn(4, 2) + 3)
    bn.reset_running_stats()
    assert (bn.running_mean.numpy() == 0).all() and (bn.running_var.numpy() == 1).all()
    assert bn.num_batches_tracked.item() == 0


def test_group_norm_checks_divisibility():
    with pytest.raises(ValueError, match="divisible"):
        nn.GroupNorm(3, 4)


# ---- dropout ---------------------------------------------------------------------------------------------
def test_dropout_train_and_eval():
    drop = nn.Dropout(0.25, generator=gg.Generator(0))
    x = gg.ones(200, 100)
    y = drop(x).numpy()
    kept = y != 0
    assert abs(kept.mean() - 0.75) < 0.02
    np.testing.assert_allclose(y[kept], 1 / 0.75)
    drop.eval()
    assert drop(x) is x
    drop.train()
    assert not np.array_equal(drop(x).numpy(), y)  # a new mask per call


def test_dropout_generator_reproducible_and_p_checked():
    a = nn.Dropout(0.5, generator=gg.Generator(4))(gg.ones(10, 10)).numpy()
    b = nn.Dropout(0.5, generator=gg.Generator(4))(gg.ones(10, 10)).numpy()
    np.testing.assert_array_equal(a, b)
    gg.manual_seed(1)
    c = nn.Dropout(0.5)(gg.ones(10, 10)).numpy()
    gg.manual_seed(1)
    np.testing.assert_array_equal(nn.Dropout(0.5)(gg.ones(10, 10)).numpy(), c)
    with pytest.raises(ValueError):
        nn.Dropout(1.5)
    assert (nn.Dropout(1.0)(gg.ones(3)).numpy() == 0).all()


# ---- embedding ------------------------------------------------------------------------------------------
def test_embedding_padding_row_gets_no_gradient():
    emb = nn.Embedding(5, 3, padding_idx=0)
    idx = gg.tensor([[0, 1, 1], [4, 0, 2]])
    emb(idx).sum().backward()
    g = emb.weight.grad.numpy()
    np.testing.assert_array_equal(g[0], 0)
    np.testing.assert_array_equal(g[1], 2)
    np.testing.assert_array_equal(g[3], 0)


def test_embedding_from_pretrained():
    table = np.arange(6.0).reshape(3, 2)
    emb = nn.Embedding.from_pretrained(gg.tensor(table))
    assert not emb.weight.requires_grad and list(emb.parameters()) == [emb.weight]
    np.testing.assert_array_equal(emb(gg.tensor([2, 0])).numpy(), table[[2, 0]])
    table[0, 0] = 100.0  # a copy
    assert emb.weight.numpy()[0, 0] == 0
    trainable = nn.Embedding.from_pretrained(table, freeze=False, padding_idx=1)
    assert trainable.weight.requires_grad and trainable.padding_idx == 1


# PyTorch 2.13's results for the table below, indices [[0, 2, 2], [3, 0, 2]] and an upstream gradient
# arange(12).reshape(2, 3, 2): the table after the lookup, and its gradient
EMBEDDING_OPTIONS = [
    ({"max_norm": 2.0}, [[1.2, 1.6], [0.3, 0.4], [0.894427, -1.788854], [1.2, 1.6]],
     [[8.0, 10.0], [0.0, 0.0], [16.0, 19.0], [6.0, 7.0]]),
    ({"max_norm": 2.0, "norm_type": 1.0}, [[0.857143, 1.142857], [0.3, 0.4], [0.666667, -1.333333],
                                           [0.857143, 1.142857]], [[8.0, 10.0], [0.0, 0.0], [16.0, 19.0], [6.0, 7.0]]),
    ({"scale_grad_by_freq": True}, [[3.0, 4.0], [0.3, 0.4], [1.0, -2.0], [6.0, 8.0]],
     [[4.0, 5.0], [0.0, 0.0], [5.333333, 6.333333], [6.0, 7.0]]),
]


@pytest.mark.parametrize("options,table_after,grad", EMBEDDING_OPTIONS)
@pytest.mark.parametrize("form", ["functional", "module"])
def test_embedding_max_norm_and_scale_grad_by_freq(options, table_after, grad, form):
    table = gg.tensor([[3.0, 4.0], [0.3, 0.4], [1.0, -2.0], [6.0, 8.0]], dtype="float64", requires_grad=True)
    idx = gg.tensor([[0, 2, 2], [3, 0, 2]])
    if form == "functional":
        out = F.embedding(idx, table, **options)
        weight = table
    else:
        emb = nn.Embedding(4, 2, _weight=table.detach(), sparse=True, **options)
        out, weight = emb(idx), emb.weight
    (out * gg.arange(12.0, dtype="float64").reshape(2, 3, 2)).sum().backward()
    np.testing.assert_allclose(weight.detach().numpy(), table_after, atol=1e-6)
    np.testing.assert_allclose(weight.grad.numpy(), grad, atol=1e-6)
    np.testing.assert_allclose(out.detach().numpy(), np.asarray(table_after)[idx.numpy()], atol=1e-6)


# ---- loss modules -----------------------------------------------------------------------------------------
LOGITS = np.random.default_rng(0).normal(size=(4, 3))
LABELS = np.array([0, 2, 1, 2])
PRED = np.random.default_rng(1).uniform(0.1, 0.9, (4, 3))
TARGET = np.random.default_rng(2).uniform(0, 1, (4, 3))
SIGNS = np.where(np.random.default_rng(3).random((4, 3)) > 0.5, 1.0, -1.0)
W = np.array([0.5, 1.0, 2.0])

LOSS_CASES = [
    (nn.MSELoss(), F.mse_loss, PRED, TARGET, {}),
    (nn.MSELoss(reduction="sum"), F.mse_loss, PRED, TARGET, {"reduction": "sum"}),
    (nn.L1Loss(reduction="none"), F.l1_loss, PRED, TARGET, {"reduction": "none"}),
    (nn.HuberLoss(delta=0.3), F.huber_loss, PRED, TARGET, {"delta": 0.3}),
    (nn.SmoothL1Loss(beta=0.3), F.smooth_l1_loss, PRED, TARGET, {"beta": 0.3}),
    (nn.CrossEntropyLoss(), F.cross_entropy, LOGITS, LABELS, {}),
    (nn.CrossEntropyLoss(weight=gg.tensor(W), label_smoothing=0.1, ignore_index=1), F.cross_entropy, LOGITS, LABELS,
     {"weight": gg.tensor(W), "label_smoothing": 0.1, "ignore_index": 1}),
    (nn.NLLLoss(weight=W, reduction="sum"), F.nll_loss, LOGITS, LABELS, {"weight": W, "reduction": "sum"}),
    (nn.BCELoss(), F.binary_cross_entropy, PRED, TARGET, {}),
    (nn.BCEWithLogitsLoss(pos_weight=W), F.binary_cross_entropy_with_logits, LOGITS, TARGET, {"pos_weight": W}),
    (nn.HingeEmbeddingLoss(margin=0.5), F.hinge_embedding_loss, LOGITS, SIGNS, {"margin": 0.5}),
    (nn.MultiMarginLoss(p=2, margin=0.5, weight=W), F.multi_margin_loss, LOGITS, LABELS,
     {"p": 2, "margin": 0.5, "weight": W}),
    (nn.KLDivLoss(reduction="batchmean"), F.kl_div, np.log(PRED), TARGET, {"reduction": "batchmean"}),
    (nn.KLDivLoss(log_target=True, reduction="sum"), F.kl_div, np.log(PRED), np.log(TARGET),
     {"log_target": True, "reduction": "sum"}),
]


@pytest.mark.parametrize("case", LOSS_CASES, ids=[f"{type(c[0]).__name__}-{i}" for i, c in enumerate(LOSS_CASES)])
def test_loss_modules_match_functional(case):
    module, fn, x, t, kwargs = case
    expect = fn(gg.tensor(x), gg.tensor(t), **kwargs).numpy()
    np.testing.assert_allclose(module(gg.tensor(x), gg.tensor(t)).numpy(), expect, rtol=1e-12)
    assert repr(module).startswith(type(module).__name__ + "(")
    xs = gg.tensor(x)
    gg.check_grad(lambda a: module(a, gg.tensor(t)), xs)


def test_loss_weight_is_a_buffer():
    loss = nn.CrossEntropyLoss(weight=gg.tensor(W))
    assert list(loss.state_dict()) == ["weight"]
    assert list(nn.CrossEntropyLoss().state_dict()) == []
    assert list(nn.BCEWithLogitsLoss(pos_weight=W).state_dict()) == ["pos_weight"]
    loss.double()
    assert loss.weight.dtype == gg.float64


def test_loss_reduction_checked():
    with pytest.raises(ValueError):
        nn.MSELoss(reduction="batchmean")
    assert nn.KLDivLoss(reduction="batchmean").reduction == "batchmean"
    assert "reduction='sum'" in repr(nn.L1Loss(reduction="sum"))


def test_kl_div_mean_vs_batchmean():
    logp, q = np.log(PRED), TARGET
    pointwise = q * (np.log(q) - logp)
    mean = nn.KLDivLoss()(gg.tensor(logp), gg.tensor(q)).item()
    batchmean = nn.KLDivLoss(reduction="batchmean")(gg.tensor(logp), gg.tensor(q)).item()
    np.testing.assert_allclose(mean, pointwise.mean())
    np.testing.assert_allclose(batchmean, pointwise.sum() / 4)


# ---- regularizers -----------------------------------------------------------------------------------------------
def test_penalties():
    model = nn.Sequential(nn.Linear(3, 2), nn.Linear(2, 1, bias=False)).double()
    ws = [p.numpy() for p in model.parameters()]
    np.testing.assert_allclose(nn.l1_penalty(model).item(), sum(np.abs(w).sum() for w in ws))
    np.testing.assert_allclose(nn.l2_penalty(model.parameters()).item(), sum((w ** 2).sum() for w in ws))
    nn.l2_penalty(model).backward()
    np.testing.assert_allclose(model[0].weight.grad.numpy(), 2 * ws[0])
    assert nn.l1_penalty([]).item() == 0
    np.testing.assert_allclose(nn.l1_penalty(gg.tensor([-1.0, 2.0])).item(), 3.0)


# ---- functional API ---------------------------------------------------------------------------------------------
def test_functional_reexports_and_torch_names():
    def same(a, b):  # gg's exported functions wrap the op functions to take name=
        return getattr(a, "__wrapped__", a) is getattr(b, "__wrapped__", b)

    assert same(F.relu, gg.relu) and same(F.conv2d, gg.conv2d) and same(F.cross_entropy, gg.cross_entropy)
    x = gg.randn(2, 3)
    np.testing.assert_allclose(F.softmax(x, dim=0).numpy(), gg.softmax(x, axis=0).numpy())
    np.testing.assert_allclose(F.log_softmax(x, dim=1).numpy(), gg.log_softmax(x, axis=1).numpy())
    assert F.dropout(x, 0.5, training=False) is x
    np.testing.assert_allclose(F.relu6(gg.tensor([-1.0, 3.0, 9.0])).numpy(), [0, 3, 6])
    for name in F.__all__:
        assert callable(getattr(F, name)), name


def test_functional_pad_uses_torch_order():
    x = np.arange(6.0).reshape(1, 2, 3)
    y = F.pad(gg.tensor(x), (1, 2)).numpy()
    np.testing.assert_array_equal(y, np.pad(x, ((0, 0), (0, 0), (1, 2))))
    y = F.pad(gg.tensor(x), (0, 1, 1, 0), mode="replicate").numpy()
    np.testing.assert_array_equal(y, np.pad(x, ((0, 0), (1, 0), (0, 1)), mode="edge"))
    with pytest.raises(gg.ShapeError):
        F.pad(gg.tensor(x), (1,))


def test_functional_normalize():
    x = np.random.randn(3, 4)
    np.testing.assert_allclose(F.normalize(gg.tensor(x)).numpy(), x / np.linalg.norm(x, axis=1, keepdims=True))


def test_adaptive_log_softmax_with_loss_matches_pytorch():
    """PyTorch 2.13's output, loss, input gradient, log_prob and predict, for weights sin(0.7 k + i)."""
    asm = nn.AdaptiveLogSoftmaxWithLoss(4, 7, [2, 4], div_value=2.0).double()
    shapes = {"head.weight": (4, 4), "tail.0.0.weight": (2, 4), "tail.0.1.weight": (2, 2), "tail.1.0.weight": (1, 4),
              "tail.1.1.weight": (3, 1)}
    assert {k: tuple(v.shape) for k, v in asm.state_dict().items()} == shapes
    asm.load_state_dict({k: gg.tensor(np.sin(np.arange(np.prod(s)) * 0.7 + i).reshape(s))
                         for i, (k, s) in enumerate(shapes.items())})
    x = gg.tensor(np.cos(np.arange(20.0)).reshape(5, 4), requires_grad=True)
    out = asm(x, gg.tensor([0, 3, 6, 2, 5]))
    out.loss.backward()
    np.testing.assert_allclose(out.output.detach().numpy(), [-3.4598352586528667, -1.0961290979546412,
                               -2.6297165385491277, -3.804444110994159, -5.337188182392999], rtol=1e-12)
    assert abs(float(out.loss) - 3.265462637708759) < 1e-12
    np.testing.assert_allclose(x.grad.numpy()[0], [0.1260444108, -0.110012257, -0.2943284413, -0.3402173606], atol=1e-9)
    np.testing.assert_allclose(asm.log_prob(x).detach().numpy()[0], [
        -3.4598352586528667, -1.062461598219915, -4.811133338649568, -5.539003326334531, -1.4987619892098583,
        -1.7825821640676769, -1.5173960844178591], rtol=1e-12)
    assert asm.predict(x).tolist() == [1, 0, 1, 1, 3]
