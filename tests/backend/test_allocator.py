"""The allocator setting (graphgrad/backend/allocator.py): on by default, opt-out by environment
variable, and it does what it is for: a large array freed and allocated again costs no new page
faults (checked by counting the process's minor faults, not by timing)."""
import subprocess
import sys

import pytest

from graphgrad.backend import allocator

pytestmark = pytest.mark.skipif(allocator._libc() is None, reason="glibc's mallopt is Linux-only")

_CHILD = """
import resource, numpy as np
import graphgrad
from graphgrad import backend
faults = []
for _ in range(4):
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    arrays = [np.ones(1 << 18, np.float32) for _ in range(16)]  # 16 x 1 MiB alive at once, touched
    del arrays
    faults.append(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
print(backend.malloc_tuned(), min(faults[1:]))
"""


def _run(env_value):
    env = {"GRAPHGRAD_MALLOC_TUNING": env_value} if env_value is not None else {}
    import os

    out = subprocess.run([sys.executable, "-c", _CHILD], env={**os.environ, **env}, capture_output=True,
                         text=True, check=True).stdout.split()
    return out[0] == "True", int(out[1])


def test_tuned_by_default_and_freed_memory_is_reused():
    tuned, faults = _run(None)
    assert tuned
    assert faults < 200  # the 4096 pages of the arrays come back without faulting


def test_opt_out_by_environment_restores_glibc_behaviour():
    tuned, faults = _run("0")
    assert not tuned
    assert faults > 2000  # the freed heap top was given back: mapped afresh each round


def test_tune_malloc_toggles():
    was = allocator.malloc_tuned()
    try:
        assert allocator.tune_malloc(False) and not allocator.malloc_tuned()
        assert allocator.tune_malloc(True) and allocator.malloc_tuned()
    finally:
        allocator.tune_malloc(was)
