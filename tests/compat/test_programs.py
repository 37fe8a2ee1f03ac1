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
PROGRAMS = {"blitz_cifar_cnn.py": 0.9, "mnist_example.py": 0.9}
SHIM = "import graphgrad.compat.torch as t; t.install(); import runpy, sys; runpy.run_path(sys.argv[1], run_name='__main__')"


def _accuracy(stdout: str) -> float:
    return float(stdout.strip().splitlines()[-1].split()[-1])


def _run(args) -> str:
    env = dict(os.environ, PYTHONPATH=ROOT, OMP_NUM_THREADS="1")
    done = subprocess.run([sys.executable, *args], capture_output=True, text=True, timeout=300, env=env, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


@pytest.mark.parametrize("program, expected", PROGRAMS.items())
def test_a_pytorch_program_trains_on_graphgrad(program, expected):
    assert _accuracy(_run(["-c", SHIM, os.path.join(HERE, "programs", program)])) >= expected


@pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="PyTorch is not installed")
@pytest.mark.parametrize("program, expected", PROGRAMS.items())
def test_the_same_program_trains_on_pytorch(program, expected):
    assert _accuracy(_run([os.path.join(HERE, "programs", program)])) >= expected
