"""``torch.profiler`` on graphgrad's profiler (``gg.profile``): ``with profile(...) as prof:`` records
every op (eager, Session runs, ``gg.function`` calls); ``prof.key_averages().table(sort_by=...,
row_limit=...)`` prints the per-op table; ``prof.export_chrome_trace(path)`` writes the Chrome trace;
``record_function(name)`` marks a block. ``activities``, ``schedule`` and the memory/stack options are
accepted; there is one CPU timeline (and no CUDA activity)."""
from __future__ import annotations

import os
from typing import Any, Callable, Optional

import graphgrad as _gg

_gg_profile = _gg.profile
record_function = _gg.record_function

#: PyTorch's sort keys -> graphgrad's table columns
_SORT = {"cpu_time_total": "total", "cuda_time_total": "total", "cpu_time": "total", "self_cpu_time_total": "self",
         "self_cuda_time_total": "self", "count": "calls", "cpu_memory_usage": "bytes", "self_cpu_memory_usage": "bytes"}


class ProfilerActivity:
    CPU = "cpu"
    CUDA = "cuda"


class ProfilerAction:
    NONE, WARMUP, RECORD, RECORD_AND_SAVE = range(4)


def schedule(*, wait: int = 0, warmup: int = 0, active: int = 1, repeat: int = 0, skip_first: int = 0) -> Callable:
    """Accepted for PyTorch programs: graphgrad records every step of the ``with`` block."""
    return lambda step: ProfilerAction.RECORD


def tensorboard_trace_handler(dir_name: str, worker_name: Optional[str] = None, use_gzip: bool = False) -> Callable:
    """An ``on_trace_ready`` handler writing the Chrome trace into ``dir_name``."""
    def handler(prof: "profile") -> None:
        os.makedirs(dir_name, exist_ok=True)
        prof.export_chrome_trace(os.path.join(dir_name, f"{worker_name or os.getpid()}.pt.trace.json"))

    return handler


class _Averages:
    """What ``key_averages()`` returns: its ``table`` prints the per-op totals."""

    def __init__(self, prof) -> None:
        self._prof = prof

    def table(self, sort_by: Optional[str] = None, row_limit: int = 100, **kwargs: Any) -> str:
        key = _SORT.get(sort_by, "self") if sort_by is not None else "self"
        return str(self._prof.table(sort_by=key, top=None if row_limit in (None, -1) else row_limit))

    def __iter__(self):
        return iter(self._prof.key_averages())

    def __len__(self) -> int:
        return len(self._prof.key_averages())


class profile:
    """``with torch.profiler.profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:``"""

    def __init__(self, activities: Any = None, schedule: Any = None, on_trace_ready: Optional[Callable] = None,
                 record_shapes: bool = False, profile_memory: bool = False, with_stack: bool = False,
                 with_flops: bool = False, with_modules: bool = False, **kwargs: Any) -> None:
        self._profile = _gg_profile(record_shapes=True)
        self._on_trace_ready = on_trace_ready

    def __enter__(self) -> "profile":
        self._profile.__enter__()
        return self

    def __exit__(self, *exc) -> bool:
        self._profile.__exit__(*exc)
        if self._on_trace_ready is not None:
            self._on_trace_ready(self)
        return False

    def start(self) -> None:
        self.__enter__()

    def stop(self) -> None:
        self.__exit__(None, None, None)

    def step(self) -> None:
        """Accepted: every step is recorded."""

    def key_averages(self, group_by_input_shape: bool = False, group_by_stack_n: int = 0) -> _Averages:
        return _Averages(self._profile)

    def export_chrome_trace(self, path: str) -> None:
        self._profile.export_chrome_trace(path)

    def table(self, *args: Any, **kwargs: Any) -> str:
        return self.key_averages().table(*args, **kwargs)


__all__ = ["profile", "record_function", "ProfilerActivity", "ProfilerAction", "schedule", "tensorboard_trace_handler"]
