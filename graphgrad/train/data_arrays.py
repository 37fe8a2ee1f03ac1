"""Batches for ``Model.fit``/``evaluate``/``predict`` from arrays (shuffled per epoch, split for
validation, sharded over ranks) or from a loader. ``x`` may be one array or, for a model with
several inputs, a tuple of arrays with the same number of rows (each batch is then a tuple); ``y``
likewise for a model with several outputs."""
from __future__ import annotations

import copy
from typing import Any, Iterable, Optional

from graphgrad import backend
from graphgrad.backend import np
from graphgrad.core.tensor import Tensor


def _is_data_array(value: Any) -> bool:
    return isinstance(value, (Tensor, list)) or backend.is_array(value) or isinstance(value, np.generic)


def _as_array(value: Any):
    """A Tensor, array or nested list as a backend array (Tensors keep their device)."""
    if isinstance(value, Tensor):
        return value._value()
    if backend.is_array(value):
        return value
    return np.asarray(value)


def _take(array, index):
    if isinstance(array, tuple):  # several inputs
        return tuple(_take(a, index) for a in array)
    xp = backend.namespace_of(array)
    return array[xp.asarray(index)]


def _rows(array, start: int, stop: int):
    if isinstance(array, tuple):
        return tuple(a[start:stop] for a in array)
    return array[start:stop]


def _is_multi_input(x: Any) -> bool:
    """``x`` a tuple of arrays (several inputs): a tuple of at least two arrays or Tensors (not lists)."""
    return isinstance(x, tuple) and len(x) > 1 and all(
        isinstance(v, Tensor) or backend.is_array(v) for v in x)


def _targets(y: Any):
    """``y`` as an array, or a tuple of arrays for a model with several outputs."""
    if y is None:
        return None
    if _is_multi_input(y):
        ys = tuple(_as_array(v) for v in y)
        if len({batch_rows(v) for v in ys}) != 1:
            raise ValueError(f"the targets of y must all have the same number of samples, got shapes "
                             f"{[tuple(v.shape) for v in ys]}")
        return ys
    return _as_array(y)


def batch_rows(x: Any) -> int:
    """The number of samples in ``x`` (an array, a Tensor or a tuple of them)."""
    return int((x[0] if isinstance(x, tuple) else x).shape[0])


def _unpack(batch: Any) -> tuple:
    """A loader's batch as ``(x, y)`` (``y`` is ``None`` for input-only batches)."""
    if isinstance(batch, (tuple, list)):
        if len(batch) == 2:
            return batch[0], batch[1]
        if len(batch) == 1:
            return batch[0], None
        raise ValueError(f"a batch must be (x, y) or (x,), got a {type(batch).__name__} of {len(batch)} items")
    if isinstance(batch, dict) and "x" in batch:
        return batch["x"], batch.get("y")
    return batch, None


def _epoch_rng(seed: Optional[int], epoch: int):
    """The random source of one epoch's shuffle: a function of ``(seed, epoch)``, or graphgrad's default
    generator (saved in checkpoints) when there is no seed."""
    if seed is None:
        from graphgrad.core.random import rng_of

        return rng_of(None)
    return np.random.default_rng([int(seed), int(epoch)])


