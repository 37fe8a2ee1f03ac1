"""Connectionist temporal classification loss (Graves et al., 2006), as PyTorch's ``F.ctc_loss``.

``CTCNegLogLikelihood`` computes each sequence's ``-log p(target | input)`` with the forward (alpha)
recursion over the target with blanks interleaved, in log space, over the batch at once; its
gradient comes from the backward (beta) recursion. As PyTorch's, the gradient it gives for the log
probabilities is ``exp(lp) - exp(log(sum alpha * beta over the label's positions) + nll - lp)``: the
exact gradient once ``log_probs`` is the output of ``log_softmax`` (the usual case), which is what
``ctc_loss`` is defined on.
"""
from __future__ import annotations

from typing import Any

from graphgrad.backend import np, to_numpy
from graphgrad.core.op import Op
from graphgrad.core.spec import TensorSpec
from graphgrad.core.tensor import Tensor
from graphgrad.errors import ShapeError
from graphgrad.ops import elementwise as ew, reduce, shape

_NEG_INF = -np.inf


def _extended(targets, target_lengths, blank: int) -> tuple:
    """Per sample the target with blanks around and between its labels, padded with blanks:
    (N, 2 * S_max + 1), and whether each position may be reached by skipping the one before (a label
    different from the label two back)."""
    n, s_max = len(target_lengths), int(max(target_lengths, default=0))
    ext = np.full((n, 2 * s_max + 1), blank, dtype=np.int64)
    for i, (labels, length) in enumerate(zip(targets, target_lengths)):
        ext[i, 1:2 * length:2] = labels[:length]
    skip = np.zeros_like(ext, dtype=bool)
    skip[:, 2:] = (ext[:, 2:] != blank) & (ext[:, 2:] != ext[:, :-2])
    return ext, skip


def _shift(a, k: int):
    """``a`` moved ``k`` positions right along the last axis, -inf coming in."""
    out = np.full_like(a, _NEG_INF)
    out[..., k:] = a[..., :-k]
    return out


def _unshift(a, k: int):
    """``a`` moved ``k`` positions left along the last axis, -inf coming in."""
    out = np.full_like(a, _NEG_INF)
    out[..., :-k] = a[..., k:]
    return out


def _recursions(lp, ext, skip, input_lengths, target_lengths) -> tuple:
    """log alpha and log beta (T, N, L) and each sequence's negative log-likelihood (N,)."""
    t_max, n = lp.shape[0], lp.shape[1]
    width = ext.shape[1]
    emit = np.take_along_axis(lp, np.broadcast_to(ext[None], (t_max, n, width)), axis=2)  # (T, N, L)
    last = 2 * np.asarray(target_lengths)  # the final blank's position
    beyond = np.arange(width)[None, :] > last[:, None]  # positions past each target
    alpha = np.full((t_max, n, width), _NEG_INF)
    alpha[0, :, 0] = emit[0, :, 0]
    alpha[0, :, 1] = np.where(last > 0, emit[0, :, 1], _NEG_INF)
    with np.errstate(invalid="ignore"):
        for t in range(1, t_max):
            prev = alpha[t - 1]
            total = np.logaddexp(np.logaddexp(prev, _shift(prev, 1)), np.where(skip, _shift(prev, 2), _NEG_INF))
            alpha[t] = np.where(beyond, _NEG_INF, total + emit[t])
        ends = np.asarray(input_lengths) - 1
        final = alpha[ends, np.arange(n)]  # (N, L)
        tail = np.take_along_axis(final, last[:, None], 1)[:, 0]
        before = np.where(last > 0, np.take_along_axis(final, np.maximum(last - 1, 0)[:, None], 1)[:, 0], _NEG_INF)
        nll = -np.logaddexp(tail, before)
        beta = np.full((t_max, n, width), _NEG_INF)
        skip_from = _unshift(skip, 2)  # whether position s may jump to s + 2
        for t in range(t_max - 1, -1, -1):
            if t + 1 < t_max:
                nxt = beta[t + 1]
                total = np.logaddexp(np.logaddexp(nxt, _unshift(nxt, 1)), np.where(skip_from, _unshift(nxt, 2), _NEG_INF))
                step = total + emit[t]
            else:
                step = np.full((n, width), _NEG_INF)
            start = np.full((n, width), _NEG_INF)  # for the sequences that end at this step
            for i in range(n):
                start[i, last[i]] = emit[t, i, last[i]]
                if last[i] > 0:
                    start[i, last[i] - 1] = emit[t, i, last[i] - 1]
            here = np.asarray(input_lengths) - 1
            value = np.where((here == t)[:, None], start, np.where((here > t)[:, None], step, _NEG_INF))
            beta[t] = np.where(beyond, _NEG_INF, value)
    return alpha, beta, nll


