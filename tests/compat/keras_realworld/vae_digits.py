"""A Keras 2 script in the style of the classic "variational autoencoder" example: an encoder model
with a sampling ``Lambda`` (the reparameterization trick), a decoder model, the VAE as
``decoder(encoder(inputs)[2])``, and its loss written on the symbolic tensors with
``keras.losses.binary_crossentropy`` and ``keras.backend`` functions, then ``vae.add_loss`` and
``vae.compile(optimizer)`` without a loss; ``fit(x, validation_data=(x_test, None))``. Scikit-learn's
8x8 digits stand in for MNIST. The last line is how well a nearest-centroid classifier does on the
encoder's 2-D means (the latent space separates the digits)."""
from __future__ import absolute_import, division, print_function

import numpy as np
from sklearn.datasets import load_digits

import keras
from keras.layers import Lambda, Input, Dense
from keras.models import Model
from keras.losses import binary_crossentropy
from keras import backend as K

keras.utils.set_random_seed(8)


def sampling(args):
    """z = mean + sigma * epsilon, epsilon ~ N(0, 1)."""
    z_mean, z_log_var = args
    batch = K.shape(z_mean)[0]
    dim = K.int_shape(z_mean)[1]
    epsilon = K.random_normal(shape=(batch, dim))
    return z_mean + K.exp(0.5 * z_log_var) * epsilon


digits = load_digits()
x = (digits.images.reshape(-1, 64) / 16.0).astype('float32')
y = digits.target
x_train, x_test, y_train, y_test = x[:1400], x[1400:], y[:1400], y[1400:]

original_dim = 64
input_shape = (original_dim,)
intermediate_dim = 64
batch_size = 64
latent_dim = 2
epochs = 25

inputs = Input(shape=input_shape, name='encoder_input')
h = Dense(intermediate_dim, activation='relu')(inputs)
z_mean = Dense(latent_dim, name='z_mean')(h)
z_log_var = Dense(latent_dim, name='z_log_var')(h)
z = Lambda(sampling, output_shape=(latent_dim,), name='z')([z_mean, z_log_var])
encoder = Model(inputs, [z_mean, z_log_var, z], name='encoder')

latent_inputs = Input(shape=(latent_dim,), name='z_sampling')
h = Dense(intermediate_dim, activation='relu')(latent_inputs)
outputs = Dense(original_dim, activation='sigmoid')(h)
decoder = Model(latent_inputs, outputs, name='decoder')

outputs = decoder(encoder(inputs)[2])
vae = Model(inputs, outputs, name='vae_mlp')

reconstruction_loss = binary_crossentropy(inputs, outputs)
reconstruction_loss *= original_dim
kl_loss = 1 + z_log_var - K.square(z_mean) - K.exp(z_log_var)
kl_loss = K.sum(kl_loss, axis=-1)
kl_loss *= -0.5
vae_loss = K.mean(reconstruction_loss + kl_loss)
vae.add_loss(vae_loss)
vae.compile(optimizer=keras.optimizers.Adam(learning_rate=3e-3))
history = vae.fit(x_train, epochs=epochs, batch_size=batch_size, validation_data=(x_test, None), verbose=0)
print('loss', history.history['loss'][0], '->', history.history['loss'][-1])
assert history.history['loss'][-1] < history.history['loss'][0]

means_train = encoder.predict(x_train, batch_size=batch_size, verbose=0)[0]
means_test = encoder.predict(x_test, batch_size=batch_size, verbose=0)[0]
centroids = np.stack([means_train[y_train == d].mean(axis=0) for d in range(10)])
nearest = np.argmin(((means_test[:, None, :] - centroids[None]) ** 2).sum(-1), axis=1)
print('accuracy', np.mean(nearest == y_test))
