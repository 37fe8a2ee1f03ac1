"""``torch.multiprocessing``: Python's multiprocessing, plus PyTorch's ``spawn`` / ``start_processes``
and sharing-strategy functions.

Tensors are NumPy arrays underneath and go between processes by pickling, so there is no shared-memory
strategy to choose; ``set_sharing_strategy`` records the name. ``spawn`` starts ``nprocs`` processes
running ``fn(rank, *args)``: with ``fork`` where the platform has it (the children inherit this
process, the facade's ``import torch`` included, and a program run as a script needs no importable
``__main__``), else with ``spawn``; ``set_start_method("spawn")`` and ``get_context("spawn")`` do the
same. Forked, ``Tensor.share_memory_()`` / ``Module.share_memory()`` make parameters that every
process updates in place (Hogwild! training).
"""
from __future__ import annotations

import multiprocessing as _mp
import sys
import traceback
from multiprocessing import *  # noqa: F401,F403  (torch.multiprocessing re-exports the standard module)
from typing import Any, Callable, Optional

_STRATEGY = ["file_system" if sys.platform == "darwin" else "file_descriptor"]


def get_all_sharing_strategies() -> set:
    return {"file_descriptor", "file_system"}


def get_sharing_strategy() -> str:
    return _STRATEGY[0]


def set_sharing_strategy(new_strategy: str) -> None:
    if new_strategy not in get_all_sharing_strategies():
        raise ValueError(f"unknown sharing strategy {new_strategy!r}; expected one of "
                         f"{sorted(get_all_sharing_strategies())}")
    _STRATEGY[0] = new_strategy


class ProcessRaisedException(Exception):
    """A spawned process raised: the message carries its traceback."""

    def __init__(self, msg: str, error_index: int, error_pid: int) -> None:
        super().__init__(msg)
        self.error_index, self.pid = error_index, error_pid


class ProcessExitedException(Exception):
    """A spawned process exited with a non-zero code (or a signal)."""

    def __init__(self, msg: str, error_index: int, error_pid: int, exit_code: int) -> None:
        super().__init__(msg)
        self.error_index, self.pid, self.exit_code = error_index, error_pid, exit_code


def _run(fn: Callable, rank: int, args: tuple, errors) -> None:
    try:
        fn(rank, *args)
    except KeyboardInterrupt:
        pass
    except BaseException:
        errors.put((rank, traceback.format_exc()))
        sys.exit(1)


class ProcessContext:
    """The processes of one :func:`start_processes` call; :meth:`join` waits for them."""

    def __init__(self, processes: list, errors) -> None:
        self.processes, self.error_queue = processes, errors

    def pids(self) -> list:
        return [p.pid for p in self.processes]

    def join(self, timeout: Optional[float] = None) -> bool:
        """Wait for every process; raise if one failed (terminating the others). True when all ended."""
        for p in self.processes:
            p.join(timeout)
        failed = [(i, p) for i, p in enumerate(self.processes) if p.exitcode not in (None, 0)]
        if failed:
            for p in self.processes:
                if p.is_alive():
                    p.terminate()
            if not self.error_queue.empty():
                rank, text = self.error_queue.get()
                raise ProcessRaisedException(f"\n\n-- Process {rank} terminated with the following error:\n{text}",
                                             rank, self.processes[rank].pid)
            index, p = failed[0]
            raise ProcessExitedException(f"process {index} terminated with exit code {p.exitcode}", index, p.pid,
                                         p.exitcode)
        return all(p.exitcode is not None for p in self.processes)


def _start_method(method: Optional[str]) -> Optional[str]:
    return "fork" if method in ("spawn", "forkserver") and "fork" in _mp.get_all_start_methods() else method


def set_start_method(method: str, force: bool = False) -> None:
    """Python's ``set_start_method``; ``spawn`` and ``forkserver`` run as ``fork`` where the platform has
    it (see the module's docstring)."""
    _mp.set_start_method(_start_method(method), force=force)


def get_context(method: Optional[str] = None):
    return _mp.get_context(_start_method(method))


def start_processes(fn: Callable, args: tuple = (), nprocs: int = 1, join: bool = True, daemon: bool = False,
                    start_method: str = "spawn") -> Any:
    """Run ``fn(i, *args)`` for ``i`` in ``range(nprocs)``, each in a process of its own."""
    context = get_context(start_method)
    errors = context.SimpleQueue()
    processes = [context.Process(target=_run, args=(fn, i, tuple(args), errors), daemon=daemon)
                 for i in range(int(nprocs))]
    for p in processes:
        p.start()
    result = ProcessContext(processes, errors)
    if not join:
        return result
    while not result.join():
        pass
    return None


def spawn(fn: Callable, args: tuple = (), nprocs: int = 1, join: bool = True, daemon: bool = False,
          start_method: str = "spawn") -> Any:
    """``torch.multiprocessing.spawn``: see :func:`start_processes`."""
    return start_processes(fn, args, nprocs, join, daemon, start_method)
