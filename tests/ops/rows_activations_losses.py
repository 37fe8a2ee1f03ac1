"""Op-table rows for graphgrad/ops/activations_more.py and losses_more.py (NumPy references)."""
from __future__ import annotations

import math

import numpy as np

import graphgrad as gg
from tests.ops.op_table import A, F, I, OpSpec, P

S = (4, 5)
SIGNS = np.array([1.0, -1.0, -1.0, 1.0])
LABELS = np.array([[1.0, 0, 1, 0, 0], [0, 1, 1, 0, 1], [1, 1, 0, 0, 0], [0, 0, 0, 1, 1]])
MULTI = np.array([[3, 0, -1, 1, 2], [1, 2, 3, -1, 0], [0, 1, 2, 3, 4], [4, -1, 0, 0, 0]])
COUNTS = np.array([[0.0, 1, 2, 3, 4], [2, 2, 0, 1, 5], [1, 0, 0, 3, 2], [6, 1, 1, 0, 2]])


def _softplus(x):
    return np.logaddexp(0.0, x)


def _norm(x, p, axis):
    return np.linalg.norm(x, ord=p, axis=axis)


def _cos(a, b, axis=1, eps=1e-8):
    na = np.maximum(np.linalg.norm(a, axis=axis, keepdims=True), eps)
    nb = np.maximum(np.linalg.norm(b, axis=axis, keepdims=True), eps)
    return np.sum(a / na * b / nb, axis=axis)


def _pdist(x):
    i, j = np.triu_indices(len(x), 1)
    return np.linalg.norm(x[i] - x[j], axis=-1)


def _multilabel_margin(x):
    total = []
    for row, targets in zip(x, MULTI):
        valid = []
        for t in targets:
            if t < 0:
                break
            valid.append(t)
        others = [i for i in range(x.shape[1]) if i not in valid]
        total.append(sum(max(0.0, 1 - (row[j] - row[i])) for j in set(valid) for i in others) / x.shape[1])
    return np.mean(total)


def _poisson_full(x, t):
    loss = x - t * np.log(x + 1e-8)
    stirling = np.where(t > 1, t * np.log(np.maximum(t, 1)) - t + 0.5 * np.log(2 * math.pi * np.maximum(t, 1)), 0)
    return np.mean(loss + stirling)


