"""graphgrad.compat.tf, TensorFlow 1's graph API: names and argument conventions mapped onto graphgrad
(values checked against NumPy; where real TensorFlow is installed, against it too)."""
from __future__ import annotations

import importlib.util
import os

import numpy as np
import pytest

import graphgrad as gg
import graphgrad.compat.tf as tf

HAS_TF = importlib.util.find_spec("tensorflow") is not None


@pytest.fixture(autouse=True)
def fresh_graph():
    """Each test builds in a new default graph (as TF1 code run in a fresh process would)."""
    tf.reset_default_graph()
    yield
    tf.reset_default_graph()


def run(fetches, feed=None):
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        return sess.run(fetches, feed)


def test_tf_dtype_names_follow_tensorflow():
    assert tf.placeholder("float").dtype == np.float32
    assert tf.placeholder("double").dtype == np.float64
    assert tf.placeholder(tf.int32, [None]).dtype == np.int32
    assert tf.constant(1.5).dtype == np.float32 and tf.constant(2).dtype == np.int32
    assert tf.constant(np.float64(1.5)).dtype == np.float64
    assert tf.Variable(1.0).dtype == np.float32 and tf.Variable(np.zeros(2)).dtype == np.float64
    assert tf.as_dtype("float") == tf.float32


def test_tf_shapeless_placeholders_feed_any_shape_and_train():
    x, y = tf.placeholder("float"), tf.placeholder("float")
    w = tf.Variable(0.0)
    loss = tf.reduce_mean(tf.square(x * w - y))
    step = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(100):
            sess.run(step, {x: 2.0, y: 6.0})
            sess.run(step, {x: [[1.0, 2.0]], y: [[3.0, 6.0]]})
        assert abs(sess.run(w) - 3.0) < 1e-3


def test_tf_reductions_take_axis_keepdims_and_the_old_names():
    a = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    x = tf.placeholder(tf.float32, [None, 3, 4])
    cases = {
        "reduce_sum": (tf.reduce_sum(x, axis=[0, 2], keepdims=True), a.sum((0, 2), keepdims=True)),
        "reduce_mean": (tf.reduce_mean(x, reduction_indices=1, keep_dims=True), a.mean(1, keepdims=True)),
        "reduce_max": (tf.reduce_max(x, 2), a.max(2)),
        "reduce_min": (tf.reduce_min(x), a.min()),
        "reduce_prod": (tf.reduce_prod(x / 10 + 1, -1), (a / 10 + 1).prod(-1)),
        "reduce_logsumexp": (tf.reduce_logsumexp(x / 10, 1), np.log(np.exp(a / 10).sum(1))),
        "reduce_any": (tf.reduce_any(x > 22, 0), (a > 22).any(0)),
        "reduce_all": (tf.reduce_all(x >= 0), True),
    }
    values = run({k: v[0] for k, v in cases.items()}, {x: a})
    for k, (_, want) in cases.items():
        np.testing.assert_allclose(values[k], want, rtol=1e-5, err_msg=k)


