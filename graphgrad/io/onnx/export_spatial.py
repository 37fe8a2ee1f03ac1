"""ONNX forms of the spatial ops without a one-to-one ONNX op: the per-plane argmax of max pooling
(MaxPool's ``Indices`` output counts over the whole tensor, so it is taken modulo the plane size),
adaptive max pooling whose windows tile the input (an ordinary MaxPool), the per-plane gather that
gives the pooled values (GatherElements on flattened planes) and max unpooling (ScatterElements into
zeros)."""
from __future__ import annotations

import math

import graphgrad.ops as G
from graphgrad.backend import np
from graphgrad.io.onnx.export import OnnxExportError, _needs_opset, exports
from graphgrad.io.onnx.export_ops import _axes_form


def _spatial_sizes(x, nd: int, what: str) -> tuple:
    sizes = tuple(x.shape[-nd:])
    if None in sizes:
        raise OnnxExportError(f"{what} needs known spatial sizes, got shape {tuple(x.shape)}")
    return sizes


def _max_pool_indices(ctx, x, nd: int, **attrs) -> str:
    """Per-plane flat argmax indices of a MaxPool of ``x`` (``(N, C, *S)`` or ``(C, *S)``)."""
    plane = math.prod(_spatial_sizes(x, nd, "max pooling indices"))
    y = ctx.value(x)
    unbatched = len(x.shape) == nd + 1
    if unbatched:  # ONNX pools (N, C, *S)
        y = _axes_form(ctx, "Unsqueeze", [y], [0], 13)
    _, index = ctx.add("MaxPool", [y], n_outputs=2, **attrs)
    index = ctx.add("Mod", [index, ctx.const(plane, np.int64)])
    return _axes_form(ctx, "Squeeze", [index], [0], 13) if unbatched else index


@exports(G.MaxPoolIndices)
def _max_pool_indices_node(ctx, node):
    return _max_pool_indices(ctx, node.inputs[0], node.op.nd, **node.op.onnx_attributes(ctx.opset))


@exports(G.AdaptiveMaxPoolIndices)
def _adaptive_max_pool_indices(ctx, node):
    """Windows that tile the input (every input size a multiple of its output size) are a MaxPool with
    kernel = stride = input / output; other adaptive windows overlap unevenly and have no ONNX form."""
    axes = node.op.axes
    if any(n % o for n, o in axes):
        raise OnnxExportError(f"adaptive max pooling from {tuple(n for n, _ in axes)} to "
                              f"{tuple(o for _, o in axes)}: windows of unequal sizes have no ONNX form")
    kernel = tuple(n // o for n, o in axes)
    return _max_pool_indices(ctx, node.inputs[0], len(axes), kernel_shape=kernel, strides=kernel)


def _flat_planes(ctx, name: str, rank: int, nd: int) -> str:
    """``name`` with its last ``nd`` axes flattened into one (the leading ones kept, known or not)."""
    return ctx.add("Reshape", [name, ctx.ints([0] * (rank - nd) + [-1])])


@exports(G.TakeSpatial)
def _take_spatial(ctx, node):
    x, index = node.inputs
    nd = node.op.nd
    if len(x.shape) != len(index.shape):
        raise OnnxExportError("a per-plane gather needs the input and indices of the same rank")
    flat = ctx.add("GatherElements", [_flat_planes(ctx, ctx.value(x), len(x.shape), nd),
                                      _flat_planes(ctx, ctx.value(index, np.int64), len(index.shape), nd)], axis=-1)
    return ctx.add("Reshape", [flat, ctx.shape_of(index)])


@exports(G.MaxUnpool)
def _max_unpool(ctx, node):
    _needs_opset(ctx, 11, "max unpooling (ScatterElements)")
    x, index = node.inputs
    size, rank = node.op.size, len(x.shape)
    nd = len(size)
    lead = ctx.add("Slice", [ctx.shape_of(x), ctx.ints([0]), ctx.ints([rank - nd])])
    zeros = ctx.add("ConstantOfShape", [ctx.add("Concat", [lead, ctx.ints([math.prod(size)])], axis=0)],
                    value=ctx.onnx_tensor(np.zeros(1, node.out.dtype)))
    flat = ctx.add("ScatterElements", [zeros, _flat_planes(ctx, ctx.value(index, np.int64), rank, nd),
                                       _flat_planes(ctx, ctx.value(x), rank, nd)], axis=-1)
    return ctx.add("Reshape", [flat, ctx.add("Concat", [lead, ctx.ints(size)], axis=0)])


def _as_4d(ctx, x, make) -> str:
    """``make(name of x as (N, C, H, W))`` for an input of any rank >= 3 (the leading axes flattened
    into N around it)."""
    rank = len(x.shape)
    if rank == 4:
        return make(ctx.value(x))
    c, h, w = x.shape[-3:]
    y = make(ctx.add("Reshape", [ctx.value(x), ctx.ints([-1, c, h, w])]))
    lead = ctx.add("Slice", [ctx.shape_of(x), ctx.ints([0]), ctx.ints([rank - 3])])
    return ctx.add("Reshape", [y, ctx.add("Concat", [lead, ctx.add("Slice", [ctx.add("Shape", [y]), ctx.ints([1]),
                                                                             ctx.ints([4])])], axis=0)])


@exports(G.PixelShuffle)
def _pixel_shuffle(ctx, node):
    """ONNX's DepthToSpace in CRD mode is exactly the pixel shuffle."""
    r = node.op.factor
    return _as_4d(ctx, node.inputs[0], lambda y: ctx.add("DepthToSpace", [y], blocksize=r, mode="CRD"))


@exports(G.PixelUnshuffle)
def _pixel_unshuffle(ctx, node):
    """SpaceToDepth puts block offset before channel (``(i * r + j) * C + c``); the pixel unshuffle wants
    channel first (``c * r^2 + i * r + j``): a Gather of the channels reorders them."""
    r, x = node.op.factor, node.inputs[0]
    c = x.shape[-3]
    order = [(k % (r * r)) * c + k // (r * r) for k in range(c * r * r)]
    return _as_4d(ctx, x, lambda y: ctx.add("Gather", [ctx.add("SpaceToDepth", [y], blocksize=r),
                                                      ctx.ints(order)], axis=1))
