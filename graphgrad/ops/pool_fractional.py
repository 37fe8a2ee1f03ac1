"""Fractional max pooling, as PyTorch's ``F.fractional_max_pool2d`` / ``F.fractional_max_pool3d``
(Graham, 2014): windows of a fixed size whose starts advance by a non-integer step ``alpha = (in - k) /
(out - 1)``, offset per (sample, channel) by a random number ``u`` in ``[0, 1)``: window ``i`` starts at
``floor((i + u) * alpha) - floor(u * alpha)`` (the last one at ``in - k``).

``FractionalMaxPoolIndices`` finds each window's maximum (the first, or the last NaN, as PyTorch);
the values are a ``TakeSpatial`` of the input, whose gradient routes each output to its maximum."""
from __future__ import annotations

import itertools
from typing import Optional, Sequence, Union

from graphgrad.backend import np
from graphgrad.core.op import Op, as_tensor_args
from graphgrad.core.spec import TensorSpec
from graphgrad.core.tensor import Tensor
from graphgrad.errors import DTypeError, ShapeError
from graphgrad.ops.array import rand_like
from graphgrad.ops.conv import _checked, _ntuple, _shape_of, _shown
from graphgrad.ops.pool import TakeSpatial, _check_spatial_rank
from graphgrad.ops.pool_nd import _window_argmax
from graphgrad.ops.shape import concatenate, reshape

IntOrTuple = Union[int, Sequence[int]]


class FractionalMaxPoolIndices(Op):
    """Flat per-plane indices of the maxima of fractional windows of ``x`` (``(N, C, *S)``), given the
    random offsets ``samples`` (``(N, C, nd)``, PyTorch's ``_random_samples``)."""

    props = ("kernel_size", "output_size")

    def __init__(self, kernel_size: tuple, output_size: tuple):
        self.kernel_size, self.output_size = tuple(kernel_size), tuple(output_size)

    def infer(self, x, samples):
        nd = len(self.kernel_size)
        if x.dtype.kind not in "iuf":
            raise DTypeError(f"fractional_max_pool{nd}d: expected a numeric input, got {x.dtype}")
        return TensorSpec(tuple(x.shape[:x.ndim - nd]) + self.output_size, np.int64)

    def _starts(self, xp, samples, dtype, n_in: int, axis: int, sample_axis: int):
        """Window starts along spatial ``axis`` (of length ``n_in``): (N, C, out)."""
        k, n_out = self.kernel_size[axis], self.output_size[axis]
        u = samples[..., sample_axis].astype(dtype)[..., None]
        if n_out == 1:
            return xp.full(u.shape, n_in - k, dtype=xp.int64)
        alpha = dtype.type(n_in - k) / dtype.type(n_out - 1)
        i = xp.arange(n_out, dtype=dtype)
        starts = (xp.trunc((i + u) * alpha) - xp.trunc(u * alpha)).astype(xp.int64)
        starts[..., -1] = n_in - k
        return starts

    def forward(self, xp, x, samples):
        nd = len(self.kernel_size)
        sizes = x.shape[-nd:]
        dtype = x.dtype if x.dtype.kind == "f" else np.dtype(np.float64)
        # PyTorch's sample order: (w, h) in 2-D, (t, h, w) in 3-D
        order = (1, 0) if nd == 2 else tuple(range(nd))
        starts = [self._starts(xp, samples, dtype, sizes[i], i, order[i]) for i in range(nd)]
        windows = ([s + k for s, k in zip(starts, offset)]
                   for offset in itertools.product(*[range(k) for k in self.kernel_size]))
        return _window_argmax(xp, x, sizes, self.output_size, windows)

    def backward(self, inputs, out, g):
        return None, None


