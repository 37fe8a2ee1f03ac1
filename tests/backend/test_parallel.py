"""parallel_for: every item done exactly once, in aligned parts, serially when asked or nested, and
exceptions raised in a worker reach the caller."""
from __future__ import annotations

import threading

import numpy as np
import pytest

from graphgrad.backend import parallel
from graphgrad.backend.parallel import num_threads, parallel_for, set_num_threads


@pytest.fixture
def threads():
    before = num_threads()
    yield set_num_threads
    set_num_threads(before)


@pytest.mark.parametrize("n, align, min_part", [(10, 1, 1), (1000, 64, 1), (7, 1, 4), (0, 1, 1), (1, 1, 1)])
def test_every_item_once_in_aligned_parts(threads, n, align, min_part):
    threads(3)
    seen = np.zeros(n, int)
    parts = []

    def work(start, stop):
        parts.append((start, stop))
        seen[start:stop] += 1

    parallel_for(np, work, n, min_part=min_part, align=align)
    assert (seen == 1).all()
    assert all(start % align == 0 for start, _ in parts)
    assert len(parts) <= 3 and all(stop - start >= min(min_part, n) for start, stop in parts)


def test_parts_run_on_other_threads_and_nested_calls_run_serially(threads):
    threads(2)
    names, inner = set(), []

    def work(start, stop):
        names.add(threading.current_thread().name)
        parallel_for(np, lambda a, b: inner.append((a, b)), 10)  # nested: one part, this thread

    parallel_for(np, work, 2)
    assert len(names) == 2 and sorted(inner) == [(0, 10), (0, 10)]


def test_one_thread_or_a_foreign_namespace_runs_serially(threads):
    threads(1)
    calls = []
    parallel_for(np, lambda a, b: calls.append((a, b)), 100)
    threads(4)
    parallel_for(object(), lambda a, b: calls.append((a, b)), 100)  # not NumPy: never split
    assert calls == [(0, 100), (0, 100)]


def test_worker_exceptions_reach_the_caller(threads):
    threads(2)

    def work(start, stop):
        if start == 0:
            raise RuntimeError("boom")

    with pytest.raises(RuntimeError, match="boom"):
        parallel_for(np, work, 10)
    with pytest.raises(ValueError):
        set_num_threads(0)


def test_thread_count_comes_from_the_environment(monkeypatch):
    monkeypatch.setenv("GRAPHGRAD_NUM_THREADS", "3")
    assert parallel._threads_from_environment() == 3
    monkeypatch.delenv("GRAPHGRAD_NUM_THREADS")
    monkeypatch.setenv("OMP_NUM_THREADS", "2")  # BLAS's setting: graphgrad's own splitting stays off
    assert parallel._threads_from_environment() == 1


def test_a_forked_child_gets_a_working_pool(threads):
    import os

    if not hasattr(os, "fork"):
        pytest.skip("no fork on this platform")
    threads(2)
    parallel_for(np, lambda a, b: None, 10)  # the parent's pool exists
    pid = os.fork()
    if pid == 0:  # the child: would hang on the parent's (threadless) pool
        seen = np.zeros(10, int)
        parallel_for(np, lambda a, b: seen.__setitem__(slice(a, b), 1), 10)
        os._exit(0 if seen.all() else 1)
    _, status = os.waitpid(pid, 0)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
