"""DataLoader worker processes (``num_workers > 0``), with PyTorch's semantics.

Map-style datasets: the main process draws the index batches (so shuffling and samplers behave as
with no workers), hands them to the workers round-robin with ``prefetch_factor`` batches in flight
per worker, and yields the collated batches in order. Iterable datasets: every worker iterates its own
copy (shard it with ``get_worker_info()``), batches its samples, and the main process takes one
batch from each worker in turn, as PyTorch does. A worker's exception is raised in the main process
with the worker's traceback; a worker that dies or a batch slower than ``timeout`` seconds raises
``RuntimeError``. Workers are seeded ``base_seed + worker_id`` (graphgrad's generator and Python's
``random``), so random transforms differ between workers and are reproducible.
"""
from __future__ import annotations

import multiprocessing
import queue
import random
import traceback
from typing import Any, Iterator

from graphgrad.core.random import manual_seed
from graphgrad.data.iterable import WorkerInfo, _set_worker_info

_POLL_S = 1.0  # how often a waiting main process checks that its workers are alive


class _WorkerError:
    """An exception raised in a worker, carried to the main process as text."""

    def __init__(self, worker_id: int, where: str) -> None:
        self.worker_id = worker_id
        self.text = traceback.format_exc()
        self.where = where

    def reraise(self):
        raise RuntimeError(f"DataLoader worker {self.worker_id} raised an exception {self.where}:\n{self.text}")


def _start_worker(worker_id: int, num_workers: int, dataset: Any, seed: int, init_fn) -> None:
    manual_seed(seed)
    random.seed(seed)
    _set_worker_info(WorkerInfo(worker_id, num_workers, seed, dataset))
    if init_fn is not None:
        init_fn(worker_id)


def _map_worker(worker_id, num_workers, dataset, seed, init_fn, fetch, tasks, results) -> None:
    """Fetch and collate the index batches sent on ``tasks`` until ``None``."""
    try:
        _start_worker(worker_id, num_workers, dataset, seed, init_fn)
    except Exception:
        results.put((None, _WorkerError(worker_id, "in worker_init_fn")))
        return
    while True:
        task = tasks.get()
        if task is None:
            return
        number, indices = task
        try:
            results.put((number, fetch(dataset, indices)))
        except Exception:
            results.put((number, _WorkerError(worker_id, f"while loading batch {number}")))


def _iterable_worker(worker_id, num_workers, dataset, seed, init_fn, make_batches, results) -> None:
    """Iterate this worker's copy of the dataset, putting batches (then ``StopIteration``) on ``results``."""
    try:
        _start_worker(worker_id, num_workers, dataset, seed, init_fn)
        for batch in make_batches(dataset):
            results.put(batch)
    except Exception:
        results.put(_WorkerError(worker_id, "while iterating the dataset"))
    results.put(StopIteration)


def _context(name):
    if name is not None and not isinstance(name, str):
        return name
    methods = multiprocessing.get_all_start_methods()
    return multiprocessing.get_context(name or ("fork" if "fork" in methods else "spawn"))


def _get(results, workers, timeout: float):
    """The next item of ``results``; a RuntimeError if a worker died or ``timeout`` passed."""
    waited = 0.0
    while True:
        try:
            return results.get(timeout=_POLL_S if not timeout else min(_POLL_S, timeout - waited))
        except queue.Empty:
            waited += _POLL_S
            dead = [w for w in workers if not w.is_alive() and w.exitcode not in (0, None)]
            if dead:
                raise RuntimeError(f"DataLoader worker (pid {dead[0].pid}) exited unexpectedly with exit code "
                                   f"{dead[0].exitcode}") from None
            if timeout and waited >= timeout:
                raise RuntimeError(f"DataLoader timed out after {timeout} seconds waiting for a batch") from None


def _stop(workers, task_queues=()) -> None:
    for q in task_queues:
        try:
            q.put(None)
        except (OSError, ValueError):
            pass
    for w in workers:
        w.join(timeout=5)
        if w.is_alive():
            w.terminate()
            w.join(timeout=5)


def map_style(loader, batches: Iterator, fetch) -> Iterator[Any]:
    """Yield ``fetch(dataset, indices)`` for each index batch of ``batches``, computed by the workers,
    in order."""
    ctx = _context(loader.multiprocessing_context)
    n = loader.num_workers
    base_seed = loader._base_seed()
    results = ctx.Queue()
    task_queues = [ctx.Queue() for _ in range(n)]
    workers = [ctx.Process(target=_map_worker, args=(i, n, loader.dataset, base_seed + i, loader.worker_init_fn,
                                                     fetch, task_queues[i], results), daemon=True)
               for i in range(n)]
    for w in workers:
        w.start()
    try:
        in_flight, sent, done, ready = 0, 0, 0, {}
        batches = iter(batches)
        exhausted = False
        limit = n * (loader.prefetch_factor or 2)
        while True:
            while not exhausted and in_flight < limit:
                indices = next(batches, None)
                if indices is None:
                    exhausted = True
                    break
                task_queues[sent % n].put((sent, indices))
                sent, in_flight = sent + 1, in_flight + 1
            if done == sent and exhausted:
                return
            while done not in ready:
                number, value = _get(results, workers, loader.timeout)
                if isinstance(value, _WorkerError):
                    value.reraise()
                ready[number] = value
            value = ready.pop(done)
            done, in_flight = done + 1, in_flight - 1
            yield value
    finally:
        _stop(workers, task_queues)


def iterable_style(loader, make_batches) -> Iterator[Any]:
    """Yield the batches of every worker's copy of an iterable dataset, one worker after the other."""
    ctx = _context(loader.multiprocessing_context)
    n = loader.num_workers
    base_seed = loader._base_seed()
    queues = [ctx.Queue(maxsize=loader.prefetch_factor or 2) for _ in range(n)]
    workers = [ctx.Process(target=_iterable_worker, args=(i, n, loader.dataset, base_seed + i, loader.worker_init_fn,
                                                          make_batches, queues[i]), daemon=True)
               for i in range(n)]
    for w in workers:
        w.start()
    try:
        active = list(range(n))
        while active:
            for i in list(active):
                value = _get(queues[i], workers, loader.timeout)
                if value is StopIteration:
                    active.remove(i)
                    continue
                if isinstance(value, _WorkerError):
                    value.reraise()
                yield value
    finally:
        _stop(workers)
