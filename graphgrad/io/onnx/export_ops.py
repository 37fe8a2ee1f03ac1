"""ONNX export converters: graphgrad ops that need several ONNX nodes, or inputs that are attributes in
some opsets. One-to-one ops need none: they declare ``onnx`` (and ``onnx_attributes``) on their class.

A converter is ``fn(ctx, node) -> str``: it reads ``node.op`` (attributes), ``node.inputs`` (graph
tensors or Python scalars) and ``node.out.spec``, writes nodes with ``ctx.add`` and returns the name
of the value holding the node's output (see ``ExportContext`` in ``export.py``).
"""
from __future__ import annotations

import math

import graphgrad.ops as G
from graphgrad.backend import np
from graphgrad.core.spec import normalize_axes, normalize_axis
from graphgrad.core.tensor import Tensor
from graphgrad.io.onnx.export import _INT64_MAX, _INT64_MIN, OnnxExportError, _needs_opset, exports
from graphgrad.ops.indexing import _expand


def _rank(x) -> int:
    if x.shape is None:
        raise OnnxExportError("the input's rank is unknown (a placeholder made without a shape)")
    return len(x.shape)


def _axes_form(ctx, op_type: str, inputs: list, axes, since: int, **attrs) -> str:
    """``op_type`` with ``axes`` as an int64 input from opset ``since``, as an attribute before."""
    if ctx.opset >= since:
        return ctx.add(op_type, inputs + [ctx.ints(axes)], **attrs)
    return ctx.add(op_type, inputs, axes=tuple(axes), **attrs)


# ---- elementwise --------------------------------------------------------------------------------------
@exports(G.Expm1)
def _expm1(ctx, node):
    x = ctx.value(node.inputs[0], node.out.dtype)
    return ctx.add("Sub", [ctx.add("Exp", [x]), ctx.const(1, node.out.dtype)])


@exports(G.Log1p)
def _log1p(ctx, node):
    x = ctx.value(node.inputs[0], node.out.dtype)
    return ctx.add("Log", [ctx.add("Add", [x, ctx.const(1, node.out.dtype)])])


@exports(G.Log2)
def _log2(ctx, node):
    x = ctx.value(node.inputs[0], node.out.dtype)
    return ctx.add("Div", [ctx.add("Log", [x]), ctx.const(math.log(2.0), node.out.dtype)])


@exports(G.IsFinite)
def _isfinite(ctx, node):
    x = ctx.value(node.inputs[0])
    return ctx.add("Not", [ctx.add("Or", [ctx.add("IsNaN", [x]), ctx.add("IsInf", [x])])])


@exports(G.Round)
def _round(ctx, node):
    dtype, decimals = node.out.dtype, node.op.decimals
    x = ctx.value(node.inputs[0])
    if decimals == 0:
        return ctx.add("Round", [x])
    scale = ctx.const(10.0 ** decimals, dtype)  # NumPy's own method: round(x * 10^d) / 10^d
    return ctx.add("Div", [ctx.add("Round", [ctx.add("Mul", [x, scale])]), scale])


@exports(G.TanhGrad)
def _tanh_grad(ctx, node):
    dtype = node.out.dtype
    y, g = (ctx.value(v, dtype) for v in node.inputs)
    return ctx.add("Mul", [g, ctx.add("Sub", [ctx.const(1, dtype), ctx.add("Mul", [y, y])])])


@exports(G.ReluGrad)
def _relu_grad(ctx, node):
    dtype = node.out.dtype
    y, g = (ctx.value(v, dtype) for v in node.inputs)
    return ctx.add("Mul", [g, ctx.add("Cast", [ctx.add("Greater", [y, ctx.const(0, dtype)])], to=dtype)])


@exports(G.Linear)
def _linear(ctx, node):
    dtype = node.out.dtype
    x, w = (ctx.value(v, dtype) for v in node.inputs[:2])
    bias = [ctx.value(node.inputs[2], dtype)] if len(node.inputs) == 3 else []
    if node.inputs[0].ndim == 2:
        return ctx.add("Gemm", [x, w] + bias, transB=1)
    y = ctx.add("MatMul", [x, ctx.add("Transpose", [w], perm=[1, 0])])
    return ctx.add("Add", [y] + bias) if bias else y


def _binary_operands(ctx, node):
    dtype = np.result_type(*[x.dtype if hasattr(x, "dtype") else x for x in node.inputs])
    return [ctx.value(x, dtype) for x in node.inputs], dtype


