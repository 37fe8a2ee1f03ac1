"""What ``Model.fit``, ``evaluate``, ``predict`` and the checkpoint functions need to run data-parallel.

Under a launcher (``python -m graphgrad.distributed.run -n 4 train.py``) every rank runs the same
script; these helpers let the Keras-style API behave as one process would, only faster:

* :func:`data_parallel_world`: the world when there are several ranks (it joins MPI if the script
  did not call ``init()``), ``None`` in a plain one-process run;
* :func:`is_writer`: whether this rank writes files and prints (rank 0, or a single process);
* :func:`shared_seed`: one shuffling seed for every rank;
* :func:`shard_loader`: a ``DataLoader`` rebuilt to load this rank's share;
* :func:`reduce_results`: the loss and metrics over every rank's samples, from the metrics' running
  sums, so the logs equal what one process that saw all the data would report;
* :func:`written_by_rank_zero`: rank 0 writes a file, the others wait until it exists;
* :func:`gather_rows`: every rank's share of a strided split put back in the dataset's order.
"""
from __future__ import annotations

import contextlib
from typing import Any, Callable, Iterator, Optional, Sequence

from graphgrad import backend
from graphgrad.backend import np
from graphgrad.core.autograd import note_inplace_write
from graphgrad.data.loader import BatchSampler, DataLoader, RandomSampler, SequentialSampler
from graphgrad.distributed import comm
from graphgrad.distributed.sampler import DistributedSampler, ShardSampler
from graphgrad.distributed.world import WORLD, DistributedError, World, init, launched_by_mpi

__all__ = ["data_parallel_world", "is_writer", "shared_seed", "shard_loader", "reduce_results", "written_by_rank_zero",
           "gather_rows", "average_gradients", "sync_buffers"]

#: Names of a metric's attributes (or of its parts' attributes) that are running sums over the
#: samples seen: adding them over the ranks gives the metric of all the samples (Mean, Accuracy,
#: MSE, the confusion counts of Precision/Recall/F1...).
_ADDITIVE = ("total", "count", "correct", "tp", "fp", "fn", "seen")


def data_parallel_world() -> Optional[World]:
    """The world when this process is one of several ranks, else ``None`` (a single process).

    Under an MPI launcher this joins the world (``init()``) if the script has not done so.
    """
    if not WORLD.initialized:
        if not launched_by_mpi():
            return None
        init()
    return WORLD if WORLD.size > 1 else None


def is_writer() -> bool:
    """Whether this process writes files and prints progress: rank 0 of several, or a single process."""
    world = data_parallel_world()
    return world is None or world.rank == 0


def shared_seed(seed: Optional[int], world: World) -> int:
    """``seed``, or when it is ``None`` a random seed drawn by rank 0; the same on every rank."""
    mine = np.array([-1 if seed is None else int(seed)], dtype=np.int64)
    if seed is None and world.rank == 0:
        mine[0] = int(np.random.default_rng().integers(0, 2 ** 31 - 1))
    chosen = comm.broadcast(mine, 0, name="shuffling seed")
    if seed is not None and int(chosen[0]) != int(seed):
        raise DistributedError(f"rank {world.rank} was given seed={seed} but rank 0 seed={int(chosen[0])}: pass the "
                               "same seed on every rank (or None to let rank 0 draw one)")
    return int(chosen[0])


