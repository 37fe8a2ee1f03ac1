"""TF1's control flow decided when the graph runs, as real TF1 programs use it (hand-written RNNs,
decoders, ``tf.scan`` accumulators): ``tf.while_loop`` with fed trip counts and gradients,
``tf.TensorArray``, ``tf.cond`` that runs only the branch taken, ``tf.scan`` / ``map_fn`` /
``foldl`` / ``foldr``. The expected numbers are TensorFlow's (``tf.compat.v1`` in graph mode), then
the programs of tests/compat/tf_realworld2/ run end to end."""
from __future__ import annotations

import collections
import os
import subprocess
import sys

import numpy as np
import pytest

import graphgrad.compat.tf as tf

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
PROGRAMS_DIR = os.path.join(HERE, "tf_realworld2")


@pytest.fixture(autouse=True)
def _fresh_graph():
    tf.reset_default_graph()
    yield


def _close(got, expected, tol=1e-5):
    np.testing.assert_allclose(np.asarray(got, np.float64), np.asarray(expected, np.float64), rtol=tol, atol=tol)


# ---- while_loop ---------------------------------------------------------------------------------------------
def test_while_loop_trip_count_fed_and_gradients_reach_weights_and_inputs():
    n = tf.placeholder(tf.int32, [])
    x = tf.placeholder(tf.float32, [None, 3])
    W = tf.Variable(np.ones((3, 3), np.float32) * 0.1)
    i, h = tf.while_loop(lambda i, h: i < n, lambda i, h: [i + 1, tf.tanh(tf.matmul(h, W) + x)],
                         [tf.constant(0), x])
    assert h.get_shape().as_list() == [None, 3] and i.dtype == tf.int32
    gW, gx = tf.gradients(tf.reduce_sum(h * h), [W, x])
    xv = np.arange(6, dtype=np.float32).reshape(2, 3) / 10
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        iv, hv, gWv, gxv = sess.run([i, h, gW, gx], {n: 3, x: xv})
        assert iv == 3
        _close(hv, [[0.0410036, 0.14009905, 0.2364652], [0.42003652, 0.49882174, 0.5701442]])
        _close(gWv, [[0.378437, 0.4023623, 0.40948218], [0.4706089, 0.5163897, 0.5400369],
                     [0.5558669, 0.6226781, 0.66237205]])
        _close(gxv, [[0.19240679, 0.38346204, 0.5515627], [0.92839116, 0.9664697, 0.9660758]])
        assert sess.run(i, {n: 0, x: xv}) == 0  # no iteration: the initial values, gradient the identity
        _close(sess.run(gx, {n: 0, x: xv}), 2 * xv)


def test_while_loop_returns_what_tf1_returns():
    n = tf.placeholder(tf.int32, [])
    single = tf.while_loop(lambda i: i < n, lambda i: i + 1, [tf.constant(0)])
    assert isinstance(single, tf.Tensor)  # one loop variable: the tensor itself
    pair = tf.while_loop(lambda i, x: i < n, lambda i, x: (i + 1, x * 2.0), (0, 1.5))
    assert isinstance(pair, tuple)
    with tf.Session() as sess:
        assert sess.run(single, {n: 4}) == 4
        assert sess.run(list(pair), {n: 4}) == [4, 24.0]
    with pytest.raises(ValueError, match="enters the loop with shape \\(\\), but has shape \\(1,\\) after one"):
        tf.while_loop(lambda i: i < 3, lambda i: tf.reshape(i, [1]), [tf.constant(0)])


def test_while_loop_nested_structures_shape_invariants_and_maximum_iterations():
    n = tf.placeholder(tf.int32, [])
    P = collections.namedtuple("P", "a b")

    def body(i, st):
        return i + 1, P(a=tf.concat([st.a, st.a[-1:] * 2.0], 0), b={"x": st.b["x"] + 1.0, "y": st.b["y"] * 3})

    start = (tf.constant(0), P(a=tf.constant([1.0]), b={"x": tf.constant(0.5), "y": tf.constant(2)}))
    shapes = (tf.TensorShape([]), P(a=tf.TensorShape([None]), b={"x": tf.TensorShape([]), "y": tf.TensorShape([])}))
    i, st = tf.while_loop(lambda i, st: i < n, body, start, shape_invariants=shapes, maximum_iterations=3)
    assert isinstance(st, P) and st.a.get_shape().as_list() == [None]
    with tf.Session() as sess:
        iv, a, x, y = sess.run([i, st.a, st.b["x"], st.b["y"]], {n: 5})
        assert iv == 3 and x == 3.5 and y == 54
        _close(a, [1, 2, 4, 8])
        assert sess.run(st.a, {n: 2}).tolist() == [1, 2, 4]


