"""A Keras 2 script in the style of the classic "antirectifier" example: a custom layer (``call``
written with ``keras.backend`` functions, ``compute_output_shape`` kept for Keras 2) that centers
its input, L2-normalizes it and returns the concatenation of its positive and negative parts, in a
Sequential model on the 8x8 digits of scikit-learn (standing in for MNIST)."""
from __future__ import print_function

from sklearn.datasets import load_digits

import keras
from keras.models import Sequential
from keras import layers
from keras import backend as K

keras.utils.set_random_seed(4)


class Antirectifier(layers.Layer):
    """Centered, normalized samples, split into a positive and a negative half (twice the features)."""

    def compute_output_shape(self, input_shape):
        shape = list(input_shape)
        shape[-1] *= 2
        return tuple(shape)

    def call(self, inputs):
        inputs -= K.mean(inputs, axis=1, keepdims=True)
        inputs = K.l2_normalize(inputs, axis=1)
        positive = K.relu(inputs)
        negative = K.relu(-inputs)
        return K.concatenate([positive, negative], axis=1)


batch_size = 64
num_classes = 10
epochs = 8

digits = load_digits()
x = digits.images.reshape(-1, 64).astype('float32') / 16
y = keras.utils.to_categorical(digits.target, num_classes)
x_train, y_train, x_test, y_test = x[:1400], y[:1400], x[1400:], y[1400:]
print(x_train.shape[0], 'train samples')

model = Sequential()
model.add(layers.Dense(64, input_shape=(64,)))
model.add(Antirectifier())
model.add(layers.Dropout(0.1))
model.add(layers.Dense(64))
model.add(Antirectifier())
model.add(layers.Dropout(0.1))
model.add(layers.Dense(num_classes))
model.add(layers.Activation('softmax'))

model.compile(loss='categorical_crossentropy', optimizer='rmsprop', metrics=['accuracy'])
model.summary()
model.fit(x_train, y_train, batch_size=batch_size, epochs=epochs, verbose=0, validation_data=(x_test, y_test))
loss, accuracy = model.evaluate(x_test, y_test, verbose=0)
print('accuracy', accuracy)
