"""Neural-network ops: softmax, log_softmax, batch/layer/group norm, dropout, embedding.

Primitives (own gradient): ``Softmax``, ``LogSoftmax`` (stable, one pass each way), ``DropoutMask``
(the random keep-mask; the product with ``x`` is an ordinary ``mul``), ``Embedding`` and its
adjoint ``EmbeddingBackward``. The normalizations are composed from reductions and elementwise
ops, so they get second derivatives and graph mode for free. Losses live in ``losses.py``.
Argument names follow ``torch.nn.functional`` except ``axis`` (NumPy's name) for softmax.
"""
from __future__ import annotations

import math
import numbers
from typing import Optional, Sequence

from graphgrad.backend import kernel, native, np
from graphgrad.core.op import Op, as_tensor_args, needs_grad
from graphgrad.core.random import Generator, rng_of
from graphgrad.core.spec import TensorSpec, normalize_axis
from graphgrad.core.tensor import Tensor
from graphgrad.core.autograd import is_grad_enabled, no_grad, note_inplace_write
from graphgrad.dtypes import float_result
from graphgrad.errors import ArgumentError, DTypeError, GradError, IndexRangeError, ShapeError
from graphgrad.ops.elementwise import equal, where
from graphgrad.ops.reduce import sum as _sum
from graphgrad.ops.array import reshape_like
from graphgrad.ops.shape import reshape
from graphgrad.ops.unary import exp, sqrt


def _fmt(shape) -> str:
    return str(tuple(shape))


def _float_spec(op: Op, x: TensorSpec) -> TensorSpec:
    if x.dtype.kind not in "biuf":
        raise DTypeError(f"{op.name}: not defined for dtype {x.dtype}")
    return TensorSpec(x.shape, float_result(x.dtype))


# ---- softmax ----------------------------------------------------------------------------------
class _Normalizer(Op):
    """An op that normalizes along one ``axis`` and keeps the shape (softmax, log_softmax)."""

    def onnx_attributes(self, opset):
        return {"axis": self.axis}

    props = ("axis",)

    def __init__(self, axis: int = -1):
        if isinstance(axis, bool) or not isinstance(axis, numbers.Integral):
            raise ArgumentError(f"{self.name}: axis (dim) must be an integer, got {axis!r} ({type(axis).__name__})")
        self.axis = int(axis)

    def infer(self, x):
        normalize_axis(self.name, self.axis, len(x.shape))
        return _float_spec(self, x)


class Softmax(_Normalizer):
    """``exp(x - max) / sum(exp(x - max))`` along ``axis``. Gradient: ``y * (g - sum(g * y))``."""
    onnx = "Softmax"

    def forward(self, xp, x):
        e = xp.exp(x - x.max(axis=self.axis, keepdims=True))
        e /= e.sum(axis=self.axis, keepdims=True)
        return e

    def backward(self, inputs, out, g):
        if not is_grad_enabled():
            return (SoftmaxGrad(self.axis).apply(out, g),)
        gy = g * out  # create_graph: in ordinary ops, differentiable again
        return (gy - out * _sum(gy, axis=self.axis, keepdims=True),)


class SoftmaxGrad(_Normalizer):
    """``y * (g - sum(g * y))`` along ``axis`` (softmax's backward from its output ``y``) as one op.
    Made only when no gradient graph is recorded."""

    def infer(self, y, g):
        normalize_axis(self.name, self.axis, len(y.shape))
        return TensorSpec(y.shape, y.dtype)

    def forward(self, xp, y, g):
        gy = g * y
        total = gy.sum(axis=self.axis, keepdims=True)
        total = y * total
        gy -= total
        return gy

    def backward(self, inputs, out, g):
        raise GradError("SoftmaxGrad is made only when no gradient graph is recorded: differentiate softmax "
                        "with create_graph=True instead")