@exports(G.FloorDivide)
def _floor_divide(ctx, node):
    (a, b), dtype = _binary_operands(ctx, node)
    if dtype.kind == "f":
        return ctx.add("Floor", [ctx.add("Div", [a, b])])
    # integer Div truncates toward zero; floor it in float64 (exact below 2**53)
    a, b = ctx.cast(a, dtype, np.float64), ctx.cast(b, dtype, np.float64)
    return ctx.cast(ctx.add("Floor", [ctx.add("Div", [a, b])]), np.float64, node.out.dtype)


@exports(G.Trunc)
def _trunc(ctx, node):
    (x,) = [ctx.value(v) for v in node.inputs]
    if node.out.dtype.kind != "f":
        return ctx.add("Identity", [x])
    # ONNX has no Trunc: sign(x) * floor(|x|) rounds towards zero
    return ctx.add("Mul", [ctx.add("Sign", [x]), ctx.add("Floor", [ctx.add("Abs", [x])])])


@exports(G.Remainder)
def _remainder(ctx, node):
    (a, b), dtype = _binary_operands(ctx, node)
    if dtype.kind != "f":
        return ctx.add("Mod", [a, b], fmod=0)  # Python's sign rule, as NumPy
    return ctx.add("Sub", [a, ctx.add("Mul", [b, ctx.add("Floor", [ctx.add("Div", [a, b])])])])


@exports(G.NotEqual)
def _not_equal(ctx, node):
    (a, b), _ = _binary_operands(ctx, node)
    return ctx.add("Not", [ctx.add("Equal", [a, b])])


@exports(G.LogicalAnd, G.LogicalOr, G.LogicalXor)
def _logical(ctx, node):
    op_type = {"LogicalAnd": "And", "LogicalOr": "Or", "LogicalXor": "Xor"}[node.op.name]
    return ctx.add(op_type, [ctx.value(x, np.bool_) for x in node.inputs])


@exports(G.BitwiseAnd, G.BitwiseOr, G.BitwiseXor)
def _bitwise(ctx, node):
    kind = node.op.name[len("Bitwise"):]
    (a, b), dtype = _binary_operands(ctx, node)
    if dtype.kind == "b":
        return ctx.add(kind, [a, b])
    _needs_opset(ctx, 18, f"Bitwise{kind} on integers")
    return ctx.add(f"Bitwise{kind}", [a, b])


@exports(G.Invert)
def _invert(ctx, node):
    x = ctx.value(node.inputs[0])
    if node.out.dtype.kind == "b":
        return ctx.add("Not", [x])
    _needs_opset(ctx, 18, "BitwiseNot")
    return ctx.add("BitwiseNot", [x])


@exports(G.Clip)
def _clip(ctx, node):
    dtype = node.out.dtype
    bounds = [ctx.const(b, dtype) if b is not None else "" for b in (node.op.min, node.op.max)]
    return ctx.add("Clip", [ctx.value(node.inputs[0], dtype)] + bounds)


@exports(G.DropoutMask)
def _dropout_mask(ctx, node):
    # training-mode dropout (the module was not put in eval mode): a fresh random mask per run
    dtype = node.out.dtype
    u = ctx.add("RandomUniformLike", [ctx.value(node.inputs[0])], dtype=dtype)
    keep = ctx.add("Cast", [ctx.add("GreaterOrEqual", [u, ctx.const(node.op.p, dtype)])], to=dtype)
    return ctx.add("Mul", [keep, ctx.const(1.0 / (1.0 - node.op.p), dtype)])


# ---- reductions -------------------------------------------------------------------------------------------
_REDUCE = {"Sum": ("ReduceSum", 13), "Mean": ("ReduceMean", 18), "Prod": ("ReduceProd", 18),
           "Max": ("ReduceMax", 18), "Min": ("ReduceMin", 18)}


def _reduce(ctx, op_type: str, x: str, axes: tuple, keepdims: bool) -> str:
    since = 13 if op_type == "ReduceSum" else 18
    if not axes:  # NumPy reduces over no axis: the input itself
        return ctx.add("Identity", [x])
    return _axes_form(ctx, op_type, [x], axes, since, keepdims=int(keepdims))


@exports(G.Sum, G.Mean, G.Prod, G.Max, G.Min)
def _reduction(ctx, node):
    op = node.op
    x = node.inputs[0]
    # Sum/Prod accumulate in the output dtype (int32 sums to int64, as NumPy); Mean of ints is float64
    source = ctx.value(x, node.out.dtype)
    return _reduce(ctx, _REDUCE[op.name][0], source, op.axes(_rank(x)), op.keepdims)


