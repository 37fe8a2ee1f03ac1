"""Keras 3 idioms of keras-io's programs on graphgrad.compat.keras: ``sample_weight`` in ``fit`` /
``evaluate`` / ``train_on_batch`` (Keras' weighted ``sum_over_batch_size``), a subclass's own
``train_step`` / ``test_step`` with ``GradientTape`` and metric trackers, ``Masking``,
``TextVectorization``; and short programs in keras-io's style (tests/compat/keras_realworld2/) that
must learn. Expected numbers were computed with Keras 3.15 (TensorFlow backend)."""
from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

from graphgrad.compat import keras

from tests.compat.test_keras_realworld import HERE, ROOT, _seed  # noqa: F401  (the seeding fixture, autouse)


# ---- sample_weight --------------------------------------------------------------------------------------------------
def _weighted_data():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(20, 4)).astype("float32")
    y = rng.integers(0, 3, size=20)
    w = rng.uniform(0, 2, size=20)
    rng.normal(size=(20, 1))
    kernel = rng.normal(size=(4, 3)).astype("float32") * 0.5
    return x, y, w, kernel


def _classifier(kernel, metrics=("accuracy",)):
    inputs = keras.Input((4,))
    outputs = keras.layers.Dense(3, activation="softmax")(inputs)
    model = keras.Model(inputs, outputs)
    model.layers[-1].set_weights([kernel, np.zeros(3, "float32")])
    model.compile(optimizer=keras.optimizers.SGD(0.1), loss="sparse_categorical_crossentropy",
                  metrics=list(metrics) or None)
    return model


def test_fit_evaluate_with_sample_weight_match_keras():
    x, y, w, kernel = _weighted_data()
    model = _classifier(kernel)
    history = model.fit(x, y, sample_weight=w, batch_size=8, epochs=2, shuffle=False, verbose=0)
    assert np.allclose(history.history["loss"], [2.64156, 2.27313], atol=2e-5)
    assert np.allclose(history.history["accuracy"], [0.2, 0.2])
    assert np.allclose(model.layers[-1].get_weights()[0].ravel()[:4], [-0.40696, 0.06367, 0.13533, 0.63488], atol=2e-5)
    assert np.allclose(model.evaluate(x, y, sample_weight=w, batch_size=8, verbose=0), [1.98427, 0.25], atol=2e-5)
    assert np.allclose(model.evaluate(x, y, batch_size=8, verbose=0), [1.6445, 0.25], atol=2e-5)
    model = _classifier(kernel)
    assert np.allclose(model.train_on_batch(x, y, sample_weight=w), [2.69051, 0.2], atol=2e-5)
    assert np.allclose(model.test_on_batch(x, y, sample_weight=w), [2.5556, 0.2], atol=2e-5)
    model = _classifier(kernel, metrics=())
    history = model.fit(x, y, sample_weight=w, batch_size=8, epochs=1, shuffle=False, verbose=0,
                        validation_data=(x[:6], y[:6], w[:6]))
    assert np.allclose([history.history["loss"][0], history.history["val_loss"][0]], [2.64156, 1.76294], atol=2e-5)
    with pytest.raises(ValueError, match="class_weight"):
        model.fit(x, y, sample_weight=w, class_weight={0: 1.0}, verbose=0)


def test_loss_and_mean_metric_take_sample_weight_as_keras():
    y_true, y_pred = np.array([[0.0], [1.0], [1.0]]), np.array([[0.2], [0.7], [0.4]], "float32")
    w = np.array([1.0, 2.0, 0.5])
    assert np.isclose(float(keras.losses.BinaryCrossentropy()(y_true, y_pred, sample_weight=w)), 0.4648796, atol=1e-6)
    logits = np.array([[1.0, 2.0], [3.0, 1.0]], "float32")
    loss = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    assert np.isclose(float(loss(np.array([0, 1]), logits, sample_weight=np.array([2.0, 1.0]))), 2.3767257, atol=1e-6)
    mse = keras.losses.MeanSquaredError(reduction="mean_with_sample_weight")
    assert np.isclose(float(mse(np.ones((3, 2)), np.zeros((3, 2)), sample_weight=w)), 1.0)
    assert keras.losses.MeanSquaredError(reduction="none")(np.ones((3, 2)), np.zeros((3, 2)), sample_weight=w).shape == (3,)
    mean = keras.metrics.Mean(name="m")
    mean.update_state([1.0, 2.0, 3.0], sample_weight=[1, 0, 1])
    assert float(mean.result()) == 2.0 and mean.result().numpy() == np.float32(2.0)
    mean.reset_state()
    assert float(mean.result()) == 0.0
    auc = keras.metrics.AUC()
    auc.update_state([0, 1, 1, 0], [0.1, 0.8, 0.3, 0.6], sample_weight=[1.0, 1.0, 2.0, 0.5])
    assert np.isclose(auc.result(), 0.7777777, atol=1e-5)


