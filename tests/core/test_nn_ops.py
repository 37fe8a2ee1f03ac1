"""Focused tests for linalg/nn ops beyond the op table: numerical pitfalls, label dtypes, error
messages, batch-norm running statistics, dropout reproducibility, embedding gradients, and
agreement with PyTorch where it is installed."""
from __future__ import annotations

import numpy as np
import pytest

import graphgrad as gg


def _np_log_softmax(x, axis=-1):
    s = x - x.max(axis=axis, keepdims=True)
    return s - np.log(np.exp(s).sum(axis=axis, keepdims=True))


# ---- numerical stability ------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_log_softmax_large_logits_finite_with_correct_gradient(dtype):
    logits = np.array([[1e4, -1e4, 0.0], [-1e4, -1e4 + 1, 5e3]], dtype=dtype)
    x = gg.tensor(logits, requires_grad=True)
    y = gg.log_softmax(x)
    assert np.isfinite(y.numpy()).all()
    np.testing.assert_allclose(y.numpy(), [[0.0, -2e4, -1e4], [-1.5e4, -1.5e4 + 1, 0.0]], rtol=1e-6)
    (y * gg.tensor(np.array([[1.0, 2.0, 3.0], [0.5, -1.0, 2.0]], dtype=dtype))).sum().backward()
    assert np.isfinite(x.grad.numpy()).all() and x.grad.dtype == np.dtype(dtype)
    # d/dx sum(v * log_softmax(x)) = v - softmax(x) * sum(v)
    v = np.array([[1.0, 2.0, 3.0], [0.5, -1.0, 2.0]])
    expected = v - np.exp(_np_log_softmax(logits.astype(np.float64))) * v.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(x.grad.numpy(), expected, atol=1e-6)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_cross_entropy_large_logits_finite_with_correct_gradient(dtype):
    logits = np.array([[1e4, -1e4, 0.0], [-1e4, 1e4, 1e4], [3.0, -1e4, 1e4]], dtype=dtype)
    labels = np.array([1, 2, 0])
    x = gg.tensor(logits, requires_grad=True)
    loss = gg.cross_entropy(x, gg.tensor(labels))
    assert np.isfinite(loss.item())
    np.testing.assert_allclose(loss.item(), (2e4 + np.log(2) + (1e4 - 3)) / 3, rtol=1e-6)
    loss.backward()
    probs = np.exp(_np_log_softmax(logits.astype(np.float64), 1))
    expected = (probs - np.eye(3)[labels]) / 3
    assert x.grad.dtype == np.dtype(dtype)
    np.testing.assert_allclose(x.grad.numpy(), expected, atol=1e-6)


def test_softmax_large_logits():
    y = gg.softmax(gg.tensor([[1e4, 1e4 - 1.0, -1e4]]))
    assert np.isfinite(y.numpy()).all()
    np.testing.assert_allclose(y.numpy().sum(), 1.0, rtol=1e-6)


def test_binary_cross_entropy_saturated_inputs_have_finite_loss_and_gradient():
    x = gg.tensor([0.0, 1.0, 1.0, 0.0, 0.5], requires_grad=True)
    t = gg.tensor([1.0, 0.0, 1.0, 0.0, 1.0])
    loss = gg.binary_cross_entropy(x, t, reduction="none")
    np.testing.assert_allclose(loss.numpy(), [100.0, 100.0, 0.0, 0.0, np.log(2)], rtol=1e-6)
    loss.sum().backward()
    assert np.isfinite(x.grad.numpy()).all()


def test_bce_with_logits_large_and_zero_logits():
    x = gg.tensor([-1e4, 1e4, 0.0, 0.0], dtype="float64", requires_grad=True)
    t = gg.tensor([1.0, 0.0, 1.0, 0.0], dtype="float64")
    loss = gg.binary_cross_entropy_with_logits(x, t, reduction="sum")
    np.testing.assert_allclose(loss.item(), 2e4 + 2 * np.log(2))
    loss.backward()
    # d/dx = sigmoid(x) - t, exact also at x == 0 (zero-initialized output layers)
    np.testing.assert_allclose(x.grad.numpy(), [-1.0, 1.0, -0.5, 0.5])