def shard_loader(loader: Any, world: World, training: bool, seed: int = 0, in_order: bool = False) -> Any:
    """A ``DataLoader`` like ``loader`` that loads this rank's share of its dataset.

    A loader over a ``SequentialSampler`` or a plain ``RandomSampler`` (``shuffle=True``) is rebuilt
    on a :class:`DistributedSampler` (``training``; shuffled from ``seed`` when the loader shuffled)
    or on a :class:`ShardSampler` (evaluation: no sample twice). Anything else (a loader that is
    already sharded, a custom sampler or batch sampler, any other iterable of batches) is returned
    unchanged: it is taken to give this rank's share already. ``in_order``: rebuild only a loader
    that keeps the dataset's order (for predictions gathered back in order).
    """
    if not isinstance(loader, DataLoader) or loader.batch_size is None:
        return loader
    sampler = loader.sampler
    shuffled = type(sampler) is RandomSampler and not sampler.replacement and sampler._num_samples is None
    if not (type(sampler) is SequentialSampler or shuffled and not in_order) or in_order and loader.drop_last:
        return loader
    if type(loader.batch_sampler) is not BatchSampler or loader.batch_sampler.sampler is not sampler:
        return loader
    if training:
        share = DistributedSampler(loader.dataset, world.size, world.rank, shuffle=shuffled, seed=seed)
    else:
        share = ShardSampler(loader.dataset, world.size, world.rank)
    return DataLoader(loader.dataset, batch_size=loader.batch_size, sampler=share, drop_last=loader.drop_last,
                      collate_fn=loader.collate_fn)


# ---- logs over all the ranks -------------------------------------------------------------------------------------
def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, (bool, np.bool_))


def _sum_slots(obj: Any, depth: int = 0) -> list:
    """``(owner, attribute)`` of every running sum in ``obj`` and in the small objects it holds."""
    slots = []
    for name, value in vars(obj).items():
        if name in _ADDITIVE and (_is_number(value) or backend.is_array(value) and value.ndim == 1):
            slots.append((obj, name))
        elif depth < 2 and hasattr(value, "__dict__") and not callable(value):
            slots.extend(_sum_slots(value, depth + 1))
    return slots


@contextlib.contextmanager
def _values_set(slots: list, values: list) -> Iterator[None]:
    """Give each slot its value for the duration of the block, then put the old ones back."""
    old = [getattr(owner, name) for owner, name in slots]
    try:
        for (owner, name), value in zip(slots, values):
            setattr(owner, name, value)
        yield
    finally:
        for (owner, name), value in zip(slots, old):
            setattr(owner, name, value)


def _like(total, old):
    """A reduced value (float64) back in the type of the local one."""
    if backend.is_array(old):
        return total > 0 if old.dtype == np.bool_ else total.astype(old.dtype)
    return int(round(float(total))) if isinstance(old, (int, np.integer)) else float(total)


def reduce_results(metrics: Sequence, samples: int, world: World, stop: bool = False,
                   name: str = "logs") -> tuple:
    """The ``result()`` of each metric over every rank's samples, and whether any rank asked to stop.

    Each metric keeps its running sums for this rank; they are added over the ranks (one all-reduce,
    two when a metric holds per-class counts, whose lengths may differ) and the metric's result is
    computed from the totals, so an accuracy is ``sum(correct) / sum(total)`` — exactly what a single
    process would report. A metric with no recognised running sums (a custom one) is averaged by
    its result, weighted by ``samples``, the number of samples this rank saw.

    Args:
        metrics: ``gg.train.metrics.Metric`` objects (``Mean``, ``Accuracy``...), unchanged.
        samples: samples this rank contributed.
        world: the world (several ranks).
        stop: this rank's wish to stop training.
        name: names the collective in error messages.

    Returns:
        ``(results, stop)``: a list of floats (one per metric) and ``True`` if any rank passed ``stop``.
    """
    slots = [_sum_slots(m) for m in metrics]
    values = [[getattr(owner, attr) for owner, attr in s] for s in slots]
    arrays = [v for vs in values for v in vs if backend.is_array(v)]
    if arrays:  # per-class counts grow with the classes seen: give every rank the longest
        lengths = comm.all_reduce(np.array([a.shape[0] for a in arrays], np.int64), "max", name=f"{name} (lengths)")
        longest = iter(lengths.tolist())
        values = [[_pad(v, next(longest)) if backend.is_array(v) else v for v in vs] for vs in values]
    parts = [np.array([1.0 if stop else 0.0])]
    for metric, vs in zip(metrics, values):
        if vs:
            parts += [np.asarray(v, np.float64).reshape(-1) for v in vs]
        else:
            parts.append(np.array([metric.result() * samples, samples], np.float64))
    totals = comm.all_reduce(np.concatenate(parts), "sum", name=name)
    stop_any, offset = bool(totals[0] > 0), 1
    results = []
    for metric, s, vs in zip(metrics, slots, values):
        if not vs:
            weighted, count = totals[offset], totals[offset + 1]
            offset += 2
            results.append(float(weighted / count) if count else 0.0)
            continue
        reduced = []
        for v in vs:
            size = int(np.asarray(v).size)
            reduced.append(_like(totals[offset:offset + size] if backend.is_array(v) else totals[offset], v))
            offset += size
        with _values_set(s, reduced):
            results.append(float(metric.result()))
    return results, stop_any


