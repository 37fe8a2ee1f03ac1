"""``DataLoader``: batches of graphgrad tensors from a dataset, plus the samplers that order it.

The loader asks a batch sampler for index batches, fetches the samples and collates them into
tensors. When the dataset can fetch a whole batch at once (``get_batch``, as ``TensorDataset`` and
its ``Subset`` s do) and no custom ``collate_fn`` is given, each batch is one fancy index per tensor:
no per-sample Python loop.

Shuffling draws from a ``gg.Generator`` (``generator=`` or ``seed=``; otherwise the global generator
that ``gg.manual_seed`` seeds): the same seed gives the same sequence of epochs, and every epoch
(every ``iter(loader)``) gets a new order.
"""
from __future__ import annotations

import collections.abc
import math
from typing import Any, Callable, Iterator, Optional, Sequence

from graphgrad import backend, config
from graphgrad.backend import np
from graphgrad.core.random import Generator, rng_of
from graphgrad.core.tensor import Tensor


# ---- samplers -------------------------------------------------------------------------------------
class Sampler:
    """Base class: iterating a sampler gives dataset indices (Python ints).

    Built-in samplers also define ``index_array()``, the epoch's indices as one int64 array, which
    ``BatchSampler`` slices instead of looping over indices one by one.
    """

    def __iter__(self) -> Iterator[int]:
        if hasattr(self, "index_array"):
            return iter(self.index_array().tolist())
        raise NotImplementedError(f"{type(self).__name__} must define __iter__")

    def __len__(self) -> int:
        raise NotImplementedError(f"{type(self).__name__} must define __len__")


class SequentialSampler(Sampler):
    """Indices ``0, 1, ..., len(data_source) - 1`` in order."""

    def __init__(self, data_source: Any) -> None:
        self.data_source = data_source

    def index_array(self):
        return np.arange(len(self.data_source), dtype=np.int64)

    def __len__(self) -> int:
        return len(self.data_source)


