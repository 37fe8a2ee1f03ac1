"""Buffer planning (graphgrad/graph/plan.py): in-place kernels and copy-free assigns never overwrite
a fetched, fed, variable, constant or aliased (view) value; peak intermediate memory estimates."""
import math

import numpy as np
import pytest

import graphgrad as gg
from graphgrad.graph.plan import memory_estimate

RNG = np.random.default_rng(0)


def _plan(sess):
    return next(iter(sess._plans.values()))


def _mats():
    return RNG.standard_normal((4, 5)).astype(np.float32), RNG.standard_normal((5, 6)).astype(np.float32)


def _check(graph, fetches, feed, expected):
    sess = gg.Session(graph, optimize=2)
    first = [np.array(r, copy=True) for r in sess.run(fetches, feed)]
    held = sess.run(fetches, feed)
    again = sess.run(fetches, feed)  # a later run must not write into arrays handed out before
    for got, keep, exp, rerun in zip(first, held, expected, again):
        np.testing.assert_allclose(got, exp, rtol=1e-5)
        np.testing.assert_allclose(keep, exp, rtol=1e-5)
        np.testing.assert_allclose(rerun, exp, rtol=1e-5)
    return sess


def test_fetched_value_used_later_is_not_overwritten():
    xv, wv = _mats()
    graph = gg.Graph()
    with graph.as_default():
        x = gg.placeholder(gg.float32, (4, 5), name="x")
        a = x @ gg.constant(wv)  # fetched and also the input of an in-place-able kernel
        y = gg.tanh(a * 2.0 + 1.0)
    a_ref = xv @ wv
    _check(graph, [a, y], {x: xv}, [a_ref, np.tanh(a_ref * 2 + 1)])


def test_in_place_happens_for_a_private_dead_value():
    xv, wv = _mats()
    graph = gg.Graph()
    with graph.as_default():
        x = gg.placeholder(gg.float32, (4, 5), name="x")
        a = gg.exp(x @ gg.constant(wv))  # fused matmul+exp, dies in the next kernel
        s = gg.sum(a, axis=0)  # a second, non-elementwise reader keeps a out of the next group
        y = gg.tanh(a * 0.5 + s)
    a_ref = np.exp(xv @ wv)
    sess = _check(graph, [y], {x: xv}, [np.tanh(a_ref * 0.5 + a_ref.sum(0))])
    assert _plan(sess).memory["in_place_steps"] >= 1


def test_reshape_view_of_a_value_is_not_clobbered():
    xv, wv = _mats()
    graph = gg.Graph()
    with graph.as_default():
        x = gg.placeholder(gg.float32, (4, 5), name="x")
        a = x @ gg.constant(wv)
        view = gg.reshape(a, (6, 4))  # may share a's memory
        t = gg.transpose(a)
        y = gg.tanh(a * 2.0 + 1.0)  # would like to write into a's buffer
        z = view * 1.0 + t.sum()  # reads the views after y ran
    a_ref = xv @ wv
    expected_z = a_ref.reshape(6, 4) * 1.0 + a_ref.T.sum()
    _check(graph, [y, z], {x: xv}, [np.tanh(a_ref * 2 + 1), expected_z])


@pytest.mark.parametrize("shape, target", [((1, 1), ()), ((1, 3), (3,)), ((3, 1), (3, 1)), ((2, 3), (2, 3)),
                                           ((2, 3), (3,)), ((2, 3, 4), (3, 1))])
def test_sum_to_returns_a_fresh_array(shape, target):
    """Plans let a kernel write in place over an array that SumTo read (SumTo counts as a pure reader),
    so its result must never be a view of its input, even where nothing is summed."""
    from graphgrad.ops.reduce import SumTo

    x = np.arange(math.prod(shape), dtype=np.float32).reshape(shape)
    y = SumTo(target).forward(np, x)
    assert y.shape == target and not np.shares_memory(x, y)


def test_identity_and_fed_values_are_not_written():
    xv = RNG.standard_normal((3, 4))
    keep = xv.copy()
    graph = gg.Graph()
    with graph.as_default():
        x = gg.placeholder(gg.float64, (3, 4), name="x")
        i = gg.identity(x) if hasattr(gg, "identity") else x + 0.0
        y = gg.exp(i) * 2.0 - 1.0
        z = gg.tanh(x) + 1.0
    _check(graph, [y, z, i], {x: xv}, [np.exp(keep) * 2 - 1, np.tanh(keep) + 1, keep])
    np.testing.assert_array_equal(xv, keep)


