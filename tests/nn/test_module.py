"""Module: registration, parameter/buffer walks, state_dict, modes, dtype conversion, and modules built
into static graphs through placeholders."""
from __future__ import annotations

import numpy as np
import pytest

import graphgrad as gg
from graphgrad import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 8)
        self.act = nn.ReLU()
        self.fc2 = nn.Linear(8, 3)
        self.register_buffer("steps", gg.zeros(()))
        self.register_buffer("cache", gg.zeros(2), persistent=False)
        self.scale = 2.0  # a plain attribute

    def forward(self, x):
        return self.fc2(self.act(self.fc1(x))) * self.scale


class Tied(nn.Module):
    """A module using the same Linear twice and sharing a Parameter between two submodules."""

    def __init__(self):
        super().__init__()
        self.a = nn.Linear(3, 3)
        self.b = nn.Linear(3, 3)
        self.b.weight = self.a.weight
        self.again = self.a

    def forward(self, x):
        return self.b(self.a(x))


# ---- registration ----------------------------------------------------------------------------------
def test_registration_of_parameters_submodules_buffers():
    net = Net()
    assert [n for n, _ in net.named_parameters()] == ["fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"]
    assert [n for n, _ in net.named_children()] == ["fc1", "act", "fc2"]
    assert [n for n, _ in net.named_modules()] == ["", "fc1", "act", "fc2"]
    assert [n for n, _ in net.named_buffers()] == ["steps", "cache"]
    assert [n for n, _ in net.named_parameters(recurse=False)] == []
    assert net.num_parameters() == 4 * 8 + 8 + 8 * 3 + 3
    assert "scale" not in net._parameters and net.scale == 2.0


def test_assignment_rules():
    net = Net()
    with pytest.raises(TypeError, match="registered parameter"):
        net.fc1.weight = gg.zeros(8, 4)  # a plain tensor cannot replace a Parameter
    net.fc1.bias = None  # None is allowed (an absent parameter)
    assert [n for n, _ in net.fc1.named_parameters()] == ["weight"]
    with pytest.raises(TypeError, match="must be a Tensor"):
        net.steps = 3
    net.steps = gg.ones(())
    assert net.steps.item() == 1
    del net.fc2
    assert "fc2" not in dict(net.named_children())

    class Bad(nn.Module):
        def __init__(self):
            self.w = nn.Parameter(gg.zeros(2))

    with pytest.raises(AttributeError, match="super"):
        Bad()
    with pytest.raises(AttributeError, match="no attribute"):
        Net().missing


def test_register_parameter_requires_parameter():
    m = nn.Module()
    with pytest.raises(TypeError, match="Parameter"):
        m.register_parameter("w", gg.zeros(2))
    m.register_parameter("w", nn.Parameter(gg.zeros(2)))
    m.register_parameter("v", None)
    assert list(dict(m.named_parameters())) == ["w"]


def test_shared_parameters_listed_once():
    tied = Tied()
    names = [n for n, _ in tied.named_parameters()]
    assert names == ["a.weight", "a.bias", "b.bias"]
    assert len(list(tied.parameters())) == 3
    # the shared module appears once in named_modules
    assert [n for n, _ in tied.named_modules()] == ["", "a", "b"]
    # gradients from both uses accumulate into the one weight
    x = gg.randn(2, 3)
    tied(x).sum().backward()
    assert tied.a.weight.grad is tied.b.weight.grad


# ---- state_dict -----------------------------------------------------------------------------------------
def test_state_dict_contents_and_persistence():
    net = Net()
    keys = list(net.state_dict())
    # PyTorch's order: a module's own parameters and buffers, then its children's; cache is not persistent
    assert keys == ["steps", "fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"]
    state = net.state_dict(prefix="model.")
    assert list(state)[1] == "model.fc1.weight"


def test_load_state_dict_round_trip():
    gg.manual_seed(0)
    a = Net()
    gg.manual_seed(1)
    b = Net()
    x = gg.randn(5, 4)
    assert not np.allclose(a(x).numpy(), b(x).numpy())
    missing, unexpected = b.load_state_dict(a.state_dict())
    assert missing == [] and unexpected == []
    np.testing.assert_array_equal(a(x).numpy(), b(x).numpy())
    # a copy: changing a later does not change b
    a.fc1.weight.data[...] = 0
    assert b.fc1.weight.numpy().any()