def test_tf_math_and_array_functions():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    x = tf.placeholder(tf.float32, [2, 3])
    cases = {
        "matmul_t": (tf.matmul(x, x, transpose_b=True), a @ a.T),
        "matmul_ta": (tf.matmul(x, x, transpose_a=True), a.T @ a),
        "concat": (tf.concat([x, x], 1), np.concatenate([a, a], 1)),
        "stack": (tf.stack([x, x], axis=1), np.stack([a, a], 1)),
        "transpose": (tf.transpose(x), a.T),
        "perm": (tf.transpose(tf.reshape(x, [1, 2, 3]), perm=[2, 0, 1]), a.reshape(1, 2, 3).transpose(2, 0, 1)),
        "expand_dims": (tf.expand_dims(x, 1), a[:, None]),
        "squeeze": (tf.squeeze(tf.reshape(x, [1, 6, 1]), [0]), a.reshape(6, 1)),
        "tile": (tf.tile(x, [2, 1]), np.tile(a, (2, 1))),
        "gather": (tf.gather(x, [2, 0], axis=1), a[:, [2, 0]]),
        "cast": (tf.cast(x > 2, tf.float32), (a > 2).astype(np.float32)),
        "argmax": (tf.argmax(x, 1), a.argmax(1)),
        "argmax_default_axis_0": (tf.argmax(x), a.argmax(0)),
        "equal": (tf.equal(x, 2.0), a == 2),
        "where": (tf.where(x > 2, x, -x), np.where(a > 2, a, -a)),
        "clip": (tf.clip_by_value(x, 1.0, 4.0), np.clip(a, 1, 4)),
        "pow": (tf.pow(x, 2.0), a ** 2),
        "sqrt": (tf.sqrt(x), np.sqrt(a)),
        "log_exp": (tf.log(tf.exp(x)), a),
        "abs": (tf.abs(-x), a),
        "sigmoid": (tf.sigmoid(x), 1 / (1 + np.exp(-a))),
        "tanh": (tf.tanh(x), np.tanh(a)),
        "add_sub_mul_div": (tf.divide(tf.multiply(tf.subtract(tf.add(x, 1.0), 0.5), 2.0), 4.0), (a + 0.5) / 2),
        "shape": (tf.shape(x), [2, 3]),
        "size": (tf.size(x), 6),
        "rank": (tf.rank(x), 2),
        "zeros_like": (tf.zeros_like(x), np.zeros_like(a)),
        "ones": (tf.ones([2, 2]), np.ones((2, 2))),
        "fill": (tf.fill([2], 7.0), [7.0, 7.0]),
        "one_hot": (tf.one_hot([1, 0], 3, on_value=5.0, off_value=-1.0), [[-1, 5, -1], [5, -1, -1]]),
        "range": (tf.range(1, 7, 2), [1, 3, 5]),
        "identity": (tf.identity(x), a),
        "stop_gradient": (tf.stop_gradient(x), a),
    }
    values = run({k: v[0] for k, v in cases.items()}, {x: a})
    for k, (_, want) in cases.items():
        np.testing.assert_allclose(values[k], want, rtol=1e-5, atol=1e-6, err_msg=k)
    assert tf.shape(x).dtype == np.int32 and tf.range(3).dtype == np.int32 and tf.argmax(x, 1).dtype == np.int64
    assert tf.one_hot([1], 2).dtype == np.float32


def test_tf_split_unstack_and_run_time_shapes():
    a = np.arange(12, dtype=np.float32).reshape(2, 6)
    x = tf.placeholder(tf.float32, [None, 6])
    parts = tf.split(x, 3, axis=1)
    sized = tf.split(x, [1, -1, 2], 1)
    rows = tf.unstack(tf.reshape(x, [2, 6]))
    flat = tf.reshape(x, [tf.shape(x)[0], -1, 2])
    got = run([parts, sized, rows, flat], {x: a})
    for got_part, want in zip(got[0], np.split(a, 3, 1)):
        np.testing.assert_array_equal(got_part, want)
    assert [p.shape for p in got[1]] == [(2, 1), (2, 3), (2, 2)]
    np.testing.assert_array_equal(got[2][1], a[1])
    assert got[3].shape == (2, 3, 2)


def test_tf_matmul_refuses_vectors_as_tensorflow_does():
    with pytest.raises(ValueError, match="rank 2"):
        tf.matmul(tf.placeholder(tf.float32, [3]), tf.placeholder(tf.float32, [3, 2]))