@exports(G.All, G.Any)
def _logical_reduction(ctx, node):
    op = node.op
    x = node.inputs[0]
    as_int = ctx.add("Cast", [ctx.value(x, np.bool_)], to=np.dtype(np.int32))  # ORT reduces no bools
    r = _reduce(ctx, "ReduceMin" if op.name == "All" else "ReduceMax", as_int, op.axes(_rank(x)), op.keepdims)
    return ctx.add("Cast", [r], to=np.dtype(bool))


@exports(G.Argmax, G.Argmin)
def _arg_extremum(ctx, node):
    op, x = node.op, node.inputs[0]
    op_type = "ArgMax" if op.name == "Argmax" else "ArgMin"
    if op.axis is not None:
        return ctx.add(op_type, [ctx.value(x)], axis=normalize_axis(op.name, op.axis, _rank(x)),
                       keepdims=int(op.keepdims))
    flat = ctx.add("Reshape", [ctx.value(x), ctx.ints([-1])])
    index = ctx.add(op_type, [flat], axis=0, keepdims=0)
    return ctx.add("Reshape", [index, ctx.ints([1] * _rank(x))]) if op.keepdims else index


@exports(G.Cumsum)
def _cumsum(ctx, node):
    axis = normalize_axis(node.op.name, node.op.axis, _rank(node.inputs[0]))
    return ctx.add("CumSum", [ctx.value(node.inputs[0], node.out.dtype), ctx.const(axis, np.int64)])


@exports(G.SumTo)
def _sum_to(ctx, node):
    x, shape = node.inputs[0], node.op.shape
    lead = _rank(x) - len(shape)
    axes = tuple(range(lead)) + tuple(lead + i for i, d in enumerate(shape) if d == 1 and x.shape[lead + i] != 1)
    summed = _reduce(ctx, "ReduceSum", ctx.value(x), axes, True)
    return ctx.add("Reshape", [summed, ctx.ints(shape)])


# ---- shapes -----------------------------------------------------------------------------------------------
@exports(G.Reshape)
def _reshape(ctx, node):
    shape = node.op.shape
    # ONNX reads 0 as "copy this dim" unless allowzero; graphgrad's 0 is an empty dimension
    allow = 1 if 0 in shape and -1 not in shape and ctx.opset >= 14 else None
    return ctx.add("Reshape", [ctx.value(node.inputs[0]), ctx.ints(shape)], allowzero=allow)


@exports(G.BroadcastTo)
def _broadcast_to(ctx, node):
    return ctx.add("Expand", [ctx.value(node.inputs[0]), ctx.ints(node.op.shape)])


@exports(G.Squeeze)
def _squeeze(ctx, node):
    return _axes_form(ctx, "Squeeze", [ctx.value(node.inputs[0])], node.op.axes, 13)


@exports(G.ExpandDims)
def _expand_dims(ctx, node):
    return _axes_form(ctx, "Unsqueeze", [ctx.value(node.inputs[0])], node.op.axes, 13)


@exports(G.Pad)
def _pad(ctx, node):
    x = node.inputs[0]
    pads = [b for b, _ in node.op.pad_width] + [a for _, a in node.op.pad_width]
    return ctx.add("Pad", [ctx.value(x), ctx.ints(pads), ctx.const(node.op.value, x.dtype)], mode="constant")


@exports(G.Flatten)
def _flatten(ctx, node):
    # the kept dims are read at run time (Flatten exists for unknown dims): shape[:s] + [-1] + shape[e+1:]
    x, s, e = node.inputs[0], node.op.start_axis, node.op.end_axis
    shape = ctx.shape_of(x)
    parts = [ctx.add("Slice", [shape, ctx.ints([0]), ctx.ints([s])]), ctx.ints([-1]),
             ctx.add("Slice", [shape, ctx.ints([e + 1]), ctx.ints([_INT64_MAX])])]
    return ctx.add("Reshape", [ctx.value(x), ctx.add("Concat", parts, axis=0)])


@exports(G.ReshapeLike)
def _reshape_like(ctx, node):
    return ctx.add("Reshape", [ctx.value(node.inputs[0]), ctx.shape_of(node.inputs[1])])


@exports(G.BroadcastLike)
def _broadcast_like(ctx, node):
    return ctx.add("Expand", [ctx.value(node.inputs[0]), ctx.shape_of(node.inputs[1])])