class LogSoftmax(_Normalizer):
    """``x - max - log(sum(exp(x - max)))`` along ``axis`` (finite for any finite logits).
    Gradient: ``g - exp(y) * sum(g)``."""
    onnx = "LogSoftmax"

    def forward(self, xp, x):
        shifted = x - x.max(axis=self.axis, keepdims=True)
        return shifted - xp.log(xp.exp(shifted).sum(axis=self.axis, keepdims=True))

    def backward(self, inputs, out, g):
        return (g - exp(out) * _sum(g, axis=self.axis, keepdims=True),)


def softmax(x, axis: int = -1, dim: Optional[int] = None) -> Tensor:
    """Softmax along ``axis`` (``dim``: PyTorch's name for it): non-negative, sums to 1. Shapes: (...) -> (...).

    Examples:
        >>> gg.softmax(gg.tensor([[1.0, 2.0, 3.0]])).sum(axis=-1)
        tensor([1.])
    """
    return Softmax(axis if dim is None else dim).apply(*as_tensor_args(x))


def log_softmax(x, axis: int = -1, dim: Optional[int] = None) -> Tensor:
    """``log(softmax(x))`` along ``axis`` (or ``dim``) computed stably (no overflow/underflow for large
    logits). Shapes: (...) -> (...)."""
    return LogSoftmax(axis if dim is None else dim).apply(*as_tensor_args(x))


# ---- normalization ----------------------------------------------------------------------------
def _count(x: Tensor, axes: Sequence[int]):
    """The number of elements of ``x`` over ``axes``: a Python int, or a 0-d tensor computed when the
    graph runs if some of those dimensions are unknown (``None``)."""
    if None not in x.shape:
        n = 1
        for a in axes:
            n *= x.shape[a]
        return n
    from graphgrad.ops.array import count_like

    return count_like(x, tuple(axes))


def _moments(x: Tensor, axes: tuple, op: str) -> tuple:
    """Mean and biased variance over ``axes`` (kept as size-1 axes), and the element count."""
    n = _count(x, axes)
    mean = _sum(x, axis=axes, keepdims=True) * (1.0 / n)
    centered = x - mean
    var = _sum(centered * centered, axis=axes, keepdims=True) * (1.0 / n)
    return mean, centered, var, n


def _channel_view(p, ndim: int, axis: int = 1):
    """A per-channel vector ``(C,)`` reshaped to broadcast along ``axis`` of a rank-``ndim`` tensor."""
    if p is None:
        return None
    shape = [1] * ndim
    shape[axis] = -1
    return reshape(p, tuple(shape))


def _check_param(op: str, name: str, p, expected: tuple) -> None:
    if p is not None and tuple(p.shape) != tuple(expected) and None not in expected:
        raise ShapeError(f"{op}: {name} must have shape {_fmt(expected)}, got {_fmt(p.shape)}")


def batch_norm(x, running_mean: Optional[Tensor], running_var: Optional[Tensor], weight=None, bias=None,
               training: bool = False, momentum: float = 0.1, eps: float = 1e-5) -> Tensor:
    """Batch normalization over every axis but the channel axis 1.

    Shapes: x (N, C) or (N, C, *); running_mean, running_var, weight, bias (C,). In training (or
    when the running stats are ``None``) the batch statistics normalize, and the running stats,
    if given, are updated in place: ``r = (1 - momentum) r + momentum * stat``, with the unbiased
    batch variance (as PyTorch). Otherwise the running stats normalize.

    Examples:
        >>> y = gg.batch_norm(x, rm, rv, w, b, training=True)   # x (32, 16, 8, 8)
    """
    x, running_mean, running_var, weight, bias = as_tensor_args(x, running_mean, running_var, weight, bias)
    if x.ndim < 2:
        raise ShapeError(f"batch_norm: expected input of shape (N, C) or (N, C, *), got {_fmt(x.shape)}")
    c = x.shape[1]
    for name, p in (("running_mean", running_mean), ("running_var", running_var), ("weight", weight),
                    ("bias", bias)):
        _check_param("batch_norm", name, p, (c,))
    axes = (0,) + tuple(range(2, x.ndim))
    if training or running_mean is None or running_var is None:
        mean, centered, var, n = _moments(x, axes, "batch_norm")
        if training and (running_mean is not None or running_var is not None) and not x.is_symbolic:
            if n <= 1:
                raise ValueError(f"batch_norm: expected more than 1 value per channel when training, "
                                 f"got input of shape {_fmt(x.shape)}")
            _update_running(running_mean, mean, momentum)
            _update_running(running_var, var * (n / (n - 1)), momentum)
        elif training and x.is_symbolic:
            _assign_running(running_mean, mean, momentum)
            _assign_running(running_var, var * (n / (n - 1)), momentum)
        y = centered * (1.0 / sqrt(var + eps))
    else:
        rm, rv = _channel_view(running_mean, x.ndim), _channel_view(running_var, x.ndim)
        y = (x - rm) * (1.0 / sqrt(rv + eps))
    if weight is not None:
        y = y * _channel_view(weight, x.ndim)
    if bias is not None:
        y = y + _channel_view(bias, x.ndim)
    return y


