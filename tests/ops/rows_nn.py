"""Op-table rows for nn ops and losses: softmax, log_softmax, cross_entropy, nll_loss, BCE, regression
losses, batch/layer/group norm, dropout, embedding. References are NumPy float64 re-implementations
of the PyTorch formulas (tests/core/test_nn_ops.py also compares with PyTorch when it is installed)."""
from __future__ import annotations

import numpy as np

import graphgrad as gg
from graphgrad.ops.attention import _apply_attention
from tests.ops.op_table import A, F, I, OpSpec, P


# ---- NumPy references -------------------------------------------------------------------------------
def np_log_softmax(x, axis=-1):
    s = x - x.max(axis=axis, keepdims=True)
    return s - np.log(np.exp(s).sum(axis=axis, keepdims=True))


def np_softmax(x, axis=-1):
    return np.exp(np_log_softmax(x, axis))


def np_reduce(loss, reduction):
    return loss if reduction == "none" else loss.sum() if reduction == "sum" else loss.mean()


def np_cross_entropy(x, t, weight=None, ignore_index=-100, reduction="mean", label_smoothing=0.0, logits=True):
    """PyTorch's cross_entropy (``logits=False``: nll_loss on log-probabilities ``x``)."""
    ca = 1 if x.ndim >= 2 else 0
    c = x.shape[ca]
    logp = np_log_softmax(x, ca) if logits else x
    w = np.ones(c) if weight is None else weight
    wshape = [1] * x.ndim
    wshape[ca] = c
    wb = w.reshape(wshape)
    ls = label_smoothing
    if t.dtype.kind == "f":
        tt = t * (1 - ls) + ls / c if ls > 0 else t
        loss = -(logp * tt * wb).sum(axis=ca)
        if reduction == "mean":
            return loss.sum() / (x.size / c)
        return np_reduce(loss, reduction)
    valid = t != ignore_index
    tc = np.where(valid, t, 0)
    picked = np.take_along_axis(logp, np.expand_dims(tc, ca), ca).squeeze(ca)
    sw = w[tc] * valid
    nll = -picked * sw
    smooth = -(logp * wb).sum(axis=ca) * valid
    if reduction == "none":
        return (1 - ls) * nll + ls / c * smooth
    total = (1 - ls) * nll.sum() + ls / c * smooth.sum()
    return total if reduction == "sum" else total / sw.sum()


def np_bce(x, t, weight=None, reduction="mean"):
    with np.errstate(divide="ignore"):
        loss = -(t * np.maximum(np.log(x), -100) + (1 - t) * np.maximum(np.log(1 - x), -100))
    return np_reduce(loss if weight is None else loss * weight, reduction)


def np_bce_logits(x, t, weight=None, pos_weight=None, reduction="mean"):
    sp = np.logaddexp(0, -x)  # log(1 + exp(-x))
    lw = 1 if pos_weight is None else 1 + (pos_weight - 1) * t
    loss = (1 - t) * x + lw * sp
    return np_reduce(loss if weight is None else loss * weight, reduction)


def np_huber(x, t, reduction="mean", delta=1.0):
    d = np.abs(x - t)
    return np_reduce(np.where(d < delta, 0.5 * d * d, delta * (d - 0.5 * delta)), reduction)


def _view(p, ndim):
    return p.reshape((1, -1) + (1,) * (ndim - 2))


def np_batch_norm(x, rm, rv, w=None, b=None, training=False, eps=1e-5):
    axes = (0,) + tuple(range(2, x.ndim))
    if training:
        mean, var = x.mean(axis=axes, keepdims=True), x.var(axis=axes, keepdims=True)
    else:
        mean, var = _view(rm, x.ndim), _view(rv, x.ndim)
    y = (x - mean) / np.sqrt(var + eps)
    if w is not None:
        y = y * _view(w, x.ndim)
    if b is not None:
        y = y + _view(b, x.ndim)
    return y