ROWS = [
    OpSpec("relu6", lambda x: gg.relu6(x * 4), lambda x: np.clip(x * 4, 0, 6), [F(S, kinks=(0.0, 1.5))]),
    OpSpec("hardshrink", lambda x: gg.hardshrink(x, 0.3), lambda x: np.where(np.abs(x) > 0.3, x, 0),
           [F(S, kinks=(-0.3, 0.3))]),
    OpSpec("softshrink", lambda x: gg.softshrink(x, 0.3), lambda x: np.sign(x) * np.maximum(np.abs(x) - 0.3, 0),
           [F(S, kinks=(-0.3, 0.3))]),
    OpSpec("tanhshrink", gg.tanhshrink, lambda x: x - np.tanh(x), [F(S)]),
    OpSpec("prelu", gg.prelu, lambda x, w: np.where(x > 0, x, w[None, :, None] * x), [F((2, 3, 4), kinks=(0.0,)),
                                                                                     F((3,), 0.1, 0.5)], order=1),
    OpSpec("rrelu", lambda x: gg.rrelu(x), lambda x: np.where(x > 0, x, x * (1 / 8 + 1 / 3) / 2), [F(S, kinks=(0.0,))]),
    OpSpec("rrelu[training]", lambda x: gg.rrelu(x * 0 + gg.abs(x), training=True), lambda x: np.abs(x),
           [F(S, kinks=(0.0,))], infer=False),  # positive inputs: the random slopes do not show
    OpSpec("gumbel_softmax", lambda x: gg.gumbel_softmax(x, hard=True).sum(-1), lambda x: np.ones(4), [F(S)],
           grad=False),
    OpSpec("cosine_similarity", gg.cosine_similarity, _cos, [F(S), F(S)]),
    OpSpec("pairwise_distance", gg.pairwise_distance, lambda a, b: _norm(a - b + 1e-6, 2, -1), [F(S), F(S)]),
    OpSpec("pdist", gg.pdist, _pdist, [F(S)], batch=False),  # pairs of rows: no batch dimension
    OpSpec("cdist", gg.cdist, lambda a, b: np.linalg.norm(a[:, None] - b[None], axis=-1), [F(S), F((3, 5))],
           batch=False),
    OpSpec("cdist[p1_batched]", lambda a, b: gg.cdist(a, b, p=1.0),
           lambda a, b: np.abs(a[:, :, None] - b[:, None]).sum(-1), [F((2, 4, 3)), F((2, 2, 3))]),
    OpSpec("margin_ranking_loss", lambda a, b: gg.margin_ranking_loss(a, b, gg.tensor(SIGNS, dtype=a.dtype), 0.1),
           lambda a, b: np.mean(np.maximum(0, -SIGNS * (a - b) + 0.1)), [F((4,)), F((4,))], batch=False),
    OpSpec("soft_margin_loss", lambda x: gg.soft_margin_loss(x, gg.tensor(SIGNS, dtype=x.dtype)),
           lambda x: np.mean(_softplus(-SIGNS * x)), [F((4,))], batch=False),
    OpSpec("multilabel_soft_margin_loss", lambda x: gg.multilabel_soft_margin_loss(x, gg.tensor(LABELS, dtype=x.dtype)),
           lambda x: np.mean(np.mean(LABELS * _softplus(-x) + (1 - LABELS) * _softplus(x), -1)), [F(S)], batch=False),
    OpSpec("cosine_embedding_loss", lambda a, b: gg.cosine_embedding_loss(a, b, gg.tensor(SIGNS, dtype=a.dtype), 0.2),
           lambda a, b: np.mean(np.where(SIGNS > 0, 1 - _cos(a, b, -1, 0), np.maximum(0, _cos(a, b, -1, 0) - 0.2))),
           [F(S), F(S)], batch=False),
    OpSpec("triplet_margin_loss", gg.triplet_margin_loss,
           lambda a, p, n: np.mean(np.maximum(0, 1 + _norm(a - p + 1e-6, 2, -1) - _norm(a - n + 1e-6, 2, -1))),
           [F(S), F(S), F(S)]),
    OpSpec("triplet_margin_with_distance_loss", lambda a, p, n: gg.triplet_margin_with_distance_loss(
        a, p, n, distance_function=lambda u, v: gg.sum((u - v) ** 2, -1), margin=2.0),
        lambda a, p, n: np.mean(np.maximum(0, 2 + ((a - p) ** 2).sum(-1) - ((a - n) ** 2).sum(-1))), [F(S), F(S), F(S)]),
    OpSpec("multilabel_margin_loss", lambda x: gg.multilabel_margin_loss(x, gg.tensor(MULTI)), _multilabel_margin,
           [F(S)], batch=False),
    OpSpec("poisson_nll_loss", lambda x: gg.poisson_nll_loss(x, gg.tensor(COUNTS, dtype=x.dtype)),
           lambda x: np.mean(np.exp(x) - COUNTS * x), [F(S)], batch=False),
    OpSpec("poisson_nll_loss[full]", lambda x: gg.poisson_nll_loss(x, gg.tensor(COUNTS, dtype=x.dtype), log_input=False, full=True),
           lambda x: _poisson_full(x, COUNTS), [P(S)], batch=False),
    OpSpec("gaussian_nll_loss", lambda x, t, v: gg.gaussian_nll_loss(x, t, v, full=True),
           lambda x, t, v: np.mean(0.5 * (np.log(v) + (x - t) ** 2 / v) + 0.5 * math.log(2 * math.pi)),
           [F(S), F(S, diff=False), P(S)]),
]