@exports(G.SumLike)
def _sum_like(ctx, node):
    x, like = node.inputs
    lead = _rank(x) - _rank(like)
    inner = [lead + i for i, d in enumerate(like.shape) if d == 1 and x.shape[lead + i] != 1]
    if any(d is None for d in like.shape) or any(x.shape[a] is None for a in inner):
        raise OnnxExportError(f"the summed axes depend on run-time sizes ({x.shape} to {like.shape})")
    summed = _reduce(ctx, "ReduceSum", ctx.value(x), tuple(range(lead)) + tuple(inner), True)
    return ctx.add("Reshape", [summed, ctx.shape_of(like)])


@exports(G.CountLike)
def _count_like(ctx, node):
    like = node.inputs[0]
    axes = normalize_axes(node.op.name, node.op.axis, _rank(like))
    dims = ctx.add("Gather", [ctx.shape_of(like), ctx.ints(axes)], axis=0)
    count = _reduce(ctx, "ReduceProd", dims, (0,), False) if axes else ctx.const(1, np.int64)
    return ctx.add("Cast", [count], to=node.out.dtype)


@exports(G.FullLike)
def _full_like(ctx, node):
    value = ctx.onnx_tensor(np.asarray([node.op.value], dtype=node.out.dtype))
    return ctx.add("ConstantOfShape", [ctx.shape_of(node.inputs[0])], value=value)


@exports(G.Embedding)
def _embedding(ctx, node):
    idx, weight = node.inputs
    return ctx.add("Gather", [ctx.value(weight), ctx.value(idx)], axis=0)


@exports(G.Tril, G.Triu)
def _trilu(ctx, node):
    _needs_opset(ctx, 14, "Trilu")
    k = ctx.const(node.op.k, np.int64)
    return ctx.add("Trilu", [ctx.value(node.inputs[0]), k], upper=int(node.op.name == "Triu"))


@exports(G.OneHot)
def _one_hot(ctx, node):
    x = ctx.value(node.inputs[0], np.int64)
    classes = ctx.const(np.arange(node.op.num_classes, dtype=np.int64))
    hot = ctx.add("Equal", [_axes_form(ctx, "Unsqueeze", [x], (-1,), 13), classes])
    return ctx.add("Cast", [hot], to=node.out.dtype)


@exports(G.ScatterAdd)
def _scatter_add(ctx, node):
    _needs_opset(ctx, 16, "ScatterElements with reduction='add'")
    x, index, src = node.inputs
    data = ctx.value(x)
    if node.op.into_zeros:
        zero = ctx.onnx_tensor(np.zeros(1, dtype=x.dtype))
        data = ctx.add("ConstantOfShape", [ctx.shape_of(x)], value=zero)
    updates = ctx.value(src)
    if tuple(src.shape) != tuple(index.shape) or None in index.shape:  # src may be larger than index
        rank = _rank(index)
        updates = ctx.add("Slice", [updates, ctx.ints([0] * rank), ctx.shape_of(index), ctx.ints(range(rank))])
    return ctx.add("ScatterElements", [data, ctx.value(index, np.int64), updates], axis=node.op.axis,
                   reduction="add")


@exports(G.Scatter)
def _scatter(ctx, node):
    x, index, src = node.inputs
    if isinstance(src, Tensor):
        updates = ctx.value(src, x.dtype)
    else:  # a scalar value written at every index
        updates = ctx.add("ConstantOfShape", [ctx.shape_of(index)], value=ctx.onnx_tensor(np.full(1, src, x.dtype)))
    return ctx.add("ScatterElements", [ctx.value(x), ctx.value(index, np.int64), updates], axis=node.op.axis)


@exports(G.ScatterReduce)
def _scatter_reduce(ctx, node):
    op = node.op
    _needs_opset(ctx, 18 if op.reduce in ("amax", "amin") else 16, f"ScatterElements with reduction for {op.reduce!r}")
    x, index, src = node.inputs
    dtype = np.dtype(x.dtype)
    idx = ctx.value(index, np.int64)

    def filled(like, value):  # a tensor of like's run-time shape holding value
        return ctx.add("ConstantOfShape", [ctx.shape_of(like)], value=ctx.onnx_tensor(np.full(1, value, dtype)))

    data = ctx.value(x)
    if not op.include_self:  # the written positions start from the reduction's identity
        big = np.inf if dtype.kind == "f" else np.iinfo(dtype).max
        identity = {"sum": 0, "mean": 0, "prod": 1, "amax": -big, "amin": big}[op.reduce]
        data = ctx.add("ScatterElements", [data, idx, filled(index, identity)], axis=op.axis)
    reduction = {"sum": "add", "mean": "add", "prod": "mul", "amax": "max", "amin": "min"}[op.reduce]
    out = ctx.add("ScatterElements", [data, idx, ctx.value(src, dtype)], axis=op.axis, reduction=reduction)
    if op.reduce != "mean":
        return out
    count = ctx.add("ScatterElements", [filled(x, 1 if op.include_self else 0), idx, filled(index, 1)],
                    axis=op.axis, reduction="add")
    count = ctx.add("Max", [count, ctx.const(np.ones((), dtype), dtype)])
    return ctx.add("Div", [out, count])


