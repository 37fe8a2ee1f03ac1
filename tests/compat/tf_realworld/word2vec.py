"""A skip-gram word2vec in the style of TensorFlow-Examples' ``word2vec.py``: a vocabulary built with
``collections.Counter``, (word, context) batches cut from the text, an embedding looked up with
``tf.nn.embedding_lookup`` under ``tf.device('/cpu:0')``, trained on ``tf.nn.nce_loss`` with plain
gradient descent, and the nearest neighbours by cosine similarity. The text is made here: ten topics of
six words each, every sentence drawn from one topic, so a word's neighbours should be its topic's. Prints
the share of words whose nearest neighbour shares their topic last."""
from __future__ import division, print_function

import collections
import random

import numpy as np
import tensorflow as tf

learning_rate = 1.0
batch_size = 128
num_steps = 500
display_step = 100
embedding_size = 16
skip_window = 2
num_skips = 2
num_sampled = 16

random.seed(0)
topics = [['t%dw%d' % (t, w) for w in range(6)] for t in range(10)]
text_words = []
for _ in range(3000):
    topic = topics[random.randrange(10)]
    text_words.extend(random.choice(topic) for _ in range(5))

count = [('UNK', -1)]
count.extend(collections.Counter(text_words).most_common(1000))
word2id = {word: i for i, (word, _) in enumerate(count)}
id2word = dict(zip(word2id.values(), word2id.keys()))
data = [word2id.get(word, 0) for word in text_words]
vocabulary_size = len(count)

data_index = 0


def next_batch(batch_size, num_skips, skip_window):
    global data_index
    batch = np.ndarray(shape=(batch_size), dtype=np.int32)
    labels = np.ndarray(shape=(batch_size, 1), dtype=np.int32)
    span = 2 * skip_window + 1
    buffer = collections.deque(maxlen=span)
    if data_index + span > len(data):
        data_index = 0
    buffer.extend(data[data_index:data_index + span])
    data_index += span
    for i in range(batch_size // num_skips):
        context_words = [w for w in range(span) if w != skip_window]
        for j, context_word in enumerate(random.sample(context_words, num_skips)):
            batch[i * num_skips + j] = buffer[skip_window]
            labels[i * num_skips + j, 0] = buffer[context_word]
        if data_index == len(data):
            buffer.extend(data[0:span])
            data_index = span
        else:
            buffer.append(data[data_index])
            data_index += 1
    data_index = (data_index + len(data) - span) % len(data)
    return batch, labels


X = tf.placeholder(tf.int32, shape=[None])
Y = tf.placeholder(tf.int32, shape=[None, 1])
with tf.device('/cpu:0'):
    embedding = tf.Variable(tf.random_normal([vocabulary_size, embedding_size]))
    X_embed = tf.nn.embedding_lookup(embedding, X)
    nce_weights = tf.Variable(tf.random_normal([vocabulary_size, embedding_size]))
    nce_biases = tf.Variable(tf.zeros([vocabulary_size]))

loss_op = tf.reduce_mean(tf.nn.nce_loss(weights=nce_weights, biases=nce_biases, labels=Y, inputs=X_embed,
                                        num_sampled=num_sampled, num_classes=vocabulary_size))
train_op = tf.train.GradientDescentOptimizer(learning_rate).minimize(loss_op)

X_embed_norm = X_embed / tf.sqrt(tf.reduce_sum(tf.square(X_embed)))
embedding_norm = embedding / tf.sqrt(tf.reduce_sum(tf.square(embedding), 1, keepdims=True))
cosine_sim_op = tf.matmul(X_embed_norm, embedding_norm, transpose_b=True)

with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    average_loss = 0
    for step in range(1, num_steps + 1):
        batch_x, batch_y = next_batch(batch_size, num_skips, skip_window)
        _, loss = sess.run([train_op, loss_op], feed_dict={X: batch_x, Y: batch_y})
        average_loss += loss
        if step % display_step == 0 or step == 1:
            print("Step " + str(step) + ", Average Loss= {:.4f}".format(average_loss / (display_step if step > 1
                                                                                        else 1)))
            average_loss = 0
    words = np.arange(1, vocabulary_size)
    sim = sess.run(cosine_sim_op, feed_dict={X: words})
    same = 0
    for i, word in enumerate(words):
        nearest = (-sim[i, :]).argsort()[1]  # [0] is the word itself
        same += id2word[nearest].split('w')[0] == id2word[word].split('w')[0]
    print('"%s" nearest neighbors: %s' % (id2word[1], ', '.join(id2word[k] for k in (-sim[0]).argsort()[1:6])))
    print("accuracy %.4f" % (same / len(words)))