# ---- labels ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("label_dtype", ["int64", "int32", "int16", "uint8"])
def test_cross_entropy_accepts_integer_labels(label_dtype):
    logits = np.random.default_rng(0).standard_normal((5, 4))
    labels = np.array([0, 3, 1, 2, 3], dtype=label_dtype)
    got = gg.cross_entropy(gg.tensor(logits), gg.tensor(labels)).item()
    expected = -_np_log_softmax(logits, 1)[np.arange(5), labels.astype(np.int64)].mean()
    np.testing.assert_allclose(got, expected, rtol=1e-12)


@pytest.mark.parametrize("fn", [gg.cross_entropy, gg.nll_loss])
def test_float_class_index_targets_raise_dtype_error(fn):
    with pytest.raises(gg.DTypeError, match=r"class-index targets must be an integer tensor, got float32"):
        fn(gg.randn(4, 3), gg.tensor([0.0, 2.0, 1.0, 1.0]))


def test_bool_targets_raise_dtype_error():
    with pytest.raises(gg.DTypeError, match="integer"):
        gg.cross_entropy(gg.randn(2, 3), gg.tensor(np.array([True, False])))


def test_label_shape_and_range_errors():
    with pytest.raises(gg.ShapeError, match=r"cross_entropy: input \(4, 3\) needs a class-index target of shape \(4,\)"):
        gg.cross_entropy(gg.randn(4, 3), gg.tensor([0, 1]))
    with pytest.raises(IndexError, match="out of bounds"):
        gg.cross_entropy(gg.randn(2, 3), gg.tensor([0, 3]))
    assert np.isfinite(gg.cross_entropy(gg.randn(2, 3), gg.tensor([0, -100])).item())


def test_cross_entropy_all_ignored_is_nan_like_pytorch():
    with np.errstate(invalid="ignore"):
        assert np.isnan(gg.cross_entropy(gg.randn(2, 3), gg.tensor([-100, -100])).item())


def test_bad_reduction():
    with pytest.raises(ValueError, match="reduction"):
        gg.mse_loss(gg.randn(3), gg.randn(3), reduction="avg")


# ---- error messages --------------------------------------------------------------------------------
def test_matmul_shape_mismatch_names_op_and_shapes():
    with pytest.raises(gg.ShapeError, match=r"matmul: \(3, 4\) @ \(5, 6\)"):
        gg.matmul(gg.ones((3, 4)), gg.ones((5, 6)))
    with pytest.raises(gg.ShapeError, match=r"matmul: \(2, 3, 4\) @ \(3, 4, 2\): batch dimensions"):
        gg.ones((2, 3, 4)) @ gg.ones((3, 4, 2))
    with pytest.raises(gg.ShapeError, match=r"matmul: \(\) @ \(3,\)"):
        gg.matmul(gg.tensor(2.0), gg.ones(3))


def test_matmul_shape_mismatch_symbolic():
    a = gg.Tensor.symbolic(gg.TensorSpec((None, 4), "float32"))
    b = gg.Tensor.symbolic(gg.TensorSpec((5, 6), "float32"))
    with pytest.raises(gg.ShapeError, match=r"matmul: \(None, 4\) @ \(5, 6\)"):
        gg.matmul(a, b)
    out = gg.matmul(a, gg.Tensor.symbolic(gg.TensorSpec((4, 6), "float32")))
    assert out.shape == (None, 6)


def test_einsum_errors():
    with pytest.raises(gg.ShapeError, match="index 'i' has sizes 3 and 4"):
        gg.einsum("ii->", gg.ones((3, 4)))
    with pytest.raises(gg.ShapeError, match="index 'j' has sizes 4 and 5"):
        gg.einsum("ij,jk->ik", gg.ones((3, 4)), gg.ones((5, 2)))
    with pytest.raises(gg.ShapeError, match="2 operand"):
        gg.einsum("ij,jk->ik", gg.ones((3, 4)))


def test_linalg_shape_errors():
    with pytest.raises(gg.ShapeError, match=r"inv: expected a square matrix.*\(3, 4\)"):
        gg.inv(gg.ones((3, 4)))
    with pytest.raises(gg.ShapeError, match=r"solve: a \(3, 3\) and b \(4,\)"):
        gg.solve(gg.eye(3), gg.ones(4))


