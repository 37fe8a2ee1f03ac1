"""A bidirectional LSTM sentiment classifier, written as Keras' "Bidirectional LSTM on IMDB" example
writes it (functional API, Embedding, two Bidirectional LSTMs, binary crossentropy on a sigmoid), on
generated reviews: a review is positive when it holds more "good" words (ids 2-9) than "bad" ones
(ids 10-17)."""
import numpy as np

import keras
from keras import layers

keras.utils.set_random_seed(2)

max_features = 40  # only consider the top 40 words
maxlen = 16  # only consider the first 16 words of each review

rng = np.random.default_rng(0)
reviews = rng.integers(1, max_features, size=(1600, maxlen))
good = ((reviews >= 2) & (reviews < 10)).sum(axis=1)
bad = ((reviews >= 10) & (reviews < 18)).sum(axis=1)
keep = good != bad
x, y = reviews[keep], (good > bad)[keep].astype("int32")
x_train, y_train, x_val, y_val = x[:1000], y[:1000], x[1000:], y[1000:]
print(len(x_train), "training sequences,", len(x_val), "validation sequences")

# Input for variable-length sequences of integers
inputs = keras.Input(shape=(None,), dtype="int32")
# Embed each integer in a 32-dimensional vector
h = layers.Embedding(max_features, 32)(inputs)
# Add 2 bidirectional LSTMs
h = layers.Bidirectional(layers.LSTM(32, return_sequences=True))(h)
h = layers.Bidirectional(layers.LSTM(32))(h)
# Add a classifier
outputs = layers.Dense(1, activation="sigmoid")(h)
model = keras.Model(inputs, outputs)
model.summary()

model.compile(optimizer=keras.optimizers.Adam(learning_rate=3e-3), loss="binary_crossentropy",
              metrics=["accuracy"])
model.fit(x_train, y_train, batch_size=32, epochs=3, validation_data=(x_val, y_val), verbose=2)
loss, accuracy = model.evaluate(x_val, y_val, verbose=0)
print("accuracy", accuracy)
