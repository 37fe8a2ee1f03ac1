"""Static graphs: building, naming, Session.run semantics, feeds, pruning, gradients."""
from __future__ import annotations

import collections

import numpy as np
import pytest

import graphgrad as gg


def test_classic_constant_example(g):
    a = gg.constant(15)
    b = gg.constant(5)
    prod = a * b
    total = a + b
    res = prod / total
    assert gg.Session().run(res) == 3.75


def test_placeholders_with_two_feeds(g):
    x = gg.placeholder(gg.float32)
    y = gg.placeholder(gg.float32)
    z = gg.add(x, y)
    with gg.Session() as sess:
        assert sess.run(z, feed_dict={x: 1, y: 2}) == 3
        np.testing.assert_allclose(sess.run(z, feed_dict={x: [1, 2], y: [3, 4]}), [4, 6])


def test_names_scopes_and_lookup(g):
    x = gg.placeholder(gg.float32, (None, 2), name="x")
    with gg.name_scope("layer1"):
        w = gg.Variable(gg.ones((2, 3)), name="w")
        h = x @ w
        h2 = x @ w
    with gg.name_scope("layer1"):
        h3 = h + 1
    names = [n.name for n in g.get_operations()]
    assert "x" in names and "w" in names
    assert h.name == "layer1/MatMul:0" and h2.name == "layer1/MatMul_1:0" and h3.name == "layer1/Add:0"
    assert g.get_tensor_by_name("layer1/MatMul_1:0") is h2
    assert g.get_tensor_by_name("layer1/MatMul_1") is h2
    with pytest.raises(gg.GraphError, match="no tensor named"):
        g.get_tensor_by_name("nothing:0")


def test_static_shape_inference_and_errors_name_op_shapes_and_site(g):
    x = gg.placeholder(gg.float32, (None, 3))
    y = gg.relu(x @ gg.Variable(gg.zeros((3, 5))))
    assert y.shape == (None, 5) and y.dtype == gg.float32
    with pytest.raises(gg.ShapeError) as info:
        x @ gg.placeholder(gg.float32, (4, 2))
    message = str(info.value)
    assert "matmul" in message and "(None, 3)" in message and "(4, 2)" in message
    assert "test_graph_core.py" in message  # the user's file:line


def test_prune_unfed_placeholder_not_needed(g):
    x = gg.placeholder(gg.float32, (), name="x")
    c = gg.constant(2.0) * 3
    _ = x + c
    assert gg.Session().run(c) == 6.0
    assert gg.Session().run(c, {x: 1.0}) == 6.0  # an unneeded feed is ignored


class Counting(gg.Op):
    calls = 0

    def forward(self, xp, a):
        Counting.calls += 1
        return a * 2

    def backward(self, inputs, out, g):
        return (g * 2,)


def test_shared_node_computed_once_per_run(g):
    x = gg.placeholder(gg.float32, (3,))
    shared = Counting().apply(x)
    a, b = shared + 1, shared * 3
    Counting.calls = 0
    sess = gg.Session()
    out = sess.run([a, b, a + b], {x: [1, 2, 3]})
    assert Counting.calls == 1
    np.testing.assert_allclose(out[2], (np.array([1, 2, 3]) * 2 + 1) + np.array([1, 2, 3]) * 6)
    sess.run(b, {x: [0, 0, 0]})
    assert Counting.calls == 2


def test_feed_intermediate_tensor_skips_its_producers(g):
    x = gg.placeholder(gg.float32, (2,))
    h = Counting().apply(x)
    y = h + 1
    Counting.calls = 0
    np.testing.assert_allclose(gg.Session().run(y, {h: [10, 20]}), [11, 21])
    assert Counting.calls == 0


def test_fetch_structures(g):
    Point = collections.namedtuple("Point", "a b")
    a = gg.constant(1.0)
    b = gg.constant([2.0, 3.0])
    out = gg.Session().run({"a": a, "pair": (a, [b]), "p": Point(a, b)})
    assert out["a"] == 1.0 and isinstance(out["pair"], tuple) and isinstance(out["pair"][1], list)
    assert isinstance(out["p"], Point) and out["p"].b.tolist() == [2.0, 3.0]
    assert isinstance(gg.Session().run(b), np.ndarray)


