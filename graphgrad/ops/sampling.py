"""Spatial transformers, as PyTorch's ``F.affine_grid`` and ``F.grid_sample``: compositions of matmuls,
gathers and elementwise ops, so they are differentiable in the input, the grid and the affine
matrices, and work in graphs, ``gg.function`` and ONNX export.

A grid holds normalized coordinates in ``[-1, 1]``, the last axis ordered ``(x, y[, z])`` (width
first); ``align_corners`` says whether -1 and 1 are the centres of the corner pixels (``True``) or
their outer edges (``False``, the default)."""
from __future__ import annotations

import itertools
import math
from typing import Optional, Sequence

from graphgrad.backend import np
from graphgrad.core.op import as_tensor_args
from graphgrad.core.tensor import Tensor
from graphgrad.errors import ShapeError
from graphgrad.ops.elementwise import logical_and, where
from graphgrad.ops.linalg import matmul
from graphgrad.ops.pointwise import fmod
from graphgrad.ops.array import broadcast_like, stop_gradient
from graphgrad.ops.shape import gather, reshape, transpose
from graphgrad.ops.unary import abs as _abs, floor, round as _round


def _base_coords(size: int, align_corners: bool):
    """Normalized coordinates of the ``size`` pixel centres along one axis."""
    if size == 1:
        return np.zeros(1)
    if align_corners:
        return np.linspace(-1.0, 1.0, size)
    return (np.arange(size) * 2 + 1) / size - 1


def affine_grid(theta, size: Sequence[int], align_corners: Optional[bool] = None) -> Tensor:
    """The sampling grid of a batch of affine transforms, as PyTorch's ``F.affine_grid``.

    Args:
        theta: ``(N, 2, 3)`` for 2-D or ``(N, 3, 4)`` for 3-D transforms (output coordinates to input).
        size: the output size ``(N, C, H, W)`` or ``(N, C, D, H, W)``.
        align_corners: see the module docstring (default ``False``).

    Returns:
        ``(N, H, W, 2)`` or ``(N, D, H, W, 3)``: ``grid[n, ...] = theta[n] @ (x, y[, z], 1)``.

    Examples:
        >>> theta = gg.tensor([[[1.0, 0, 0], [0, 1.0, 0]]])      # the identity
        >>> gg.affine_grid(theta, (1, 3, 4, 5)).shape
        (1, 4, 5, 2)
    """
    (theta,) = as_tensor_args(theta)
    size = tuple(int(s) for s in size)
    nd = len(size) - 2
    if nd not in (2, 3) or tuple(theta.shape[1:]) != (nd, nd + 1):
        raise ShapeError(f"affine_grid: expected theta (N, 2, 3) with a 4-D size or (N, 3, 4) with a 5-D size, "
                         f"got theta {tuple(theta.shape)} and size {size}")
    if theta.shape[0] is not None and theta.shape[0] != size[0]:
        raise ShapeError(f"affine_grid: theta has {theta.shape[0]} transforms for a batch of {size[0]}")
    spatial = size[2:]
    axes = [_base_coords(n, bool(align_corners)) for n in spatial]  # (D,) H, W
    mesh = np.meshgrid(*axes, indexing="ij")
    base = np.stack([m.reshape(-1) for m in reversed(mesh)] + [np.ones(math.prod(spatial))], axis=-1)  # (P, nd+1)
    base = base.astype(theta.dtype if theta.dtype.kind == "f" else np.float32)
    grid = matmul(base, transpose(theta, (0, 2, 1)))  # (N, P, nd)
    return reshape(grid, (-1,) + spatial + (nd,))


def _unnormalize(coord, size: int, align_corners: bool):
    if align_corners:
        return (coord + 1) * ((size - 1) / 2)
    return ((coord + 1) * size - 1) / 2


def _reflect(coord, low2: float, high2: float):
    """Reflect ``coord`` into ``[low2 / 2, high2 / 2]`` (PyTorch's reflect_coordinates)."""
    if low2 == high2:
        return coord * 0.0
    low, span = low2 / 2, (high2 - low2) / 2
    distance = _abs(coord - low)
    extra = fmod(distance, span)
    flips = floor(distance * (1.0 / span))
    even = fmod(flips, 2.0) == 0
    return where(even, extra + low, span - extra + low)


