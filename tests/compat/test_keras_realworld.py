"""Idioms of published Keras programs (Keras 2 scripts and Keras 3 demos) on graphgrad.compat.keras:
Keras 2's module paths, ``keras.backend`` functions, custom layers with ``add_weight``/``call``,
recurrent dropout, ``Tokenizer``, ``ImageDataGenerator``, generators with ``steps_per_epoch``; and
short programs in their style (tests/compat/keras_realworld/) that must learn."""
from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

import graphgrad as gg
from graphgrad.compat import keras
from graphgrad.compat.keras import backend as K
from graphgrad.compat.keras import layers

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


@pytest.fixture(autouse=True)
def _seed():
    keras.utils.set_random_seed(0)
    K.clear_session()


# ---- imports of Keras 2 -----------------------------------------------------------------------------------------------
def test_keras2_module_paths_resolve_after_install():
    code = ("import graphgrad.compat.keras as k; k.install()\n"
            "from keras.layers.convolutional import Conv2D\nfrom keras.layers.recurrent import LSTM\n"
            "from keras.layers.embeddings import Embedding\nfrom keras.layers.normalization import BatchNormalization\n"
            "from keras.layers import recurrent\nfrom keras.preprocessing import sequence\n"
            "from keras.preprocessing.text import Tokenizer\nfrom keras.preprocessing.image import ImageDataGenerator\n"
            "from keras.utils.np_utils import to_categorical\nfrom keras.utils.data_utils import get_file\n"
            "from keras.utils import plot_model\nfrom keras.datasets import imdb, reuters, cifar10, cifar100\n"
            "from keras.engine.topology import Layer\nimport keras\n"
            "keras.config.disable_traceback_filtering(); g = keras.random.SeedGenerator(1)\n"
            "assert recurrent.LSTM is LSTM and sequence.pad_sequences([[1]], maxlen=2).tolist() == [[0, 1]]\n"
            "print('ok')")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                          env=dict(os.environ, PYTHONPATH=ROOT))
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-2000:]


def test_from_tensorflow_import_keras_after_install():
    code = ("import graphgrad.compat.keras as k; k.install()\n"
            "from tensorflow import keras\nfrom tensorflow.keras import layers\nimport tensorflow as tf\n"
            "assert keras is k and tf.keras is k and layers is k.layers\nprint('ok')")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                          env=dict(os.environ, PYTHONPATH=ROOT))
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-2000:]


# ---- keras.backend, keras.random, initializers ------------------------------------------------------------------------
def test_backend_functions_of_custom_layers_and_losses():
    x = np.array([[3.0, 4.0], [1.0, 0.0]], dtype="float32")
    assert np.allclose(K.l2_normalize(x, axis=1).numpy(), [[0.6, 0.8], [1.0, 0.0]])
    assert np.allclose(K.concatenate([K.relu(x), K.relu(-x)], axis=1).numpy(), np.concatenate([x, 0 * x], 1))
    assert np.allclose(K.mean(x, axis=1, keepdims=True).numpy(), [[3.5], [0.5]])
    assert K.int_shape(keras.Input(shape=(7,))) == (None, 7) and K.shape(x) == (2, 2)
    assert K.random_normal(shape=(5, 3)).shape == (5, 3)
    assert np.allclose(K.batch_dot(x, x, axes=1).numpy(), [[25.0], [1.0]])
    a, b = np.ones((2, 3, 4), "float32"), np.ones((2, 5, 4), "float32")
    assert K.batch_dot(a, b, axes=(2, 2)).shape == (2, 3, 5)
    assert K.epsilon() == 1e-7 and K.image_data_format() == "channels_last"
    assert np.allclose(K.maximum(x, 2.0).numpy(), np.maximum(x, 2.0))
    assert K.exp(gg.tensor([0.0])).numpy()[0] == 1.0  # a name of keras.ops


def test_keras_random_and_initializers():
    g1, g2 = keras.random.SeedGenerator(3), keras.random.SeedGenerator(3)
    assert np.allclose(keras.random.normal((4,), seed=g1).numpy(), keras.random.normal((4,), seed=g2).numpy())
    dropped = keras.random.dropout(np.ones((200, 50), "float32"), 0.5, seed=1).numpy()
    assert set(np.unique(dropped)) <= {0.0, 2.0} and 0.4 < (dropped == 0).mean() < 0.6
    assert abs(keras.random.truncated_normal((2000,), seed=1).numpy()).max() <= 2.0
    assert np.allclose(keras.initializers.Identity(gain=2.0)((3, 3)), 2 * np.eye(3))
    w = keras.initializers.VarianceScaling(2.0, "fan_in", "truncated_normal", seed=0)((400, 300))
    assert abs(w.std() - np.sqrt(2.0 / 400)) < 0.1 * np.sqrt(2.0 / 400)
    dense = layers.Dense(4, kernel_initializer="lecun_normal")
    dense(np.zeros((1, 3), "float32"))


