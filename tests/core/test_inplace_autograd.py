"""In-place ops on tensors in the autograd graph are recorded, as PyTorch's: ``x += y``, ``x.add_(y)``,
``x.relu_()``, ``x[i] = v``, ``inplace=True`` activations; the tensor object itself holds the result,
and gradients flow through the op. Expected gradients are written out by hand (PyTorch's values)."""
import numpy as np
import pytest

import graphgrad as gg
import graphgrad.compat.torch as torch


def _w():
    return gg.tensor([-1.0, 2.0, 3.0], requires_grad=True)


def test_augmented_assignment_on_a_graph_tensor_is_recorded():
    w = _w()
    out = w * 2
    identity = w + 1
    out += identity  # ResNet's `out += identity`
    same = out
    out *= w
    assert out is same
    out.sum().backward()
    # out = (2w + w + 1) * w = 3w^2 + w: d/dw = 6w + 1
    np.testing.assert_allclose(w.grad.numpy(), 6 * np.array([-1.0, 2.0, 3.0]) + 1)


def test_a_plain_tensor_joins_the_graph_when_an_operand_requires_grad():
    w = _w()
    buf = gg.zeros(3)
    buf += w * w
    assert buf.requires_grad
    buf.sum().backward()
    np.testing.assert_allclose(w.grad.numpy(), [-2.0, 4.0, 6.0])


def test_inplace_methods_are_recorded():
    w = _w()
    x = w.clone()
    x.add_(w, alpha=2.0)   # 3w
    x.mul_(w)              # 3w^2
    x.clamp_(max=10.0)     # 3w^2 capped: w=2 -> 12 -> 10 (no gradient there)
    x.sub_(1.0).relu_()
    x.sum().backward()
    np.testing.assert_allclose(w.grad.numpy(), [-6.0, 0.0, 0.0])  # w=3: 27 capped too


def test_item_assignment_is_recorded_into_the_tensor_and_the_value():
    w = _w()
    out = gg.zeros(2, 3)
    out[0] = w * 2
    out[1, 1:] = w[:2] * w[:2]
    assert out.requires_grad
    (out * gg.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])).sum().backward()
    # d/dw: 2 * [1, 2, 3] from row 0, plus 2 w * [5, 6] on w[:2] from row 1
    np.testing.assert_allclose(w.grad.numpy(), [2.0 + 2 * -1.0 * 5, 4.0 + 2 * 2.0 * 6, 6.0])


def test_item_assignment_cuts_the_gradient_of_what_it_overwrites():
    w = _w()
    y = w * 3
    y[1] = 0.0
    y[gg.tensor([True, False, False])] = gg.tensor([5.0])
    y.sum().backward()
    np.testing.assert_allclose(w.grad.numpy(), [0.0, 0.0, 3.0])


@pytest.mark.parametrize("layer, expected", [
    (lambda nn: nn.ReLU(inplace=True), [0.0, 2.0, 2.0]),
    (lambda nn: nn.LeakyReLU(0.1, inplace=True), [0.2, 2.0, 2.0]),
    (lambda nn: nn.ReLU6(inplace=True), [0.0, 2.0, 0.0]),
    (lambda nn: nn.Hardtanh(-1.0, 5.0, inplace=True), [0.0, 2.0, 0.0]),
])
def test_inplace_activation_layers_change_their_input_and_are_recorded(layer, expected):
    w = _w()
    h = w * 2  # [-2, 4, 6]
    out = layer(torch.nn)(h)
    assert out is h
    out.sum().backward()
    np.testing.assert_allclose(w.grad.numpy(), expected)


def test_inplace_activations_without_gradients_write_into_the_input():
    x = gg.tensor([-1.0, 2.0])
    assert torch.nn.ReLU(inplace=True)(x) is x
    np.testing.assert_array_equal(x.numpy(), [0.0, 2.0])
    y = gg.tensor([-1.0, 2.0])
    assert gg.nn.functional.elu(y, inplace=True) is y
    assert y.numpy()[0] == pytest.approx(np.expm1(-1.0))
    z = gg.tensor([-1.0, 2.0])
    assert gg.nn.functional.relu(z) is not z and z.numpy()[0] == -1.0  # inplace=False leaves it


def test_a_resnet_block_written_with_inplace_ops_trains_like_its_out_of_place_form():
    gg.manual_seed(0)
    nn = torch.nn
    conv, bn = nn.Conv2d(3, 3, 3, padding=1), nn.BatchNorm2d(3)
    x = np.random.default_rng(0).standard_normal((2, 3, 5, 5)).astype(np.float32)

    def grads(inplace: bool):
        for p in (*conv.parameters(), *bn.parameters()):
            p.grad = None
        xt = gg.tensor(x, requires_grad=True)
        out = bn(conv(xt))
        if inplace:
            out += xt
            out = nn.ReLU(inplace=True)(out)
        else:
            out = gg.relu(out + xt)
        out.square().sum().backward()
        return [xt.grad.numpy(), conv.weight.grad.numpy(), bn.weight.grad.numpy()]

    for a, b in zip(grads(True), grads(False)):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_leaves_that_require_grad_are_refused():
    w = _w()
    with pytest.raises(gg.GradError, match="leaf"):
        w += 1
    with pytest.raises(gg.GradError, match="leaf"):
        w.add_(1.0)
    with gg.no_grad():
        w += 1  # an optimizer-style update
    np.testing.assert_array_equal(w.numpy(), [0.0, 3.0, 4.0])


def test_ops_recorded_before_an_in_place_op_keep_the_version_they_used():
    w = _w()
    a = w * 2
    b = a + 1  # recorded with a's first version
    a += 1
    (a + b).sum().backward()  # (2w + 1) + (2w + 1)
    np.testing.assert_allclose(w.grad.numpy(), [4.0, 4.0, 4.0])
    w.grad = None
    y = w * 3
    z = y * y  # saves y: its gradient uses the values y had (PyTorch would refuse to run this backward)
    y += 100
    (z.sum() + y.sum()).backward()  # 9 w^2 + 3 w + 100
    np.testing.assert_allclose(w.grad.numpy(), 18 * np.array([-1.0, 2.0, 3.0]) + 3)


def test_indexed_augmented_assignment_on_a_graph_tensor():
    w = _w()
    x = w * 2
    x[1:] += w[1:] * w[1:]  # Python: x.__setitem__(key, x.__getitem__(key).__iadd__(...))
    x[0] *= 3
    x.sum().backward()  # [6 w0, 2 + 2 w1, 2 + 2 w2]
    np.testing.assert_allclose(w.grad.numpy(), [6.0, 6.0, 8.0])
    np.testing.assert_allclose(x.detach().numpy(), [-6.0, 8.0, 15.0])


def test_versions_do_not_outlive_their_tensors():
    from graphgrad.core import autograd

    before = len(autograd._VERSIONS)
    for _ in range(50):
        w = _w()
        a = w * 2
        b = a + 1
        a += 1
        (a + b).sum().backward()
    del w, a, b
    import gc

    gc.collect()
    assert len(autograd._VERSIONS) <= before + 1


def test_a_shape_change_in_place_is_refused():
    w = _w()
    h = w * 1
    with pytest.raises(gg.ShapeError, match="does not fit"):
        h += gg.ones(2, 3)