def test_tf_name_on_every_op_and_name_scopes():
    x = tf.placeholder(tf.float32, [None, 2], name="x")
    with tf.name_scope("layer1"):
        w = tf.Variable(tf.ones([2, 2]), name="w")
        h = tf.nn.relu(tf.matmul(x, w), name="h")
        total = tf.reduce_sum(h, name="total")
        loss = tf.nn.l2_loss(h, name="l2")
    graph = tf.get_default_graph()
    assert graph.get_tensor_by_name("layer1/h:0") is h
    assert graph.get_tensor_by_name("layer1/total:0") is total
    assert graph.get_tensor_by_name("layer1/l2:0") is loss
    assert w.base_name == "layer1/w"
    assert run(total, {x: [[1.0, 2.0]]}) == 6.0


def test_tf_variable_arithmetic_builds_graph_nodes():
    w = tf.Variable([1.0, 2.0])
    loss = tf.reduce_sum(w * w) + tf.nn.l2_loss(w)   # no placeholder: still a graph, as in TF1
    (grad,) = tf.gradients(loss, [w])
    step = tf.assign_sub(w, 0.1 * grad)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        assert sess.run(loss) == pytest.approx(7.5)
        np.testing.assert_allclose(sess.run(grad), [3.0, 6.0])
        sess.run(step)
        np.testing.assert_allclose(sess.run(w), [0.7, 1.4], rtol=1e-6)
        sess.run(tf.global_variables_initializer())
        np.testing.assert_allclose(w.eval(), [1.0, 2.0])


def test_tf_get_variable_and_variable_scope_reuse():
    def layer(x):
        w = tf.get_variable("w", [2, 2], initializer=tf.constant_initializer(0.5))
        b = tf.get_variable("b", [2], initializer=tf.zeros_initializer())
        return tf.matmul(x, w) + b

    x = tf.placeholder(tf.float32, [None, 2])
    with tf.variable_scope("net"):
        first = layer(x)
    with tf.variable_scope("net", reuse=True):
        second = layer(x)
    with tf.variable_scope("net", reuse=tf.AUTO_REUSE):
        third = layer(x)
    assert [v.base_name for v in tf.trainable_variables()] == ["net/w", "net/b"]
    with pytest.raises(ValueError, match="already exists"):
        with tf.variable_scope("net"):
            layer(x)
    with pytest.raises(ValueError, match="does not exist"):
        with tf.variable_scope("other", reuse=True):
            layer(x)
    with tf.variable_scope("scoped") as scope:
        tf.get_variable("v", [1])
        scope.reuse_variables()
        assert tf.get_variable("v", [1]) is tf.global_variables()[-1]
    values = run([first, second, third], {x: [[1.0, 1.0]]})
    for v in values:
        np.testing.assert_allclose(v, [[1.0, 1.0]])


def test_tf_initializers_give_shapes_and_scales():
    glorot = tf.glorot_uniform_initializer(seed=0)((3, 3, 8, 16))
    limit = np.sqrt(6 / (3 * 3 * 8 + 3 * 3 * 16))
    assert glorot.shape == (3, 3, 8, 16) and float(abs(glorot).max()) <= limit
    normal = tf.truncated_normal_initializer(stddev=0.1, seed=1)((1000,)).numpy()
    assert abs(normal).max() <= 0.2 and 0.07 < normal.std() < 0.1
    assert tf.random_normal_initializer(1.0, 0.01, seed=2)((100,)).numpy().mean() == pytest.approx(1.0, abs=0.01)
    assert tf.zeros_initializer()((2,)).dtype == np.float32
    assert tf.truncated_normal([5, 5], stddev=1.0).shape == (5, 5)
    uniform = tf.random_uniform([100], 2, 3)
    first, second = run([uniform, uniform * 1]), run(uniform)
    assert first[0].min() >= 2 and first[0].max() < 3
    np.testing.assert_array_equal(first[0], first[1])  # one draw per run...
    assert not np.array_equal(first[0], second)          # ...and a new one on the next run, as in TF