def _pad(array, length: int):
    if array.shape[0] >= length:
        return array
    return np.concatenate([array, np.zeros(length - array.shape[0], array.dtype)])


# ---- files and outputs -------------------------------------------------------------------------------------------
def written_by_rank_zero(write: Callable[[], Any], what: str) -> Any:
    """Run ``write()`` on rank 0 only; the other ranks wait until it has finished, so they can read
    what it wrote. When rank 0 fails, every rank raises (rank 0 its own error).

    In a single process (no launcher) this is just ``write()``.
    """
    world = WORLD if WORLD.initialized and WORLD.size > 1 else None
    if world is None:
        return write()
    result, error = None, None
    if world.rank == 0:
        try:
            result = write()
        except BaseException as exc:  # tell the others before raising, so they do not wait in vain
            error = exc
    status = comm.broadcast(np.array([0 if error is None else 1], np.int64), 0, name=f"{what} (written by rank 0)")
    if error is not None:
        raise error
    if int(status[0]):
        raise DistributedError(f"rank 0 failed to write {what}; see its error in rank 0's output")
    return result


def gather_rows(local, total: int, world: World):
    """The rows of a strided split (rank ``r`` holds rows ``r, r + R, ...`` of ``total``) gathered
    on every rank, in the original order. ``local``: a NumPy array ``(n_r, ...)``; returns ``(total, ...)``."""
    gathered = comm.all_gather(np.ascontiguousarray(local), name="predictions")
    out = np.empty((total,) + tuple(gathered.shape[1:]), gathered.dtype)
    start = 0
    for r in range(world.size):
        rows = len(range(r, total, world.size))
        out[r::world.size] = gathered[start:start + rows]
        start += rows
    return out


def average_gradients(model):
    """A ``DistributedDataParallel`` on ``model``'s module (on ``model`` itself when it has none):
    from now until its ``remove_hooks()``, the gradients of every backward pass are averaged over
    the ranks. It gives every rank rank 0's parameters and buffers at once. A module the user already
    wrapped is left alone (its own hooks average the gradients and stay after ``fit``)."""
    from graphgrad.distributed.parallel import DistributedDataParallel

    inner = getattr(model, "module", None)
    target = inner if inner is not None else model
    if isinstance(target, DistributedDataParallel):
        return _AlreadyAveraged()
    return DistributedDataParallel(target)


class _AlreadyAveraged:
    """What :func:`average_gradients` returns for a model that is already data-parallel."""

    def remove_hooks(self) -> None:
        pass


def sync_buffers(model) -> None:
    """Give every rank rank 0's buffers (BatchNorm running statistics, which each rank updates from
    its own share in training), so evaluation and checkpoints agree on every rank."""
    for name, buffer in model.named_buffers():
        if buffer is not None and buffer._data is not None:
            buffer._data[...] = comm.broadcast(buffer._data, 0, name=f"buffer {name}")
            note_inplace_write(buffer._data, "the broadcast of rank 0's buffers")
