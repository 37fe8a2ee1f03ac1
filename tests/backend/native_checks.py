"""What the native-kernel tests share: the skip marker, running a computation with native kernels
on and then off, and one step run eagerly, compiled and on the NumPy paths."""
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
