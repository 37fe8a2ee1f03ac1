"""Session plans keep what they compute from graph Variables alone (session._invariant_split) and
recompute it exactly when a variable may have changed."""
from __future__ import annotations

import numpy as np
import pytest

import graphgrad as gg


def _folded_model():
    """y = x @ f(w, s): f is a chain of steps on variables alone (like a BatchNormalization folded
    into a convolution's weights), then a product with the fed x."""
    w = gg.Variable(np.arange(6, dtype=np.float32).reshape(2, 3), name="w")
    s = gg.Variable(np.ones(3, np.float32), name="s")
    x = gg.placeholder(gg.float32, (None, 2), name="x")
    folded = gg.transpose(gg.transpose((w * gg.sqrt(s + 1.0)) / 2.0 - 1.0) * 3.0)
    return w, s, x, x @ folded


def _expected(w, s, x):
    return x @ (((w * np.sqrt(s + 1.0)) / 2.0 - 1.0) * 3.0)


def _plan(sess):
    (plan,) = sess._plans.values()
    return plan


XV = np.array([[1.0, 2.0], [-1.0, 0.5]], np.float32)


def test_the_variable_part_runs_once_while_nothing_changes(g):
    w, s, x, y = _folded_model()
    with gg.Session() as sess:
        first = sess.run(y, {x: XV})
        plan = _plan(sess)
        assert plan.invariant is not None and len(plan.invariant.prefix.steps) >= 4
        assert all(type(step[3].op).__name__ != "Sqrt" for step in plan.steps)  # (in the prefix only)
        kept = plan.invariant.kept
        for _ in range(3):
            np.testing.assert_array_equal(sess.run(y, {x: XV}), first)
        assert plan.invariant.kept is kept  # nothing recomputed
    np.testing.assert_allclose(first, _expected(w.numpy(), s.numpy(), XV), rtol=1e-6)
    with gg.Session(optimize=1) as plain:  # (no kept values at this level)
        np.testing.assert_allclose(plain.run(y, {x: XV}), first, rtol=1e-6)
        assert _plan(plain).invariant is None


@pytest.mark.parametrize("change", ["load", "assign", "other session", "rebind", "in place", "train"])
def test_every_way_of_changing_a_variable_is_seen(change):
    graph = gg.Graph()
    with graph.as_default():
        w, s, x, y = _folded_model()
        assign = w.assign(np.full((2, 3), 0.5, np.float32))
        train = gg.train.GradientDescentOptimizer(0.01).minimize(gg.sum(y * y))
    new_w = np.full((2, 3), 0.5, np.float32)
    with gg.Session(graph) as sess:
        sess.run(y, {x: XV})
        if change == "load":
            w.load(new_w)
        elif change == "assign":
            sess.run(assign)
        elif change == "other session":
            with gg.Session(graph) as other:
                other.run(assign)
        elif change == "rebind":
            w.data = new_w.copy()
        elif change == "in place":  # (eager, outside the graph's block)
            with gg.no_grad():
                w.mul_(0.0).add_(0.5)
        else:
            sess.run(train, {x: XV})
            new_w = w.numpy().copy()
        np.testing.assert_allclose(sess.run(y, {x: XV}), _expected(new_w, s.numpy(), XV), rtol=1e-6)


def test_a_plan_that_assigns_is_left_whole(g):
    w, s, x, y = _folded_model()
    step = w.assign(w * 1.5)
    with gg.Session() as sess:
        sess.run([y, step], {x: XV})
        assert _plan(sess).invariant is None


def test_fetched_kept_values_are_copies(g):
    w, s, x, y = _folded_model()
    folded = gg.transpose(gg.transpose((w * gg.sqrt(s + 1.0)) / 2.0 - 1.0) * 3.0)
    with gg.Session() as sess:
        first, _ = sess.run([folded, y], {x: XV})
        assert _plan(sess).invariant is not None
        first[...] = 100.0
        again, out = sess.run([folded, y], {x: XV})
        np.testing.assert_allclose(again, _expected(w.numpy(), s.numpy(), np.eye(2, dtype=np.float32)), rtol=1e-6)
        np.testing.assert_allclose(out, _expected(w.numpy(), s.numpy(), XV), rtol=1e-6)


def test_make_callable_sees_changes_too(g):
    w, s, x, y = _folded_model()
    with gg.Session() as sess:
        call = sess.make_callable(y, [x])
        call(XV), call(XV)  # (the second call takes the direct path)
        s.load(np.full(3, 3.0, np.float32))
        np.testing.assert_allclose(call(XV), _expected(w.numpy(), s.numpy(), XV), rtol=1e-6)


def test_eager_parameters_are_never_kept(g):
    """A module's parameters are written in place through their NumPy arrays by PyTorch-style code
    (``p.data[...] = v``), which no version sees: what depends on them is computed at every run."""
    p = gg.nn.Parameter(np.arange(6, dtype=np.float32).reshape(2, 3))
    x = gg.placeholder(gg.float32, (None, 2))
    y = x @ gg.transpose(gg.transpose(gg.sqrt(p + 1.0) * 2.0 - 1.0) * 3.0)
    with gg.Session() as sess:
        sess.run(y, {x: XV})
        assert _plan(sess).invariant is None
        p.data[...] = 1.0
        np.testing.assert_allclose(sess.run(y, {x: XV}), XV @ ((np.sqrt(np.full((2, 3), 2.0)) * 2 - 1) * 3), rtol=1e-6)


def test_profile_and_anomaly_modes_run_the_prefix_their_way(g):
    w = gg.Variable(np.array([[1.0, -1.0]], np.float32), name="w")
    x = gg.placeholder(gg.float32, (None, 1))
    bad = x @ (gg.sqrt(w * 2.0 + 0.0) * 1.0 - 0.0 + 1.0)  # sqrt(-2): NaN, made in the prefix
    with gg.Session() as sess:
        with gg.detect_anomaly(), pytest.raises(Exception, match="Sqrt"):
            sess.run(bad, {x: np.ones((1, 1), np.float32)})
    w.load(np.array([[1.0, 4.0]], np.float32))
    with gg.Session() as sess, gg.profile() as prof:
        out = sess.run(bad, {x: np.ones((1, 1), np.float32)})
    np.testing.assert_allclose(out, [[np.sqrt(2.0) + 1.0, np.sqrt(8.0) + 1.0]], rtol=1e-6)
    assert "Sqrt" in prof.table() or "FusedElementwise" in prof.table()


def test_in_place_methods_while_a_graph_is_built_never_write_nan(g):
    """(They used to fill the array with NaN: the op made a graph tensor, whose value is None.)"""
    t = gg.tensor(np.ones(3, np.float32))
    w = gg.Variable(np.ones(3, np.float32), name="w")
    with gg.no_grad():
        for method in (lambda: t.mul_(2.0), lambda: t.clamp_(0.0, 0.5), lambda: t.copy_(w * 2.0)):
            with pytest.raises(gg.GraphError, match="while a graph is being built"):
                method()
        w.mul_(3.0)  # a Variable: an assign node, as `w *= 3` makes
    np.testing.assert_array_equal(t.numpy(), [1.0, 1.0, 1.0])
    np.testing.assert_array_equal(w.numpy(), [1.0, 1.0, 1.0])
