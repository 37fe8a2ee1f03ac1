"""Small TF1 graphs built by the same code for graphgrad.compat.tf and for real TensorFlow
(``tests/compat/test_tf_against_tensorflow.py``): ``build(tf)`` returns ``(fetches, feeds)``."""
from __future__ import annotations

import numpy as np


def build(tf):
    rng = np.random.RandomState(0)
    a = rng.randn(4, 5).astype(np.float32)
    img = rng.randn(2, 6, 7, 3).astype(np.float32)
    kernel = rng.randn(3, 3, 3, 4).astype(np.float32) * 0.3
    onehot = np.eye(5, dtype=np.float32)[[0, 3, 1, 4]]
    labels = np.array([0, 3, 1, 4], np.int32)
    x = tf.placeholder(tf.float32, [None, 5])
    images = tf.placeholder(tf.float32, [None, 6, 7, 3])
    f = {}
    f["reduce_sum_keep"] = tf.reduce_sum(x, reduction_indices=[1], keep_dims=True)
    f["reduce_mean"] = tf.reduce_mean(x, 0)
    f["reduce_max"] = tf.reduce_max(x, axis=1, keepdims=True)
    f["reduce_logsumexp"] = tf.reduce_logsumexp(x, 1)
    f["reduce_prod"] = tf.reduce_prod(x + 2.0, 0)
    f["argmax"] = tf.argmax(x, 1)
    f["argmin_default"] = tf.argmin(x)
    f["one_hot"] = tf.one_hot(labels, 5, on_value=2.0, off_value=-1.0)
    f["split_sizes"] = tf.split(x, [2, -1, 1], axis=1)[1]
    f["unstack"] = tf.unstack(x, axis=1)[3]
    f["concat"] = tf.concat([x, x * 2], 0)
    f["stack"] = tf.stack([x, x], axis=2)
    f["transpose"] = tf.transpose(tf.reshape(x, [2, 2, 5]), [2, 0, 1])
    f["tile"] = tf.tile(x, [1, 2])
    f["gather"] = tf.gather(x, [3, 0], axis=0)
    f["shape"] = tf.shape(images)
    f["size"] = tf.size(x)
    f["range"] = tf.range(2, 11, 3)
    f["where"] = tf.where(x > 0, x, tf.zeros_like(x))
    f["clip"] = tf.clip_by_value(x, -0.5, 0.5)
    f["squared_difference"] = tf.squared_difference(x, 1.0)
    f["matmul_t"] = tf.matmul(x, x, transpose_b=True)
    f["softmax"] = tf.nn.softmax(x)
    f["log_softmax"] = tf.nn.log_softmax(x)
    f["relu6"] = tf.nn.relu6(x * 4)
    f["elu"] = tf.nn.elu(x)
    f["selu"] = tf.nn.selu(x)
    f["softplus"] = tf.nn.softplus(x)
    f["l2_loss"] = tf.nn.l2_loss(x)
    f["l2_normalize"] = tf.nn.l2_normalize(x, 1)
    f["xent"] = tf.nn.softmax_cross_entropy_with_logits_v2(labels=onehot, logits=x)
    f["sparse_xent"] = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=x)
    f["sigmoid_xent"] = tf.nn.sigmoid_cross_entropy_with_logits(labels=onehot, logits=x)
    mean, var = tf.nn.moments(x, [0])
    f["moments_mean"], f["moments_var"] = mean, var
    f["batch_norm"] = tf.nn.batch_normalization(x, mean, var, 0.5, 2.0, 1e-3)
    f["embedding"] = tf.nn.embedding_lookup(x, [[1, 2], [3, 3]])
    f["bias_add"] = tf.nn.bias_add(images, tf.constant([1.0, 2.0, 3.0]))
    f["conv_same_s2"] = tf.nn.conv2d(images, kernel, strides=[1, 2, 2, 1], padding="SAME")
    f["conv_valid"] = tf.nn.conv2d(images, kernel, strides=[1, 1, 1, 1], padding="VALID")
    f["conv_dilated"] = tf.nn.conv2d(images, kernel, strides=[1, 1, 1, 1], padding="SAME", dilations=[1, 2, 2, 1])
    f["max_pool_same"] = tf.nn.max_pool(images, [1, 3, 3, 1], [1, 2, 2, 1], "SAME")
    f["avg_pool_same"] = tf.nn.avg_pool(images, [1, 3, 3, 1], [1, 2, 2, 1], "SAME")
    f["mse"] = tf.losses.mean_squared_error(onehot, x)
    f["losses_xent_smooth"] = tf.losses.softmax_cross_entropy(onehot, x, label_smoothing=0.1)
    f["losses_sparse_w"] = tf.losses.sparse_softmax_cross_entropy(labels, x, weights=[1.0, 0.0, 2.0, 1.0])
    f["log_loss"] = tf.losses.log_loss(onehot, tf.sigmoid(x))
    f["hinge"] = tf.losses.hinge_loss(onehot, x)
    f["huber"] = tf.losses.huber_loss(onehot, x)
    (grad,) = tf.gradients(tf.reduce_sum(tf.square(tf.nn.conv2d(images, kernel, [1, 1, 1, 1], "SAME"))), [images])
    f["conv_grad"] = grad
    g, norm = tf.clip_by_global_norm([x, x * 3], 2.0)
    f["clip_global"], f["global_norm"] = g[1], norm
    # optimizers: 5 steps on the same quadratic, from the same start (TF1's formulas for these)
    start = np.array([1.5, -2.0, 0.5], np.float32)
    for key, opt in (("sgd", tf.train.GradientDescentOptimizer(0.1)), ("momentum", tf.train.MomentumOptimizer(0.1, 0.9)),
                     ("nesterov", tf.train.MomentumOptimizer(0.1, 0.9, use_nesterov=True)),
                     ("adagrad", tf.train.AdagradOptimizer(0.3)), ("adam", tf.train.AdamOptimizer(0.1))):
        w = tf.Variable(start, name="w_" + key)
        step = opt.minimize(tf.reduce_sum(tf.square(w - 1.0) * [1.0, 2.0, 3.0]))
        f["opt_" + key] = (w, step)
    return f, {x: a, images: img}


def evaluate(tf, sess, fetches, feeds) -> dict:
    """The values of ``fetches``; an optimizer's entry gives its variable after 5 steps."""
    sess.run(tf.global_variables_initializer())
    plain = {k: v for k, v in fetches.items() if not k.startswith("opt_")}
    out = sess.run(plain, feeds)
    for key, (w, step) in ((k, v) for k, v in fetches.items() if k.startswith("opt_")):
        for _ in range(5):
            sess.run(step)
        out[key] = sess.run(w)
    return out


if __name__ == "__main__":  # under real TensorFlow: write the values to the file named on the command line
    import sys

    import tensorflow.compat.v1 as real

    real.disable_v2_behavior()
    fetches, feeds = build(real)
    with real.Session() as session:
        values = evaluate(real, session, fetches, feeds)
    np.savez(sys.argv[1], **values)
