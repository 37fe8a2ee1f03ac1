"""``keras.utils``: ``to_categorical``, ``set_random_seed``."""
from __future__ import annotations

from typing import Any, Optional

import graphgrad as gg
from graphgrad.backend import np

__all__ = ["to_categorical", "set_random_seed", "normalize"]


def to_categorical(x: Any, num_classes: Optional[int] = None) -> Any:
    """One-hot rows (float32) for integer class labels: ``to_categorical([0, 2], 3)``."""
    labels = np.asarray(gg.tensor(x).numpy() if isinstance(x, gg.Tensor) else x)
    if labels.ndim > 1 and labels.shape[-1] == 1:
        labels = labels.reshape(labels.shape[:-1])
    labels = labels.astype(np.int64)
    if labels.size and labels.min() < 0:
        raise ValueError(f"to_categorical: labels must be non-negative, got {int(labels.min())}")
    n = int(labels.max()) + 1 if num_classes is None else int(num_classes)
    if labels.size and labels.max() >= n:
        raise ValueError(f"to_categorical: label {int(labels.max())} does not fit num_classes={n}")
    return gg.one_hot(gg.tensor(labels), n).numpy().astype(np.float32)


def set_random_seed(seed: int) -> None:
    """Seed graphgrad's generator (weights, dropout, shuffling) and NumPy's global one, as Keras does."""
    gg.manual_seed(int(seed))
    np.random.seed(int(seed))
    import random

    random.seed(int(seed))


def normalize(x: Any, axis: int = -1, order: int = 2) -> Any:
    """Rows scaled to unit ``order``-norm along ``axis``."""
    x = np.asarray(x, dtype=np.float64)
    norm = np.linalg.norm(x, ord=order, axis=axis, keepdims=True)
    return x / np.where(norm == 0, 1, norm)
