"""Imported first by the benchmark scripts: asks BLAS for 2 threads before NumPy loads (BENCHMARKS.md),
then re-exports the timing helpers, which live in ``graphgrad.bench.timing``."""
from __future__ import annotations

import os

for _name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_name, "2")

from graphgrad.bench.timing import peak_rss_mb, report, save_json, time_steps, torch_or_none  # noqa: E402,F401