def test_tf_sessions_eval_and_run():
    x = tf.placeholder(tf.float32, [None])
    v = tf.Variable(tf.zeros([2]))
    bump = tf.group(tf.assign_add(v, [1.0, 1.0]))
    init = tf.global_variables_initializer()
    sess = tf.InteractiveSession()
    init.run()
    bump.run()
    np.testing.assert_allclose((x * 2).eval(feed_dict={x: [1.0]}), [2.0])
    np.testing.assert_allclose(v.eval(), [1.0, 1.0])
    sess.close()
    assert tf.get_default_session() is None
    with tf.Session(config=tf.ConfigProto(allow_soft_placement=True)) as sess:
        assert tf.get_default_session() is sess
        bump.run()
    assert run(v).tolist() == [0.0, 0.0]  # the initializer resets it


def test_tf_control_dependencies_and_placeholder_with_default():
    v = tf.Variable(1.0)
    update = tf.assign(v, 5.0)
    with tf.control_dependencies([update]):
        after = tf.identity(v.value())
    x = tf.placeholder_with_default(tf.constant([1.0, 2.0]), shape=[None])
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        assert sess.run(after) == 5.0
        np.testing.assert_allclose(sess.run(x * 2), [2.0, 4.0])
        np.testing.assert_allclose(sess.run(x * 2, {x: [3.0]}), [6.0])


def test_tf_nn_activations_and_losses():
    logits = np.array([[2.0, 1.0, 0.1], [0.5, 2.5, 0.3]], np.float32)
    onehot = np.array([[1, 0, 0], [0, 0, 1]], np.float32)
    labels = np.array([0, 2])
    z = tf.placeholder(tf.float32, [None, 3])
    log_p = logits - np.log(np.exp(logits).sum(1, keepdims=True))
    xent = -(onehot * log_p).sum(1)
    sig = 1 / (1 + np.exp(-logits))
    cases = {
        "relu6": (tf.nn.relu6(z * 4), np.clip(logits * 4, 0, 6)),
        "elu": (tf.nn.elu(z - 1), np.where(logits > 1, logits - 1, np.exp(logits - 1) - 1)),
        "softplus": (tf.nn.softplus(z), np.log1p(np.exp(logits))),
        "softmax": (tf.nn.softmax(z), np.exp(log_p)),
        "log_softmax": (tf.nn.log_softmax(z), log_p),
        "xent": (tf.nn.softmax_cross_entropy_with_logits(labels=onehot, logits=z), xent),
        "xent_v2": (tf.nn.softmax_cross_entropy_with_logits_v2(labels=onehot, logits=z), xent),
        "sparse": (tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=z), xent),
        "sigmoid_xent": (tf.nn.sigmoid_cross_entropy_with_logits(labels=onehot, logits=z),
                         -(onehot * np.log(sig) + (1 - onehot) * np.log(1 - sig))),
        "l2_loss": (tf.nn.l2_loss(z), (logits ** 2).sum() / 2),
        "bias_add": (tf.nn.bias_add(z, [1.0, 2.0, 3.0]), logits + [1, 2, 3]),
        "embedding": (tf.nn.embedding_lookup(z, [1, 1, 0]), logits[[1, 1, 0]]),
        "mse": (tf.losses.mean_squared_error(onehot, z), ((logits - onehot) ** 2).mean()),
        "losses_xent": (tf.losses.softmax_cross_entropy(onehot, z), xent.mean()),
        "losses_sparse": (tf.losses.sparse_softmax_cross_entropy(labels, z, weights=[1.0, 0.0]), xent[0]),
        "log_loss": (tf.losses.log_loss(onehot, tf.sigmoid(z)),
                     (-(onehot * np.log(sig + 1e-7) + (1 - onehot) * np.log(1 - sig + 1e-7))).mean()),
        "hinge": (tf.losses.hinge_loss(onehot, z), np.maximum(0, 1 - (2 * onehot - 1) * logits).mean()),
    }
    values = run({k: v[0] for k, v in cases.items()}, {z: logits})
    for k, (_, want) in cases.items():
        np.testing.assert_allclose(values[k], want, rtol=1e-5, atol=1e-6, err_msg=k)
    assert len(tf.losses.get_losses()) == 5


