"""Samplers that split a dataset among the ranks of a data-parallel job.

:class:`DistributedSampler` gives each rank a disjoint part of the dataset, together the whole of
it, in an order every rank agrees on without talking to the others: the permutation comes from
``seed + epoch`` alone, so call :meth:`~DistributedSampler.set_epoch` at the start of each epoch
(``Model.fit`` does) to get a new order every epoch.

:class:`ShardSampler` is its evaluation twin: the same strided split of the indices in order, with
no padding, so no sample is counted twice in a mean.

Examples:
    >>> sampler = DistributedSampler(dataset)          # num_replicas and rank from the world
    >>> loader = gg.data.DataLoader(dataset, batch_size=32, sampler=sampler)
    >>> for epoch in range(epochs):
    ...     sampler.set_epoch(epoch)
    ...     for x, y in loader: ...
"""
from __future__ import annotations

from typing import Any, Iterator, Optional

from graphgrad.backend import np
from graphgrad.data.loader import Sampler
from graphgrad.distributed.world import WORLD

__all__ = ["DistributedSampler", "ShardSampler"]


def _place(num_replicas: Optional[int], rank: Optional[int], who: str) -> tuple:
    """``(num_replicas, rank)``, defaulting to the world's (a world of one when it was never initialised)."""
    if num_replicas is None:
        num_replicas = WORLD.size if WORLD.initialized else 1
    if rank is None:
        rank = WORLD.rank if WORLD.initialized else 0
    if not isinstance(num_replicas, (int, np.integer)) or num_replicas < 1:
        raise ValueError(f"{who}: num_replicas must be a positive int, got {num_replicas!r}")
    if not isinstance(rank, (int, np.integer)) or not 0 <= rank < num_replicas:
        raise ValueError(f"{who}: rank must be an int in [0, {num_replicas - 1}] for num_replicas={num_replicas}, "
                         f"got {rank!r}")
    return int(num_replicas), int(rank)


class DistributedSampler(Sampler):
    """This rank's share of a dataset's indices for one epoch (PyTorch's semantics).

    Every rank draws the same permutation of ``range(len(dataset))`` from ``seed + epoch`` (or takes
    the indices in order when ``shuffle=False``); rank ``r`` then takes positions ``r, r + R,
    r + 2R, ...`` of it, ``R = num_replicas``. So that every rank gets the same number of samples
    (and runs the same number of steps), the list is first padded by repeating its first indices
    (``drop_last=False``: some samples are seen twice per epoch) or cut to a multiple of ``R``
    (``drop_last=True``: up to ``R - 1`` samples are skipped per epoch).

    Args:
        dataset: anything with ``len()``.
        num_replicas: the number of ranks sharing the dataset (default: the world size, 1 without
            :func:`graphgrad.distributed.init`).
        rank: this process's share, in ``[0, num_replicas)`` (default: the world's rank).
        shuffle: a new permutation every epoch (``set_epoch``), the same on every rank.
        seed: the base seed of the permutations; must be equal on every rank.
        drop_last: cut the tail instead of padding.

    ``len(sampler)`` is the number of indices per rank and epoch: ``ceil(N / R)``, or ``N // R``
    with ``drop_last``. The sampler defines ``index_array()``, so ``gg.data.DataLoader`` slices its
    batches out of one array.

    Examples:
        >>> s = DistributedSampler(range(10), num_replicas=3, rank=1, shuffle=False)
        >>> list(s)          # positions 1, 4, 7, 10 of [0..9, 0, 1]
        [1, 4, 7, 0]
    """

    def __init__(self, dataset: Any, num_replicas: Optional[int] = None, rank: Optional[int] = None,
                 shuffle: bool = True, seed: int = 0, drop_last: bool = False) -> None:
        self.dataset = dataset
        self.num_replicas, self.rank = _place(num_replicas, rank, "DistributedSampler")
        self.shuffle, self.seed, self.drop_last = bool(shuffle), int(seed), bool(drop_last)
        self.epoch = 0

    def set_epoch(self, epoch: int) -> None:
        """Use the permutation of epoch ``epoch`` from now on (call it on every rank, each epoch)."""
        self.epoch = int(epoch)

    @property
    def num_samples(self) -> int:
        """Indices per rank and epoch."""
        n, replicas = len(self.dataset), self.num_replicas
        return n // replicas if self.drop_last else -(-n // replicas)

    @property
    def total_size(self) -> int:
        """Indices per epoch over all ranks (the dataset's length, padded or cut to a multiple of R)."""
        return self.num_samples * self.num_replicas

    def index_array(self):
        """This rank's indices for the current epoch, as one int64 array of length ``len(self)``."""
        n = len(self.dataset)
        if self.shuffle:
            order = np.random.default_rng(self.seed + self.epoch).permutation(n).astype(np.int64)
        else:
            order = np.arange(n, dtype=np.int64)
        total = self.total_size
        if total > n:  # pad by repeating the order from its start, as many times as it takes
            order = np.resize(order, total)
        return order[self.rank:total:self.num_replicas]

    def __iter__(self) -> Iterator[int]:
        return iter(self.index_array().tolist())

    def __len__(self) -> int:
        return self.num_samples

    def __repr__(self) -> str:
        return (f"DistributedSampler(num_replicas={self.num_replicas}, rank={self.rank}, shuffle={self.shuffle}, "
                f"seed={self.seed}, drop_last={self.drop_last}, epoch={self.epoch})")


class ShardSampler(Sampler):
    """This rank's indices ``r, r + R, r + 2R, ...`` of ``range(len(dataset))``, in order, unpadded.

    For evaluation and prediction: ranks may get one sample more than others, but no sample is seen
    twice, so sums and counts over the ranks give exactly the whole dataset's mean.

    Examples:
        >>> list(ShardSampler(range(5), num_replicas=2, rank=1))
        [1, 3]
    """

    def __init__(self, dataset: Any, num_replicas: Optional[int] = None, rank: Optional[int] = None) -> None:
        self.dataset = dataset
        self.num_replicas, self.rank = _place(num_replicas, rank, "ShardSampler")

    def index_array(self):
        return np.arange(self.rank, len(self.dataset), self.num_replicas, dtype=np.int64)

    def __iter__(self) -> Iterator[int]:
        return iter(self.index_array().tolist())

    def __len__(self) -> int:
        return len(range(self.rank, len(self.dataset), self.num_replicas))
