"""Splitting one array computation over CPU threads.

NumPy releases the GIL inside its kernels, so independent slices of a large computation (the halves of
a batch of attention heads, blocks of an erf) run at the same time on two cores; NumPy itself runs
elementwise kernels on one thread. ``parallel_for`` is what ops use: it splits a range into one part
per thread and runs them on a small pool, the calling thread taking the last part.

The thread count is ``GRAPHGRAD_NUM_THREADS``, else 1 (no splitting), and can be changed with
:func:`set_num_threads`. Off by default because it did not pay on the two-core machine the benchmarks
run on: the BLAS threads already keep both cores busy (and spin between calls), and a W5 training
step was 3-4% slower with two threads than with one (interleaved, two paired runs). Try it on a
machine with more cores. CuPy arrays are never split (the device is parallel already).
"""
from __future__ import annotations

import os
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Callable, Optional

import numpy as np

_STATE = threading.local()  # .inside: this thread is running a part (nested calls run serially)
_POOL: list = []            # [executor], made at the first parallel call
_THREADS: list = []         # [count], read from the environment at the first call


def _threads_from_environment() -> int:
    value = os.environ.get("GRAPHGRAD_NUM_THREADS", "").strip()
    return int(value) if value.isdigit() and int(value) > 0 else 1


def num_threads() -> int:
    """How many threads :func:`parallel_for` splits work over."""
    if not _THREADS:
        _THREADS.append(_threads_from_environment())
    return _THREADS[0]


def set_num_threads(n: int) -> None:
    """Use ``n`` threads (1: no splitting) for the computations graphgrad splits itself."""
    if int(n) < 1:
        raise ValueError(f"set_num_threads: expected a positive count, got {n}")
    _THREADS[:] = [int(n)]
    if _POOL:
        _POOL.pop().shutdown(wait=False)


if hasattr(os, "register_at_fork"):  # a forked child (a data loader worker) has no pool threads: make new ones
    os.register_at_fork(after_in_child=_POOL.clear)


def _pool(workers: int) -> ThreadPoolExecutor:
    if not _POOL or _POOL[0]._max_workers < workers:
        if _POOL:
            _POOL.pop().shutdown(wait=False)
        _POOL.append(ThreadPoolExecutor(workers, thread_name_prefix="graphgrad"))
    return _POOL[0]


def _run_part(fn: Callable, start: int, stop: int) -> None:
    _STATE.inside = True
    try:
        fn(start, stop)
    finally:
        _STATE.inside = False


def parallel_for(xp, fn: Callable[[int, int], None], n: int, min_part: int = 1, align: int = 1,
                 parts: Optional[int] = None) -> None:
    """Call ``fn(start, stop)`` over consecutive parts of ``range(n)``, in parallel threads.

    Args:
        xp: the array namespace of the data: only NumPy work is split.
        fn: does the work of items ``start..stop-1`` (writing disjoint outputs).
        n: the number of items.
        min_part: never make a part smaller than this (small work is not worth a thread).
        align: part boundaries are multiples of ``align`` (e.g. a block size).
        parts: at most this many parts (default: the thread count).
    """
    count = min(parts or num_threads(), num_threads(), n // max(min_part, 1))
    if count < 2 or xp is not np or getattr(_STATE, "inside", False):
        fn(0, n)
        return
    step = -(-n // count)
    step = -(-step // align) * align
    bounds = [(s, min(s + step, n)) for s in range(0, n, step)]
    futures = [_pool(len(bounds) - 1).submit(_run_part, fn, s, e) for s, e in bounds[:-1]]
    try:
        _run_part(fn, *bounds[-1])
    finally:
        for future in futures:
            future.result()


__all__ = ["parallel_for", "num_threads", "set_num_threads"]


def blas_threads(n: int):
    """A context in which BLAS uses at most ``n`` threads (through threadpoolctl, which
    scikit-learn installs; without it, a no-op).

    Small models gain nothing from a second BLAS thread, and on a shared machine its spinning
    threads make them several times slower (the demo: 7 s with one thread against 22 s with two,
    on two busy cores). The demo and the small examples run inside ``blas_threads(1)``.

    Examples:
        >>> with gg.backend.blas_threads(1):
        ...     model.fit(x, y, epochs=10)
    """
    from graphgrad.backend import blas

    blas.available()  # load MKL (when installed) first: a limit set before it loads would miss it, and
    # leaving the block would then give NumPy's OpenBLAS back the threads blas.py took from it
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        import contextlib

        return contextlib.nullcontext()
    return threadpool_limits(limits=int(n), user_api="blas")