def test_einsum_attention_second_order():
    rng = np.random.default_rng(0)
    q, k = gg.tensor(rng.standard_normal((1, 2, 3, 4))), gg.tensor(rng.standard_normal((1, 2, 5, 4)))
    gg.check_grad(lambda q, k: gg.softmax(gg.einsum("bhqd,bhkd->bhqk", q, k)), q, k, order=2)


# ---- batch norm ------------------------------------------------------------------------------------
@pytest.mark.parametrize("shape", [(8, 3), (4, 3, 2, 5)])
def test_batch_norm_updates_running_stats_in_place(shape):
    rng = np.random.default_rng(1)
    x = rng.standard_normal(shape).astype(np.float32) * 2 + 1
    rm, rv = gg.zeros(3), gg.ones(3)
    rm_data = rm.data
    axes = (0,) + tuple(range(2, len(shape)))
    y = gg.batch_norm(gg.tensor(x), rm, rv, training=True, momentum=0.2)
    assert rm.data is rm_data and rm.dtype == np.float32 and rv.dtype == np.float32
    np.testing.assert_allclose(rm.numpy(), 0.2 * x.mean(axis=axes), rtol=1e-5)
    np.testing.assert_allclose(rv.numpy(), 0.8 + 0.2 * x.var(axis=axes, ddof=1), rtol=1e-5)
    view = (1, 3) + (1,) * (len(shape) - 2)
    expected = (x - x.mean(axis=axes).reshape(view)) / np.sqrt(x.var(axis=axes).reshape(view) + 1e-5)
    np.testing.assert_allclose(y.numpy(), expected, rtol=1e-4, atol=1e-5)
    # eval mode uses (and does not change) the running stats
    before = rm.numpy().copy()
    y_eval = gg.batch_norm(gg.tensor(x), rm, rv, training=False)
    np.testing.assert_array_equal(rm.numpy(), before)
    np.testing.assert_allclose(y_eval.numpy(), (x - before.reshape(view)) / np.sqrt(rv.numpy().reshape(view) + 1e-5),
                               rtol=1e-5)


def test_batch_norm_training_without_running_stats_and_errors():
    x = gg.randn(4, 3, requires_grad=True)
    gg.batch_norm(x, None, None, training=True).sum().backward()
    assert x.grad.shape == (4, 3)
    with pytest.raises(ValueError, match="more than 1 value per channel"):
        gg.batch_norm(gg.randn(1, 3), gg.zeros(3), gg.ones(3), training=True)
    with pytest.raises(gg.ShapeError, match=r"weight must have shape \(3,\)"):
        gg.batch_norm(gg.randn(4, 3), None, None, weight=gg.ones(4), training=True)


# ---- dropout ---------------------------------------------------------------------------------------
def test_dropout_reproducible_with_generator():
    x = gg.ones((50, 40))
    a = gg.dropout(x, 0.3, generator=gg.Generator(123)).numpy()
    b = gg.dropout(x, 0.3, generator=gg.Generator(123)).numpy()
    np.testing.assert_array_equal(a, b)
    g = gg.Generator(123)
    first, second = gg.dropout(x, 0.3, generator=g).numpy(), gg.dropout(x, 0.3, generator=g).numpy()
    np.testing.assert_array_equal(first, a)
    assert not np.array_equal(first, second)
    assert set(np.unique(a)) <= {0.0, np.float32(1 / 0.7)}
    assert abs((a == 0).mean() - 0.3) < 0.05
    gg.manual_seed(5)
    c = gg.dropout(x, 0.5).numpy()
    gg.manual_seed(5)
    np.testing.assert_array_equal(gg.dropout(x, 0.5).numpy(), c)


def test_dropout_eval_is_identity_and_gradient_is_mask():
    x = gg.randn(6, 7, requires_grad=True)
    assert gg.dropout(x, 0.5, training=False) is x
    assert gg.dropout(x, 0.0) is x
    y = gg.dropout(x, 0.25, generator=gg.Generator(0))
    assert y.dtype == np.float32
    y.sum().backward()
    mask = y.numpy() / x.numpy()
    np.testing.assert_allclose(x.grad.numpy(), mask, rtol=1e-6)
    np.testing.assert_array_equal(gg.dropout(x, 1.0).numpy(), np.zeros((6, 7)))
    with pytest.raises(ValueError):
        gg.dropout(x, 1.5)


