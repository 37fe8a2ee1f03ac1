"""A CNN fed by ``tf.data`` in the style of TensorFlow-Examples' dataset API example: the images and
labels sliced into a shuffled, repeated, batched, prefetched dataset read through an initializable
iterator, so that ``sess.run(train_op)`` takes no feed_dict; the network is built twice in one
``variable_scope`` (training with dropout, then ``reuse=True`` for testing) from ``tf.layers`` and
``tf.contrib.layers.flatten``. scikit-learn's 8x8 digits stand in for MNIST. Prints the accuracy last."""
from __future__ import division, print_function

import numpy as np
import tensorflow as tf
from sklearn.datasets import load_digits

learning_rate = 0.005
num_steps = 150
batch_size = 64
display_step = 50

digits = load_digits()
images = (digits.data / 16.0).astype(np.float32)
labels = np.eye(10, dtype=np.float32)[digits.target]
train_images, train_labels = images[:1500], labels[:1500]
test_images, test_labels = images[1500:], labels[1500:]

sess = tf.Session()
dataset = tf.data.Dataset.from_tensor_slices((train_images, train_labels))
dataset = dataset.shuffle(buffer_size=500, seed=0).repeat().batch(batch_size).prefetch(batch_size)
iterator = dataset.make_initializable_iterator()
sess.run(iterator.initializer)
X, Y = iterator.get_next()


def conv_net(x, n_classes, dropout, reuse, is_training):
    with tf.variable_scope('ConvNet', reuse=reuse):
        x = tf.reshape(x, shape=[-1, 8, 8, 1])
        conv1 = tf.layers.conv2d(x, 16, 3, activation=tf.nn.relu, padding='same')
        conv1 = tf.layers.max_pooling2d(conv1, 2, 2)
        conv2 = tf.layers.conv2d(conv1, 32, 3, activation=tf.nn.relu)
        fc1 = tf.contrib.layers.flatten(conv2)
        fc1 = tf.layers.dense(fc1, 64)
        fc1 = tf.layers.dropout(fc1, rate=dropout, training=is_training)
        out = tf.layers.dense(fc1, n_classes)
        out = tf.nn.softmax(out) if not is_training else out
    return out


logits_train = conv_net(X, 10, 0.25, reuse=False, is_training=True)
logits_test = conv_net(X, 10, 0.25, reuse=True, is_training=False)

loss_op = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(logits=logits_train, labels=Y))
train_op = tf.train.AdamOptimizer(learning_rate=learning_rate).minimize(loss_op)
correct_pred = tf.equal(tf.argmax(logits_test, 1), tf.argmax(Y, 1))
accuracy = tf.reduce_mean(tf.cast(correct_pred, tf.float32))

sess.run(tf.global_variables_initializer())
for step in range(1, num_steps + 1):
    sess.run(train_op)
    if step % display_step == 0 or step == 1:
        loss, acc = sess.run([loss_op, accuracy])  # takes a batch of its own
        print("Step " + str(step) + ", Minibatch Loss= {:.4f}, Training Accuracy= {:.3f}".format(loss, acc))
print("variables", len(tf.trainable_variables()))

# the test images through another dataset of the same structure, read to its end
test_iterator = tf.data.Dataset.from_tensor_slices((test_images, test_labels)).batch(100) \
    .make_one_shot_iterator()
test_x, test_y = test_iterator.get_next()
test_correct = tf.reduce_sum(tf.cast(tf.equal(tf.argmax(conv_net(test_x, 10, 0.25, True, False), 1),
                                              tf.argmax(test_y, 1)), tf.float32))
right = 0.0
while True:
    try:
        right += sess.run(test_correct)
    except tf.errors.OutOfRangeError:
        break
print("accuracy %.4f" % (right / len(test_images)))
