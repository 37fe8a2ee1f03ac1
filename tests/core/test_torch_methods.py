"""Tensor methods under PyTorch's names: in-place forms, conversions and their errors (the value
semantics are compared with PyTorch in tests/oracle/cases_methods.py)."""
from __future__ import annotations

import numpy as np
import pytest

import graphgrad as gg


def test_in_place_arithmetic_and_fills():
    y = gg.zeros(3)
    assert y.add_(gg.ones(3), alpha=2) is y
    y.mul_(3).sub_(1).div_(5)
    np.testing.assert_allclose(y.numpy(), [1.0, 1.0, 1.0])
    y.fill_(7).clamp_(max=5)
    assert y.tolist() == [5.0, 5.0, 5.0]
    y.copy_(gg.tensor([1.0, 2.0, 3.0]))
    assert y.tolist() == [1.0, 2.0, 3.0]
    gen = gg.Generator(0)
    assert y.normal_(generator=gen).shape == (3,) and y.dtype == gg.float32
    assert all(0 <= v < 1 for v in y.uniform_(0, 1, generator=gen).tolist())


def test_in_place_on_a_tensor_that_requires_grad_needs_no_grad():
    w = gg.ones(3, requires_grad=True)
    for method, args in (("add_", (1.0,)), ("fill_", (0.0,)), ("copy_", (gg.zeros(3),)), ("normal_", ())):
        with pytest.raises(gg.GradError, match="no_grad"):
            getattr(w, method)(*args)
    with gg.no_grad():
        w.add_(1.0).mul_(2.0)
    assert w.tolist() == [4.0, 4.0, 4.0] and w.requires_grad


def test_conversions_and_sizes():
    x = gg.tensor(np.arange(6, dtype=np.float32).reshape(2, 3))
    assert x.numel() == 6 and x.dim() == 2
    assert x.to(gg.float64).dtype == gg.float64 and x.to("cpu") is x and x.cpu() is x
    assert x.to(gg.zeros(1, dtype=gg.float16)).dtype == gg.float16
    assert x.type() == "float32" and x.type(gg.int64).dtype == gg.int64
    assert x.contiguous() is x
    assert x.eq(x).all().item() and not x.ne(x).any().item()
    assert x.lt(3).tolist() == [[True, True, True], [False, False, False]]


def test_shape_errors_say_what_pytorch_would():
    x = gg.zeros(2, 3, 4)
    with pytest.raises(ValueError, match="at most 2 dimensions"):
        x.t()
    with pytest.raises(ValueError, match="at least the tensor's dims"):
        x.expand(3, 4)
    with pytest.raises(ValueError, match="must add up to 3"):
        x.split([1, 1], dim=1)


def test_clone_owns_its_storage_and_passes_gradients():
    x = gg.ones(3, requires_grad=True)
    c = x.clone()
    assert c.data is not x.data
    (c * 2).sum().backward()
    assert x.grad.tolist() == [2.0, 2.0, 2.0]


def test_reductions_take_dim_and_keepdim():
    x = gg.tensor(np.arange(24, dtype=np.float64).reshape(2, 3, 4))
    np.testing.assert_array_equal(x.sum(dim=1, keepdim=True).numpy(), x.numpy().sum(axis=1, keepdims=True))
    np.testing.assert_array_equal(gg.mean(x, dim=(0, 2)).numpy(), x.numpy().mean(axis=(0, 2)))
    assert x.argmax(dim=-1).shape == (2, 3) and x.cumsum(dim=2).shape == (2, 3, 4)
    assert x.std(dim=0).shape == (3, 4) and x.logsumexp(dim=1, keepdim=True).shape == (2, 1, 4)
    np.testing.assert_allclose(x.softmax(dim=-1).sum(dim=-1).numpy(), np.ones((2, 3)))
    assert x.log_softmax(dim=0).shape == (2, 3, 4)
    with pytest.raises(TypeError, match="both axis and dim"):
        gg.sum(x, 0, dim=1)