# ---- layers ---------------------------------------------------------------------------------------------------------------
def test_lambda_takes_output_shape_and_arguments():
    def distance(pair, power):
        a, b = pair
        return K.sum(K.square(a - b), axis=1, keepdims=True) ** power

    a, b = keras.Input(shape=(3,)), keras.Input(shape=(3,))
    out = layers.Lambda(distance, output_shape=lambda shapes: (shapes[0][0], 1), arguments={"power": 0.5})([a, b])
    model = keras.Model([a, b], out)
    x1, x2 = np.zeros((2, 3), "float32"), np.full((2, 3), 2.0, "float32")
    assert np.allclose(model.predict([x1, x2], verbose=0), np.sqrt(12.0))


def test_boolean_one_hot_inputs_feed_a_recurrent_model():
    x = np.zeros((64, 5, 4), dtype=bool)
    x[np.arange(64), 0, np.arange(64) % 4] = True
    y = np.arange(64) % 4
    model = keras.Sequential([layers.LSTM(8, input_shape=(5, 4)), layers.Dense(4, activation="softmax")])
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    model.fit(x, y, epochs=2, verbose=0)
    assert model.predict(x[:3], verbose=0).shape == (3, 4)
    assert model.predict_classes(x[:3], verbose=0).shape == (3,)


@pytest.mark.parametrize("kind", ["LSTM", "GRU", "SimpleRNN"])
def test_recurrent_step_loop_matches_the_fused_layer(kind):
    x = np.random.default_rng(0).normal(size=(3, 6, 4)).astype("float32")
    layer = getattr(layers, kind)(5, return_sequences=True, dropout=0.2, recurrent_dropout=0.3)
    layer.eval()
    fused = layer(x).numpy()  # inference: no dropout, graphgrad's fused recurrence
    looped = layer._loop(gg.tensor(x)).numpy()
    assert np.allclose(fused, looped, atol=1e-5)
    layer.train()
    assert not np.allclose(layer(x).numpy(), fused)  # dropout acts in training


def test_simple_rnn_with_relu_and_identity_recurrent_kernel():
    rnn = layers.SimpleRNN(4, activation="relu", recurrent_initializer=keras.initializers.Identity(gain=1.0))
    x = np.random.default_rng(1).normal(size=(2, 3, 2)).astype("float32")
    out = rnn(x).numpy()
    w, u, b = rnn.get_weights()
    h = np.zeros((2, 4))
    for t in range(3):
        h = np.maximum(x[:, t] @ w + h @ u + b, 0)
    assert np.allclose(out, h, atol=1e-5)


def test_a_recurrent_model_with_recurrent_dropout_learns():
    rng = np.random.default_rng(0)
    x = rng.integers(1, 30, (300, 12))
    y = (x == 5).any(axis=1).astype("int64")
    model = keras.Sequential([layers.Embedding(30, 16), layers.LSTM(16, dropout=0.2, recurrent_dropout=0.2),
                              layers.Dense(1, activation="sigmoid")])
    model.compile(optimizer=keras.optimizers.Adam(0.01), loss="binary_crossentropy", metrics=["accuracy"])
    model.fit(x, y, epochs=6, batch_size=32, verbose=0)
    assert model.evaluate(x, y, verbose=0)[1] > 0.85


class Antirectifier(layers.Layer):
    def call(self, inputs):
        inputs -= K.mean(inputs, axis=1, keepdims=True)
        inputs = K.l2_normalize(inputs, axis=1)
        return K.concatenate([K.relu(inputs), K.relu(-inputs)], axis=1)