def _attention(q, k, v):
    k, v = np.repeat(k, q.shape[1] // k.shape[1], axis=1), np.repeat(v, q.shape[1] // v.shape[1], axis=1)
    s = q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1])
    w = np.exp(s - s.max(-1, keepdims=True))
    return (w / w.sum(-1, keepdims=True)) @ v


ROWS.append(OpSpec("scaled_dot_product_attention[gqa]",
                   lambda q, k, v: gg.scaled_dot_product_attention(q, k, v, enable_gqa=True), _attention,
                   [F((2, 4, 3, 4)), F((2, 2, 5, 4)), F((2, 2, 5, 2))]))


# ---- detection (ops/vision.py) -----------------------------------------------------------------------
_BOXES = np.array([[0, 0, 10, 10], [1, 1, 11, 11], [20, 20, 30, 30], [21, 19, 29, 31], [0, 0, 9, 10],
                   [50, 50, 60, 55]], dtype=np.float64)
_SCORES = np.array([0.9, 0.8, 0.7, 0.95, 0.3, 0.5])
_CLASSES = np.array([0, 1, 0, 0, 0, 1])


def _iou(a, b):
    w = np.clip(np.minimum(a[:, None, 2], b[None, :, 2]) - np.maximum(a[:, None, 0], b[None, :, 0]), 0, None)
    h = np.clip(np.minimum(a[:, None, 3], b[None, :, 3]) - np.maximum(a[:, None, 1], b[None, :, 1]), 0, None)
    area = lambda x: (x[:, 2] - x[:, 0]) * (x[:, 3] - x[:, 1])  # noqa: E731
    return w * h / (area(a)[:, None] + area(b)[None, :] - w * h)


ROWS += [
    OpSpec("nms", lambda b, s: gg.nms(b, s, 0.5), lambda b, s: np.array([3, 0, 5]), [A(_BOXES), A(_SCORES)],
           grad=False, batch=False, infer=False),  # the number kept depends on the values
    OpSpec("batched_nms", lambda b, s: gg.batched_nms(b, s, gg.tensor(_CLASSES), 0.5),
           lambda b, s: np.array([3, 0, 1, 5]), [A(_BOXES), A(_SCORES)], grad=False, batch=False, infer=False),
    OpSpec("box_iou", gg.box_iou, _iou, [A([[0.0, 0, 10, 10], [2, 1, 12, 13], [20, 21, 30, 32]], diff=True),
                                         A([[1.5, 2.5, 9, 11.5], [21, 19.5, 29, 31]], diff=True)], batch=False),
    OpSpec("box_area", gg.box_area, lambda b: (b[:, 2] - b[:, 0]) * (b[:, 3] - b[:, 1]), [A(_BOXES, diff=True)]),
]


# ---- recurrent cells as functions (ops/cells.py) ----------------------------------------------------
def _sig(x):
    return 1 / (1 + np.exp(-x))


def _lstm_ref(x, h, c, wi, wh, bi, bh):
    i, f, g, o = np.split(x @ wi.T + bi + h @ wh.T + bh, 4, axis=-1)
    c2 = _sig(f) * c + _sig(i) * np.tanh(g)
    return _sig(o) * np.tanh(c2) + c2


def _gru_ref(x, h, wi, wh, bi, bh):
    xr, xz, xn = np.split(x @ wi.T + bi, 3, axis=-1)
    hr, hz, hn = np.split(h @ wh.T + bh, 3, axis=-1)
    r, z = _sig(xr + hr), _sig(xz + hz)
    return (1 - z) * np.tanh(xn + r * hn) + z * h