@exports(G.NonZero)
def _nonzero(ctx, node):
    # ONNX's NonZero gives one row per dimension: (ndim, count); graphgrad's is its transpose
    return ctx.add("Transpose", [ctx.add("NonZero", [ctx.value(node.inputs[0])])], perm=(1, 0))


# ---- indexing ----------------------------------------------------------------------------------------------
@exports(G.GetItem)
def _getitem(ctx, node):
    """Basic indexing as Slice + Squeeze (ints) + Unsqueeze (None); one integer array as Gather."""
    x, arrays = node.inputs[0], node.inputs[1:]
    items = _expand(node.op.name, node.op.key, _rank(x))
    advanced = [k for k in items if isinstance(k, tuple) and k[0] != "slice"]
    if len(items) == 1 and isinstance(items[0], tuple) and items[0][0] == "mask":  # x[mask] over every dim
        flat = ctx.ints([-1])
        return ctx.add("Compress", [ctx.add("Reshape", [ctx.value(x), flat]),
                                    ctx.add("Reshape", [ctx.value(arrays[0]), flat])], axis=0)
    if any(k[0] == "mask" for k in advanced):
        raise OnnxExportError("boolean-mask indexing has a data-dependent shape; use gg.where instead")
    if len(advanced) > 1 or (advanced and any(isinstance(k, int) for k in items)):
        return _gather_nd(ctx, node, items)
    starts, ends, axes, steps, squeeze, unsqueeze = [], [], [], [], [], []
    gather_axis = None
    d = out = 0  # input axis, output axis
    for item in items:
        if item is None:
            unsqueeze.append(out)
            out += 1
            continue
        if isinstance(item, int):
            starts.append(item), ends.append(item + 1 if item != -1 else _INT64_MAX), axes.append(d), steps.append(1)
            squeeze.append(d)
        elif item[0] == "slice":
            start, stop, step = item[1:]
            step = 1 if step is None else step
            if (start, stop, step) != (None, None, 1):
                starts.append(start if start is not None else (0 if step > 0 else _INT64_MAX))
                ends.append(stop if stop is not None else (_INT64_MAX if step > 0 else _INT64_MIN))
                axes.append(d), steps.append(step)
            out += 1
        else:  # the integer array: Gather along this axis once ints are squeezed out
            gather_axis = d - len(squeeze)
            out += arrays[0].ndim
        d += 1
    y = ctx.value(x)
    if axes:
        y = ctx.add("Slice", [y, ctx.ints(starts), ctx.ints(ends), ctx.ints(axes), ctx.ints(steps)])
    if squeeze:
        y = _axes_form(ctx, "Squeeze", [y], squeeze, 13)
    if gather_axis is not None:
        y = ctx.add("Gather", [y, ctx.value(arrays[0], np.int64)], axis=gather_axis)
    if unsqueeze:
        y = _axes_form(ctx, "Unsqueeze", [y], unsqueeze, 13)
    return y if y != ctx.value(x) else ctx.add("Identity", [y])


def _gather_nd(ctx, node, items: list) -> str:
    """``x[i, j, ...]`` with integer arrays (or ints) on the leading axes and slices after: GatherND of
    the broadcast indices stacked on a last axis."""
    x, arrays = node.inputs[0], list(node.inputs[1:])
    k = 0
    while k < len(items) and (isinstance(items[k], int) or (isinstance(items[k], tuple) and items[k][0] == "array")):
        k += 1
    if any(not (isinstance(it, tuple) and it[0] == "slice") for it in items[k:]):
        raise OnnxExportError("integer-array indices are exported on leading axes only, followed by slices")
    index_values, shapes, taken = [], [], iter(arrays)
    for it in items[:k]:
        if isinstance(it, int):
            index_values.append(ctx.const(it, np.int64)), shapes.append(())
        else:
            a = next(taken)
            index_values.append(ctx.value(a, np.int64)), shapes.append(tuple(a.shape))
    if any(None in s for s in shapes):
        raise OnnxExportError("index arrays of unknown shape cannot be broadcast at export")
    common = np.broadcast_shapes(*shapes)
    stacked = ctx.add("Concat", [_axes_form(ctx, "Unsqueeze", [ctx.add("Expand", [v, ctx.ints(common)])], (-1,), 13)
                                 for v in index_values], axis=-1)
    y = ctx.value(x)
    rest = [(d, it) for d, it in enumerate(items) if d >= k and it[1:] != (None, None, None)]
    if rest:
        starts = [it[1] if it[1] is not None else (0 if (it[3] or 1) > 0 else _INT64_MAX) for _, it in rest]
        ends = [it[2] if it[2] is not None else (_INT64_MAX if (it[3] or 1) > 0 else _INT64_MIN) for _, it in rest]
        y = ctx.add("Slice", [y, ctx.ints(starts), ctx.ints(ends), ctx.ints([d for d, _ in rest]),
                              ctx.ints([it[3] or 1 for _, it in rest])])
    return ctx.add("GatherND", [y, stacked])