def test_hand_written_rnn_with_tensor_arrays_trains_through_the_loop():
    x = tf.placeholder(tf.float32, [None, None, 2])  # time, batch, features: both fed
    y = tf.placeholder(tf.float32, [None, 1])
    Wx = tf.Variable(np.linspace(-0.5, 0.5, 8).reshape(2, 4).astype(np.float32))
    Wh = tf.Variable(np.linspace(-0.3, 0.4, 16).reshape(4, 4).astype(np.float32))
    Wo = tf.Variable(np.linspace(-1, 1, 4).reshape(4, 1).astype(np.float32))
    T = tf.shape(x)[0]
    xs = tf.TensorArray(tf.float32, size=T).unstack(x)
    hs = tf.TensorArray(tf.float32, size=T)

    def step(t, h, hs):
        h = tf.tanh(tf.matmul(xs.read(t), Wx) + tf.matmul(h, Wh))
        return t + 1, h, hs.write(t, h)

    _, hT, hs = tf.while_loop(lambda t, h, hs: t < T, step, [tf.constant(0), tf.zeros([tf.shape(x)[1], 4]), hs])
    every = hs.stack()
    assert every.get_shape().as_list() == [None, None, 4]
    loss = tf.reduce_mean(tf.square(tf.matmul(hT, Wo) + 0.1 * tf.reduce_mean(every) - y))
    train = tf.train.GradientDescentOptimizer(0.5).minimize(loss)
    rng = np.random.RandomState(0)
    xv, yv = rng.randn(5, 3, 2).astype(np.float32), rng.randn(3, 1).astype(np.float32)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        losses = [sess.run([loss, train], {x: xv[:k], y: yv})[0] for k in (5, 4, 5, 3, 5)]
        _close(losses, [1.33651, 0.18168, 0.06883, 0.65295, 0.11843], 1e-4)
        _close(sess.run(Wh), [[-0.14424, -0.13932, -0.07578, 0.02042], [-0.01884, 0.01559, 0.09177, 0.17811],
                              [-0.04202, 0.12235, 0.25018, 0.35394], [0.05013, 0.26511, 0.41552, 0.52606]], 1e-4)
        assert sess.run(every, {x: xv}).shape == (5, 3, 4)


def test_nested_while_loops_differentiate():
    m = tf.placeholder(tf.int32, [])
    z = tf.Variable(0.9)

    def outer(i, acc):
        _, b = tf.while_loop(lambda j, b: j < i, lambda j, b: (j + 1, b * z + tf.cast(j, tf.float32)), [0, acc])
        return i + 1, b

    _, res = tf.while_loop(lambda i, acc: i < m, outer, [0, tf.constant(1.0)])
    (gz,) = tf.gradients(res, z)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        _close(sess.run([res, gz], {m: 4}), [4.1604404, 6.972939])


# ---- cond ---------------------------------------------------------------------------------------------------
def test_cond_runs_only_the_branch_taken():
    p = tf.placeholder(tf.bool, [])
    v, w = tf.Variable(1.0), tf.Variable(10.0)
    r = tf.cond(p, lambda: tf.assign_add(v, 1.0), lambda: tf.assign_add(w, 1.0))

    def with_effect():
        with tf.control_dependencies([tf.assign(v, 100.0)]):
            return tf.identity(w) * 2

    r2 = tf.cond(p, with_effect, lambda: w * 3)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        assert [sess.run(r, {p: True}), sess.run(r, {p: False}), sess.run(r, {p: False})] == [2.0, 11.0, 12.0]
        assert sess.run([v, w]) == [2.0, 12.0]
        assert [sess.run(r2, {p: False}), sess.run(v), sess.run(r2, {p: True}), sess.run(v)] == [36.0, 2.0, 24.0, 100.0]


def test_cond_gradient_follows_the_branch_taken():
    p = tf.placeholder(tf.bool, [])
    x = tf.placeholder(tf.float32, [None])
    w = tf.Variable(2.0)
    out = tf.cond(p, lambda: tf.reduce_sum(x * w * w), lambda: tf.reduce_sum(tf.sin(x) * w))
    gw, gx = tf.gradients(out, [w, x])
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        xv = np.array([0.5, 1.0], np.float32)
        g = sess.run([gw, gx], {p: True, x: xv})
        _close(g[0], 2 * 2.0 * xv.sum())
        _close(g[1], [4.0, 4.0])
        g = sess.run([gw, gx], {p: False, x: xv})
        _close(g[0], np.sin(xv).sum())
        _close(g[1], 2 * np.cos(xv))