def _source(coord, size: int, padding_mode: str, align_corners: bool):
    """Pixel coordinate along one axis after the padding mode's clipping or reflection."""
    x = _unnormalize(coord, size, align_corners)
    if padding_mode == "reflection":
        x = _reflect(x, 0.0, 2.0 * (size - 1)) if align_corners else _reflect(x, -1.0, 2.0 * size - 1)
    if padding_mode in ("border", "reflection"):
        x = x.clip(0, size - 1)
    return x


def grid_sample(input, grid, mode: str = "bilinear", padding_mode: str = "zeros",
                align_corners: Optional[bool] = None) -> Tensor:
    """Sample ``input`` at the grid's normalized coordinates, as PyTorch's ``F.grid_sample``.

    Args:
        input: ``(N, C, H, W)`` (or ``(N, C, D, H, W)``).
        grid: ``(N, H_out, W_out, 2)`` (or ``(N, D_out, H_out, W_out, 3)``), last axis ``(x, y[, z])``.
        mode: ``'bilinear'`` (trilinear for 5-D input) or ``'nearest'`` (ties to even, as PyTorch).
        padding_mode: ``'zeros'`` (outside is 0), ``'border'`` (edge values) or ``'reflection'``.
        align_corners: see the module docstring (default ``False``).

    Returns:
        ``(N, C, H_out, W_out)`` (or ``(N, C, D_out, H_out, W_out)``); differentiable in both inputs.

    Examples:
        >>> theta = gg.tensor([[[0.5, 0, 0], [0, 0.5, 0]]])     # zoom in 2x
        >>> x = gg.randn(1, 3, 8, 8)
        >>> gg.grid_sample(x, gg.affine_grid(theta, x.shape)).shape
        (1, 3, 8, 8)
    """
    input, grid = as_tensor_args(input, grid)
    nd = input.ndim - 2
    if nd not in (2, 3) or grid.ndim != nd + 2 or grid.shape[-1] != nd:
        raise ShapeError(f"grid_sample: expected input (N, C, H, W) with grid (N, H_out, W_out, 2), or 5-D input with "
                         f"grid (N, D_out, H_out, W_out, 3), got {tuple(input.shape)} and {tuple(grid.shape)}")
    if mode not in ("bilinear", "nearest"):
        raise ValueError(f"grid_sample: mode must be 'bilinear' or 'nearest', got {mode!r}")
    if padding_mode not in ("zeros", "border", "reflection"):
        raise ValueError(f"grid_sample: padding_mode must be 'zeros', 'border' or 'reflection', got {padding_mode!r}")
    sizes = tuple(input.shape[2:])
    if None in sizes or input.shape[1] is None:
        raise ShapeError(f"grid_sample: needs known channel and spatial sizes, got input shape {tuple(input.shape)}")
    out = tuple(grid.shape[1:-1])
    align = bool(align_corners)
    # per spatial axis (D,) H, W: the source coordinate (grid component nd-1-i)
    coords = [_source(grid[(Ellipsis, nd - 1 - i)], sizes[i], padding_mode, align) for i in range(nd)]
    flat = reshape(input, (-1, input.shape[1], math.prod(sizes)))  # (N, C, P)
    steps = [math.prod(sizes[i + 1:]) for i in range(nd)]
    if mode == "nearest":
        corners = [[(_round(c), None)] for c in coords]
    else:
        corners = []
        for c in coords:
            low = floor(c)
            frac = c - low
            corners.append([(low, 1.0 - frac), (low + 1.0, frac)])
    # a (N, C, P_out) tensor to broadcast the indices against (the batch size may be unknown until run time)
    like = stop_gradient(flat[:, :, :1] * 0.0 + reshape(coords[0], (-1, 1, math.prod(out))) * 0.0)
    result = None
    for choice in itertools.product(*corners):
        index, weight, valid = 0, None, None
        for i, (position, w) in enumerate(choice):
            inside = logical_and(position >= 0, position <= sizes[i] - 1)
            valid = inside if valid is None else logical_and(valid, inside)
            index = index + position.clip(0, sizes[i] - 1).astype(np.int64) * steps[i]
            if w is not None:
                weight = w if weight is None else weight * w
        values = gather(flat, 2, broadcast_like(reshape(index, (-1, 1, math.prod(out))), like))  # (N, C, P_out)
        factor = valid.astype(flat.dtype) if weight is None else where(valid, weight, 0.0)
        term = values * reshape(factor, (-1, 1, math.prod(out)))
        result = term if result is None else result + term
    return reshape(result, (-1, input.shape[1]) + out)