def _fractional_max_pool(fn: str, nd: int, input, kernel_size, output_size, output_ratio, return_indices,
                         _random_samples):
    (input,) = as_tensor_args(input)
    shape = _shape_of(input)
    _check_spatial_rank(fn, shape, nd)
    sizes = tuple(shape[-nd:])
    if None in sizes:
        raise ShapeError(f"{fn}: needs known spatial sizes, got input shape {_shown(shape)}")
    kernel = _ntuple(fn, "kernel_size", kernel_size, nd, 1)
    if (output_size is None) == (output_ratio is None):
        raise ValueError(f"{fn}: give exactly one of output_size and output_ratio")
    if output_size is None:
        ratios = (float(output_ratio),) * nd if isinstance(output_ratio, (int, float)) else tuple(output_ratio)
        if len(ratios) != nd or not all(0 < r < 1 for r in ratios):
            raise ValueError(f"{fn}: output_ratio must be in (0, 1), got {output_ratio!r}")
        out = tuple(int(n * r) for n, r in zip(sizes, ratios))
    else:
        out = _ntuple(fn, "output_size", output_size, nd, 1)
    for n, k, o in zip(sizes, kernel, out):
        if o + k - 1 > n:
            raise ShapeError(f"{fn}: output_size {out} with kernel_size {kernel} needs an input of at least "
                             f"output_size + kernel_size - 1 per axis, got input shape {_shown(shape)}")
    unbatched = len(shape) == nd + 1
    x = reshape(input, (1,) + shape) if unbatched else input
    if _random_samples is None:  # one draw per (sample, channel, axis), in [0, 1)
        corner = x[(Ellipsis,) + (0,) * (nd - 1) + (slice(0, 1),)]  # (N, C, 1)
        like = concatenate([corner] * nd, axis=-1)
        samples = rand_like(like, dtype=x.dtype if x.dtype.kind == "f" else "float32")
    else:
        (samples,) = as_tensor_args(_random_samples)
    index = _checked(FractionalMaxPoolIndices(kernel, out), x, samples)
    values = TakeSpatial(nd).apply(x, index)
    if unbatched:
        values, index = reshape(values, shape[:1] + out), reshape(index, shape[:1] + out)
    return (values, index) if return_indices else values


def fractional_max_pool2d(input, kernel_size: IntOrTuple, output_size: Optional[IntOrTuple] = None,
                          output_ratio: Optional[Union[float, Sequence[float]]] = None, return_indices: bool = False,
                          _random_samples=None):
    """Fractional max pooling of ``(N, C, H, W)`` (or ``(C, H, W)``), as PyTorch's ``F.fractional_max_pool2d``.

    Args:
        kernel_size: window size (int or pair).
        output_size: ``(H_out, W_out)``; or output_ratio: fraction(s) of the input size in (0, 1).
        return_indices: also return the flat ``h * W + w`` index of each maximum.
        _random_samples: ``(N, C, 2)`` offsets in [0, 1) (``(u_w, u_h)`` per plane, PyTorch's order);
            drawn from the global generator when ``None``.

    Examples:
        >>> gg.fractional_max_pool2d(gg.randn(1, 3, 9, 9), 2, output_size=5).shape
        (1, 3, 5, 5)
    """
    return _fractional_max_pool("fractional_max_pool2d", 2, input, kernel_size, output_size, output_ratio,
                                return_indices, _random_samples)


def fractional_max_pool3d(input, kernel_size: IntOrTuple, output_size: Optional[IntOrTuple] = None,
                          output_ratio: Optional[Union[float, Sequence[float]]] = None, return_indices: bool = False,
                          _random_samples=None):
    """Fractional max pooling of ``(N, C, D, H, W)`` (or ``(C, D, H, W)``), as PyTorch's
    ``F.fractional_max_pool3d``; ``_random_samples`` is ``(N, C, 3)``. See :func:`fractional_max_pool2d`.

    Examples:
        >>> gg.fractional_max_pool3d(gg.randn(1, 2, 6, 6, 6), 2, output_ratio=0.5).shape
        (1, 2, 3, 3, 3)
    """
    return _fractional_max_pool("fractional_max_pool3d", 3, input, kernel_size, output_size, output_ratio,
                                return_indices, _random_samples)
