"""``torch.utils.benchmark``: ``Timer`` and its ``Measurement`` on Python's ``timeit`` (graphgrad runs on the
CPU: there is nothing to synchronize)."""
from __future__ import annotations

import statistics
import timeit
from typing import Any, Optional


class Measurement:
    """Times of ``number_per_run`` runs of a statement: ``times`` (seconds per run), ``mean``, ``median``,
    ``iqr``."""

    def __init__(self, number_per_run: int, raw_times: list, stmt: str = "", label: Optional[str] = None,
                 sub_label: Optional[str] = None, description: Optional[str] = None) -> None:
        self.number_per_run, self.raw_times = number_per_run, list(raw_times)
        self.stmt, self.label, self.sub_label, self.description = stmt, label, sub_label, description
        self.times = [t / number_per_run for t in self.raw_times]
        self.metadata: dict = {}

    @property
    def mean(self) -> float:
        return statistics.fmean(self.times)

    @property
    def median(self) -> float:
        return statistics.median(self.times)

    @property
    def iqr(self) -> float:
        if len(self.times) < 2:
            return 0.0
        q = statistics.quantiles(self.times, n=4)
        return q[2] - q[0]

    @property
    def title(self) -> str:
        return self.label or self.stmt

    def __repr__(self) -> str:
        median = self.median
        unit, scale = (("s", 1.0) if median >= 1 else ("ms", 1e3) if median >= 1e-3 else ("us", 1e6))
        return (f"<torch.utils.benchmark.Measurement object>\n{self.title}\n  {median * scale:.2f} {unit}\n"
                f"  1 measurement, {self.number_per_run} runs , 1 thread")


class Timer:
    """``Timer(stmt, setup, globals=...)``: ``timeit(n)`` times ``n`` runs of ``stmt`` as one measurement;
    ``repeat``/``blocked_autorange``/``adaptive_autorange`` as PyTorch's."""

    def __init__(self, stmt: str = "pass", setup: str = "pass", global_setup: str = "", timer=timeit.default_timer,
                 globals: Optional[dict] = None, label: Optional[str] = None, sub_label: Optional[str] = None,
                 description: Optional[str] = None, env: Optional[str] = None, num_threads: int = 1,
                 language: Any = "python") -> None:
        self.stmt, self.label, self.sub_label, self.description = stmt, label, sub_label, description
        self._timer = timeit.Timer(stmt=stmt, setup=setup, timer=timer, globals=dict(globals or {}))

    def _measure(self, number: int, raw: list) -> Measurement:
        return Measurement(number, raw, self.stmt, self.label, self.sub_label, self.description)

    def timeit(self, number: int = 1000000) -> Measurement:
        self._timer.timeit(1)  # warm up
        return self._measure(number, [self._timer.timeit(number)])

    def repeat(self, repeat: int = -1, number: int = -1) -> None:
        raise NotImplementedError("torch.utils.benchmark.Timer.repeat is not implemented in PyTorch either")

    def blocked_autorange(self, callback=None, min_run_time: float = 0.2) -> Measurement:
        number, _ = self._timer.autorange()
        raw, total = [], 0.0
        while total < min_run_time or not raw:
            t = self._timer.timeit(number)
            raw.append(t)
            total += t
            if callback is not None:
                callback(number, t)
        return self._measure(number, raw)

    def adaptive_autorange(self, threshold: float = 0.1, *, min_run_time: float = 0.01, max_run_time: float = 10.0,
                           callback=None) -> Measurement:
        return self.blocked_autorange(callback=callback, min_run_time=min_run_time)
