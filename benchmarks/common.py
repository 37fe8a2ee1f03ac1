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


def time_steps(step, warmup: int = 5, repeats: int = 30) -> dict:
    """Run ``step()`` ``warmup`` times untimed, then ``repeats`` times; seconds per step."""
    for _ in range(warmup):
        step()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        step()
        times.append(time.perf_counter() - start)
    return {"median": statistics.median(times), "min": min(times), "max": max(times), "repeats": repeats}


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
    if json_path:
        with open(json_path, "w") as fh:
            json.dump({"title": title, "unit": unit, "scale": scale, "rows": rows, "peak_rss_mb": peak_rss_mb()},
                      fh, indent=2)
