"""ONNX export converters of the elementwise math and index writes of ``ops/math_more.py`` and
``ops/shape_more.py``: compositions of standard ONNX ops (ONNX has no hypot, signbit, signed shifts or
index_put). The special functions without an ONNX form (lgamma, digamma, erfinv) raise the exporter's
"no ONNX form" error, naming the op.
"""
from __future__ import annotations

import graphgrad.ops as G
from graphgrad.backend import np, to_numpy
from graphgrad.io.onnx.export import OnnxExportError, _needs_opset, exports
from graphgrad.ops.indexing import _build_key


@exports(G.Hypot)
def _hypot(ctx, node):
    a, b = (ctx.value(x, node.out.dtype) for x in node.inputs)
    return ctx.add("Sqrt", [ctx.add("Add", [ctx.add("Mul", [a, a]), ctx.add("Mul", [b, b])])])


@exports(G.Erfc)
def _erfc(ctx, node):
    x = ctx.value(node.inputs[0], node.out.dtype)
    return ctx.add("Sub", [ctx.const(1, node.out.dtype), ctx.add("Erf", [x])])


@exports(G.Signbit)
def _signbit(ctx, node):
    x = ctx.value(node.inputs[0])
    dtype = node.inputs[0].dtype
    if dtype.kind != "f":
        return ctx.add("Less", [x, ctx.const(0, dtype)])
    # x < 0, or -0.0 (whose reciprocal is -inf)
    reciprocal = ctx.add("Div", [ctx.const(1, dtype), x])
    return ctx.add("Or", [ctx.add("Less", [x, ctx.const(0, dtype)]), ctx.add("Less", [reciprocal, ctx.const(0, dtype)])])


def _power_of_two(ctx, node, dtype):
    """``2 ** b`` as ``dtype`` (ONNX's BitShift takes unsigned integers only)."""
    b = ctx.value(node.inputs[1], dtype)
    return ctx.add("Pow", [ctx.const(2, dtype), b])



@exports(G.LeftShift)
def _left_shift(ctx, node):
    dtype = node.out.dtype
    return ctx.add("Mul", [ctx.value(node.inputs[0], dtype), _power_of_two(ctx, node, dtype)])


@exports(G.RightShift)
def _right_shift(ctx, node):
    dtype = node.out.dtype
    if dtype.kind == "u":
        return ctx.add("BitShift", [ctx.value(node.inputs[0], dtype), ctx.value(node.inputs[1], dtype)],
                       direction="RIGHT")
    # arithmetic shift of signed integers: floor(a / 2**b), exact in float64 for |a| < 2**53
    a = ctx.value(node.inputs[0], np.float64)
    quotient = ctx.add("Div", [a, _power_of_two(ctx, node, np.float64)])
    return ctx.cast(ctx.add("Floor", [quotient]), np.float64, dtype)


def _constant(x):
    """The value of a graph input that is a constant (an eager tensor or a ``Const`` node), else None."""
    if x._data is not None:
        return to_numpy(x._data)
    op = getattr(getattr(x, "_node", None), "op", None)
    value = getattr(op, "value", None) if type(op).__name__ == "Const" else None
    return None if value is None else np.asarray(value)


@exports(G.IndexPut)
def _index_put(ctx, node):
    """``x[key] = values`` as ScatterElements on the flattened ``x``, at positions worked out here from
    the constant index arrays (data-dependent indices have no static form)."""
    x, values, arrays = node.inputs[0], node.inputs[1], node.inputs[2:]
    shape = tuple(x.shape)
    if any(d is None for d in shape):
        raise OnnxExportError(f"index writes need a known input shape, got {shape}")
    constants = [_constant(a) for a in arrays]
    if any(c is None for c in constants):
        raise OnnxExportError("index writes with indices computed in the graph have no ONNX form here; "
                              "use constant indices, or gg.scatter / gg.where")
    positions = np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape)[_build_key(np, node.op.key, constants)]
    flat_positions = ctx.const(positions.reshape(-1), np.int64)
    updates = ctx.add("Expand", [ctx.value(values, x.dtype), ctx.ints(positions.shape)])
    updates = ctx.add("Reshape", [updates, ctx.ints([-1])])
    flat_x = ctx.add("Reshape", [ctx.value(x), ctx.ints([-1])])
    if node.op.accumulate:
        _needs_opset(ctx, 16, "index_put(accumulate=True) (ScatterElements with reduction)")
        out = ctx.add("ScatterElements", [flat_x, flat_positions, updates], axis=0, reduction="add")
    else:
        out = ctx.add("ScatterElements", [flat_x, flat_positions, updates], axis=0)
    return ctx.add("Reshape", [out, ctx.ints(shape)])


@exports(G.NonMaxSuppression)
def _non_max_suppression(ctx, node):
    boxes, scores = (ctx.value(x) for x in node.inputs)
    op = node.op
    n = node.inputs[0].shape[1]
    limit = op.max_output_boxes_per_class if op.max_output_boxes_per_class is not None else (n if n is not None else 1 << 30)
    inputs = [boxes, scores, ctx.const([limit], np.int64), ctx.const([op.iou_threshold], np.float32)]
    if op.score_threshold is not None:
        inputs.append(ctx.const([op.score_threshold], np.float32))
    return ctx.add("NonMaxSuppression", inputs, center_point_box=op.center_point_box)
