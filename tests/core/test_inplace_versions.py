"""A value saved for backward and then written in place makes backward raise (PyTorch's version
counters), and anomaly mode reports the user's line that made the failing op."""
import numpy as np
import pytest

import graphgrad as gg
from graphgrad import nn


def _product_graph():
    a = gg.tensor([1.0, 2.0, 3.0])
    w = gg.tensor([1.0, 1.0, 1.0], requires_grad=True)
    return a, w, (a * w).sum()


def test_the_issue_example_raises_instead_of_a_wrong_gradient():
    a, w, loss = _product_graph()
    a[0] = 100
    with pytest.raises(gg.GradError, match=r"input 0 of Mul .*shape \(3,\).*item assignment"):
        loss.backward()
    assert w.grad is None


@pytest.mark.parametrize("write", [
    lambda a: a.add_(1),
    lambda a: a.mul_(2),
    lambda a: a.zero_(),
    lambda a: a.fill_(3.0),
    lambda a: a.copy_(gg.ones(3)),
    lambda a: a.clamp_(0, 1),
    lambda a: a.normal_(),
    lambda a: a.uniform_(),
    lambda a: a.unsqueeze_(0),       # rebinds the tensor's array
    lambda a: a.detach().__setitem__(0, 5.0),   # a view shares the memory
    lambda a: a[1:].__setitem__(0, 5.0),        # a slice is a view too
    lambda a: a.reshape(3, 1).add_(1),
    lambda a: gg.nn.functional.relu_(a),
    lambda a: gg.nn.init.zeros_(a),
], ids=["add_", "mul_", "zero_", "fill_", "copy_", "clamp_", "normal_", "uniform_", "unsqueeze_", "detach",
        "slice", "reshape-view", "F.relu_", "init"])
def test_every_in_place_write_path_is_caught(write):
    a, w, loss = _product_graph()
    write(a)
    with pytest.raises(gg.GradError, match="modified by an in-place operation"):
        loss.backward()


def test_augmented_assignment_is_caught():
    a, w, loss = _product_graph()
    a += 1
    with pytest.raises(gg.GradError, match="in-place"):
        loss.backward()


def test_writes_before_the_op_or_after_backward_are_fine():
    a = gg.tensor([1.0, 2.0, 3.0])
    a[0] = 10.0
    w = gg.tensor([1.0, 1.0, 1.0], requires_grad=True)
    loss = (a * w).sum()
    loss.backward()
    a[0] = 100.0  # after the gradient was computed: nothing stale is used
    np.testing.assert_array_equal(w.grad.numpy(), [10.0, 2.0, 3.0])


def test_ops_that_need_only_shapes_do_not_raise_as_in_pytorch():
    """``a + w``, ``a.reshape``, ``a.sum()`` and ``a[i]`` do not save ``a``'s values: PyTorch lets
    ``a`` change before backward there, and so does graphgrad."""
    w = gg.tensor([1.0, 1.0, 1.0], requires_grad=True)
    a = gg.tensor([1.0, 2.0, 3.0])
    loss = (a + w).sum() + (w - a).reshape(3, 1).sum() + gg.concatenate([a, w]).sum() + w[a.long() - 1].sum()
    a.mul_(5)
    loss.backward()
    np.testing.assert_allclose(w.grad.numpy(), [4.0, 4.0, 4.0])


def test_an_optimizer_step_before_a_retained_backward_raises():
    model = nn.Linear(3, 2)
    opt = gg.optim.SGD(model.parameters(), lr=0.1)
    loss = model(gg.randn(4, 3)).square().sum()
    loss.backward(retain_graph=True)
    opt.step()
    with pytest.raises(gg.GradError, match=r"SGD\.step\(\)"):
        loss.backward()


@pytest.mark.parametrize("optimizer", ["SGD", "Adam"])
def test_ordinary_training_loops_never_trip_the_check(optimizer):
    model = nn.Sequential(nn.Conv2d(2, 3, 3), nn.BatchNorm2d(3), nn.ReLU(), nn.Flatten(), nn.Linear(3 * 4 * 4, 2))
    opt = getattr(gg.optim, optimizer)(model.parameters(), lr=0.01)
    x = gg.randn(4, 2, 6, 6)
    for _ in range(3):
        opt.zero_grad()
        loss = model(x).square().mean()
        loss.backward()
        opt.step()
    model.load_state_dict(model.state_dict())
    opt.zero_grad()
    model(x).square().mean().backward()


def test_load_state_dict_after_forward_is_caught():
    model = nn.Linear(3, 2)
    loss = model(gg.randn(4, 3)).square().sum()
    model.load_state_dict({k: v.numpy() * 2 for k, v in model.state_dict().items()})
    with pytest.raises(gg.GradError, match="load_state_dict"):
        loss.backward()


def test_a_saved_output_written_in_place_is_caught():
    x = gg.tensor([0.5, 1.0], requires_grad=True)
    y = gg.exp(x)  # exp's backward reads its output
    loss = y.sum()
    y.detach()[0] = 0.0
    with pytest.raises(gg.GradError, match="output of Exp"):
        loss.backward()


def test_the_error_names_the_tensor_when_it_has_a_name():
    a, w, loss = _product_graph()
    a.name = "features"
    a[0] = 2.0
    with pytest.raises(gg.GradError, match="'features'"):
        loss.backward()


def test_anomaly_mode_names_the_line_that_made_the_op():
    with gg.detect_anomaly():
        a, w, loss = _product_graph()
        a[0] = 100
        with pytest.raises(gg.GradError, match=r"created at .*test_inplace_versions\.py:\d+ in _product_graph"):
            loss.backward()


def test_anomaly_mode_reports_where_the_nan_producing_op_was_made():
    x = gg.tensor([0.0, 1.0], requires_grad=True)
    with gg.detect_anomaly():
        y = gg.sqrt(x)  # the gradient at 0 is inf
        with pytest.raises(gg.NonFiniteError) as info:
            y.sum().backward()
    message = str(info.value)
    assert "Sqrt" in message
    assert "test_inplace_versions.py" in message and "y = gg.sqrt(x)" in message


def test_anomaly_mode_reports_the_line_of_a_nan_forward():
    x = gg.tensor([-1.0, 1.0])
    with gg.detect_anomaly(), np.errstate(invalid="ignore"):
        with pytest.raises(gg.NonFiniteError, match=r"Log \(forward\).*test_inplace_versions\.py:\d+"):
            gg.log(x)


def test_without_anomaly_mode_no_site_is_recorded():
    from graphgrad.core import autograd

    a, w, loss = _product_graph()
    assert loss.grad_fn not in autograd.CREATION_SITES
