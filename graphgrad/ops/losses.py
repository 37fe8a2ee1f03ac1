"""Loss functions, with ``torch.nn.functional`` semantics and argument names.

All are composed from primitives (``log_softmax``, elementwise ops, ``sum``), so they have no
gradient code of their own, differentiate to any order and work in graph mode. ``reduction`` is
``'mean'`` (default), ``'sum'`` or ``'none'``.
"""
from __future__ import annotations

import functools
import math
import warnings
from typing import Optional

from graphgrad.backend import native, np
from graphgrad.core.creation import arange
from graphgrad.core.op import Op, as_tensor_args, needs_grad
from graphgrad.core.spec import TensorSpec
from graphgrad.core.tensor import Tensor
from graphgrad.errors import DTypeError, GradError, ShapeError
from graphgrad.ops.elementwise import astype, clip, equal, greater, less, maximum, not_equal, where
from graphgrad.ops.nn import log_softmax, softmax
from graphgrad.ops.reduce import sum as _sum
from graphgrad.ops.array import count_like
from graphgrad.ops.shape import expand_dims, reshape
from graphgrad.ops.unary import abs as _abs
from graphgrad.ops.unary import exp, log, log1p

_REDUCTIONS = ("mean", "sum", "none")


def _fmt(shape) -> str:
    return str(tuple(shape))


def _check_reduction(op: str, reduction: str) -> None:
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{op}: reduction must be 'mean', 'sum' or 'none', got {reduction!r}")


def _same_shape(a: tuple, b: tuple) -> bool:
    """Whether two shapes can be equal (``None`` dims, known only at run time, match any size)."""
    return len(a) == len(b) and all(x is None or y is None or x == y for x, y in zip(a, b))


def _reduce(loss: Tensor, reduction: str, op: str) -> Tensor:
    if reduction == "none":
        return loss
    if loss.dtype == "float16":  # accumulate in float32, as PyTorch does: a float16 sum overflows at 65504
        return _reduce(loss.astype("float32"), reduction, op).astype("float16")
    total = _sum(loss)
    if reduction == "sum":
        return total
    if None in loss.shape:  # the element count is read when the graph runs (0/0 gives NaN there too)
        return total / count_like(loss)
    n = math.prod(loss.shape)
    return total * (1.0 / n) if n else total * float("nan")  # the mean of nothing is NaN, as in PyTorch


def _warn_if_broadcast(op: str, input: Tensor, target: Tensor) -> None:
    """Warn, with PyTorch's words, when a regression loss's target and input differ in shape: they
    broadcast (an (N, 1) input against an (N,) target gives an (N, N) loss), almost always by mistake."""
    if isinstance(input, Tensor) and isinstance(target, Tensor) and tuple(input.shape) != tuple(target.shape):
        warnings.warn(f"{op}: Using a target size {_fmt(target.shape)} that is different to the input size "
                      f"{_fmt(input.shape)}. This will likely lead to incorrect results due to broadcasting. "
                      "Please ensure they have the same size.", UserWarning, stacklevel=3)


def _pointwise_shapes(op: str, input: Tensor, target: Tensor) -> None:
    if not _same_shape(tuple(input.shape), tuple(target.shape)):
        raise ShapeError(f"{op}: input {_fmt(input.shape)} and target {_fmt(target.shape)} must have the same shape")


# ---- classification -------------------------------------------------------------------------------
def _class_view(v: Tensor, ndim: int, class_axis: int) -> Tensor:
    """A per-class vector (C,) shaped to broadcast along ``class_axis`` of a rank-``ndim`` tensor."""
    shape = [1] * ndim
    shape[class_axis] = -1
    return reshape(v, tuple(shape))


def _index_target(op: str, input: Tensor, target: Tensor, class_axis: int) -> None:
    """Check an integer class-index target against ``input`` (N, C, d1, ...)."""
    expected = tuple(input.shape[:class_axis]) + tuple(input.shape[class_axis + 1:])
    if target.dtype.kind not in "iu":
        hint = (" (class probabilities must have the input's shape " + _fmt(input.shape) + ")"
                if target.dtype.kind == "f" else "")
        raise DTypeError(f"{op}: class-index targets must be an integer tensor, got {target.dtype} target of "
                         f"shape {_fmt(target.shape)}{hint}; convert labels with .long()")
    if not _same_shape(tuple(target.shape), expected):
        raise ShapeError(f"{op}: input {_fmt(input.shape)} needs a class-index target of shape {_fmt(expected)}, "
                         f"got {_fmt(target.shape)}")