def test_keras_metric_objects_take_sample_weight_and_reset_state():
    mae = keras.metrics.MeanAbsoluteError(name="mae")
    mae.update_state(np.array([[1.0], [2.0]]), np.array([[0.0], [0.0]]), sample_weight=np.array([1.0, 3.0]))
    assert float(mae.result()) == 1.75
    mae.reset_state()
    assert float(mae.result()) == 0.0
    accuracy = keras.metrics.SparseCategoricalAccuracy()
    accuracy.update_state(np.array([0, 1, 1]), np.array([[0.9, 0.1], [0.2, 0.8], [0.7, 0.3]]),
                          sample_weight=np.array([1.0, 1.0, 2.0]))
    assert accuracy.result() == 0.5  # Keras: (1 + 1 + 0) / 4


def test_unknown_input_dimensions_stay_none_through_layers():
    L = keras.layers
    tokens = keras.Input(shape=(None,), dtype="int64")
    h = L.Conv1D(32, 3)(L.Embedding(40, 16)(tokens))  # a sequence of unknown length: long enough for a kernel of 3
    assert h.shape == (None, None, 32) and L.GlobalMaxPooling1D()(h).shape == (None, 32)
    images = keras.Input(shape=(None, None, 3))
    assert L.MaxPooling2D()(L.Conv2D(4, 3, padding="same")(images)).shape == (None, None, None, 4)
    assert L.LSTM(4, return_sequences=True)(keras.Input(shape=(None, 3))).shape == (None, None, 4)


# ---- a subclass's own train_step / test_step, GradientTape ------------------------------------------------------------
def test_overridden_train_and_test_step_match_keras():
    tape_of = keras.trainer.GradientTape
    ops = keras.ops

    class CustomModel(keras.Model):  # keras-io's "customizing what happens in fit", metrics by self.metrics
        def train_step(self, data):
            x, y = data
            with tape_of() as tape:
                y_pred = self(x, training=True)
                loss = self.compute_loss(y=y, y_pred=y_pred)
            grads = tape.gradient(loss, self.trainable_variables)
            self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
            for metric in self.metrics:
                if metric.name == "loss":
                    metric.update_state(loss)
                else:
                    metric.update_state(y, y_pred)
            return {m.name: m.result() for m in self.metrics}

        def test_step(self, data):
            x, y = data
            y_pred = self(x, training=False)
            loss = self.compute_loss(y=y, y_pred=y_pred)
            for metric in self.metrics:
                metric.update_state(loss) if metric.name == "loss" else metric.update_state(y, y_pred)
            return {m.name: m.result() for m in self.metrics}

    rng = np.random.default_rng(1)
    x = rng.normal(size=(16, 3)).astype("float32")
    y = (x @ np.array([[1.0], [-2.0], [0.5]], "float32")).astype("float32")
    inputs = keras.Input(shape=(3,))
    model = CustomModel(inputs, keras.layers.Dense(1)(inputs))
    model.layers[-1].set_weights([np.array([[0.1], [0.2], [0.3]], "float32"), np.zeros(1, "float32")])
    model.compile(optimizer=keras.optimizers.SGD(0.05), loss="mse", metrics=["mae"])
    history = model.fit(x, y, epochs=2, batch_size=4, shuffle=False, verbose=0)
    assert np.allclose(history.history["loss"], [3.45467, 1.67458], atol=2e-5)
    assert np.allclose(history.history["mae"], [1.45914, 1.04017], atol=2e-5)
    assert np.allclose(model.layers[-1].get_weights()[0].ravel(), [0.50536, -0.82214, -0.00023], atol=2e-5)
    logs = model.evaluate(x, y, batch_size=8, verbose=0, return_dict=True)
    assert np.allclose([logs["loss"], logs["mae"]], [0.9855642, 0.8267792], atol=2e-5)
    assert [m.name for m in model.metrics] == ["loss", "compile_metrics"]
    assert ops is keras.ops