def test_variable_and_constant_values_are_not_written():
    v0 = RNG.standard_normal((3, 4))
    c0 = RNG.standard_normal((3, 4))
    graph = gg.Graph()
    with graph.as_default():
        v = gg.Variable(v0.copy())
        c = gg.constant(c0.copy())
        read = v.value()
        y = gg.tanh(read * 2.0 + c) - 1.0
    _check(graph, [y, c, read], {}, [np.tanh(v0 * 2 + c0) - 1, c0, v0])
    np.testing.assert_array_equal(v.numpy(), v0)


def test_assign_without_copy_keeps_earlier_reads_and_fetches():
    v0 = RNG.standard_normal((3, 4)).astype(np.float32)
    graph = gg.Graph()
    with graph.as_default():
        v = gg.Variable(v0.copy())
        read = v.value()
        new = v.assign(gg.tanh(read * 0.5) + 1.0)
    sess = gg.Session(graph)
    old, out = sess.run([read, new])
    np.testing.assert_array_equal(old, v0)  # the read taken before the assign keeps the old value
    np.testing.assert_allclose(out, np.tanh(v0 * 0.5) + 1, rtol=1e-6)
    np.testing.assert_allclose(v.numpy(), out, rtol=1e-6)
    out_copy = out.copy()
    sess.run(new)  # a second run writes a new array: the first result is not changed
    np.testing.assert_array_equal(out, out_copy)
    np.testing.assert_allclose(v.numpy(), np.tanh(out_copy * 0.5) + 1, rtol=1e-6)


def _mlp_step(sizes=(784, 512, 256, 10), batch=128):
    rng = np.random.default_rng(1)
    graph = gg.Graph()
    with graph.as_default():
        params = []
        for a, b in zip(sizes[:-1], sizes[1:]):
            params += [gg.Variable(rng.uniform(-0.05, 0.05, (a, b)).astype(np.float32)),
                       gg.Variable(np.zeros(b, np.float32))]
        x = gg.placeholder(gg.float32, (batch, sizes[0]), name="x")
        y = gg.placeholder(gg.int64, (batch,), name="y")
        h = x
        for i in range(0, len(params), 2):
            h = h @ params[i] + params[i + 1]
            if i + 2 < len(params):
                h = gg.relu(h)
        loss = gg.cross_entropy(h, y)
        grads = gg.gradients(loss, params)
        train = gg.group(*[p.assign(p.value() - g * 0.05) for p, g in zip(params, grads)])
    feed = {x: rng.standard_normal((batch, sizes[0])).astype(np.float32), y: rng.integers(0, sizes[-1], batch)}
    return graph, [loss, train], feed


def test_mlp_training_step_peak_memory_reduced():
    graph, fetches, feed = _mlp_step()
    sess = gg.Session(graph, optimize=2)
    sess.run(fetches, feed)
    memory = _plan(sess).memory
    assert memory["peak_after"] <= 0.7 * memory["peak_before"], memory
    plan = _plan(sess)
    assert memory_estimate(list(plan.steps), plan.fetch_slots, liveness=False) == memory["peak_before"]
    assert memory_estimate(list(plan.steps), plan.fetch_slots) == memory["peak_liveness"] >= memory["peak_after"]
    # and the optimized step trains exactly like the unoptimized one
    g0, f0, feed0 = _mlp_step()
    s0 = gg.Session(g0, optimize=0)
    losses0 = [float(s0.run(f0, feed0)[0]) for _ in range(3)]
    losses2 = [float(sess.run(fetches, feed)[0]) for _ in range(2)]
    np.testing.assert_allclose(losses2, losses0[1:], rtol=1e-5)


def test_spiral_step_peak_memory_below_unoptimized():
    graph, fetches, feed = _mlp_step((2, 100, 3), 300)
    s2, s0 = gg.Session(graph, optimize=2), gg.Session(graph, optimize=0)
    s2.run(fetches, feed)
    s0.run(fetches, feed)
    assert _plan(s2).memory["peak_after"] <= 0.7 * _plan(s0).memory["peak_before"]
    # with planning against the same optimized program without it (the memory-aware order lets the
    # relu backward kernel overwrite the activation it reads last)
    memory = _plan(s2).memory
    assert memory["peak_after"] <= 0.7 * memory["peak_before"], memory