CELL = [F((3, 4)), F((3, 5))]
ROWS += [
    OpSpec("rnn_tanh_cell", gg.rnn_tanh_cell, lambda x, h, wi, wh, bi, bh: np.tanh(x @ wi.T + bi + h @ wh.T + bh),
           CELL + [F((5, 4)), F((5, 5)), F((5,)), F((5,))]),
    OpSpec("rnn_relu_cell", gg.rnn_relu_cell, lambda x, h, wi, wh: np.maximum(x @ wi.T + h @ wh.T, 0),
           CELL + [F((5, 4)), F((5, 5))], order=1),
    OpSpec("lstm_cell", lambda x, h, c, wi, wh, bi, bh: sum(gg.lstm_cell(x, (h, c), wi, wh, bi, bh)), _lstm_ref,
           CELL + [F((3, 5)), F((20, 4)), F((20, 5)), F((20,)), F((20,))]),
    OpSpec("gru_cell", gg.gru_cell, _gru_ref, CELL + [F((15, 4)), F((15, 5)), F((15,)), F((15,))]),
]


# ---- bags of embeddings (ops/embedding_bag.py) -------------------------------------------------------
_BAG_INDICES = np.array([1, 2, 4, 5, 4, 3, 2, 0])
_BAG_OFFSETS = np.array([0, 4, 4, 6])


def _bag_ref(w, mode):
    out = []
    for start, stop in zip(_BAG_OFFSETS, list(_BAG_OFFSETS[1:]) + [len(_BAG_INDICES)]):
        rows = w[_BAG_INDICES[start:stop]]
        out.append(np.zeros(w.shape[1]) if not len(rows) else getattr(rows, mode)(0))
    return np.stack(out)


ROWS += [
    OpSpec(f"embedding_bag[{mode}]",
           lambda w, mode=mode: gg.embedding_bag(gg.tensor(_BAG_INDICES), w, gg.tensor(_BAG_OFFSETS), mode=mode),
           lambda w, mode=mode: _bag_ref(w, mode), [F((6, 3))], batch=False, infer=False,
           order=1 if mode == "max" else 2)
    for mode in ("sum", "mean", "max")
]


# ---- CTC (ops/ctc.py): through log_softmax, where its gradient is the exact one ----------------------
_CTC_TARGETS = np.array([[1, 1, 2], [3, 0, 0], [2, 4, 1]])
_CTC_INPUT_LENGTHS, _CTC_TARGET_LENGTHS = [6, 4, 5], [3, 1, 3]


def _ctc_ref(x):
    """-log p by summing the probability of every alignment (brute force over T=6, C=5 is too many:
    the forward recursion in plain Python, one sample at a time)."""
    lp = x - np.log(np.exp(x).sum(-1, keepdims=True))
    out = []
    for n in range(x.shape[1]):
        labels = list(_CTC_TARGETS[n, :_CTC_TARGET_LENGTHS[n]])
        ext = [0]
        for label in labels:
            ext += [label, 0]
        alpha = {0: lp[0, n, 0], 1: lp[0, n, ext[1]]} if len(ext) > 1 else {0: lp[0, n, 0]}
        for t in range(1, _CTC_INPUT_LENGTHS[n]):
            new = {}
            for s in range(len(ext)):
                terms = [alpha[k] for k in (s, s - 1) if k in alpha]
                if s >= 2 and ext[s] != 0 and ext[s] != ext[s - 2] and s - 2 in alpha:
                    terms.append(alpha[s - 2])
                if terms:
                    new[s] = np.logaddexp.reduce(terms) + lp[t, n, ext[s]]
            alpha = new
        ends = [alpha[k] for k in (len(ext) - 1, len(ext) - 2) if k in alpha]
        out.append(-np.logaddexp.reduce(ends) / max(_CTC_TARGET_LENGTHS[n], 1))
    return np.mean(out)


ROWS.append(OpSpec("ctc_loss", lambda x: gg.ctc_loss(gg.log_softmax(x, -1), gg.tensor(_CTC_TARGETS),
                                                     _CTC_INPUT_LENGTHS, _CTC_TARGET_LENGTHS),
                   _ctc_ref, [F((6, 3, 5))], order=1, batch=False, infer=False))
