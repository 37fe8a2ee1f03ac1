"""``tf.layers``, the newer ``tf.nn`` convolutions, the RNN cells with ``dynamic_rnn`` and the other
additions give the same values on graphgrad.compat.tf as on real TensorFlow from the same starting
weights (``tests/compat/tf_cases_layers.py``, run in a subprocess with ``tf.compat.v1`` in graph mode
and TensorFlow's Keras 2 layers, ``tf_keras``); skipped without them. Also the facade-only checks."""
from __future__ import annotations

import importlib.util
import os
import subprocess
import sys

import numpy as np
import pytest

import graphgrad.compat.tf as tf
from tests.compat import tf_cases_layers

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
HAVE_TF = importlib.util.find_spec("tensorflow") is not None and importlib.util.find_spec("tf_keras") is not None


@pytest.fixture(scope="module")
def values(tmp_path_factory):
    target = str(tmp_path_factory.mktemp("tf") / "values.npz")
    env = dict(os.environ, PYTHONPATH=ROOT, TF_CPP_MIN_LOG_LEVEL="3", OMP_NUM_THREADS="1", TF_USE_LEGACY_KERAS="1")
    done = subprocess.run([sys.executable, os.path.join(HERE, "tf_cases_layers.py"), target], capture_output=True,
                          text=True, timeout=300, env=env, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-3000:]
    want = dict(np.load(target))
    graph = tf.Graph()
    with graph.as_default():
        fetches, steps, feeds = tf_cases_layers.build(tf)
        with tf.Session(graph=graph) as sess:
            got = tf_cases_layers.evaluate(tf, sess, fetches, steps, feeds)
    return got, want


@pytest.mark.skipif(not HAVE_TF, reason="TensorFlow with tf_keras is not installed")
def test_tf_layers_agree_with_tensorflow(values):
    got, want = values
    assert sorted(got) == sorted(want)
    np.testing.assert_array_equal(got["variable_names"], want["variable_names"])
    bad = []
    for key in sorted(want):
        if key == "variable_names":
            continue
        g, w = np.asarray(got[key]), want[key]
        if g.shape != w.shape or g.dtype != w.dtype or not np.allclose(g, w, rtol=1e-4, atol=1e-4):
            bad.append(f"{key}: {g.shape} {g.dtype} vs {w.shape} {w.dtype}, max diff "
                       f"{np.max(np.abs(g.astype(float) - w.astype(float))) if g.shape == w.shape else '-'}")
    assert not bad, "\n".join(bad)


def test_tf_layer_names_reuse_and_collections():
    graph = tf.Graph()
    with graph.as_default():
        x = tf.placeholder(tf.float32, [None, 3])
        tf.layers.dense(x, 2, name="fc", kernel_regularizer=tf.contrib.layers.l2_regularizer(0.1))
        tf.layers.dense(x, 2, name="fc", reuse=True)
        with tf.variable_scope("block"):
            tf.layers.dense(x, 2)
            tf.layers.dense(x, 2)
        assert [v.base_name for v in tf.trainable_variables()] == [
            "fc/kernel", "fc/bias", "block/dense/kernel", "block/dense/bias", "block/dense_1/kernel",
            "block/dense_1/bias"]
        assert len(tf.get_collection(tf.GraphKeys.REGULARIZATION_LOSSES)) == 1
        with pytest.raises(ValueError):
            tf.layers.dense(x, 2, name="fc")


def test_tf_layers_dropout_with_a_training_placeholder():
    graph = tf.Graph()
    with graph.as_default():
        x = tf.placeholder(tf.float32, [None, 1000])
        training = tf.placeholder_with_default(False, [])
        y = tf.layers.dropout(x, rate=0.25, training=training)
        with tf.Session() as sess:
            ones = np.ones((2, 1000), np.float32)
            np.testing.assert_array_equal(sess.run(y, {x: ones}), ones)
            dropped = sess.run(y, {x: ones, training: True})
            assert np.all((dropped == 0) | np.isclose(dropped, 1 / 0.75))
            assert 0.15 < np.mean(dropped == 0) < 0.35


def test_tf_flags_and_logging(monkeypatch):
    flags = tf.app.flags
    fv = flags.FlagValues()
    flags.DEFINE_integer("steps", 10, "steps", flag_values=fv)
    flags.DEFINE_float("lr", 0.1, "rate", flag_values=fv)
    flags.DEFINE_boolean("fast", False, "", flag_values=fv)
    flags.DEFINE_string("name", "x", "", flag_values=fv)
    if "steps" not in flags.FLAGS:
        flags.DEFINE_integer("steps", 1, "steps")
    rest = fv(["prog", "--steps=3", "--lr", "0.5", "--fast", "other", "--unknown=1"])
    assert (fv.steps, fv.lr, fv.fast, fv.name) == (3, 0.5, True, "x")
    assert rest == ["prog", "other", "--unknown=1"]
    assert tf.flags is tf.app.flags
    monkeypatch.setattr(sys, "argv", ["prog", "--steps=5", "left"])
    with pytest.raises(SystemExit) as done:
        tf.app.run(lambda argv: 7 if argv == ["prog", "left"] and tf.flags.FLAGS.steps == 5 else 1)
    assert done.value.code == 7
    tf.logging.set_verbosity(tf.logging.INFO)
    tf.logging.info("step %d", 1)
    graph = tf.Graph()
    with graph.as_default():
        v = tf.constant([1.0, 2.0])
        p = tf.Print(v, [v], "value: ")
        with tf.control_dependencies([tf.print(v)]):
            out = tf.identity(p)
        with tf.Session() as sess:
            np.testing.assert_array_equal(sess.run(out), [1.0, 2.0])


def test_tf_dropout_noise_shape_and_contrib_fully_connected():
    graph = tf.Graph()
    with graph.as_default():
        x = tf.placeholder(tf.float32, [None, 4, 6])
        shared = tf.nn.dropout(x, rate=0.5, noise_shape=[tf.shape(x)[0], 1, 6])
        per_row = tf.layers.dropout(x, 0.5, noise_shape=[2, 4, 1], training=True)
        h = tf.contrib.layers.fully_connected(tf.layers.flatten(x), 3,
                                              weights_initializer=tf.contrib.layers.xavier_initializer())
        out = tf.contrib.layers.fully_connected(h, 2, activation_fn=None, biases_initializer=None, scope="logits")
        assert [v.name for v in tf.trainable_variables()] == [
            "fully_connected/weights:0", "fully_connected/biases:0", "logits/weights:0"]
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            a, b, o = sess.run([shared, per_row, out], {x: np.ones((2, 4, 6), np.float32)})
        assert (a == a[:, :1]).all() and (b == b[:, :, :1]).all() and o.shape == (2, 2)