def _update_running(stat: Optional[Tensor], batch_value: Tensor, momentum: float) -> None:
    """``stat = (1 - momentum) * stat + momentum * batch_value`` in place, outside autograd."""
    if stat is None:
        return
    with no_grad():
        value = batch_value._data.reshape(stat.shape).astype(stat.dtype, copy=False)
        stat._data *= (1.0 - momentum)
        stat._data += momentum * value
        note_inplace_write(stat._data, "the running-statistics update of a normalization layer")


def _assign_running(stat: Optional[Tensor], batch_value: Tensor, momentum: float) -> None:
    """In a graph: an assign node ``stat <- stat + momentum * (batch_value - stat)`` when ``stat`` is a
    Variable (``nn.BatchNorm``'s buffers are); plain tensors cannot be updated by a graph."""
    if stat is None or not getattr(stat, "is_variable", False):
        return
    value = batch_value.reshape(stat.shape)
    # graph tensor first, so the variable is read when the graph runs (not captured as a constant)
    stat.assign((value - stat) * momentum + stat)


def _row_stats(xp, rows, eps: float) -> tuple:
    """Mean and ``1 / sqrt(var + eps)`` of each row of a 2-D array, as (R, 1) columns. The sums are
    einsum dot products: NumPy's ``sum(axis=1)`` over short rows is 3-4x slower."""
    n = rows.shape[1]
    mean = xp.einsum("ij->i", rows)[:, None]
    mean *= 1.0 / max(n, 1)
    centered = rows - mean
    rstd = xp.einsum("ij,ij->i", centered, centered)[:, None]
    rstd *= 1.0 / max(n, 1)
    rstd += eps
    xp.sqrt(rstd, out=rstd)
    xp.divide(1.0, rstd, out=rstd)
    return centered, rstd


