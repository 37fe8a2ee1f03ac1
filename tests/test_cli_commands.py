"""``graphgrad --version``, ``info``, ``checkpoint inspect``, ``graph inspect|draw``: their reports, their
one-line errors, and an example in every command's --help."""
from __future__ import annotations

import numpy as np
import pytest

import graphgrad as gg
from graphgrad import cli


def _run(capsys, *argv) -> tuple:
    code = cli.main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_version(capsys):
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["--version"])
    assert exit_info.value.code == 0 and capsys.readouterr().out.strip() == f"graphgrad {gg.__version__}"


def test_info_reports_versions_devices_and_extras(capsys):
    code, out, _ = _run(capsys, "info")
    assert code == 0
    for expected in (f"graphgrad {gg.__version__}", "Python ", "NumPy ", "BLAS", "optional packages:", "devices: cpu",
                     "emulated", "MPI:"):
        assert expected in out


def test_checkpoint_inspect_a_training_checkpoint(tmp_path, capsys):
    model = gg.nn.Linear(3, 2)
    opt = gg.optim.Adam(model.parameters(), lr=0.01)
    model(gg.ones(1, 3)).sum().backward()
    opt.step()
    path = tmp_path / "ckpt.npz"
    gg.io.save_checkpoint(path, model, opt, epoch=7, extra={"note": "best"})
    code, out, _ = _run(capsys, "checkpoint", "inspect", str(path))
    assert code == 0
    assert "training checkpoint" in out and "epoch: 7" in out
    assert "weight  (2, 3)" in out and "bias    (2,)" in out and "float32" in out
    assert "optimizer: 1 parameter group(s), state for 2 parameter(s)" in out and "'lr': 0.01" in out
    assert "extra: {'note': 'best'}" in out


def test_checkpoint_inspect_a_state_dict(tmp_path, capsys):
    path = tmp_path / "weights.npz"
    gg.save(gg.nn.Linear(4, 5).state_dict(), path)
    code, out, _ = _run(capsys, "checkpoint", "inspect", str(path))
    assert code == 0 and "a state dict" in out and "2 tensors, 25 values" in out


def _saved_graph(tmp_path):
    g = gg.Graph()
    with g.as_default():
        x = gg.placeholder(gg.float32, (None, 3), name="x")
        w = gg.Variable(np.ones((3, 2), np.float32), name="w")
        gg.tanh(x @ w, name="y")
    path = tmp_path / "model.json"
    gg.save_graph(g, str(path))
    return path


def test_graph_inspect(tmp_path, capsys):
    code, out, _ = _run(capsys, "graph", "inspect", str(_saved_graph(tmp_path)))
    assert code == 0
    assert "4 nodes" in out and "x (?, 3) float32" in out and "w (3, 2) float32" in out
    assert "ends (nodes nothing reads, 1): y" in out and "Tanh x1" in out


def test_graph_draw_writes_dot(tmp_path, capsys):
    path = _saved_graph(tmp_path)
    code, out, _ = _run(capsys, "graph", "draw", str(path), "-o", str(tmp_path / "g.dot"))
    assert code == 0 and (tmp_path / "g.dot").read_text().startswith("digraph")
    code, _, err = _run(capsys, "graph", "draw", str(path), "-o", str(tmp_path / "g.jpeg"))
    assert code == 1 and "name it .dot, .svg or .png" in err


def test_errors_are_one_line_naming_the_file(tmp_path, capsys):
    code, _, err = _run(capsys, "checkpoint", "inspect", str(tmp_path / "missing.npz"))
    assert code == 1 and "missing.npz" in err and err.count("\n") == 1
    (tmp_path / "broken.json").write_text("{not json")
    code, _, err = _run(capsys, "graph", "inspect", str(tmp_path / "broken.json"))
    assert code == 1 and "broken.json" in err and "Traceback" not in err


@pytest.mark.parametrize("argv", [[], ["info"], ["checkpoint"], ["checkpoint", "inspect"], ["graph"],
                                  ["graph", "inspect"], ["graph", "draw"], ["onnx"], ["onnx", "info"],
                                  ["onnx", "run"], ["onnx", "export"], ["demo"], ["bench"]])
def test_every_help_shows_an_example(argv, capsys):
    with pytest.raises(SystemExit):
        cli.main(argv + ["--help"])
    assert "example" in capsys.readouterr().out


def test_onnx_export_of_a_saved_graph_keeps_unknown_dims_dynamic(tmp_path, capsys):
    ort = pytest.importorskip("onnxruntime")
    out = tmp_path / "model.onnx"
    code, text, err = _run(capsys, "onnx", "export", str(_saved_graph(tmp_path)), "-o", str(out), "--fetch", "y")
    assert code == 0, err
    assert "exported y" in text
    session = ort.InferenceSession(str(out), providers=["CPUExecutionProvider"])
    (y,) = session.run(None, {"x": np.ones((5, 3), np.float32)})
    np.testing.assert_allclose(y, np.tanh(np.full((5, 2), 3.0)), rtol=1e-6)
    code, _, err = _run(capsys, "onnx", "export", str(_saved_graph(tmp_path)), "-o", str(out), "--fetch", "nope")
    assert code == 1 and "no node named 'nope'" in err
