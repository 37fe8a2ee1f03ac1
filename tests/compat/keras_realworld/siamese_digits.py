"""A Keras 2 script in the style of the classic "siamese network on MNIST" example: one base network
shared by two inputs, their Euclidean distance in a ``Lambda`` (given Keras 2's ``output_shape``),
the contrastive loss and a thresholded accuracy as plain functions of ``keras.backend``, trained on
pairs of same and different digits (scikit-learn's 8x8 digits)."""
from __future__ import absolute_import
from __future__ import print_function

import random

import numpy as np
from sklearn.datasets import load_digits

import keras
from keras.models import Model
from keras.layers import Input, Flatten, Dense, Dropout, Lambda
from keras.optimizers import RMSprop
from keras import backend as K

keras.utils.set_random_seed(5)
random.seed(5)
num_classes = 10
epochs = 6


def euclidean_distance(vects):
    a, b = vects
    sum_square = K.sum(K.square(a - b), axis=1, keepdims=True)
    return K.sqrt(K.maximum(sum_square, K.epsilon()))


def distance_shape(shapes):
    first, _ = shapes
    return (first[0], 1)


def contrastive_loss(y_true, y_pred):
    """Hadsell, Chopra and LeCun's loss: near for pairs (1), at least a margin apart otherwise (0)."""
    margin = 1
    return K.mean(y_true * K.square(y_pred) + (1 - y_true) * K.square(K.maximum(margin - y_pred, 0)))


def make_pairs(x, indices):
    pairs, labels = [], []
    n = min(len(indices[d]) for d in range(num_classes)) - 1
    for d in range(num_classes):
        for i in range(n):
            pairs.append([x[indices[d][i]], x[indices[d][i + 1]]])
            other = (d + random.randrange(1, num_classes)) % num_classes
            pairs.append([x[indices[d][i]], x[indices[other][i]]])
            labels += [1, 0]
    return np.array(pairs), np.array(labels)


def base_network(input_shape):
    inputs = Input(shape=input_shape)
    h = Flatten()(inputs)
    h = Dense(64, activation='relu')(h)
    h = Dropout(0.1)(h)
    h = Dense(64, activation='relu')(h)
    return Model(inputs, h)


def accuracy(y_true, y_pred):
    return K.mean(K.equal(y_true, K.cast(y_pred < 0.5, y_true.dtype)))


digits = load_digits()
x = (digits.images / 16.0).astype('float32')
y = digits.target
x_train, y_train, x_test, y_test = x[:1300], y[:1300], x[1300:], y[1300:]
tr_pairs, tr_y = make_pairs(x_train, [np.where(y_train == d)[0] for d in range(num_classes)])
te_pairs, te_y = make_pairs(x_test, [np.where(y_test == d)[0] for d in range(num_classes)])

base = base_network(x.shape[1:])
input_a = Input(shape=x.shape[1:])
input_b = Input(shape=x.shape[1:])
distance = Lambda(euclidean_distance, output_shape=distance_shape)([base(input_a), base(input_b)])
model = Model([input_a, input_b], distance)

model.compile(loss=contrastive_loss, optimizer=RMSprop(), metrics=[accuracy])
model.fit([tr_pairs[:, 0], tr_pairs[:, 1]], tr_y, batch_size=64, epochs=epochs, verbose=0,
          validation_data=([te_pairs[:, 0], te_pairs[:, 1]], te_y))

predicted = model.predict([te_pairs[:, 0], te_pairs[:, 1]], verbose=0)
print('accuracy', np.mean((predicted.ravel() < 0.5) == te_y))