class LayerNorm(Op):
    """Layer normalization over the last ``k`` axes, then ``* weight + bias`` (each optional, as the
    props say; inputs ``x[, weight][, bias]``, parameters of shape ``x.shape[-k:]`` and x's dtype).

    One op rather than the composition: the forward is a handful of in-place passes, and the backward
    one :class:`LayerNormGrad` (statistics recomputed from ``x``: nothing but ``x`` is kept). With
    ``create_graph`` the backward is the formula in ordinary ops, so higher orders work. float32 NumPy
    arrays take one native pass over the rows, forward and backward, when native kernels are on
    (backend/native/transformer.c, ~4x)."""

    props = ("k", "eps", "has_weight", "has_bias")
    saves_output = False

    def __init__(self, k: int, eps: float = 1e-5, has_weight: bool = True, has_bias: bool = True):
        self.k, self.eps = int(k), float(eps)
        self.has_weight, self.has_bias = bool(has_weight), bool(has_bias)

    def infer(self, x, *params):
        if x.dtype.kind != "f" or any(p.dtype != x.dtype for p in params):
            raise DTypeError(f"layer_norm: expected a float input and parameters of its dtype, got {x.dtype} and "
                             f"{[str(p.dtype) for p in params]}")
        return TensorSpec(x.shape, x.dtype)

    def forward(self, xp, x, *params):
        size = math.prod(x.shape[x.ndim - self.k:])
        fn = native.kernel("layer_norm_f32")
        if fn is not None and type(x) is np.ndarray and x.dtype == np.float32 and not x.flags.c_contiguous:
            x = np.ascontiguousarray(x)  # (NumPy's path below copies a strided x too)
        if fn is not None and native.usable(x, *params):  # one pass per row (backend/native/transformer.c)
            weight, bias = self._params(params)
            out = np.empty(x.shape, x.dtype)
            fn(x, x if weight is None else weight, x if bias is None else bias, out,
               math.prod(x.shape[:x.ndim - self.k]), size, self.eps, int(self.has_weight), int(self.has_bias))
            return out
        rows = math.prod(x.shape[:x.ndim - self.k])  # (not -1: a reshape by -1 fails for size 0)
        centered, rstd = _row_stats(xp, x.reshape(rows, size), self.eps)
        centered *= rstd
        weight, bias = self._params(params)
        if weight is not None:
            centered *= weight.reshape(-1)
        if bias is not None:
            centered += bias.reshape(-1)
        return centered.reshape(x.shape)

    def _params(self, params) -> tuple:
        weight = params[0] if self.has_weight else None
        bias = params[-1] if self.has_bias else None
        return weight, bias

    def backward(self, inputs, out, g):
        x, *params = inputs
        weight, bias = self._params(params)
        if is_grad_enabled():  # create_graph: the formula in ordinary ops, differentiable again
            axes = tuple(range(x.ndim - self.k, x.ndim))
            _, centered, var, n = _moments(x, axes, "layer_norm")
            rstd = 1.0 / sqrt(var + self.eps)
            xhat = centered * rstd
            gxhat = g if weight is None else g * weight
            gx = (gxhat - _sum(gxhat, axis=axes, keepdims=True) * (1.0 / n)
                  - xhat * (_sum(gxhat * xhat, axis=axes, keepdims=True) * (1.0 / n))) * rstd
            grads = [gx] + ([g * xhat] if weight is not None else []) + ([g] if bias is not None else [])
            return tuple(grads)  # (autograd sums the parameter gradients over the leading axes)
        packed = LayerNormGrad(self.k, self.eps, self.has_weight).apply(x, *params[:int(self.has_weight)], g)
        grads = [_shaped_like(packed[:-2], x)]
        if weight is not None:
            grads.append(_shaped_like(packed[-2], weight))
        if bias is not None:
            grads.append(_shaped_like(packed[-1], bias))
        return tuple(grads)


def _shaped_like(x: Tensor, like: Tensor) -> Tensor:
    """``x`` reshaped to ``like``'s shape (no op when the known shapes already agree)."""
    return x if None not in like.shape and tuple(x.shape) == tuple(like.shape) else reshape_like(x, like)