class CTCNegLogLikelihood(Op):
    """Per sequence ``-log p(target | log_probs)`` (N,); the targets and lengths are the op's
    properties. Gradient as PyTorch's (see the module docstring). ``zero_infinity`` gives infinite
    losses (impossible alignments) and their gradients as 0."""

    props = ("targets", "input_lengths", "target_lengths", "blank", "zero_infinity")

    def __init__(self, targets: tuple, input_lengths: tuple, target_lengths: tuple, blank: int, zero_infinity: bool):
        self.targets, self.input_lengths, self.target_lengths = targets, input_lengths, target_lengths
        self.blank, self.zero_infinity = int(blank), bool(zero_infinity)

    def infer(self, log_probs):
        return TensorSpec((len(self.input_lengths),), log_probs.dtype)

    def _compute(self, lp):
        ext, skip = _extended(self.targets, self.target_lengths, self.blank)
        return ext, _recursions(lp.astype(np.float64), ext, skip, self.input_lengths, self.target_lengths)

    def forward(self, xp, log_probs):
        _, (_, _, nll) = self._compute(to_numpy(log_probs))
        if self.zero_infinity:
            nll = np.where(np.isinf(nll), 0.0, nll)
        return xp.asarray(nll.astype(log_probs.dtype))

    def backward(self, inputs, out, g):
        return (CTCGradient(self).apply(inputs[0], g),)


class CTCGradient(Op):
    """The gradient of :class:`CTCNegLogLikelihood` w.r.t. the log probabilities, times the upstream
    per-sequence gradient ``g`` (N,). Not differentiable again."""

    props = ("loss",)

    def __init__(self, loss: CTCNegLogLikelihood):
        self.loss = loss

    def infer(self, log_probs, g):
        return TensorSpec(log_probs.shape, log_probs.dtype)

    def forward(self, xp, log_probs, g):
        lp = to_numpy(log_probs).astype(np.float64)
        ext, (alpha, beta, nll) = self.loss._compute(lp)
        t_max, n, classes = lp.shape
        both = alpha + beta  # (T, N, L)
        lcab = np.full((t_max, n, classes), _NEG_INF)
        with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
            for s in range(ext.shape[1]):
                rows = np.arange(n)
                lcab[:, rows, ext[:, s]] = np.logaddexp(lcab[:, rows, ext[:, s]], both[:, :, s])
            grad = np.exp(lp) - np.exp(lcab + nll[None, :, None] - lp)
        valid = np.arange(t_max)[:, None] < np.asarray(self.loss.input_lengths)[None, :]
        grad = np.where(valid[:, :, None], grad, 0.0)
        if self.loss.zero_infinity:
            grad = np.where(np.isinf(nll)[None, :, None], 0.0, grad)
        grad = grad * to_numpy(g).astype(np.float64)[None, :, None]
        return xp.asarray(grad.astype(log_probs.dtype))


def _as_list(x) -> list:
    return np.asarray(x.numpy() if isinstance(x, Tensor) else x).reshape(-1).astype(np.int64).tolist()


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank: int = 0, reduction: str = "mean",
             zero_infinity: bool = False) -> Tensor:
    """The CTC loss of ``log_probs`` (T, N, C) (``log_softmax`` outputs; unbatched (T, C)) against
    ``targets``: (N, S) padded, or 1-d with all targets concatenated. ``reduction='mean'`` divides each
    loss by its target length and averages over the batch, as PyTorch. Shapes: -> () or (N,)."""
    from graphgrad.ops.losses import _check_reduction

    _check_reduction("ctc_loss", reduction)
    log_probs = log_probs if isinstance(log_probs, Tensor) else Tensor(log_probs)
    unbatched = log_probs.ndim == 2
    if unbatched:
        log_probs = shape.expand_dims(log_probs, 1)
    if log_probs.ndim != 3:
        raise ShapeError(f"ctc_loss: log_probs must be (T, N, C) or (T, C), got shape {log_probs.shape}")
    input_lengths, target_lengths = _as_list(input_lengths), _as_list(target_lengths)
    flat = np.asarray(targets.numpy() if isinstance(targets, Tensor) else targets).astype(np.int64)
    if flat.ndim == 2 or (unbatched and flat.ndim == 1 and len(target_lengths) == 1 and flat.size >= target_lengths[0]):
        rows = [tuple(r) for r in flat.reshape(len(target_lengths), -1)]
    else:
        starts = np.concatenate([[0], np.cumsum(target_lengths)[:-1]]).astype(np.int64)
        rows = [tuple(flat[s:s + n]) for s, n in zip(starts, target_lengths)]
    if len(input_lengths) != log_probs.shape[1] or max(input_lengths) > log_probs.shape[0]:
        raise ShapeError(f"ctc_loss: input_lengths {input_lengths} do not fit log_probs of shape {log_probs.shape}")
    rows = tuple(tuple(int(v) for v in r[:n]) for r, n in zip(rows, target_lengths))
    nll = CTCNegLogLikelihood(rows, tuple(input_lengths), tuple(target_lengths), blank, zero_infinity).apply(log_probs)
    if reduction == "none":
        return shape.reshape(nll, ()) if unbatched else nll
    if reduction == "sum":
        return reduce.sum(nll)
    lengths = Tensor(np.maximum(np.asarray(target_lengths), 1).astype(log_probs.dtype.name))
    return reduce.mean(nll / lengths)