class _Data:
    """Batches of ``(x, y)`` from arrays (optionally shuffled each epoch, or in the order of
    ``sampler``: this rank's share, see :meth:`sharded`) or from a loader."""

    def __init__(self, x: Any, y: Any = None, batch_size: Optional[int] = 32, what: str = "x") -> None:
        if x is None:
            raise ValueError(f"{what}: no data given")
        self.loader = None
        self.sampler = None
        if _is_multi_input(x):
            self.x = tuple(_as_array(v) for v in x)
            rows = {int(v.shape[0]) if v.ndim else None for v in self.x}
            if len(rows) != 1 or None in rows:
                raise ValueError(f"{what}: the inputs of x must all have the same number of samples, got "
                                 f"shapes {[tuple(v.shape) for v in self.x]}")
            self.y = _targets(y)
            if self.y is not None and batch_rows(self.y) != batch_rows(self.x):
                raise ValueError(f"{what}: x has {batch_rows(self.x)} samples but y has {batch_rows(self.y)}")
            self.batch_size = int(batch_size or 32)
        elif _is_data_array(x):
            self.x = _as_array(x)
            self.y = _targets(y)
            if self.x.ndim == 0:
                raise ValueError(f"{what}: x must have a batch dimension, got a scalar")
            if self.y is not None and batch_rows(self.y) != self.x.shape[0]:
                raise ValueError(f"{what}: x has {self.x.shape[0]} samples but y has {batch_rows(self.y)}")
            self.batch_size = int(batch_size or 32)
        elif hasattr(x, "__iter__"):
            if y is not None:
                raise ValueError(f"{what}: when x is a DataLoader (or another iterable of batches), y must be None: "
                                 "the batches carry the targets")
            self.loader = x
        else:
            raise TypeError(f"{what}: x must be an array, a Tensor or a DataLoader, got {type(x).__name__}")

    def __len__(self) -> int:
        if self.loader is not None:
            try:
                return len(self.loader)
            except TypeError:
                return 0
        n = batch_rows(self.x) if self.sampler is None else len(self.sampler)
        return -(-n // self.batch_size)

    def split(self, fraction: float) -> tuple:
        """``(train, validation)``: the last ``fraction`` of the samples (before shuffling, as Keras)."""
        if self.loader is not None:
            raise ValueError("validation_split needs array inputs; with a DataLoader pass validation_data")
        if not 0.0 < fraction < 1.0:
            raise ValueError(f"validation_split must be in (0, 1), got {fraction}")
        n = batch_rows(self.x)
        cut = n - int(round(n * fraction))
        if cut <= 0 or cut >= n:
            raise ValueError(f"validation_split={fraction} leaves no training or no validation samples out of {n}")
        head, tail = copy.copy(self), copy.copy(self)
        head.x, tail.x = _rows(self.x, 0, cut), _rows(self.x, cut, n)
        head.y = None if self.y is None else _rows(self.y, 0, cut)
        tail.y = None if self.y is None else _rows(self.y, cut, n)
        return head, tail

    def sharded(self, world, training: bool, shuffle: bool = False, seed: int = 0, in_order: bool = False) -> "_Data":
        """This rank's share: a ``DistributedSampler``'s for training, an unpadded ``ShardSampler``'s
        for evaluation (``in_order``: split only a loader that keeps the dataset's order)."""
        from graphgrad.distributed.sampler import DistributedSampler, ShardSampler
        from graphgrad.distributed.training import shard_loader

        share = copy.copy(self)
        if self.loader is not None:
            share.loader = shard_loader(self.loader, world, training, seed, in_order)
        elif training:
            share.sampler = DistributedSampler(range(batch_rows(self.x)), world.size, world.rank, shuffle, seed)
        else:
            share.sampler = ShardSampler(range(batch_rows(self.x)), world.size, world.rank)
        return share

    def batches(self, shuffle: bool = False, rng=None, epoch: Optional[int] = None) -> Iterable:
        if self.loader is not None:
            sampler = getattr(self.loader, "sampler", None)
            if epoch is not None and hasattr(sampler, "set_epoch"):
                sampler.set_epoch(epoch)  # a DistributedSampler's order depends on the epoch
            for batch in self.loader:
                yield _unpack(batch)
            return
        if self.sampler is not None:
            if epoch is not None and hasattr(self.sampler, "set_epoch"):
                self.sampler.set_epoch(epoch)
            order = self.sampler.index_array()
            n = len(order)
        else:
            n = batch_rows(self.x)
            order = rng.permutation(n) if shuffle else None
        for start in range(0, n, self.batch_size):
            if order is None:
                xb = _rows(self.x, start, start + self.batch_size)
                yb = None if self.y is None else _rows(self.y, start, start + self.batch_size)
            else:
                index = order[start:start + self.batch_size]
                xb = _take(self.x, index)
                yb = None if self.y is None else _take(self.y, index)
            yield xb, yb


def _validation(validation_data: Any, batch_size: int) -> _Data:
    if isinstance(validation_data, (tuple, list)) and len(validation_data) in (2, 3) and \
            (_is_data_array(validation_data[0]) or _is_multi_input(validation_data[0])):
        return _Data(validation_data[0], validation_data[1], batch_size, "validation_data")
    return _Data(validation_data, None, batch_size, "validation_data")