def test_load_state_dict_strict_lists_every_problem():
    net = Net()
    state = net.state_dict()
    del state["fc1.bias"]
    state["extra.weight"] = gg.zeros(2)
    state["fc2.weight"] = gg.zeros(2, 2)
    before = net.fc1.weight.numpy().copy()
    state["fc1.weight"] = gg.zeros(8, 4)
    with pytest.raises(gg.ShapeError) as info:
        net.load_state_dict(state)
    text = str(info.value)
    assert "missing keys: ['fc1.bias']" in text
    assert "unexpected keys: ['extra.weight']" in text
    assert "fc2.weight: checkpoint (2, 2) vs model (3, 8)" in text
    np.testing.assert_array_equal(net.fc1.weight.numpy(), before)  # nothing changed


def test_load_state_dict_non_strict():
    net = Net()
    state = net.state_dict()
    del state["fc1.bias"]
    state["extra"] = gg.zeros(1)
    state["fc1.weight"] = gg.ones(8, 4)
    missing, unexpected = net.load_state_dict(state, strict=False)
    assert missing == ["fc1.bias"] and unexpected == ["extra"]
    assert (net.fc1.weight.numpy() == 1).all()
    state["fc2.bias"] = gg.zeros(4)
    with pytest.raises(gg.ShapeError, match="fc2.bias"):  # shape mismatches are errors even when not strict
        net.load_state_dict(state, strict=False)


def test_load_state_dict_accepts_numpy_and_keeps_dtype():
    net = Net().double()
    state = {k: v.numpy().astype(np.float32) for k, v in net.state_dict().items()}
    net.load_state_dict(state)
    assert net.fc1.weight.dtype == gg.float64


# ---- modes, apply, dtype, grads ---------------------------------------------------------------------------
def test_train_eval_propagate():
    model = nn.Sequential(nn.Linear(2, 2), nn.Sequential(nn.Dropout(0.5), nn.BatchNorm1d(2)))
    assert all(m.training for m in model.modules())
    assert model.eval() is model
    assert not any(m.training for m in model.modules())
    model.train()
    assert all(m.training for m in model.modules())
    model[1].train(False)
    assert model.training and not model[1][0].training


def test_apply_visits_children_first():
    model = nn.Sequential(nn.Linear(2, 3), nn.Sequential(nn.ReLU(), nn.Linear(3, 1)))
    seen = []
    model.apply(lambda m: seen.append(type(m).__name__))
    assert seen == ["Linear", "ReLU", "Linear", "Sequential", "Sequential"]

    def init_linear(m):
        if isinstance(m, nn.Linear):
            nn.init.constant_(m.weight, 0.5)
            nn.init.zeros_(m.bias)

    model.apply(init_linear)
    assert (model[0].weight.numpy() == 0.5).all() and (model[1][1].bias.numpy() == 0).all()


def test_to_dtype_converts_float_parameters_and_buffers_only():
    bn = nn.BatchNorm1d(3)
    bn(gg.randn(4, 3)).sum().backward()
    bn.to(gg.float64)
    assert bn.weight.dtype == gg.float64 and bn.running_mean.dtype == gg.float64
    assert bn.num_batches_tracked.dtype == gg.int64
    assert bn.weight.grad is None
    assert bn(gg.randn(4, 3).double()).dtype == gg.float64
    bn.float()
    assert bn.weight.dtype == gg.float32


def test_zero_grad():
    net = Net()
    net(gg.randn(2, 4)).sum().backward()
    assert all(p.grad is not None for p in net.parameters())
    net.zero_grad(set_to_none=False)
    assert all(p.grad is not None and not p.grad.numpy().any() for p in net.parameters())
    net.zero_grad()
    assert all(p.grad is None for p in net.parameters())


def test_frozen_parameters():
    fc = nn.Linear(3, 2)
    fc.weight.requires_grad = False
    assert fc.num_parameters(trainable_only=True) == 2
    x = gg.randn(4, 3)
    fc(x).sum().backward()
    assert fc.weight.grad is None and fc.bias.grad is not None


def test_repr_nests():
    text = repr(Net())
    assert text.startswith("Net(\n  (fc1): Linear(in_features=4, out_features=8, bias=True)")
    assert "(act): ReLU()" in text