def _check_range(op: str, target: Tensor, n_classes, ignore_index: int) -> None:
    """Eagerly reject class indices outside ``[0, C)`` (other than ``ignore_index``)."""
    if target.is_symbolic or n_classes is None or target.size == 0:
        return
    t = target._data
    bad = ((t < 0) | (t >= n_classes)) & (t != ignore_index)
    if bad.any():
        raise IndexError(f"{op}: target {int(t[bad].reshape(-1)[0])} is out of bounds for {n_classes} classes")


def _nll(op: str, logp: Tensor, target: Tensor, weight: Optional[Tensor], ignore_index: int, reduction: str,
         label_smoothing: float = 0.0) -> Tensor:
    """The negative log-likelihood of class indices (with optional label smoothing), as PyTorch."""
    class_axis = 1 if logp.ndim >= 2 else 0
    n_classes = logp.shape[class_axis]
    _index_target(op, logp, target, class_axis)
    _check_range(op, target, n_classes, ignore_index)
    if weight is not None and tuple(weight.shape) != (n_classes,):
        raise ShapeError(f"{op}: weight must have shape ({n_classes},) (one per class), got {_fmt(weight.shape)}")
    # one-hot of the target along the class axis (an equality test against 0..C-1)
    classes = _class_view(arange(n_classes, device=target.device if not target.is_symbolic else None),
                          logp.ndim, class_axis)
    target_c = expand_dims(target, class_axis)
    one_hot = astype(equal(target_c, classes), logp.dtype)
    valid = astype(not_equal(target, ignore_index), logp.dtype)
    if weight is not None:
        w = _class_view(weight, logp.ndim, class_axis)
        sample_w = _sum(one_hot * w, axis=class_axis) * valid  # weight[target], 0 where ignored
    else:
        w = None
        sample_w = valid
    loss = -_sum(logp * one_hot, axis=class_axis) * sample_w
    if label_smoothing > 0.0:
        smooth = -_sum(logp if w is None else logp * w, axis=class_axis) * valid
    if reduction == "none":
        out = loss
        if label_smoothing > 0.0:
            out = loss * (1.0 - label_smoothing) + smooth * (label_smoothing / n_classes)
        return out
    total = _sum(loss)
    if label_smoothing > 0.0:
        total = total * (1.0 - label_smoothing) + _sum(smooth) * (label_smoothing / n_classes)
    return total if reduction == "sum" else total / _sum(sample_w)


def nll_loss(input, target, weight=None, ignore_index: int = -100, reduction: str = "mean") -> Tensor:
    """Negative log-likelihood of class indices, given log-probabilities.

    Shapes: input (N, C) or (N, C, d1, ...) (or (C,)); target integer (N,) or (N, d1, ...) (or ());
    weight (C,). ``'mean'`` divides by the summed weights of the non-ignored targets, as PyTorch.
    """
    _check_reduction("nll_loss", reduction)
    input, target, weight = as_tensor_args(input, target, weight)
    return _nll("nll_loss", input, target, weight, ignore_index, reduction)


#: Class counts up to which row-wise reductions of (N, C) logits run on a transposed copy: NumPy
#: reduces along a short last axis one row at a time (~10 us for 300 x 3), across rows in one pass.
_SHORT_ROWS = 16


def _row_reduce(x, name: str):
    """``x.max(axis=1)`` / ``x.sum(axis=1)`` of (N, C) ``x`` as (N, 1), fast for few classes."""
    if x.shape[1] <= _SHORT_ROWS and x.shape[0] > x.shape[1]:
        return getattr(x.T.copy(), name)(axis=0)[:, None]
    return getattr(x, name)(axis=1, keepdims=True)


