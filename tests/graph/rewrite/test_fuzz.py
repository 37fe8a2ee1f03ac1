"""Random graphs give the same values and gradients at every optimization level.

Hypothesis draws a seed; the seed builds a graph of elementwise ops (add, mul, sub, div, exp, tanh,
neg, maximum, with random constants: Python scalars, constant tensors, and the special values 0, 1
and 2 that the simplifier looks for), broadcasts, reductions (sum, mean, max over random axes, with
or without keepdims), reshapes and transposes over placeholders of random shapes, with repeated
subexpressions for CSE and constant subgraphs for folding. Then
``Session(optimize=0) == Session(optimize=1) == Session(optimize=2)`` for the outputs and for
``gg.gradients`` of a weighted sum of them.
"""
from __future__ import annotations

import math

import numpy as np
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import graphgrad as gg


def _constant(rng, shape, allow_tensor=True):
    """A Python scalar (often 0, 1 or 2) or a constant tensor that broadcasts into ``shape``."""
    special = [0.0, 1.0, 2.0, 1, 2, 0.5]
    if not allow_tensor or rng.random() < 0.6:
        if rng.random() < 0.5:
            return special[rng.integers(len(special))]
        return float(rng.uniform(0.5, 1.5) * rng.choice([-1, 1]))
    rank = int(rng.integers(0, len(shape) + 1))
    sub = tuple(d if rng.random() < 0.6 else 1 for d in shape[len(shape) - rank:])
    if rng.random() < 0.2:
        return gg.constant(np.ones(sub))
    return gg.constant(rng.uniform(0.5, 1.5, sub) * rng.choice([-1, 1], sub))


def _reshape_target(rng, shape):
    size = math.prod(shape)
    dims = []
    rest = size
    while rest > 1 and len(dims) < 3:
        divisors = [d for d in range(1, rest + 1) if rest % d == 0]
        d = int(rng.choice(divisors))
        dims.append(d)
        rest //= d
    dims.append(rest)
    dims = [d for d in dims if d != 1] or [1]
    if rng.random() < 0.3:
        dims.insert(int(rng.integers(0, len(dims) + 1)), 1)
    if rng.random() < 0.5:
        dims[int(rng.integers(len(dims)))] = -1
    return tuple(dims)


def _step(rng, pool):
    """One new tensor from the pool."""
    x = pool[int(rng.integers(len(pool)))]
    shape = tuple(x.shape)
    kind = rng.choice(["unary", "const", "binary", "chain", "broadcast", "reduce", "reshape", "transpose",
                       "repeat", "foldable"])
    if kind == "unary":
        fn = rng.choice(["exp", "tanh", "neg"])
        if fn == "exp":
            return gg.exp(gg.tanh(x))  # bounded, so nothing overflows
        return gg.tanh(x) if fn == "tanh" else -x
    if kind in ("const", "chain"):
        ops = [lambda a, b: a + b, lambda a, b: a * b, lambda a, b: a - b,
               lambda a, b: a / b, gg.maximum]
        for _ in range(1 if kind == "const" else int(rng.integers(2, 4))):
            op = int(rng.integers(len(ops)))
            c = _constant(rng, shape)
            if op == 3 and not isinstance(c, gg.Tensor) and c == 0:
                c = 2.0
            if op == 4 and not isinstance(c, gg.Tensor):
                c = gg.constant(np.float64(c))
            x = ops[op](c, x) if rng.random() < 0.3 and op != 3 else ops[op](x, c)
        return x
    if kind == "binary":
        others = [y for y in pool if _broadcastable(y.shape, shape)]
        y = others[int(rng.integers(len(others)))]
        op = rng.choice(["add", "mul", "sub", "maximum"])
        return {"add": x + y, "mul": x * y, "sub": x - y, "maximum": gg.maximum(x, y)}[op]
    if kind == "broadcast":
        target = tuple(int(rng.integers(1, 4)) if d == 1 else d for d in shape)
        if len(target) < 4 and rng.random() < 0.5:
            target = (int(rng.integers(1, 4)),) + target
        return gg.broadcast_to(x, target)
    if kind == "reduce":
        if not shape:
            return gg.sum(x)
        axes = [a for a in range(len(shape)) if rng.random() < 0.5]
        axis = None if rng.random() < 0.3 else (tuple(axes) if len(axes) != 1 else axes[0])
        fn = rng.choice(["sum", "mean", "max"])
        return getattr(gg, fn)(x, axis=axis, keepdims=bool(rng.random() < 0.5))
    if kind == "reshape":
        y = gg.reshape(x, _reshape_target(rng, shape))
        return gg.reshape(y, _reshape_target(rng, shape)) if rng.random() < 0.5 else y
    if kind == "transpose":
        if len(shape) < 2:
            return -x
        y = gg.transpose(x, tuple(rng.permutation(len(shape))))
        return gg.transpose(y, tuple(rng.permutation(len(shape)))) if rng.random() < 0.5 else y
    if kind == "repeat":  # the same expression twice: CSE merges it
        return gg.tanh(x * 1.5) + gg.tanh(x * 1.5)
    c = gg.constant(rng.uniform(-1, 1, shape[-1:]))  # a constant subgraph: folding computes it
    return x * (gg.exp(c) * 0.5 + 1.0)


def _broadcastable(a, b) -> bool:
    try:
        return np.broadcast_shapes(tuple(a), tuple(b)) == tuple(b)
    except ValueError:
        return False


def _build(seed: int):
    rng = np.random.default_rng(seed)
    graph = gg.Graph()
    feed = {}
    with graph.as_default():
        base = tuple(int(d) for d in rng.integers(1, 4, size=int(rng.integers(1, 4))))
        placeholders = []
        for i in range(int(rng.integers(1, 3))):
            shape = base if i == 0 else tuple(d if rng.random() < 0.6 else 1 for d in base)
            p = gg.placeholder(gg.float64, shape, name=f"x{i}")
            feed[p] = rng.uniform(-2, 2, shape)
            placeholders.append(p)
        pool = list(placeholders)
        for _ in range(int(rng.integers(3, 10))):
            pool.append(_step(rng, pool))
        outputs = pool[len(placeholders):][-2:]
        loss = None
        for out in outputs:
            term = gg.sum(out * gg.constant(rng.uniform(-1, 1, tuple(out.shape))))
            loss = term if loss is None else loss + term
        grads = [g for g in gg.gradients(loss, placeholders) if g is not None]
    return graph, outputs + [loss] + grads, feed


@settings(max_examples=100, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.integers(0, 2**32 - 1))
@example(38412)  # SumTo (1, 1) -> () returned a view, and a fused kernel wrote into it in place
def test_random_graphs_agree_across_levels(seed):
    graph, fetches, feed = _build(seed)
    results = []
    for level in (0, 1, 2):
        with gg.Session(graph, optimize=level) as sess:
            results.append(sess.run(fetches, feed))
    for level, got in ((1, results[1]), (2, results[2])):
        for k, (r, g) in enumerate(zip(results[0], got)):
            r, g = np.asarray(r), np.asarray(g)
            where = f"seed {seed}, level {level}, fetch {k}"
            assert r.shape == g.shape and r.dtype == g.dtype, where
            np.testing.assert_allclose(g, r, rtol=1e-9, atol=1e-9, err_msg=where)
