"""A convolutional MNIST classifier as TF1's "Deep MNIST for experts" tutorial builds it: weight and
bias helpers, name scopes, two conv/pool blocks, a dropout layer fed its keep probability, Adam, and
``accuracy.eval`` / ``train_step.run`` in a session. Smaller than the tutorial's (8 and 16 filters, a
hidden layer of 64, 150 steps) so it runs in seconds. Usage: ``mnist_deep.py --data_dir FOLDER``."""
from __future__ import absolute_import, division, print_function

import argparse
import sys
import tempfile

import tensorflow as tf
from tensorflow.examples.tutorials.mnist import input_data

FLAGS = None


def weight_variable(shape):
    return tf.Variable(tf.truncated_normal(shape, stddev=0.1))


def bias_variable(shape):
    return tf.Variable(tf.constant(0.1, shape=shape))


def conv2d(x, W):
    return tf.nn.conv2d(x, W, strides=[1, 1, 1, 1], padding='SAME')


def max_pool_2x2(x):
    return tf.nn.max_pool(x, ksize=[1, 2, 2, 1], strides=[1, 2, 2, 1], padding='SAME')


def deepnn(x):
    with tf.name_scope('reshape'):
        x_image = tf.reshape(x, [-1, 28, 28, 1])
    with tf.name_scope('conv1'):
        h_conv1 = tf.nn.relu(conv2d(x_image, weight_variable([5, 5, 1, 8])) + bias_variable([8]))
    with tf.name_scope('pool1'):
        h_pool1 = max_pool_2x2(h_conv1)
    with tf.name_scope('conv2'):
        h_conv2 = tf.nn.relu(conv2d(h_pool1, weight_variable([5, 5, 8, 16])) + bias_variable([16]))
    with tf.name_scope('pool2'):
        h_pool2 = max_pool_2x2(h_conv2)
    with tf.name_scope('fc1'):
        flat = tf.reshape(h_pool2, [-1, 7 * 7 * 16])
        h_fc1 = tf.nn.relu(tf.matmul(flat, weight_variable([7 * 7 * 16, 64])) + bias_variable([64]))
    with tf.name_scope('dropout'):
        keep_prob = tf.placeholder(tf.float32)
        h_fc1_drop = tf.nn.dropout(h_fc1, keep_prob)
    with tf.name_scope('fc2'):
        y_conv = tf.matmul(h_fc1_drop, weight_variable([64, 10])) + bias_variable([10])
    return y_conv, keep_prob


def main(_):
    mnist = input_data.read_data_sets(FLAGS.data_dir, one_hot=True)
    x = tf.placeholder(tf.float32, [None, 784])
    y_ = tf.placeholder(tf.float32, [None, 10])
    y_conv, keep_prob = deepnn(x)

    with tf.name_scope('loss'):
        cross_entropy = tf.nn.softmax_cross_entropy_with_logits(labels=y_, logits=y_conv)
    cross_entropy = tf.reduce_mean(cross_entropy)
    with tf.name_scope('adam_optimizer'):
        train_step = tf.train.AdamOptimizer(2e-3).minimize(cross_entropy)
    with tf.name_scope('accuracy'):
        correct_prediction = tf.cast(tf.equal(tf.argmax(y_conv, 1), tf.argmax(y_, 1)), tf.float32)
    accuracy = tf.reduce_mean(correct_prediction)

    train_writer = tf.summary.FileWriter(tempfile.mkdtemp())
    train_writer.add_graph(tf.get_default_graph())

    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for i in range(150):
            batch = mnist.train.next_batch(50)
            if i % 50 == 0:
                train_accuracy = accuracy.eval(feed_dict={x: batch[0], y_: batch[1], keep_prob: 1.0})
                print('step %d, training accuracy %g' % (i, train_accuracy))
            train_step.run(feed_dict={x: batch[0], y_: batch[1], keep_prob: 0.5})
        print('accuracy %g' % accuracy.eval(feed_dict={x: mnist.test.images, y_: mnist.test.labels,
                                                       keep_prob: 1.0}))


if __name__ == '__main__':
    parser = argparse.ArgumentParser()
    parser.add_argument('--data_dir', type=str, default='/tmp/tensorflow/mnist/input_data')
    FLAGS, unparsed = parser.parse_known_args()
    tf.app.run(main=main, argv=[sys.argv[0]] + unparsed)
