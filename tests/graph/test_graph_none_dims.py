"""Graphs whose placeholders have an unknown batch dimension (``None``): forward values and
``gg.gradients`` must match eager mode for every batch size fed to the same graph."""
from __future__ import annotations

import numpy as np
import pytest

import graphgrad as gg

BATCHES = (5, 2, 1)
TOL = dict(rtol=1e-9, atol=1e-12)


def _eager(fn, values, diff, upstream):
    """Eager output and, for ``upstream`` (else ``None``), gradients w.r.t. ``values[i]``, ``i`` in ``diff``."""
    tensors = [gg.tensor(v, requires_grad=i in diff) for i, v in enumerate(values)]
    out = fn(*tensors)
    if upstream is None:
        return out.numpy(), None
    grads = gg.grad(out, [tensors[i] for i in diff], grad_outputs=gg.tensor(upstream), allow_unused=True)
    return out.numpy(), [None if g is None else g.numpy() for g in grads]


def check_against_eager(fn, shapes, make_values, diff=(0,), expected_shape=None):
    """Build ``fn`` once on placeholders of ``shapes`` (with ``None`` dims) and, for each batch
    size, compare its output and gradients with eager mode on the same values."""
    graph = gg.Graph()
    with graph.as_default():
        samples = make_values(BATCHES[0], np.random.default_rng(0))
        inputs = [gg.placeholder(v.dtype, shape) for v, shape in zip(samples, shapes)]
        out = fn(*inputs)
        if expected_shape is not None:
            assert out.shape == expected_shape
        seed = gg.placeholder(out.dtype, out.shape)
        grads = gg.gradients(out, [inputs[i] for i in diff], grad_ys=seed)
    sess = gg.Session(graph)
    for batch in BATCHES:
        rng = np.random.default_rng(batch)
        values = make_values(batch, rng)
        eager_out, _ = _eager(fn, values, diff, None)  # the output's shape first
        upstream = rng.standard_normal(eager_out.shape)
        eager_out, eager_grads = _eager(fn, values, diff, upstream)
        feed = {p: v for p, v in zip(inputs, values)}
        feed[seed] = upstream
        got = sess.run([out] + [g for g in grads if g is not None], feed)
        np.testing.assert_allclose(got[0], eager_out, **TOL)
        assert got[0].shape == eager_out.shape
        rest = iter(got[1:])
        for g, e in zip(grads, eager_grads):
            assert (g is None) == (e is None)
            if g is not None:
                value = next(rest)
                assert value.shape == e.shape
                np.testing.assert_allclose(value, e, **TOL)


def floats(*tail):
    return lambda n, rng: [rng.standard_normal((n,) + tail)]


# ---- a whole model ---------------------------------------------------------------------------------
def test_mlp_with_unknown_batch_matches_eager():
    rng = np.random.default_rng(1)
    w1, b1 = rng.standard_normal((4, 8)) * 0.5, rng.standard_normal(8) * 0.1
    w2, b2 = rng.standard_normal((8, 3)) * 0.5, rng.standard_normal(3) * 0.1

    def loss(x, y, w1, b1, w2, b2):
        h = gg.relu(gg.matmul(x, w1) + b1)
        return gg.cross_entropy(gg.matmul(h, w2) + b2, y)

    params = [w1, b1, w2, b2]
    graph = gg.Graph()
    with graph.as_default():
        x = gg.placeholder(gg.float64, (None, 4))
        y = gg.placeholder(gg.int64, (None,))
        ps = [gg.placeholder(gg.float64, p.shape) for p in params]
        out = loss(x, y, *ps)
        assert out.shape == ()
        grads = gg.gradients(out, [x] + ps)
        assert grads[0].shape == (None, 4) and [g.shape for g in grads[1:]] == [p.shape for p in params]
    sess = gg.Session(graph)
    for batch in (16, 3, 1):
        xv, yv = rng.standard_normal((batch, 4)), rng.integers(0, 3, batch)
        got = sess.run([out] + grads, {x: xv, y: yv, **dict(zip(ps, params))})
        tx = gg.tensor(xv, requires_grad=True)
        tp = [gg.tensor(p, requires_grad=True) for p in params]
        eager = loss(tx, gg.tensor(yv), *tp)
        expected = [eager.numpy()] + [g.numpy() for g in gg.grad(eager, [tx] + tp)]
        for g, e in zip(got, expected):
            np.testing.assert_allclose(g, e, **TOL)


