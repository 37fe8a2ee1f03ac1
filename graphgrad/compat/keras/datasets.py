"""``keras.datasets.mnist.load_data(path=...)``: read a local ``mnist.npz`` (the file Keras downloads,
with ``x_train``, ``y_train``, ``x_test``, ``y_test``); ``imdb`` and ``reuters`` read Keras' own
``imdb.npz`` / ``reuters.npz`` and process them as Keras does (``num_words``, ``maxlen``, ``start_char``,
``oov_char``, ``index_from``); ``cifar10`` / ``cifar100`` / ``boston_housing`` read local npz files.
Nothing is downloaded: a missing file is an
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


def _local(path: str, what: str, filename: str) -> str:
    candidates = [path] if os.path.isabs(path) else [path, os.path.join(os.path.expanduser("~/.keras/datasets"), path)]
    for candidate in candidates:
        if os.path.exists(candidate):
            return candidate
    raise FileNotFoundError(f"keras.datasets.{what}.load_data: no file {path!r} (looked in "
                            f"{[os.path.abspath(c) for c in candidates]}). graphgrad does not download data: fetch "
                            f"{filename} and pass its path as load_data(path=...)")


def _sequences(what: str, filename: str, path: str, num_words: Any, skip_top: int, maxlen: Any, seed: int,
               start_char: Any, oov_char: Any, index_from: int, test_split: Any = None) -> Any:
    """Keras' processing of ``imdb.npz`` / ``reuters.npz`` (arrays of word-index lists, the files Keras
    downloads): shuffled with ``seed``, indices shifted by ``index_from``, ``start_char`` put first,
    sequences longer than ``maxlen`` dropped, indices outside ``[skip_top, num_words)`` made ``oov_char``
    (or dropped when it is None)."""
    # the files hold object arrays of lists: np.load needs allow_pickle for them (the file is the user's own)
    with np.load(_local(path, what, _URL + filename), allow_pickle=True) as f:
        if test_split is None:
            xs = [f["x_train"], f["x_test"]]
            labels = [f["y_train"], f["y_test"]]
        else:
            xs, labels = [f["x"]], [f["y"]]
    rng = np.random.RandomState(seed)
    for i in range(len(xs)):
        order = np.arange(len(xs[i]))
        rng.shuffle(order)
        xs[i], labels[i] = xs[i][order], labels[i][order]
    x = [list(s) for s in np.concatenate(xs)]
    labels = np.concatenate(labels)
    if start_char is not None:
        x = [[start_char] + [w + index_from for w in s] for s in x]
    elif index_from:
        x = [[w + index_from for w in s] for s in x]
    if maxlen:
        keep = [i for i, s in enumerate(x) if len(s) < maxlen]
        x, labels = [x[i] for i in keep], labels[keep]
        if not x:
            raise ValueError(f"keras.datasets.{what}.load_data: no sequence is shorter than maxlen={maxlen}")
    if not num_words:
        num_words = max(max(s) for s in x if s)
    if oov_char is not None:
        x = [[w if skip_top <= w < num_words else oov_char for w in s] for s in x]
    else:
        x = [[w for w in s if skip_top <= w < num_words] for s in x]
    out = np.empty(len(x), dtype=object)
    out[:] = x
    if test_split is None:
        n_train = len(xs[0]) if not maxlen else int(sum(1 for i in keep if i < len(xs[0])))
    else:
        n_train = int(len(out) * (1 - test_split))
    return (out[:n_train], labels[:n_train]), (out[n_train:], labels[n_train:])


def _imdb_load_data(path: str = "imdb.npz", num_words: Any = None, skip_top: int = 0, maxlen: Any = None,
                    seed: int = 113, start_char: Any = 1, oov_char: Any = 2, index_from: int = 3, **kwargs) -> Any:
    """``((x_train, y_train), (x_test, y_test))`` from a local ``imdb.npz`` (Keras' file), processed as Keras."""
    return _sequences("imdb", "imdb.npz", path, num_words, skip_top, maxlen, seed, start_char, oov_char, index_from)


def _reuters_load_data(path: str = "reuters.npz", num_words: Any = None, skip_top: int = 0, maxlen: Any = None,
                       test_split: float = 0.2, seed: int = 113, start_char: Any = 1, oov_char: Any = 2,
                       index_from: int = 3, **kwargs) -> Any:
    """``((x_train, y_train), (x_test, y_test))`` from a local ``reuters.npz`` (Keras' file, keys ``x``, ``y``)."""
    return _sequences("reuters", "reuters.npz", path, num_words, skip_top, maxlen, seed, start_char, oov_char,
                      index_from, test_split=test_split)


def _word_index(what: str, default: str):
    def get_word_index(path: str = default) -> dict:
        """The word -> index table (a local copy of Keras' json file)."""
        import json

        with open(_local(path, what, _URL + default)) as f:
            return json.load(f)

    return get_word_index


def _cifar(what: str, default: str, classes: int):
    def load_data(path: str = default, label_mode: str = "fine") -> Any:
        """``((x_train, y_train), (x_test, y_test))`` (uint8 images ``(n, 32, 32, 3)``, labels ``(n, 1)``)
        from a local npz with ``x_train``, ``y_train``, ``x_test``, ``y_test`` (the batches Keras
        downloads, saved as one npz)."""
        (x_train, y_train), (x_test, y_test) = _load_npz(path, what, f"the {what} python batches, saved as one npz")
        return (x_train, np.asarray(y_train).reshape(-1, 1)), (x_test, np.asarray(y_test).reshape(-1, 1))

    return load_data


def _boston_load_data(path: str = "boston_housing.npz", test_split: float = 0.2, seed: int = 113) -> Any:
    """``((x_train, y_train), (x_test, y_test))`` from a local ``boston_housing.npz`` (keys ``x``, ``y``)."""
    with np.load(_local(path, "boston_housing", _URL + "boston_housing.npz"), allow_pickle=False) as f:
        x, y = f["x"], f["y"]
    order = np.random.RandomState(seed).permutation(len(x))
    x, y = x[order], y[order]
    n = int(len(x) * (1 - test_split))
    return (x[:n], y[:n]), (x[n:], y[n:])


imdb = types.SimpleNamespace(load_data=_imdb_load_data, get_word_index=_word_index("imdb", "imdb_word_index.json"))
reuters = types.SimpleNamespace(load_data=_reuters_load_data,
                                get_word_index=_word_index("reuters", "reuters_word_index.json"))
cifar10 = types.SimpleNamespace(load_data=_cifar("cifar10", "cifar10.npz", 10))
cifar100 = types.SimpleNamespace(load_data=_cifar("cifar100", "cifar100.npz", 100))
boston_housing = types.SimpleNamespace(load_data=_boston_load_data)
__all__ += ["imdb", "reuters", "cifar10", "cifar100", "boston_housing"]
