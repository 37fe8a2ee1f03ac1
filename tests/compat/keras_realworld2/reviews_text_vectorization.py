"""A Keras 3 text classifier in the style of keras-io's "text classification from scratch": raw strings
go through a ``TextVectorization`` layer (``adapt`` on the training texts, ``max_tokens``,
``output_sequence_length``), an ``Embedding``, a ``Conv1D`` and global max pooling to a sigmoid; the
training reviews are weighted (``sample_weight``). A second model reads the same texts as ``tf_idf``
rows. Short synthetic reviews stand in for IMDB. The last line is the test accuracy of the first model."""
import numpy as np

import keras
from keras import layers

keras.utils.set_random_seed(11)
rng = np.random.default_rng(11)
positive = ["great", "wonderful", "loved", "brilliant", "moving", "superb", "fun"]
negative = ["awful", "boring", "hated", "dull", "terrible", "weak", "mess"]
neutral = ["the", "movie", "film", "plot", "actors", "was", "and", "a", "story", "really", "it"]


def review(label):
    words = list(rng.choice(neutral, size=rng.integers(4, 9)))
    mood = positive if label else negative
    for _ in range(rng.integers(1, 3)):
        words.insert(int(rng.integers(0, len(words) + 1)), str(rng.choice(mood)).upper() + "!")
    return " ".join(words) + "."


labels = rng.integers(0, 2, size=600)
texts = np.array([review(label) for label in labels])
x_train, x_test, y_train, y_test = texts[:500], texts[500:], labels[:500], labels[500:]
weights = np.where(y_train == 1, 1.0, 1.5)  # weigh the negative reviews up

vectorize_layer = layers.TextVectorization(max_tokens=40, output_mode="int", output_sequence_length=12)
vectorize_layer.adapt(x_train)
print("vocabulary", vectorize_layer.get_vocabulary()[:6])

inputs = keras.Input(shape=(None,), dtype="int64")
x = layers.Embedding(40, 16)(inputs)
x = layers.Dropout(0.2)(x)
x = layers.Conv1D(32, 3, padding="valid", activation="relu")(x)
x = layers.GlobalMaxPooling1D()(x)
predictions = layers.Dense(1, activation="sigmoid", name="predictions")(x)
model = keras.Model(inputs, predictions)
model.compile(loss="binary_crossentropy", optimizer="adam", metrics=["accuracy"])
model.fit(vectorize_layer(x_train), y_train, sample_weight=weights, epochs=6, batch_size=32, verbose=2,
          validation_data=(vectorize_layer(x_test), y_test))

tf_idf = layers.TextVectorization(max_tokens=40, output_mode="tf_idf")
tf_idf.adapt(x_train)
bag = keras.Sequential([keras.Input(shape=(tf_idf.vocabulary_size(),)), layers.Dense(1, activation="sigmoid")])
bag.compile(loss="binary_crossentropy", optimizer=keras.optimizers.Adam(0.05), metrics=["accuracy"])
bag.fit(tf_idf(x_train), y_train, epochs=10, batch_size=32, verbose=0)
assert bag.evaluate(tf_idf(x_test), y_test, verbose=0)[1] > 0.8

loss, accuracy = model.evaluate(vectorize_layer(x_test), y_test, verbose=0)
print("accuracy", accuracy)
