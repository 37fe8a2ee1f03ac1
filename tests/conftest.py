"""Test-session settings.

pytest-xdist runs two worker processes on this two-core machine; if each also ran two BLAS threads,
the four would fight over two cores and small matrix products could become 100x slower. One BLAS
thread per worker keeps the suite fast and its timings steady.
"""
import os

import pytest

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

try:  # NumPy may already be loaded (with its thread count fixed) by the time this runs
    from threadpoolctl import threadpool_limits
except ImportError:  # comes with scikit-learn, a test extra
    threadpool_limits = None
if threadpool_limits is not None:
    threadpool_limits(1)


@pytest.fixture
def fresh_world(monkeypatch):
    """This process as a world of one that has not called ``init()`` (no launcher variables), put
    back as it was afterwards. The world object is reset in place, so every module sees it."""
    from graphgrad.distributed import world

    saved = dict(world.WORLD.__dict__)
    world.WORLD.__init__()
    for name in world._LAUNCHER_SIZE_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    yield world.WORLD
    world.WORLD.__dict__.clear()
    world.WORLD.__dict__.update(saved)


@pytest.fixture(autouse=True)
def _tensor_data_semantics(request):
    """``Tensor.data`` as each test expects it: PyTorch's (a detached tensor) in tests/compat/test_torch_*
    and test_programs.py, which test programs written for PyTorch, and graphgrad's raw array
    everywhere else. Importing
    ``graphgrad.compat.torch`` (which collection does for every module that uses it) switches it for
    the whole process, as it does for a PyTorch program."""
    import graphgrad as gg

    path = request.node.path
    compat = "compat" in path.parts and (path.name.startswith("test_torch") or path.name == "test_programs.py")
    saved = gg.Tensor._data_as_torch
    gg.Tensor._data_as_torch = compat and saved
    yield
    gg.Tensor._data_as_torch = saved