def _softmax_parts(xp, x, t, ignore_index: int):
    """What every fused softmax cross-entropy kernel starts with, for (N, C) logits ``x`` and (N,)
    class indices ``t``: ``z = x - max`` (a fresh C-ordered array, whatever the layout of ``x``), the flat positions ``i * C + t[i]`` of the
    targets in ``z`` (class 0 for ignored rows), the mask of kept rows (``None`` when none is
    ignored, the common case, which then skips every masking step) and how many rows are kept."""
    n, c = x.shape
    valid = t != ignore_index
    kept = int(xp.count_nonzero(valid))
    if kept == n:
        valid, targets = None, t
    else:
        targets = xp.where(valid, t, 0)
    index = xp.arange(0, n * c, c) + targets
    z = x - _row_reduce(x, "max")
    if not z.flags.c_contiguous:  # (x a transposed view: the flat positions above are of C order)
        z = xp.ascontiguousarray(z)
    return z, index, valid, kept


def _loss_from_parts(lse, picked, valid, kept: int, reduction: str):
    """Per-row losses ``lse - picked`` (0 for ignored rows), reduced (``'mean'``: over kept rows)."""
    losses = lse - picked
    if valid is not None:
        losses *= valid
    if reduction == "none":
        return losses
    total = losses.sum()
    return total if reduction == "sum" else total / losses.dtype.type(kept)


def _gradient_in_place(p, index, valid, kept: int, g, reduction: str):
    """Turn softmax probabilities ``p`` (N, C, contiguous) into the cross-entropy gradient, in place."""
    p.reshape(-1)[index] -= 1
    if reduction == "none":
        scale = g if valid is None else g * valid
        p *= scale[:, None]
        return p
    factor = g / p.dtype.type(kept) if reduction == "mean" else g
    p *= factor if valid is None else (valid * factor)[:, None]
    return p


@functools.lru_cache(maxsize=64)
def _xent_sizes(n: int, c: int, g: float, ignore_index: int, mean: bool) -> tuple:
    """The softmax cross-entropy kernels' size and scale arguments as ctypes values, made once per
    distinct set (a call reads them, never writes them): unconverted, because a small batch's
    gradient costs about as much as ctypes' conversions, and made once, because making them is a
    tenth of W6's gradient call."""
    return (native.c_int64(n), native.c_int64(c), native.c_float(g), native.c_int64(ignore_index),
            native.c_int(int(mean)))


def _native_gradient(x, t, g, ignore_index: int, mean: bool, with_losses: bool = False):
    """SoftmaxCrossEntropyGrad's forward in one native call (backend/native/transformer.c: 2-4x
    faster than the NumPy path's dozen calls at 3 to 10 classes), or None where it does not apply
    (native kernels off, not float32 NumPy arrays, not int64 targets, or a target out of range).
    ``with_losses``: ``(gradient, per-row losses, rows kept)`` for SoftmaxCrossEntropyWithGrad."""
    fn = native.kernel("softmax_xent_with_grad_f32" if with_losses else "softmax_xent_grad_f32")
    if fn is None or type(x) is not np.ndarray or x.dtype != np.float32 or x.ndim != 2 or not x.flags.c_contiguous \
            or type(t) is not np.ndarray or t.dtype != np.int64 or not t.flags.c_contiguous or x.size == 0:
        return None
    n, c = x.shape
    if t.shape != (n,):
        return None
    out, info = np.empty((n, c), np.float32), np.zeros(2, np.int64)
    sizes = _xent_sizes(n, c, float(g), ignore_index, mean)
    if with_losses:
        losses = np.empty(n, np.float32)
        fn.untyped(native.pointer(x), native.pointer(t), native.pointer(out), native.pointer(losses),
                   native.pointer(info), *sizes)
        return None if info[0] else (out, losses, int(info[1]))
    fn.untyped(native.pointer(x), native.pointer(t), native.pointer(out), native.pointer(info), *sizes)
    return None if info[0] else out  # (out-of-range targets: the NumPy path says what it says)


# The loss-and-gradient kernel pays from about this many classes (1120 x 65: 180 us against NumPy's
# 310-350 us); with fewer, its per-row work (a log, short loops) loses to the NumPy path's across-rows
# reductions (1120 x 3: 85 against 70 us).
_NATIVE_LOSS_MIN_CLASSES = 8


class _SoftmaxCrossEntropyOp(Op):
    """What the fused softmax cross-entropy ops share: PyTorch's ``ignore_index`` and ``reduction``."""

    props = ("ignore_index", "reduction")
    saves_output = False

    def __init__(self, ignore_index: int = -100, reduction: str = "mean"):
        self.ignore_index, self.reduction = int(ignore_index), reduction