class LayerNormGrad(Op):
    """All gradients of :class:`LayerNorm` in one op, packed as rows of one (R + 2, C) array
    (``C`` the normalized size, ``R`` the number of normalized rows): rows ``:R`` the input's gradient,
    row ``R`` the weight's, row ``R + 1`` the bias's. Inputs ``x[, weight], g``. Only made when no
    graph is recorded (``LayerNorm.backward`` writes the formula in ordinary ops otherwise)."""

    props = ("k", "eps", "has_weight")
    saves_output = False

    def __init__(self, k: int, eps: float, has_weight: bool):
        self.k, self.eps, self.has_weight = int(k), float(eps), bool(has_weight)

    def infer(self, x, *rest):
        tail = x.shape[len(x.shape) - self.k:]
        size = None if None in tail else math.prod(tail)
        lead = x.shape[:len(x.shape) - self.k]
        rows = None if None in lead else math.prod(lead) + 2
        return TensorSpec((rows, size), x.dtype)

    def forward(self, xp, x, *rest):
        g = rest[-1]
        size = math.prod(x.shape[x.ndim - self.k:])
        n = math.prod(x.shape[:x.ndim - self.k])
        fn = native.kernel("layer_norm_grad_f32")
        if fn is not None and x.shape == g.shape and type(x) is type(g) is np.ndarray and x.dtype == np.float32:
            x, g = (a if a.flags.c_contiguous else np.ascontiguousarray(a) for a in (x, g))  # (cheap copies)
        if fn is not None and x.shape == g.shape and native.usable(x, *rest[:-1], g):  # native/transformer.c
            out = np.empty((n + 2, size), x.dtype)
            fn(x, rest[0] if self.has_weight else x, g, out, n, size, self.eps, int(self.has_weight))
            return out
        rows, grows = x.reshape(n, size), g.reshape(n, size)
        centered, rstd = _row_stats(xp, rows, self.eps)
        xhat = centered
        xhat *= rstd
        out = xp.empty((n + 2, size), x.dtype)
        gx = out[:n]
        if self.has_weight:
            xp.multiply(grows, rest[0].reshape(-1), out=gx)  # the gradient of xhat
        else:
            gx[...] = grows
        xp.einsum("ij,ij->j", grows, xhat, out=out[n])
        xp.einsum("ij->j", grows, out=out[n + 1])
        mean_g = xp.einsum("ij->i", gx)[:, None]
        mean_g *= 1.0 / max(size, 1)
        mean_gx = xp.einsum("ij,ij->i", gx, xhat)[:, None]
        mean_gx *= 1.0 / max(size, 1)
        xhat *= mean_gx
        gx -= xhat
        gx -= mean_g
        gx *= rstd
        return out

    def backward(self, inputs, out, g):
        raise GradError("LayerNormGrad is made only when no gradient graph is recorded: differentiate "
                        "layer_norm with create_graph=True instead")


def layer_norm(x, normalized_shape, weight=None, bias=None, eps: float = 1e-5) -> Tensor:
    """Normalize over the trailing ``normalized_shape`` axes (per sample), then scale and shift.

    Shapes: x (*, *normalized_shape); weight, bias ``normalized_shape``.

    Examples:
        >>> y = gg.layer_norm(x, (128,), w, b)   # x (16, 64, 128), w and b (128,)
    """
    x, weight, bias = as_tensor_args(x, weight, bias)
    if isinstance(normalized_shape, int):
        normalized_shape = (normalized_shape,)
    normalized_shape = tuple(normalized_shape)
    k = len(normalized_shape)
    if k == 0 or k > x.ndim or tuple(x.shape[x.ndim - k:]) != normalized_shape:
        raise ShapeError(f"layer_norm: normalized_shape {normalized_shape} must be the trailing dimensions "
                         f"of the input, got input of shape {_fmt(x.shape)}")
    _check_param("layer_norm", "weight", weight, normalized_shape)
    _check_param("layer_norm", "bias", bias, normalized_shape)
    params = [p for p in (weight, bias) if p is not None]
    if x.dtype.kind == "f" and all(p.dtype == x.dtype and tuple(p.shape) == normalized_shape for p in params):
        return LayerNorm(k, eps, weight is not None, bias is not None).apply(x, *params)
    # mixed dtypes (or integer input): the composition promotes as ordinary ops do
    _, centered, var, _ = _moments(x, tuple(range(x.ndim - k, x.ndim)), "layer_norm")
    y = centered * (1.0 / sqrt(var + eps))
    if weight is not None:
        y = y * weight
    if bias is not None:
        y = y + bias
    return y


