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
import functools
import math
from typing import Any, Callable, Iterator, Optional, Sequence

from graphgrad import backend, config
from graphgrad.backend import np
from graphgrad.core.random import Generator, rng_of
from graphgrad.core.tensor import Tensor
from graphgrad.data.iterable import IterableDataset


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


#: Above this many indices, an epoch drawn with replacement is drawn as it is read, not all at once
#: (makemore's ``RandomSampler(replacement=True, num_samples=int(1e10))``, an endless stream of batches,
#: would allocate 75 GiB).
_DRAW_AS_READ_ABOVE = 1 << 22


class _DrawnIndices:
    """An epoch's indices drawn with replacement as they are read: ``len()``, consecutive slices (what
    ``BatchSampler`` reads; each a fresh draw of its length) and iteration."""

    def __init__(self, rng, n: int, k: int) -> None:
        self.rng, self.n, self.k = rng, n, k

    def __len__(self) -> int:
        return self.k

    def __getitem__(self, where):
        if not isinstance(where, slice):
            raise TypeError("indices drawn as they are read are read in slices")
        start, stop, step = where.indices(self.k)
        return self.rng.integers(0, self.n, size=len(range(start, stop, step)), dtype=np.int64)

    def tolist(self) -> Iterator[int]:  # (what Sampler.__iter__ walks: k indices, 4096 drawn at a time)
        left = self.k
        while left > 0:
            block = self.rng.integers(0, self.n, size=min(left, 4096), dtype=np.int64).tolist()
            left -= len(block)
            yield from block


