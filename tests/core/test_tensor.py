"""Tensor creation, attributes, conversion, dtypes and operators."""
from __future__ import annotations

import numpy as np
import pytest

import graphgrad as gg


def test_tensor_from_python_and_numpy():
    assert gg.tensor([1.0, 2.0]).dtype == gg.float32
    assert gg.tensor([1, 2]).dtype == gg.int64
    assert gg.tensor(True).dtype == gg.bool
    assert gg.tensor([[1, 2], [3, 4]], dtype="float64").dtype == gg.float64
    a = np.arange(6, dtype=np.float64).reshape(2, 3)
    t = gg.tensor(a)
    assert t.dtype == gg.float64 and t.shape == (2, 3)
    a[0, 0] = 100
    assert t.numpy()[0, 0] == 0  # gg.tensor copies
    shared = gg.from_numpy(a)
    a[0, 1] = 7
    assert shared.numpy()[0, 1] == 7
    assert gg.tensor(3.5).shape == () and gg.tensor(3.5).item() == 3.5
    assert gg.tensor([gg.tensor(1.0), gg.tensor(2.0)]).shape == (2,)


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8",
                                   "bool"])
def test_every_dtype_and_astype(dtype):
    t = gg.ones(2, 3, dtype=dtype)
    assert t.dtype == np.dtype(dtype)
    assert t.astype("float32").dtype == gg.float32
    assert gg.as_dtype(dtype) == np.dtype(dtype)


def test_factories():
    assert gg.zeros(2, 3).shape == (2, 3) and gg.zeros((2, 3)).dtype == gg.float32
    assert gg.ones(4).numpy().sum() == 4
    assert gg.full((2, 2), 7).dtype == gg.int64 and gg.full((2,), 1.5).numpy().tolist() == [1.5, 1.5]
    assert gg.empty(3).shape == (3,)
    assert gg.arange(5).tolist() == [0, 1, 2, 3, 4] and gg.arange(5).dtype == gg.int64
    assert gg.arange(0, 1, 0.25).dtype == gg.float32
    np.testing.assert_allclose(gg.linspace(0, 1, 5).numpy(), [0, 0.25, 0.5, 0.75, 1])
    np.testing.assert_array_equal(gg.eye(3).numpy(), np.eye(3))
    x = gg.randn(2, 3, dtype="float64")
    assert gg.zeros_like(x).dtype == gg.float64 and gg.ones_like(x).shape == (2, 3)
    assert gg.full_like(x, 3.0).numpy().mean() == 3.0
    assert gg.rand(100).numpy().min() >= 0 and gg.rand(100).numpy().max() < 1
    r = gg.randint(0, 5, (1000,))
    assert r.dtype == gg.int64 and r.numpy().min() >= 0 and r.numpy().max() <= 4
    assert abs(gg.normal(2.0, 0.1, (2000,)).numpy().mean() - 2.0) < 0.02
    u = gg.uniform(-1, 1, (1000,)).numpy()
    assert u.min() >= -1 and u.max() < 1


def test_manual_seed_and_generator_reproducible():
    gg.manual_seed(123)
    a = gg.randn(5).numpy()
    gg.manual_seed(123)
    b = gg.randn(5).numpy()
    np.testing.assert_array_equal(a, b)
    g1, g2 = gg.Generator(7), gg.Generator(7)
    np.testing.assert_array_equal(gg.rand(4, generator=g1).numpy(), gg.rand(4, generator=g2).numpy())
    state = g1.get_state()
    first = gg.randint(0, 100, (5,), generator=g1).numpy()
    g1.set_state(state)
    np.testing.assert_array_equal(gg.randint(0, 100, (5,), generator=g1).numpy(), first)


def test_attributes_and_conversion():
    x = gg.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
    assert x.shape == (2, 3) and x.ndim == 2 and x.size == 6 and x.dtype == gg.float32
    assert x.device == "cpu" and x.is_leaf and x.requires_grad and x.grad is None
    assert len(x) == 2 and [r.shape for r in x] == [(3,), (3,)]
    assert np.asarray(x).shape == (2, 3) and x.tolist() == [[1, 2, 3], [4, 5, 6]]
    assert x.T.shape == (3, 2)
    y = x * 2
    assert not y.is_leaf and y.grad_fn is not None
    assert float(gg.tensor([2.5])) == 2.5 and int(gg.tensor(3)) == 3
    with pytest.raises(ValueError, match="one element"):
        x.item()
    with pytest.raises(TypeError):
        len(gg.tensor(1.0))


