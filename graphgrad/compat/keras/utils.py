"""``keras.utils``: ``to_categorical``, ``set_random_seed``, ``normalize``, ``pad_sequences`` and
``PyDataset`` / ``Sequence`` (batches by index, which ``fit``, ``evaluate`` and ``predict`` accept as ``x``)."""
from __future__ import annotations

from typing import Any, Optional

import graphgrad as gg
from graphgrad.backend import np

__all__ = ["to_categorical", "set_random_seed", "normalize", "pad_sequences", "PyDataset", "Sequence", "batches_of"]


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


def pad_sequences(sequences: Any, maxlen: Optional[int] = None, dtype: Any = "int32", padding: str = "pre",
                  truncating: str = "pre", value: float = 0.0) -> Any:
    """Keras' ``pad_sequences``: a ``(len(sequences), maxlen)`` array (``maxlen`` defaults to the longest),
    shorter sequences padded with ``value`` before (``padding="pre"``) or after (``"post"``) them, longer
    ones cut at the start (``truncating="pre"``) or the end (``"post"``)."""
    if padding not in ("pre", "post") or truncating not in ("pre", "post"):
        raise ValueError(f"pad_sequences: padding and truncating must be 'pre' or 'post', got {padding!r}, "
                         f"{truncating!r}")
    sequences = [np.asarray(s) for s in sequences]
    lengths = [len(s) for s in sequences]
    if maxlen is None:
        maxlen = max(lengths) if lengths else 0
    sample_shape = next((s.shape[1:] for s in sequences if len(s)), ())
    out = np.full((len(sequences), int(maxlen)) + tuple(sample_shape), value, dtype=dtype)
    for i, s in enumerate(sequences):
        if not len(s) or not maxlen:
            continue
        kept = s[-maxlen:] if truncating == "pre" else s[:maxlen]
        if padding == "post":
            out[i, :len(kept)] = kept
        else:
            out[i, -len(kept):] = kept
    return out


class PyDataset:
    """Keras' ``PyDataset`` (``Sequence``): subclass it with ``__len__`` (batches per epoch) and
    ``__getitem__(index)`` returning one batch ``(x, y)`` (or ``x`` for ``predict``); ``on_epoch_end`` runs
    after each epoch. The worker arguments are accepted and ignored (batches are made in order, in this
    process)."""

    def __init__(self, workers: int = 1, use_multiprocessing: bool = False, max_queue_size: int = 10) -> None:
        pass

    def __len__(self) -> int:
        raise NotImplementedError(f"{type(self).__name__}: define __len__ (the number of batches)")

    def __getitem__(self, index: int):
        raise NotImplementedError(f"{type(self).__name__}: define __getitem__(index) returning a batch (x, y)")

    def on_epoch_end(self) -> None:
        pass

    @property
    def num_batches(self) -> int:
        return len(self)


Sequence = PyDataset


class batches_of:  # noqa: N801  (an iterable adapter, used as fit's loader)
    """The batches of a ``PyDataset`` (or any object with ``__len__`` and ``__getitem__``) as an iterable
    that starts again each epoch and calls ``on_epoch_end`` when one is done; a third item of a batch
    (sample weights) is refused."""

    def __init__(self, dataset: Any) -> None:
        self.dataset = dataset

    def __len__(self) -> int:
        return len(self.dataset)

    def __iter__(self):
        for index in range(len(self.dataset)):
            batch = self.dataset[index]
            if isinstance(batch, tuple) and len(batch) == 3:
                raise NotImplementedError("PyDataset: batches with sample weights (x, y, w) are not supported")
            yield batch
        if hasattr(self.dataset, "on_epoch_end"):
            self.dataset.on_epoch_end()


def is_dataset(x: Any) -> bool:
    """Whether ``x`` is a ``PyDataset``-like object (batches by index), not an array or a list of arrays."""
    if isinstance(x, PyDataset):
        return True
    return (hasattr(x, "__getitem__") and hasattr(x, "__len__") and not hasattr(x, "shape")
            and not isinstance(x, (list, tuple, dict)) and hasattr(x, "on_epoch_end"))