@exports(G.Einsum)
def _einsum(ctx, node):
    """ONNX Einsum, with each ``...`` spelled out as letters (ONNX's shape inference rejects ellipses
    standing for different numbers of axes)."""
    terms, out = node.op.terms, node.op.output
    if "..." in node.op.subscripts:
        free = [c for c in "ABCDEFGHIJKLMNOPQRSTUVWXYZ" if c not in node.op.subscripts]
        ranks = [_rank(x) - len(t.replace("...", "")) for t, x in zip(terms, node.inputs)]
        letters = "".join(free[:max(ranks)])
        terms = [t.replace("...", letters[len(letters) - r:] if r else "") for t, r in zip(terms, ranks)]
        sizes: dict = {}
        for t, x in zip(terms, node.inputs):
            for c, d in zip(t, x.shape):
                sizes.setdefault(c, set()).add(d)
        if any(len(v) > 1 for c, v in sizes.items() if c in letters):
            raise OnnxExportError("einsum broadcasting size-1 '...' axes has no ONNX form (ONNX Einsum "
                                  "does not broadcast)")
        out = out.replace("...", letters)
    dtype = node.out.dtype
    return ctx.add("Einsum", [ctx.value(x, dtype) for x in node.inputs], equation=",".join(terms) + "->" + out)


# ---- resampling ----------------------------------------------------------------------------------------------
@exports(G.AdaptiveAvgPool1d, G.AdaptiveAvgPool2d, G.AdaptiveAvgPool3d, G.Interpolate)
def _resample(ctx, node):
    """``y = A_h @ x @ A_w^T`` with the op's own constant matrices (one per trailing axis); an axis before
    those two is swapped with the last one around its MatMul."""
    op, x = node.op, node.inputs[0]
    rank, nd = len(x.shape), len(op.axes)
    y = ctx.value(x)
    for i, axis in enumerate(op.axes):
        a = np.asarray(op._matrix(np, node.out.dtype, axis))  # (out, in)
        if op.transpose:
            a = a.T
        from_end = nd - 1 - i  # 0: the last axis
        if from_end == 0:
            y = ctx.add("MatMul", [y, ctx.const(a.T)])
        elif from_end == 1:
            y = ctx.add("MatMul", [ctx.const(a), y])
        else:
            perm = list(range(rank))
            perm[-1], perm[-1 - from_end] = perm[-1 - from_end], perm[-1]
            y = ctx.add("Transpose", [ctx.add("MatMul", [ctx.add("Transpose", [y], perm=perm), ctx.const(a.T)])],
                        perm=perm)
    return y


@exports(G.MaxPool1d, G.MaxPool2d, G.MaxPool3d, G.AvgPool1d, G.AvgPool2d, G.AvgPool3d)
def _pool(ctx, node):
    """MaxPool / AveragePool; an input without a batch axis gets one around the node (ONNX pools
    ``(N, C, *S)``)."""
    op, x = node.op, node.inputs[0]
    attrs = op.onnx_attributes(ctx.opset)
    if len(x.shape) == op.nd + 2:
        return ctx.add(op.onnx, [ctx.value(x)], **attrs)
    batched = _axes_form(ctx, "Unsqueeze", [ctx.value(x)], [0], 13)
    return _axes_form(ctx, "Squeeze", [ctx.add(op.onnx, [batched], **attrs)], [0], 13)


@exports(G.RandomLike)
def _random_like(ctx, node):
    """RandomUniformLike/RandomNormalLike; a seeded ``gg.Generator`` passes its seed on (onnxruntime
    draws its own numbers from it, not graphgrad's)."""
    op = node.op
    seed = getattr(op.generator, "initial_seed", None)
    attrs = {"dtype": node.out.dtype, "seed": None if seed is None else float(seed)}
    if op.distribution == "uniform":
        return ctx.add("RandomUniformLike", [ctx.value(node.inputs[0])], low=op.a, high=op.b, **attrs)
    return ctx.add("RandomNormalLike", [ctx.value(node.inputs[0])], mean=op.a, scale=op.b, **attrs)


