"""Array backends: the only package that imports NumPy or CuPy by name.

Op code never imports an array library. It receives ``xp``, the array namespace of its inputs
(``numpy`` or ``cupy``), from :func:`namespace_of`. Kernels that must differ per backend (``erf``
has no NumPy ufunc) are looked up with :func:`kernel`.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from graphgrad.backend import emulated, numpy_backend
from graphgrad.backend.allocator import malloc_tuned, tune_at_import, tune_malloc  # noqa: F401  (public)
from graphgrad.backend.parallel import blas_threads  # noqa: F401  (public)

tune_at_import()

ndarray = np.ndarray

_KERNELS: dict[tuple[str, str], Callable] = {}


def register_kernel(backend_name: str, name: str, fn: Callable) -> None:
    """Register ``fn`` as the ``name`` kernel of a backend (``"numpy"`` or ``"cupy"``)."""
    _KERNELS[(backend_name, name)] = fn


for _name, _fn in numpy_backend.KERNELS.items():
    register_kernel("numpy", _name, _fn)


def _cupy():
    from graphgrad.backend import cupy_backend  # imported lazily: CuPy is optional

    return cupy_backend


def gpu_count() -> int:
    """How many CUDA devices CuPy can use (0 without CuPy or without a GPU)."""
    try:
        import cupy

        return int(cupy.cuda.runtime.getDeviceCount())
    except Exception:
        return 0


def cupy_installed() -> bool:
    """Whether the CuPy package can be imported."""
    try:
        import cupy  # noqa: F401
    except ImportError:
        return False
    return True


def gpu_call(name: str) -> Any:
    """Run one of CuPy's device-wide calls: ``"synchronize"``, ``"empty_cache"`` or ``"current_device"``
    (nothing, or 0, without a GPU)."""
    if gpu_count() == 0:
        return 0 if name == "current_device" else None
    import cupy

    if name == "synchronize":
        return cupy.cuda.runtime.deviceSynchronize()
    if name == "empty_cache":
        return cupy.get_default_memory_pool().free_all_blocks()
    if name == "current_device":
        return int(cupy.cuda.runtime.getDevice())
    raise ValueError(f"unknown GPU call {name!r}")


def namespace_of(array: Any):
    """The array namespace (``numpy``, ``cupy``, or the emulated device's) that ``array`` belongs to."""
    if type(array) is ndarray or isinstance(array, (np.ndarray, np.generic)):
        return np
    if type(array) is emulated.EmulatedArray:
        return emulated.xp
    if type(array).__module__.startswith("cupy"):
        return _cupy().xp()
    return np


def errstate(xp, **kwargs):
    """The namespace's ``errstate(**kwargs)`` where it has one (NumPy's floating-point warnings); a no-op
    context on CuPy, which has no errstate (GPU kernels do not warn)."""
    state = getattr(xp, "errstate", None)
    if state is None:
        import contextlib

        return contextlib.nullcontext()
    return state(**kwargs)


def backend_name(xp) -> str:
    return "numpy" if xp is np else "emulated" if xp is emulated.xp else "cupy"


def placement(xp) -> str:
    """Where namespace ``xp`` allocates now: ``"cpu"``, ``"emulated"``, or ``"cuda:N"`` for CuPy's
    current GPU (a key for values kept per device, such as a plan's constants)."""
    name = backend_name(xp)
    if name == "numpy":
        return "cpu"
    if name == "emulated":
        return emulated.DEVICE
    return f"cuda:{int(xp.cuda.runtime.getDevice())}"


def kernel(xp, name: str) -> Callable:
    """The backend-specific kernel ``name`` for namespace ``xp`` (e.g. ``erf``)."""
    key = (backend_name(xp), name)
    if key not in _KERNELS and key[0] == "cupy":
        _cupy().register(register_kernel)
    if key not in _KERNELS and key[0] == "emulated":  # NumPy's kernel, on device arrays
        register_kernel("emulated", name, emulated.kernel(_KERNELS[("numpy", name)]))
    return _KERNELS[key]


def device_of(array: Any) -> str:
    """``"cpu"`` for NumPy arrays (and scalars), ``"cuda:N"`` for CuPy arrays, ``"emulated"`` for the
    emulated device's."""
    if isinstance(array, (np.ndarray, np.generic)):
        return "cpu"
    if type(array) is emulated.EmulatedArray:
        return emulated.DEVICE
    dev = getattr(array, "device", None)
    return f"cuda:{getattr(dev, 'id', 0)}"


def namespace_for_device(device: str | None):
    """The array namespace that allocates on ``device`` (``None`` or ``"cpu"``: NumPy)."""
    if device is None or device == "cpu":
        return np
    if device == emulated.DEVICE:
        return emulated.xp
    if str(device).startswith("cuda"):
        if gpu_count() == 0:
            why = "CuPy sees no GPU" if cupy_installed() else "CuPy is not installed (pip install 'graphgrad[cuda]')"
            raise RuntimeError(f"device {str(device)!r} is not available: {why}; use 'cpu', or check "
                               "gg.cuda.is_available() first")
        return _cupy().xp()
    raise ValueError(f"unknown device {device!r}; expected 'cpu', 'cuda[:N]' or 'emulated'")


def to_device(array: Any, device: str | None):
    """Move ``array`` to ``device`` (copying between host and GPU when needed)."""
    if device is None or device_of(array) == device:
        return array
    if device == "cpu":
        return array.get()
    if device == emulated.DEVICE:
        return emulated.to_device(to_numpy(array))
    return namespace_for_device(device).asarray(array)


def to_numpy(array: Any) -> np.ndarray:
    """A NumPy view or copy of ``array`` wherever it lives."""
    if isinstance(array, np.ndarray):
        return array
    if hasattr(array, "get"):
        return array.get()
    return np.asarray(array)


def is_array(value: Any) -> bool:
    """True for NumPy arrays/scalars, CuPy arrays and emulated device arrays."""
    return isinstance(value, (np.ndarray, np.generic, emulated.EmulatedArray)) or \
        type(value).__module__.startswith("cupy")


def ufunc_result_dtype(name: str, *dtypes) -> np.dtype:
    """The dtype NumPy's ufunc ``name`` produces for the given operand dtypes (or Python scalar types)."""
    return _resolve(name, dtypes)


def _resolve(name, dtypes):
    key = (name, dtypes)
    hit = _RESOLVED.get(key)
    if hit is None:
        hit = getattr(np, name).resolve_dtypes(dtypes + (None,))[-1]
        _RESOLVED[key] = hit
    return hit


_RESOLVED: dict = {}