def test_feed_errors_name_the_placeholder(g):
    x = gg.placeholder(gg.float32, (None, 2), name="images")
    n = gg.placeholder(gg.int64, (None,), name="labels")
    y = x * 2
    z = n + 1
    sess = gg.Session()
    with pytest.raises(gg.FeedError, match=r"feed a value for placeholder 'images' \(\(None, 2\), float32\)"):
        sess.run(y)
    with pytest.raises(gg.FeedError, match=r"shape \(3,\) for placeholder 'images'.*\(None, 2\).*wrong rank"):
        sess.run(y, {x: [1.0, 2.0, 3.0]})
    with pytest.raises(gg.FeedError, match=r"shape \(2, 3\) for placeholder 'images'"):
        sess.run(y, {x: np.ones((2, 3))})
    with pytest.raises(gg.FeedError, match=r"dtype float64 for placeholder 'labels' of dtype int64"):
        sess.run(z, {n: [1.5, 2.5]})
    with pytest.raises(gg.FeedError, match="images"):
        sess.run(y, {x: "not a number"})
    other = gg.Graph()
    with other.as_default():
        stranger = gg.placeholder(gg.float32, ())
    with pytest.raises(gg.GraphError, match="different graph"):
        sess.run(y, {stranger: 1.0, x: np.ones((1, 2))})
    np.testing.assert_allclose(sess.run(z, {n: np.array([1, 2], dtype=np.int32)}), [2, 3])  # safe cast


def test_placeholder_with_default(g):
    d = gg.placeholder_with_default(np.array([1.0, 2.0], dtype=np.float32), shape=(None,))
    y = d * 10
    sess = gg.Session()
    np.testing.assert_allclose(sess.run(y), [10, 20])
    np.testing.assert_allclose(sess.run(y, {d: [5.0]}), [50])


def test_variables_assign_initializer_and_collections(g):
    v = gg.Variable([1.0, 2.0], name="v")
    frozen = gg.Variable(0, trainable=False, name="count")
    ids = lambda vs: [id(x) for x in vs]  # noqa: E731  (== on tensors is elementwise)
    assert id(v) in ids(gg.global_variables()) and id(frozen) in ids(gg.global_variables())
    assert id(v) in ids(gg.trainable_variables()) and id(frozen) not in ids(gg.trainable_variables())
    sess = gg.Session()
    up = v.assign_add([1.0, 1.0])
    np.testing.assert_allclose(sess.run(up), [2, 3])
    np.testing.assert_allclose(v.numpy(), [2, 3])
    sess.run(frozen.assign_add(5))
    assert frozen.numpy() == 5
    sess.run(gg.global_variables_initializer())
    np.testing.assert_allclose(v.numpy(), [1, 2])
    assert frozen.numpy() == 0
    v.load([7.0, 8.0])
    np.testing.assert_allclose(sess.run(v), [7, 8])
    with pytest.raises(gg.ShapeError, match="'v'"):
        v.load([1.0, 2.0, 3.0])
    with pytest.raises(gg.ShapeError, match="variable 'v'"):
        v.assign([1.0, 2.0, 3.0])


def test_constants_are_immutable(g):
    c = gg.constant([1.0, 2.0])
    with pytest.raises(gg.GraphError, match="immutable"):
        c[0] = 5.0
    with pytest.raises(gg.GraphError, match="immutable"):
        c.assign([3.0, 4.0])


def test_control_dependencies_and_group(g):
    v = gg.Variable(0.0, name="v")
    w = gg.Variable(0.0, name="w")
    inc_v = v.assign_add(1.0)
    with gg.control_dependencies([inc_v]):
        read_after = gg.identity(v.value())
    train = gg.group(inc_v, w.assign_add(2.0))
    sess = gg.Session()
    assert sess.run(read_after) == 1.0  # the control dependency ran first
    assert sess.run(train) is None
    assert v.numpy() == 2.0 and w.numpy() == 2.0
    assert sess.run(gg.no_op()) is None