def test_schedule_keeps_dependencies_and_puts_uncontrolled_reads_first():
    from graphgrad.graph.plan import schedule

    graph, fetches, feed = _mlp_step((3, 8, 2), 5)
    sess = gg.Session(graph, optimize=2)
    sess.run(fetches, feed)
    program = _plan(sess).program
    order = program.nodes()
    ordered = schedule(order, program.outputs)
    assert sorted(map(id, ordered)) == sorted(map(id, order))
    position = {n: i for i, n in enumerate(ordered)}
    for n in ordered:
        for x in n.inputs:
            if hasattr(x, "_node") and x._node in position:
                assert position[x._node] < position[n]
        for c in n.control_inputs:
            assert position[c] < position[n]
    kinds = [type(n.op).__name__ for n in ordered]
    reads = [i for i, k in enumerate(kinds) if k == "ReadVariable"]
    assert reads == list(range(len(reads)))


def test_reads_see_the_value_before_the_runs_assignments_at_every_level():
    for level in (0, 1, 2):
        graph = gg.Graph()
        with graph.as_default():
            v = gg.Variable(np.float32(1.0))
            write = v.assign(5.0)
            doubled = v.value() * 2  # fetched after the assign, still reads the old value
            with gg.control_dependencies([write]):
                after = v.value() * 2  # ordered after the assign: the new value
        sess = gg.Session(graph, optimize=level)
        got = sess.run([write, doubled, after])
        assert [float(g) for g in got] == [5.0, 2.0, 10.0], (level, got)


def _momentum_step(level):
    """A momentum-SGD update of two variables as a graph: ``v = 0.9 v + g; p = p - lr v``."""
    rng = np.random.default_rng(3)
    graph = gg.Graph()
    with graph.as_default():
        p = gg.Variable(rng.standard_normal((6, 5)).astype(np.float32))
        v = gg.Variable(np.zeros((6, 5), np.float32))
        g = gg.placeholder(gg.float32, (6, 5), name="g")
        new_v = v.value() * 0.9 + g
        train = gg.group(v.assign(new_v), p.assign(p.value() - new_v * 0.1))
    return gg.Session(graph, optimize=level), p, v, g, train


def test_fused_update_writes_into_the_variables_arrays():
    sess, p, v, g, train = _momentum_step(2)
    ref, rp, rv, rg, rtrain = _momentum_step(0)
    grads = np.random.default_rng(4).standard_normal((3, 6, 5)).astype(np.float32)
    sess.run(train, {g: grads[0]})
    p_array, v_array = p.data, v.data
    for k in (1, 2):
        sess.run(train, {g: grads[k]})
        assert p.data is p_array and v.data is v_array  # updated in place: no new arrays per run
    for k in range(3):
        ref.run(rtrain, {rg: grads[k]})
    np.testing.assert_allclose(p.numpy(), rp.numpy(), rtol=1e-6)
    np.testing.assert_allclose(v.numpy(), rv.numpy(), rtol=1e-6)
    assert _plan(sess).steps[-1][3].op.name in ("Assign", "NoOp")


def test_fused_update_not_in_place_when_the_old_value_is_read_later_or_fetched():
    rng = np.random.default_rng(5)
    graph = gg.Graph()
    with graph.as_default():
        w = gg.Variable(rng.standard_normal((4, 4)).astype(np.float32))
        g = gg.placeholder(gg.float32, (4, 4), name="g")
        old = w.value()
        update = w.assign(old * 0.5 - g * 2.0)
        with gg.control_dependencies([update]):
            after = old @ old  # the value read before the update, used after it
    sess = gg.Session(graph, optimize=2)
    w0, g0 = w.numpy().copy(), rng.standard_normal((4, 4)).astype(np.float32)
    got_old, got_after, _ = sess.run([old, after, update], {g: g0})
    np.testing.assert_array_equal(got_old, w0)
    np.testing.assert_allclose(got_after, w0 @ w0, rtol=1e-5)
    np.testing.assert_allclose(w.numpy(), w0 * 0.5 - g0 * 2, rtol=1e-6)
    held = got_old.copy()
    sess.run(update, {g: g0})  # an in-place update later must not change what was handed out
    np.testing.assert_array_equal(got_old, held)


def test_compiled_training_step_updates_parameters_in_place():
    model = gg.nn.Sequential(gg.nn.Linear(6, 8), gg.nn.ReLU(), gg.nn.Linear(8, 3))
    opt = gg.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    x, y = gg.randn(5, 6), gg.tensor([0, 1, 2, 1, 0])

    @gg.function
    def step(x, y):
        opt.zero_grad()
        loss = gg.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss

    step(x, y)
    step(x, y)
    arrays = [p.data for p in model.parameters()]
    step(x, y)
    assert all(p.data is a for p, a in zip(model.parameters(), arrays))
