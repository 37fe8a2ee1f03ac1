"""graphgrad.compat.torch maps PyTorch's names and conventions onto graphgrad."""
from __future__ import annotations

import numpy as np

import graphgrad as gg
import graphgrad.compat.torch as torch
import graphgrad.compat.torch.nn.functional as F


def test_pytorch_conventions():
    x = torch.tensor([[1.0, 5.0, 2.0], [7.0, 0.0, 3.0]])
    values, indices = torch.max(x, 1)
    assert values.tolist() == [5.0, 7.0] and indices.tolist() == [1, 0]
    assert torch.max(x).item() == 7.0 and torch.min(x, dim=0, keepdim=True).values.shape == (1, 3)
    assert torch.cat([x, x], 1).shape == (2, 6) and torch.stack([x, x], dim=0).shape == (2, 2, 3)
    assert torch.float is gg.float32 and torch.long is gg.int64 and torch.device("cpu") == "cpu"
    assert x.size() == (2, 3) and x.size(1) == 3 and x.numel() == 6
    np.testing.assert_allclose(F.softmax(x, dim=1).sum(1).numpy(), [1.0, 1.0], rtol=1e-6)
    assert torch.is_tensor(x) and isinstance(x, torch.Tensor)


def test_submodules_are_importable_as_pytorchs():
    import graphgrad.compat.torch.optim.lr_scheduler as lr_scheduler
    from graphgrad.compat.torch.utils.data import DataLoader, TensorDataset

    assert torch.nn.Linear is gg.nn.Linear and torch.optim.SGD is gg.optim.SGD
    assert lr_scheduler.StepLR is gg.optim.StepLR and DataLoader is gg.data.DataLoader
    assert torch.nn.utils.clip_grad_norm_ is gg.optim.clip_grad_norm_ and TensorDataset is gg.data.TensorDataset


def test_autograd_function_maps_onto_an_op():
    class Cube(torch.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            ctx.save_for_backward(a)
            return a ** 3

        @staticmethod
        def backward(ctx, grad_output):
            (a,) = ctx.saved_tensors
            return grad_output * 3 * a ** 2

    a = torch.tensor([1.0, 2.0], requires_grad=True)
    Cube.apply(a).sum().backward()
    assert a.grad.tolist() == [3.0, 12.0]
    assert torch.autograd.gradcheck(Cube.apply, (torch.randn(3, dtype=torch.float64),))


def test_autograd_function_with_several_outputs_gets_one_gradient_per_output():
    class ProductAndSum(torch.autograd.Function):
        @staticmethod
        def forward(ctx, a, b):
            ctx.save_for_backward(a, b)
            return a * b, a + b

        @staticmethod
        def backward(ctx, g_product, g_sum):
            a, b = ctx.saved_tensors
            return g_product * b + g_sum, g_product * a + g_sum

    a = torch.tensor([1.0, 2.0], requires_grad=True)
    b = torch.tensor([3.0, 4.0], requires_grad=True)
    product, total = ProductAndSum.apply(a, b)
    assert product.tolist() == [3.0, 8.0] and total.tolist() == [4.0, 6.0]
    (product * 2 + total).sum().backward()
    assert a.grad.tolist() == [7.0, 9.0] and b.grad.tolist() == [3.0, 5.0]

    class RowMax(torch.autograd.Function):  # an index output, marked non-differentiable
        @staticmethod
        def forward(ctx, x):
            values, index = x.max(dim=1)
            ctx.mark_non_differentiable(index)
            ctx.save_for_backward(x, index)
            return values, index

        @staticmethod
        def backward(ctx, g_values, g_index):
            x, index = ctx.saved_tensors
            g = torch.zeros_like(x)
            g[torch.arange(x.shape[0]), index] = g_values
            return g

    x = torch.tensor([[1.0, 3.0], [4.0, 2.0]], requires_grad=True)
    values, index = RowMax.apply(x)
    assert index.tolist() == [1, 0] and index.dtype == torch.int64
    (values * torch.tensor([1.0, 2.0])).sum().backward()
    assert x.grad.tolist() == [[0.0, 1.0], [2.0, 0.0]]


def test_autograd_function_in_pytorch_2_form_with_setup_context():
    class MatMul(torch.autograd.Function):
        @staticmethod
        def forward(a, w):
            return a @ w

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(*inputs)

        @staticmethod
        def backward(ctx, g):
            a, w = ctx.saved_tensors
            return g @ w.T, a.T @ g

    a = torch.ones(2, 3, requires_grad=True)
    w = torch.ones(3, 4, requires_grad=True)
    MatMul.apply(a, w).sum().backward()
    assert a.grad.tolist() == [[4.0] * 3] * 2 and w.grad.tolist() == [[2.0] * 4] * 3


def test_install_makes_import_torch_resolve_here():
    import sys

    def torch_modules() -> dict:
        return {n: m for n, m in sys.modules.items() if n == "torch" or n.startswith("torch.")}

    saved = torch_modules()
    try:
        for name in saved:
            del sys.modules[name]
        torch.install()
        import torch as imported
        import torch.nn.functional as functional

        assert imported is torch and functional.relu is gg.nn.functional.relu
    finally:  # put back exactly what was there (real PyTorch, or nothing)
        for name in torch_modules():
            del sys.modules[name]
        sys.modules.update(saved)


def test_parameters_round_trip_through_one_vector():
    model = torch.nn.Linear(3, 2)
    vec = torch.nn.utils.parameters_to_vector(model.parameters())
    assert vec.shape == (8,)
    torch.nn.utils.vector_to_parameters(vec * 2, model.parameters())
    np.testing.assert_allclose(torch.nn.utils.parameters_to_vector(model.parameters()).numpy(), vec.numpy() * 2)
    mask = torch.tensor([True, False])
    assert torch.masked_fill(torch.ones(2), mask, 0.0).tolist() == [0.0, 1.0]
    assert torch.empty_like(torch.ones(2, 3)).shape == (2, 3)
