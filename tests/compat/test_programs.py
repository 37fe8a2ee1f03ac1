"""Programs written for PyTorch run on graphgrad.compat.torch unchanged (``install()`` makes ``import
torch`` resolve to it), and the same files run under real PyTorch when it is installed."""
from __future__ import annotations

import importlib.util
import os
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
#: program -> the final figure it must reach: an accuracy (at least), or a language model's perplexity
#: or loss (at most; the data's 12 tokens give a perplexity of 12, a loss of 2.5, to a model that learned nothing;
#: the DCGAN's is its last discriminator plus generator loss, about 2 for a GAN that trains without diverging)
PROGRAMS = {"blitz_cifar_cnn.py": ("accuracy", 0.9), "mnist_example.py": ("accuracy", 0.9),
            "word_language_model.py": ("perplexity", 3.0), "nanogpt.py": ("loss", 0.3),
            "sequence_classifier.py": ("accuracy", 0.9), "transformer_reverse.py": ("accuracy", 0.9),
            "resnet_blocks.py": ("accuracy", 0.85), "dcgan_tutorial.py": ("loss", 4.0),
            "reinforce_policy.py": ("accuracy", 0.9)}
SHIM = "import graphgrad.compat.torch as t; t.install(); import runpy, sys; runpy.run_path(sys.argv[1], run_name='__main__')"


def _reached(stdout: str, goal: tuple) -> bool:
    """Whether the program's last line (``accuracy 0.97`` or ``perplexity 1.4``) meets ``goal``."""
    what, value = stdout.strip().splitlines()[-1].split()
    kind, target = goal
    assert what == kind, stdout[-500:]
    return float(value) >= target if kind == "accuracy" else float(value) <= target  # perplexity, loss


def _run(args) -> str:
    env = dict(os.environ, PYTHONPATH=ROOT, OMP_NUM_THREADS="1")
    done = subprocess.run([sys.executable, *args], capture_output=True, text=True, timeout=300, env=env, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


@pytest.mark.parametrize("program, goal", PROGRAMS.items())
def test_a_pytorch_program_trains_on_graphgrad(program, goal):
    assert _reached(_run(["-c", SHIM, os.path.join(HERE, "programs", program)]), goal)


@pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="PyTorch is not installed")
@pytest.mark.parametrize("program, goal", PROGRAMS.items())
def test_the_same_program_trains_on_pytorch(program, goal):
    assert _reached(_run([os.path.join(HERE, "programs", program)]), goal)
