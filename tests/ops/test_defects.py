"""Regression tests for behaviours once different from PyTorch (values from torch 2.13; the other
special points are PyTorch-oracle cases in tests/oracle/cases_defects.py)."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import graphgrad as gg


def test_power_gradient_with_respect_to_a_negative_exponent_at_zero_is_minus_infinity():
    x = gg.tensor([0.0], dtype=gg.float64, requires_grad=True)
    y = gg.tensor([-1.0], dtype=gg.float64, requires_grad=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        (x ** y).sum().backward()
    assert x.grad.tolist() == [-np.inf] and y.grad.tolist() == [-np.inf]   # torch: [-inf], [-inf]


def test_zero_d_scans_and_reductions_keep_zero_d():
    x = gg.tensor(3.0)
    for fn in (gg.cumsum, gg.cumprod, gg.sum, gg.max, gg.logsumexp):
        assert fn(x, 0).shape == () and fn(x, -1).shape == ()
    assert gg.sum(x, 0, keepdims=True).shape == ()   # torch.sum(t, 0, keepdim=True) of a 0-d t is 0-d


def test_float16_softplus_mish_and_mean_losses_stay_finite():
    h = gg.tensor([100.0, -100.0, 20.0, 5.0], dtype=gg.float16)
    np.testing.assert_array_equal(gg.softplus(h).numpy(), np.array([100.0, 0.0, 20.0, 5.0078125], np.float16))
    assert np.isfinite(gg.mish(h).numpy()).all() and gg.softplus(h).dtype == gg.float16
    logits = gg.tensor(np.full(4096, 30.0), dtype=gg.float16)
    loss = gg.binary_cross_entropy_with_logits(logits, gg.zeros(4096, dtype=gg.float16))
    assert loss.dtype == gg.float16 and loss.item() == 30.0   # torch: 30.0 (a float16 sum would overflow)


@pytest.mark.parametrize("loss", [gg.nn.MSELoss(), gg.nn.L1Loss(), gg.nn.HuberLoss(), gg.nn.SmoothL1Loss()])
def test_a_regression_loss_warns_when_target_and_input_shapes_differ(loss):
    with pytest.warns(UserWarning, match=r"target size \(4,\) that is different to the input size \(4, 1\)"):
        loss(gg.zeros(4, 1), gg.zeros(4))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        loss(gg.zeros(4), gg.zeros(4))


def test_nan_to_num_isclose_and_fmod_at_special_values():
    x = gg.tensor([1.0, np.nan, np.inf, -np.inf], requires_grad=True)
    out = gg.nan_to_num(x, nan=0.5)
    big = float(np.finfo(np.float32).max)
    assert out.tolist() == [1.0, 0.5, big, -big] and out.dtype == gg.float32   # torch.nan_to_num's values
    out.sum().backward()
    assert x.grad.tolist() == [1.0, 0.0, 0.0, 0.0]
    assert gg.nan_to_num(x, posinf=9.0, neginf=-9.0).tolist()[2:] == [9.0, -9.0]
    a = gg.tensor([1.0, np.nan, np.inf, -np.inf, 1.0])
    assert gg.isclose(a, a).tolist() == [True, False, True, True, True]          # torch.isclose
    assert gg.isclose(a, a, equal_nan=True).tolist() == [True] * 5
    assert gg.fmod(gg.tensor([-3.0, 3.0, 5.5]), 2.0).tolist() == [-1.0, 1.0, 1.5]  # the sign of the dividend


def test_zero_d_tensors_take_dim_0_and_minus_1_where_pytorch_does():
    for dim in (0, -1):
        x = gg.tensor(2.5, dtype=gg.float64, requires_grad=True)
        outs = [x.permute(()), gg.permute(x, ()), x.transpose(0, dim), gg.swapaxes(x, dim, 0), gg.moveaxis(x, 0, dim),
                x.squeeze(dim), x.flip(dim), x.gather(dim, gg.tensor(0)), x.scatter(dim, gg.tensor(0), x * 2),
                x.index_select(dim, gg.tensor([0])), gg.softmax(x, dim), x.scatter_reduce(dim, gg.tensor(0), x, "amax")]
        assert [o.shape for o in outs] == [()] * len(outs)   # torch: all 0-d
        assert [o.item() for o in outs] == [2.5] * 7 + [2.5, 5.0, 2.5, 1.0, 2.5]
        sum(outs).backward()
        assert x.grad.item() == 12.0   # torch: 12 (scatter's x is overwritten, its src gives 2; amax's tie 0.5 + 0.5)
    with pytest.raises(gg.ShapeError):
        gg.tensor([1.0, 2.0]).permute(())   # torch: "number of dims don't match in permute"
    with pytest.raises(gg.ShapeError):
        gg.tensor(1.0).squeeze(1)           # torch: dimension out of range (expected to be in range of [-1, 0])


def test_randperm_numel_is_tensor():
    p = gg.randperm(10, generator=gg.Generator(3))
    assert p.dtype == gg.int64 and p.shape == (10,) and sorted(p.tolist()) == list(range(10))
    assert p.tolist() == gg.randperm(10, generator=gg.Generator(3)).tolist()
    assert gg.randperm(0).shape == (0,) and gg.randperm(4, dtype="int32").dtype == gg.int32
    assert gg.numel(gg.zeros(2, 3, 4)) == 24 and gg.numel(gg.tensor(1.0)) == 1 and gg.zeros(2, 0).numel() == 0
    assert gg.is_tensor(gg.zeros(1)) and not gg.is_tensor(np.zeros(1)) and not gg.is_tensor(1.0)


def test_meshgrid_defaults_numpy_in_graphgrad_and_pytorch_in_compat_torch():
    import graphgrad.compat.torch as torch

    a, b = gg.tensor([1.0, 2.0]), gg.tensor([3.0, 4.0, 5.0])
    assert [g.shape for g in gg.meshgrid(a, b)] == [(3, 2), (3, 2)]         # np.meshgrid: 'xy'
    x, y = torch.meshgrid(a, b)                                             # torch.meshgrid: 'ij'
    assert x.shape == y.shape == (2, 3) and x.tolist() == [[1.0] * 3, [2.0] * 3] and y.tolist()[0] == [3.0, 4.0, 5.0]


def test_cross_entropy_gradient_of_a_linear_layer_with_fewer_rows_than_classes():
    # without MKL, linear computes such a product as (w x^T)^T, a transposed view; the softmax
    # cross-entropy gradient subtracted the target's 1 from a flattened copy of it (dropped)
    rng = np.random.default_rng(0)
    layer = gg.nn.Linear(8, 10)
    x, y = gg.tensor(rng.standard_normal((2, 8)).astype(np.float32)), gg.tensor([3, 7])
    out = layer(x)
    gg.cross_entropy(out, y).backward()
    logits = out.numpy().astype(np.float64)
    p = np.exp(logits - logits.max(1, keepdims=True))
    p /= p.sum(1, keepdims=True)
    p[[0, 1], [3, 7]] -= 1
    np.testing.assert_allclose(layer.bias.grad.numpy(), p.sum(0) / 2, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(layer.weight.grad.numpy(), p.T @ x.numpy() / 2, rtol=1e-5, atol=1e-6)


def test_fill_diagonal_of_a_transposed_view():
    import graphgrad.compat.torch as torch

    expected = np.zeros((5, 3))
    np.fill_diagonal(expected, 1.0, wrap=True)
    x = torch.zeros(3, 5).t()                          # a transposed view, as torch's .t()
    x.fill_diagonal_(1.0, wrap=True)
    np.testing.assert_array_equal(x.numpy(), expected)


def test_gather_and_scatter_take_a_0d_index_of_a_vector_as_pytorch():
    """A 0-d index of a 0-d or 1-d input counts as shape (1,) (the tutorials' one-hot target transform,
    ``zeros(10).scatter_(0, tensor(y), value=1)``); it wrote every element."""
    np.testing.assert_array_equal(gg.scatter(gg.zeros(10), 0, gg.tensor(3), value=1.0).numpy(), np.eye(10)[3])
    assert gg.scatter_add(gg.zeros(5), 0, gg.tensor(2), gg.tensor(4.0)).tolist() == [0, 0, 4, 0, 0]
    x = gg.arange(5.0, requires_grad=True)
    picked = gg.gather(x, 0, gg.tensor(2))
    assert picked.shape == () and float(picked) == 2.0
    picked.backward()
    assert x.grad.tolist() == [0, 0, 1, 0, 0]


def test_scatter_with_an_index_of_another_rank_is_an_error_in_eager_mode():
    with pytest.raises(gg.ShapeError, match="must have the rank of the input"):
        gg.scatter(gg.zeros((2, 3)), 1, gg.tensor([2, 0]), value=1.0)
    with pytest.raises(gg.ShapeError, match="must have the rank of the input"):
        gg.gather(gg.zeros((2, 3)), 1, gg.tensor([2, 0]))


def test_fmod_of_integers_stays_integer():
    """C's fmod of integers is an integer with the dividend's sign (it came back float32)."""
    out = gg.fmod(gg.tensor([-7, 7, -7, 7, 0, 6]), gg.tensor([2, 2, -2, -2, 3, 3]))
    assert out.dtype == gg.int64 and out.tolist() == [-1, 1, -1, 1, 0, 0]
    assert gg.fmod(gg.tensor([-7, 7]), 3).tolist() == [-1, 1]
    assert gg.tensor([-7, 8]).fmod(3).dtype == gg.int64


def test_flip_method_takes_its_dims_spread_as_pytorch():
    x = gg.arange(24.0).reshape(2, 3, 4)
    np.testing.assert_array_equal(x.flip(0, 2).numpy(), x.numpy()[::-1, :, ::-1])
    np.testing.assert_array_equal(x.flip([1]).numpy(), x.numpy()[:, ::-1])
    np.testing.assert_array_equal(x.flip(dims=(0, 1)).numpy(), x.numpy()[::-1, ::-1])


def test_contiguous_copies_a_transposed_view_and_strides_are_the_arrays():
    """As PyTorch: ``x.t().contiguous()`` is a copy (writing into it left ``x`` changed), and
    ``is_contiguous``/``stride`` describe the actual layout."""
    x = gg.ones(3, 2)
    y = x.t().contiguous()
    y[0, 0] = 5.0
    assert float(x.sum()) == 6.0
    assert not x.t().is_contiguous() and x.is_contiguous() and y.is_contiguous()
    assert x.stride() == (2, 1) and x.t().stride() == (1, 2) and x.contiguous() is x
    w = gg.ones(3, 2, requires_grad=True)
    (w.t().contiguous() * 2).sum().backward()
    assert w.grad.tolist() == [[2.0, 2.0]] * 3


def test_real_and_imag_of_a_complex_tensor():
    values = gg.linalg.eigvals(gg.tensor([[2.0, 0.0], [0.0, 3.0]]))
    assert values.dtype.kind == "c"
    assert values.real.dtype.kind == "f" and sorted(values.real.tolist()) == [2.0, 3.0]
    assert values.imag.tolist() == [0.0, 0.0]
    x = gg.ones(2)
    assert x.real is x
    with pytest.raises(TypeError):
        x.imag


def test_a_tensor_compared_with_none_or_a_string_is_not_equal():
    x = gg.tensor([1, 2])
    assert (x == "a") is False and (x != None) is True and (x == None) is False  # noqa: E711
    assert x not in [None, "a"]
    assert (x == 1).tolist() == [True, False]


def test_diagonal_of_an_eager_tensor_is_a_view_as_in_pytorch():
    """Writes into ``x.diagonal()`` reach ``x`` (``cov.diagonal().add_(eps)``); the gradient is unchanged."""
    x = gg.zeros(3, 4)
    x.diagonal().fill_(1.0)
    np.testing.assert_array_equal(x.numpy(), np.eye(3, 4))
    y = gg.zeros(2, 3, 3)
    y.diagonal(1, 1, 2).add_(5.0)
    np.testing.assert_array_equal(y.numpy()[1], 5.0 * np.eye(3, k=1))
    z = gg.arange(12.0).reshape(3, 4)
    np.testing.assert_array_equal(z.diagonal(-1).numpy(), np.diagonal(z.numpy(), -1))
    w = gg.arange(12.0, requires_grad=True)
    (w.reshape(3, 4).diagonal(1) * gg.tensor([1.0, 2.0, 3.0])).sum().backward()
    assert w.grad.tolist() == [0, 1, 0, 0, 0, 0, 2, 0, 0, 0, 0, 3]


def test_numpy_scalars_are_weak_in_promotion_as_python_numbers():
    """As PyTorch: a NumPy scalar counts as the number it holds (``scores / np.sqrt(d)`` stays float32;
    under NumPy's rule it made the whole attention float64)."""
    x = gg.ones(2)
    assert (x * np.float64(2.0)).dtype == gg.float32 and (np.float64(2.0) * x).dtype == gg.float32
    assert (x / np.sqrt(4.0)).dtype == gg.float32 and (x + np.int64(3)).tolist() == [4.0, 4.0]
    assert (gg.ones(2, dtype="int32") * np.int64(2)).dtype == gg.int32
    assert (gg.ones(2, dtype="float64") * np.float32(2.0)).dtype == gg.float64
    assert gg.tensor(np.float64(1.0)).dtype == gg.float64  # creating from one keeps its dtype


def test_cat_stack_and_where_promote_without_float64_by_surprise():
    assert gg.stack([gg.ones(1, dtype="int64"), gg.ones(1)]).dtype == gg.float32
    assert gg.cat([gg.ones(1), gg.ones(1, dtype="float64")]).dtype == gg.float64
    assert gg.cat([gg.ones(1, dtype="int32"), gg.ones(1, dtype="int64")]).dtype == gg.int64
    x = gg.ones(2, requires_grad=True)
    y = gg.cat([x, gg.tensor([5])])
    y.sum().backward()
    assert y.dtype == gg.float32 and x.grad.tolist() == [1.0, 1.0]
    assert gg.where(gg.tensor([True, False]), 1.0, 0).dtype == gg.float32
    assert gg.where(gg.tensor([True, False]), 1, 0).dtype == gg.int64


def test_a_0d_float64_tensor_does_not_widen_a_float32_tensor():
    """PyTorch's rule for 0-d tensors: beside a tensor with dimensions of the same kind, the dimensioned
    dtype wins (``x * torch.tensor(r)`` with a float64 reward stays float32); of a higher kind, it counts."""
    x = gg.ones(2)
    assert (x + gg.tensor(2.5, dtype="float64")).dtype == gg.float32
    assert (gg.tensor(2.5, dtype="float64") * x).dtype == gg.float32
    assert (gg.ones(2, dtype="int32") + gg.tensor(2.5, dtype="float64")).dtype == gg.float64
    assert (gg.tensor(1.0) + gg.tensor(1.0, dtype="float64")).dtype == gg.float64
    w = gg.ones(2, requires_grad=True)
    s = gg.tensor(3.0, dtype="float64", requires_grad=True)
    (w * s).sum().backward()
    assert w.grad.dtype == gg.float32 and s.grad.dtype == gg.float64 and float(s.grad) == 2.0

    @gg.function
    def scaled(v):
        return v * gg.tensor(3.0, dtype="float64")

    assert scaled(gg.ones(2)).dtype == gg.float32
