"""More activations and distances under PyTorch's names, composed from the primitives: relu6, rrelu,
hardshrink, softshrink, tanhshrink, prelu, gumbel_softmax, cosine_similarity, pairwise_distance,
pdist, cdist. Gradients at the kinks and at zero distance follow PyTorch's (0 where it gives 0)."""
from __future__ import annotations

from typing import Any, Optional

from graphgrad.backend import np
from graphgrad.core.random import Generator
from graphgrad.core.spec import normalize_axis
from graphgrad.core.tensor import Tensor
from graphgrad.errors import ShapeError
from graphgrad.ops import array, elementwise as ew, reduce, shape, unary
from graphgrad.ops.composite import hardtanh, leaky_relu
from graphgrad.ops.nn import softmax


def _tensor(x) -> Tensor:
    return x if isinstance(x, Tensor) else Tensor(x)


def relu6(x) -> Tensor:
    """``min(max(x, 0), 6)``. Shapes: (...) -> (...)."""
    return hardtanh(x, 0.0, 6.0)


def hardshrink(x, lambd: float = 0.5) -> Tensor:
    """``x`` where ``|x| > lambd``, else 0. Shapes: (...) -> (...)."""
    x = _tensor(x)
    return ew.where(ew.greater(unary.abs(x), lambd), x, 0.0).astype(x.dtype)


def softshrink(x, lambd: float = 0.5) -> Tensor:
    """``x - lambd`` above ``lambd``, ``x + lambd`` below ``-lambd``, else 0. Shapes: (...) -> (...)."""
    x = _tensor(x)
    if lambd < 0:
        raise ValueError(f"softshrink: lambd must be >= 0, got {lambd}")
    return ew.where(ew.greater(x, lambd), x - lambd, ew.where(ew.less(x, -lambd), x + lambd, 0.0)).astype(x.dtype)


def tanhshrink(x) -> Tensor:
    """``x - tanh(x)``. Shapes: (...) -> (...)."""
    x = _tensor(x)
    return x - unary.tanh(x)


def prelu(x, weight) -> Tensor:
    """``x`` where ``x > 0``, else ``weight * x``; ``weight`` is one slope or one per channel
    (dimension 1, or 0 for a 1-d input). Shapes: (N, C, ...) and weight (1,) or (C,) -> (N, C, ...)."""
    x, weight = _tensor(x), _tensor(weight)
    if weight.ndim > 1:
        raise ShapeError(f"prelu: weight must be 0-d or 1-d, got shape {weight.shape}")
    n = 1 if weight.ndim == 0 else weight.shape[0]
    if n > 1:
        channel = 0 if x.ndim == 1 else 1
        if x.ndim == 0 or x.shape[channel] != n:
            raise ShapeError(f"prelu: {n} slopes for an input of shape {x.shape} (the channels are dimension "
                             f"{channel})")
        weight = shape.reshape(weight, (n,) + (1,) * (x.ndim - channel - 1))
    else:
        weight = shape.reshape(weight, ())
    return ew.where(ew.greater(x, 0), x, weight * x)


def rrelu(x, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False,
          generator: Optional[Generator] = None) -> Tensor:
    """Randomized leaky ReLU: negative inputs scaled by a slope drawn uniformly from ``[lower, upper]``
    per element in training (the gradient uses the drawn slope), by ``(lower + upper) / 2`` in eval.
    Shapes: (...) -> (...)."""
    x = _tensor(x)
    if not training:
        return leaky_relu(x, (lower + upper) / 2.0)
    slope = array.rand_like(x, lower, upper, generator=generator)
    return ew.where(ew.greater_equal(x, 0), x, slope * x)


def gumbel_softmax(logits, tau: float = 1.0, hard: bool = False, eps: float = 1e-10, dim: int = -1,
                   generator: Optional[Generator] = None) -> Tensor:
    """Samples from the Gumbel-softmax distribution: ``softmax((logits + g) / tau)`` with Gumbel noise
    ``g``; with ``hard`` the one-hot of the largest entry, differentiable as the soft sample
    (straight-through). Shapes: (..., C) -> (..., C)."""
    logits = _tensor(logits)
    uniform = array.rand_like(logits, generator=generator)
    gumbels = -unary.log(-unary.log1p(-uniform))  # -log(Exponential(1)) = -log(-log(1 - u))
    soft = softmax((logits + gumbels) / tau, dim)
    if not hard:
        return soft
    axis = normalize_axis("gumbel_softmax", dim, logits.ndim)
    index = reduce.argmax(soft, axis, keepdims=True)
    one_hot = ew.astype(ew.equal(_arange_along(soft, axis), index), soft.dtype)
    return one_hot - array.stop_gradient(soft) + soft


def _arange_along(x: Tensor, axis: int) -> Tensor:
    """0, 1, ... along ``axis``, shaped to broadcast against ``x``."""
    positions = Tensor(np.arange(x.shape[axis]))
    return shape.reshape(positions, (-1,) + (1,) * (x.ndim - axis - 1))


def cosine_similarity(x1, x2, dim: int = 1, eps: float = 1e-8) -> Tensor:
    """``x1 . x2 / (max(|x1|, eps) * max(|x2|, eps))`` along ``dim`` (broadcasting the two).
    Shapes: (..., D, ...) twice -> the broadcast shape without ``dim``."""
    x1, x2 = _tensor(x1), _tensor(x2)
    n1 = ew.clip(reduce.norm(x1, None, dim, keepdims=True), eps, None)
    n2 = ew.clip(reduce.norm(x2, None, dim, keepdims=True), eps, None)
    return reduce.sum((x1 / n1) * (x2 / n2), dim)


def pairwise_distance(x1, x2, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False) -> Tensor:
    """``|x1 - x2 + eps|_p`` over the last dimension. Shapes: (N, D) twice (or broadcastable) -> (N,)."""
    x1, x2 = _tensor(x1), _tensor(x2)
    diff = x1 - x2 + eps
    return reduce.norm(diff, p, -1, keepdims=keepdim) if diff.ndim else unary.abs(diff)


def pdist(x, p: float = 2.0) -> Tensor:
    """The ``p``-norm distances between every pair of rows ``i < j`` of ``x``, in row-major order.
    Shapes: (N, M) -> (N * (N - 1) / 2,)."""
    x = _tensor(x)
    if x.ndim != 2:
        raise ShapeError(f"pdist: expects a 2-D input (N, M), got shape {x.shape}")
    rows, cols = np.triu_indices(x.shape[0], k=1)
    diff = shape.take(x, Tensor(rows), axis=0) - shape.take(x, Tensor(cols), axis=0)
    return reduce.norm(diff, p, -1)


def cdist(x1, x2, p: float = 2.0, compute_mode: Any = None) -> Tensor:
    """The ``p``-norm distance between every row of ``x1`` and every row of ``x2`` (batched over leading
    dimensions). Shapes: (..., P, M), (..., R, M) -> (..., P, R)."""
    x1, x2 = _tensor(x1), _tensor(x2)
    if x1.ndim < 2 or x2.ndim < 2 or x1.shape[-1] != x2.shape[-1]:
        raise ShapeError(f"cdist: expects (..., P, M) and (..., R, M), got {x1.shape} and {x2.shape}")
    diff = shape.expand_dims(x1, -2) - shape.expand_dims(x2, -3)  # (..., P, R, M)
    return reduce.norm(diff, p, -1)
