"""Placeholders made without a shape (unknown rank): reductions, their gradients and optimizers work
(TF1's classic ``tf.placeholder("float")`` linear regression)."""
from __future__ import annotations

import numpy as np
import pytest

import graphgrad as gg


def test_a_full_reduction_of_an_unknown_rank_tensor_is_0d():
    g = gg.Graph()
    with g.as_default():
        x = gg.placeholder(gg.float32)
        assert x.shape is None
        assert gg.sum(x).shape == ()
        assert gg.mean(x * 2).shape == ()
        assert gg.max(x).shape == ()
        assert gg.argmax(x).shape == ()
        assert gg.sum(x, axis=0).shape is None
        assert gg.sum(x, keepdims=True).shape is None


@pytest.mark.parametrize("reduce", ["sum", "mean", "max", "min"])
@pytest.mark.parametrize("axis", [None, 0, 1, (0, 2), -1, (0, -2)])
def test_gradients_through_reductions_of_unknown_rank(reduce, axis):
    g = gg.Graph()
    value = np.random.default_rng(0).standard_normal((2, 3, 4)).astype(np.float32)
    with g.as_default():
        x = gg.placeholder(gg.float32)
        w = gg.Variable(np.float32(1.5))
        y = gg.sum(getattr(gg, reduce)(x * w, axis=axis) ** 2)
        gx, gw = gg.gradients(y, [x, w])
    with g.as_default():
        k = gg.placeholder(gg.float32, (2, 3, 4))
        wk = gg.Variable(np.float32(1.5))
        yk = gg.sum(getattr(gg, reduce)(k * wk, axis=axis) ** 2)
        kx, kw = gg.gradients(yk, [k, wk])
    sess = gg.Session(graph=g)
    got = sess.run([y, gx, gw], {x: value})
    want = sess.run([yk, kx, kw], {k: value})
    for a, b in zip(got, want):
        np.testing.assert_allclose(a, b, rtol=1e-5)


def test_products_of_unknown_rank_say_to_give_a_shape():
    g = gg.Graph()
    with g.as_default():
        x = gg.placeholder(gg.float32)
        w = gg.Variable(np.float32(1.0))
        with pytest.raises(gg.ShapeError, match="give the placeholder a shape"):
            gg.gradients(gg.prod(x * w), [w])


def test_linear_regression_on_shapeless_placeholders_trains():
    xs = np.linspace(0, 1, 20).astype(np.float32)
    ys = 3 * xs + 0.5
    g = gg.Graph()
    with g.as_default():
        x, y = gg.placeholder(gg.float32), gg.placeholder(gg.float32)
        w, b = gg.Variable(np.float32(0.0)), gg.Variable(np.float32(0.0))
        cost = gg.sum((x * w + b - y) ** 2) / 40
        train = gg.train.GradientDescentOptimizer(0.5).minimize(cost)
        sess = gg.Session()
        sess.run(gg.global_variables_initializer())
        for _ in range(300):
            for xi, yi in zip(xs[::4], ys[::4]):   # fed one scalar at a time, as TF1's tutorial does
                sess.run(train, {x: xi, y: yi})
            sess.run(train, {x: xs, y: ys})        # and whole vectors
        assert abs(sess.run(w) - 3) < 0.05 and abs(sess.run(b) - 0.5) < 0.05
        assert sess.run(cost, {x: xs, y: ys}) < 1e-3


def test_matmul_and_reshape_of_unknown_rank():
    g = gg.Graph()
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal((3, 4)).astype(np.float32), rng.standard_normal((4, 2)).astype(np.float32)
    with g.as_default():
        x = gg.placeholder(gg.float32)
        w = gg.Variable(b)
        assert gg.reshape(x, (2, -1)).shape == (2, None)
        assert gg.reshape(x, (12,)).shape == (12,)
        y = gg.sum(gg.matmul(x, w) ** 2)
        gx, gw = gg.gradients(y, [x, w])
    got = gg.Session(graph=g).run([gx, gw], {x: a})
    np.testing.assert_allclose(got[0], 2 * (a @ b) @ b.T, rtol=1e-5)
    np.testing.assert_allclose(got[1], a.T @ (2 * (a @ b)), rtol=1e-5)


def test_indexing_and_logsumexp_of_unknown_rank():
    g = gg.Graph()
    a = np.random.default_rng(2).standard_normal((3, 4)).astype(np.float32)
    with g.as_default():
        x = gg.placeholder(gg.float32)
        k = gg.placeholder(gg.float32, (3, 4))
        outs = [gg.sum(v[0] * 2 + v[:, 1:3].sum()) + gg.sum(gg.logsumexp(v, 1)) for v in (x, k)]
        grads = [gg.gradients(o, [v])[0] for o, v in zip(outs, (x, k))]
    sess = gg.Session(graph=g)
    got = sess.run([outs[0], grads[0]], {x: a})
    want = sess.run([outs[1], grads[1]], {k: a})
    for u, v in zip(got, want):
        np.testing.assert_allclose(u, v, rtol=1e-5)
