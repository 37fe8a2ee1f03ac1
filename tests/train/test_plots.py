"""plot_decision_boundary with matplotlib and with the Pillow fallback."""
from __future__ import annotations

import numpy as np
import pytest

import graphgrad as gg
from graphgrad.train import plots

PNG = b"\x89PNG\r\n\x1a\n"


def _data():
    rng = np.random.default_rng(0)
    x = rng.uniform(-1, 1, size=(60, 2))
    y = (x[:, 0] > 0).astype(np.int64)
    return x, y


def _is_png(path):
    with open(path, "rb") as f:
        return f.read(8) == PNG


def test_matplotlib_with_function(tmp_path):
    pytest.importorskip("matplotlib")
    x, y = _data()
    path = plots.plot_decision_boundary(lambda g: np.stack([-g[:, 0], g[:, 0]], 1), x, y,
                                        str(tmp_path / "sub" / "db.png"), resolution=50)
    assert path.endswith("db.png") and _is_png(path)


def test_matplotlib_with_model_and_module(tmp_path):
    pytest.importorskip("matplotlib")
    x, y = _data()
    gg.manual_seed(0)
    model = gg.Sequential([gg.nn.Linear(2, 2)])
    assert _is_png(gg.train.plot_decision_boundary(model, x, y, str(tmp_path / "m.png"), resolution=30))
    assert _is_png(plots.plot_decision_boundary(model.module, x, y, str(tmp_path / "n.png"), resolution=30))


def test_pillow_fallback_colours_regions(tmp_path, monkeypatch):
    Image = pytest.importorskip("PIL.Image")
    monkeypatch.setattr(plots, "_load_matplotlib", lambda: None)
    x, y = _data()
    # binary probabilities: class 1 where x0 > 0 (right half)
    fn = lambda g: 1.0 / (1.0 + np.exp(-50 * g[:, 0]))  # noqa: E731
    path = plots.plot_decision_boundary(fn, x, y, str(tmp_path / "p.png"), resolution=100)
    assert _is_png(path)
    image = np.asarray(Image.open(path).convert("RGB"))
    assert image.shape[0] == image.shape[1] >= 100
    left, right = image[2, 2], image[2, -3]  # corners are background, far from points
    np.testing.assert_array_equal(left, plots._pillow_region_colour(0))
    np.testing.assert_array_equal(right, plots._pillow_region_colour(1))


def test_bad_inputs(tmp_path):
    with pytest.raises(ValueError, match=r"\(N, 2\)"):
        plots.plot_decision_boundary(lambda g: g, np.zeros((4, 3)), np.zeros(4), str(tmp_path / "x.png"))
    with pytest.raises(TypeError):
        plots.plot_decision_boundary(42, np.zeros((4, 2)), np.zeros(4), str(tmp_path / "x.png"))