class SoftmaxCrossEntropy(_SoftmaxCrossEntropyOp):
    """Cross-entropy of logits (N, C) and class indices (N,): log-softmax, pick and reduce fused in one
    op (one pass over the logits instead of a dozen small ops), with ``ignore_index`` and reductions
    as PyTorch. Its gradient is :class:`SoftmaxCrossEntropyGrad`: ``(softmax(x) - onehot) * weight``."""
    onnx = "SoftmaxCrossEntropyLoss"

    def onnx_attributes(self, opset):
        return {"ignore_index": self.ignore_index, "reduction": self.reduction}

    def infer(self, x, t):
        return TensorSpec(x.shape[:1] if self.reduction == "none" else (), x.dtype)

    def forward(self, xp, x, t):
        z, index, valid, kept = _softmax_parts(xp, x, t, self.ignore_index)
        picked = z.reshape(-1)[index]
        lse = xp.log(_row_reduce(xp.exp(z, out=z), "sum")[:, 0])
        return _loss_from_parts(lse, picked, valid, kept, self.reduction)

    def backward(self, inputs, out, g):
        x, t = inputs
        return SoftmaxCrossEntropyGrad(self.ignore_index, self.reduction).apply(x, t, g), None


class SoftmaxCrossEntropyGrad(_SoftmaxCrossEntropyOp):
    """``(softmax(x) - onehot(t)) * w`` with ``w`` = g (per row for ``'none'``) over the non-ignored
    rows, divided by their count for ``'mean'``: the gradient of :class:`SoftmaxCrossEntropy`."""

    def infer(self, x, t, g):
        return TensorSpec(x.shape, x.dtype)

    def forward(self, xp, x, t, g):
        if self.reduction != "none":
            fast = _native_gradient(x, t, g, self.ignore_index, self.reduction == "mean")
            if fast is not None:
                return fast
        p, index, valid, kept = _softmax_parts(xp, x, t, self.ignore_index)
        xp.exp(p, out=p)
        p /= _row_reduce(p, "sum")
        return _gradient_in_place(p, index, valid, kept, g, self.reduction)

    def backward(self, inputs, out, gout):
        x, t, g = inputs
        n_classes = x.shape[1]
        valid = astype(not_equal(t, self.ignore_index), x.dtype)
        onehot = astype(equal(expand_dims(where(not_equal(t, self.ignore_index), t, 0), 1),
                              arange(n_classes)), x.dtype)
        p = softmax(x, axis=1)
        if self.reduction == "none":
            w = valid * g
        elif self.reduction == "sum":
            w = valid * g
        else:
            w = valid * (g / _sum(valid))
        gx = gg_ = None
        if needs_grad(x):
            u = gout * expand_dims(w, 1)
            gx = p * u - p * _sum(p * u, axis=1, keepdims=True)
        if needs_grad(g):
            terms = _sum((p - onehot) * gout, axis=1) * valid
            gg_ = terms if self.reduction == "none" else (
                _sum(terms) if self.reduction == "sum" else _sum(terms) / _sum(valid))
        return gx, None, gg_


class SoftmaxCrossEntropyWithGrad(_SoftmaxCrossEntropyOp):
    """:class:`SoftmaxCrossEntropy` and :class:`SoftmaxCrossEntropyGrad` of the same logits in one
    pass (softmax computed once). The compiler makes it when a program needs both (a training step);
    its forward returns the tuple ``(loss, gradient)``, read by two ``Unpack`` nodes."""

    multiple_outputs = True

    def infer(self, x, t, g):
        return TensorSpec(x.shape, x.dtype)  # the spec of its largest output, the gradient

    def forward(self, xp, x, t, g):
        if self.reduction != "none" and x.shape[1] >= _NATIVE_LOSS_MIN_CLASSES:
            fast = _native_gradient(x, t, g, self.ignore_index, self.reduction == "mean", with_losses=True)
            if fast is not None:
                gradient, losses, kept = fast
                total = losses.sum()
                return xp.asarray(total if self.reduction == "sum" else total / losses.dtype.type(kept)), gradient
        p, index, valid, kept = _softmax_parts(xp, x, t, self.ignore_index)
        picked = p.reshape(-1)[index]
        xp.exp(p, out=p)
        s = _row_reduce(p, "sum")
        loss = _loss_from_parts(xp.log(s[:, 0]), picked, valid, kept, self.reduction)
        p /= s
        return xp.asarray(loss), _gradient_in_place(p, index, valid, kept, g, self.reduction)

    def backward(self, inputs, out, g):
        raise GradError("SoftmaxCrossEntropyWithGrad is made by the compiler after differentiation")