def test_tf_moments_and_batch_normalization():
    a = np.random.default_rng(0).standard_normal((8, 4)).astype(np.float32)
    x = tf.placeholder(tf.float32, [None, 4])
    mean, var = tf.nn.moments(x, axes=[0])
    y = tf.nn.batch_normalization(x, mean, var, offset=tf.constant(1.0), scale=tf.constant(2.0),
                                  variance_epsilon=1e-3)
    got = run([mean, var, y], {x: a})
    np.testing.assert_allclose(got[0], a.mean(0), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got[1], a.var(0), rtol=1e-5)
    np.testing.assert_allclose(got[2], (a - a.mean(0)) / np.sqrt(a.var(0) + 1e-3) * 2 + 1, rtol=1e-4, atol=1e-5)


def test_tf_dropout_keep_prob_and_rate():
    x = tf.placeholder(tf.float32, [None, 1000])
    keep = tf.placeholder(tf.float32)
    fed = tf.nn.dropout(x, keep)
    fixed = tf.nn.dropout(x, rate=0.5)
    ones = np.ones((2, 1000), np.float32)
    with tf.Session() as sess:
        np.testing.assert_array_equal(sess.run(fed, {x: ones, keep: 1.0}), ones)
        half = sess.run(fed, {x: ones, keep: 0.5})
        assert set(np.unique(half)) <= {0.0, 2.0} and 0.4 < (half == 0).mean() < 0.6
        again = sess.run(fixed, {x: ones})
        assert set(np.unique(again)) <= {0.0, 2.0} and 0.4 < (again == 0).mean() < 0.6
    assert fed.shape == (None, 1000)


