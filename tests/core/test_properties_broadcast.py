"""Property-based tests: broadcasting forward and gradients for every binary arithmetic op."""
from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import graphgrad as gg

OPS = {
    "add": (lambda a, b: a + b, lambda a, b, g: (g, g)),
    "sub": (lambda a, b: a - b, lambda a, b, g: (g, -g)),
    "mul": (lambda a, b: a * b, lambda a, b, g: (g * b, g * a)),
    "div": (lambda a, b: a / b, lambda a, b, g: (g / b, -g * a / (b * b))),
    "maximum": (gg.maximum, None),
}


def _unbroadcast(g, shape):
    while g.ndim > len(shape):
        g = g.sum(axis=0)
    for axis, size in enumerate(shape):
        if size == 1 and g.shape[axis] != 1:
            g = g.sum(axis=axis, keepdims=True)
    return g


@settings(max_examples=60, deadline=None)
@given(shapes=hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=4, max_side=4),
       op=st.sampled_from(["add", "sub", "mul", "div"]), seed=st.integers(0, 2**16))
def test_broadcast_binary_gradients_match_numpy(shapes, op, seed):
    rng = np.random.default_rng(seed)
    sa, sb = shapes.input_shapes
    a = rng.uniform(0.5, 2.0, sa)
    b = rng.uniform(0.5, 2.0, sb)
    fn, rule = OPS[op]
    ta, tb = gg.tensor(a, requires_grad=True), gg.tensor(b, requires_grad=True)
    out = fn(ta, tb)
    expected = fn(a, b)
    assert out.shape == np.shape(expected) == shapes.result_shape
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-12)
    g = rng.standard_normal(out.shape)
    out.backward(gg.tensor(g))
    ga, gb = rule(a, b, g)
    np.testing.assert_allclose(ta.grad.numpy(), _unbroadcast(np.asarray(ga), sa), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(tb.grad.numpy(), _unbroadcast(np.asarray(gb), sb), rtol=1e-10, atol=1e-12)


@settings(max_examples=40, deadline=None)
@given(shapes=hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=1, max_dims=3, max_side=3),
       seed=st.integers(0, 2**16))
def test_broadcast_check_grad_second_order(shapes, seed):
    rng = np.random.default_rng(seed)
    a = gg.tensor(rng.uniform(0.5, 2.0, shapes.input_shapes[0]))
    b = gg.tensor(rng.uniform(0.5, 2.0, shapes.input_shapes[1]))
    gg.check_grad(lambda x, y: (x * y).exp() / y, a, b, order=2)


@settings(max_examples=40, deadline=None)
@given(shapes=hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=1, max_dims=3, max_side=4))
def test_incompatible_shapes_raise_shape_error_naming_both(shapes):
    sa, sb = shapes.input_shapes
    bad = sb[:-1] + (sb[-1] + 5 if sa[-1] != 1 else sb[-1],) if sb else (7,)
    if sa and sa[-1] != 1 and bad[-1] != sa[-1]:
        try:
            gg.ones(sa) * gg.ones(bad)
        except gg.ShapeError as error:
            assert str(tuple(sa)) in str(error) and str(tuple(bad)) in str(error) and "Mul" in str(error)
        else:
            raise AssertionError("no ShapeError")
