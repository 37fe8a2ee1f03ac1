"""Module API beyond parameters: forward/pre/backward hooks with handles, freezing, lookups by dotted
path, device/dtype helpers, and the ParameterList/ParameterDict containers."""
import numpy as np
import pytest

import graphgrad as gg
from graphgrad import nn


def test_forward_pre_and_post_hooks_rewrite_inputs_and_outputs():
    layer = nn.Linear(3, 2)
    calls = []
    pre = layer.register_forward_pre_hook(lambda m, args: (args[0] * 2,))
    post = layer.register_forward_hook(lambda m, args, out: out + 1)
    kw = layer.register_forward_hook(lambda m, args, kwargs, out: calls.append(sorted(kwargs)), with_kwargs=True)
    x = gg.ones((4, 3))
    expected = (x * 2) @ layer.weight.T + layer.bias + 1
    np.testing.assert_allclose(layer(x).numpy(), expected.numpy(), rtol=1e-6)
    assert calls == [[]]
    for handle in (pre, post, kw):
        handle.remove()
        handle.remove()  # a second remove does nothing
    np.testing.assert_allclose(layer(x).numpy(), (x @ layer.weight.T + layer.bias).numpy(), rtol=1e-6)


def test_full_backward_hook_sees_and_can_replace_the_input_gradient():
    layer = nn.Linear(3, 2)
    seen = []

    def hook(module, grad_input, grad_output):
        seen.append((grad_input[0].shape, grad_output[0].shape))
        return (grad_input[0] * 0,)

    handle = layer.register_full_backward_hook(hook)
    x = gg.ones((4, 3), requires_grad=True)
    (layer(x) ** 2).sum().backward()
    assert seen == [((4, 3), (4, 2))] and np.all(x.grad.numpy() == 0)
    assert layer.weight.grad is not None and np.any(layer.weight.grad.numpy() != 0)
    handle.remove()
    x.grad = None
    (layer(x) ** 2).sum().backward()
    assert np.any(x.grad.numpy() != 0) and len(seen) == 1


def test_module_lookups_freezing_and_conversions():
    net = nn.Sequential(nn.Linear(2, 3), nn.BatchNorm1d(3))
    assert net.get_submodule("1") is net[1] and net.get_submodule("") is net
    assert net.get_parameter("0.weight") is net[0].weight and net.get_buffer("1.running_mean").shape == (3,)
    with pytest.raises(AttributeError, match="no submodule 'x'"):
        net.get_submodule("x.y")
    net.requires_grad_(False)
    assert not any(p.requires_grad for p in net.parameters())
    net.register_module("extra", nn.ReLU())
    assert "extra" in dict(net.named_children())
    assert net.half()[0].weight.dtype == gg.float16 and net.type(gg.float64)[0].weight.dtype == gg.float64
    assert net.cpu() is net and net.share_memory() is net


def test_parameter_list_and_dict_register_their_parameters():
    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.weights = nn.ParameterList([nn.Parameter(gg.ones(2)), gg.zeros(3)])
            self.named = nn.ParameterDict({"scale": gg.ones(1)})

    model = Model()
    assert list(model.state_dict()) == ["weights.0", "weights.1", "named.scale"]
    assert len(model.weights) == 2 and isinstance(model.weights[1], nn.Parameter)
    model.weights.append(gg.ones(4))
    model.named["shift"] = gg.zeros(1)
    assert len(list(model.parameters())) == 5 and "shift" in model.named
    with pytest.raises(TypeError, match="parameter containers hold tensors"):
        model.weights.append(3.0)


def test_layers_refuse_a_float_channel_or_feature_count_as_pytorch_does():
    from graphgrad.errors import ArgumentError

    for make in (lambda: gg.nn.Conv2d(3, 24 / 4, 1), lambda: gg.nn.BatchNorm2d(4.0), lambda: gg.nn.GroupNorm(2, 4.5),
                 lambda: gg.nn.LayerNorm([4.0]), lambda: gg.nn.Conv1d(3, 6, 1, groups=0)):
        with pytest.raises(ArgumentError, match="integer"):
            make()
    assert gg.nn.Conv2d(np.int64(3), 6, 1, groups=3).in_channels == 3
