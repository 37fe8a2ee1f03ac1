"""The same TF1 graph code (``tests/compat/tf_cases.py``) gives the same values on graphgrad.compat.tf as
on real TensorFlow (run in a subprocess with ``tf.compat.v1`` in graph mode); skipped without TensorFlow."""
from __future__ import annotations

import importlib.util
import os
import subprocess
import sys

import numpy as np
import pytest

import graphgrad.compat.tf as tf
from tests.compat import tf_cases

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
pytestmark = pytest.mark.skipif(importlib.util.find_spec("tensorflow") is None, reason="TensorFlow is not installed")


@pytest.fixture(scope="module")
def values(tmp_path_factory):
    target = str(tmp_path_factory.mktemp("tf") / "values.npz")
    env = dict(os.environ, PYTHONPATH=ROOT, TF_CPP_MIN_LOG_LEVEL="3", OMP_NUM_THREADS="1")
    done = subprocess.run([sys.executable, os.path.join(HERE, "tf_cases.py"), target], capture_output=True,
                          text=True, timeout=300, env=env, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-3000:]
    want = dict(np.load(target))
    graph = tf.Graph()
    with graph.as_default():
        fetches, feeds = tf_cases.build(tf)
        with tf.Session(graph=graph) as sess:
            got = tf_cases.evaluate(tf, sess, fetches, feeds)
    return got, want


CASES = ["reduce_sum_keep", "reduce_mean", "reduce_max", "reduce_logsumexp", "reduce_prod", "argmax", "argmin_default",
         "one_hot", "split_sizes", "unstack", "concat", "stack", "transpose", "tile", "gather", "shape", "size", "range",
         "where", "clip", "squared_difference", "matmul_t", "softmax", "log_softmax", "relu6", "elu", "selu",
         "softplus", "l2_loss", "l2_normalize", "xent", "sparse_xent", "sigmoid_xent", "moments_mean", "moments_var",
         "batch_norm", "embedding", "bias_add", "conv_same_s2", "conv_valid", "conv_dilated", "max_pool_same",
         "avg_pool_same", "mse", "losses_xent_smooth", "losses_sparse_w", "log_loss", "hinge", "huber", "conv_grad",
         "clip_global", "global_norm", "opt_sgd", "opt_momentum", "opt_nesterov", "opt_adagrad", "opt_adam"]


@pytest.mark.parametrize("case", CASES)
def test_tf_agrees_with_tensorflow(values, case):
    got, want = values
    assert np.asarray(got[case]).shape == want[case].shape
    assert np.asarray(got[case]).dtype == want[case].dtype, (np.asarray(got[case]).dtype, want[case].dtype)
    np.testing.assert_allclose(got[case], want[case], rtol=2e-5, atol=2e-5)