def cross_entropy(input, target, weight=None, ignore_index: int = -100, reduction: str = "mean",
                  label_smoothing: float = 0.0) -> Tensor:
    """Cross-entropy between logits and targets (``log_softmax`` + ``nll_loss``), as PyTorch.

    Shapes: input (N, C) or (N, C, d1, ...) (or (C,)) logits; target either integer class indices
    (N,) / (N, d1, ...) or float class probabilities of the input's shape; weight (C,).
    With class indices, ``'mean'`` divides by the summed weights of non-ignored targets; with
    probabilities, by the number of samples. ``label_smoothing`` in [0, 1] mixes the target with the
    uniform distribution.

    Examples:
        >>> gg.cross_entropy(gg.randn(4, 3), gg.tensor([0, 2, 1, 2]))
    """
    _check_reduction("cross_entropy", reduction)
    if not 0.0 <= label_smoothing <= 1.0:
        raise ValueError(f"cross_entropy: label_smoothing must be in [0, 1], got {label_smoothing}")
    input, target, weight = as_tensor_args(input, target, weight)
    if input.ndim == 0:
        raise ShapeError("cross_entropy: input must have a class axis, shape (N, C), (N, C, d1, ...) or (C,)")
    class_axis = 1 if input.ndim >= 2 else 0
    if target.dtype.kind == "f" and tuple(target.shape) == tuple(input.shape):
        logp = log_softmax(input, axis=class_axis)
        return _soft_cross_entropy(logp, target, weight, reduction, label_smoothing, class_axis)
    if (input.ndim == 2 and weight is None and label_smoothing == 0.0 and input.shape[1]
            and input.dtype.kind == "f"):
        # the common case, fused (same results as the composition below; the op table checks both)
        _index_target("cross_entropy", input, target, class_axis)
        _check_range("cross_entropy", target, input.shape[1], ignore_index)
        return SoftmaxCrossEntropy(ignore_index, reduction).apply(input, target)
    logp = log_softmax(input, axis=class_axis)
    return _nll("cross_entropy", logp, target, weight, ignore_index, reduction, label_smoothing)


def _soft_cross_entropy(logp: Tensor, target: Tensor, weight, reduction: str, label_smoothing: float,
                        class_axis: int) -> Tensor:
    n_classes = logp.shape[class_axis]
    if label_smoothing > 0.0:
        target = target * (1.0 - label_smoothing) + label_smoothing / n_classes
    terms = logp * target
    if weight is not None:
        if tuple(weight.shape) != (n_classes,):
            raise ShapeError(f"cross_entropy: weight must have shape ({n_classes},), got {_fmt(weight.shape)}")
        terms = terms * _class_view(weight, logp.ndim, class_axis)
    loss = -_sum(terms, axis=class_axis)
    return _reduce(loss, reduction, "cross_entropy")


def _clamped_log(x: Tensor) -> Tensor:
    """``max(log(x), -100)`` as PyTorch's BCE, with a finite gradient (0) where ``x == 0``."""
    positive = greater(x, 0)
    return clip(where(positive, log(where(positive, x, 1.0)), -100.0), min=-100.0)


def binary_cross_entropy(input, target, weight=None, reduction: str = "mean") -> Tensor:
    """Binary cross-entropy between probabilities ``input`` in [0, 1] and ``target`` (logs clamped at
    -100, as PyTorch). Shapes: input, target (*) the same; weight broadcastable to them.
    """
    _check_reduction("binary_cross_entropy", reduction)
    input, target, weight = as_tensor_args(input, target, weight)
    _pointwise_shapes("binary_cross_entropy", input, target)
    loss = -(target * _clamped_log(input) + (1.0 - target) * _clamped_log(1.0 - input))
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction, "binary_cross_entropy")


