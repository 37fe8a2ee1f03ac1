"""A Keras MLP on the 8x8 digits, written as Keras' tutorials write it: Sequential, compile, fit with
validation_split, EarlyStopping and ModelCheckpoint, evaluate, save and load_model."""
import numpy as np
from sklearn.datasets import load_digits

import keras
from keras import layers

keras.utils.set_random_seed(0)

# Prepare the data
digits = load_digits()
x = (digits.images / 16.0).astype("float32").reshape(-1, 64)
y = digits.target
x_train, y_train, x_test, y_test = x[:1500], y[:1500], x[1500:], y[1500:]
print("x_train shape:", x_train.shape)

# Build the model
model = keras.Sequential(
    [
        keras.Input(shape=(64,)),
        layers.Dense(128, activation="relu"),
        layers.Dropout(0.2),
        layers.Dense(64, activation="relu"),
        layers.Dense(10, activation="softmax"),
    ]
)
model.summary()

# Train the model
model.compile(optimizer=keras.optimizers.Adam(learning_rate=1e-3),
              loss="sparse_categorical_crossentropy", metrics=["accuracy"])
callbacks = [
    keras.callbacks.EarlyStopping(monitor="val_loss", patience=5, restore_best_weights=True),
    keras.callbacks.ModelCheckpoint("best_model.keras", monitor="val_loss", save_best_only=True),
]
history = model.fit(x_train, y_train, batch_size=32, epochs=40, validation_split=0.1, callbacks=callbacks,
                    verbose=2)
print("epochs run:", len(history.history["loss"]))

# Evaluate, save, load and evaluate again
score = model.evaluate(x_test, y_test, verbose=0)
print("Test loss:", score[0])
print("Test accuracy:", score[1])
model.save("digits_mlp.keras")
restored = keras.models.load_model("digits_mlp.keras")
probabilities = restored.predict(x_test, verbose=0)
assert np.allclose(probabilities, model.predict(x_test, verbose=0), atol=1e-5)
assert np.allclose(probabilities.sum(axis=1), 1.0, atol=1e-4)
best = keras.models.load_model("best_model.keras")
print("Checkpoint accuracy:", best.evaluate(x_test, y_test, verbose=0)[1])
print("accuracy", restored.evaluate(x_test, y_test, verbose=0)[1])