def test_transpose_method_swaps_two_dims_like_pytorch():
    x = gg.zeros(2, 3, 4, 5)
    assert x.transpose(1, 2).shape == (2, 4, 3, 5) and x.transpose(-2, -1).shape == (2, 3, 5, 4)
    assert x.transpose(0, 2, 1, 3).shape == (2, 4, 3, 5) and x.transpose().shape == (5, 4, 3, 2)  # NumPy forms
    assert gg.zeros(2, 3).transpose(0, 1).shape == (3, 2)
    assert gg.ones(2, 3).narrow(1, 1, 2).shape == (2, 2) and gg.ones(2).new_zeros(3, 4).shape == (3, 4)


def test_max_and_min_with_a_dim_give_values_and_indices():
    x = gg.tensor([[1.0, 5.0, 2.0], [7.0, 0.0, 3.0]], requires_grad=True)
    values, indices = x.max(1)
    assert values.tolist() == [5.0, 7.0] and indices.tolist() == [1, 0]
    assert x.min(dim=0, keepdim=True).values.tolist() == [[1.0, 0.0, 2.0]]
    assert x.max().item() == 7.0 and x.max(axis=1).tolist() == [5.0, 7.0]   # NumPy's axis= form: values
    assert x.max(gg.full((2, 3), 4.0)).tolist() == [[4.0, 5.0, 4.0], [7.0, 4.0, 4.0]]
    x.max(1).values.sum().backward()
    assert x.grad.tolist() == [[0.0, 1.0, 0.0], [1.0, 0.0, 0.0]]


def test_device_and_layout_flags_that_programs_test_for():
    t = gg.zeros(2)
    assert t.is_cpu and not t.is_cuda and not t.is_xpu and not t.is_mps and not t.is_meta
    assert not (t.is_sparse or t.is_quantized or t.is_mkldnn or t.is_nested or t.is_shared())


@pytest.mark.skipif(not hasattr(__import__("os"), "fork"), reason="needs fork")
def test_share_memory_makes_in_place_updates_visible_across_fork():
    import os

    model = gg.nn.Linear(3, 2)
    assert not model.weight.is_shared()
    assert model.share_memory() is model and model.weight.is_shared() and model.bias.is_shared()
    before = model.weight.numpy().copy()
    pid = os.fork()
    if pid == 0:  # the child: an optimizer step, in place
        opt = gg.optim.SGD(model.parameters(), lr=1.0)
        model(gg.ones(1, 3)).sum().backward()
        opt.step()
        os._exit(0)
    os.waitpid(pid, 0)
    np.testing.assert_allclose(model.weight.numpy(), before - 1.0)


def test_methods_take_pytorchs_keyword_names_and_a_range_index():
    x = gg.arange(12.0).reshape(3, 4)
    assert x.unsqueeze(dim=0).shape == (1, 3, 4) and x.unsqueeze(0).squeeze(dim=0).shape == (3, 4)
    assert x.reshape(3, 2, 2).flatten(start_dim=1).shape == (3, 4)
    assert x.transpose(dim0=0, dim1=1).shape == (4, 3) and x.permute(dims=(1, 0)).shape == (4, 3)
    assert x.view(size=(4, 3)).shape == (4, 3) and x[:1].expand(size=(3, 4)).shape == (3, 4)
    assert x.flip(dims=[1])[0].tolist() == [3, 2, 1, 0] and x.roll(1, dims=1)[0].tolist() == [3, 0, 1, 2]
    assert x.gather(dim=1, index=gg.tensor([[0], [1], [2]])).tolist() == [[0], [5], [10]]
    assert x.tile(dims=(2,)).shape == (3, 8) and x.tril(diagonal=-1)[0].tolist() == [0, 0, 0, 0]
    assert x[range(3), gg.tensor([0, 1, 2])].tolist() == [0, 5, 10]  # (the nn tutorial's nll by hand)