# ---- scan / map_fn / foldl / foldr --------------------------------------------------------------------------
def test_scan_map_fn_folds_and_their_gradients():
    e = tf.placeholder(tf.float32, [None, 2])
    a = tf.Variable([[1.0, -1.0]])
    sc = tf.scan(lambda acc, x: acc * 0.5 + x * a[0], e, initializer=tf.constant([0.0, 1.0]))
    sc2 = tf.scan(lambda acc, x: acc + x, e)
    scr = tf.scan(lambda acc, x: acc + x, e, reverse=True)
    mf = tf.map_fn(lambda x: tf.reduce_sum(x * a[0]), e)
    mf2 = tf.map_fn(lambda x: (x[0] * 2, tf.cast(x[1] > 0, tf.int32)), e, dtype=(tf.float32, tf.int32))
    fl = tf.foldl(lambda acc, x: acc * x[0] + x[1], e, initializer=tf.constant(1.0))
    fr = tf.foldr(lambda acc, x: acc * x[0] + x[1], e, initializer=tf.constant(1.0))
    total = tf.reduce_sum(sc * sc) + tf.reduce_sum(mf) + fl * fr + tf.reduce_sum(sc2) * tf.reduce_sum(scr)
    ga, ge = tf.gradients(total, [a, e])
    ev = np.array([[0.5, 1.0], [2.0, -1.0], [0.3, 0.2], [-1.5, 0.7]], np.float32)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        got = sess.run([sc, sc2, scr, mf, mf2, fl, fr, ga, ge], {e: ev})
    _close(got[0], [[0.5, -0.5], [2.25, 0.75], [1.425, 0.175], [-0.7875, -0.6125]])
    _close(got[1], np.cumsum(ev, 0))
    _close(got[2], np.cumsum(ev[::-1], 0)[::-1])
    _close(got[3], [-0.5, 3.0, 0.1, -2.2])
    _close(got[4][0], [1.0, 4.0, 0.6, -3.0])
    assert got[4][1].tolist() == [1, 0, 1, 1] and got[4][1].dtype == np.int32
    _close([got[5], got[6]], [-0.50000006, 0.45999998])
    _close(got[7], [[17.22656, -1.69437]], 1e-4)
    _close(got[8], [[21.29162, 14.80162], [30.03075, 20.97425], [33.2825, 29.2725], [38.243, 39.135]], 1e-4)


def test_tensor_array_api():
    ta = tf.TensorArray(tf.float32, size=3)
    ta = ta.write(0, [1.0, 2.0]).write(1, [3.0, 4.0]).write(2, [5.0, 6.0])
    grown = tf.TensorArray(tf.float32, size=0, dynamic_size=True).unstack(tf.constant([[1.0], [2.0]]))
    with tf.Session() as sess:
        stacked, one, size, cat, gathered = sess.run([ta.stack(), ta.read(1), ta.size(), ta.concat(),
                                                       ta.gather([2, 0])])
        assert stacked.tolist() == [[1, 2], [3, 4], [5, 6]] and one.tolist() == [3, 4] and size == 3
        assert cat.tolist() == [1, 2, 3, 4, 5, 6] and gathered.tolist() == [[5, 6], [1, 2]]
        assert sess.run([grown.size(), grown.write(3, [7.0]).stack()])[0] == 2
        assert sess.run(grown.write(3, [7.0]).stack()).tolist() == [[1], [2], [0], [7]]
    assert ta.element_shape.as_list() == [2] and ta.dtype == tf.float32


# ---- programs -----------------------------------------------------------------------------------------------
def _run_program(name: str, *args: str) -> str:
    env = dict(os.environ, PYTHONPATH=ROOT, OMP_NUM_THREADS="1")
    code = ("import sys, runpy, graphgrad.compat.tf as t; t.install(); sys.argv = sys.argv[1:]; "
            "runpy.run_path(sys.argv[0], run_name='__main__')")
    done = subprocess.run([sys.executable, "-c", code, os.path.join(PROGRAMS_DIR, name), *args],
                          capture_output=True, text=True, timeout=300, env=env, cwd=PROGRAMS_DIR)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


def test_stack_packs_nested_lists_of_tensors():
    a, b = tf.constant([1.0, 2.0]), tf.constant([3.0, 4.0])
    with tf.Session() as sess:
        assert sess.run(tf.stack([[a, b], [b, a]])).tolist() == [[[1, 2], [3, 4]], [[3, 4], [1, 2]]]


