"""A bidirectional LSTM classifier in the style of TensorFlow-Examples' ``bidirectional_rnn.py``: each
image read row by row as a list of time steps (``tf.unstack``), ``rnn.static_bidirectional_rnn`` of two
``rnn.BasicLSTMCell`` from ``tensorflow.contrib``, the last output (both directions concatenated) through
a linear layer of ``tf.Variable`` weights. scikit-learn's 8x8 digits stand in for MNIST. Prints the
accuracy last."""
from __future__ import print_function

import numpy as np
import tensorflow as tf
from sklearn.datasets import load_digits
from tensorflow.contrib import rnn

learning_rate = 0.5
training_steps = 200
batch_size = 64
display_step = 50

num_input, timesteps, num_hidden, num_classes = 8, 8, 32, 10

digits = load_digits()
data = (digits.images / 16.0).astype(np.float32)
targets = np.eye(num_classes)[digits.target]  # float64 one-hot rows, fed to a float32 placeholder
train_x, train_y, test_x, test_y = data[:1500], targets[:1500], data[1500:], targets[1500:]

tf.set_random_seed(1)
X = tf.placeholder("float", [None, timesteps, num_input])
Y = tf.placeholder("float", [None, num_classes])
weights = {'out': tf.Variable(tf.random_normal([2 * num_hidden, num_classes]))}
biases = {'out': tf.Variable(tf.random_normal([num_classes]))}


def BiRNN(x, weights, biases):
    x = tf.unstack(x, timesteps, 1)
    lstm_fw_cell = rnn.BasicLSTMCell(num_hidden, forget_bias=1.0)
    lstm_bw_cell = rnn.BasicLSTMCell(num_hidden, forget_bias=1.0)
    outputs, _, _ = rnn.static_bidirectional_rnn(lstm_fw_cell, lstm_bw_cell, x, dtype=tf.float32)
    return tf.matmul(outputs[-1], weights['out']) + biases['out']


logits = BiRNN(X, weights, biases)
prediction = tf.nn.softmax(logits)
loss_op = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(logits=logits, labels=Y))
train_op = tf.train.GradientDescentOptimizer(learning_rate=learning_rate).minimize(loss_op)
correct_pred = tf.equal(tf.argmax(prediction, 1), tf.argmax(Y, 1))
accuracy = tf.reduce_mean(tf.cast(correct_pred, tf.float32))
init = tf.global_variables_initializer()

with tf.Session() as sess:
    sess.run(init)
    rng = np.random.RandomState(0)
    for step in range(1, training_steps + 1):
        pick = rng.randint(0, len(train_x), batch_size)
        batch_x, batch_y = train_x[pick], train_y[pick]
        sess.run(train_op, feed_dict={X: batch_x, Y: batch_y})
        if step % display_step == 0 or step == 1:
            loss, acc = sess.run([loss_op, accuracy], feed_dict={X: batch_x, Y: batch_y})
            print("Step " + str(step) + ", Minibatch Loss= {:.4f}, Training Accuracy= {:.3f}".format(loss, acc))
    print("Optimization Finished!")
    print("accuracy %.4f" % sess.run(accuracy, feed_dict={X: test_x, Y: test_y}))