def binary_cross_entropy_with_logits(input, target, weight=None, pos_weight=None,
                                     reduction: str = "mean") -> Tensor:
    """``binary_cross_entropy(sigmoid(input), target)`` computed stably from logits.

    Shapes: input, target (*) the same; weight broadcastable to them; pos_weight (C,) broadcast along
    the last axis (the weight of positive examples per class).
    """
    _check_reduction("binary_cross_entropy_with_logits", reduction)
    input, target, weight, pos_weight = as_tensor_args(input, target, weight, pos_weight)
    _pointwise_shapes("binary_cross_entropy_with_logits", input, target)
    # softplus(-x) = log(1 + exp(-x)) = max(-x, 0) + log1p(exp(-|x|)); maximum splits the tie at 0,
    # so the gradient at x = 0 is the exact -1/2 (zero-initialized logits train correctly)
    softplus_neg = maximum(-input, 0.0) + log1p(exp(-_abs(input)))
    if pos_weight is not None:
        loss = (1.0 - target) * input + (1.0 + (pos_weight - 1.0) * target) * softplus_neg
    else:
        loss = (1.0 - target) * input + softplus_neg
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction, "binary_cross_entropy_with_logits")


# ---- regression -----------------------------------------------------------------------------------
def mse_loss(input, target, reduction: str = "mean") -> Tensor:
    """Squared error ``(input - target)^2``. Shapes: input, target broadcastable (*) -> reduced."""
    _check_reduction("mse_loss", reduction)
    input, target = as_tensor_args(input, target)
    _warn_if_broadcast("mse_loss", input, target)
    diff = input - target
    return _reduce(diff * diff, reduction, "mse_loss")


def l1_loss(input, target, reduction: str = "mean") -> Tensor:
    """Absolute error ``|input - target|``. Shapes: input, target broadcastable (*) -> reduced."""
    _check_reduction("l1_loss", reduction)
    input, target = as_tensor_args(input, target)
    _warn_if_broadcast("l1_loss", input, target)
    return _reduce(_abs(input - target), reduction, "l1_loss")


def huber_loss(input, target, reduction: str = "mean", delta: float = 1.0) -> Tensor:
    """Huber loss: ``0.5 d^2`` where ``|d| < delta``, else ``delta (|d| - 0.5 delta)``, with
    ``d = input - target``. Shapes: input, target broadcastable (*) -> reduced.
    """
    _check_reduction("huber_loss", reduction)
    if delta <= 0:
        raise ValueError(f"huber_loss: delta must be positive, got {delta}")
    input, target = as_tensor_args(input, target)
    _warn_if_broadcast("huber_loss", input, target)
    diff = input - target
    size = _abs(diff)
    loss = where(less(size, delta), diff * diff * 0.5, (size - 0.5 * delta) * delta)
    return _reduce(loss, reduction, "huber_loss")


def smooth_l1_loss(input, target, reduction: str = "mean", beta: float = 1.0) -> Tensor:
    """Smooth L1: ``0.5 d^2 / beta`` where ``|d| < beta``, else ``|d| - 0.5 beta`` (``d = input -
    target``; ``beta = 0`` is the L1 loss), as PyTorch. It is ``huber_loss(delta=beta) / beta``.
    Shapes: input, target broadcastable (*) -> reduced.
    """
    _check_reduction("smooth_l1_loss", reduction)
    if beta < 0:
        raise ValueError(f"smooth_l1_loss: beta must be non-negative, got {beta}")
    input, target = as_tensor_args(input, target)
    _warn_if_broadcast("smooth_l1_loss", input, target)
    diff = input - target
    size = _abs(diff)
    if beta == 0.0:
        return _reduce(size, reduction, "smooth_l1_loss")
    loss = where(less(size, beta), diff * diff * (0.5 / beta), size - 0.5 * beta)
    return _reduce(loss, reduction, "smooth_l1_loss")