class Scaled(layers.Layer):
    def __init__(self, units=4, **kwargs):
        super().__init__(**kwargs)
        self.units = units

    def build(self, input_shape):
        self.kernel = self.add_weight(name="kernel", shape=(input_shape[-1], self.units), initializer="he_normal",
                                      regularizer=keras.regularizers.l2(1e-3))
        self.bias = self.add_weight(name="bias", shape=(self.units,), initializer="zeros")
        self.calls = self.add_weight(name="calls", shape=(), initializer="zeros", trainable=False)

    def call(self, inputs, training=None):
        if training:
            self.calls.assign_add(1.0)
        return keras.ops.matmul(inputs, self.kernel) + self.bias

    def get_config(self):
        config = super().get_config()
        config.update({"units": self.units})
        return config


def test_custom_layers_with_call_add_weight_and_get_config(tmp_path):
    out = Antirectifier()(np.array([[1.0, 3.0]], "float32")).numpy()
    assert np.allclose(out, [[0, np.sqrt(0.5), np.sqrt(0.5), 0]], atol=1e-6)
    x = np.random.default_rng(0).normal(size=(128, 6)).astype("float32")
    y = (x[:, 0] > 0).astype("int64")
    model = keras.Sequential([keras.Input(shape=(6,)), Scaled(8), Antirectifier(), layers.Dense(2, activation="softmax")])
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    model.fit(x, y, epochs=3, batch_size=32, verbose=0)
    scaled = model.layers[0]
    assert float(scaled.calls.numpy()) == 12.0  # 4 batches x 3 epochs, in training only
    assert len(scaled.trainable_weights) == 2 and len(scaled.weights) == 3
    assert len(model.losses) == 1  # the kernel's l2
    model.save(str(tmp_path / "m.keras"))
    restored = keras.models.load_model(str(tmp_path / "m.keras"), custom_objects={"Scaled": Scaled,
                                                                                  "Antirectifier": Antirectifier})
    assert restored.layers[0].units == 8
    assert np.allclose(restored.predict(x[:4], verbose=0), model.predict(x[:4], verbose=0), atol=1e-6)


def test_a_function_loss_gets_targets_of_the_outputs_rank():
    def contrastive(y_true, y_pred):  # mnist_siamese's loss: y_true (batch,) against y_pred (batch, 1)
        assert tuple(y_true.shape) == tuple(y_pred.shape)
        return K.mean(y_true * K.square(y_pred) + (1 - y_true) * K.square(K.maximum(1 - y_pred, 0)))

    def accuracy(y_true, y_pred):
        return K.mean(K.equal(y_true, K.cast(y_pred < 0.5, y_true.dtype)))

    x = np.random.default_rng(0).normal(size=(64, 3)).astype("float32")
    y = (x[:, 0] > 0).astype("int64")
    model = keras.Sequential([keras.Input(shape=(3,)), layers.Dense(1, activation="sigmoid")])
    model.compile(optimizer="adam", loss=contrastive, metrics=[accuracy])
    history = model.fit(x, y, epochs=2, verbose=0)
    assert set(history.history) >= {"loss", "accuracy"}