def _conv_reference(x, w, stride, padding):
    """NHWC/HWIO convolution in NumPy with TensorFlow's SAME padding."""
    n, h, wd, c = x.shape
    kh, kw, _, o = w.shape
    if padding == "SAME":
        oh, ow = -(-h // stride), -(-wd // stride)
        ph, pw = max((oh - 1) * stride + kh - h, 0), max((ow - 1) * stride + kw - wd, 0)
        x = np.pad(x, ((0, 0), (ph // 2, ph - ph // 2), (pw // 2, pw - pw // 2), (0, 0)))
    else:
        oh, ow = (h - kh) // stride + 1, (wd - kw) // stride + 1
    out = np.zeros((n, oh, ow, o), np.float64)
    for i in range(oh):
        for j in range(ow):
            patch = x[:, i * stride:i * stride + kh, j * stride:j * stride + kw, :]
            out[:, i, j, :] = np.tensordot(patch, w, axes=([1, 2, 3], [0, 1, 2]))
    return out


@pytest.mark.parametrize("padding", ["SAME", "VALID"])
@pytest.mark.parametrize("stride", [1, 2])
def test_tf_conv2d_and_pooling_in_nhwc(padding, stride):
    rng = np.random.default_rng(1)
    a = rng.standard_normal((2, 7, 6, 3)).astype(np.float32)
    k = rng.standard_normal((3, 2, 3, 4)).astype(np.float32)
    x = tf.placeholder(tf.float32, [None, 7, 6, 3])
    conv = tf.nn.conv2d(x, tf.constant(k), strides=[1, stride, stride, 1], padding=padding)
    pool = tf.nn.max_pool(x, ksize=[1, 2, 2, 1], strides=[1, 2, 2, 1], padding=padding)
    avg = tf.nn.avg_pool(x, ksize=[1, 3, 3, 1], strides=[1, stride, stride, 1], padding=padding)
    got = run([conv, pool, avg], {x: a})
    np.testing.assert_allclose(got[0], _conv_reference(a, k, stride, padding), rtol=1e-4, atol=1e-4)
    rows = 4 if padding == "SAME" else 3
    assert got[1].shape == (2, rows, 3, 3)
    np.testing.assert_allclose(got[1][:, 0, 0], a[:, :2, :2].max((1, 2)), rtol=1e-6)
    if padding == "SAME":  # the last row's window holds one real row: max of it alone, mean without the padding
        np.testing.assert_allclose(got[1][:, -1, 0], a[:, 6, :2].max(1), rtol=1e-6)
        cols = 2 if stride == 1 else 3  # 6 columns, window 3: stride 1 pads one each side, stride 2 one after
        np.testing.assert_allclose(got[2][:, 0, 0], a[:, :2, :cols].mean((1, 2)), rtol=1e-5)
    else:
        np.testing.assert_allclose(got[2][:, 0, 0], a[:, :3, :3].mean((1, 2)), rtol=1e-5)


@pytest.mark.skipif(not HAS_TF, reason="TensorFlow is not installed")
def test_tf_conv_and_pool_agree_with_tensorflow():
    import tensorflow as real

    rng = np.random.default_rng(2)
    a = rng.standard_normal((2, 9, 8, 3)).astype(np.float32)
    k = rng.standard_normal((3, 3, 3, 5)).astype(np.float32)
    for padding in ("SAME", "VALID"):
        for stride in (1, 2, 3):
            want = real.nn.conv2d(a, k, strides=[1, stride, stride, 1], padding=padding).numpy()
            got = run(tf.nn.conv2d(tf.constant(a), tf.constant(k), [1, stride, stride, 1], padding))
            np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
            for fn, mine in ((real.nn.max_pool2d, tf.nn.max_pool), (real.nn.avg_pool2d, tf.nn.avg_pool)):
                want = fn(a, ksize=[1, 3, 2, 1], strides=[1, stride, stride, 1], padding=padding).numpy()
                got = run(mine(tf.constant(a), [1, 3, 2, 1], [1, stride, stride, 1], padding))
                np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_tf_conv2d_gradients_reach_the_filter():
    x = tf.placeholder(tf.float32, [None, 5, 5, 1])
    w = tf.Variable(tf.truncated_normal([3, 3, 1, 2], stddev=0.1))
    y = tf.reduce_sum(tf.nn.max_pool(tf.nn.conv2d(x, w, [1, 2, 2, 1], "SAME"), [1, 2, 2, 1], [1, 2, 2, 1], "SAME"))
    (g,) = tf.gradients(y, [w])
    assert run(g, {x: np.ones((1, 5, 5, 1))}).shape == (3, 3, 1, 2)


@pytest.mark.parametrize("make", [
    lambda: tf.train.GradientDescentOptimizer(0.1),
    lambda: tf.train.MomentumOptimizer(0.05, 0.9),
    lambda: tf.train.AdamOptimizer(0.1),
    lambda: tf.train.RMSPropOptimizer(0.05),
    lambda: tf.train.AdagradOptimizer(0.5),
])
def test_tf_optimizers_minimize_with_global_step(make):
    w = tf.Variable([3.0, -2.0])
    loss = tf.reduce_sum(tf.square(w - [1.0, 1.0]))
    step = tf.train.get_or_create_global_step()
    train = make().minimize(loss, global_step=step)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(200):
            sess.run(train)
        assert sess.run(loss) < 1e-2
        assert sess.run(step) == 200


def test_tf_compute_and_apply_gradients_with_clipping():
    w = tf.Variable([10.0, 10.0])
    loss = tf.reduce_sum(tf.square(w))
    opt = tf.train.GradientDescentOptimizer(1.0)
    grads, variables = zip(*opt.compute_gradients(loss))
    clipped, norm = tf.clip_by_global_norm(grads, 1.0)
    train = opt.apply_gradients(zip(clipped, variables))
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        assert sess.run(norm) == pytest.approx(np.sqrt(800), rel=1e-5)
        sess.run(train)
        np.testing.assert_allclose(sess.run(w), 10 - 1 / np.sqrt(2), rtol=1e-5)


def test_tf_adagrad_follows_tensorflow_1():
    w = tf.Variable([1.0])
    train = tf.train.AdagradOptimizer(0.1, initial_accumulator_value=0.1).minimize(tf.reduce_sum(3.0 * w))
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(train)
        np.testing.assert_allclose(sess.run(w), [1.0 - 0.1 * 3 / np.sqrt(0.1 + 9)], rtol=1e-5)


def test_tf_learning_rate_schedules_follow_the_global_step():
    step = tf.train.get_or_create_global_step()
    assert tf.train.get_or_create_global_step() is step and step.dtype == np.int64
    decayed = tf.train.exponential_decay(0.1, step, 10, 0.5)
    stairs = tf.train.exponential_decay(0.1, step, 10, 0.5, staircase=True)
    pieces = tf.train.piecewise_constant(step, [5, 15], [1.0, 0.5, 0.1])
    bump = tf.assign_add(step, 1)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        seen = []
        for _ in range(20):
            seen.append(sess.run([decayed, stairs, pieces]))
            sess.run(bump)
    np.testing.assert_allclose([s[0] for s in seen], 0.1 * 0.5 ** (np.arange(20) / 10), rtol=1e-5)
    np.testing.assert_allclose([s[1] for s in seen], 0.1 * 0.5 ** (np.arange(20) // 10), rtol=1e-5)
    np.testing.assert_allclose([s[2] for s in seen], [1.0] * 6 + [0.5] * 10 + [0.1] * 4, rtol=1e-6)


def test_tf_saver_keeps_max_to_keep_and_restores(tmp_path):
    w = tf.Variable([1.0, 2.0], name="w")
    saver = tf.train.Saver(max_to_keep=2)
    prefix = str(tmp_path / "model.ckpt")
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for step in (1, 2, 3):
            sess.run(tf.assign(w, [float(step)] * 2))
            path = saver.save(sess, prefix, global_step=step)
        assert path == prefix + "-3"
        assert sorted(p.name for p in tmp_path.iterdir()) == [
            "checkpoint", "model.ckpt-2.json", "model.ckpt-2.npz", "model.ckpt-3.json", "model.ckpt-3.npz"]
        assert tf.train.latest_checkpoint(str(tmp_path)) == prefix + "-3"
        sess.run(tf.global_variables_initializer())
        saver.restore(sess, prefix + "-2")
        np.testing.assert_allclose(sess.run(w), [2.0, 2.0])


def test_tf_summaries_write_tensorboard_events(tmp_path):
    pytest.importorskip("tensorboard")
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    x = tf.placeholder(tf.float32, [None])
    with tf.name_scope("stats"):
        tf.summary.scalar("mean", tf.reduce_mean(x))
    tf.summary.histogram("values", x)
    merged = tf.summary.merge_all()
    writer = tf.summary.FileWriter(str(tmp_path), tf.get_default_graph())
    with tf.Session() as sess:
        for step in range(3):
            writer.add_summary(sess.run(merged, {x: [step, step + 2.0]}), step)
    writer.close()
    events = EventAccumulator(str(tmp_path), size_guidance={"scalars": 0, "histograms": 0})
    events.Reload()
    assert [e.value for e in events.Scalars("stats/mean")] == [1.0, 2.0, 3.0]
    assert len(events.Histograms("values")) == 3


def test_tf_gradients_and_hessians():
    x = tf.placeholder(tf.float32, [2])
    y = tf.reduce_sum(x ** 3)
    (g,) = tf.gradients(y, x)
    (h,) = tf.hessians(y, x)
    got = run([g, h], {x: [1.0, 2.0]})
    np.testing.assert_allclose(got[0], [3.0, 12.0])
    np.testing.assert_allclose(got[1], [[6.0, 0.0], [0.0, 12.0]])


def test_tf_install_makes_tensorflow_imports_resolve_here():
    import subprocess
    import sys

    code = ("import graphgrad.compat.tf as t; t.install()\n"
            "import tensorflow as tf1\nimport tensorflow.compat.v1 as tf2\nfrom tensorflow.compat.v1 import nn\n"
            "assert tf1 is t and tf2 is t and nn is t.nn and tf2.compat.v1 is t\nprint('ok')")
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=root,
                          env=dict(os.environ, PYTHONPATH=root))
    assert done.stdout.strip() == "ok", done.stderr[-2000:]


def test_tf_unmapped_names_say_so():
    with pytest.raises(AttributeError, match="docs/tensorflow.md"):
        tf.py_func  # noqa: B018


UNKNOWN_RANK_WORKS = {
    "softmax_xent": lambda x: tf.nn.softmax_cross_entropy_with_logits(labels=np.eye(4, dtype=np.float32)[:3], logits=x),
    "log_softmax": lambda x: tf.nn.log_softmax(x),
    "transpose_perm": lambda x: tf.transpose(x, [1, 0]),
    "expand_dims": lambda x: tf.expand_dims(x, 0),
    "index": lambda x: x[1:, 0],
    "reduce_mean_neg": lambda x: tf.reduce_mean(x, -1),
    "reduce_max": lambda x: tf.reduce_max(x, 1, keepdims=True),
    "logsumexp": lambda x: tf.reduce_logsumexp(x, 1),
    "matmul": lambda x: tf.matmul(x, tf.ones([4, 2])),
    "matmul_tb": lambda x: tf.matmul(x, x, transpose_b=True),
    "reshape": lambda x: tf.reshape(x, [2, -1]),
    "where": lambda x: tf.where(x > 0, x, -x),
    "l2_normalize": lambda x: tf.nn.l2_normalize(x, 1),
    "bias_add": lambda x: tf.nn.bias_add(x, tf.ones([4])),
    "mse": lambda x: tf.losses.mean_squared_error(tf.zeros([3, 4]), x),
    "fill_shape": lambda x: tf.fill(tf.shape(x), 2.0) * x,
}


@pytest.mark.parametrize("case", UNKNOWN_RANK_WORKS)
def test_tf_a_shapeless_placeholder_works_as_a_shaped_one(case):
    a = np.random.default_rng(3).standard_normal((3, 4)).astype(np.float32)
    results = []
    for shape in (None, [3, 4]):
        tf.reset_default_graph()
        x = tf.placeholder(tf.float32, shape)
        w = tf.Variable(1.5)
        y = UNKNOWN_RANK_WORKS[case](x * w)
        grads = tf.gradients(tf.reduce_sum(y), [x, w])
        train = tf.train.GradientDescentOptimizer(0.1).minimize(tf.reduce_sum(y))
        results.append(run([y] + grads + [train], {x: a})[:3])
    for got, want in zip(*results):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("make", [lambda x: tf.concat([x, x], 0), lambda x: tf.gather(x, [0]),
                                  lambda x: tf.nn.conv2d(x, tf.ones([2, 2, 1, 1]), [1, 1, 1, 1], "SAME"),
                                  lambda x: tf.nn.max_pool(x, [1, 2, 2, 1], [1, 2, 2, 1], "VALID"),
                                  lambda x: tf.nn.sparse_softmax_cross_entropy_with_logits(labels=[0], logits=x),
                                  lambda x: tf.split(x, 2), lambda x: tf.tile(x, [2])])
def test_tf_functions_that_need_a_rank_say_so(make):
    with pytest.raises(ValueError, match="give the placeholder a shape"):  # a ShapeError, a ValueError as in TF
        make(tf.placeholder(tf.float32))


def test_tf_every_global_variable_has_a_name_optimizer_slots_included():
    tf.reset_default_graph()
    w = tf.Variable(tf.zeros([2]), name="w")
    tf.train.AdamOptimizer(0.1).minimize(tf.reduce_sum(w * w))
    names = [v.name for v in tf.global_variables()]
    assert "w:0" in names and all(isinstance(n, str) and n.endswith(":0") for n in names)
    assert any(n.startswith("w/Adam") for n in names)
