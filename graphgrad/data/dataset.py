"""Map-style datasets: ``Dataset``, ``TensorDataset``, ``Subset``, ``ConcatDataset``, ``random_split``.

A dataset is anything with ``__getitem__(index)`` and ``__len__()`` (PyTorch's map-style protocol).
Datasets that can fetch a whole batch at once also define ``get_batch(indices)`` returning the
already-collated batch; :class:`~graphgrad.data.loader.DataLoader` uses it (no per-sample Python
loop) when no custom ``collate_fn`` is given. ``TensorDataset`` and ``Subset`` of one do.
"""
from __future__ import annotations

import bisect
from typing import Any, Callable, Optional, Sequence

from graphgrad import backend
from graphgrad.backend import np
from graphgrad.core.random import Generator, rng_of
from graphgrad.core.tensor import Tensor


class Dataset:
    """Base class of map-style datasets: subclasses define ``__getitem__`` and ``__len__``.

    Examples:
        >>> class Squares(Dataset):
        ...     def __len__(self): return 10
        ...     def __getitem__(self, i): return float(i), float(i * i)
        >>> len(Squares() + Squares())
        20
    """

    def __getitem__(self, index: int) -> Any:
        raise NotImplementedError(f"{type(self).__name__} must define __getitem__")

    def __len__(self) -> int:
        # a TypeError, as len() of an object without __len__ (list(loader) of a stream asks, and copes)
        raise TypeError(f"{type(self).__name__} has no len(): define __len__")

    def __add__(self, other: "Dataset") -> "ConcatDataset":
        return ConcatDataset([self, other])


def _as_index_array(indices, xp):
    idx = np.asarray(indices, dtype=np.int64)
    return idx if xp is np else xp.asarray(idx)


def _wrap(value) -> Tensor:
    # NumPy scalar results of integer indexing become 0-d arrays so every tensor holds an ndarray
    if isinstance(value, np.generic):
        value = np.asarray(value)
    return Tensor._wrap(value)


class TensorDataset(Dataset):
    """Samples are rows of tensors that share their first dimension.

    Args:
        *tensors: Tensors or NumPy arrays (kept as they are: no copy, dtype unchanged), all with the
            same length ``N`` along axis 0.

    ``dataset[i]`` is the tuple ``(tensors[0][i], tensors[1][i], ...)``; ``dataset.get_batch(idx)``
    gathers a whole batch with one fancy index per tensor.

    Examples:
        >>> ds = TensorDataset(gg.randn(100, 2), gg.zeros(100, dtype=gg.int64))
        >>> x, y = ds[3]
        >>> x.shape, y.shape
        ((2,), ())
    """

    def __init__(self, *tensors: Any) -> None:
        if not tensors:
            raise ValueError("TensorDataset needs at least one tensor")
        self.tensors = tuple(t if isinstance(t, Tensor) else Tensor(t) for t in tensors)
        for t in self.tensors:
            if t._data is None:
                raise ValueError("TensorDataset needs concrete tensors, got a symbolic one")
            if not t.shape:
                raise ValueError("TensorDataset tensors need a first (sample) dimension, got a 0-d tensor")
        sizes = [t.shape[0] for t in self.tensors]
        if len(set(sizes)) != 1:
            shapes = ", ".join(str(t.shape) for t in self.tensors)
            raise ValueError(f"TensorDataset tensors must have the same size along axis 0, got shapes {shapes}")

    def __getitem__(self, index: int) -> tuple:
        return tuple(_wrap(t._data[index]) for t in self.tensors)

    def __len__(self) -> int:
        return self.tensors[0].shape[0]

    def get_batch(self, indices: Sequence[int]) -> tuple:
        """The batch ``(tensors[0][indices], tensors[1][indices], ...)`` gathered in one index per tensor."""
        out = []
        for t in self.tensors:
            out.append(Tensor._wrap(t._data[_as_index_array(indices, backend.namespace_of(t._data))]))
        return tuple(out)


class Subset(Dataset):
    """The samples of ``dataset`` at ``indices`` (in that order).

    Examples:
        >>> evens = Subset(TensorDataset(gg.arange(10)), range(0, 10, 2))
        >>> len(evens)
        5
    """

    def __init__(self, dataset: Any, indices: Sequence[int]) -> None:
        self.dataset = dataset
        self.indices = np.asarray(indices if hasattr(indices, "__array__") else list(indices), dtype=np.int64)
        if self.indices.ndim != 1:
            raise ValueError(f"Subset indices must be one-dimensional, got shape {self.indices.shape}")
        if hasattr(dataset, "get_batch"):
            self.get_batch = self._get_batch

    def __getitem__(self, index: int) -> Any:
        return self.dataset[int(self.indices[index])]

    def __len__(self) -> int:
        return len(self.indices)

    def _get_batch(self, indices: Sequence[int]) -> Any:
        return self.dataset.get_batch(self.indices[np.asarray(indices, dtype=np.int64)])