# ---- fit with generators, Keras 2's methods, saving ----------------------------------------------------------------------
def test_fit_with_a_generator_and_steps_per_epoch_and_fit_generator(tmp_path):
    rng = np.random.default_rng(0)
    x = rng.normal(size=(256, 4)).astype("float32")
    y = (x.sum(axis=1) > 0).astype("int64")

    def batches():
        while True:
            for i in range(0, 256, 32):
                yield x[i:i + 32], y[i:i + 32]

    model = keras.Sequential([keras.Input(shape=(4,)), layers.Dense(2, activation="softmax")])
    model.compile(optimizer=keras.optimizers.Adam(0.05), loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    history = model.fit(batches(), steps_per_epoch=8, epochs=3, validation_data=batches(), validation_steps=2,
                        verbose=0)
    assert len(history.history["loss"]) == 3 and "val_loss" in history.history
    model.fit_generator(batches(), steps_per_epoch=8, epochs=2, verbose=0)
    assert model.evaluate_generator(batches(), steps=4)[1] > 0.9
    assert model.predict_generator((b[0] for b in batches()), steps=2).shape == (64, 2)
    with pytest.raises(ValueError, match="steps_per_epoch"):
        model.fit(batches(), epochs=1, verbose=0)
    model.save(str(tmp_path / "m.h5"))  # Keras 2's name: the same archive as .keras
    restored = keras.models.load_model(str(tmp_path / "m.h5"))
    assert np.allclose(restored.predict(x[:5], verbose=0), model.predict(x[:5], verbose=0), atol=1e-6)


def test_scikit_learn_wrappers():
    from graphgrad.compat.keras.wrappers.scikit_learn import KerasClassifier, KerasRegressor

    def build(units=8, loss="categorical_crossentropy"):
        model = keras.Sequential([keras.Input(shape=(2,)), layers.Dense(units, activation="relu"),
                                  layers.Dense(3, activation="softmax")])
        model.compile(optimizer=keras.optimizers.Adam(0.05), loss=loss, metrics=["accuracy"])
        return model

    rng = np.random.default_rng(0)
    x = rng.normal(size=(150, 2)).astype("float32")
    names = np.array(["low", "mid", "high"])[np.digitize(x[:, 0], [-0.5, 0.5])]
    clf = KerasClassifier(build_fn=build, units=16, epochs=15, batch_size=16, verbose=0)
    assert clf.get_params()["units"] == 16 and clf.set_params(units=12).sk_params["units"] == 12
    clf.fit(x, names)  # string labels, one-hot for categorical_crossentropy
    assert set(clf.predict(x[:10])) <= {"low", "mid", "high"} and clf.predict_proba(x[:4]).shape == (4, 3)
    assert clf.score(x, names) > 0.85

    def build_regressor():
        model = keras.Sequential([keras.Input(shape=(2,)), layers.Dense(1)])
        model.compile(optimizer=keras.optimizers.Adam(0.1), loss="mse")
        return model

    reg = KerasRegressor(build_fn=build_regressor, epochs=30, verbose=0)
    reg.fit(x, x @ np.array([1.0, -2.0], "float32"))
    assert reg.predict(x[:5]).shape == (5,) and reg.score(x, x @ np.array([1.0, -2.0], "float32")) > -0.05


def test_gan_idiom_weights_train_as_they_were_at_compile():
    generator = keras.Sequential([layers.Dense(8, input_dim=4, kernel_initializer="normal"),
                                  layers.LeakyReLU(alpha=0.2), layers.Dense(6, activation="tanh")])
    discriminator = keras.Sequential([layers.Dense(8, input_dim=6, kernel_initializer="uniform"),
                                      layers.LeakyReLU(alpha=0.2), layers.Dense(1, activation="sigmoid")])
    discriminator.compile(loss="binary_crossentropy", optimizer=keras.optimizers.Adam(lr=0.01, beta_1=0.5),
                          metrics=["acc"])
    assert discriminator.metrics_names == ["loss", "acc"]
    discriminator.trainable = False  # for the combined model only (Keras 2's GAN examples)
    z = keras.Input(shape=(4,))
    combined = keras.Model(z, discriminator(generator(z)))
    combined.compile(loss="binary_crossentropy", optimizer=keras.optimizers.Adam(0.01, 0.5))
    noise = np.random.default_rng(0).normal(size=(16, 4)).astype("float32")
    d_before, g_before = discriminator.get_weights()[0].copy(), generator.get_weights()[0].copy()
    combined.train_on_batch(noise, np.ones((16, 1), "float32"))
    assert np.array_equal(discriminator.get_weights()[0], d_before)
    assert not np.array_equal(generator.get_weights()[0], g_before)
    loss, acc = discriminator.train_on_batch(generator.predict(noise, verbose=0), np.zeros((16, 1), "float32"))
    assert not np.array_equal(discriminator.get_weights()[0], d_before)  # compiled while trainable: it trains
    assert 0.0 <= acc <= 1.0 and loss > 0


def test_to_json_model_from_json_input_shape_and_dict_inputs(tmp_path):
    model = keras.Sequential([layers.Dense(3, input_shape=(2,), activation="relu"), layers.Dense(1)])
    assert model.input_shape == (None, 2) and model.output_shape == (None, 1)
    model.save_weights(str(tmp_path / "model.h5"))
    from graphgrad.compat.keras.models import model_from_json

    again = model_from_json(model.to_json())
    again.load_weights(str(tmp_path / "model.h5"))
    x = np.ones((2, 2), "float32")
    assert np.allclose(again.predict(x, verbose=0), model.predict(x, verbose=0))
    a, b = keras.Input(shape=(5,), dtype="int32", name="words"), keras.Input(shape=(3,), name="extra")
    h = layers.concatenate([layers.LSTM(4)(layers.Embedding(10, 3)(a)), b])
    two = keras.Model([a, b], [layers.Dense(1, activation="sigmoid", name="out")(h), layers.Dense(1, name="aux")(h)])
    assert two.input_shape == [(None, 5), (None, 3)]
    two.compile(optimizer="rmsprop", loss={"out": "binary_crossentropy", "aux": "mse"}, loss_weights={"out": 1.0, "aux": 0.2})
    inputs = {"words": np.zeros((4, 5), "int32"), "extra": np.zeros((4, 3), "float32")}
    two.fit(inputs, {"out": np.zeros(4), "aux": np.zeros(4)}, epochs=1, verbose=0)
    assert [p.shape for p in two.predict(inputs, verbose=0)] == [(4, 1), (4, 1)]


# ---- preprocessing --------------------------------------------------------------------------------------------------------
def test_tokenizer_as_keras_2():
    from graphgrad.compat.keras.preprocessing.text import Tokenizer, text_to_word_sequence, tokenizer_from_json

    texts = ["The cat sat.", "The dog sat on the mat!", "A cat"]
    assert text_to_word_sequence("Hello, World!") == ["hello", "world"]
    tok = Tokenizer(num_words=4, oov_token="<unk>")
    tok.fit_on_texts(texts)
    assert tok.word_index["<unk>"] == 1 and tok.word_index["the"] == 2 and tok.word_index["cat"] == 3
    assert tok.texts_to_sequences(["the cat flew"]) == [[2, 3, 1]]
    binary = tok.texts_to_matrix(["the the cat"], mode="binary")
    assert binary.shape == (1, 4) and binary.tolist() == [[0, 0, 1, 1]]
    assert tok.texts_to_matrix(["the the cat"], mode="count").tolist() == [[0, 0, 2, 1]]
    assert np.allclose(tok.texts_to_matrix(["the the cat"], mode="freq"), [[0, 0, 2 / 3, 1 / 3]])
    tfidf = tok.texts_to_matrix(["the cat"], mode="tfidf")
    assert np.isclose(tfidf[0, 2], np.log(1 + 3 / (1 + 2)))
    again = tokenizer_from_json(tok.to_json())
    assert again.texts_to_sequences(["the cat flew"]) == [[2, 3, 1]]
    plain = Tokenizer()
    plain.fit_on_texts(texts)
    assert plain.sequences_to_matrix([[1, 2]], mode="binary").shape == (1, len(plain.word_index) + 1)


def test_image_data_generator_flow_and_transforms():
    from graphgrad.compat.keras.preprocessing.image import ImageDataGenerator, apply_affine_transform

    img = np.arange(16, dtype="float32").reshape(4, 4, 1)
    flipped = ImageDataGenerator(horizontal_flip=True).apply_transform(img, {"flip_horizontal": True})
    assert np.array_equal(flipped[..., 0], img[:, ::-1, 0])
    shifted = apply_affine_transform(img, tx=1, fill_mode="nearest")  # the rows move up by one, the last repeats
    assert np.allclose(shifted[:3, :, 0], img[1:, :, 0]) and np.allclose(shifted[3, :, 0], img[3, :, 0])
    rotated = apply_affine_transform(img, theta=90, fill_mode="constant")
    assert np.allclose(np.sort(rotated.ravel()), np.sort(img.ravel()), atol=1e-4)
    x = np.random.default_rng(0).uniform(0, 255, (10, 6, 6, 3)).astype("float32")
    y = np.arange(10)
    gen = ImageDataGenerator(featurewise_center=True, featurewise_std_normalization=True, rotation_range=15,
                             width_shift_range=0.1, height_shift_range=0.1, zoom_range=0.1, horizontal_flip=True)
    gen.fit(x)
    it = gen.flow(x, y, batch_size=4, seed=0)
    assert len(it) == 3
    xb, yb = next(it)
    assert xb.shape == (4, 6, 6, 3) and yb.shape == (4,)
    assert abs(float(gen.standardize(x.copy()).mean())) < 1e-3
    assert sorted(np.concatenate([it[i][1] for i in range(len(it))]).tolist()) == list(range(10))


def test_datasets_read_keras_files_and_get_file_does_not_download(tmp_path):
    sequences = np.empty(3, dtype=object)
    sequences[:] = [[1, 2, 3], [4, 5, 6, 7, 8], [9]]
    np.savez(tmp_path / "imdb.npz", x_train=sequences[:2], y_train=np.array([0, 1]), x_test=sequences[2:],
             y_test=np.array([1]))
    (x_train, y_train), (x_test, y_test) = keras.datasets.imdb.load_data(path=str(tmp_path / "imdb.npz"),
                                                                         num_words=8)
    assert len(x_train) == 2 and len(x_test) == 1 and sorted(y_train.tolist()) == [0, 1]
    assert x_test[0] == [1, 2]  # start_char 1, then 9 + index_from 3 = 12, out of num_words: oov_char 2
    assert all(s[0] == 1 and max(s) < 8 for s in x_train)
    with pytest.raises(FileNotFoundError, match="does not download"):
        keras.utils.get_file("nothing.txt", origin="https://example.com/nothing.txt", cache_dir=str(tmp_path))
    (tmp_path / "datasets").mkdir()
    (tmp_path / "datasets" / "here.txt").write_text("x")
    assert keras.utils.get_file("here.txt", origin="u", cache_dir=str(tmp_path)).endswith("here.txt")


# ---- programs -------------------------------------------------------------------------------------------------------------
#: program -> the test accuracy it must reach (each trains for a few epochs on small data)
PROGRAMS = {"reviews_conv1d.py": 0.9, "reviews_lstm_dropout.py": 0.9, "antirectifier_digits.py": 0.85,
            "siamese_digits.py": 0.85, "news_tokenizer_mlp.py": 0.9, "augmented_digits_cnn.py": 0.85,
            "vae_digits.py": 0.5, "addition_seq2seq.py": 0.4, "diabetes_sklearn_wrapper.py": 0.85}
SHIM = ("import graphgrad.compat.keras as k; k.install(); import runpy, sys; "
        "runpy.run_path(sys.argv[1], run_name='__main__')")


def run_program(program: str, cwd) -> str:
    env = dict(os.environ, PYTHONPATH=ROOT, OMP_NUM_THREADS="1")
    done = subprocess.run([sys.executable, "-c", SHIM, os.path.join(HERE, "keras_realworld", program)],
                          capture_output=True, text=True, timeout=600, env=env, cwd=cwd)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    return done.stdout


def final_accuracy(stdout: str) -> float:
    what, value = stdout.strip().splitlines()[-1].split()
    assert what == "accuracy", stdout[-1000:]
    return float(value)


@pytest.mark.parametrize("program, goal", PROGRAMS.items())
def test_a_keras_style_program_learns(program, goal, tmp_path):
    stdout = run_program(program, tmp_path)
    assert final_accuracy(stdout) >= goal
    if program == "augmented_digits_cnn.py":  # ModelCheckpoint wrote the .h5 name that load_model read back
        assert (tmp_path / "saved_models" / "keras_digits_trained_model.h5").exists()


# ---- symbolic ops and model.add_loss ------------------------------------------------------------------------------------
def test_ops_on_keras_tensors_build_the_graph():
    inputs = keras.Input(shape=(3,))
    h = layers.Dense(4)(inputs)
    out = K.mean(keras.ops.concatenate([h, h * 2 + 1], axis=-1), axis=1, keepdims=True) - h[:, :1]
    model = keras.Model(inputs, -out)
    x = np.random.default_rng(0).normal(size=(5, 3)).astype("float32")
    w, b = model.layers[0].get_weights()
    hv = x @ w + b
    expected = -(np.concatenate([hv, 2 * hv + 1], axis=1).mean(axis=1, keepdims=True) - hv[:, :1])
    assert np.allclose(model.predict(x, verbose=0), expected, atol=1e-5)


def test_a_symbolic_add_loss_trains_a_model_compiled_without_a_loss():
    inputs = keras.Input(shape=(6,))
    code = layers.Dense(2, name="code")(inputs)
    outputs = layers.Dense(6)(code)
    model = keras.Model(inputs, outputs)
    reconstruction = keras.losses.mse(inputs, outputs)  # per sample, on symbolic tensors
    model.add_loss(K.mean(reconstruction) + 1e-3 * K.mean(K.square(code)))
    model.compile(optimizer=keras.optimizers.Adam(0.02))
    x = np.random.default_rng(0).normal(size=(256, 2)).astype("float32") @ np.ones((2, 6), "float32")
    history = model.fit(x, epochs=8, batch_size=32, validation_data=(x, None), verbose=0)
    assert history.history["loss"][-1] < 0.2 * history.history["loss"][0]
    assert model.evaluate(x, verbose=0) < 0.2 * history.history["loss"][0]
    assert model.predict(x[:3], verbose=0).shape == (3, 6)
