"""The quick-start demo: ``python -m graphgrad demo`` trains the spiral MLP with the core alone."""
from __future__ import annotations

import subprocess
import sys

from graphgrad.cli import demo, demo_graph, main
from graphgrad.data import make_spiral

import graphgrad as gg


def test_spiral_data_shapes_and_labels():
    x, y = make_spiral(50, 3, generator=gg.Generator(1))
    assert x.shape == (150, 2) and x.dtype == gg.float32
    assert y.shape == (150,) and y.dtype == gg.int64 and sorted(set(y.tolist())) == [0, 1, 2]


def test_demo_learns_the_spiral(capsys):
    accuracy = demo(steps=400, log_every=200)
    assert accuracy > 0.9
    out = capsys.readouterr().out
    assert "train accuracy" in out and "final training accuracy" in out


def test_graph_demo_matches_eager_demo(capsys):
    assert demo_graph(steps=300, log_every=300) == demo(steps=300, log_every=300)
    assert "graph mode" in capsys.readouterr().out


def test_module_entry_point_runs():
    result = subprocess.run([sys.executable, "-m", "graphgrad", "demo", "--steps", "20"], capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "step    20" in result.stdout


def test_main_requires_a_command():
    try:
        main([])
    except SystemExit as exc:
        assert exc.code == 2