def test_eager_ops_on_variables_inside_graph_context_build_nodes(g):
    v = gg.Variable([3.0, 4.0], name="v")
    norm = gg.sqrt((v * v).sum())  # only Variables: still a node inside as_default()
    assert norm.is_symbolic
    sess = gg.Session()
    assert sess.run(norm) == 5.0
    sess.run(v.assign([6.0, 8.0]))
    assert sess.run(norm) == 10.0


def test_gradients_match_eager_and_second_derivatives():
    x0 = np.array([0.3, -0.7, 1.1])
    g = gg.Graph()
    with g.as_default():
        x = gg.placeholder(gg.float64, (3,))
        y = (gg.tanh(x) * x).sum()
        (dx,) = gg.gradients(y, [x])
        (d2,) = gg.gradients(dx.sum(), [x])
        (h,) = gg.hessians(y, [x])
    sess = gg.Session(g)
    got1, got2, hess = sess.run([dx, d2, h], {x: x0})
    xe = gg.tensor(x0, requires_grad=True)
    ye = (gg.tanh(xe) * xe).sum()
    (e1,) = gg.grad(ye, xe, create_graph=True)
    (e2,) = gg.grad(e1.sum(), xe)
    np.testing.assert_allclose(got1, e1.numpy(), rtol=1e-12)
    np.testing.assert_allclose(got2, e2.numpy(), rtol=1e-12)
    t = np.tanh(x0)
    second = 2 * (1 - t ** 2) - 2 * x0 * t * (1 - t ** 2)
    np.testing.assert_allclose(hess, np.diag(second), rtol=1e-12, atol=1e-14)


def test_gradients_wrt_variables_and_unconnected_is_none(g):
    w = gg.Variable(np.array([[1.0, 2.0], [3.0, 4.0]]), name="w")
    x = gg.placeholder(gg.float64, (None, 2))
    other = gg.placeholder(gg.float64, ())
    loss = gg.mean((x @ w) ** 2)
    gw, go = gg.gradients(loss, [w, other])
    assert go is None and gw.shape == (2, 2)
    xv = np.array([[1.0, 0.5], [-1.0, 2.0], [0.0, 1.0]])
    got = gg.Session().run(gw, {x: xv})
    np.testing.assert_allclose(got, 2 * xv.T @ (xv @ w.numpy()) / 6, rtol=1e-12)


def test_deep_graph_of_100k_nodes():
    g = gg.Graph()
    with g.as_default():
        x = gg.placeholder(gg.float32, (2,))
        y = x
        for _ in range(100_000):
            y = y + 1.0
        (gx,) = gg.gradients(y.sum(), [x])
    out, grad = gg.Session(g).run([y, gx], {x: [0.0, 1.0]})
    np.testing.assert_allclose(out, [100_000, 100_001])
    np.testing.assert_allclose(grad, [1, 1])


def test_runtime_error_names_node_and_site(g):
    x = gg.placeholder(gg.float32, (None,))
    y = gg.placeholder(gg.float32, (None,))
    z = x + y
    with pytest.raises(gg.GraphError, match=r"while running node 'Add'.*test_graph_core.py"):
        gg.Session().run(z, {x: [1.0, 2.0], y: [1.0, 2.0, 3.0]})


def test_closed_session_and_default_graph_reset():
    sess = gg.Session(gg.Graph())
    sess.close()
    with pytest.raises(gg.GraphError, match="closed"):
        sess.run([])
    old = gg.get_default_graph()
    new = gg.reset_default_graph()
    assert new is gg.get_default_graph() and new is not old
    with gg.Graph().as_default():
        with pytest.raises(gg.GraphError, match="reset_default_graph"):
            gg.reset_default_graph()


def test_plan_is_cached_per_fetches_and_feeds(g):
    x = gg.placeholder(gg.float32, ())
    y = x * 2
    sess = gg.Session()
    sess.run(y, {x: 1.0})
    sess.run(y, {x: 2.0})
    assert len(sess._plans) == 1
    sess.run(y, {y: 5.0})
    assert len(sess._plans) == 2