# ---- margins and divergences ----------------------------------------------------------------------
def hinge_embedding_loss(input, target, margin: float = 1.0, reduction: str = "mean") -> Tensor:
    """Hinge embedding loss for targets in {1, -1}: ``x`` where ``y == 1``, ``max(0, margin - x)``
    where ``y == -1`` (PyTorch's rule: a target of neither value gets both terms).
    Shapes: input, target (*) the same -> reduced.
    """
    _check_reduction("hinge_embedding_loss", reduction)
    input, target = as_tensor_args(input, target)
    _pointwise_shapes("hinge_embedding_loss", input, target)
    margin_term = where(not_equal(target, 1), maximum(margin - input, 0.0), 0.0)
    self_term = where(not_equal(target, -1), input, 0.0)
    return _reduce(margin_term + self_term, reduction, "hinge_embedding_loss")


def multi_margin_loss(input, target, p: int = 1, margin: float = 1.0, weight=None,
                      reduction: str = "mean") -> Tensor:
    """Multi-class hinge loss, as PyTorch: per sample ``sum_{j != y} w[y] * max(0, margin - x[y] +
    x[j])^p / C``.

    Shapes: input (N, C) or (C,); target integer (N,) or (); weight (C,) -> (N,) or reduced.
    """
    _check_reduction("multi_margin_loss", reduction)
    if p not in (1, 2):
        raise ValueError(f"multi_margin_loss: only p = 1 and p = 2 are supported, got {p}")
    input, target, weight = as_tensor_args(input, target, weight)
    if input.ndim not in (1, 2):
        raise ShapeError(f"multi_margin_loss: input must be (N, C) or (C,), got {_fmt(input.shape)}")
    class_axis = input.ndim - 1
    n_classes = input.shape[class_axis]
    _index_target("multi_margin_loss", input, target, class_axis)
    _check_range("multi_margin_loss", target, n_classes, -1)
    if weight is not None and tuple(weight.shape) != (n_classes,):
        raise ShapeError(f"multi_margin_loss: weight must have shape ({n_classes},), got {_fmt(weight.shape)}")
    classes = arange(n_classes, device=target.device if not target.is_symbolic else None)
    one_hot = astype(equal(expand_dims(target, class_axis), classes), input.dtype)
    picked = _sum(input * one_hot, axis=class_axis, keepdims=True)  # x[y]
    hinge = maximum(margin - picked + input, 0.0)
    if p == 2:
        hinge = hinge * hinge
    if weight is not None:
        hinge = hinge * _sum(one_hot * weight, axis=class_axis, keepdims=True)  # w[y]
    loss = _sum(hinge * (1.0 - one_hot), axis=class_axis) * (1.0 / n_classes)
    return _reduce(loss, reduction, "multi_margin_loss")


def _xlogx(t: Tensor) -> Tensor:
    """``t * log(t)``, 0 where ``t == 0`` (finite gradients there too)."""
    positive = greater(t, 0)
    return where(positive, t * log(where(positive, t, 1.0)), 0.0)


def kl_div(input, target, reduction: str = "mean", log_target: bool = False) -> Tensor:
    """Kullback-Leibler divergence ``target * (log(target) - input)`` with ``input`` the
    log-probabilities, as PyTorch (``log_target``: ``target`` holds log-probabilities too).

    Shapes: input, target broadcastable (*). ``reduction``: ``'none'``, ``'sum'``, ``'mean'`` (over
    every element, PyTorch's default, which is not the mathematical KL divergence) or
    ``'batchmean'`` (the sum divided by the batch size ``input.shape[0]``: the true KL divergence).
    """
    if reduction not in _REDUCTIONS + ("batchmean",):
        raise ValueError(f"kl_div: reduction must be 'mean', 'batchmean', 'sum' or 'none', got {reduction!r}")
    input, target = as_tensor_args(input, target)
    if log_target:
        loss = exp(target) * (target - input)
    else:
        loss = _xlogx(target) - target * input
    if reduction != "batchmean":
        return _reduce(loss, reduction, "kl_div")
    total = _sum(loss)
    if input.ndim == 0:
        return total
    batch = input.shape[0]
    if batch is None:
        return total / count_like(input, 0)
    return total * (1.0 / batch) if batch else total * float("nan")


__all__ = ["cross_entropy", "nll_loss", "binary_cross_entropy", "binary_cross_entropy_with_logits", "mse_loss",
           "l1_loss", "huber_loss", "smooth_l1_loss", "hinge_embedding_loss", "multi_margin_loss", "kl_div"]
