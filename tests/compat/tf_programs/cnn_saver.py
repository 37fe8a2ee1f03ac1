"""TF1's "Deep MNIST for experts" convolutional network, as its tutorial writes it (weight_variable /
bias_variable helpers, ``tf.nn.conv2d`` and ``tf.nn.max_pool`` in NHWC with 'SAME' padding, dropout with
a ``keep_prob`` placeholder, Adam, ``accuracy.eval`` and ``train_step.run``), sized for scikit-learn's
8x8 digits, then saved with ``tf.train.Saver``, re-initialized and restored. Prints the restored
model's test accuracy last."""
from __future__ import print_function

import os
import tempfile

import numpy as np
import tensorflow.compat.v1 as tf
from sklearn.datasets import load_digits

tf.disable_v2_behavior()
tf.set_random_seed(0)

digits = load_digits()
images = (digits.data / 16.0).astype(np.float32)                 # (1797, 64)
labels = np.eye(10, dtype=np.float32)[digits.target]
order = np.random.RandomState(0).permutation(len(images))
train_x, train_y = images[order[:1500]], labels[order[:1500]]
test_x, test_y = images[order[1500:]], labels[order[1500:]]


def weight_variable(shape):
    initial = tf.truncated_normal(shape, stddev=0.1)
    return tf.Variable(initial)


def bias_variable(shape):
    initial = tf.constant(0.1, shape=shape)
    return tf.Variable(initial)


def conv2d(x, W):
    return tf.nn.conv2d(x, W, strides=[1, 1, 1, 1], padding='SAME')


def max_pool_2x2(x):
    return tf.nn.max_pool(x, ksize=[1, 2, 2, 1], strides=[1, 2, 2, 1], padding='SAME')


x = tf.placeholder(tf.float32, shape=[None, 64])
y_ = tf.placeholder(tf.float32, shape=[None, 10])
x_image = tf.reshape(x, [-1, 8, 8, 1])

W_conv1 = weight_variable([3, 3, 1, 16])
b_conv1 = bias_variable([16])
h_conv1 = tf.nn.relu(conv2d(x_image, W_conv1) + b_conv1)
h_pool1 = max_pool_2x2(h_conv1)                                   # 4x4x16

W_conv2 = weight_variable([3, 3, 16, 32])
b_conv2 = bias_variable([32])
h_conv2 = tf.nn.relu(conv2d(h_pool1, W_conv2) + b_conv2)
h_pool2 = max_pool_2x2(h_conv2)                                   # 2x2x32

W_fc1 = weight_variable([2 * 2 * 32, 128])
b_fc1 = bias_variable([128])
h_pool2_flat = tf.reshape(h_pool2, [-1, 2 * 2 * 32])
h_fc1 = tf.nn.relu(tf.matmul(h_pool2_flat, W_fc1) + b_fc1)

keep_prob = tf.placeholder(tf.float32)
h_fc1_drop = tf.nn.dropout(h_fc1, keep_prob)

W_fc2 = weight_variable([128, 10])
b_fc2 = bias_variable([10])
y_conv = tf.matmul(h_fc1_drop, W_fc2) + b_fc2

cross_entropy = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(labels=y_, logits=y_conv))
train_step = tf.train.AdamOptimizer(1e-3).minimize(cross_entropy)
correct_prediction = tf.equal(tf.argmax(y_conv, 1), tf.argmax(y_, 1))
accuracy = tf.reduce_mean(tf.cast(correct_prediction, tf.float32))

saver = tf.train.Saver(max_to_keep=2)
ckpt_dir = tempfile.mkdtemp()
batches = np.random.RandomState(1)

with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    for i in range(1000):
        pick = batches.randint(0, len(train_x), 50)
        batch = (train_x[pick], train_y[pick])
        if i % 100 == 0:
            train_accuracy = accuracy.eval(feed_dict={x: batch[0], y_: batch[1], keep_prob: 1.0})
            print('step %d, training accuracy %g' % (i, train_accuracy))
        train_step.run(feed_dict={x: batch[0], y_: batch[1], keep_prob: 0.5})
        if (i + 1) % 250 == 0:
            save_path = saver.save(sess, os.path.join(ckpt_dir, "model.ckpt"), global_step=i + 1)
    print('test accuracy %g' % accuracy.eval(feed_dict={x: test_x, y_: test_y, keep_prob: 1.0}))

print('kept checkpoints', sorted(os.path.basename(p) for p in saver.last_checkpoints))
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())  # fresh weights...
    fresh = accuracy.eval(feed_dict={x: test_x, y_: test_y, keep_prob: 1.0})
    saver.restore(sess, tf.train.latest_checkpoint(ckpt_dir))  # ...replaced by the trained ones
    print('fresh accuracy %g' % fresh)
    print('accuracy %g' % accuracy.eval(feed_dict={x: test_x, y_: test_y, keep_prob: 1.0}))