# ---- recurrent sequence ops ----------------------------------------------------------------------------------
def _onnx_gate_order(ctx, value: str, gates: int, order: tuple) -> str:
    """``value`` (gates * H, ...) with its gate blocks put in ONNX's order."""
    split = {"num_outputs": gates} if ctx.opset >= 18 else {}
    blocks = ctx.add("Split", [value], n_outputs=gates, axis=0, **split)
    return ctx.add("Concat", [blocks[k] for k in order], axis=0)


def _recurrent(ctx, node, op_type: str, order: tuple, **attrs) -> str:
    """A ``...Scan`` node as the standard ONNX LSTM / GRU node (one direction): its value is
    ``Y, Y_h[, Y_c]`` stacked on the time axis, the public rows that ``...Sequence`` returns."""
    op, dtype = node.op, node.out.dtype
    x, w_ih, w_hh, b_ih, b_hh, states, _ = op._unpack(node.inputs)
    hidden = w_hh.shape[1]
    if hidden is None:
        raise OnnxExportError(f"{op.function}: the hidden size must be known")
    axis0 = ctx.ints([0])

    def stacked(*values):  # gate-reordered, with ONNX's leading num_directions axis
        reordered = [_onnx_gate_order(ctx, ctx.value(v, dtype), op.gates, order) for v in values]
        joined = reordered[0] if len(reordered) == 1 else ctx.add("Concat", reordered, axis=0)
        return ctx.add("Unsqueeze", [joined, axis0])

    inputs = [ctx.value(x, dtype), stacked(w_ih), stacked(w_hh), stacked(b_ih, b_hh) if op.has_bias else "", ""]
    if op.has_state:
        inputs += [ctx.add("Unsqueeze", [ctx.value(s, dtype), axis0]) for s in states]
    while inputs[-1] == "":
        inputs.pop()
    outs = ctx.add(op_type, inputs, n_outputs=1 + op.n_states, hidden_size=int(hidden),
                   direction="reverse" if op.reverse else "forward", **attrs)
    y = ctx.add("Squeeze", [outs[0], ctx.ints([1])])  # (T, 1, B, H) -> (T, B, H)
    return ctx.add("Concat", [y] + outs[1:], axis=0)


@exports(G.LSTMScan)
def _lstm_scan(ctx, node):
    return _recurrent(ctx, node, "LSTM", (0, 3, 1, 2))  # PyTorch's i, f, g, o -> ONNX's i, o, f, c


@exports(G.GRUScan)
def _gru_scan(ctx, node):
    return _recurrent(ctx, node, "GRU", (1, 0, 2), linear_before_reset=1)  # r, z, n -> z, r, h


@exports(G.LSTMSequence, G.GRUSequence)
def _recurrent_sequence(ctx, node):
    return ctx.value(node.inputs[-1])  # the exported scan holds exactly the public rows


# ---- fused nn ops: the standard ONNX op where the opset has it, else the formula -------------------------
@exports(G.Gelu)
def _gelu(ctx, node):
    dtype, approximate = node.out.dtype, node.op.approximate
    x = ctx.value(node.inputs[0], dtype)
    if ctx.opset >= 20:
        return ctx.add("Gelu", [x], approximate=approximate)
    if approximate == "tanh":  # x/2 (1 + tanh(k (x + c x^3)))
        cube = ctx.add("Mul", [ctx.add("Mul", [x, x]), x])
        inner = ctx.add("Add", [x, ctx.add("Mul", [cube, ctx.const(0.044715, dtype)])])
        cdf = ctx.add("Tanh", [ctx.add("Mul", [inner, ctx.const(math.sqrt(2.0 / math.pi), dtype)])])
    else:  # x/2 (1 + erf(x / sqrt(2)))
        cdf = ctx.add("Erf", [ctx.add("Mul", [x, ctx.const(math.sqrt(0.5), dtype)])])
    half = ctx.add("Mul", [x, ctx.const(0.5, dtype)])
    return ctx.add("Mul", [half, ctx.add("Add", [cdf, ctx.const(1.0, dtype)])])