class RandomSampler(Sampler):
    """A new random order of the dataset's indices on every iteration (epoch).

    Args:
        data_source: the dataset (only its length is used).
        replacement: draw indices with replacement.
        num_samples: indices per epoch (default ``len(data_source)``). Without replacement and more
            than the dataset size, whole permutations are concatenated.
        generator: a ``gg.Generator`` (default: the global generator, seeded by ``gg.manual_seed``).

    Examples:
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
        if self.replacement and k > _DRAW_AS_READ_ABOVE and n > 0:
            return _DrawnIndices(rng, n, k)
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

    Examples:
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

    Examples:
        >>> x, y = default_collate([(np.zeros(3), 1), (np.ones(3), 0)])
        >>> x.shape, y.dtype
        ((2, 3), dtype('int64'))
    """
    if len(batch) == 0:
        raise ValueError("default_collate got an empty batch")
    elem = batch[0]
    if isinstance(elem, Tensor):
        if any(b._data is None for b in batch):
            raise ValueError("default_collate cannot stack symbolic tensors")
        return Tensor._wrap(_stack([b._data for b in batch], "tensors"))
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
        num_workers: load in this many worker processes (0: in the main process); see
            ``graphgrad/data/workers.py`` for how batches are distributed and ordered.
        worker_init_fn: called as ``fn(worker_id)`` in each worker after seeding it.
        prefetch_factor: batches in flight per worker (default 2).
        timeout: seconds to wait for a worker's batch (0: no limit).
        persistent_workers, pin_memory, pin_memory_device, multiprocessing_context, in_order: accepted
            as PyTorch's (workers are started per epoch; pinned memory means nothing for host arrays;
            batches always come in order).

    An ``IterableDataset`` is read as a stream and batched in order (``shuffle``, ``sampler`` and
    ``batch_sampler`` do not apply to it). ``len(loader)`` is the number of batches per epoch.

    Examples:
        >>> ds = TensorDataset(gg.randn(100, 2), gg.zeros(100, dtype=gg.int64))
        >>> loader = DataLoader(ds, batch_size=32, shuffle=True, seed=0)
        >>> len(loader), [x.shape for x, y in loader][-1]
        (4, (4, 2))
    """

    def __init__(self, dataset: Any, batch_size: Optional[int] = 1, shuffle: bool = False, sampler: Any = None,
                 batch_sampler: Any = None, drop_last: bool = False, collate_fn: Optional[Callable] = None,
                 generator: Optional[Generator] = None, seed: Optional[int] = None, *, num_workers: int = 0,
                 pin_memory: bool = False, timeout: float = 0, worker_init_fn: Optional[Callable] = None,
                 multiprocessing_context: Any = None, prefetch_factor: Optional[int] = None,
                 persistent_workers: bool = False, pin_memory_device: str = "", in_order: bool = True) -> None:
        if num_workers < 0:
            raise ValueError(f"num_workers must be >= 0, got {num_workers}")
        if num_workers == 0 and (prefetch_factor is not None or persistent_workers):
            raise ValueError("prefetch_factor and persistent_workers need num_workers > 0")
        if timeout < 0:
            raise ValueError(f"timeout must be >= 0, got {timeout}")
        self.num_workers, self.pin_memory, self.timeout = int(num_workers), bool(pin_memory), float(timeout)
        self.worker_init_fn, self.multiprocessing_context = worker_init_fn, multiprocessing_context
        self.prefetch_factor, self.persistent_workers = prefetch_factor, bool(persistent_workers)
        self.pin_memory_device, self.in_order = pin_memory_device, in_order
        self._iterable = isinstance(dataset, IterableDataset)
        if self._iterable:
            if shuffle:
                raise ValueError("DataLoader with IterableDataset: expected unspecified shuffle option, but got "
                                 f"shuffle={shuffle}")
            if sampler is not None or batch_sampler is not None:
                raise ValueError("DataLoader with IterableDataset: expected unspecified sampler and batch_sampler "
                                 "options (the dataset decides the order)")
            if batch_size is None and drop_last:
                raise ValueError("drop_last needs a batch_size")
            if seed is not None and generator is None:
                generator = Generator(seed)
            self.dataset, self.batch_size, self.drop_last = dataset, batch_size, drop_last
            self.sampler = self.batch_sampler = None
            self.collate_fn, self.generator = collate_fn, generator
            return
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
        if self._iterable:
            n = len(self.dataset)  # a TypeError when the stream has no length, as in PyTorch
            if self.batch_size is None:
                return n
            return n // self.batch_size if self.drop_last else -(-n // self.batch_size)
        return len(self.batch_sampler) if self.batch_sampler is not None else len(self.sampler)

    def _base_seed(self) -> int:
        """The workers' base seed, drawn from the loader's generator (or the global one) per epoch."""
        return int(rng_of(self.generator).integers(0, 2 ** 31 - 2 ** 16))

    def __iter__(self) -> Iterator[Any]:
        if self._iterable:
            batches = functools.partial(_stream_batches, batch_size=self.batch_size, drop_last=self.drop_last,
                                        collate=self.collate_fn)
            if self.num_workers:
                from graphgrad.data import workers

                return workers.iterable_style(self, batches)
            return batches(self.dataset)
        if self.num_workers:
            return self._iter_workers()
        return self._iter_here()

    def _iter_workers(self) -> Iterator[Any]:
        from graphgrad.data import workers

        if self.batch_sampler is None:
            return workers.map_style(self, ([i] for i in self.sampler),
                                     functools.partial(_fetch_one, convert=self.collate_fn or default_convert))
        if hasattr(self.batch_sampler, "index_batches"):
            batches = self.batch_sampler.index_batches()
        else:
            batches = (np.asarray(b, dtype=np.int64) for b in self.batch_sampler)
        return workers.map_style(self, batches, functools.partial(_fetch_batch, collate=self.collate_fn))

    def _iter_here(self) -> Iterator[Any]:
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


# ---- what workers run (top-level functions, so a spawned worker can unpickle them) -----------------
def _fetch_one(dataset: Any, indices, convert: Callable) -> Any:
    return convert(dataset[indices[0]])


def _fetch_batch(dataset: Any, indices, collate: Optional[Callable]) -> Any:
    if collate is None and hasattr(dataset, "get_batch"):
        return dataset.get_batch(np.asarray(indices, dtype=np.int64))
    return (collate or default_collate)([dataset[i] for i in np.asarray(indices).tolist()])


def _stream_batches(dataset: Any, batch_size: Optional[int], drop_last: bool, collate: Optional[Callable]):
    """The batches of an iterable dataset: ``batch_size`` consecutive samples collated (``None``: each
    sample converted)."""
    if batch_size is None:
        convert = collate or default_convert
        for sample in dataset:
            yield convert(sample)
        return
    collate = collate or default_collate
    chunk = []
    for sample in dataset:
        chunk.append(sample)
        if len(chunk) == batch_size:
            yield collate(chunk)
            chunk = []
    if chunk and not drop_last:
        yield collate(chunk)
