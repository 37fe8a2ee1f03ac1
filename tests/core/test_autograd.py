"""Autograd: backward/grad semantics, accumulation, higher order, hooks, graph freeing, grad modes."""
from __future__ import annotations

import numpy as np
import pytest

import graphgrad as gg


def test_backward_accumulates_and_zero_grad_semantics():
    x = gg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    (x * x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [2, 4, 6])
    (x * 3).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [5, 7, 9])
    x.grad = None
    (x * 3).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [3, 3, 3])


def test_tensor_used_many_times_gets_sum_of_gradients():
    x = gg.tensor(2.0, requires_grad=True)
    y = x * x + x * 3 + x.exp() + x
    y.backward()
    np.testing.assert_allclose(x.grad.item(), 2 * 2 + 3 + np.exp(2) + 1, rtol=1e-6)


def test_relu_plus_x_gets_gradient_two_where_positive():
    x = gg.tensor([-1.0, 0.5, 2.0], requires_grad=True)
    (gg.relu(x) + x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [1, 2, 2])


def test_broadcasting_is_undone():
    a = gg.randn(3, 1, requires_grad=True)
    b = gg.randn(4, requires_grad=True)
    (a * b).sum().backward()
    assert a.grad.shape == (3, 1) and b.grad.shape == (4,)
    np.testing.assert_allclose(a.grad.numpy()[:, 0], np.full(3, b.numpy().sum()), rtol=1e-5)
    np.testing.assert_allclose(b.grad.numpy(), np.full(4, a.numpy().sum()), rtol=1e-5)


def test_backward_with_explicit_gradient_and_non_scalar_error():
    x = gg.randn(2, 3, requires_grad=True)
    y = x * 2
    with pytest.raises(gg.GradError, match="non-scalar output of shape \\(2, 3\\)"):
        y.backward()
    y.backward(gg.ones(2, 3) * 0.5)
    np.testing.assert_allclose(x.grad.numpy(), np.ones((2, 3)))
    with pytest.raises(gg.GradError, match="gradient has shape"):
        (x * 2).backward(gg.ones(3, 2))


def test_second_backward_on_freed_graph_raises_and_retain_graph_allows_it():
    x = gg.tensor([1.0, 2.0], requires_grad=True)
    y = (x.exp() * 2).sum()
    y.backward(retain_graph=True)
    y.backward()
    np.testing.assert_allclose(x.grad.numpy(), 4 * np.exp([1.0, 2.0]), rtol=1e-6)
    with pytest.raises(gg.GradError, match="second time"):
        y.backward()


def test_grad_returns_without_touching_dot_grad():
    x = gg.tensor([1.0, 2.0], requires_grad=True)
    w = gg.tensor([3.0, 4.0], requires_grad=True)
    (gx,) = gg.grad((x * w).sum(), x)
    np.testing.assert_allclose(gx.numpy(), [3, 4])
    assert x.grad is None and w.grad is None


def test_grad_of_intermediate_and_allow_unused():
    x = gg.tensor([1.0, 2.0], requires_grad=True)
    h = x * 3
    y = (h * h).sum()
    gh, gx = gg.grad(y, [h, x], retain_graph=True)
    np.testing.assert_allclose(gh.numpy(), 2 * h.numpy())
    np.testing.assert_allclose(gx.numpy(), 18 * x.numpy())
    z = gg.tensor([1.0], requires_grad=True)
    with pytest.raises(gg.GradError, match="not used"):
        gg.grad(y, [x, z], retain_graph=True)
    gx, gz = gg.grad(y, [x, z], allow_unused=True)
    assert gz is None


def test_higher_order_tanh_derivatives():
    x = gg.tensor([0.3, -0.7, 1.1], dtype="float64", requires_grad=True)
    y = gg.tanh(x)
    (d1,) = gg.grad(y.sum(), x, create_graph=True)
    (d2,) = gg.grad(d1.sum(), x, create_graph=True)
    (d3,) = gg.grad(d2.sum(), x)
    t = np.tanh(x.numpy())
    np.testing.assert_allclose(d1.numpy(), 1 - t ** 2, rtol=1e-12)
    np.testing.assert_allclose(d2.numpy(), -2 * t * (1 - t ** 2), rtol=1e-12)
    np.testing.assert_allclose(d3.numpy(), (1 - t ** 2) * (6 * t ** 2 - 2), rtol=1e-12)