def test_same_variables_eager_and_graph_give_same_loss_and_gradients():
    rng = np.random.default_rng(0)
    w = gg.Variable(rng.standard_normal((2, 4)), name="w")
    b = gg.Variable(np.zeros(4), name="b")
    xs, ys = rng.standard_normal((8, 2)), rng.integers(0, 4, 8)

    def model(x):
        return gg.cross_entropy(gg.tanh(x @ w + b), ys_t)

    ys_t = gg.tensor(ys)
    g = gg.Graph()
    with g.as_default():
        x = gg.placeholder(gg.float64, (None, 2))
        loss = model(x)
        gw, gb = gg.gradients(loss, [w, b])
    sess = gg.Session(g)
    for step in range(5):
        graph_loss, graph_gw, graph_gb = sess.run([loss, gw, gb], {x: xs})
        w.grad = b.grad = None
        eager_loss = model(gg.tensor(xs))
        eager_loss.backward()
        np.testing.assert_allclose(graph_loss, eager_loss.item(), rtol=1e-12)
        np.testing.assert_allclose(graph_gw, w.grad.numpy(), rtol=1e-10)
        np.testing.assert_allclose(graph_gb, b.grad.numpy(), rtol=1e-10, atol=1e-14)
        with gg.no_grad():  # an eager update; the graph reads the new values on the next run
            w -= w.grad * 0.5
            b -= b.grad * 0.5


def test_make_callable_runs_like_run():
    graph = gg.Graph()
    with graph.as_default():
        x = gg.placeholder(gg.float32, (None, 3), name="x")
        v = gg.Variable(np.ones(3, np.float32))
        y = (x * v).sum(axis=1)
        step = v.assign(v.value() * 2.0)
    sess = gg.Session(graph)
    run = sess.make_callable([y, step], [x])
    xs = np.arange(6, dtype=np.float32).reshape(2, 3)
    out = run(xs)
    assert isinstance(out, list) and out[1] is not None
    np.testing.assert_allclose(out[0], xs.sum(axis=1))
    np.testing.assert_allclose(sess.run(y, {x: xs}), xs.sum(axis=1) * 2)  # the assign ran
    as_dict = sess.make_callable({"y": y}, [x])
    np.testing.assert_allclose(as_dict([[1, 1, 1]])["y"], [6.0])  # a list is converted like run() does
    with pytest.raises(gg.FeedError):
        run(np.ones((2, 4), np.float32))
    with pytest.raises(TypeError):
        run()


def test_make_callable_direct_and_checked_calls_agree():
    """make_callable, gg.function's way of running a plan: exact NumPy arrays run the plan directly;
    anything else (another dtype, a list, a wrong shape, anomaly detection, a closed session) takes the
    checked way."""
    graph = gg.Graph()
    with graph.as_default():
        x = gg.placeholder(gg.float32, (2, 3), name="x")
        v = gg.Variable(np.ones(3, np.float32))
        y = (x * v).sum(axis=1)
        read = v.value()
        step = v.assign(v.value() * 2.0)
        bad = gg.log(x - 10.0)
    sess = gg.Session(graph)
    run = sess.make_callable([y, read, step], [x])
    xs = np.arange(6, dtype=np.float32).reshape(2, 3)
    first = run(xs)  # (plans on first use, checked)
    second = run(xs)  # direct
    np.testing.assert_allclose(first[0], xs.sum(axis=1))
    np.testing.assert_allclose(second[0], xs.sum(axis=1) * 2)
    # a fetched variable value is a copy: the next run's in-place update does not change it
    kept = second[1].copy()
    run(xs)
    np.testing.assert_array_equal(second[1], kept)
    np.testing.assert_allclose(run(xs.astype(np.float64))[0], xs.sum(axis=1) * 8)  # converted
    np.testing.assert_allclose(run(xs.tolist())[0], xs.sum(axis=1) * 16)
    with pytest.raises(gg.FeedError, match="'x'"):
        run(np.ones((2, 4), np.float32))
    nan_run = sess.make_callable([bad], [x])
    assert np.isnan(nan_run(xs)[0]).all() and np.isnan(nan_run(xs)[0]).all()
    with gg.detect_anomaly():
        with pytest.raises(gg.GraphgradError, match="Log|log"):
            nan_run(xs)
    sess.close()
    with pytest.raises(gg.GraphError, match="closed"):
        run(xs)
