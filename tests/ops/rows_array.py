"""Op-table rows for array plumbing ops: identity, stop_gradient, *_like fills and *_like shape ops
(and the run-time-shape ops Flatten and SplitLike that flatten and concatenate's gradient use when
a graph has unknown dimensions)."""
from __future__ import annotations

import numpy as np

import graphgrad as gg
from graphgrad.ops import BroadcastLike, CountLike, Flatten, ReshapeLike, SplitLike, SumLike
from tests.ops.op_table import F, OpSpec

S = (3, 4)


def _draws(seed, kind, shape, a=0.0, b=1.0):
    rng = np.random.default_rng(seed)
    return a + (b - a) * rng.random(shape) if kind == "uniform" else rng.normal(a, b, shape)


ROWS = [
    OpSpec("identity", gg.identity, lambda x: x, [F(S)]),
    OpSpec("clone", gg.clone, lambda x: x.copy(), [F(S)]),
    OpSpec("stop_gradient", lambda x: gg.stop_gradient(x) * x, lambda x: x * x, [F(S)], grad=False),  # by design
    OpSpec("full_like", lambda x: gg.full_like(x, 2.5) * x, lambda x: 2.5 * x, [F(S)]),
    OpSpec("zeros_like", lambda x: gg.zeros_like(x) + x, lambda x: x, [F(S)]),
    OpSpec("ones_like", lambda x: gg.ones_like(x, dtype="int32"), lambda x: np.ones(x.shape, np.int32), [F(S)],
           grad=False),
    # random fills: a fresh generator per call draws the same sample, so each row is a fixed function
    OpSpec("rand_like", lambda x: gg.rand_like(x, -1.0, 3.0, generator=gg.Generator(3)) * x,
           lambda x: _draws(3, "uniform", x.shape, -1.0, 3.0) * x, [F(S)]),
    OpSpec("randn_like", lambda x: gg.randn_like(x, 1.0, 2.0, generator=gg.Generator(4)) * x,
           lambda x: _draws(4, "normal", x.shape, 1.0, 2.0) * x, [F(S)]),
    OpSpec("bernoulli", lambda p: gg.bernoulli(p, generator=gg.Generator(5)),
           lambda p: (_draws(5, "uniform", p.shape) < p).astype(p.dtype), [F(S, 0.0, 1.0, diff=False)], grad=False),
    OpSpec("broadcast_like", lambda x, y: gg.broadcast_like(x, y) * y, lambda x, y: x * y, [F((1, 4)), F(S)]),
    OpSpec("broadcast_like[op]", lambda x, y: BroadcastLike().apply(x, y) * y, lambda x, y: x * y,
           [F((4,)), F(S)]),
    OpSpec("sum_like", lambda x, y: gg.sum_like(x, y) * y, lambda x, y: x.sum(0, keepdims=True) * y,
           [F(S), F((1, 4))]),
    OpSpec("sum_like[op]", lambda x, y: SumLike().apply(x, y) * y, lambda x, y: x.sum(axis=(0, 1)) * y,
           [F((2, 3, 4)), F((4,))]),
    OpSpec("reshape_like", lambda x, y: gg.reshape_like(x, y) * y, lambda x, y: x.reshape(4, 3) * y,
           [F(S), F((4, 3))]),
    OpSpec("reshape_like[op]", lambda x, y: ReshapeLike().apply(x, y) * y, lambda x, y: x.reshape(2, 6) * y,
           [F(S), F((2, 6))]),
    OpSpec("count_like", lambda x: x / gg.count_like(x, axis=1), lambda x: x / 4, [F(S)]),
    OpSpec("count_like[op]", lambda x: x / CountLike(axis=(0, 1), dtype=x.dtype).apply(x), lambda x: x / 12,
           [F(S)]),
    OpSpec("flatten[op]", lambda x: Flatten(1, 2).apply(x), lambda x: x.reshape(2, 12), [F((2, 3, 4))]),
    OpSpec("split_like[op]", lambda x, a, b: SplitLike(0, 1).apply(x, a, b), lambda x, a, b: x[2:5],
           [F((5, 3)), F((2, 3), diff=False), F((3, 3), diff=False)]),
    OpSpec("split_like[op,axis=1]", lambda x, a, b: SplitLike(1, 0).apply(x, a, b) * a, lambda x, a, b: x[:, :2] * a,
           [F((3, 5)), F((3, 2)), F((3, 3), diff=False)]),
]