# ---- graph mode -------------------------------------------------------------------------------------------
def _graph_vs_eager(model, x_value, train=False):
    model.train(train)
    with gg.Graph().as_default():
        x = gg.placeholder(gg.float32, (None,) + x_value.shape[1:])
        y = model(x)
        params = list(model.parameters())
        grads = gg.gradients(gg.sum(y * y), params)
        sess = gg.Session()
        y_graph, *g_graph = sess.run([y] + grads, {x: x_value})
    y_eager = model(gg.tensor(x_value))
    np.testing.assert_allclose(y_graph, y_eager.numpy(), rtol=1e-5, atol=1e-6)
    model.zero_grad()
    (y_eager * y_eager).sum().backward()
    for p, g in zip(params, g_graph):
        np.testing.assert_allclose(g, p.grad.numpy(), rtol=1e-4, atol=1e-5)


def test_mlp_in_graph_matches_eager():
    gg.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.LayerNorm(8), nn.Linear(8, 3), nn.LogSoftmax(-1))
    _graph_vs_eager(model, np.random.default_rng(0).normal(size=(5, 4)).astype(np.float32))


def test_cnn_in_graph_matches_eager():
    gg.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(2, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(), nn.MaxPool2d(2),
                          nn.Conv2d(4, 4, 3, padding="same", groups=2), nn.GroupNorm(2, 4), nn.GELU(),
                          nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(4, 3))
    model.train()
    model(gg.randn(8, 2, 6, 6))  # move the running statistics away from 0 / 1
    _graph_vs_eager(model, np.random.default_rng(1).normal(size=(3, 2, 6, 6)).astype(np.float32), train=False)


def test_batch_norm_training_in_graph_uses_batch_statistics():
    bn = nn.BatchNorm1d(3)
    x_value = np.random.default_rng(2).normal(2, 3, (6, 3)).astype(np.float32)
    with gg.Graph().as_default():
        x = gg.placeholder(gg.float32, (None, 3))
        y = bn(x)
        out = gg.Session().run(y, {x: x_value})
    np.testing.assert_allclose(out.mean(0), 0, atol=1e-5)


def test_module_params_train_in_graph():
    """A graph gradient step on a module's parameters changes the module (they are Variables)."""
    fc = nn.Linear(2, 1)
    with gg.Graph().as_default():
        x = gg.placeholder(gg.float32, (None, 2))
        loss = gg.mean(fc(x) ** 2)
        (gw,) = gg.gradients(loss, [fc.weight])
        step = fc.weight.assign_sub(gw * 0.1)
        before = fc.weight.numpy().copy()
        gg.Session().run(step, {x: np.ones((4, 2), np.float32)})
    assert not np.array_equal(before, fc.weight.numpy())


def test_embedding_and_dropout_in_graph():
    emb = nn.Embedding(5, 2)
    drop = nn.Dropout(0.5).eval()
    with gg.Graph().as_default():
        idx = gg.placeholder(gg.int64, (None,))
        y = drop(emb(idx))
        out = gg.Session().run(y, {idx: np.array([1, 4, 1])})
    np.testing.assert_array_equal(out, emb.weight.numpy()[[1, 4, 1]])