def test_gradient_tape_watch_persistent_and_gradient_of_gradient():
    tape_of = keras.trainer.GradientTape
    x = keras.ops.convert_to_tensor(np.array([1.0, 2.0], "float32"))
    with tape_of(persistent=True) as tape:
        tape.watch(x)
        cubes = keras.ops.sum(x * x * x)
        doubled = x * 2.0
    assert np.allclose(tape.gradient(cubes, x).numpy(), [3.0, 12.0])
    assert np.allclose(tape.gradient(doubled, x).numpy(), [2.0, 2.0])  # d(sum)/dx for a non-scalar target
    with tape_of() as outer:  # a gradient penalty: the inner gradient is differentiated again
        outer.watch(x)
        with tape_of() as inner:
            inner.watch(x)
            cubes = keras.ops.sum(x ** 3)
        grad = inner.gradient(cubes, x)
        penalty = keras.ops.sum(grad * grad)
    assert np.allclose(outer.gradient(penalty, x).numpy(), [36.0, 288.0])
    with pytest.raises(RuntimeError, match="non-persistent"):
        inner.gradient(cubes, x)
    w = keras.layers.Dense(2)
    w.build((None, 3))
    with tape_of() as tape:
        out = keras.ops.sum(w(np.ones((1, 3), "float32")))
    grads = tape.gradient(out, {"kernel": w.trainable_weights[0], "unused": keras.ops.convert_to_tensor(1.0)})
    assert grads["unused"] is None and tuple(grads["kernel"].shape) == tuple(w.trainable_weights[0].shape)


def test_tensorflow_module_gets_the_gradient_tape_after_install():
    code = ("import graphgrad.compat.keras as k; k.install()\nimport tensorflow as tf\n"
            "assert tf.GradientTape is k.trainer.GradientTape\nprint('ok')")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                          env=dict(os.environ, PYTHONPATH=ROOT))
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-2000:]


def test_optimizer_apply_gradients_attaches_to_the_variables_given():
    layer = keras.layers.Dense(1, use_bias=False)
    layer.build((None, 2))
    layer.set_weights([np.array([[1.0], [2.0]], "float32")])
    optimizer = keras.optimizers.SGD(learning_rate=0.5)
    kernel = layer.trainable_weights[0]
    ones = keras.ops.convert_to_tensor(np.ones(tuple(kernel.shape), "float32"))  # a gradient of the variable's shape
    assert optimizer.apply_gradients([(ones, kernel)]) == 1
    assert np.allclose(layer.get_weights()[0].ravel(), [0.5, 1.5])
    optimizer.apply([None], [kernel])  # a None gradient leaves the variable as it is
    assert np.allclose(layer.get_weights()[0].ravel(), [0.5, 1.5])


# ---- programs -------------------------------------------------------------------------------------------------------------
#: program -> the accuracy its last line must reach (each trains for a few epochs on small data)
PROGRAMS = {"gan_digits_train_step.py": 0.7, "vae_digits_train_step.py": 0.25, "reviews_text_vectorization.py": 0.85}
SHIM = ("import graphgrad.compat.keras as k; k.install(); import runpy, sys; "
        "runpy.run_path(sys.argv[1], run_name='__main__')")