def group_norm(x, num_groups: int, weight=None, bias=None, eps: float = 1e-5) -> Tensor:
    """Normalize each of ``num_groups`` channel groups per sample, then scale and shift per channel.

    Shapes: x (N, C, *) with C divisible by ``num_groups``; weight, bias (C,).
    """
    x, weight, bias = as_tensor_args(x, weight, bias)
    if x.ndim < 2:
        raise ShapeError(f"group_norm: expected input of shape (N, C, *), got {_fmt(x.shape)}")
    n, c = x.shape[0], x.shape[1]
    if c is None or c % num_groups:
        raise ShapeError(f"group_norm: {c} channels cannot be split into {num_groups} groups "
                         f"(input shape {_fmt(x.shape)})")
    _check_param("group_norm", "weight", weight, (c,))
    _check_param("group_norm", "bias", bias, (c,))
    spatial = x.shape[2:]
    if n is not None and None in spatial:
        raise ShapeError(f"group_norm: with a known batch size the spatial dimensions must be known too, got "
                         f"input of shape {_fmt(x.shape)}")
    if None in spatial and spatial.count(None) + (n is None) > 1:
        raise ShapeError(f"group_norm: at most one dimension of the input may be unknown, got {_fmt(x.shape)}")
    rest = -1 if None in spatial else math.prod(spatial) * (c // num_groups)
    grouped = reshape(x, (-1 if n is None else n, num_groups, rest))
    _, centered, var, _ = _moments(grouped, (2,), "group_norm")
    y = reshape_like(centered * (1.0 / sqrt(var + eps)), x)
    if weight is not None:
        y = y * _channel_view(weight, x.ndim)
    if bias is not None:
        y = y + _channel_view(bias, x.ndim)
    return y


# ---- dropout ----------------------------------------------------------------------------------
class DropoutMask(Op):
    """The inverted-dropout multiplier for ``x``: ``1 / (1 - p)`` with probability ``1 - p``, else 0,
    drawn from ``generator`` (the default generator when ``None``) on every run; no gradient."""

    props = ("p", "generator")

    def __init__(self, p: float, generator: Optional[Generator] = None):
        self.p, self.generator = float(p), generator

    def infer(self, x):
        return TensorSpec(x.shape, x.dtype)

    def forward(self, xp, x):
        keep = rng_of(self.generator).random(x.shape) >= self.p
        return xp.asarray(keep).astype(x.dtype) * x.dtype.type(1.0 / (1.0 - self.p))

    def backward(self, inputs, out, g):
        return (None,)


def dropout(x, p: float = 0.5, training: bool = True, generator: Optional[Generator] = None) -> Tensor:
    """Inverted dropout: zero each element with probability ``p`` and scale the rest by ``1/(1-p)``.
    Identity when ``training`` is False or ``p == 0``. Shapes: (...) -> (...).

    Examples:
        >>> y = gg.dropout(x, 0.1, generator=gg.Generator(0))
    """
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"dropout: p must be in [0, 1], got {p}")
    (x,) = as_tensor_args(x)
    if not training or p == 0.0:
        return x
    if p == 1.0:
        return x * 0.0
    return x * DropoutMask(p, generator).apply(x)


# ---- embedding --------------------------------------------------------------------------------
def _check_indices(op: Op, idx) -> None:
    if idx.dtype.kind not in "iu":
        raise DTypeError(f"{op.name}: indices must be an integer tensor, got {idx.dtype}")


