"""Timing helpers of the benchmarks: interleaved medians, ratios, peak RSS, JSON, printed tables."""
from __future__ import annotations

import json
import resource
import statistics
import sys
import time
from typing import Any, Optional

#: Thread counts every benchmark runs with (BENCHMARKS.md: 2 threads for NumPy's BLAS and PyTorch).
THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")
THREADS = 2


def time_steps(steps: dict, warmup: int = 5, repeats: int = 30, inner: int = 3,
               groups: Optional[dict] = None, pause: float = 0.15, block_warmup: int = 1) -> dict:
    """Time each ``steps[name]()`` (seconds per step), interleaved: every round runs each step
    ``inner`` times in turn, so a slow spell of this shared machine hits all of them alike and the
    ratios stay meaningful. Returns {name: {median, min, max, repeats}} over ``repeats`` rounds.

    ``groups`` maps step names to a library (e.g. "numpy", "torch"); between blocks of different
    groups the loop sleeps ``pause`` seconds, so the BLAS threads one library leaves spinning after
    its last call do not slow the other. Each block first runs ``block_warmup`` untimed steps, so
    every version is timed in the same steady state (as in a training loop) whatever ran before
    it: without them, the first version after a pause paid for waking the BLAS threads and the
    caches while the next version of the same library found them warm.
    """
    groups = groups or {}
    last = [None]

    def settle(name: str) -> None:
        group = groups.get(name)
        if group is not None and last[0] is not None and group != last[0]:
            time.sleep(pause)
        if group is not None:
            last[0] = group

    for name, step in steps.items():
        settle(name)
        for _ in range(warmup):
            step()
    times: dict = {name: [] for name in steps}
    for _ in range(repeats):
        for name, step in steps.items():
            settle(name)
            for _ in range(block_warmup):
                step()
            start = time.perf_counter()
            for _ in range(inner):
                step()
            times[name].append((time.perf_counter() - start) / inner)
    return {name: summary(t) for name, t in times.items()}


def summary(times: list) -> dict:
    """{median, min, max, repeats} of a list of times."""
    return {"median": statistics.median(times), "min": min(times), "max": max(times), "repeats": len(times)}


def peak_rss_mb() -> float:
    """Peak resident memory of this process in MB."""
    kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return kb / 1024 if sys.platform != "darwin" else kb / 2**20


def torch_or_none():
    """PyTorch if installed (an optional reference), set to ``THREADS`` threads; else None."""
    try:
        import torch
    except ImportError:
        return None
    torch.set_num_threads(THREADS)
    return torch


def save_json(path: Optional[str], results: Any) -> None:
    """Write ``results`` to ``path`` as JSON (nothing when ``path`` is None)."""
    if path:
        with open(path, "w") as fh:
            json.dump(results, fh, indent=2, default=str)


def report(title: str, unit: str, scale: float, rows: dict, baseline: str, json_path: Optional[str]) -> None:
    """Print a table of medians (times ``scale`` in ``unit``) with the ratio of ``baseline`` to each
    other row, and the peak RSS; write it all to ``json_path`` when given."""
    print(f"\n{title}")
    print(f"{'implementation':<28}{'median':>12}{'min':>12}{'max':>12}   ratio {baseline}/ref")
    ours = rows[baseline]["median"]
    for name, r in rows.items():
        ratio = "" if name == baseline else f"{ours / r['median']:.2f}x"
        print(f"{name:<28}{r['median'] * scale:>10.2f}{unit:>2}{r['min'] * scale:>10.2f}{unit:>2}"
              f"{r['max'] * scale:>10.2f}{unit:>2}   {ratio}")
    print(f"peak RSS {peak_rss_mb():.0f} MB")
    save_json(json_path, {"title": title, "unit": unit, "scale": scale, "rows": rows, "peak_rss_mb": peak_rss_mb()})


__all__ = ["time_steps", "summary", "peak_rss_mb", "torch_or_none", "save_json", "report",
           "THREADS", "THREAD_VARIABLES"]
