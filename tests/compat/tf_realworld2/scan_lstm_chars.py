"""A character LSTM whose recurrence is a tf.scan over the time axis (the "RNN from scratch" style
of TF1 tutorials): the state is the stacked (output, cell) pair, a placeholder feeds the initial
state, Adam trains through the scan, a Saver writes a checkpoint, and generation restores it and
feeds the last state back one character at a time."""
import os
import sys
import tempfile

import numpy as np
import tensorflow as tf

TEXT = "the quick brown fox jumps over the lazy dog. " * 40
STATE, SEQ, BATCH, STEPS = 32, 12, 16, 60

chars = sorted(set(TEXT))
index = {c: i for i, c in enumerate(chars)}
data = np.array([index[c] for c in TEXT], np.int32)
n = (len(data) - 1) // SEQ
X, Y = data[:n * SEQ].reshape(n, SEQ), data[1:n * SEQ + 1].reshape(n, SEQ)


def build(vocab):
    tf.reset_default_graph()
    xs = tf.placeholder(tf.int32, [None, None])
    ys = tf.placeholder(tf.int32, [None])
    init_state = tf.placeholder(tf.float32, [2, None, STATE], name="initial_state")
    emb = tf.get_variable("emb", [vocab, STATE])
    W = tf.get_variable("W", [4, STATE, STATE], initializer=tf.glorot_uniform_initializer())
    U = tf.get_variable("U", [4, STATE, STATE], initializer=tf.glorot_uniform_initializer())

    def step(prev, x):
        h, c = tf.unstack(prev)
        i = tf.sigmoid(tf.matmul(x, U[0]) + tf.matmul(h, W[0]))
        f = tf.sigmoid(tf.matmul(x, U[1]) + tf.matmul(h, W[1]))
        o = tf.sigmoid(tf.matmul(x, U[2]) + tf.matmul(h, W[2]))
        g = tf.tanh(tf.matmul(x, U[3]) + tf.matmul(h, W[3]))
        c = c * f + g * i
        return tf.stack([tf.tanh(c) * o, c])

    states = tf.scan(step, tf.transpose(tf.nn.embedding_lookup(emb, xs), [1, 0, 2]), initializer=init_state)
    last_state = states[-1]
    outputs = tf.reshape(tf.transpose(states, [1, 2, 0, 3])[0], [-1, STATE])
    V = tf.get_variable("V", [STATE, vocab])
    bo = tf.get_variable("bo", [vocab], initializer=tf.constant_initializer(0.0))
    logits = tf.matmul(outputs, V) + bo
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(logits=logits, labels=ys))
    train_op = tf.train.AdamOptimizer(0.02).minimize(loss)
    return xs, ys, init_state, loss, train_op, tf.nn.softmax(logits), last_state


folder = tempfile.mkdtemp()
xs, ys, init_state, loss, train_op, probs, last_state = build(len(chars))
rng = np.random.RandomState(0)
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    losses = []
    for step in range(STEPS):
        pick = rng.choice(n, BATCH, replace=False)
        # the batch's time axis is fed: each run's scan length is decided by the feed
        length = SEQ if step % 2 == 0 else SEQ - 4
        _, value = sess.run([train_op, loss], {xs: X[pick, :length], ys: Y[pick, :length].flatten(),
                                               init_state: np.zeros([2, BATCH, STATE])})
        losses.append(value)
    path = tf.train.Saver().save(sess, os.path.join(folder, "lstm"), global_step=STEPS)

xs, ys, init_state, loss, train_op, probs, last_state = build(len(chars))
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    tf.train.Saver().restore(sess, tf.train.latest_checkpoint(folder))
    word, state, text = index["t"], np.zeros([2, 1, STATE]), "t"
    for _ in range(30):
        p, state = sess.run([probs, last_state], {xs: [[word]], init_state: state})
        word = int(np.argmax(p[-1]))
        text += chars[word]
print("first loss %.3f last loss %.3f" % (np.mean(losses[:5]), np.mean(losses[-5:])))
print("generated:", text)
sys.exit(0 if np.mean(losses[-5:]) < 0.7 * np.mean(losses[:5]) else 1)
