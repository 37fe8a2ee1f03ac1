"""Iterable-style datasets and more dataset combinators, as PyTorch's ``torch.utils.data``:
``IterableDataset`` (a stream: ``__iter__`` instead of indexing), ``ChainDataset``, ``StackDataset``,
and ``get_worker_info`` (inside a DataLoader worker: which worker this is, to shard a stream)."""
from __future__ import annotations

from typing import Any, Iterator, NamedTuple, Optional

from graphgrad.data.dataset import Dataset


class IterableDataset(Dataset):
    """A dataset read as a stream: subclasses define ``__iter__`` (``__len__`` is optional).

    With ``DataLoader(num_workers=N)`` every worker iterates its own copy; shard the stream with
    :func:`get_worker_info` so that the workers do not repeat each other's samples.

    Examples:
        >>> class Counter(IterableDataset):
        ...     def __iter__(self):
        ...         info = get_worker_info()
        ...         start, step = (0, 1) if info is None else (info.id, info.num_workers)
        ...         return iter(range(start, 10, step))
    """

    def __iter__(self) -> Iterator[Any]:
        raise NotImplementedError(f"{type(self).__name__} must define __iter__")

    def __getitem__(self, index):
        raise TypeError(f"{type(self).__name__} is an IterableDataset: it is read with iter(), not indexed")

    def __add__(self, other: "IterableDataset") -> "ChainDataset":
        return ChainDataset([self, other])


class ChainDataset(IterableDataset):
    """Iterable datasets read one after the other."""

    def __init__(self, datasets) -> None:
        self.datasets = list(datasets)

    def __iter__(self) -> Iterator[Any]:
        for dataset in self.datasets:
            yield from dataset

    def __len__(self) -> int:
        return sum(len(d) for d in self.datasets)


class StackDataset(Dataset):
    """Map-style datasets of equal length read together: sample ``i`` is the tuple (or, with keyword
    arguments, the dict) of every dataset's sample ``i``."""

    def __init__(self, *args: Dataset, **kwargs: Dataset) -> None:
        if args and kwargs:
            raise ValueError("StackDataset: give the datasets as positional or as keyword arguments, not both")
        self.datasets = args or kwargs
        sizes = {len(d) for d in (args or kwargs.values())}
        if len(sizes) > 1:
            raise ValueError(f"StackDataset: the datasets have different lengths {sorted(sizes)}")
        self._length = sizes.pop() if sizes else 0

    def __getitem__(self, index: int) -> Any:
        if isinstance(self.datasets, dict):
            return {name: d[index] for name, d in self.datasets.items()}
        return tuple(d[index] for d in self.datasets)

    def __len__(self) -> int:
        return self._length


class WorkerInfo(NamedTuple):
    """What a DataLoader worker knows about itself (``get_worker_info()`` inside a worker)."""

    id: int
    num_workers: int
    seed: int
    dataset: Any


_WORKER_INFO: list = [None]


def get_worker_info() -> Optional[WorkerInfo]:
    """In a DataLoader worker process, its :class:`WorkerInfo` (``id``, ``num_workers``, ``seed``,
    ``dataset``: this worker's copy); in the main process, ``None``."""
    return _WORKER_INFO[0]


def _set_worker_info(info: Optional[WorkerInfo]) -> None:
    _WORKER_INFO[0] = info