def test_a_submodule_or_parameter_assigned_again_keeps_its_place():
    class Net(gg.nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = gg.nn.Conv2d(3, 4, 3)
            self.relu = gg.nn.ReLU()
            self.fc = gg.nn.Linear(4, 2)

    net = Net()
    net.conv1 = gg.nn.Conv2d(1, 4, 3)  # (a model adapted to one-channel images, then cut before its head)
    assert [name for name, _ in net.named_children()] == ["conv1", "relu", "fc"]
    assert list(net.state_dict())[:2] == ["conv1.weight", "conv1.bias"]
    assert isinstance(list(net.children())[:-1][0], gg.nn.Conv2d)
    net.fc.weight = gg.nn.Parameter(gg.zeros(2, 4))
    assert list(net.fc.state_dict()) == ["weight", "bias"]


def test_state_dict_lists_a_shared_module_under_each_name_and_load_returns_named_keys():
    """As PyTorch: a module reached along two paths appears under both names (a PyTorch checkpoint of
    such a model loads strictly), and load_state_dict returns (missing_keys, unexpected_keys) by name."""
    shared = nn.Linear(2, 2)
    net = nn.Sequential(shared, nn.ReLU(), shared)
    assert list(net.state_dict()) == ["0.weight", "0.bias", "2.weight", "2.bias"]
    assert len(list(net.parameters())) == 2
    assert net.state_dict(keep_vars=True)["2.weight"] is shared.weight
    result = net.load_state_dict({"0.weight": gg.ones(2, 2), "0.bias": gg.zeros(2), "extra": gg.zeros(1)},
                                 strict=False)
    assert result.missing_keys == ["2.weight", "2.bias"] and result.unexpected_keys == ["extra"]
    missing, unexpected = result
    assert missing == ["2.weight", "2.bias"]
    assert [name for name, _ in net.named_modules(remove_duplicate=False)] == ["", "0", "1", "2"]
    assert [name for name, _ in net.named_modules()] == ["", "0", "1"]


def test_state_dict_hooks_rename_old_checkpoint_keys():
    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(2, 2)
            self._register_load_state_dict_pre_hook(self._rename)

        def _rename(self, state_dict, prefix, *rest):  # an older checkpoint called the layer "fc"
            for key in list(state_dict):
                if key.startswith(prefix + "fc."):
                    state_dict[prefix + "lin." + key[len(prefix) + 3:]] = state_dict.pop(key)

    model = Model()
    old = {"fc.weight": gg.ones(2, 2), "fc.bias": gg.zeros(2)}
    assert model.load_state_dict(old) == ([], []) and float(model.lin.weight.sum()) == 4.0
    assert list(old) == ["fc.weight", "fc.bias"]  # the caller's dict is left alone
    model.register_load_state_dict_post_hook(lambda module, keys: keys.unexpected_keys.clear())
    assert model.load_state_dict({"lin.weight": gg.ones(2, 2), "lin.bias": gg.zeros(2), "junk": gg.ones(1)}).unexpected_keys == []
    model.register_state_dict_post_hook(lambda module, state, prefix, meta: state.pop("lin.bias"))
    assert list(model.state_dict()) == ["lin.weight"]
    seen = []
    model.register_state_dict_pre_hook(lambda module, prefix, keep_vars: seen.append(prefix))
    model.state_dict()
    assert seen == [""]


def test_containers_insert_pop_delete_and_update_as_pytorch():
    seq = nn.Sequential(nn.ReLU(), nn.Tanh())
    seq.insert(1, nn.Sigmoid())
    del seq[0]
    seq.append(nn.ReLU())
    assert type(seq.pop(0)).__name__ == "Sigmoid"
    seq[0] = nn.Identity()
    assert [k for k, _ in seq.named_children()] == ["0", "1"]
    assert [type(m).__name__ for m in seq] == ["Identity", "ReLU"]
    assert [type(m).__name__ for m in seq + nn.Sequential(nn.Tanh())] == ["Identity", "ReLU", "Tanh"]
    layers = nn.ModuleList([nn.ReLU()])
    layers.insert(0, nn.Tanh())
    layers += [nn.Sigmoid()]
    del layers[1]
    assert [type(m).__name__ for m in layers] == ["Tanh", "Sigmoid"] and [k for k, _ in layers.named_children()] == ["0", "1"]
    heads = nn.ModuleDict({"a": nn.ReLU()})
    heads.update({"b": nn.Tanh()})
    heads.update([("c", nn.Tanh())])
    assert list(heads.keys()) == ["a", "b", "c"] and type(heads.pop("a")).__name__ == "ReLU" and len(heads) == 2


def test_hooks_are_kept_as_pytorch_keeps_them_and_plain_attributes_delete():
    """``_forward_pre_hooks`` maps ids to the hooks themselves (the pruning tutorial reads
    ``hook._tensor_name`` from its values); ``del module.attr`` of a plain attribute works."""
    m = nn.Linear(1, 1)

    def pre(module, args):
        return None

    handle = m.register_forward_pre_hook(pre)
    assert list(m._forward_pre_hooks.values()) == [pre]
    handle.remove()
    assert not m._forward_pre_hooks
    seen = []
    handle = m.register_forward_hook(lambda module, args, kwargs, out: seen.append(kwargs) or out * 2, with_kwargs=True)
    m(gg.ones(1, 1))
    assert seen == [{}] and len(m._forward_hooks_with_kwargs) == 1
    handle.remove()
    assert not m._forward_hooks and not m._forward_hooks_with_kwargs
    m.foo = 1
    del m.foo
    assert not hasattr(m, "foo")


def test_tile_along_new_leading_axes_is_writable():
    y = gg.tile(gg.ones((3, 2, 2)), (4, 1, 1, 1))
    y.div_(2.0)
    assert tuple(y.shape) == (4, 3, 2, 2) and float(y.sum()) == 24.0
