"""The quick-start demo: ``python -m graphgrad demo``."""
from __future__ import annotations

import subprocess
import sys

import pytest

import graphgrad as gg
from graphgrad.cli import demo_graph, digits_cnn, main, spiral_mlp
from graphgrad.data import make_spiral


def test_spiral_data_shapes_and_labels():
    x, y = make_spiral(50, 3, generator=gg.Generator(1))
    assert x.shape == (150, 2) and x.dtype == gg.float32
    assert y.shape == (150,) and y.dtype == gg.int64 and sorted(set(y.tolist())) == [0, 1, 2]


def test_spiral_mlp_reaches_99_percent_and_draws_the_boundary(tmp_path, capsys):
    image = tmp_path / "boundary.png"
    accuracy = spiral_mlp(epochs=60, image=str(image), verbose=0)
    assert accuracy >= 0.99
    out = capsys.readouterr().out
    assert "training accuracy" in out
    if "no decision-boundary image" not in out:
        assert image.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_graph_demo_reaches_99_percent(capsys):
    assert demo_graph(steps=1000, log_every=1000) >= 0.99
    assert "static graph" in capsys.readouterr().out


def test_digits_cnn_reaches_98_percent_held_out():
    pytest.importorskip("sklearn")
    assert digits_cnn(epochs=40, verbose=0) >= 0.98


def test_module_entry_point_runs_quick_demo(tmp_path):
    result = subprocess.run([sys.executable, "-m", "graphgrad", "demo", "--quick", "--image",
                             str(tmp_path / "b.png")], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert "demo finished" in result.stdout


def test_main_requires_a_command():
    with pytest.raises(SystemExit) as info:
        main([])
    assert info.value.code == 2