class ConcatDataset(Dataset):
    """Several datasets one after another.

    Examples:
        >>> ds = ConcatDataset([TensorDataset(gg.zeros(3)), TensorDataset(gg.ones(2))])
        >>> len(ds), float(ds[4][0])
        (5, 1.0)
    """

    def __init__(self, datasets: Sequence[Any]) -> None:
        self.datasets = list(datasets)
        if not self.datasets:
            raise ValueError("ConcatDataset needs at least one dataset")
        self.cumulative_sizes = []
        total = 0
        for d in self.datasets:
            total += len(d)
            self.cumulative_sizes.append(total)

    def __len__(self) -> int:
        return self.cumulative_sizes[-1]

    def __getitem__(self, index: int) -> Any:
        n = len(self)
        if index < 0:
            index += n
        if not 0 <= index < n:
            raise IndexError(f"index {index} is out of range for a ConcatDataset of length {n}")
        which = bisect.bisect_right(self.cumulative_sizes, index)
        start = self.cumulative_sizes[which - 1] if which else 0
        return self.datasets[which][index - start]


class TransformDataset(Dataset):
    """Apply ``transform`` to the first element of each sample and ``target_transform`` to the second.

    Samples that are not tuples/lists are passed whole to ``transform``. Use it to add augmentation
    (:mod:`graphgrad.data.transforms`) to any dataset. It fetches samples one by one, so the
    ``DataLoader`` fast path does not apply.

    Examples:
        >>> ds = TransformDataset(TensorDataset(images, labels), transform=RandomHorizontalFlip())
    """

    def __init__(self, dataset: Any, transform: Optional[Callable] = None,
                 target_transform: Optional[Callable] = None) -> None:
        self.dataset = dataset
        self.transform = transform
        self.target_transform = target_transform

    def __len__(self) -> int:
        return len(self.dataset)

    def __getitem__(self, index: int) -> Any:
        sample = self.dataset[index]
        if not isinstance(sample, (tuple, list)):
            return self.transform(sample) if self.transform is not None else sample
        sample = list(sample)
        if self.transform is not None and sample:
            sample[0] = self.transform(sample[0])
        if self.target_transform is not None and len(sample) > 1:
            sample[1] = self.target_transform(sample[1])
        return tuple(sample)


def _split_lengths(n: int, lengths: Sequence[float]) -> list[int]:
    lengths = list(lengths)
    all_int = all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in lengths)
    if all_int:
        if sum(lengths) != n:
            raise ValueError(f"random_split lengths {lengths} sum to {sum(lengths)}, "
                             f"but the dataset has {n} samples")
        if any(v < 0 for v in lengths):
            raise ValueError(f"random_split lengths must be non-negative, got {lengths}")
        return [int(v) for v in lengths]
    if any(not 0 <= float(v) <= 1 for v in lengths) or abs(sum(float(v) for v in lengths) - 1) > 1e-6:
        raise ValueError(f"random_split lengths must be ints summing to {n} or fractions in [0, 1] summing "
                         f"to 1, got {lengths}")
    counts = [int(float(v) * n) for v in lengths]
    for i in range(n - sum(counts)):  # hand out the remainder round-robin, like PyTorch
        counts[i % len(counts)] += 1
    return counts


def random_split(dataset: Any, lengths: Sequence[float], generator: Optional[Generator] = None) -> list[Subset]:
    """Randomly split ``dataset`` into non-overlapping :class:`Subset` s of the given lengths.

    Args:
        dataset: any map-style dataset.
        lengths: sample counts summing to ``len(dataset)``, or fractions summing to 1 (the remainder
            of flooring is handed out one by one from the first subset).
        generator: a ``gg.Generator`` for a reproducible split (default: the global generator,
            seeded by ``gg.manual_seed``).

    Examples:
        >>> train, val = random_split(ds, [0.8, 0.2], generator=gg.Generator(0))
    """
    n = len(dataset)
    counts = _split_lengths(n, lengths)
    order = rng_of(generator).permutation(n)
    subsets, start = [], 0
    for c in counts:
        subsets.append(Subset(dataset, order[start:start + c]))
        start += c
    return subsets
