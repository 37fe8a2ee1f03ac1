"""A TF1 convolutional network written with ``tf.layers``, as TF1 tutorials write it: conv2d, batch
normalization and dropout driven by an ``is_training`` placeholder, the batch-norm moving averages
updated through ``tf.GraphKeys.UPDATE_OPS`` as control dependencies of the train op, on scikit-learn's
8x8 digits. Prints the test accuracy (in inference mode) last."""
from __future__ import print_function

import numpy as np
import tensorflow.compat.v1 as tf
from sklearn.datasets import load_digits

tf.disable_v2_behavior()
tf.set_random_seed(0)

digits = load_digits()
images = (digits.data / 16.0).astype(np.float32).reshape(-1, 8, 8, 1)
labels = digits.target.astype(np.int64)
order = np.random.RandomState(0).permutation(len(images))
train_x, train_y = images[order[:1500]], labels[order[:1500]]
test_x, test_y = images[order[1500:]], labels[order[1500:]]

x = tf.placeholder(tf.float32, [None, 8, 8, 1], name="x")
y = tf.placeholder(tf.int64, [None], name="y")
is_training = tf.placeholder(tf.bool, [], name="is_training")

net = tf.layers.conv2d(x, filters=16, kernel_size=3, padding="same", activation=tf.nn.relu)
net = tf.layers.batch_normalization(net, training=is_training)
net = tf.layers.max_pooling2d(net, pool_size=2, strides=2)
net = tf.layers.conv2d(net, filters=32, kernel_size=3, padding="same", activation=tf.nn.relu)
net = tf.layers.max_pooling2d(net, pool_size=2, strides=2)
net = tf.layers.flatten(net)
net = tf.layers.dense(net, 64, activation=tf.nn.relu)
net = tf.layers.dropout(net, rate=0.3, training=is_training)
logits = tf.layers.dense(net, 10)

loss = tf.losses.sparse_softmax_cross_entropy(labels=y, logits=logits)
update_ops = tf.get_collection(tf.GraphKeys.UPDATE_OPS)
with tf.control_dependencies(update_ops):
    train_op = tf.train.AdamOptimizer(0.005).minimize(loss)
correct = tf.equal(tf.argmax(logits, 1), y)
accuracy = tf.reduce_mean(tf.cast(correct, tf.float32))

moving_mean = tf.global_variables("batch_normalization/moving_mean")[0]
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    rng = np.random.RandomState(1)
    for step in range(300):
        batch = rng.randint(0, len(train_x), 64)
        _, cost = sess.run([train_op, loss], {x: train_x[batch], y: train_y[batch], is_training: True})
        if step % 100 == 0:
            print("step", step, "loss", cost)
    assert np.abs(sess.run(moving_mean)).sum() > 0, "the moving averages were never updated"
    print("accuracy", sess.run(accuracy, {x: test_x, y: test_y, is_training: False}))
