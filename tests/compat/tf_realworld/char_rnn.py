"""A character-level language model in the style of char-rnn-tensorflow: a ``Model`` class built from
an ``args`` namespace (a ``MultiRNNCell`` of ``LSTMCell`` behind ``DropoutWrapper``, its ``zero_state``
fed back as the next batch's initial state, ``tf.split``/``tf.squeeze`` into steps,
``legacy_seq2seq.rnn_decoder`` and ``sequence_loss_by_example``, gradients clipped with
``clip_by_global_norm`` and applied by Adam at a learning rate held in a Variable), trained, saved with a
Saver, then rebuilt for sampling (batch 1, one step, ``training=False``) in a fresh graph and restored.
Prints the share of the text's next characters the restored model predicts, last."""
from __future__ import print_function

import argparse
import os
import tempfile

import numpy as np
import tensorflow as tf
from tensorflow.contrib import legacy_seq2seq
from tensorflow.contrib import rnn

TEXT = "the quick brown fox jumps over the lazy dog. " * 40


class Model():
    def __init__(self, args, training=True):
        self.args = args
        if not training:
            args.batch_size = 1
            args.seq_length = 1
        cells = []
        for _ in range(args.num_layers):
            cell = rnn.LSTMCell(args.rnn_size)
            if training and args.output_keep_prob < 1.0:
                cell = rnn.DropoutWrapper(cell, output_keep_prob=args.output_keep_prob)
            cells.append(cell)
        self.cell = cell = rnn.MultiRNNCell(cells, state_is_tuple=True)

        self.input_data = tf.placeholder(tf.int32, [args.batch_size, args.seq_length])
        self.targets = tf.placeholder(tf.int32, [args.batch_size, args.seq_length])
        self.initial_state = cell.zero_state(args.batch_size, tf.float32)

        with tf.variable_scope('rnnlm'):
            softmax_w = tf.get_variable("softmax_w", [args.rnn_size, args.vocab_size])
            softmax_b = tf.get_variable("softmax_b", [args.vocab_size])
        embedding = tf.get_variable("embedding", [args.vocab_size, args.rnn_size])
        inputs = tf.nn.embedding_lookup(embedding, self.input_data)
        inputs = tf.split(inputs, args.seq_length, 1)
        inputs = [tf.squeeze(input_, [1]) for input_ in inputs]

        outputs, last_state = legacy_seq2seq.rnn_decoder(inputs, self.initial_state, cell, scope='rnnlm')
        output = tf.reshape(tf.concat(outputs, 1), [-1, args.rnn_size])
        self.logits = tf.matmul(output, softmax_w) + softmax_b
        self.probs = tf.nn.softmax(self.logits)
        loss = legacy_seq2seq.sequence_loss_by_example(
            [self.logits], [tf.reshape(self.targets, [-1])], [tf.ones([args.batch_size * args.seq_length])])
        with tf.name_scope('cost'):
            self.cost = tf.reduce_sum(loss) / args.batch_size / args.seq_length
        self.final_state = last_state
        self.lr = tf.Variable(0.0, trainable=False)
        tvars = tf.trainable_variables()
        grads, _ = tf.clip_by_global_norm(tf.gradients(self.cost, tvars), args.grad_clip)
        with tf.name_scope('optimizer'):
            optimizer = tf.train.AdamOptimizer(self.lr)
        self.train_op = optimizer.apply_gradients(zip(grads, tvars))


def batches(data, args):
    n = len(data) // (args.batch_size * args.seq_length)
    xdata = data[:n * args.batch_size * args.seq_length]
    ydata = np.copy(xdata)
    ydata[:-1], ydata[-1] = xdata[1:], xdata[0]
    x = np.split(xdata.reshape(args.batch_size, -1), n, 1)
    y = np.split(ydata.reshape(args.batch_size, -1), n, 1)
    return list(zip(x, y))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--rnn_size', type=int, default=48)
    parser.add_argument('--num_layers', type=int, default=2)
    parser.add_argument('--seq_length', type=int, default=20)
    parser.add_argument('--batch_size', type=int, default=10)
    parser.add_argument('--num_epochs', type=int, default=8)
    parser.add_argument('--grad_clip', type=float, default=5.)
    parser.add_argument('--learning_rate', type=float, default=0.01)
    parser.add_argument('--decay_rate', type=float, default=0.97)
    parser.add_argument('--output_keep_prob', type=float, default=0.9)
    parser.add_argument('--save_dir', type=str, default=tempfile.mkdtemp())
    args = parser.parse_args()

    chars = sorted(set(TEXT))
    vocab = dict(zip(chars, range(len(chars))))
    args.vocab_size = len(chars)
    data = np.array([vocab[c] for c in TEXT])
    tf.set_random_seed(0)

    model = Model(args)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        saver = tf.train.Saver(tf.global_variables())
        for e in range(args.num_epochs):
            sess.run(tf.assign(model.lr, args.learning_rate * (args.decay_rate ** e)))
            state = sess.run(model.initial_state)
            for x, y in batches(data, args):
                feed = {model.input_data: x, model.targets: y}
                for i, (c, h) in enumerate(model.initial_state):
                    feed[c] = state[i].c
                    feed[h] = state[i].h
                train_loss, state, _ = sess.run([model.cost, model.final_state, model.train_op], feed)
            print("epoch {}, train_loss = {:.3f}".format(e, train_loss))
        checkpoint_path = saver.save(sess, os.path.join(args.save_dir, 'model.ckpt'), global_step=e)

    tf.reset_default_graph()
    model = Model(args, training=False)
    with tf.Session() as sess:
        tf.global_variables_initializer().run()
        saver = tf.train.Saver(tf.global_variables())
        saver.restore(sess, tf.train.latest_checkpoint(args.save_dir))
        assert tf.train.latest_checkpoint(args.save_dir) == checkpoint_path
        state = sess.run(model.cell.zero_state(1, tf.float32))
        right, text = 0, TEXT[:200]
        for i, char in enumerate(text[:-1]):
            feed = {model.input_data: [[vocab[char]]], model.initial_state: state}
            probs, state = sess.run([model.probs, model.final_state], feed)
            right += chars[int(np.argmax(probs[0]))] == text[i + 1]
        print("sample:", "".join(chars[int(np.argmax(p))] for p in [probs[0]]))
        print("accuracy %.4f" % (right / float(len(text) - 1)))


if __name__ == '__main__':
    main()
