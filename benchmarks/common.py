"""Timing helpers shared by the benchmarks: medians over repeated steps, ratios, peak RSS, JSON."""
from __future__ import annotations

import json
import os
import resource
import statistics
import sys
import time

os.environ.setdefault("OMP_NUM_THREADS", "2")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "2")


def time_steps(steps: dict, warmup: int = 5, repeats: int = 30, inner: int = 3) -> dict:
    """Time each ``steps[name]()`` (seconds per step), interleaved: every round runs each step
    ``inner`` times in turn, so a slow spell of this shared machine hits all of them alike and the
    ratios stay meaningful. Returns {name: {median, min, max, repeats}} over ``repeats`` rounds."""
    for step in steps.values():
        for _ in range(warmup):
            step()
    times: dict = {name: [] for name in steps}
    for _ in range(repeats):
        for name, step in steps.items():
            start = time.perf_counter()
            for _ in range(inner):
                step()
            times[name].append((time.perf_counter() - start) / inner)
    return {name: {"median": statistics.median(t), "min": min(t), "max": max(t), "repeats": repeats}
            for name, t in times.items()}


def peak_rss_mb() -> float:
    """Peak resident memory of this process in MB."""
    kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return kb / 1024 if sys.platform != "darwin" else kb / 2**20


def torch_or_none():
    """PyTorch if installed (an optional reference), set to 2 threads; else None."""
    try:
        import torch
    except ImportError:
        return None
    torch.set_num_threads(2)
    return torch


def save_json(path: str | None, results) -> None:
    """Write ``results`` to ``path`` as JSON (nothing when ``path`` is None)."""
    if path:
        with open(path, "w") as fh:
            json.dump(results, fh, indent=2)


def report(title: str, unit: str, scale: float, rows: dict, baseline: str, json_path: str | None) -> None:
    """Print a table of medians (times ``scale`` in ``unit``) with ratios to each reference."""
    print(f"\n{title}")
    print(f"{'implementation':<28}{'median':>12}{'min':>12}{'max':>12}   ratio graphgrad/ref")
    ours = rows[baseline]["median"]
    for name, r in rows.items():
        ratio = "" if name == baseline else f"{ours / r['median']:.2f}x"
        print(f"{name:<28}{r['median'] * scale:>10.2f}{unit:>2}{r['min'] * scale:>10.2f}{unit:>2}"
              f"{r['max'] * scale:>10.2f}{unit:>2}   {ratio}")
    print(f"peak RSS {peak_rss_mb():.0f} MB")
    save_json(json_path, {"title": title, "unit": unit, "scale": scale, "rows": rows, "peak_rss_mb": peak_rss_mb()})
