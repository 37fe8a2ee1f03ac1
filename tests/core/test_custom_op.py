"""The public custom-op API and check_grad."""
from __future__ import annotations

import numpy as np
import pytest

import graphgrad as gg


class Cube(gg.Op):
    """x ** 3, as a user would write it."""

    def forward(self, xp, x):
        return x * x * x

    def backward(self, inputs, out, g):
        (x,) = inputs
        return (g * 3 * x * x,)


class WrongCube(Cube):
    def backward(self, inputs, out, g):
        (x,) = inputs
        return (g * 2 * x * x,)


def test_custom_op_forward_backward_and_default_shape_rule():
    x = gg.tensor([1.0, 2.0], requires_grad=True)
    y = Cube().apply(x)
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [3, 12])
    s = Cube().apply(gg.Tensor.symbolic(gg.TensorSpec((2, 5), "float32")))
    assert s.shape == (2, 5) and s.dtype == gg.float32


def test_check_grad_passes_first_and_second_order():
    report = gg.check_grad(lambda x: Cube()(x), gg.randn(3, 4), order=2)
    assert report.ok and report.worst[0][0] == 1 and report.worst[1][0] == 2


def test_check_grad_reports_worst_element_with_index():
    with pytest.raises(gg.GradcheckError, match=r"input 0, element \(0, 0\)"):
        gg.check_grad(lambda x: WrongCube()(x), gg.tensor([[1.0, 2.0]]))
    report = gg.check_grad(lambda x: WrongCube()(x), gg.tensor([[1.0, 2.0]]), raise_exception=False)
    assert not report.ok and "FAILED" in str(report)


def test_check_grad_large_input_uses_sampling_and_projections():
    report = gg.check_grad(lambda x: (x * x).sum(axis=0), gg.randn(20, 30), order=1)
    assert report.ok


def test_check_grad_multiple_inputs_and_non_float_args():
    idx = gg.tensor([0, 2, 1])
    report = gg.check_grad(lambda a, b, i: a * b + i, gg.randn(3), gg.randn(3), idx, order=2)
    assert report.ok


def test_forward_error_names_the_op_and_shapes():
    with pytest.raises(gg.ShapeError, match=r"Add: shapes \(3,\) and \(4,\)"):
        gg.ones(3) + gg.ones(4)