class RandomSampler(Sampler):
    """A new random order of the dataset's indices on every iteration (epoch).

    Args:
        data_source: the dataset (only its length is used).
        replacement: draw indices with replacement.
        num_samples: indices per epoch (default ``len(data_source)``). Without replacement and more
            than the dataset size, whole permutations are concatenated.
        generator: a ``gg.Generator`` (default: the global generator, seeded by ``gg.manual_seed``).

    Example:
        >>> s = RandomSampler(range(5), generator=gg.Generator(0))
        >>> sorted(s) == [0, 1, 2, 3, 4]
        True
    """

    def __init__(self, data_source: Any, replacement: bool = False, num_samples: Optional[int] = None,
                 generator: Optional[Generator] = None) -> None:
        self.data_source = data_source
        self.replacement = replacement
        self._num_samples = num_samples
        self.generator = generator
        if num_samples is not None and (not isinstance(num_samples, int) or num_samples <= 0):
            raise ValueError(f"num_samples must be a positive int, got {num_samples!r}")

    @property
    def num_samples(self) -> int:
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def index_array(self):
        n, k = len(self.data_source), self.num_samples
        rng = rng_of(self.generator)
        if self.replacement:
            return rng.integers(0, n, size=k, dtype=np.int64)
        if n == 0:
            return np.zeros(0, dtype=np.int64)
        perms = [rng.permutation(n) for _ in range(-(-k // n))]
        return np.concatenate(perms)[:k].astype(np.int64, copy=False)

    def __len__(self) -> int:
        return self.num_samples


class SubsetRandomSampler(Sampler):
    """The given ``indices`` in a new random order each epoch (e.g. a validation split)."""

    def __init__(self, indices: Sequence[int], generator: Optional[Generator] = None) -> None:
        self.indices = np.asarray(indices if hasattr(indices, "__array__") else list(indices), dtype=np.int64)
        self.generator = generator

    def index_array(self):
        return self.indices[rng_of(self.generator).permutation(len(self.indices))]

    def __len__(self) -> int:
        return len(self.indices)


class WeightedRandomSampler(Sampler):
    """``num_samples`` indices drawn with probability proportional to ``weights`` (class balancing)."""

    def __init__(self, weights: Sequence[float], num_samples: int, replacement: bool = True,
                 generator: Optional[Generator] = None) -> None:
        w = np.asarray(weights, dtype=np.float64)
        if w.ndim != 1 or (w < 0).any() or w.sum() <= 0:
            raise ValueError("weights must be a 1-d sequence of non-negative numbers with a positive sum")
        if not replacement and num_samples > len(w):
            raise ValueError(f"cannot draw {num_samples} samples without replacement from {len(w)} weights")
        self.weights, self.num_samples, self.replacement, self.generator = w, num_samples, replacement, generator

    def index_array(self):
        p = self.weights / self.weights.sum()
        return rng_of(self.generator).choice(len(p), size=self.num_samples, replace=self.replacement,
                                             p=p).astype(np.int64)

    def __len__(self) -> int:
        return self.num_samples


class BatchSampler(Sampler):
    """Group the indices of ``sampler`` into lists of ``batch_size`` (the last one shorter unless
    ``drop_last``).

    Example:
        >>> list(BatchSampler(SequentialSampler(range(5)), batch_size=2, drop_last=False))
        [[0, 1], [2, 3], [4]]
    """

    def __init__(self, sampler: Any, batch_size: int, drop_last: bool = False) -> None:
        if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size <= 0:
            raise ValueError(f"batch_size must be a positive int, got {batch_size!r}")
        self.sampler, self.batch_size, self.drop_last = sampler, batch_size, drop_last

    def index_batches(self) -> Iterator:
        """The epoch's batches as int64 arrays (slices of the sampler's ``index_array`` when it has one)."""
        bs = self.batch_size
        if hasattr(self.sampler, "index_array"):
            idx = self.sampler.index_array()
            stop = len(idx) - len(idx) % bs if self.drop_last else len(idx)
            for start in range(0, stop, bs):
                yield idx[start:start + bs]
            return
        batch: list = []
        for i in self.sampler:
            batch.append(i)
            if len(batch) == bs:
                yield np.asarray(batch, dtype=np.int64)
                batch = []
        if batch and not self.drop_last:
            yield np.asarray(batch, dtype=np.int64)

    def __iter__(self) -> Iterator[list]:
        for b in self.index_batches():
            yield b.tolist()

    def __len__(self) -> int:
        n = len(self.sampler)
        return n // self.batch_size if self.drop_last else math.ceil(n / self.batch_size)


# ---- collation ------------------------------------------------------------------------------------
def _stack(arrays: list, what: str):
    xp = backend.namespace_of(arrays[0])
    try:
        return xp.stack([xp.asarray(a) for a in arrays])
    except ValueError:
        shapes = sorted({tuple(a.shape) for a in arrays})
        raise ValueError(f"default_collate cannot stack {what} of different shapes {shapes[:4]}; "
                         "pad them to one shape or pass a collate_fn") from None


def default_collate(batch: Sequence[Any]) -> Any:
    """Stack a list of samples into a batch, keeping its structure.

    - Tensors and NumPy arrays are stacked along a new axis 0; their dtype is kept.
    - Python ``float`` s give a float32 tensor (``gg.config.default_float``), ``int`` s int64,
      ``bool`` s bool; NumPy scalars keep their dtype.
    - Tuples, lists, namedtuples and dicts are collated field by field; strings are kept as a list.

    Example:
        >>> x, y = default_collate([(np.zeros(3), 1), (np.ones(3), 0)])
        >>> x.shape, y.dtype
        ((2, 3), dtype('int64'))
    """
    if len(batch) == 0:
        raise ValueError("default_collate got an empty batch")
    elem = batch[0]
    if isinstance(elem, Tensor):
        if any(b.data is None for b in batch):
            raise ValueError("default_collate cannot stack symbolic tensors")
        return Tensor._wrap(_stack([b.data for b in batch], "tensors"))
    if backend.is_array(elem):
        return Tensor._wrap(_stack(batch, "arrays"))
    if isinstance(elem, bool):
        return Tensor._wrap(np.asarray(batch, dtype=np.bool_))
    if isinstance(elem, int):
        return Tensor._wrap(np.asarray(batch, dtype=config.default_int))
    if isinstance(elem, float):
        return Tensor._wrap(np.asarray(batch, dtype=config.default_float))
    if isinstance(elem, (str, bytes)):
        return list(batch)
    if isinstance(elem, collections.abc.Mapping):
        return {key: default_collate([d[key] for d in batch]) for key in elem}
    if isinstance(elem, (tuple, list)):
        size = len(elem)
        if any(len(b) != size for b in batch):
            raise ValueError(f"default_collate: samples have different lengths ({sorted({len(b) for b in batch})})")
        fields = [default_collate(list(group)) for group in zip(*batch)]
        if isinstance(elem, tuple) and hasattr(elem, "_fields"):  # namedtuple
            return type(elem)(*fields)
        return tuple(fields) if isinstance(elem, tuple) else fields
    raise TypeError(f"default_collate does not know how to batch {type(elem).__name__}; expected tensors, "
                    "NumPy arrays, numbers, strings, or tuples/lists/dicts of them (or pass a collate_fn)")


def default_convert(sample: Any) -> Any:
    """Turn arrays and numbers inside one sample into tensors without batching (``batch_size=None``)."""
    if isinstance(sample, Tensor):
        return sample
    if backend.is_array(sample):
        return Tensor._wrap(sample if hasattr(sample, "ndim") and not isinstance(sample, np.generic)
                            else np.asarray(sample))
    if isinstance(sample, (bool, int, float)):
        return Tensor(sample)
    if isinstance(sample, collections.abc.Mapping):
        return {k: default_convert(v) for k, v in sample.items()}
    if isinstance(sample, tuple) and hasattr(sample, "_fields"):
        return type(sample)(*(default_convert(v) for v in sample))
    if isinstance(sample, (tuple, list)):
        return type(sample)(default_convert(v) for v in sample)
    return sample


# ---- the loader -----------------------------------------------------------------------------------
class DataLoader:
    """Iterate over a dataset in batches of graphgrad tensors.

    Args:
        dataset: a map-style dataset (``__getitem__`` and ``__len__``).
        batch_size: samples per batch; ``None`` yields single samples converted to tensors.
        shuffle: a new random order every epoch (excludes ``sampler``).
        sampler: a sampler giving the order of indices.
        batch_sampler: a sampler giving whole index batches (excludes ``batch_size``, ``shuffle``,
            ``sampler`` and ``drop_last``).
        drop_last: drop the last, incomplete batch.
        collate_fn: turns a list of samples into a batch (default :func:`default_collate`). Giving one
            disables the whole-batch fast path.
        generator: a ``gg.Generator`` for shuffling.
        seed: shorthand for ``generator=gg.Generator(seed)``.

    ``len(loader)`` is the number of batches per epoch.

    Example:
        >>> ds = TensorDataset(gg.randn(100, 2), gg.zeros(100, dtype=gg.int64))
        >>> loader = DataLoader(ds, batch_size=32, shuffle=True, seed=0)
        >>> len(loader), [x.shape for x, y in loader][-1]
        (4, (4, 2))
    """

    def __init__(self, dataset: Any, batch_size: Optional[int] = 1, shuffle: bool = False, sampler: Any = None,
                 batch_sampler: Any = None, drop_last: bool = False, collate_fn: Optional[Callable] = None,
                 generator: Optional[Generator] = None, seed: Optional[int] = None) -> None:
        if seed is not None:
            if generator is not None:
                raise ValueError("pass either generator or seed to DataLoader, not both")
            generator = Generator(seed)
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("batch_sampler is mutually exclusive with batch_size, shuffle, sampler and drop_last")
            batch_size = None
        else:
            if sampler is not None and shuffle:
                raise ValueError("shuffle=True cannot be combined with a sampler; the sampler decides the order")
            if sampler is None:
                sampler = RandomSampler(dataset, generator=generator) if shuffle else SequentialSampler(dataset)
            if batch_size is not None:
                batch_sampler = BatchSampler(sampler, batch_size, drop_last)
            elif drop_last:
                raise ValueError("drop_last needs a batch_size")
        self.dataset = dataset
        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.collate_fn = collate_fn
        self.generator = generator

    def __len__(self) -> int:
        return len(self.batch_sampler) if self.batch_sampler is not None else len(self.sampler)

    def __iter__(self) -> Iterator[Any]:
        dataset = self.dataset
        if self.batch_sampler is None:
            convert = self.collate_fn or default_convert
            for i in self.sampler:
                yield convert(dataset[i])
            return
        if hasattr(self.batch_sampler, "index_batches"):
            batches = self.batch_sampler.index_batches()
        else:
            batches = (np.asarray(b, dtype=np.int64) for b in self.batch_sampler)
        if self.collate_fn is None and hasattr(dataset, "get_batch"):
            for idx in batches:
                yield dataset.get_batch(idx)
            return
        collate = self.collate_fn or default_collate
        for idx in batches:
            yield collate([dataset[i] for i in idx.tolist()])
