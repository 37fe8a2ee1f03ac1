"""A Keras 3 GAN in the style of keras-io's "overriding train_step" examples: a ``keras.Model`` subclass
holding a generator and a discriminator, its own ``compile(d_optimizer, g_optimizer, loss_fn)``, a
``train_step`` with two ``tf.GradientTape`` blocks and ``apply_gradients``, ``keras.metrics.Mean``
trackers listed by a ``metrics`` property, ``keras.random`` with a ``SeedGenerator``, and a callback that
samples images each epoch. Scikit-learn's 8x8 digits stand in for the images. The last line is how
well the trained discriminator tells real digits from uniform noise."""
import numpy as np
from sklearn.datasets import load_digits

import keras
import tensorflow as tf
from keras import layers, ops

keras.utils.set_random_seed(3)
images = (load_digits().images / 16.0).astype("float32").reshape(-1, 64)
latent_dim = 16

discriminator = keras.Sequential(
    [keras.Input(shape=(64,)), layers.Dense(64), layers.LeakyReLU(negative_slope=0.2), layers.Dropout(0.2),
     layers.Dense(1, activation="sigmoid")], name="discriminator")
generator = keras.Sequential(
    [keras.Input(shape=(latent_dim,)), layers.Dense(64), layers.LeakyReLU(negative_slope=0.2),
     layers.Dense(64, activation="sigmoid")], name="generator")


class GAN(keras.Model):
    def __init__(self, discriminator, generator, latent_dim):
        super().__init__()
        self.discriminator = discriminator
        self.generator = generator
        self.latent_dim = latent_dim
        self.seed_generator = keras.random.SeedGenerator(1337)

    def compile(self, d_optimizer, g_optimizer, loss_fn):
        super().compile()
        self.d_optimizer = d_optimizer
        self.g_optimizer = g_optimizer
        self.loss_fn = loss_fn
        self.d_loss_metric = keras.metrics.Mean(name="d_loss")
        self.g_loss_metric = keras.metrics.Mean(name="g_loss")

    @property
    def metrics(self):
        return [self.d_loss_metric, self.g_loss_metric]

    def train_step(self, real_images):
        batch_size = ops.shape(real_images)[0]
        noise = keras.random.normal(shape=(batch_size, self.latent_dim), seed=self.seed_generator)
        fakes = self.generator(noise)
        combined = ops.concatenate([fakes, real_images], axis=0)
        labels = ops.concatenate([ops.ones((batch_size, 1)), ops.zeros((batch_size, 1))], axis=0)
        labels += 0.05 * keras.random.uniform(ops.shape(labels), seed=self.seed_generator)
        with tf.GradientTape() as tape:
            d_loss = self.loss_fn(labels, self.discriminator(combined))
        grads = tape.gradient(d_loss, self.discriminator.trainable_weights)
        self.d_optimizer.apply_gradients(zip(grads, self.discriminator.trainable_weights))

        noise = keras.random.normal(shape=(batch_size, self.latent_dim), seed=self.seed_generator)
        misleading = ops.zeros((batch_size, 1))
        with tf.GradientTape() as tape:
            g_loss = self.loss_fn(misleading, self.discriminator(self.generator(noise)))
        grads = tape.gradient(g_loss, self.generator.trainable_weights)
        self.g_optimizer.apply_gradients(zip(grads, self.generator.trainable_weights))

        self.d_loss_metric.update_state(d_loss)
        self.g_loss_metric.update_state(g_loss)
        return {"d_loss": self.d_loss_metric.result(), "g_loss": self.g_loss_metric.result()}


class Sampler(keras.callbacks.Callback):
    def __init__(self, count=4):
        self.count = count
        self.seen = []

    def on_epoch_end(self, epoch, logs=None):
        noise = keras.random.normal(shape=(self.count, latent_dim))
        samples = self.model.generator(noise)
        samples *= 255
        self.seen.append(np.asarray(samples).shape)


gan = GAN(discriminator=discriminator, generator=generator, latent_dim=latent_dim)
gan.compile(d_optimizer=keras.optimizers.Adam(learning_rate=0.002),
            g_optimizer=keras.optimizers.Adam(learning_rate=0.002),
            loss_fn=keras.losses.BinaryCrossentropy())
sampler = Sampler()
history = gan.fit(images, batch_size=64, epochs=4, callbacks=[sampler], verbose=2)
assert sorted(history.history) == ["d_loss", "g_loss"] and sampler.seen == [(4, 64)] * 4

noise_images = np.random.default_rng(0).uniform(size=(200, 64)).astype("float32")
real_scores = discriminator.predict(images[:200], verbose=0).ravel()
noise_scores = discriminator.predict(noise_images, verbose=0).ravel()
print("accuracy", ((real_scores < 0.5).mean() + (noise_scores > 0.5).mean()) / 2)
