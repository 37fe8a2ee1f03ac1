"""``keras.datasets.mnist.load_data(path=...)``: read a local ``mnist.npz`` (the file Keras downloads,
with ``x_train``, ``y_train``, ``x_test``, ``y_test``). Nothing is downloaded: a missing file is an
error that says where it was looked for and where to get it."""
from __future__ import annotations

import os
import types
from typing import Any

from graphgrad.backend import np

__all__ = ["mnist", "fashion_mnist"]

_URL = "https://storage.googleapis.com/tensorflow/tf-keras-datasets/"


def _load_npz(path: str, what: str, filename: str) -> tuple:
    candidates = [path] if os.path.isabs(path) else [path, os.path.join(os.path.expanduser("~/.keras/datasets"), path)]
    for candidate in candidates:
        if os.path.exists(candidate):
            with np.load(candidate, allow_pickle=False) as data:
                missing = {"x_train", "y_train", "x_test", "y_test"} - set(data.files)
                if missing:
                    raise ValueError(f"keras.datasets.{what}.load_data: {candidate!r} lacks {sorted(missing)}")
                return (data["x_train"], data["y_train"]), (data["x_test"], data["y_test"])
    raise FileNotFoundError(f"keras.datasets.{what}.load_data: no file {path!r} (looked in "
                            f"{[os.path.abspath(c) for c in candidates]}). graphgrad does not download data: fetch "
                            f"{_URL}{filename} and pass its path as load_data(path=...)")


def _mnist_load_data(path: str = "mnist.npz") -> Any:
    """``((x_train, y_train), (x_test, y_test))`` from a local ``mnist.npz``."""
    return _load_npz(path, "mnist", "mnist.npz")


def _fashion_load_data(path: str = "fashion-mnist.npz") -> Any:
    """``((x_train, y_train), (x_test, y_test))`` from a local npz of the same layout as ``mnist.npz``."""
    return _load_npz(path, "fashion_mnist", "(the four fashion-mnist .gz files, saved as one npz)")


mnist = types.SimpleNamespace(load_data=_mnist_load_data)
fashion_mnist = types.SimpleNamespace(load_data=_fashion_load_data)
