"""A TF1 recurrent classifier as TF1 tutorials write it: each 8x8 digit read row by row (8 time steps
of 8 features) by an LSTM through ``tf.nn.dynamic_rnn`` with ``sequence_length``, its final state's
``h`` fed to a dense layer, trained with Adam. Prints the test accuracy last."""
from __future__ import print_function

import numpy as np
import tensorflow.compat.v1 as tf
from sklearn.datasets import load_digits

tf.disable_v2_behavior()
tf.set_random_seed(0)

digits = load_digits()
images = (digits.data / 16.0).astype(np.float32).reshape(-1, 8, 8)
labels = digits.target.astype(np.int32)
order = np.random.RandomState(0).permutation(len(images))
train_x, train_y = images[order[:1500]], labels[order[:1500]]
test_x, test_y = images[order[1500:]], labels[order[1500:]]

n_steps, n_inputs, n_hidden, n_classes = 8, 8, 48, 10
x = tf.placeholder(tf.float32, [None, n_steps, n_inputs])
y = tf.placeholder(tf.int32, [None])
seq_len = tf.placeholder(tf.int32, [None])

cell = tf.nn.rnn_cell.BasicLSTMCell(n_hidden)
outputs, state = tf.nn.dynamic_rnn(cell, x, sequence_length=seq_len, dtype=tf.float32)
logits = tf.layers.dense(state.h, n_classes)

loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
train_op = tf.train.AdamOptimizer(0.01).minimize(loss)
accuracy = tf.reduce_mean(tf.cast(tf.equal(tf.cast(tf.argmax(logits, 1), tf.int32), y), tf.float32))

with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    rng = np.random.RandomState(1)
    for step in range(300):
        batch = rng.randint(0, len(train_x), 64)
        feed = {x: train_x[batch], y: train_y[batch], seq_len: np.full(64, n_steps)}
        _, cost = sess.run([train_op, loss], feed)
        if step % 100 == 0:
            print("step", step, "loss", cost)
    print("accuracy", sess.run(accuracy, {x: test_x, y: test_y, seq_len: np.full(len(test_x), n_steps)}))
