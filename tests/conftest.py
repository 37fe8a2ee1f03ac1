"""Test-session settings.

pytest-xdist runs two worker processes on this two-core machine; if each also ran two BLAS threads,
the four would fight over two cores and small matrix products could become 100x slower. One BLAS
thread per worker keeps the suite fast and its timings steady.
"""
import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

try:  # NumPy may already be loaded (with its thread count fixed) by the time this runs
    from threadpoolctl import threadpool_limits
except ImportError:  # comes with scikit-learn, a test extra
    threadpool_limits = None
if threadpool_limits is not None:
    threadpool_limits(1)
