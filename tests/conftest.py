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


#: the top-level names the facades' install() functions take over in sys.modules
_FACADE_ROOTS = ("torch", "torchvision", "tensorflow", "keras")


def _ours(module) -> bool:
    """A module object graphgrad put in sys.modules: one of its packages, or the bare namespace the
    TensorFlow facade makes for ``tensorflow.compat``. Real PyTorch or TensorFlow modules never match
    (a C extension's submodule cannot be imported twice), nor TensorBoard's ``compat.notf`` switch."""
    name = getattr(module, "__name__", "") or ""
    return name.startswith("graphgrad") or (name == "tensorflow.compat" and getattr(module, "__file__", None) is None
                                            and getattr(module, "__spec__", None) is None)


@pytest.fixture(autouse=True)
def _facade_modules_put_back():
    """A test that calls a facade's ``install()`` in this process (``import tensorflow`` then gives
    graphgrad's) leaves sys.modules as it found it: a later test on the same worker that imports the
    real framework (to compare with it) must get the real one."""
    import sys

    before = {name: module for name, module in list(sys.modules.items()) if name.split(".")[0] in _FACADE_ROOTS}
    finders = list(sys.meta_path)
    yield
    sys.meta_path[:] = [f for f in sys.meta_path if f in finders or not type(f).__module__.startswith("graphgrad")]
    for name, module in list(sys.modules.items()):
        if name.split(".")[0] in _FACADE_ROOTS and before.get(name) is not module and _ours(module):
            if name in before:
                sys.modules[name] = before[name]
            else:
                del sys.modules[name]
