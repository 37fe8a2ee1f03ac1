"""TensorFlow 1 programs, written as TF1's tutorials write them, run on graphgrad.compat.tf unchanged
(``install()`` makes ``import tensorflow.compat.v1 as tf`` resolve to it), and the same files run under
real TensorFlow when it is installed."""
from __future__ import annotations

import importlib.util
import os
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
#: program -> the final figure it must reach: an accuracy (at least) or a cost (at most)
PROGRAMS = {"linear_regression.py": ("cost", 0.09), "softmax_regression.py": ("accuracy", 0.9),
            "cnn_saver.py": ("accuracy", 0.95), "layers_cnn.py": ("accuracy", 0.9),
            "rnn_classifier.py": ("accuracy", 0.85)}
#: programs that use tf.layers or tf.nn.rnn_cell: under TensorFlow 2.16+ these need Keras 2 (tf_keras)
KERAS2 = {"layers_cnn.py", "rnn_classifier.py"}
SHIM = ("import graphgrad.compat.tf as t; t.install(); import runpy, sys; "
        "runpy.run_path(sys.argv[1], run_name='__main__')")


def _reached(stdout: str, goal: tuple) -> bool:
    """Whether the program's last line (``accuracy 0.97`` or ``cost 0.08``) meets ``goal``."""
    what, value = stdout.strip().splitlines()[-1].split()
    kind, target = goal
    assert what == kind, stdout[-500:]
    return float(value) >= target if kind == "accuracy" else float(value) <= target


def _run(args) -> str:
    env = dict(os.environ, PYTHONPATH=ROOT, OMP_NUM_THREADS="1", TF_CPP_MIN_LOG_LEVEL="3")
    if importlib.util.find_spec("tf_keras") is not None:  # tf.layers and tf.nn.rnn_cell under TensorFlow 2.16+
        env["TF_USE_LEGACY_KERAS"] = "1"
    done = subprocess.run([sys.executable, *args], capture_output=True, text=True, timeout=300, env=env, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


@pytest.mark.parametrize("program, goal", PROGRAMS.items())
def test_tf_a_tf1_program_trains_on_graphgrad(program, goal):
    out = _run(["-c", SHIM, os.path.join(HERE, "tf_programs", program)])
    assert _reached(out, goal), out[-800:]
    if program == "cnn_saver.py":  # the restore really restored: fresh weights guess, the saved ones do not
        assert float(out.splitlines()[-2].split()[-1]) < 0.5
        assert "kept checkpoints ['model.ckpt-1000', 'model.ckpt-750']" in out  # max_to_keep=2


@pytest.mark.skipif(importlib.util.find_spec("tensorflow") is None, reason="TensorFlow is not installed")
@pytest.mark.parametrize("program, goal", PROGRAMS.items())
def test_tf_the_same_program_trains_on_tensorflow(program, goal):
    if program in KERAS2 and importlib.util.find_spec("tf_keras") is None:
        pytest.skip("tf.layers and tf.nn.rnn_cell need tf_keras under TensorFlow 2.16+")
    assert _reached(_run([os.path.join(HERE, "tf_programs", program)]), goal)