def np_layer_norm(x, k, w=None, b=None, eps=1e-5):
    axes = tuple(range(x.ndim - k, x.ndim))
    y = (x - x.mean(axis=axes, keepdims=True)) / np.sqrt(x.var(axis=axes, keepdims=True) + eps)
    return y * (1 if w is None else w) + (0 if b is None else b)


def np_group_norm(x, groups, w=None, b=None, eps=1e-5):
    g = x.reshape(x.shape[0], groups, -1)
    y = ((g - g.mean(axis=2, keepdims=True)) / np.sqrt(g.var(axis=2, keepdims=True) + eps)).reshape(x.shape)
    if w is not None:
        y = y * _view(w, x.ndim)
    if b is not None:
        y = y + _view(b, x.ndim)
    return y


def np_attention(q, k, v, mask=None, causal=False, scale=None):
    """softmax(q k^T * scale + mask) v; a boolean mask keeps the True positions."""
    scale = 1 / np.sqrt(q.shape[-1]) if scale is None else scale
    s = q @ np.swapaxes(k, -1, -2) * scale
    if causal:
        s = np.where(np.triu(np.ones(s.shape[-2:], bool), 1), -np.inf, s)
    if mask is not None:
        s = np.where(mask, s, -np.inf) if mask.dtype == bool else s + mask
    return np_softmax(s) @ v