class Embedding(Op):
    """Rows of ``weight`` at integer ``indices``: ``weight[indices]``. The weight's gradient adds up
    the gradients of repeated indices and leaves row ``padding_idx`` at zero."""

    props = ("padding_idx",)

    def __init__(self, padding_idx: Optional[int] = None):
        self.padding_idx = padding_idx

    def infer(self, idx, weight):
        _check_indices(self, idx)
        if len(weight.shape) != 2:
            raise ShapeError(f"embedding: weight must be 2-D (num_embeddings, embedding_dim), "
                             f"got {_fmt(weight.shape)}")
        return TensorSpec(tuple(idx.shape) + (weight.shape[1],), weight.dtype)

    def forward(self, xp, idx, weight):
        if idx.size and (idx.min() < 0 or idx.max() >= weight.shape[0]):
            bad = int(idx.min()) if idx.min() < 0 else int(idx.max())
            raise IndexRangeError(f"embedding: index {bad} is out of range for a table of {weight.shape[0]} rows "
                                  f"(valid: 0 .. {weight.shape[0] - 1})")
        return weight[idx]

    def backward(self, inputs, out, g):
        idx, weight = inputs
        if not needs_grad(weight):
            return None, None
        return None, EmbeddingBackward(weight.shape[0], self.padding_idx).apply(g, idx)


class EmbeddingBackward(Op):
    """Scatter-add the rows of ``g`` (shape ``indices.shape + (D,)``) into a ``(num, D)`` gradient;
    row ``padding_idx`` stays zero. Its own gradient is the embedding lookup again."""

    props = ("num", "padding_idx")

    def __init__(self, num: int, padding_idx: Optional[int] = None):
        self.num, self.padding_idx = int(num), padding_idx

    def infer(self, g, idx):
        return TensorSpec((self.num, g.shape[-1]), g.dtype)

    def forward(self, xp, g, idx):
        out = self._native(g, idx)
        if out is None:
            out = kernel(xp, "scatter_add_rows")(idx.reshape(-1), g.reshape(idx.size, g.shape[-1]), self.num)
        if self.padding_idx is not None:
            out[self.padding_idx] = 0
        return out

    def _native(self, g, idx):
        """The gradient by one native pass (float32 rows, int64 indices: backend/native/recurrent.c), or
        ``None`` when it does not apply (other dtypes, native kernels off, an index outside the table):
        the caller then takes the NumPy path (a sort and an ``add.reduceat``; its sums round differently)."""
        fn = native.kernel("embedding_backward_f32")
        if fn is None or type(g) is not np.ndarray or g.dtype != np.float32 or \
                type(idx) is not np.ndarray or idx.dtype != np.int64:
            return None
        D = g.shape[-1]
        rows, index = np.ascontiguousarray(g.reshape(idx.size, D)), np.ascontiguousarray(idx.reshape(-1))
        out, bad = np.empty((self.num, D), np.float32), np.zeros(1, np.int64)
        fn(index, rows, out, bad, index.size, D, self.num)
        return None if bad[0] else out

    def backward(self, inputs, out, gw):
        g, idx = inputs
        rows = Embedding(None).apply(idx, gw)
        if self.padding_idx is not None:
            keep = reshape(~equal(idx, self.padding_idx), tuple(-1 if d is None else d for d in idx.shape) + (1,))
            rows = where(keep, rows, 0.0)
        return rows, None


def embedding(input, weight, padding_idx: Optional[int] = None) -> Tensor:
    """Look up rows of ``weight`` (the embedding table) for integer indices ``input``.

    Shapes: input (*) integer, weight (num_embeddings, D) -> (*, D). ``padding_idx``'s row gets no
    gradient (its value is returned as stored).

    Examples:
        >>> gg.embedding(gg.tensor([[0, 2]]), gg.randn(10, 4)).shape
        (1, 2, 4)
    """
    idx, weight = as_tensor_args(input, weight)
    if padding_idx is not None:
        num = weight.shape[0]
        if not -num <= padding_idx < num:
            raise ValueError(f"embedding: padding_idx {padding_idx} is out of range for {num} embeddings")
        padding_idx = padding_idx % num
    return Embedding(padding_idx).apply(idx, weight)


__all__ = ["Softmax", "SoftmaxGrad", "LogSoftmax", "LayerNorm", "LayerNormGrad", "DropoutMask",
           "Embedding", "EmbeddingBackward", "softmax", "log_softmax",
           "batch_norm", "layer_norm", "group_norm", "dropout", "embedding"]
