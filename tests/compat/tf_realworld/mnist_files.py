"""Write MNIST-format files (the four IDX ``.gz`` files TF1's ``input_data.read_data_sets`` reads) made
from scikit-learn's 8x8 digits: each digit scaled 3x to 24x24, placed at a random offset in a 28x28
frame, with a little noise. Small (7000 training, 1000 test images) and quick to learn, so the MNIST
programs of TF1's tutorials run here unchanged in seconds.

``python mnist_files.py FOLDER`` writes them into FOLDER."""
from __future__ import annotations

import gzip
import os
import struct
import sys

import numpy as np


def _write_idx(path: str, array: np.ndarray) -> None:
    header = struct.pack(">BBBB", 0, 0, 0x08, array.ndim) + struct.pack(f">{array.ndim}i", *array.shape)
    with gzip.open(path, "wb", compresslevel=1) as f:
        f.write(header + np.ascontiguousarray(array, dtype=np.uint8).tobytes())


def _images(digits: np.ndarray, count: int, rng: np.random.RandomState) -> tuple:
    from sklearn.datasets import load_digits

    data = load_digits()
    pick = rng.choice(digits, count)
    big = np.kron(data.images[pick] / 16.0, np.ones((3, 3)))  # (count, 24, 24)
    out = np.zeros((count, 28, 28))
    for i, (dy, dx) in enumerate(rng.randint(0, 5, (count, 2))):
        out[i, dy:dy + 24, dx:dx + 24] = big[i]
    out = np.clip(out + rng.uniform(0, 0.1, out.shape), 0, 1)
    return (out * 255).astype(np.uint8), data.target[pick].astype(np.uint8)


def write_mnist(folder: str, train: int = 7000, test: int = 1000, seed: int = 0) -> str:
    """Write the four files into ``folder`` (made if missing); training and test images come from
    different scikit-learn digits. Returns ``folder``."""
    os.makedirs(folder, exist_ok=True)
    rng = np.random.RandomState(seed)
    order = rng.permutation(1797)
    train_x, train_y = _images(order[:1500], train, rng)
    test_x, test_y = _images(order[1500:], test, rng)
    for name, array in (("train-images-idx3-ubyte", train_x), ("train-labels-idx1-ubyte", train_y),
                        ("t10k-images-idx3-ubyte", test_x), ("t10k-labels-idx1-ubyte", test_y)):
        _write_idx(os.path.join(folder, name + ".gz"), array)
    return folder


if __name__ == "__main__":
    write_mnist(sys.argv[1])