def test_saver_writes_the_variables_of_a_graph_with_loops(tmp_path):
    n = tf.placeholder(tf.int32, [])
    v = tf.Variable(2.0, name="v")
    _, out = tf.while_loop(lambda i, x: i < n, lambda i, x: (i + 1, x * v), [0, 1.0])
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        path = tf.train.Saver().save(sess, str(tmp_path / "model"))
        sess.run(tf.assign(v, 5.0))
        tf.train.Saver().restore(sess, path)
        assert sess.run(out, {n: 3}) == 8.0


def test_program_scan_lstm_chars_learns_and_generates():
    """The generated text continues the training text. After "the " both "quick" and "lazy" follow in
    it, so which one comes out turns on the last bits of the sums (the BLAS's thread count under load)."""
    out = _run_program("scan_lstm_chars.py")
    generated = out.split("generated: ", 1)[1].rstrip("\n")
    assert generated.startswith("the ") and generated in "the quick brown fox jumps over the lazy dog. " * 3


@pytest.mark.parametrize("kind", ["lstm", "multi", "bidirectional"])
def test_dynamic_rnn_over_a_time_axis_known_only_when_run_matches_the_unrolled_one(kind):
    """A (batch, None, features) placeholder: dynamic_rnn loops (tf.while_loop), with the same outputs,
    state, variables and gradients as the unrolled recurrence of a known time axis."""
    xv = np.cos(np.arange(2 * 5 * 3)).reshape(2, 5, 3).astype(np.float32)
    results = []
    for time in (None, 5):
        tf.reset_default_graph()
        x, lengths = tf.placeholder(tf.float32, [None, time, 3]), tf.placeholder(tf.int32, [None])
        if kind == "lstm":
            out, state = tf.nn.dynamic_rnn(tf.nn.rnn_cell.LSTMCell(4), x, sequence_length=lengths, dtype=tf.float32)
            last = state.h
        elif kind == "multi":
            cell = tf.nn.rnn_cell.MultiRNNCell([tf.nn.rnn_cell.BasicLSTMCell(4), tf.nn.rnn_cell.GRUCell(4)])
            out, state = tf.nn.dynamic_rnn(cell, x, sequence_length=lengths, dtype=tf.float32)
            last = state[1]
        else:
            (fw, out), (_, last) = tf.nn.bidirectional_dynamic_rnn(
                tf.nn.rnn_cell.GRUCell(4), tf.nn.rnn_cell.GRUCell(4), x, sequence_length=lengths, dtype=tf.float32)
            out = out * fw
        assert out.get_shape().as_list() == [None, time, 4]
        variables = tf.trainable_variables()
        grads = tf.gradients(tf.reduce_sum(out * out) + tf.reduce_sum(last), variables)
        with tf.Session() as sess:
            for v in variables:
                shape = v.get_shape().as_list()
                sess.run(tf.assign(v, 0.3 * np.sin(np.arange(np.prod(shape))).reshape(shape).astype(np.float32)))
            results.append(([v.name for v in variables], sess.run([out, last, grads], {x: xv, lengths: [5, 3]})))
    (names_loop, (out_loop, last_loop, grads_loop)), (names, (out_unrolled, last_unrolled, grads_unrolled)) = results
    assert names_loop == names
    _close(out_loop, out_unrolled)
    _close(last_loop, last_unrolled)
    for a, b in zip(grads_loop, grads_unrolled):
        _close(a, b, 1e-4)
    assert not out_loop[1, 3:].any()  # past the sequence's length: zeros


def test_layers_take_the_float_dtype_of_their_inputs():
    """MorvanZhou's Tensorflow-Tutorial 306_dataset feeds float64 arrays to tf.layers.dense: TF1 makes
    float64 variables for them."""
    x = tf.placeholder(tf.float64, [None, 1])
    y = tf.layers.dense(tf.layers.dense(x, 3, tf.nn.relu), 1)
    assert y.dtype == tf.float64 and all(v.dtype == tf.float64 for v in tf.trainable_variables())
    assert tf.layers.dense(tf.placeholder(tf.float32, [None, 2]), 1, name="other").dtype == tf.float32
    loss = tf.reduce_mean(tf.square(y - x))
    train = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(train, {x: np.ones((4, 1))})