def np_attention_packed(x, heads, causal=False, scale=None):
    """Self-attention of packed qkv (N, L, 3E) with ``heads`` heads; (N, L, E), heads merged."""
    n, length, width = x.shape
    q, k, v = (x.reshape(n, length, 3, heads, -1)[:, :, i].transpose(0, 2, 1, 3) for i in range(3))
    return np_attention(q, k, v, causal=causal, scale=scale).transpose(0, 2, 1, 3).reshape(n, length, width // 3)


def np_dropout(x, p, seed):
    keep = np.random.default_rng(seed).random(x.shape) >= p
    return x * keep / (1 - p)


# ---- rows ---------------------------------------------------------------------------------------------
N, C = 4, 3
LOGITS = F((N, C), -3, 3)
LABELS = I((N,), 0, C)
LABELS_IGNORE = A(np.array([0, 2, -100, 1]))
LABELS_IGNORE1 = A(np.array([0, 2, 1, 1]))
WEIGHT = A(np.array([0.2, 1.0, 2.5]))
PROBS = A(np.array([[0.2, 0.3, 0.5], [1.0, 0.0, 0.0], [0.1, 0.8, 0.1], [0.25, 0.25, 0.5]]))
UNIT = dict(lo=0.05, hi=0.95)
KEEP = np.array([[1, 0, 1, 1, 0], [1, 1, 1, 1, 1], [0, 0, 0, 1, 0]], bool)  # an attention mask

ROWS = [
    # softmax, log_softmax
    OpSpec("softmax", gg.softmax, np_softmax, [F((3, 5), -3, 3)]),
    OpSpec("softmax[axis0]", lambda x: gg.softmax(x, axis=0), lambda x: np_softmax(x, 0), [F((3, 5), -3, 3)]),
    OpSpec("softmax[3d]", lambda x: gg.softmax(x, axis=1), lambda x: np_softmax(x, 1), [F((2, 3, 4), -3, 3)]),
    OpSpec("softmax[method]", lambda x: x.softmax(), np_softmax, [F((2, 4))]),
    OpSpec("log_softmax", gg.log_softmax, np_log_softmax, [F((3, 5), -3, 3)]),
    OpSpec("log_softmax[axis0]", lambda x: gg.log_softmax(x, 0), lambda x: np_log_softmax(x, 0), [F((3, 5), -3, 3)]),
    OpSpec("log_softmax[large]", gg.log_softmax, np_log_softmax,
           [A(np.array([[1e4, -1e4, 0.0], [-1e4, -1e4 + 1.0, 5e3]]), diff=True)], order=1),
    OpSpec("log_softmax[method]", lambda x: x.log_softmax(axis=0), lambda x: np_log_softmax(x, 0), [F((2, 4))]),
    # cross_entropy with class indices
    OpSpec("cross_entropy", gg.cross_entropy, np_cross_entropy, [LOGITS, LABELS]),
    OpSpec("cross_entropy[sum]", lambda x, t: gg.cross_entropy(x, t, reduction="sum"),
           lambda x, t: np_cross_entropy(x, t, reduction="sum"), [LOGITS, LABELS]),
    OpSpec("cross_entropy[none]", lambda x, t: gg.cross_entropy(x, t, reduction="none"),
           lambda x, t: np_cross_entropy(x, t, reduction="none"), [LOGITS, LABELS]),
    OpSpec("cross_entropy[weight]", lambda x, t, w: gg.cross_entropy(x, t, weight=w),
           lambda x, t, w: np_cross_entropy(x, t, weight=w), [LOGITS, LABELS_IGNORE1, WEIGHT]),
    OpSpec("cross_entropy[ignore]", gg.cross_entropy, np_cross_entropy, [LOGITS, LABELS_IGNORE]),
    OpSpec("cross_entropy[ignore-class]", lambda x, t: gg.cross_entropy(x, t, ignore_index=1),
           lambda x, t: np_cross_entropy(x, t, ignore_index=1), [LOGITS, LABELS_IGNORE1]),
    OpSpec("cross_entropy[weight-ignore-none]",
           lambda x, t, w: gg.cross_entropy(x, t, weight=w, reduction="none"),
           lambda x, t, w: np_cross_entropy(x, t, weight=w, reduction="none"), [LOGITS, LABELS_IGNORE, WEIGHT]),
    OpSpec("cross_entropy[smoothing]", lambda x, t: gg.cross_entropy(x, t, label_smoothing=0.1),
           lambda x, t: np_cross_entropy(x, t, label_smoothing=0.1), [LOGITS, LABELS_IGNORE]),
    OpSpec("cross_entropy[smoothing-weight]",
           lambda x, t, w: gg.cross_entropy(x, t, weight=w, label_smoothing=0.2),
           lambda x, t, w: np_cross_entropy(x, t, weight=w, label_smoothing=0.2), [LOGITS, LABELS_IGNORE, WEIGHT]),
    OpSpec("cross_entropy[smoothing-weight-sum]",
           lambda x, t, w: gg.cross_entropy(x, t, weight=w, label_smoothing=0.2, reduction="sum"),
           lambda x, t, w: np_cross_entropy(x, t, weight=w, label_smoothing=0.2, reduction="sum"),
           [LOGITS, LABELS_IGNORE, WEIGHT]),
    OpSpec("cross_entropy[spatial]", gg.cross_entropy, np_cross_entropy, [F((2, C, 3, 2), -3, 3), I((2, 3, 2), 0, C)]),
    OpSpec("cross_entropy[spatial-weight-none]",
           lambda x, t, w: gg.cross_entropy(x, t, weight=w, reduction="none", label_smoothing=0.1),
           lambda x, t, w: np_cross_entropy(x, t, weight=w, reduction="none", label_smoothing=0.1),
           [F((2, C, 3), -3, 3), I((2, 3), 0, C), WEIGHT]),
    OpSpec("cross_entropy[unbatched]", gg.cross_entropy, np_cross_entropy, [F((C,), -3, 3), A(np.array(2))]),
    OpSpec("cross_entropy[int32-labels]", gg.cross_entropy, np_cross_entropy, [LOGITS, I((N,), 0, C, "int32")]),
    # cross_entropy with class probabilities
    OpSpec("cross_entropy[probs]", gg.cross_entropy, np_cross_entropy, [LOGITS, PROBS]),
    OpSpec("cross_entropy[probs-diff]", gg.cross_entropy, np_cross_entropy, [LOGITS, F((N, C), 0, 1)]),
    OpSpec("cross_entropy[probs-weight-smoothing]",
           lambda x, t, w: gg.cross_entropy(x, t, weight=w, label_smoothing=0.3),
           lambda x, t, w: np_cross_entropy(x, t, weight=w, label_smoothing=0.3), [LOGITS, PROBS, WEIGHT]),
    OpSpec("cross_entropy[probs-spatial-none]", lambda x, t: gg.cross_entropy(x, t, reduction="none"),
           lambda x, t: np_cross_entropy(x, t, reduction="none"), [F((2, C, 3), -3, 3), F((2, C, 3), 0, 1)]),
    # nll_loss on log-probabilities
    OpSpec("nll_loss", lambda x, t: gg.nll_loss(gg.log_softmax(x, 1), t),
           lambda x, t: np_cross_entropy(x, t), [LOGITS, LABELS]),
    OpSpec("nll_loss[raw]", gg.nll_loss, lambda x, t: np_cross_entropy(x, t, logits=False), [LOGITS, LABELS_IGNORE]),
    OpSpec("nll_loss[weight-ignore]", lambda x, t, w: gg.nll_loss(x, t, weight=w, ignore_index=2),
           lambda x, t, w: np_cross_entropy(x, t, weight=w, ignore_index=2, logits=False),
           [LOGITS, LABELS_IGNORE1, WEIGHT]),
    OpSpec("nll_loss[spatial-none]", lambda x, t: gg.nll_loss(x, t, reduction="none"),
           lambda x, t: np_cross_entropy(x, t, reduction="none", logits=False),
           [F((2, C, 3, 2)), I((2, 3, 2), 0, C)]),
    # binary cross-entropy
    OpSpec("binary_cross_entropy", gg.binary_cross_entropy, np_bce, [F((3, 4), **UNIT), F((3, 4), 0, 1)]),
    OpSpec("binary_cross_entropy[weight-sum]",
           lambda x, t, w: gg.binary_cross_entropy(x, t, weight=w, reduction="sum"),
           lambda x, t, w: np_bce(x, t, w, "sum"), [F((3, 4), **UNIT), F((3, 4), 0, 1), P((4,))]),
    OpSpec("binary_cross_entropy[none]", lambda x, t: gg.binary_cross_entropy(x, t, reduction="none"),
           lambda x, t: np_bce(x, t, reduction="none"), [F((3, 4), **UNIT), F((3, 4), 0, 1)]),
    OpSpec("binary_cross_entropy[saturated]", lambda x, t: gg.binary_cross_entropy(x, t, reduction="none"),
           lambda x, t: np_bce(x, t, reduction="none"),
           [A(np.array([0.0, 1.0, 1e-50, 0.5]), diff=True), A(np.array([1.0, 0.0, 1.0, 0.5]))], grad=False),
    OpSpec("binary_cross_entropy_with_logits", gg.binary_cross_entropy_with_logits, np_bce_logits,
           [F((3, 4), -4, 4), F((3, 4), 0, 1)]),
    OpSpec("binary_cross_entropy_with_logits[pos_weight]",
           lambda x, t, w, pw: gg.binary_cross_entropy_with_logits(x, t, weight=w, pos_weight=pw),
           lambda x, t, w, pw: np_bce_logits(x, t, w, pw), [F((3, 4), -4, 4), F((3, 4), 0, 1), P((3, 1)), P((4,))]),
    OpSpec("binary_cross_entropy_with_logits[none]",
           lambda x, t: gg.binary_cross_entropy_with_logits(x, t, reduction="none"),
           lambda x, t: np_bce_logits(x, t, reduction="none"), [F((3, 4), -4, 4), F((3, 4), 0, 1)]),
    OpSpec("binary_cross_entropy_with_logits[large]",
           lambda x, t: gg.binary_cross_entropy_with_logits(x, t, reduction="none"),
           lambda x, t: np_bce_logits(x, t, reduction="none"),
           [A(np.array([-1e4, 1e4, 800.0, -800.0]), diff=True), A(np.array([1.0, 0.0, 1.0, 0.5]))], order=1),
    # regression losses
    OpSpec("mse_loss", gg.mse_loss, lambda x, t: np.mean((x - t) ** 2), [F((3, 4)), F((3, 4))]),
    OpSpec("mse_loss[sum]", lambda x, t: gg.mse_loss(x, t, reduction="sum"), lambda x, t: np.sum((x - t) ** 2),
           [F((3, 4)), F((3, 4))]),
    OpSpec("mse_loss[none]", lambda x, t: gg.mse_loss(x, t, reduction="none"), lambda x, t: (x - t) ** 2,
           [F((3, 4)), F((3, 4))]),
    OpSpec("huber_loss", gg.huber_loss, np_huber, [F((3, 4), -3, 3), F((3, 4), -3, 3)]),
    OpSpec("huber_loss[delta]", lambda x, t: gg.huber_loss(x, t, reduction="none", delta=0.5),
           lambda x, t: np_huber(x, t, "none", 0.5), [F((3, 4), -3, 3), A(np.zeros((3, 4)))]),
    OpSpec("l1_loss", gg.l1_loss, lambda x, t: np.mean(np.abs(x - t)), [F((3, 4)), A(np.zeros((3, 4)))]),
    OpSpec("l1_loss[sum]", lambda x, t: gg.l1_loss(x, t, reduction="sum"), lambda x, t: np.sum(np.abs(x - t)),
           [F((3, 4), 0.1, 2), A(np.zeros((3, 4)))]),
    # normalization
    OpSpec("batch_norm", lambda x, w, b: gg.batch_norm(x, None, None, w, b, training=True),
           lambda x, w, b: np_batch_norm(x, None, None, w, b, True), [F((5, 3)), F((3,)), F((3,))]),
    OpSpec("batch_norm[4d]", lambda x, w, b: gg.batch_norm(x, None, None, w, b, training=True, eps=1e-3),
           lambda x, w, b: np_batch_norm(x, None, None, w, b, True, 1e-3), [F((2, 3, 2, 2)), F((3,)), F((3,))]),
    OpSpec("batch_norm[eval]", lambda x, rm, rv, w, b: gg.batch_norm(x, rm, rv, w, b),
           lambda x, rm, rv, w, b: np_batch_norm(x, rm, rv, w, b), [F((4, 3, 2)), A(np.array([0.1, -0.2, 0.3])),
                                                                    A(np.array([0.5, 1.5, 2.0])), F((3,)), F((3,))]),
    OpSpec("batch_norm[no-affine]", lambda x: gg.batch_norm(x, None, None, training=True),
           lambda x: np_batch_norm(x, None, None, training=True), [F((6, 2))]),
    OpSpec("layer_norm", lambda x, w, b: gg.layer_norm(x, (4,), w, b),
           lambda x, w, b: np_layer_norm(x, 1, w, b), [F((2, 3, 4)), F((4,)), F((4,))]),
    OpSpec("layer_norm[2d-shape]", lambda x, w, b: gg.layer_norm(x, (3, 4), w, b, eps=1e-3),
           lambda x, w, b: np_layer_norm(x, 2, w, b, 1e-3), [F((2, 3, 4)), F((3, 4)), F((3, 4))]),
    OpSpec("layer_norm[no-affine]", lambda x: gg.layer_norm(x, 5), lambda x: np_layer_norm(x, 1), [F((3, 5))]),
    OpSpec("group_norm", lambda x, w, b: gg.group_norm(x, 2, w, b),
           lambda x, w, b: np_group_norm(x, 2, w, b), [F((2, 4, 3)), F((4,)), F((4,))]),
    OpSpec("group_norm[4d]", lambda x: gg.group_norm(x, 3), lambda x: np_group_norm(x, 3), [F((2, 6, 2, 2))]),
    # scaled dot-product attention (one fused op; the composition gives second derivatives)
    OpSpec("scaled_dot_product_attention", gg.scaled_dot_product_attention, np_attention,
           [F((2, 3, 4)), F((2, 5, 4)), F((2, 5, 3))]),
    OpSpec("scaled_dot_product_attention[causal-4d]",
           lambda q, k, v: gg.scaled_dot_product_attention(q, k, v, is_causal=True),
           lambda q, k, v: np_attention(q, k, v, causal=True), [F((2, 2, 4, 3)), F((2, 2, 4, 3)), F((2, 2, 4, 3))]),
    OpSpec("scaled_dot_product_attention[bool-mask-scale]",
           lambda q, k, v, m: gg.scaled_dot_product_attention(q, k, v, attn_mask=m, scale=0.7),
           lambda q, k, v, m: np_attention(q, k, v, m, scale=0.7),
           [F((2, 3, 4)), F((2, 5, 4)), F((2, 5, 2)), A(KEEP)]),
    OpSpec("scaled_dot_product_attention[float-mask]",
           lambda q, k, v, m: gg.scaled_dot_product_attention(q, k, v, attn_mask=m),
           lambda q, k, v, m: np_attention(q, k, v, m), [F((2, 3, 4)), F((2, 5, 4)), F((2, 5, 3)), F((3, 5))],
           batch=False),  # the mask has no batch dimension
    OpSpec("scaled_dot_product_attention[unbatched]", gg.scaled_dot_product_attention, np_attention,
           [F((3, 4)), F((5, 4)), F((5, 2))], batch=False),  # no batch dimension: L is the first axis
    OpSpec("scaled_dot_product_attention[packed-heads-causal]",
           lambda x: _apply_attention((0.5, True, None, 2), (x,)),
           lambda x: np_attention_packed(x, 2, causal=True, scale=0.5), [F((2, 3, 12))]),
    # dropout (a fresh generator per call: the same mask every time, so it is a fixed function)
    OpSpec("dropout", lambda x: gg.dropout(x, 0.3, generator=gg.Generator(7)),
           lambda x: np_dropout(x, 0.3, 7), [F((4, 5))]),
    OpSpec("dropout[eval]", lambda x: gg.dropout(x, 0.3, training=False), lambda x: x, [F((4, 5))]),
    OpSpec("dropout[p0]", lambda x: gg.dropout(x, 0.0), lambda x: x, [F((4, 5))]),
    # embedding (repeated indices accumulate gradient; the padding row gets none)
    OpSpec("embedding", gg.embedding, lambda i, w: w[i], [I((2, 3), 0, 5), F((5, 4))]),
    OpSpec("embedding[repeated]", gg.embedding, lambda i, w: w[i], [A(np.array([1, 3, 1, 1, 0])), F((4, 2))]),
    OpSpec("embedding[padding]", lambda i, w: gg.embedding(i, w, padding_idx=0), lambda i, w: w[i],
           [A(np.array([[0, 2], [1, 0]])), F((3, 2))], grad=False),
]


# ---- margin losses, smooth L1, KL divergence (references: the PyTorch formulas in NumPy) -----------------
def np_smooth_l1(x, t, reduction="mean", beta=1.0):
    d = np.abs(x - t)
    loss = d if beta == 0 else np.where(d < beta, 0.5 * d * d / beta, d - 0.5 * beta)
    return np_reduce(loss, reduction)


def np_hinge_embedding(x, t, margin=1.0, reduction="mean"):
    loss = np.where(t != 1, np.maximum(margin - x, 0), 0) + np.where(t != -1, x, 0)
    return np_reduce(loss, reduction)


def np_multi_margin(x, t, p=1, margin=1.0, weight=None, reduction="mean"):
    x2 = x.reshape(-1, x.shape[-1])
    t2 = np.asarray(t).reshape(-1)
    picked = x2[np.arange(len(t2)), t2][:, None]
    h = np.maximum(margin - picked + x2, 0) ** p
    if weight is not None:
        h = h * weight[t2][:, None]
    h[np.arange(len(t2)), t2] = 0
    loss = h.sum(axis=1) / x2.shape[1]
    return np_reduce(loss.reshape(np.shape(t)), reduction)


def np_kl_div(x, t, reduction="mean", log_target=False):
    if log_target:
        loss = np.exp(t) * (t - x)
    else:
        with np.errstate(divide="ignore", invalid="ignore"):
            loss = np.where(t > 0, t * np.log(np.where(t > 0, t, 1)), 0) - t * x
    if reduction == "batchmean":
        return loss.sum() / x.shape[0]
    return np_reduce(loss, reduction)


SIGNS = A(np.array([[1.0, -1.0, 1.0, -1.0], [-1.0, -1.0, 1.0, 1.0], [1.0, 1.0, -1.0, -1.0]]))
DIST = A(np.array([[0.2, 0.3, 0.5], [1.0, 0.0, 0.0], [0.1, 0.8, 0.1], [0.25, 0.25, 0.5]]))

ROWS += [
    OpSpec("smooth_l1_loss", gg.smooth_l1_loss, np_smooth_l1, [F((3, 4), -3, 3), F((3, 4), -3, 3)]),
    OpSpec("smooth_l1_loss[beta-none]", lambda x, t: gg.smooth_l1_loss(x, t, reduction="none", beta=0.5),
           lambda x, t: np_smooth_l1(x, t, "none", 0.5), [F((3, 4), -3, 3, kinks=(-0.5, 0.5)), A(np.zeros((3, 4)))]),
    OpSpec("smooth_l1_loss[beta0-sum]", lambda x, t: gg.smooth_l1_loss(x, t, reduction="sum", beta=0.0),
           lambda x, t: np_smooth_l1(x, t, "sum", 0.0), [F((3, 4), kinks=(0.0,)), A(np.zeros((3, 4)))]),
    OpSpec("hinge_embedding_loss", lambda x, t: gg.hinge_embedding_loss(x, t),
           lambda x, t: np_hinge_embedding(x, t), [F((3, 4), -2, 3, kinks=(1.0,)), SIGNS]),
    OpSpec("hinge_embedding_loss[margin-none]",
           lambda x, t: gg.hinge_embedding_loss(x, t, margin=0.5, reduction="none"),
           lambda x, t: np_hinge_embedding(x, t, 0.5, "none"), [F((3, 4), -2, 3, kinks=(0.5,)), SIGNS]),
    OpSpec("multi_margin_loss", gg.multi_margin_loss, np_multi_margin, [LOGITS, LABELS]),
    OpSpec("multi_margin_loss[p2-weight-sum]",
           lambda x, t, w: gg.multi_margin_loss(x, t, p=2, margin=0.7, weight=w, reduction="sum"),
           lambda x, t, w: np_multi_margin(x, t, 2, 0.7, w, "sum"), [LOGITS, LABELS, WEIGHT]),
    OpSpec("multi_margin_loss[none]", lambda x, t: gg.multi_margin_loss(x, t, reduction="none"),
           lambda x, t: np_multi_margin(x, t, reduction="none"), [LOGITS, LABELS]),
    OpSpec("multi_margin_loss[unbatched]", gg.multi_margin_loss, np_multi_margin, [F((C,), -3, 3), A(np.array(1))]),
    OpSpec("kl_div", lambda x, t: gg.kl_div(gg.log_softmax(x, 1), t),
           lambda x, t: np_kl_div(np_log_softmax(x, 1), t), [LOGITS, F((N, C), 0.05, 1)]),
    OpSpec("kl_div[batchmean-zeros]", lambda x, t: gg.kl_div(x, t, reduction="batchmean"),
           lambda x, t: np_kl_div(x, t, "batchmean"), [F((N, C), -3, 0), DIST]),
    OpSpec("kl_div[log_target-sum]", lambda x, t: gg.kl_div(x, t, reduction="sum", log_target=True),
           lambda x, t: np_kl_div(x, t, "sum", True), [F((N, C), -3, 0), F((N, C), -3, 0)]),
    OpSpec("kl_div[none]", lambda x, t: gg.kl_div(x, t, reduction="none"),
           lambda x, t: np_kl_div(x, t, "none"), [F((N, C), -3, 0), F((N, C), 0.05, 1)]),
]
