"""Op-table rows for the run-time-shape ops (``graphgrad/ops/shape_dynamic.py``): each row computes
its shape or bounds from ``shape_of`` of an input, so the unknown-batch graph test runs it with
shapes known only when the graph runs."""
from __future__ import annotations

import numpy as np

import graphgrad as gg
from graphgrad.ops import ArangeOf, ExpandTo, FullOfShape, ReshapeTo, ShapeOf, SliceDynamic, SliceDynamicGrad
from tests.ops.op_table import F, OpSpec

S = (3, 4)


def _swapped_shape(x):
    return gg.concatenate([gg.shape_of(x, 1, 2), gg.shape_of(x, 0, 1)])


ROWS = [
    OpSpec("shape_of", lambda x: gg.shape_of(x), lambda x: np.array(x.shape), [F(S, diff=False)], grad=False),
    OpSpec("shape_of[start=1]", lambda x: gg.shape_of(x, 1) * 2, lambda x: np.array(x.shape[1:]) * 2,
           [F((2, 3, 4), diff=False)], grad=False),
    OpSpec("shape_of[op,scale]", lambda x: x * gg.astype(ShapeOf(-1).apply(x), x.dtype), lambda x: x * x.shape[-1],
           [F(S)]),
    # (infer=False: these outputs' sizes are values computed when the graph runs, so the shape rule
    # gives None there by design; the unknown-batch graph test still runs them: batch=True)
    OpSpec("reshape_to[op]", lambda x: ReshapeTo().apply(x, _swapped_shape(x)), lambda x: x.reshape(4, 3), [F(S)],
           infer=False, batch=True),
    OpSpec("reshape_to[op,zero,minus_one]", lambda x: ReshapeTo(hint=(None, 2, None)).apply(x, gg.tensor([0, 2, -1])),
           lambda x: x.reshape(3, 2, 2), [F(S)], infer=False, batch=True),
    OpSpec("expand_to[op]", lambda x, y: ExpandTo().apply(x, gg.shape_of(y)) * y, lambda x, y: x * y,
           [F((3, 1)), F(S)]),
    OpSpec("full_of_shape[op]", lambda x: FullOfShape(2.5, x.dtype).apply(gg.shape_of(x)) * x, lambda x: 2.5 * x,
           [F(S)]),
    OpSpec("arange_of[op]", lambda x: x * gg.astype(ArangeOf().apply(0, gg.shape_of(x)[1], 1), x.dtype),
           lambda x: x * np.arange(x.shape[1]), [F(S)]),
    OpSpec("arange_of[op,step]", lambda x: x * gg.astype(ArangeOf().apply(gg.shape_of(x)[1] - 1, -1, -1), x.dtype),
           lambda x: x * np.arange(x.shape[1] - 1, -1, -1), [F(S)]),
    OpSpec("slice_dynamic[op]", lambda x: SliceDynamic((1,)).apply(x, gg.tensor([1]), gg.shape_of(x, 1, 2)),
           lambda x: x[:, 1:], [F(S)], infer=False, batch=True),
    OpSpec("slice_dynamic[op,step]", lambda x: SliceDynamic((0, 1), (1, -2)).apply(x, gg.tensor([1, -1]),
                                                                                 gg.tensor([100, -100])),
           lambda x: x[1:, ::-2], [F(S)], infer=False, batch=True),
    OpSpec("slice_dynamic_grad[op]", lambda x, g: SliceDynamicGrad((1,), (1,)).apply(x, g, gg.tensor([1]), gg.tensor([3])),
           lambda x, g: np.pad(g, ((0, 0), (1, 1))), [F(S, diff=False), F((3, 2))]),
]
