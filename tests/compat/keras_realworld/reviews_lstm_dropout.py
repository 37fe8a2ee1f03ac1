"""A Keras 2 script in the style of the classic "LSTM on IMDB" example: an Embedding, an LSTM with
``dropout`` and ``recurrent_dropout`` (Keras' masks, the same at every step) and a sigmoid output,
imported through Keras 2's paths (``keras.layers.recurrent``, ``keras.layers.embeddings``). The
reviews are generated as in reviews_conv1d.py."""
from __future__ import print_function

import numpy as np

from keras.preprocessing import sequence
from keras.models import Sequential
from keras.layers import Dense
from keras.layers.embeddings import Embedding
from keras.layers.recurrent import LSTM
from keras.callbacks import EarlyStopping
import keras

keras.utils.set_random_seed(3)

max_features = 100
maxlen = 30
batch_size = 32

rng = np.random.default_rng(3)


def make_reviews(n):
    labels = rng.integers(0, 2, n)
    reviews = []
    for label in labels:
        words = rng.integers(14, max_features, rng.integers(8, 40)).tolist()
        for _ in range(2):
            words.insert(int(rng.integers(0, len(words))), int(rng.integers(4, 9) + 5 * (1 - label)))
        reviews.append(words)
    return reviews, labels


x_train, y_train = make_reviews(600)
x_test, y_test = make_reviews(200)
x_train = sequence.pad_sequences(x_train, maxlen=maxlen)
x_test = sequence.pad_sequences(x_test, maxlen=maxlen)
print('x_train shape:', x_train.shape)

model = Sequential()
model.add(Embedding(max_features, 32))
model.add(LSTM(32, dropout=0.2, recurrent_dropout=0.2))
model.add(Dense(1, activation='sigmoid'))

model.compile(loss='binary_crossentropy', optimizer=keras.optimizers.Adam(learning_rate=0.005),
              metrics=['accuracy'])

print('Train...')
model.fit(x_train, y_train, batch_size=batch_size, epochs=5, validation_split=0.1, verbose=2,
          callbacks=[EarlyStopping(monitor='val_loss', patience=2)])
score, acc = model.evaluate(x_test, y_test, batch_size=batch_size, verbose=0)
print('Test score:', score)
print('accuracy', acc)