def test_repr_is_numpy_like_and_shows_grad(monkeypatch):
    monkeypatch.setattr(gg.config, "repr_dtype_prefix", "")  # (the PyTorch facade, once imported, sets these)
    monkeypatch.setattr(gg.config, "grad_fn_name", None)
    assert repr(gg.tensor([1.0, 2.0])) == "tensor([1., 2.])"
    assert "requires_grad=True" in repr(gg.tensor([1.0], requires_grad=True))
    assert "dtype=float64" in repr(gg.tensor([1.0], dtype="float64"))
    assert "grad_fn=<Mul>" in repr(gg.tensor([1.0], requires_grad=True) * 2)


def test_operators_with_scalars_and_numpy_arrays_reflected():
    x = gg.tensor([1.0, 2.0, 4.0])
    a = np.array([2.0, 2.0, 2.0], dtype=np.float32)
    np.testing.assert_allclose((a + x).numpy(), [3, 4, 6])
    np.testing.assert_allclose((a - x).numpy(), [1, 0, -2])
    np.testing.assert_allclose((a * x).numpy(), [2, 4, 8])
    np.testing.assert_allclose((a / x).numpy(), [2, 1, 0.5])
    np.testing.assert_allclose((2 ** x).numpy(), [2, 4, 16])
    np.testing.assert_allclose((7 // x).numpy(), [7, 3, 1])
    np.testing.assert_allclose((7 % x).numpy(), [0, 1, 3])
    assert isinstance(a + x, gg.Tensor)
    assert (x + 1).dtype == gg.float32 and (x * 2.5).dtype == gg.float32  # weak Python scalars
    i = gg.tensor([1, 2, 3])
    assert (i + 1).dtype == gg.int64 and (i / 2).dtype == gg.float32  # int / int: the default float
    b = gg.tensor([True, False])
    assert (b & gg.tensor([True, True])).tolist() == [True, False]
    assert (~b).tolist() == [False, True] and (b | False).tolist() == [True, False]
    assert (b ^ True).tolist() == [False, True]
    assert (-x).tolist() == [-1, -2, -4] and abs(-x).tolist() == [1, 2, 4]
    assert (x == 2).tolist() == [False, True, False] and (x >= 2).tolist() == [False, True, True]


def test_type_promotion_follows_numpy_except_where_it_widens_to_float64():
    f32, f64 = gg.ones(2, dtype="float32"), gg.ones(2, dtype="float64")
    i32, u8 = gg.ones(2, dtype="int32"), gg.ones(2, dtype="uint8")
    assert (f32 + f64).dtype == gg.float64
    assert (i32 + u8).dtype == gg.int32
    assert (u8 + 1).dtype == gg.uint8
    # PyTorch's rule where NumPy would give float64 with no float64 operand: the float tensor's dtype,
    # or the default float dtype for integers with a Python float
    assert (f32 * i32).dtype == gg.float32 and (i32 * 0.5).dtype == gg.float32 and (i32 / i32).dtype == gg.float32
    assert gg.maximum(i32, 0.5).dtype == gg.float32 and gg.where(i32 > 0, i32, 0.5).dtype == gg.float32
    assert (f64 * i32).dtype == gg.float64 and (i32 * f64).dtype == gg.float64
    assert gg.promote_types("float16", "float32") == gg.float32


def test_setitem_rules():
    x = gg.zeros(3, 4)
    x[0] = 1.0
    x[:, 1] = gg.tensor([5.0, 6.0, 7.0])
    x[x > 6] = -1.0
    assert x.numpy()[0].tolist() == [1, 5, 1, 1] and x.numpy()[2, 1] == -1
    w = gg.zeros(3, requires_grad=True)
    with pytest.raises(gg.GradError, match="in-place"):
        w[0] = 1.0
    with gg.no_grad():
        w[0] = 1.0
    assert w.numpy()[0] == 1.0


def test_default_dtype_can_be_changed():
    gg.set_default_dtype(gg.float64)
    try:
        assert gg.tensor([1.0]).dtype == gg.float64 and gg.randn(2).dtype == gg.float64
    finally:
        gg.set_default_dtype(gg.float32)
    assert gg.get_default_dtype() == gg.float32


def test_bool_of_symbolic_tensor_explains():
    s = gg.Tensor.symbolic(gg.TensorSpec((None, 3), "float32"))
    y = s * 2
    assert y.shape == (None, 3) and y.is_symbolic
    with pytest.raises(gg.GraphError, match="control flow"):
        bool(y.sum() > 0)


def test_multinomial_draws_by_weight_and_is_reproducible():
    probs = gg.tensor([[0.0, 1.0, 0.0], [0.2, 0.3, 0.5]])
    draws = gg.multinomial(probs, num_samples=20000, generator=gg.Generator(0))
    assert draws.shape == (2, 20000) and draws.dtype == gg.int64
    assert (draws.numpy()[0] == 1).all()
    np.testing.assert_allclose(np.bincount(draws.numpy()[1], minlength=3) / 20000, [0.2, 0.3, 0.5], atol=0.015)
    again = gg.multinomial(probs, num_samples=20000, generator=gg.Generator(0))
    np.testing.assert_array_equal(draws.numpy(), again.numpy())
    assert gg.multinomial(gg.tensor([1.0, 3.0]), generator=gg.Generator(1)).shape == (1,)
    with pytest.raises(ValueError, match="non-negative"):
        gg.multinomial(gg.tensor([1.0, -1.0]))


def test_tensors_print_in_pytorchs_layout(monkeypatch):
    """Four digits for every element of a float tensor, whole numbers as ``1.``, scientific notation
    from PyTorch's thresholds, elements right-aligned, rows wrapped at 80 characters after the prefix,
    ``...`` summaries over 1000 elements, and suffixes moved to a new line when they would not fit."""
    monkeypatch.setattr(gg.config, "repr_dtype_prefix", "")
    monkeypatch.setattr(gg.config, "grad_fn_name", None)
    cases = {
        "tensor([2.7183, 7.3891])": gg.tensor([2.718281828, 7.389056]),
        "tensor([1.0000e-05, 1.0000e+05])": gg.tensor([1e-5, 1e5]),
        "tensor([  0.5000,  -0.2500, 100.0000])": gg.tensor([0.5, -0.25, 100.0]),
        "tensor([1.0000e+09, 1.0000e+00])": gg.tensor([1e9, 1.0]),
        "tensor([   nan, 1.5000,    inf])": gg.tensor([float("nan"), 1.5, float("inf")]),
        "tensor([nan, 1.])": gg.tensor([float("nan"), 1.0]),
        "tensor(3.5000)": gg.tensor(3.5),
        "tensor(2.)": gg.tensor(2.0),
        "tensor(-0.0001)": gg.tensor(-0.0001234),
        "tensor([[ 1, -2],\n        [30,  4]])": gg.tensor([[1, -2], [30, 4]]),
        "tensor([ True, False])": gg.tensor([True, False]),
        "tensor([], size=(0, 3))": gg.zeros((0, 3)),
        "tensor([[[1.1000, 2.2000]],\n\n        [[5.5000, 6.6000]]])": gg.tensor([[[1.1, 2.2]], [[5.5, 6.6]]]),
        ("tensor([0.0000e+00, 1.0000e+00, 2.0000e+00,  ..., 1.9970e+03, 1.9980e+03,\n"
         "        1.9990e+03])"): gg.arange(2000.0),
        ("tensor([0.0000, 0.1429, 0.2857, 0.4286, 0.5714, 0.7143, 0.8571, 1.0000, 1.1429,\n"
         "        1.2857])"): gg.arange(10.0) / 7,
        ("tensor([[ 0.5000, -0.2500,  0.1250,  1.5000,  2.5000,  3.5000,  4.5000,  5.5000]],\n"
         "       dtype=float64, requires_grad=True)"):
            gg.tensor([[0.5, -0.25, 0.125, 1.5, 2.5, 3.5, 4.5, 5.5]], dtype="float64", requires_grad=True),
    }
    for want, x in cases.items():
        assert repr(x) == want


def test_set_printoptions_follows_pytorchs_arguments():
    saved = dict(gg.config.print_options)
    try:
        x = gg.tensor([0.123456789, 2.0])
        gg.set_printoptions(precision=4)
        assert repr(x) == "tensor([0.1235, 2.0000])"   # every element with 4 digits, as PyTorch
        assert repr(gg.tensor([1.0, 2.0])) == "tensor([1., 2.])"
        gg.set_printoptions(sci_mode=True)
        assert repr(x) == "tensor([1.2346e-01, 2.0000e+00])"
        gg.set_printoptions(profile="short", sci_mode=False)
        assert repr(x) == "tensor([0.12, 2.00])"
        gg.set_printoptions(threshold=5, edgeitems=1)
        assert "..." in repr(gg.arange(10.0))
        with pytest.raises(ValueError, match="profile"):
            gg.set_printoptions(profile="long")
    finally:
        gg.config.print_options.update(saved)


def test_a_nested_list_keeps_the_float_dtypes_of_its_numpy_and_tensor_entries():
    """As PyTorch: Python floats count as the default float, NumPy scalars, arrays and tensors inside
    the list as their own dtype, and the widest wins (values checked against PyTorch 2.13)."""
    cases = [([np.float64(0.5)], "float64"), ([np.float64(0.5), 1.0], "float64"), ([1.0, 2.0], "float32"),
             ([np.float32(1.0)], "float32"), ([gg.zeros(2), gg.ones(2)], "float32"),
             ([np.array([1.0, 2.0])], "float64"), ([1, 2], "int64"), ([np.float16(1)], "float16"),
             ([np.float16(1), 2.0], "float32"), ([[1, 2.5]], "float32"), ([1, np.int32(2)], "int64")]
    for data, want in cases:
        assert gg.tensor(data).dtype == np.dtype(want), data