def test_mlp_with_variables_and_unknown_batch_trains_like_eager():
    rng = np.random.default_rng(2)
    w0 = rng.standard_normal((3, 2))
    graph = gg.Graph()
    with graph.as_default():
        x = gg.placeholder(gg.float64, (None, 3))
        t = gg.placeholder(gg.float64, (None, 2))
        w = gg.Variable(w0.copy())
        loss = gg.mse_loss(gg.matmul(x, w), t)
        (gw,) = gg.gradients(loss, [w])
    sess = gg.Session(graph)
    xv, tv = rng.standard_normal((7, 3)), rng.standard_normal((7, 2))
    tw = gg.tensor(w0, requires_grad=True)
    (expected,) = gg.grad(gg.mse_loss(gg.matmul(gg.tensor(xv), tw), gg.tensor(tv)), [tw])
    np.testing.assert_allclose(sess.run(gw, {x: xv, t: tv}), expected.numpy(), **TOL)


# ---- reductions, normalizations, losses ---------------------------------------------------------------
CASES = {
    "mean": (lambda x: gg.mean(x), [(None, 3)]),
    "mean[axis=0]": (lambda x: gg.mean(x, axis=0), [(None, 3)]),
    "mean[keepdims]": (lambda x: gg.mean(x, axis=(0, 2), keepdims=True), [(None, 3, 2)]),
    "var": (lambda x: gg.var(x, axis=0), [(None, 3)]),
    "var[ddof=1]": (lambda x: gg.var(x, axis=0, ddof=1), [(None, 3)]),
    "std": (lambda x: gg.std(x), [(None, 3)]),
    "std[ddof=1]": (lambda x: gg.std(x, axis=0, ddof=1), [(None, 3)]),
    "sum": (lambda x: gg.sum(x, axis=0), [(None, 3)]),
    "prod": (lambda x: gg.prod(x, axis=0), [(None, 3)]),
    "max": (lambda x: gg.max(x, axis=0), [(None, 3)]),
    "logsumexp": (lambda x: gg.logsumexp(x, axis=0), [(None, 3)]),
    "norm": (lambda x: gg.norm(x), [(None, 3)]),
    "cumprod": (lambda x: gg.cumprod(x, axis=0), [(None, 3)]),
    "softmax": (lambda x: gg.softmax(x, axis=-1), [(None, 4)]),
    "softmax[batch axis]": (lambda x: gg.softmax(x, axis=0), [(None, 4)]),
    "log_softmax": (lambda x: gg.log_softmax(x, axis=-1), [(None, 4)]),
    "layer_norm": (lambda x: gg.layer_norm(x, 4), [(None, 4)]),
    "batch_norm[training]": (lambda x: gg.batch_norm(x, None, None, training=True), [(None, 3)]),
    "batch_norm[training,4d]": (lambda x: gg.batch_norm(x, None, None, training=True), [(None, 2, 3, 3)]),
    "group_norm": (lambda x: gg.group_norm(x, 2), [(None, 4, 3)]),
}

LOSSES = {
    "mse_loss": (lambda x, t: gg.mse_loss(x, t), (None, 3)),
    "mse_loss[sum]": (lambda x, t: gg.mse_loss(x, t, reduction="sum"), (None, 3)),
    "l1_loss": (lambda x, t: gg.l1_loss(x, t), (None, 3)),
    "huber_loss": (lambda x, t: gg.huber_loss(x, t, delta=0.5), (None, 3)),
    "binary_cross_entropy": (lambda x, t: gg.binary_cross_entropy(gg.sigmoid(x), t), (None, 3)),
    "binary_cross_entropy_with_logits": (lambda x, t: gg.binary_cross_entropy_with_logits(x, t), (None, 3)),
    "cross_entropy[probs]": (lambda x, t: gg.cross_entropy(x, gg.softmax(t)), (None, 3)),
}


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # ddof=1 over a batch of 1 is 0/0, in both modes
@pytest.mark.parametrize("name", list(CASES))
def test_reductions_and_normalizations_with_unknown_batch(name):
    fn, shapes = CASES[name]
    def make(n, rng):  # values away from 0 (prod, norm) and from ties (max)
        return [rng.uniform(0.5, 1.5, (n,) + s[1:]) * rng.choice([-1, 1], (n,) + s[1:]) for s in shapes]

    check_against_eager(fn, shapes, make)


@pytest.mark.parametrize("name", list(LOSSES))
def test_losses_with_unknown_batch(name):
    fn, shape = LOSSES[name]
    check_against_eager(fn, [shape, shape], lambda n, rng: [rng.standard_normal((n,) + shape[1:]),
                                                            rng.uniform(0, 1, (n,) + shape[1:])], diff=(0, 1))