# ---- embedding -------------------------------------------------------------------------------------
def test_embedding_gradient_accumulates_and_skips_padding():
    w = gg.tensor(np.arange(12.0).reshape(4, 3), requires_grad=True)
    idx = gg.tensor([[1, 3, 1], [0, 1, 0]])
    out = gg.embedding(idx, w, padding_idx=0)
    np.testing.assert_array_equal(out.numpy(), w.numpy()[idx.numpy()])
    out.sum().backward()
    np.testing.assert_array_equal(w.grad.numpy(), [[0, 0, 0], [3, 3, 3], [0, 0, 0], [1, 1, 1]])
    w.grad = None
    gg.embedding(idx, w, padding_idx=-1).sum().backward()  # -1 is row 3
    np.testing.assert_array_equal(w.grad.numpy(), [[2, 2, 2], [3, 3, 3], [0, 0, 0], [0, 0, 0]])


def test_embedding_errors():
    with pytest.raises(gg.DTypeError, match="integer"):
        gg.embedding(gg.tensor([0.0, 1.0]), gg.randn(3, 2))
    with pytest.raises(IndexError):
        gg.embedding(gg.tensor([5]), gg.randn(3, 2))


def test_embedding_second_order_through_weight_use():
    w = gg.tensor(np.random.default_rng(0).standard_normal((4, 3)))
    idx = gg.tensor([1, 2, 1])
    gg.check_grad(lambda w: (gg.embedding(idx, w) ** 2).sum(axis=1), w, order=2)


# ---- agreement with PyTorch ------------------------------------------------------------------------
def _torch():
    return pytest.importorskip("torch")


@pytest.mark.parametrize("kwargs", [
    {}, {"reduction": "sum"}, {"reduction": "none"}, {"weight": True}, {"ignore_index": 1},
    {"weight": True, "ignore_index": 2, "label_smoothing": 0.15}, {"label_smoothing": 0.3, "reduction": "none"},
    {"weight": True, "label_smoothing": 0.1, "reduction": "sum"},
])
@pytest.mark.parametrize("spatial", [False, True])
def test_cross_entropy_matches_torch(kwargs, spatial):
    torch = _torch()
    rng = np.random.default_rng(3)
    shape = (5, 4, 3) if spatial else (6, 4)
    x = rng.standard_normal(shape)
    t = rng.integers(0, 4, (shape[0],) + shape[2:])
    kw = dict(kwargs)
    t.reshape(-1)[::4] = kw.get("ignore_index", -100)
    w = rng.uniform(0.2, 2.0, 4)
    if kw.pop("weight", False):
        kw["weight"] = w
    tx = torch.tensor(x, requires_grad=True)
    tk = {k: torch.tensor(v) if isinstance(v, np.ndarray) else v for k, v in kw.items()}
    expected = torch.nn.functional.cross_entropy(tx, torch.tensor(t), **tk)
    expected.sum().backward()
    gx = gg.tensor(x, requires_grad=True)
    got = gg.cross_entropy(gx, gg.tensor(t), **{k: gg.tensor(v) if isinstance(v, np.ndarray) else v
                                                  for k, v in kw.items()})
    np.testing.assert_allclose(got.numpy(), expected.detach().numpy(), rtol=1e-10, atol=1e-12)
    got.sum().backward()
    np.testing.assert_allclose(gx.grad.numpy(), tx.grad.numpy(), rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("kwargs", [{}, {"weight": True, "label_smoothing": 0.2}, {"reduction": "none"}])
def test_cross_entropy_probabilities_match_torch(kwargs):
    torch = _torch()
    rng = np.random.default_rng(4)
    x = rng.standard_normal((3, 4, 2))
    p = rng.dirichlet(np.ones(4), (3, 2)).transpose(0, 2, 1)
    kw = dict(kwargs)
    if kw.pop("weight", False):
        kw["weight"] = rng.uniform(0.2, 2.0, 4)
    expected = torch.nn.functional.cross_entropy(torch.tensor(x), torch.tensor(p),
                                                 **{k: torch.tensor(v) if isinstance(v, np.ndarray) else v
                                                    for k, v in kw.items()})
    got = gg.cross_entropy(gg.tensor(x), gg.tensor(p), **{k: gg.tensor(v) if isinstance(v, np.ndarray) else v
                                                           for k, v in kw.items()})
    np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=1e-10)


