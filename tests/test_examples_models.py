"""The model examples run briefly and learn: spiral MLP, MNIST CNN (on a tiny synthetic IDX data set,
with checkpoint/resume and the missing-files exit), character LSTM and Transformer (on README.md)."""
from __future__ import annotations

import contextlib
import pathlib
import struct
import subprocess
import sys

import numpy as np
import pytest

from tests.example_loader import EXAMPLES, load_example




@pytest.fixture(autouse=True)
def one_blas_thread():
    """These matrices are small; under ``pytest -n 2`` on two cores a multi-threaded OpenBLAS
    oversubscribes the CPUs and some products get 100x slower. One thread each keeps the timings sane."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        limit = contextlib.nullcontext()
    else:
        limit = threadpool_limits(1, user_api="blas")
    with limit:
        yield


def test_spiral_mlp_reaches_99_percent(tmp_path):
    png = tmp_path / "spiral.png"
    result = load_example("spiral_mlp").main(steps=400, seed=0, png=str(png))
    assert result["accuracy"] >= 0.99
    if result["png"] is not None:  # matplotlib or Pillow installed
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


# ---- MNIST CNN on synthetic IDX files ------------------------------------------------------------------
def _idx_bytes(array: np.ndarray) -> bytes:
    return bytes([0, 0, 0x08, array.ndim]) + struct.pack(f">{array.ndim}i", *array.shape) + array.tobytes()


def _write_mnist(folder: pathlib.Path, prefix: str, n: int, seed: int) -> None:
    """``n`` learnable 28x28 images: noise plus a bright bar whose row encodes the label."""
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, 10, size=n).astype(np.uint8)
    images = rng.integers(0, 60, size=(n, 28, 28), dtype=np.uint8)
    for image, label in zip(images, labels):
        image[2 * label + 4:2 * label + 7, 4:24] = 255
    (folder / f"{prefix}-images-idx3-ubyte").write_bytes(_idx_bytes(images))
    (folder / f"{prefix}-labels-idx1-ubyte").write_bytes(_idx_bytes(labels))


def test_mnist_cnn_trains_checkpoints_and_resumes_identically(tmp_path):
    _write_mnist(tmp_path, "train", 300, seed=0)
    _write_mnist(tmp_path, "t10k", 64, seed=1)
    example = load_example("mnist_cnn")
    settings = dict(root=str(tmp_path), limit=256, batch_size=32)
    straight = example.main(epochs=2, checkpoint=str(tmp_path / "straight.ckpt"), **settings)
    assert len(straight["losses"]) == 2 and straight["losses"][1] < straight["losses"][0]
    assert straight["test_accuracy"] >= 0.5  # 10 classes: chance is 0.1

    ckpt = tmp_path / "split.ckpt"
    first = example.main(epochs=1, checkpoint=str(ckpt), **settings)
    assert ckpt.exists() and first["losses"] == straight["losses"][:1]
    resumed = example.main(epochs=2, checkpoint=str(ckpt), resume=True, **settings)
    assert resumed["start_epoch"] == 2
    # Model, optimizer and shuffling state all come back: the same trajectory as without the stop.
    assert resumed["losses"] == straight["losses"]
    assert resumed["test_accuracy"] == straight["test_accuracy"]


def test_mnist_cnn_missing_files_exit_2_with_the_loader_message(tmp_path):
    run = subprocess.run([sys.executable, str(EXAMPLES / "mnist_cnn.py"), "--root", str(tmp_path / "none")],
                         capture_output=True, text=True, timeout=60)
    assert run.returncode == 2
    assert "train-images-idx3-ubyte" in run.stderr and "train-labels-idx1-ubyte" in run.stderr
    assert str(tmp_path / "none") in run.stderr and "https://" in run.stderr
    assert "Traceback" not in run.stderr


# ---- character language models -----------------------------------------------------------------------
def test_char_lstm_loss_falls_and_samples():
    result = load_example("char_lstm").main(epochs=6, steps_per_epoch=8, sample_length=40, seed=0)
    losses = result["losses"]
    assert len(losses) == 6 and losses[-1] < 0.8 * losses[0]
    assert isinstance(result["sample"], str) and len(result["sample"]) == 40


def test_char_transformer_loss_falls_and_samples():
    result = load_example("char_transformer").main(epochs=6, steps_per_epoch=6, block_size=32, batch_size=16,
                                                   warmup=5, sample_length=40, seed=0)
    losses = result["losses"]
    assert len(losses) == 6 and losses[-1] < 0.8 * losses[0]
    assert isinstance(result["sample"], str) and len(result["sample"]) == 40