@exports(G.LayerNorm)
def _layer_norm(ctx, node):
    op, dtype = node.op, node.out.dtype
    x = ctx.value(node.inputs[0], dtype)
    params = [ctx.value(p, dtype) for p in node.inputs[1:]]
    weight = params[0] if op.has_weight else None
    bias = params[-1] if op.has_bias else None
    if ctx.opset >= 17:
        if weight is None:  # LayerNormalization needs a scale
            weight = ctx.const(np.ones(node.inputs[0].shape[-op.k:]), dtype)
        inputs = [x, weight] + ([bias] if bias is not None else [])
        return ctx.add("LayerNormalization", inputs, axis=-op.k, epsilon=op.eps)
    axes = tuple(range(-op.k, 0))
    centered = ctx.add("Sub", [x, _axes_form(ctx, "ReduceMean", [x], axes, 18, keepdims=1)])
    var = _axes_form(ctx, "ReduceMean", [ctx.add("Mul", [centered, centered])], axes, 18, keepdims=1)
    y = ctx.add("Div", [centered, ctx.add("Sqrt", [ctx.add("Add", [var, ctx.const(op.eps, dtype)])])])
    if weight is not None:
        y = ctx.add("Mul", [y, weight])
    return y if bias is None else ctx.add("Add", [y, bias])


def _attention_inputs(ctx, node) -> tuple:
    """ONNX names of q, k, v ((N, h, L, d) heads of a packed input), and the attention's rank."""
    op, dtype = node.op, node.out.dtype
    arrays = op._split(node.inputs)[0]
    if not op.heads:
        return tuple(ctx.value(a, dtype) for a in arrays), len(arrays[0].shape)
    width = arrays[0].shape[2]
    shape = ctx.ints([0, 0, 3, op.heads, width // (3 * op.heads)])  # (N, L, 3E) -> (N, L, 3, h, d)
    heads = ctx.add("Transpose", [ctx.add("Reshape", [ctx.value(arrays[0], dtype), shape])], perm=[2, 0, 3, 1, 4])
    return tuple(ctx.add("Gather", [heads, ctx.const(i, np.int64)], axis=0) for i in range(3)), 4


@exports(G.AttentionWeights)
def _attention_weights(ctx, node):  # softmax(q k^T * scale + mask), transposed to (..., S, L)
    op, dtype = node.op, node.out.dtype
    (q, k, _), rank = _attention_inputs(ctx, node)
    swap = list(range(rank - 2)) + [rank - 1, rank - 2]
    scores = ctx.add("Mul", [ctx.add("MatMul", [q, ctx.add("Transpose", [k], perm=swap)]), ctx.const(op.scale, dtype)])
    if op.causal:
        S, L = node.out.shape[-2:]
        if L is None or S is None:
            raise OnnxExportError("causal attention needs the query and key lengths known when exporting")
        scores = ctx.add("Add", [scores, ctx.const(np.triu(np.full((L, S), -np.inf), 1), dtype)])
    mask = op._split(node.inputs)[1]
    if op.mask == "float":
        scores = ctx.add("Add", [scores, ctx.value(mask, dtype)])
    elif op.mask == "bool":
        scores = ctx.add("Where", [ctx.value(mask), scores, ctx.const(-np.inf, dtype)])
    return ctx.add("Transpose", [ctx.add("Softmax", [scores], axis=-1)], perm=swap)


@exports(G.ScaledDotProductAttention)
def _attention(ctx, node):  # the weights (the last input) applied to v
    op, dtype = node.op, node.out.dtype
    (_, _, v), rank = _attention_inputs(ctx, node)
    swap = list(range(rank - 2)) + [rank - 1, rank - 2]
    weights = ctx.add("Transpose", [ctx.value(node.inputs[-1], dtype)], perm=swap)
    out = ctx.add("MatMul", [weights, v])
    if not op.heads:
        return out
    merged = ctx.add("Transpose", [out], perm=[0, 2, 1, 3])  # (N, h, L, d) -> (N, L, E)
    return ctx.add("Reshape", [merged, ctx.ints([0, 0, node.out.shape[2]])])


# ---- run-time shapes (ops/shape_dynamic.py) ------------------------------------------------------------
@exports(G.FullOfShape)
def _full_of_shape(ctx, node):
    value = ctx.onnx_tensor(np.asarray([node.op.value], dtype=node.op.dtype))
    return ctx.add("ConstantOfShape", [ctx.value(node.inputs[0])], value=value)


@exports(G.SliceDynamic)
def _slice_dynamic(ctx, node):
    x, starts, ends = node.inputs
    return ctx.add("Slice", [ctx.value(x), ctx.value(starts), ctx.value(ends), ctx.ints(node.op.axes),
                             ctx.ints(node.op.steps)])
