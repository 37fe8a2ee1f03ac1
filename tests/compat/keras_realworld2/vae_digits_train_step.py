"""A Keras 3 variational autoencoder in the style of keras-io's VAE example: a ``Sampling`` layer with a
``SeedGenerator``, functional encoder and decoder models, and a ``keras.Model`` subclass whose
``train_step`` computes the reconstruction and KL losses with ``keras.ops`` under ``tf.GradientTape``,
applies the gradients with ``self.optimizer`` and reports three ``keras.metrics.Mean`` trackers; a
``test_step`` makes ``validation_data`` work. Scikit-learn's 8x8 digits stand in for MNIST. The last
line is how well a nearest-centroid classifier does on the encoder's 2-D means."""
import numpy as np
from sklearn.datasets import load_digits

import keras
import tensorflow as tf
from keras import layers, ops

keras.utils.set_random_seed(5)
digits = load_digits()
x = (digits.images / 16.0).astype("float32")[..., None]
labels = digits.target
x_train, x_test, y_train, y_test = x[:1500], x[1500:], labels[:1500], labels[1500:]


class Sampling(layers.Layer):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.seed_generator = keras.random.SeedGenerator(1337)

    def call(self, inputs):
        z_mean, z_log_var = inputs
        batch = ops.shape(z_mean)[0]
        dim = ops.shape(z_mean)[1]
        epsilon = keras.random.normal(shape=(batch, dim), seed=self.seed_generator)
        return z_mean + ops.exp(0.5 * z_log_var) * epsilon


latent_dim = 2
encoder_inputs = keras.Input(shape=(8, 8, 1))
h = layers.Conv2D(16, 3, activation="relu", strides=2, padding="same")(encoder_inputs)
h = layers.Flatten()(h)
h = layers.Dense(32, activation="relu")(h)
z_mean = layers.Dense(latent_dim, name="z_mean")(h)
z_log_var = layers.Dense(latent_dim, name="z_log_var")(h)
z = Sampling()([z_mean, z_log_var])
encoder = keras.Model(encoder_inputs, [z_mean, z_log_var, z], name="encoder")

latent_inputs = keras.Input(shape=(latent_dim,))
h = layers.Dense(4 * 4 * 16, activation="relu")(latent_inputs)
h = layers.Reshape((4, 4, 16))(h)
decoder_outputs = layers.Conv2DTranspose(1, 3, activation="sigmoid", strides=2, padding="same")(h)
decoder = keras.Model(latent_inputs, decoder_outputs, name="decoder")


class VAE(keras.Model):
    def __init__(self, encoder, decoder, **kwargs):
        super().__init__(**kwargs)
        self.encoder = encoder
        self.decoder = decoder
        self.total_loss_tracker = keras.metrics.Mean(name="total_loss")
        self.reconstruction_loss_tracker = keras.metrics.Mean(name="reconstruction_loss")
        self.kl_loss_tracker = keras.metrics.Mean(name="kl_loss")

    @property
    def metrics(self):
        return [self.total_loss_tracker, self.reconstruction_loss_tracker, self.kl_loss_tracker]

    def losses_of(self, data):
        z_mean, z_log_var, z = self.encoder(data)
        reconstruction = self.decoder(z)
        reconstruction_loss = ops.mean(
            ops.sum(keras.losses.binary_crossentropy(data, reconstruction), axis=(1, 2)))
        kl_loss = -0.5 * (1 + z_log_var - ops.square(z_mean) - ops.exp(z_log_var))
        kl_loss = ops.mean(ops.sum(kl_loss, axis=1))
        return reconstruction_loss + kl_loss, reconstruction_loss, kl_loss

    def train_step(self, data):
        with tf.GradientTape() as tape:
            total_loss, reconstruction_loss, kl_loss = self.losses_of(data)
        grads = tape.gradient(total_loss, self.trainable_weights)
        self.optimizer.apply_gradients(zip(grads, self.trainable_weights))
        self.total_loss_tracker.update_state(total_loss)
        self.reconstruction_loss_tracker.update_state(reconstruction_loss)
        self.kl_loss_tracker.update_state(kl_loss)
        return {"loss": self.total_loss_tracker.result(),
                "reconstruction_loss": self.reconstruction_loss_tracker.result(),
                "kl_loss": self.kl_loss_tracker.result()}

    def test_step(self, data):
        if isinstance(data, tuple):
            data = data[0]
        total_loss, reconstruction_loss, kl_loss = self.losses_of(data)
        self.total_loss_tracker.update_state(total_loss)
        return {"loss": self.total_loss_tracker.result()}


vae = VAE(encoder, decoder)
vae.compile(optimizer=keras.optimizers.Adam(learning_rate=3e-3))
history = vae.fit(x_train, epochs=12, batch_size=64, validation_data=(x_test, x_test), verbose=2)
assert history.history["loss"][-1] < history.history["loss"][0] and "val_loss" in history.history
assert isinstance(vae.evaluate(x_test, verbose=0), float)

means_train = vae.encoder.predict(x_train, verbose=0)[0]
means_test = vae.encoder.predict(x_test, verbose=0)[0]
centroids = np.stack([means_train[y_train == c].mean(0) for c in range(10)])
guess = np.argmin(((means_test[:, None, :] - centroids[None]) ** 2).sum(-1), axis=1)
print("accuracy", (guess == y_test).mean())