def test_cross_entropy_with_labels_and_unknown_batch():
    check_against_eager(lambda x, y: gg.cross_entropy(x, y, label_smoothing=0.1), [(None, 4), (None,)],
                        lambda n, rng: [rng.standard_normal((n, 4)), rng.integers(0, 4, n)])


# ---- shapes ------------------------------------------------------------------------------------------
def test_reshape_minus_one_with_unknown_batch():
    check_against_eager(lambda x: gg.reshape(x, (-1, 6)) * 2.0, [(None, 2, 3)], floats(2, 3),
                        expected_shape=(None, 6))
    check_against_eager(lambda x: x.reshape(-1) ** 2, [(None, 2, 3)], floats(2, 3), expected_shape=(None,))


def test_flatten_with_unknown_batch():
    check_against_eager(lambda x: gg.flatten(x, 1) ** 2, [(None, 2, 3, 2)], floats(2, 3, 2),
                        expected_shape=(None, 12))
    check_against_eager(lambda x: gg.flatten(x, 0, 1).sin(), [(None, 2, 3)], floats(2, 3),
                        expected_shape=(None, 3))


@pytest.mark.parametrize("key, expected", [
    ((slice(1, None),), (None, 4)),
    ((slice(None, -1), slice(None, None, 2)), (None, 2)),
    ((slice(None, None, -1), 1), (None,)),
    ((slice(-2, None), slice(1, 3)), (None, 2)),
    ((Ellipsis, None, 0), (None, 1)),
])
def test_getitem_slices_on_unknown_dims(key, expected):
    check_against_eager(lambda x: x[key] * 3.0, [(None, 4)], floats(4), expected_shape=expected)


def test_concatenate_along_unknown_axis():
    shapes = [(None, 3), (None, 3), (2, 3)]
    check_against_eager(lambda a, b, c: gg.concatenate([a, b, c], axis=0) ** 2, shapes,
                        lambda n, rng: [rng.standard_normal((n, 3)), rng.standard_normal((n + 1, 3)),
                                        rng.standard_normal((2, 3))], diff=(0, 1, 2), expected_shape=(None, 3))


def test_concatenate_gradient_differentiates_again():
    graph = gg.Graph()
    with graph.as_default():
        a = gg.placeholder(gg.float64, (None, 2))
        b = gg.placeholder(gg.float64, (None, 2))
        y = gg.sum(gg.concatenate([a, b], 0) ** 3)
        (ga,) = gg.gradients(y, [a])
        (gaa,) = gg.gradients(gg.sum(ga), [a])  # d/da sum(3 a^2) = 6 a
    av, bv = np.arange(6.0).reshape(3, 2), np.ones((1, 2))
    np.testing.assert_allclose(gg.Session(graph).run(gaa, {a: av, b: bv}), 6 * av)


def test_tile_and_repeat_with_unknown_batch():
    check_against_eager(lambda x: gg.tile(x, (2, 3)), [(None, 2)], floats(2), expected_shape=(None, 6))
    check_against_eager(lambda x: gg.repeat(x, 2, axis=0), [(None, 2)], floats(2), expected_shape=(None, 2))


def test_matmul_vector_with_unknown_length():
    check_against_eager(lambda v, m: gg.matmul(v, m), [(None,), (None, 3)],
                        lambda n, rng: [rng.standard_normal(n), rng.standard_normal((n, 3))], diff=(0, 1),
                        expected_shape=(3,))


# ---- what cannot work, and says so -----------------------------------------------------------------
@pytest.mark.parametrize("fn, words", [
    (lambda x: gg.pad(x, 1, mode="reflect"), "only mode='constant'"),
    (lambda x: gg.roll(x, 1, 0), "unknown size"),
    (lambda x: gg.chunk(x, 2), "split with explicit split points"),
    (lambda x: gg.split(x, 2), "give the split points"),
    (lambda x: gg.diag(x), "must be known"),
])
def test_unknown_size_errors_are_actionable(fn, words):
    with gg.Graph().as_default():
        x = gg.placeholder(gg.float64, (None, 4))
        with pytest.raises(gg.ShapeError, match=words):
            fn(x)


def test_one_hot_needs_num_classes_in_a_graph():
    with gg.Graph().as_default():
        y = gg.placeholder(gg.int64, (None,))
        with pytest.raises(gg.ShapeError, match="num_classes"):
            gg.one_hot(y)
        assert gg.one_hot(y, 3).shape == (None, 3)