def test_binary_losses_match_torch():
    torch = _torch()
    F = torch.nn.functional
    rng = np.random.default_rng(5)
    x, t = rng.standard_normal((4, 3)) * 3, rng.uniform(0, 1, (4, 3))
    w, pw = rng.uniform(0.5, 2, (4, 1)), rng.uniform(0.5, 2, (3,))
    T = torch.tensor
    np.testing.assert_allclose(
        gg.binary_cross_entropy_with_logits(gg.tensor(x), gg.tensor(t), gg.tensor(w), gg.tensor(pw)).item(),
        F.binary_cross_entropy_with_logits(T(x), T(t), T(w), pos_weight=T(pw)).item(), rtol=1e-12)
    s = 1 / (1 + np.exp(-x))
    np.testing.assert_allclose(gg.binary_cross_entropy(gg.tensor(s), gg.tensor(t), gg.tensor(w), "sum").item(),
                               F.binary_cross_entropy(T(s), T(t), T(w), reduction="sum").item(), rtol=1e-12)
    np.testing.assert_allclose(gg.huber_loss(gg.tensor(x), gg.tensor(t), delta=0.7).item(),
                               F.huber_loss(T(x), T(t), delta=0.7).item(), rtol=1e-12)


def test_norms_match_torch():
    torch = _torch()
    F = torch.nn.functional
    rng = np.random.default_rng(6)
    x = rng.standard_normal((3, 4, 5))
    w, b = rng.standard_normal(4), rng.standard_normal(4)
    T = torch.tensor
    np.testing.assert_allclose(gg.group_norm(gg.tensor(x), 2, gg.tensor(w), gg.tensor(b)).numpy(),
                               F.group_norm(T(x), 2, T(w), T(b)).numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(gg.layer_norm(gg.tensor(x), (4, 5)).numpy(),
                               F.layer_norm(T(x), (4, 5)).numpy(), rtol=1e-10, atol=1e-12)
    rm, rv = gg.tensor(rng.standard_normal(4)), gg.tensor(rng.uniform(0.5, 2, 4))
    trm, trv = T(rm.numpy().copy()), T(rv.numpy().copy())
    got = gg.batch_norm(gg.tensor(x), rm, rv, gg.tensor(w), gg.tensor(b), training=True, momentum=0.3)
    expected = F.batch_norm(T(x), trm, trv, T(w), T(b), training=True, momentum=0.3)
    np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(rm.numpy(), trm.numpy(), rtol=1e-12)
    np.testing.assert_allclose(rv.numpy(), trv.numpy(), rtol=1e-12)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_fused_cross_entropy_equals_log_softmax_plus_nll(reduction):
    rng = np.random.default_rng(7)
    logits = rng.standard_normal((6, 4)) * 3
    target = np.array([0, 3, -100, 2, 1, -100])
    a = gg.tensor(logits, requires_grad=True)
    b = gg.tensor(logits, requires_grad=True)
    fused = gg.cross_entropy(a, gg.tensor(target), ignore_index=-100, reduction=reduction)
    assert fused._node.op.name == "SoftmaxCrossEntropy"
    composed = gg.nll_loss(gg.log_softmax(b, axis=1), gg.tensor(target), ignore_index=-100, reduction=reduction)
    np.testing.assert_allclose(fused.numpy(), composed.numpy(), rtol=1e-12)
    upstream = gg.tensor(rng.standard_normal(fused.shape))
    (ga,) = gg.grad(fused, a, upstream, create_graph=True)
    (gb,) = gg.grad(composed, b, upstream, create_graph=True)
    np.testing.assert_allclose(ga.numpy(), gb.numpy(), rtol=1e-10, atol=1e-14)
    (ha,) = gg.grad((ga * ga).sum(), a)  # second order through the gradient op
    (hb,) = gg.grad((gb * gb).sum(), b)
    np.testing.assert_allclose(ha.numpy(), hb.numpy(), rtol=1e-8, atol=1e-12)