def test_convert_to_tensor_packs_lists_of_tensors():
    a = tf.constant([[1.0, 2.0]])
    ta = tf.TensorArray(tf.float32, size=2).write(0, (a, a * 2)).write(1, [a, a])
    with tf.Session() as sess:
        assert sess.run(ta.stack()).shape == (2, 2, 1, 2)
        assert sess.run(tf.convert_to_tensor([a, 3 * a])).tolist() == [[[1.0, 2.0]], [[3.0, 6.0]]]


def test_gradients_inside_a_loop_body_give_a_jacobian():
    """The Jacobian by rows, each a tf.gradients made inside the loop body and written to a TensorArray."""
    x = tf.placeholder(tf.float32, [3])
    y = tf.stack([tf.reduce_sum(x * x), tf.reduce_prod(x), tf.sin(x[0])])
    _, rows = tf.while_loop(lambda j, _: j < 3, lambda j, r: (j + 1, r.write(j, tf.gradients(y[j], x)[0])),
                            [tf.constant(0), tf.TensorArray(tf.float32, size=3)])
    with tf.Session() as sess:
        _close(sess.run(rows.stack(), {x: [1.0, 2.0, 3.0]}), [[2, 4, 6], [6, 3, 2], [np.cos(1.0), 0, 0]])


def test_tensor_op_after_install():
    out = subprocess.run([sys.executable, "-c", "import graphgrad.compat.tf as t; t.install()\n"
                          "import tensorflow as tf\n"
                          "v = tf.Variable(1.0)\n"
                          "p = tf.placeholder(tf.bool, [])\n"
                          "c = tf.cond(p, lambda: tf.assign(v, 5.0).op, lambda: tf.no_op())\n"
                          "with tf.Session() as s:\n"
                          "    s.run(tf.global_variables_initializer()); s.run(c, {p: False}); a = s.run(v)\n"
                          "    s.run(c, {p: True}); print(a, s.run(v), tf.assign(v, 2.0).op.type)"],
                         capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=ROOT), timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == ["1.0", "5.0", "Assign"]


def test_segments_scatter_unique_and_space_to_depth_as_tensorflow():
    """TensorFlow 2's values for the same calls (graph mode here, through a Session)."""
    tf.reset_default_graph()
    x = tf.placeholder(tf.float32, [3, 4])
    xv = np.arange(12, dtype=np.float32).reshape(3, 4) - 5
    fetches = [tf.math.segment_sum(x, [0, 0, 1]), tf.math.unsorted_segment_max(x, [1, 0, 1], 3),
               tf.math.unsorted_segment_mean(x, [1, 0, 1], 3), tf.scatter_nd([[0], [2], [0]], x[:3, :2], [4, 2]),
               tf.unique(tf.constant([3, 1, 3, 2, 1, 5])),
               tf.nn.space_to_depth(tf.reshape(tf.range(16.0), [1, 4, 4, 1]), 2),
               tf.nn.local_response_normalization(tf.reshape(tf.range(1.0, 5.0), [1, 1, 1, 4]), 1),
               tf.reduce_mean(tf.constant([1, 2, 2])), tf.truediv(tf.constant([1, 2]), 2), tf.nn.top_k(x, 2).indices,
               tf.math.floormod(tf.constant([-7.0, 7.0]), 3.0)]
    with tf.Session() as sess:
        (seg, umax, umean, scattered, (values, index), s2d, lrn, imean, quotient, top, fmod) = sess.run(fetches, {x: xv})
    assert seg.tolist() == [[-6.0, -4.0, -2.0, 0.0], [3.0, 4.0, 5.0, 6.0]]
    lowest = float(np.finfo(np.float32).min)
    assert umax.tolist() == [[-1.0, 0.0, 1.0, 2.0], [3.0, 4.0, 5.0, 6.0], [lowest] * 4]
    assert umean.tolist() == [[-1.0, 0.0, 1.0, 2.0], [-1.0, 0.0, 1.0, 2.0], [0.0] * 4]
    assert scattered.tolist() == [[-2.0, 0.0], [0.0, 0.0], [-1.0, 0.0], [0.0, 0.0]]
    assert values.tolist() == [3, 1, 2, 5] and index.tolist() == [0, 1, 0, 2, 1, 3] and index.dtype == np.int32
    assert s2d.reshape(-1).tolist() == [0, 1, 4, 5, 2, 3, 6, 7, 8, 9, 12, 13, 10, 11, 14, 15]
    np.testing.assert_allclose(lrn.reshape(-1), [0.40824828, 0.5163978, 0.5477226, 0.7844645], rtol=1e-6)
    assert imean == 1 and quotient.dtype == np.float64 and top.dtype == np.int32 and fmod.tolist() == [2.0, 1.0]