@pytest.mark.parametrize("program, goal", PROGRAMS.items())
def test_a_keras_io_style_program_learns(program, goal, tmp_path):
    env = dict(os.environ, PYTHONPATH=ROOT, OMP_NUM_THREADS="1")
    done = subprocess.run([sys.executable, "-c", SHIM, os.path.join(HERE, "keras_realworld2", program)],
                          capture_output=True, text=True, timeout=600, env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    what, value = done.stdout.strip().splitlines()[-1].split()
    assert what == "accuracy" and float(value) >= goal, done.stdout[-1000:]


# ---- Masking --------------------------------------------------------------------------------------------------------------
MASKED_LAST = {  # Keras 3.15: the last output of each recurrent layer after Masking(0.0), weights set below
    "LSTM": [[-0.05602, -0.03285, 0.00449], [-0.05555, -0.04147, -0.02333], [-0.02021, -0.02894, -0.03454]],
    "GRU": [[-0.01213, 0.12215, 0.20388], [-0.27009, -0.20945, -0.14527], [-0.4807, -0.45759, -0.43365]],
    "SimpleRNN": [[-0.85341, -0.28437, 0.59394], [-0.34169, 0.0021, 0.34539], [0.62606, 0.37028, 0.04255]],
}


@pytest.mark.parametrize("kind", sorted(MASKED_LAST))
def test_masking_feeds_recurrent_layers_as_keras(kind):
    rng = np.random.default_rng(2)
    x = rng.normal(size=(3, 5, 2)).astype("float32")
    x[0, 3:] = 0.0
    x[1, :2] = 0.0
    x[2, 2] = 0.0
    outputs = {}
    for sequences in (False, True):
        inputs = keras.Input((5, 2))
        layer = getattr(keras.layers, kind)(3, return_sequences=sequences)
        model = keras.Model(inputs, layer(keras.layers.Masking(mask_value=0.0)(inputs)))
        layer.set_weights([np.linspace(-0.5, 0.5, w.size).reshape(w.shape).astype("float32")
                           for w in layer.get_weights()])
        outputs[sequences] = model.predict(x, verbose=0)
    assert np.allclose(outputs[False], MASKED_LAST[kind], atol=2e-5)
    steps = outputs[True]
    assert np.allclose(steps[0, 3], steps[0, 2]) and np.allclose(steps[0, 4], steps[0, 2])  # state carried over
    assert np.allclose(steps[1, :2], 0.0) and np.allclose(steps[2, 2], steps[2, 1])
    masking = keras.layers.Masking()
    assert masking.compute_mask(x).numpy().tolist() == [[True, True, True, False, False], [False, False, True, True, True],
                                                        [True, True, False, True, True]]
    assert np.isclose(float(np.asarray(masking(x)).sum()), float(x.sum()), atol=1e-5)


# ---- TextVectorization ----------------------------------------------------------------------------------------------------
TEXTS = ["The cat sat on the mat.", "The dog ate my homework!", "Cat, dog; bird? the END", "zebra yak the cat"]
QUERIES = np.array(["the cat and the dog", "Yak! zebra.", "bird"])


def test_text_vectorization_int_mode_as_keras():
    layer = keras.layers.TextVectorization()
    layer.adapt(TEXTS)
    assert layer.get_vocabulary() == ["", "[UNK]", "the", "cat", "dog", "zebra", "yak", "sat", "on", "my", "mat",
                                      "homework", "end", "bird", "ate"]  # by count, ties in reverse order
    assert layer.vocabulary_size() == 15
    out = layer(QUERIES)
    assert out.dtype == np.int64 and out.numpy().tolist() == [[2, 3, 1, 2, 4], [6, 5, 0, 0, 0], [13, 0, 0, 0, 0]]
    layer = keras.layers.TextVectorization(max_tokens=6, output_sequence_length=7)
    layer.adapt(TEXTS)
    assert layer.get_vocabulary() == ["", "[UNK]", "the", "cat", "dog", "zebra"]
    assert layer(QUERIES).numpy().tolist() == [[2, 3, 1, 2, 4, 0, 0], [1, 5, 0, 0, 0, 0, 0], [1, 0, 0, 0, 0, 0, 0]]
    layer = keras.layers.TextVectorization(ngrams=2, max_tokens=10)
    layer.adapt(TEXTS)
    assert layer.get_vocabulary()[2:] == ["the", "cat", "the cat", "dog", "zebra yak", "zebra", "yak the", "yak"]
    assert layer(QUERIES).numpy()[1].tolist() == [9, 7, 1, 0, 0, 0, 0, 0, 0]
    layer = keras.layers.TextVectorization(vocabulary=["a", "b"])
    assert layer(["a c b b"]).numpy().tolist() == [[2, 1, 3, 3]]
    assert layer.get_vocabulary(include_special_tokens=False) == ["a", "b"]
    layer = keras.layers.TextVectorization(standardize=None, split="character")
    layer.adapt(["abca", "Bb"])
    assert layer.get_vocabulary() == ["", "[UNK]", "b", "a", "c", "B"] and layer(["aBc"]).numpy().tolist() == [[3, 5, 4]]
    layer = keras.layers.TextVectorization(output_sequence_length=5)
    layer.adapt(np.array([["hello world"], ["hello there"]]))
    assert layer(np.array([["hello you"]])).numpy().tolist() == [[2, 1, 0, 0, 0]]
    with pytest.raises(ValueError, match="output_sequence_length"):
        keras.layers.TextVectorization(output_mode="count", output_sequence_length=3)


def test_text_vectorization_multi_hot_count_tf_idf_as_keras():
    layer = keras.layers.TextVectorization(output_mode="multi_hot")
    layer.adapt(TEXTS)
    assert layer.get_vocabulary()[:3] == ["[UNK]", "the", "cat"]
    assert layer(QUERIES).numpy().tolist()[2] == [0] * 12 + [1, 0]
    layer = keras.layers.TextVectorization(output_mode="count", max_tokens=5)
    layer.adapt(TEXTS)
    assert layer(QUERIES).numpy().tolist() == [[1, 2, 1, 1, 0], [1, 0, 0, 0, 1], [1, 0, 0, 0, 0]]
    layer = keras.layers.TextVectorization(output_mode="multi_hot", max_tokens=12, pad_to_max_tokens=True)
    layer.adapt(TEXTS)
    assert layer(QUERIES).numpy().tolist()[2] == [1] + [0] * 11
    layer = keras.layers.TextVectorization(output_mode="tf_idf")
    layer.adapt(TEXTS)
    out = layer(QUERIES).numpy()
    assert out.dtype == np.float32 and out.shape == (3, 14)
    assert np.allclose(out[0, :4], [1.0088, 1.1756, 0.6931, 0.8473], atol=1e-4)  # the OOV weight: the mean idf
    assert np.allclose(out[1, 4:6], [1.0986, 1.0986], atol=1e-4)


def test_text_vectorization_first_in_a_functional_model():
    texts = np.array(["good movie great", "bad awful movie", "great great fun", "awful bad bad"] * 8)
    labels = np.array([1, 0, 1, 0] * 8)
    vectorize = keras.layers.TextVectorization(max_tokens=20, output_sequence_length=4)
    vectorize.adapt(texts)
    inputs = keras.Input(shape=(1,), dtype="string")
    h = keras.layers.Embedding(20, 8)(vectorize(inputs))
    outputs = keras.layers.Dense(1, activation="sigmoid")(keras.layers.GlobalAveragePooling1D()(h))
    model = keras.Model(inputs, outputs)
    model.compile(optimizer=keras.optimizers.Adam(0.05), loss="binary_crossentropy", metrics=["accuracy"])
    model.fit(texts[:, None], labels, epochs=10, batch_size=8, verbose=0)
    assert model.evaluate(texts, labels, verbose=0)[1] == 1.0
    assert model.predict(np.array([["great fun"]]), verbose=0).shape == (1, 1)
    config = vectorize.get_config()
    assert config["output_mode"] == "int"
    assert type(vectorize).from_config(config).get_vocabulary() == vectorize.get_vocabulary()


# ---- ConvLSTM2D -----------------------------------------------------------------------------------------------------------
CONV_LSTM_CASES = [  # (arguments, output shapes, sums of the outputs, one value): Keras 3.15 with the weights below
    (dict(padding="valid"), [(2, 3, 4, 4)], [-7.7572], -0.33035),
    (dict(padding="same", return_sequences=True), [(2, 3, 5, 6, 4)], [-36.7244], -0.03471),
    (dict(padding="same", strides=2, kernel_size=2), [(2, 3, 3, 4)], [-2.208], -0.09281),
    (dict(padding="valid", go_backwards=True, return_state=True), [(2, 3, 4, 4)] * 3, [-5.12, -5.12, -2.9112], -0.6218),
]


@pytest.mark.parametrize("case", range(len(CONV_LSTM_CASES)))
def test_conv_lstm_2d_matches_keras(case):
    arguments, shapes, sums, value = CONV_LSTM_CASES[case]
    arguments = dict(arguments)
    layer = keras.layers.ConvLSTM2D(4, arguments.pop("kernel_size", 3), **arguments)
    inputs = keras.Input((3, 5, 6, 2))
    model = keras.Model(inputs, layer(inputs))
    layer.set_weights([np.sin(np.arange(w.size)).reshape(w.shape).astype("float32") * 0.3 for w in layer.get_weights()])
    x = np.random.default_rng(4).normal(size=(2, 3, 5, 6, 2)).astype("float32")
    out = model.predict(x, verbose=0)
    out = list(out) if isinstance(out, (list, tuple)) else [out]
    assert [o.shape for o in out] == shapes
    assert np.allclose([o.sum() for o in out], sums, atol=1e-3) and np.isclose(out[0].ravel()[7], value, atol=1e-4)
    assert [w.shape for w in layer.get_weights()][:2] == [(layer.kernel_size[0],) * 2 + (2, 16), (layer.kernel_size[0],) * 2 + (4, 16)]


def test_a_custom_layer_with_a_mask_argument_receives_the_mask():
    ops = keras.ops

    class TemporalSoftmax(keras.layers.Layer):  # keras-io's masking guide: a mask consumer
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.supports_masking = True

        def call(self, inputs, mask=None):
            assert mask is not None
            weights = ops.expand_dims(ops.cast(mask, "float32"), -1)
            exp = ops.exp(inputs) * weights
            return exp / ops.sum(exp, axis=1, keepdims=True)

    inputs = keras.Input(shape=(None,), dtype="int32")
    h = keras.layers.Embedding(input_dim=10, output_dim=4, mask_zero=True)(inputs)
    assert h._keras_mask is not None  # the symbolic tensor carries the mask, as Keras'
    outputs = TemporalSoftmax()(keras.layers.Dense(1)(h))
    model = keras.Model(inputs, outputs)
    tokens = np.array([[3, 4, 0, 0], [1, 2, 5, 0]])
    y = model(tokens).numpy()[..., 0]
    assert np.allclose(y[tokens == 0], 0.0) and np.allclose(y.sum(axis=1), 1.0, atol=1e-6)


def test_confusion_count_metrics_as_keras_in_an_imbalanced_fit():
    fn = keras.metrics.FalseNegatives()
    fn.update_state([[0], [1], [1], [0]], [[0.2], [0.3], [0.9], [0.7]], sample_weight=[1, 2, 3, 4])
    assert float(fn.result()) == 2.0 and fn.name == "false_negatives"
    tp = keras.metrics.TruePositives(thresholds=[0.25, 0.5])
    tp.update_state([[0], [1], [1], [0]], [[0.2], [0.3], [0.9], [0.7]])
    assert tp.result().tolist() == [2.0, 1.0]
    rng = np.random.default_rng(0)
    x = rng.normal(size=(200, 5)).astype("float32")
    y = (x[:, 0] > 1).astype("float32")
    model = keras.Sequential([keras.Input((5,)), keras.layers.Dense(1, activation="sigmoid")])
    model.compile(optimizer="adam", loss="binary_crossentropy",
                  metrics=[keras.metrics.FalseNegatives(name="fn"), keras.metrics.FalsePositives(name="fp"),
                           keras.metrics.TrueNegatives(name="tn"), keras.metrics.TruePositives(name="tp")])
    history = model.fit(x, y, batch_size=64, epochs=1, verbose=0, class_weight={0: 1.0, 1: 5.0})
    counts = [history.history[k][0] for k in ("fn", "fp", "tn", "tp")]
    assert sum(counts) == 200 and history.history["tp"][0] + history.history["fn"][0] == float(y.sum())


def test_same_pooling_causal_conv_and_gru_without_reset_after_as_keras():
    """Keras 3.15's values for the same inputs and weights (GRU reset_after=False is Keras 2's default)."""
    import graphgrad.compat.keras as keras

    x = np.arange(2 * 7 * 3, dtype="float32").reshape(2, 7, 3) / 10
    np.testing.assert_allclose(np.asarray(keras.layers.MaxPooling1D(2, padding="same")(x))[0, :, 0],
                               [0.3, 0.9, 1.5, 1.8], rtol=1e-6)
    np.testing.assert_allclose(np.asarray(keras.layers.AveragePooling1D(3, 2, padding="same")(x))[0, :, 0],
                               [0.15, 0.6, 1.2, 1.65], rtol=1e-6)
    conv = keras.layers.Conv1D(1, 2, padding="causal", kernel_initializer="ones", use_bias=False)
    np.testing.assert_allclose(np.asarray(conv(x))[0, :, 0], [0.3, 1.5, 3.3, 5.1, 6.9, 8.7, 10.5], rtol=1e-6)
    gru = keras.layers.GRU(2, reset_after=False, return_sequences=True)
    gru.build((None, 7, 3))
    shapes = [(3, 6), (2, 6), (6,)]
    assert [tuple(w.shape) for w in gru.get_weights()] == shapes
    gru.set_weights([np.sin(np.arange(np.prod(s)) * 0.3 + i).reshape(s).astype("float32") for i, s in enumerate(shapes)])
    np.testing.assert_allclose(np.asarray(gru(x))[1, -1], [0.03784642, -0.33443618], rtol=1e-5, atol=1e-6)
