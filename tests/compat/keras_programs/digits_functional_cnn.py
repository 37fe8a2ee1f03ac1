"""A convnet on the 8x8 digits with Keras' functional API (keras.Input, layers called on tensors,
keras.Model(inputs, outputs)), written as Keras' "Simple MNIST convnet" example writes it."""
import numpy as np
from sklearn.datasets import load_digits

import keras
from keras import layers

keras.utils.set_random_seed(1)

# Model / data parameters
num_classes = 10
input_shape = (8, 8, 1)

digits = load_digits()
x = (digits.images / 16.0).astype("float32")
x = np.expand_dims(x, -1)  # channels last: (N, 8, 8, 1)
y = keras.utils.to_categorical(digits.target, num_classes)
x_train, y_train, x_test, y_test = x[:1500], y[:1500], x[1500:], y[1500:]
print(x_train.shape[0], "train samples")

# Build the model with the functional API
inputs = keras.Input(shape=input_shape)
h = layers.Conv2D(32, kernel_size=(3, 3), activation="relu", padding="same")(inputs)
h = layers.BatchNormalization()(h)
h = layers.MaxPooling2D(pool_size=(2, 2))(h)
h = layers.Conv2D(64, kernel_size=(3, 3), activation="relu")(h)
skip = layers.GlobalAveragePooling2D()(h)
h = layers.Flatten()(h)
h = layers.Concatenate()([h, skip])
h = layers.Dropout(0.3)(h)
outputs = layers.Dense(num_classes, activation="softmax")(h)
model = keras.Model(inputs=inputs, outputs=outputs, name="digits_cnn")
model.summary()

model.compile(loss="categorical_crossentropy", optimizer="adam", metrics=["accuracy"])
model.fit(x_train, y_train, batch_size=64, epochs=12, validation_data=(x_test, y_test), verbose=2)

score = model.evaluate(x_test, y_test, verbose=0)
print("Test loss:", score[0])
print("accuracy", score[1])
