"""A Keras 2 script in the style of the classic "Conv1D on IMDB" example: Keras 2 module paths
(``keras.preprocessing.sequence``, ``keras.layers``), a Sequential model of Embedding, Dropout,
Conv1D, GlobalMaxPooling1D and Dense layers, reviews of different lengths padded with
``sequence.pad_sequences``. The reviews are generated: word ids 4-8 mark a positive review, 9-13 a
negative one, among noise words."""
from __future__ import print_function

import numpy as np

from keras.preprocessing import sequence
from keras.models import Sequential
from keras.layers import Dense, Dropout, Activation
from keras.layers import Embedding
from keras.layers import Conv1D, GlobalMaxPooling1D
import keras

keras.utils.set_random_seed(1)

max_features = 200
maxlen = 60
batch_size = 32
embedding_dims = 16
filters = 32
kernel_size = 3
hidden_dims = 32
epochs = 3

rng = np.random.default_rng(1)


def make_reviews(n):
    labels = rng.integers(0, 2, n)
    reviews = []
    for label in labels:
        words = rng.integers(14, max_features, rng.integers(10, 90)).tolist()
        for _ in range(3):  # three telling words somewhere in the review
            words.insert(int(rng.integers(0, len(words))), int(rng.integers(4, 9) + 5 * (1 - label)))
        reviews.append([1] + words)  # 1 starts each review, as in Keras' imdb data
    return reviews, labels


print('Loading data...')
x_train, y_train = make_reviews(800)
x_test, y_test = make_reviews(300)
print(len(x_train), 'train sequences')

print('Pad sequences (samples x time)')
x_train = sequence.pad_sequences(x_train, maxlen=maxlen)
x_test = sequence.pad_sequences(x_test, maxlen=maxlen)
print('x_train shape:', x_train.shape)

print('Build model...')
model = Sequential()
model.add(Embedding(max_features, embedding_dims, input_length=maxlen))
model.add(Dropout(0.2))
model.add(Conv1D(filters, kernel_size, padding='valid', activation='relu', strides=1))
model.add(GlobalMaxPooling1D())
model.add(Dense(hidden_dims))
model.add(Dropout(0.2))
model.add(Activation('relu'))
model.add(Dense(1))
model.add(Activation('sigmoid'))

model.compile(loss='binary_crossentropy', optimizer='adam', metrics=['accuracy'])
model.fit(x_train, y_train, batch_size=batch_size, epochs=epochs, validation_data=(x_test, y_test), verbose=2)
score, acc = model.evaluate(x_test, y_test, batch_size=batch_size, verbose=0)
print('Test score:', score)
print('accuracy', acc)
