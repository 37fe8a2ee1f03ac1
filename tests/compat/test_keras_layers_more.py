"""More of Keras' layers on graphgrad.compat.keras (attention, structure, convolutions, noise, normalization, preprocessing): each checked against real Keras (Keras 3
on its PyTorch backend, in a subprocess; skipped when it is absent) from the same weights, and by plain
tests that need no Keras."""
from __future__ import annotations

import importlib.util
import os
import subprocess
import sys

import numpy as np
import pytest

import graphgrad as gg
from graphgrad.compat import keras
from graphgrad.compat.keras import layers

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HAVE_KERAS = importlib.util.find_spec("keras") is not None and importlib.util.find_spec("torch") is not None


def _run_keras(script: str, cwd) -> str:
    env = dict(os.environ, PYTHONPATH=ROOT, OMP_NUM_THREADS="1", KERAS_BACKEND="torch")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=600, env=env, cwd=cwd)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    return done.stdout


PARITY = r'''
import numpy as np
import keras
from graphgrad.compat import keras as gk

rng = np.random.default_rng(0)
seq, img = (2, 5, 4), (2, 7, 6, 3)
cases = [
    ("TimeDistributed", lambda k: k.layers.TimeDistributed(k.layers.Dense(3, activation="relu")), [seq]),
    ("RepeatVector", lambda k: k.layers.RepeatVector(3), [(2, 4)]),
    ("Dot", lambda k: k.layers.Dot(axes=2), [seq, (2, 6, 4)]),
    ("Dot1", lambda k: k.layers.Dot(axes=1, normalize=True), [(2, 4), (2, 4)]),
    ("Dot3", lambda k: k.layers.Dot(axes=(1, 1)), [seq, (2, 5, 3)]),
    ("Attention", lambda k: k.layers.Attention(), [seq, (2, 6, 4)]),
    ("AttentionScaled", lambda k: k.layers.Attention(use_scale=True), [seq, (2, 6, 4), (2, 6, 4)]),
    ("DepthwiseConv2D", lambda k: k.layers.DepthwiseConv2D(3, depth_multiplier=2, padding="same", strides=2), [img]),
    ("SeparableConv2D", lambda k: k.layers.SeparableConv2D(5, (3, 2), activation="relu"), [img]),
    ("Conv3D", lambda k: k.layers.Conv3D(4, 3, padding="same", strides=2), [(2, 5, 6, 4, 3)]),
    ("Cropping1D", lambda k: k.layers.Cropping1D((1, 2)), [seq]),
    ("Cropping2D", lambda k: k.layers.Cropping2D(((1, 0), (2, 1))), [img]),
    ("UpSampling1D", lambda k: k.layers.UpSampling1D(3), [seq]),
    ("ZeroPadding1D", lambda k: k.layers.ZeroPadding1D((1, 2)), [seq]),
    ("PReLU", lambda k: k.layers.PReLU(), [seq]),
    ("PReLUShared", lambda k: k.layers.PReLU(shared_axes=[1, 2]), [img]),
    ("Identity", lambda k: k.layers.Identity(), [seq]),
    ("UnitNormalization", lambda k: k.layers.UnitNormalization(), [seq]),
    ("GroupNormalization", lambda k: k.layers.GroupNormalization(groups=2), [(2, 5, 6, 4)]),
    ("Resizing", lambda k: k.layers.Resizing(9, 4), [img]),
    ("ResizingNearest", lambda k: k.layers.Resizing(14, 12, interpolation="nearest"), [img]),
    ("CenterCrop", lambda k: k.layers.CenterCrop(4, 3), [img]),
    ("GaussianNoise", lambda k: k.layers.GaussianNoise(0.3), [seq]),
    ("GaussianDropout", lambda k: k.layers.GaussianDropout(0.3), [seq]),
    ("SpatialDropout1D", lambda k: k.layers.SpatialDropout1D(0.3), [seq]),
    ("SpatialDropout2D", lambda k: k.layers.SpatialDropout2D(0.3), [img]),
    ("RandomFlip", lambda k: k.layers.RandomFlip(), [img]),
    ("RandomRotation", lambda k: k.layers.RandomRotation(0.2), [img]),
    ("ActivityRegularization", lambda k: k.layers.ActivityRegularization(0.1, 0.1), [seq]),
]
for name, make, shapes in cases:
    xs = [rng.standard_normal(s).astype("float32") for s in shapes]
    arg = xs if len(xs) > 1 else xs[0]
    real = make(keras)
    real(arg)
    weights = [w + 0.1 * rng.standard_normal(w.shape).astype("float32") for w in real.get_weights()]
    real.set_weights(weights)
    expected = keras.ops.convert_to_numpy(real(arg, training=False))
    mine = make(gk)
    mine(arg)
    assert [w.shape for w in mine.get_weights()] == [w.shape for w in weights], (name, [w.shape for w in mine.get_weights()])
    mine.set_weights(weights)
    mine.eval()
    got = mine(arg).numpy()
    assert got.shape == expected.shape, (name, got.shape, expected.shape)
    assert np.abs(got - expected).max() < 1e-5, (name, np.abs(got - expected).max())
    assert mine.count_params() == real.count_params(), name
# multi-head attention: self-attention, cross-attention with key, mask, value_dim and output_shape, scores
q, v, kk = (rng.standard_normal(s).astype("float32") for s in ((2, 5, 6), (2, 4, 3), (2, 4, 7)))
mask = rng.random((2, 5, 4)) > 0.3
for kwargs, call in ((dict(num_heads=2, key_dim=3), lambda l: l(q, q)),
                     (dict(num_heads=3, key_dim=2, value_dim=4, output_shape=5), lambda l: l(q, v, key=kk, attention_mask=mask,
                                                                                         return_attention_scores=True)),
                     (dict(num_heads=2, key_dim=4, use_bias=False), lambda l: l(q, v)),
                     (dict(num_heads=2, key_dim=3), lambda l: l(q, q, use_causal_mask=True)),
                     (dict(num_heads=2, key_dim=3), lambda l: l(q, v, attention_mask=mask, use_causal_mask=True,
                                                                return_attention_scores=True))):
    real, mine = keras.layers.MultiHeadAttention(**kwargs), gk.layers.MultiHeadAttention(**kwargs)
    call(real)
    call(mine)
    weights = [w + 0.1 * rng.standard_normal(w.shape).astype("float32") for w in real.get_weights()]
    real.set_weights(weights)
    assert [w.shape for w in mine.get_weights()] == [w.shape for w in weights], kwargs
    mine.set_weights(weights)
    mine.eval()
    expected, got = call(real), call(mine)
    expected = expected if isinstance(expected, (list, tuple)) else [expected]
    got = got if isinstance(got, (list, tuple)) else [got]
    for e, g in zip(expected, got):
        assert np.abs(g.numpy() - keras.ops.convert_to_numpy(e)).max() < 1e-5, kwargs
    assert mine.count_params() == real.count_params()
tokens = np.array([[1, 2, 2], [0, 4, 1]])
for mode in ("multi_hot", "count"):
    assert np.allclose(gk.layers.CategoryEncoding(5, output_mode=mode)(tokens).numpy(),
                       keras.ops.convert_to_numpy(keras.layers.CategoryEncoding(5, output_mode=mode)(tokens))), mode
one = np.array([3, 0, 4])
assert np.allclose(gk.layers.CategoryEncoding(5, output_mode="one_hot")(one).numpy(),
                   keras.ops.convert_to_numpy(keras.layers.CategoryEncoding(5, output_mode="one_hot")(one)))
values = np.array([[-1.5, 0.0, 0.2, 1.0, 3.0]], dtype="float32")
assert np.array_equal(gk.layers.Discretization([0.0, 1.0, 2.0])(values).numpy(),
                      keras.ops.convert_to_numpy(keras.layers.Discretization([0.0, 1.0, 2.0])(values)))
print("ok", len(cases))
'''


