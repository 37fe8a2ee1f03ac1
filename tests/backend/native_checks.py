"""What the native-kernel tests share: the skip marker, running a computation with native kernels
on and then off, one step run eagerly, compiled and on the NumPy paths, and kernels split over an
OpenMP team."""
import contextlib
import ctypes
import ctypes.util

import pytest

import graphgrad as gg
from graphgrad.backend import native

needs_native = pytest.mark.skipif(not native.available(), reason=f"native kernels: {native.status()}")


def both(fn):
    """``fn()`` with native kernels on, then off (the NumPy path)."""
    on = fn()
    with native.disabled():
        off = fn()
    return on, off


def three_ways(step, *arrays) -> tuple:
    """``step(*tensors)`` (a list of tensors) run eagerly, as ``gg.function`` and eagerly with native
    kernels off, on fresh tensors of ``arrays`` each time: three lists of arrays."""
    eager = [t.numpy().copy() for t in step(*map(gg.tensor, arrays))]
    compiled = [t.numpy() for t in gg.function(step)(*map(gg.tensor, arrays))]
    with native.disabled():
        numpy_path = [t.numpy().copy() for t in step(*map(gg.tensor, arrays))]
    return eager, compiled, numpy_path


@contextlib.contextmanager
def openmp_team():
    """Native kernels split as parallel regions of an OpenMP runtime: MKL's when it runs here, else
    the system's libgomp (so that the path runs without MKL too); restored afterwards. Skips the test
    where there is no OpenMP runtime."""
    from graphgrad.backend import blas

    address = blas.openmp_team()
    if address is None:
        name = ctypes.util.find_library("gomp")
        if name is None:
            pytest.skip("no OpenMP runtime (libgomp) here")
        address = ctypes.cast(ctypes.CDLL(name).GOMP_parallel, ctypes.c_void_p).value
    had_team, previous = native.team(), native.threads()
    native.kernel("set_team")(address)
    native._STATE["team"] = True
    try:
        yield
    finally:
        native.kernel("set_team")(blas.openmp_team() if had_team else 0)
        native._STATE["team"] = had_team
        native.set_threads(previous)


@contextlib.contextmanager
def own_threads():
    """Native kernels that split only on a team split on threads of their own instead, as where NumPy's
    OpenBLAS threads sleep between products (native._join_team); restored afterwards."""
    from graphgrad.backend import blas

    had_team, had_own, previous = native.team(), bool(native._STATE.get("own_split")), native.threads()
    native.kernel("set_team")(0)
    native._STATE["team"] = False
    native.kernel("set_own_split")(1)
    native._STATE["own_split"] = True
    try:
        yield
    finally:
        native.kernel("set_own_split")(int(had_own))
        native._STATE["own_split"] = had_own
        native.kernel("set_team")(blas.openmp_team() if had_team else 0)
        native._STATE["team"] = had_team
        native.set_threads(previous)
