"""read_image / write_image round trips through PNG (needs Pillow)."""
from __future__ import annotations

import builtins

import numpy as np
import pytest

import graphgrad as gg
from graphgrad.data import read_image, write_image

pytest.importorskip("PIL")


@pytest.mark.parametrize("channels", [1, 3, 4])
def test_uint8_round_trip(tmp_path, channels):
    rng = np.random.default_rng(0)
    img = rng.integers(0, 256, size=(channels, 5, 7), dtype=np.uint8)
    path = tmp_path / "img.png"
    write_image(gg.tensor(img), path)
    back = read_image(path, dtype="uint8")
    assert back.shape == (channels, 5, 7) and back.dtype == np.uint8
    np.testing.assert_array_equal(back.numpy(), img)


def test_float_round_trip_and_grayscale_2d(tmp_path):
    img = np.random.default_rng(1).random((3, 6, 4)).astype(np.float32)
    write_image(img, tmp_path / "f.png")
    back = read_image(tmp_path / "f.png")
    assert back.dtype == np.float32 and back.shape == (3, 6, 4)
    np.testing.assert_allclose(back.numpy(), img, atol=0.5 / 255 + 1e-6)
    gray = np.linspace(0, 1, 12).reshape(3, 4)
    write_image(gg.tensor(gray), str(tmp_path / "g.png"))
    g = read_image(tmp_path / "g.png")
    assert g.shape == (1, 3, 4)
    np.testing.assert_allclose(g.numpy()[0], gray, atol=0.5 / 255 + 1e-6)


def test_values_are_clipped_and_modes_convert(tmp_path):
    write_image(np.array([[[-1.0, 2.0]]]), tmp_path / "c.png")
    np.testing.assert_array_equal(read_image(tmp_path / "c.png", dtype="uint8").numpy(), [[[0, 255]]])
    write_image(np.full((3, 2, 2), 0.5), tmp_path / "rgb.png")
    assert read_image(tmp_path / "rgb.png", mode="L").shape == (1, 2, 2)
    assert read_image(tmp_path / "rgb.png", mode="RGBA").shape == (4, 2, 2)


def test_bad_inputs(tmp_path):
    with pytest.raises(ValueError, match="C in 1, 3, 4"):
        write_image(np.zeros((2, 4, 4)), tmp_path / "x.png")
    with pytest.raises(ValueError, match=r"\(H, W\)"):
        write_image(np.zeros(4), tmp_path / "x.png")
    write_image(np.zeros((1, 2, 2)), tmp_path / "ok.png")
    with pytest.raises(ValueError, match="dtype"):
        read_image(tmp_path / "ok.png", dtype="float64")
    with pytest.raises(ValueError, match="mode"):
        read_image(tmp_path / "ok.png", mode="CMYK")


def test_missing_pillow_message(monkeypatch, tmp_path):
    real_import = builtins.__import__

    def fake_import(name, *args, **kwargs):
        if name == "PIL" or name.startswith("PIL."):
            raise ImportError("no PIL")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", fake_import)
    with pytest.raises(ImportError, match=r'pip install "graphgrad\[images\]"'):
        read_image(tmp_path / "x.png")
    with pytest.raises(ImportError, match="write_image needs Pillow"):
        write_image(np.zeros((2, 2)), tmp_path / "x.png")