@pytest.mark.skipif(not HAVE_KERAS, reason="Keras (and PyTorch, its backend here) is not installed")
def test_new_layers_compute_what_keras_layers_compute_from_the_same_weights(tmp_path):
    assert _run_keras(PARITY, tmp_path).strip().endswith("ok 29")


def _x(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype("float32")


def test_multi_head_attention_in_a_functional_model_trains_and_returns_scores():
    x = _x(64, 6, 4)
    y = (x[:, :, 0].sum(1) > 0).astype("int64")
    inputs = keras.Input(shape=(6, 4))
    h = layers.MultiHeadAttention(num_heads=2, key_dim=4)(inputs, inputs)
    h = layers.LayerNormalization()(layers.Add()([inputs, h]))
    outputs = layers.Dense(2, activation="softmax")(layers.GlobalAveragePooling1D()(h))
    model = keras.Model(inputs, outputs)
    model.compile("adam", "sparse_categorical_crossentropy", metrics=["accuracy"])
    history = model.fit(x, y, epochs=5, batch_size=16, verbose=0)
    assert history.history["loss"][-1] < history.history["loss"][0]
    mha = layers.MultiHeadAttention(num_heads=3, key_dim=2, value_dim=5, output_shape=7)
    out, scores = mha(x[:2], _x(2, 3, 5), attention_mask=np.ones((2, 6, 3), bool), return_attention_scores=True)
    assert out.shape == (2, 6, 7) and scores.shape == (2, 3, 6, 3)
    assert np.allclose(scores.numpy().sum(-1), 1.0, atol=1e-5)
    assert [w.shape for w in mha.get_weights()] == [(4, 3, 2), (3, 2), (5, 3, 2), (3, 2), (5, 3, 5), (3, 5), (3, 5, 7), (7,)]
    masked = np.zeros((2, 6, 3), bool)
    masked[..., 0] = True
    _, scores = mha(x[:2], _x(2, 3, 5), attention_mask=masked, return_attention_scores=True)
    assert np.allclose(scores.numpy()[..., 0], 1.0)


def test_structure_layers_shapes():
    x = _x(2, 5, 4)
    assert layers.TimeDistributed(layers.Dense(3))(x).shape == (2, 5, 3)
    assert layers.RepeatVector(3)(x[:, 0]).shape == (2, 3, 4)
    assert layers.Dot(axes=2)([x, _x(2, 6, 4)]).shape == (2, 5, 6)
    cosine = layers.Dot(axes=1, normalize=True)([x[:, 0], x[:, 0]]).numpy()
    assert cosine.shape == (2, 1) and np.allclose(cosine, 1.0, atol=1e-5)
    out, weights = layers.Attention()([x, _x(2, 6, 4)], return_attention_scores=True)
    assert out.shape == (2, 5, 4) and weights.shape == (2, 5, 6)
    causal = layers.Attention()([x, x], use_causal_mask=True, return_attention_scores=True)[1].numpy()
    assert np.allclose(np.triu(causal[0], 1), 0.0)
    image = _x(2, 7, 6, 3)
    assert layers.DepthwiseConv2D(3, depth_multiplier=2)(image).shape == (2, 5, 4, 6)
    assert layers.SeparableConv2D(4, 3, padding="same", strides=2)(image).shape == (2, 4, 3, 4)
    assert layers.Conv3D(2, 3, padding="same")(_x(2, 4, 5, 6, 3)).shape == (2, 4, 5, 6, 2)
    assert layers.Cropping1D((1, 2))(x).shape == (2, 2, 4) and layers.Cropping2D(1)(image).shape == (2, 5, 4, 3)
    assert layers.UpSampling1D(2)(x).shape == (2, 10, 4) and layers.ZeroPadding1D(2)(x).shape == (2, 9, 4)
    assert layers.Resizing(3, 9)(image).shape == (2, 3, 9, 3) and layers.CenterCrop(3, 2)(image).shape == (2, 3, 2, 3)


def test_training_only_layers_are_the_identity_at_inference():
    x = _x(4, 6, 6, 3)
    for layer in (layers.GaussianNoise(0.5), layers.GaussianDropout(0.4), layers.SpatialDropout2D(0.5),
                  layers.RandomFlip(), layers.RandomRotation(0.2)):
        assert not np.allclose(layer(x, training=True).numpy(), x), type(layer).__name__
        assert np.allclose(layer(x, training=False).numpy(), x), type(layer).__name__
    dropped = layers.SpatialDropout1D(0.5)(x[:, 0], training=True).numpy()  # (4, 6, 3): whole channels zeroed
    assert all(np.all(dropped[i, :, c] == 0) or np.all(dropped[i, :, c] != 0) for i in range(4) for c in range(3))
    model = keras.Sequential([keras.Input(shape=(6, 6, 3)), layers.RandomFlip("horizontal"), layers.GaussianNoise(0.1),
                              layers.Flatten(), layers.Dense(2, activation="softmax")])
    model.compile("adam", "sparse_categorical_crossentropy")
    model.fit(x, np.array([0, 1, 0, 1]), epochs=1, verbose=0)
    assert np.allclose(model.predict(x, verbose=0), model.predict(x, verbose=0))


def test_normalization_activation_and_encoding_layers():
    x = _x(2, 5, 6)
    unit = layers.UnitNormalization()(x).numpy()
    assert np.allclose(np.linalg.norm(unit, axis=-1), 1.0, atol=1e-5)
    group = layers.GroupNormalization(groups=3)(x).numpy().reshape(2, 5, 3, 2)
    assert np.allclose(group.mean(axis=(1, 3)), 0.0, atol=1e-5)
    prelu = layers.PReLU(alpha_initializer=keras.initializers.Constant(0.25))
    assert np.allclose(prelu(np.array([[-4.0, 2.0]])).numpy(), [[-1.0, 2.0]])
    shared = layers.PReLU(shared_axes=[1])
    shared(x)
    assert [w.shape for w in shared.get_weights()] == [(1, 6)] and [w.shape for w in prelu.get_weights()] == [(2,)]
    assert np.array_equal(layers.Identity()(x).numpy(), x)
    counts = layers.CategoryEncoding(4, output_mode="count")(np.array([[1, 1, 3], [0, 2, 2]])).numpy()
    assert np.array_equal(counts, [[0, 2, 0, 1], [1, 0, 2, 0]])
    bins = layers.Discretization(bin_boundaries=[0.0, 1.0])(np.array([-0.5, 0.0, 0.5, 1.0, 7.0])).numpy()
    assert np.array_equal(bins, [0, 1, 1, 2, 2])


def test_a_model_with_the_new_layers_saves_and_loads(tmp_path):
    query, key = keras.Input(shape=(5, 4)), keras.Input(shape=(5, 4))
    h = layers.MultiHeadAttention(2, 3)(query, key, key=key)
    h = layers.GroupNormalization(groups=3)(layers.TimeDistributed(layers.Dense(3))(h))
    h = layers.Attention()([h, h], use_causal_mask=True)
    outputs = layers.Dense(2, kernel_regularizer=keras.regularizers.l2(0.01),
                           kernel_constraint=keras.constraints.MaxNorm(2.0))(layers.Flatten()(h))
    model = keras.Model([query, key], outputs)
    model.compile("adam", "mse")
    x = _x(3, 5, 4)
    model.fit([x, x], _x(3, 2), verbose=0)
    model.save(str(tmp_path / "m.keras"))
    loaded = keras.models.load_model(str(tmp_path / "m.keras"))
    assert np.allclose(loaded.predict([x, x], verbose=0), model.predict([x, x], verbose=0), atol=1e-6)
    assert [type(r).__name__ for r in loaded.layers[-1]._weight_rules[0]] == ["L2", "MaxNorm"]


MASK_PARITY = r'''
import numpy as np
import keras
from graphgrad.compat import keras as gk

rng = np.random.default_rng(2)
tokens = np.array([[0, 0, 3, 1, 4], [1, 5, 0, 0, 0], [9, 0, 6, 5, 3], [2, 7, 1, 8, 2], [0, 0, 0, 0, 0]])


def models(k):
    return [
        k.Sequential([k.Input(shape=(5,)), k.layers.Embedding(10, 4, mask_zero=True), k.layers.LSTM(3)]),
        k.Sequential([k.Input(shape=(5,)), k.layers.Embedding(10, 4, mask_zero=True), k.layers.Dropout(0.1),
                      k.layers.GRU(3, return_sequences=True), k.layers.Dense(2)]),
        k.Sequential([k.Input(shape=(5,)), k.layers.Embedding(10, 4, mask_zero=True),
                      k.layers.SimpleRNN(3, go_backwards=True, return_sequences=True), k.layers.GlobalAveragePooling1D()]),
        k.Sequential([k.Input(shape=(5,)), k.layers.Embedding(10, 4, mask_zero=True),
                      k.layers.Bidirectional(k.layers.LSTM(3, return_sequences=True)), k.layers.LSTM(2)]),
        k.Sequential([k.Input(shape=(5,)), k.layers.Embedding(10, 4, mask_zero=True), k.layers.Dense(3, activation="relu"),
                      k.layers.GlobalAveragePooling1D()]),
    ]


for i, (real, mine) in enumerate(zip(models(keras), models(gk))):
    weights = [w + 0.3 * rng.standard_normal(w.shape).astype("float32") for w in real.get_weights()]
    real.set_weights(weights)
    mine.set_weights(weights)
    expected = real.predict(tokens, verbose=0)
    got = mine.predict(tokens, verbose=0)
    rows = slice(0, 4) if i in (2, 4) else slice(None)  # an all-padding row: the average is 0/0 there (NaN in both)
    assert np.abs(got[rows] - expected[rows]).max() < 1e-5, (i, got, expected)
print("ok")
'''


@pytest.mark.skipif(not HAVE_KERAS, reason="Keras (and PyTorch, its backend here) is not installed")
def test_embedding_mask_zero_reaches_recurrent_and_pooling_layers_as_in_keras(tmp_path):
    assert _run_keras(MASK_PARITY, tmp_path).strip().endswith("ok")


def test_embedding_mask_zero_skips_the_padding_and_trains():
    rng = np.random.default_rng(0)
    lengths = rng.integers(2, 9, 120)
    sequences = [list(rng.integers(1, 20, n)) for n in lengths]
    y = (lengths > 5).astype("int64")  # the label is the length: only a model that ignores the padding sees it
    post = keras.utils.pad_sequences(sequences, maxlen=10, padding="post")
    model = keras.Sequential([keras.Input(shape=(10,)), layers.Embedding(20, 8, mask_zero=True),
                              layers.LSTM(8), layers.Dense(2, activation="softmax")])
    short = np.array([[4, 2, 0, 0, 0, 0, 0, 0, 0, 0]])
    padded_more = model.predict(short, verbose=0)
    assert np.allclose(padded_more, model.predict(short[:, :2], verbose=0), atol=1e-6)  # padding changes nothing
    model.compile(keras.optimizers.Adam(0.02), "sparse_categorical_crossentropy", metrics=["accuracy"])
    history = model.fit(post, y, epochs=8, batch_size=16, verbose=0)
    assert history.history["loss"][-1] < history.history["loss"][0]
    inputs = keras.Input(shape=(10,))
    h = layers.Embedding(20, 4, mask_zero=True)(inputs)
    pooled = layers.GlobalAveragePooling1D()(layers.Dense(3)(h))
    functional = keras.Model(inputs, pooled)
    assert np.allclose(functional.predict(short, verbose=0), functional.predict(short[:, :2], verbose=0), atol=1e-6)
