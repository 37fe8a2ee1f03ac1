"""TF1's "MNIST for ML beginners" softmax regression, as its tutorial writes it (InteractiveSession,
``tf.nn.softmax_cross_entropy_with_logits``, ``init.run()``, ``next_batch(100)``), on MNIST-shaped data
made from scikit-learn's bundled 8x8 digits (each scaled up to 28x28 = 784 pixels in [0, 1]; no
download). Prints the test accuracy last."""
from __future__ import print_function

import numpy as np
import tensorflow.compat.v1 as tf
from sklearn.datasets import load_digits

tf.disable_v2_behavior()


class _DataSet(object):
    """What ``mnist.train`` / ``mnist.test`` give in the tutorial: images (N, 784), one-hot labels."""

    def __init__(self, images, labels):
        self.images, self.labels = images, labels
        self._index, self._rng = 0, np.random.RandomState(0)

    def next_batch(self, batch_size):
        if self._index + batch_size > len(self.images):
            order = self._rng.permutation(len(self.images))
            self.images, self.labels, self._index = self.images[order], self.labels[order], 0
        start, self._index = self._index, self._index + batch_size
        return self.images[start:self._index], self.labels[start:self._index]


def read_data_sets():
    digits = load_digits()
    images = np.kron(digits.images, np.ones((3, 3)))              # 8x8 -> 24x24
    images = np.pad(images, ((0, 0), (2, 2), (2, 2))) / 16.0      # -> 28x28, like MNIST
    images = images.reshape(-1, 784).astype(np.float32)
    labels = np.eye(10, dtype=np.float32)[digits.target]
    order = np.random.RandomState(1).permutation(len(images))
    images, labels = images[order], labels[order]
    mnist = lambda: None  # noqa: E731
    mnist.train, mnist.test = _DataSet(images[:1500], labels[:1500]), _DataSet(images[1500:], labels[1500:])
    return mnist


mnist = read_data_sets()

# Create the model
x = tf.placeholder(tf.float32, [None, 784])
W = tf.Variable(tf.zeros([784, 10]))
b = tf.Variable(tf.zeros([10]))
y = tf.matmul(x, W) + b

# Define loss and optimizer
y_ = tf.placeholder(tf.float32, [None, 10])
cross_entropy = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(labels=y_, logits=y))
train_step = tf.train.GradientDescentOptimizer(0.5).minimize(cross_entropy)

sess = tf.InteractiveSession()
tf.global_variables_initializer().run()

# Train
for _ in range(1000):
    batch_xs, batch_ys = mnist.train.next_batch(100)
    sess.run(train_step, feed_dict={x: batch_xs, y_: batch_ys})

# Test trained model
correct_prediction = tf.equal(tf.argmax(y, 1), tf.argmax(y_, 1))
accuracy = tf.reduce_mean(tf.cast(correct_prediction, tf.float32))
print("loss", cross_entropy.eval(feed_dict={x: mnist.train.images, y_: mnist.train.labels}))
print("accuracy", sess.run(accuracy, feed_dict={x: mnist.test.images, y_: mnist.test.labels}))
sess.close()