def test_hessian_vector_product():
    a = np.array([[2.0, 1.0], [1.0, 3.0]])
    x = gg.tensor([1.0, -1.0], dtype="float64", requires_grad=True)
    v = gg.tensor([0.5, 2.0], dtype="float64")
    A = gg.tensor(a)
    f = (x * (A * x).sum(axis=1)).sum() * 0.5 + (x ** 3).sum()  # 0.5 x^T A x + sum x^3
    (g,) = gg.grad(f, x, create_graph=True)
    (hv,) = gg.grad((g * v).sum(), x)
    hessian = a + np.diag(6 * x.numpy())
    np.testing.assert_allclose(hv.numpy(), hessian @ v.numpy(), rtol=1e-12)


def test_backward_create_graph_then_differentiate_grad():
    x = gg.tensor(1.5, dtype="float64", requires_grad=True)
    (x ** 3).backward(create_graph=True)
    g = x.grad
    assert g.requires_grad
    x.grad = None
    g.backward()
    np.testing.assert_allclose(x.grad.item(), 6 * 1.5)


def test_long_chain_is_iterative():
    x = gg.tensor([0.5], requires_grad=True)
    y = x
    for _ in range(100_000):
        y = y + 0.0
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [1.0])


def test_no_grad_and_enable_grad_context_and_decorator():
    x = gg.tensor([1.0], requires_grad=True)
    with gg.no_grad():
        y = x * 2
        with gg.enable_grad():
            z = x * 2
    assert not y.requires_grad and y.is_leaf and z.requires_grad

    @gg.no_grad()
    def f(t):
        return t * 3

    assert not f(x).requires_grad
    assert gg.is_grad_enabled()
    with gg.set_grad_enabled(False):
        assert not (x * 2).requires_grad


def test_detach_and_requires_grad_():
    x = gg.tensor([1.0, 2.0], requires_grad=True)
    d = (x * 2).detach()
    assert not d.requires_grad and d.is_leaf
    (x * d).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 4.0])
    t = gg.tensor([1.0]).requires_grad_()
    assert t.requires_grad
    with pytest.raises(gg.GradError, match="floating-point"):
        gg.tensor([1, 2]).requires_grad_()
    with pytest.raises(gg.GradError, match="leaf"):
        (x * 2).requires_grad_(False)


def test_hooks_on_leaf_and_intermediate():
    x = gg.tensor([1.0, 2.0], requires_grad=True)
    seen = []
    x.register_hook(lambda g: g * 10)
    h = x * 2
    remove = h.register_hook(lambda g: seen.append(g.numpy().copy()))
    h.sum().backward()
    np.testing.assert_allclose(seen[0], [1, 1])
    np.testing.assert_allclose(x.grad.numpy(), [20, 20])
    remove()
    x.grad = None
    h2 = x * 2
    h2.sum().backward()
    assert len(seen) == 1


def test_retain_grad_on_intermediate():
    x = gg.tensor([1.0, 2.0], requires_grad=True)
    h = x * 3
    h.retain_grad()
    (h * h).sum().backward()
    np.testing.assert_allclose(h.grad.numpy(), 2 * h.numpy())


def test_integer_and_bool_outputs_do_not_require_grad():
    x = gg.tensor([1.0, 2.0], requires_grad=True)
    assert not (x > 1).requires_grad
    assert (x * 2).requires_grad


