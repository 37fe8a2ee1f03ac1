"""TF1 graphs with ``tf.layers``, the newer ``tf.nn`` convolutions, the RNN cells and ``dynamic_rnn``,
built by the same code for graphgrad.compat.tf and for real TensorFlow (``test_tf_layers.py``).

Every variable is set to values drawn from its name after initialization, so both sides start from the
same weights (and the names must agree for that to work)."""
from __future__ import annotations

import zlib

import numpy as np


def vname(v) -> str:
    """A variable's name without ``:0`` (graphgrad's ``base_name``, TensorFlow's ``op.name``)."""
    return getattr(v, "base_name", None) or v.op.name


def start_value(name: str, shape) -> np.ndarray:
    value = np.random.RandomState(zlib.crc32(name.encode())).uniform(-0.5, 0.5, shape).astype(np.float32)
    return np.abs(value) + 0.5 if "variance" in name else value


def build(tf):
    rng = np.random.RandomState(1)
    img = rng.randn(2, 7, 6, 3).astype(np.float32)
    seq = rng.randn(3, 5, 4).astype(np.float32)
    vec = rng.randn(4, 5).astype(np.float32)
    images = tf.placeholder(tf.float32, [None, 7, 6, 3])
    x = tf.placeholder(tf.float32, [None, 5])
    s = tf.placeholder(tf.float32, [None, 5, 4])
    lengths = tf.placeholder(tf.int32, [None])
    training = tf.placeholder(tf.bool, [])
    f, steps = {}, {}
    f["dense"] = tf.layers.dense(x, 4, activation=tf.nn.relu)
    f["dense_rank3"] = tf.layers.dense(s, 3, use_bias=False)
    f["conv_valid_s2"] = tf.layers.conv2d(images, 4, 3, strides=2)
    f["conv_same_dilated"] = tf.layers.conv2d(images, 2, (3, 2), padding="same", dilation_rate=2,
                                              activation=tf.nn.tanh)
    f["conv_t_same"] = tf.layers.conv2d_transpose(images, 2, 3, strides=2, padding="same")
    f["conv_t_valid"] = tf.layers.conv2d_transpose(images, 2, (3, 2), strides=(2, 1))
    f["conv1d_layer"] = tf.layers.conv1d(s, 3, 2, padding="same")
    f["max_pooling2d"] = tf.layers.max_pooling2d(images, 2, 2)
    f["average_pooling2d"] = tf.layers.average_pooling2d(images, 3, 2, padding="same")
    f["max_pooling1d"] = tf.layers.max_pooling1d(s, 2, 1)
    f["flatten"] = tf.layers.flatten(images)
    f["dropout_off"] = tf.layers.dropout(x, 0.5, training=False)
    f["dense_class"] = tf.layers.Dense(3, name="head")(tf.layers.Flatten()(tf.layers.MaxPooling2D(2, 2)(
        tf.layers.Conv2D(2, 3, padding="same")(images))))
    f["bn_infer"] = tf.layers.batch_normalization(images, training=False)
    f["bn_train"] = tf.layers.batch_normalization(images, training=True, momentum=0.9)
    f["bn_placeholder"] = tf.layers.batch_normalization(x, training=training, center=False)
    f["bn_axis1"] = tf.layers.batch_normalization(images, axis=1, training=True, scale=False, epsilon=0.01)
    f["bn_rank3"] = tf.layers.batch_normalization(s, training=True, momentum=0.5)
    f["bn_not_fused"] = tf.layers.batch_normalization(images, training=True, fused=False)
    steps["bn_moving"] = tf.get_collection(tf.GraphKeys.UPDATE_OPS)
    filt = rng.randn(3, 3, 2, 3).astype(np.float32) * 0.3
    f["nn_conv_t_odd"] = tf.nn.conv2d_transpose(images, filt, [2, 13, 11, 2], [1, 2, 2, 1], padding="SAME")
    f["nn_conv_t_valid"] = tf.nn.conv2d_transpose(images, filt, [2, 15, 13, 2], [1, 2, 2, 1], padding="VALID")
    f["nn_conv_t_stacked"] = tf.nn.conv2d_transpose(images, filt, tf.stack([tf.shape(images)[0], 14, 12, 2]),
                                                     [1, 2, 2, 1], padding="SAME")
    depthwise = rng.randn(3, 2, 3, 2).astype(np.float32) * 0.3
    f["depthwise"] = tf.nn.depthwise_conv2d(images, depthwise, [1, 1, 1, 1], "SAME")
    f["depthwise_s2"] = tf.nn.depthwise_conv2d(images, depthwise, [1, 2, 2, 1], "VALID")
    f["separable"] = tf.nn.separable_conv2d(images, depthwise, rng.randn(1, 1, 6, 4).astype(np.float32), [1, 1, 1, 1],
                                            "SAME")
    f["nn_conv1d"] = tf.nn.conv1d(s, rng.randn(3, 4, 2).astype(np.float32), 2, "SAME")
    f["relu_layer"] = tf.nn.relu_layer(x, rng.randn(5, 3).astype(np.float32), [0.1, -0.2, 0.3])
    cells = {"basic_rnn": tf.nn.rnn_cell.BasicRNNCell(3), "basic_lstm": tf.nn.rnn_cell.BasicLSTMCell(3),
             "lstm": tf.nn.rnn_cell.LSTMCell(4, forget_bias=0.5), "gru": tf.nn.rnn_cell.GRUCell(3),
             "wrapped": tf.nn.rnn_cell.DropoutWrapper(tf.nn.rnn_cell.GRUCell(3), output_keep_prob=1.0),
             "lstm_peep_proj": tf.nn.rnn_cell.LSTMCell(4, use_peepholes=True, cell_clip=0.3, num_proj=2,
                                                       proj_clip=0.2),
             "multi": tf.nn.rnn_cell.MultiRNNCell([tf.nn.rnn_cell.BasicLSTMCell(3), tf.nn.rnn_cell.GRUCell(2)])}
    for key, cell in cells.items():
        out, state = tf.nn.dynamic_rnn(cell, s, sequence_length=lengths, dtype=tf.float32, scope=key)
        f[f"rnn_{key}_out"] = out
        for i, part in enumerate(tf.nest.flatten(state) if hasattr(tf, "nest") else _flat(state)):
            f[f"rnn_{key}_state{i}"] = part
    out, state = tf.nn.dynamic_rnn(tf.nn.rnn_cell.GRUCell(2), tf.transpose(s, [1, 0, 2]), dtype=tf.float32,
                                   time_major=True)
    f["rnn_time_major"], f["rnn_time_major_state"] = out, state
    (fw, bw), (sfw, sbw) = tf.nn.bidirectional_dynamic_rnn(tf.nn.rnn_cell.BasicLSTMCell(2), tf.nn.rnn_cell.GRUCell(2),
                                                           s, sequence_length=lengths, dtype=tf.float32)
    f["birnn_fw"], f["birnn_bw"], f["birnn_state_fw_h"], f["birnn_state_bw"] = fw, bw, sfw.h, sbw
    outs, last = tf.nn.static_rnn(tf.nn.rnn_cell.BasicRNNCell(2), tf.unstack(s, axis=1), dtype=tf.float32,
                                  scope="static")
    f["static_rnn_out"], f["static_rnn_state"] = outs[-1], last
    f["gather_nd"] = tf.gather_nd(x, [[0, 1], [3, 4], [2, 2]])
    f["gather_nd_rows"] = tf.gather_nd(s, [[1], [0]])
    f["boolean_mask"] = tf.boolean_mask(x, [True, False, True, True])
    f["sequence_mask"] = tf.sequence_mask(lengths, 6)
    f["sequence_mask_max"] = tf.sequence_mask([1, 3, 2])
    f["reduce_std"] = tf.math.reduce_std(x, axis=0)
    f["math_reduce_std"] = tf.math.reduce_std(x)
    f["cumprod"] = tf.cumprod(x, axis=1)
    f["cumprod_excl_rev"] = tf.cumprod(x, axis=1, exclusive=True, reverse=True)
    w = tf.Variable([0.5, -1.0, 2.0], name="w_adadelta")
    steps["opt_adadelta"] = (w, tf.train.AdadeltaOptimizer(1.0).minimize(tf.reduce_sum(tf.square(w - 1.0))))
    # a layers model trained three steps with the update ops as control dependencies, as TF1 programs do
    h = tf.layers.conv2d(images, 3, 3, padding="same", name="train_conv")
    h = tf.layers.batch_normalization(h, training=training, name="train_bn")
    logits = tf.layers.dense(tf.layers.flatten(tf.nn.relu(h)), 2, name="train_dense")
    loss = tf.reduce_mean(tf.square(logits))
    with tf.control_dependencies(tf.get_collection(tf.GraphKeys.UPDATE_OPS, scope="train_bn")):
        steps["train_model"] = (tf.trainable_variables("train_") +
                                [v for v in tf.global_variables("train_bn") if "moving" in vname(v)],
                                tf.train.GradientDescentOptimizer(0.1).minimize(loss))
    # an LSTM over padded sequences trained three steps of gradient descent
    out, state = tf.nn.dynamic_rnn(tf.nn.rnn_cell.LSTMCell(3), s, sequence_length=lengths, dtype=tf.float32,
                                   scope="train_lstm")
    loss = tf.reduce_sum(tf.square(out)) + tf.reduce_sum(state.c)
    steps["train_rnn"] = (tf.trainable_variables("train_lstm"), tf.train.GradientDescentOptimizer(0.1).minimize(loss))
    return f, steps, {images: img, x: vec, s: seq, lengths: np.array([5, 2, 3], np.int32), training: True}