def test_backward_on_tensor_without_grad_says_so():
    with pytest.raises(gg.GradError, match="does not require grad"):
        (gg.tensor([1.0]) * 2).sum().backward()


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_detect_anomaly_names_the_op():
    x = gg.tensor([-1.0, 1.0], requires_grad=True)
    with gg.detect_anomaly():
        with pytest.raises(gg.NonFiniteError, match="Log"):
            gg.log(x)
    y = gg.log(x)  # outside the context NaN passes silently, like NumPy
    assert np.isnan(y.numpy()[0])
    z = gg.tensor([0.0], requires_grad=True)
    with gg.detect_anomaly():
        out = gg.sqrt(z)
        with pytest.raises(gg.NonFiniteError, match="Sqrt"):
            out.sum().backward()


def test_float32_stays_float32_through_gradients():
    x = gg.randn(3, requires_grad=True)
    y = (x * 2.5 + 1).exp().sum()
    y.backward()
    assert y.dtype == np.float32 and x.grad.dtype == np.float32
    h = gg.randn(3, dtype="float64")
    (x * h).sum().backward()
    assert x.grad.dtype == np.float32


def test_stop_gradient_and_identity():
    x = gg.tensor([1.0, 2.0], requires_grad=True)
    (gg.stop_gradient(x) * x + gg.identity(x)).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 3.0])


def test_leaf_gradients_are_writable_and_never_shared():
    a = gg.tensor([1.0, 2.0], requires_grad=True)
    b = gg.tensor([3.0, 4.0], requires_grad=True)
    c = gg.tensor(5.0, requires_grad=True)
    (a + b + c).sum().backward()  # add passes one array to both sides; c's is a broadcast sum
    arrays = [t.grad.data for t in (a, b, c)]
    assert not np.shares_memory(arrays[0], arrays[1])
    for array in arrays:
        assert array.flags.writeable
    a.grad.data[...] = 0
    np.testing.assert_allclose(b.grad.numpy(), [1.0, 1.0])
    w = gg.tensor([[1.0, 2.0]], requires_grad=True)
    (w * gg.ones(3, 2)).sum().backward()  # a reduction of a broadcast
    assert w.grad.data.flags.writeable and w.grad.data.base is None


# ---- post-accumulate-grad hooks and end-of-backward callbacks ----------------------------------------------
def test_post_accumulate_hooks_fire_once_after_every_contribution():
    from graphgrad.core import autograd

    w = gg.nn.Parameter(gg.ones(3))
    b = gg.nn.Parameter(gg.ones(3))
    unused = gg.nn.Parameter(gg.ones(3))
    seen = []
    w.register_post_accumulate_grad_hook(lambda t: seen.append(("w", t.grad.tolist())))
    remove = b.register_post_accumulate_grad_hook(lambda t: seen.append(("b", t.grad.tolist())))
    unused.register_post_accumulate_grad_hook(lambda t: seen.append("unused"))
    b.register_post_accumulate_grad_hook(lambda t: autograd.queue_callback(lambda: seen.append("end")))
    (w * 2 + w * 3 + (b * w).sin() * 0 + b).sum().backward()   # w is used three times
    assert seen == [("b", [1.0, 1.0, 1.0]), ("w", [5.0, 5.0, 5.0]), "end"]
    seen.clear()
    remove()
    (b * 4).sum().backward()
    assert seen == ["end"] and b.grad.tolist() == [5.0, 5.0, 5.0]


def test_post_accumulate_hooks_see_graph_tensors_while_tracing():
    w = gg.nn.Parameter(gg.ones(2))
    kinds = []
    w.register_post_accumulate_grad_hook(lambda t: kinds.append(t.grad.data is None))

    @gg.function
    def step(x):
        (w * x).sum().backward()
        return w.grad

    step(gg.tensor([1.0, 2.0]))
    step(gg.tensor([1.0, 2.0]))
    assert kinds == [True]   # fired once, at trace time, with a graph tensor


def test_queue_callback_outside_backward_and_hooks_on_non_leaves_are_errors():
    from graphgrad.core import autograd

    with pytest.raises(gg.GradError, match="only be called while a backward pass runs"):
        autograd.queue_callback(lambda: None)
    x = gg.ones(2, requires_grad=True)
    with pytest.raises(gg.GradError, match="leaf tensors"):
        (x * 2).register_post_accumulate_grad_hook(lambda t: None)