def _flat(state):
    if isinstance(state, (tuple, list)):
        return [t for part in state for t in _flat(part)]
    return [state]


def evaluate(tf, sess, fetches, steps, feeds) -> dict:
    """The fetches' values from the same starting weights; then the moving averages after three runs of
    the update ops, the Adadelta variable after five steps and the trained model after three."""
    sess.run(tf.global_variables_initializer())
    variables = [v for v in tf.global_variables() if "Adadelta" not in vname(v) and "w_adadelta" not in vname(v)]
    sess.run([tf.assign(v, start_value(vname(v), v.get_shape().as_list() if hasattr(v.get_shape(), "as_list")
                                       else v.get_shape())) for v in variables])
    out = sess.run(fetches, feeds)
    out["variable_names"] = np.array(sorted(vname(v) for v in variables))
    for _ in range(3):
        sess.run(steps["bn_moving"], feeds)
    for v in variables:
        if "moving" in vname(v) and not vname(v).startswith("train_"):
            out["moving:" + vname(v)] = sess.run(v)
    w, step = steps["opt_adadelta"]
    for _ in range(5):
        sess.run(step)
    out["opt_adadelta"] = sess.run(w)
    for key in ("train_model", "train_rnn"):
        trained, step = steps[key]
        for _ in range(3):
            sess.run(step, feeds)
        for v in trained:
            out["trained:" + vname(v)] = sess.run(v)
    return out


if __name__ == "__main__":  # under real TensorFlow: write the values to the file named on the command line
    import sys

    import tensorflow.compat.v1 as real

    real.disable_v2_behavior()
    fetches, steps, feeds = build(real)
    with real.Session() as session:
        values = evaluate(real, session, fetches, steps, feeds)
    np.savez(sys.argv[1], **values)
