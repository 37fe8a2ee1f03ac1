"""A strict emulated GPU: checks on a machine without one that array code keeps to ``xp``.

Tensors on ``device="emulated"`` hold :class:`EmulatedArray` s: NumPy arrays behind a type of their
own that behaves like CuPy's where it matters for correctness of device code:

* mixing one with a host NumPy array raises ``TypeError`` (CuPy refuses implicit host/device
  conversion): ``emulated + ndarray``, ``xp.add(emulated, ndarray)``, ``emulated[...] = ndarray``;
* ``np.asarray(emulated)`` (or any NumPy function given one) raises ``TypeError``; the explicit
  transfers are ``array.get()`` and ``graphgrad.backend.to_numpy`` to the host, ``xp.asarray(host)``
  to the device, as with CuPy;
* :data:`xp`, its namespace, offers NumPy's functions, ufuncs (with ``.at``, ``.reduce``...),
  dtypes and sub-namespaces (``linalg``, ``fft``, ``random``) on emulated arrays, and returns
  emulated arrays (0-d arrays rather than NumPy scalars, as CuPy does).

Computation is NumPy's, so results equal the CPU's bit for bit; only host/device leaks differ,
and they raise where they happen.
"""
from __future__ import annotations

import functools
import types
from typing import Any

import numpy as np

DEVICE = "emulated"

_HOST_HINT = ("an emulated device array cannot be mixed with a host NumPy array (as CuPy refuses implicit "
              "host/device transfers): move the host array with xp.asarray(...) first")


class EmulatedArray:
    """A NumPy array on the emulated device (see the module docstring)."""

    __slots__ = ("_a", "__weakref__")
    __array_ufunc__ = None  # NumPy ufuncs and `ndarray op emulated` defer to us, and we refuse host arrays
    __array_priority__ = 1000

    def __init__(self, array: np.ndarray) -> None:
        self._a = array

    # ---- what NumPy must not do implicitly ----------------------------------------------------------
    def __array__(self, dtype=None, copy=None):
        raise TypeError("Implicit conversion to a NumPy array is not allowed for an emulated device array "
                        "(as for CuPy): use array.get() or graphgrad.backend.to_numpy(array)")

    def get(self) -> np.ndarray:
        """A host NumPy copy (the explicit device-to-host transfer, CuPy's ``get``)."""
        return self._a.copy()

    # ---- attributes -------------------------------------------------------------------------------
    shape = property(lambda self: self._a.shape)
    dtype = property(lambda self: self._a.dtype)
    ndim = property(lambda self: self._a.ndim)
    size = property(lambda self: self._a.size)
    nbytes = property(lambda self: self._a.nbytes)
    itemsize = property(lambda self: self._a.itemsize)
    strides = property(lambda self: self._a.strides)
    flags = property(lambda self: self._a.flags)
    T = property(lambda self: _wrap(self._a.T))
    mT = property(lambda self: _wrap(np.swapaxes(self._a, -1, -2)))
    real = property(lambda self: _wrap(self._a.real))
    imag = property(lambda self: _wrap(self._a.imag))
    device = property(lambda self: _Device())

    @property
    def base(self):
        """The memory owner (used only for identity, e.g. autograd's in-place checks)."""
        return self._a.base

    def __getattr__(self, name: str):
        if name.startswith("__"):  # NumPy's conversion protocols (__array_interface__...) stay hidden
            raise AttributeError(name)
        value = getattr(self._a, name)
        if callable(value):
            return _device_function(value, name)
        return value

    def __repr__(self) -> str:
        return "emulated_" + repr(self._a)

    __str__ = __repr__

    # ---- Python protocols ----------------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self._a)

    def __iter__(self):
        return (_wrap(item) for item in self._a)

    def __bool__(self) -> bool:
        return bool(self._a)

    def __float__(self) -> float:
        return float(self._a)

    def __int__(self) -> int:
        return int(self._a)

    def __index__(self) -> int:
        return self._a.__index__()

    def __complex__(self) -> complex:
        return complex(self._a)

    def __getitem__(self, key):
        return _wrap(self._a[_unwrap(key, "indexing")])

    def __setitem__(self, key, value) -> None:
        self._a[_unwrap(key, "indexing")] = _unwrap(value, "item assignment")

    def __copy__(self):
        return _wrap(self._a.copy())

    def __deepcopy__(self, memo):
        return _wrap(self._a.copy())

    def __reduce__(self):
        return (_from_host, (self._a,))


def _from_host(array):
    return EmulatedArray(np.asarray(array))


class _Device:
    """CuPy's ``array.device`` (an object with ``id``)."""

    id = 0

    def __repr__(self) -> str:
        return "<emulated device 0>"


def _operator(name: str):
    def method(self, *others):
        return _wrap(getattr(self._a, name)(*(_unwrap(o, f"operator {name}") for o in others)))

    method.__name__ = name
    return method


for _name in ("__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__", "__truediv__", "__rtruediv__",
              "__floordiv__", "__rfloordiv__", "__mod__", "__rmod__", "__pow__", "__rpow__", "__matmul__",
              "__rmatmul__", "__and__", "__rand__", "__or__", "__ror__", "__xor__", "__rxor__", "__lshift__",
              "__rlshift__", "__rshift__", "__rrshift__", "__lt__", "__le__", "__gt__", "__ge__", "__eq__", "__ne__",
              "__neg__", "__pos__", "__abs__", "__invert__", "__divmod__", "__iadd__", "__isub__", "__imul__",
              "__itruediv__", "__ifloordiv__", "__imod__", "__ipow__", "__iand__", "__ior__", "__ixor__",
              "__ilshift__", "__irshift__"):
    setattr(EmulatedArray, _name, _operator(_name))
EmulatedArray.__hash__ = None  # arrays are unhashable, as NumPy's and CuPy's


def _in_place_result(method):
    @functools.wraps(method)
    def inplace(self, other):
        method(self, other)
        return self

    return inplace


for _name in ("__iadd__", "__isub__", "__imul__", "__itruediv__", "__ifloordiv__", "__imod__", "__ipow__",
              "__iand__", "__ior__", "__ixor__", "__ilshift__", "__irshift__"):
    setattr(EmulatedArray, _name, _in_place_result(getattr(EmulatedArray, _name)))


# ---- moving values across the boundary ----------------------------------------------------------------
def _wrap(value):
    """NumPy results as device values: arrays and NumPy scalars become emulated arrays (CuPy returns
    0-d arrays where NumPy returns scalars); tuples and lists are wrapped item by item."""
    if isinstance(value, np.ndarray):
        return EmulatedArray(value)
    if isinstance(value, np.generic):
        return EmulatedArray(np.asarray(value))
    if isinstance(value, tuple) and not hasattr(value, "_fields"):
        return tuple(_wrap(v) for v in value)
    if isinstance(value, tuple):  # a named tuple (np.linalg results)
        return type(value)(*(_wrap(v) for v in value))
    if isinstance(value, list):
        return [_wrap(v) for v in value]
    return value


def _unwrap(value, where: str):
    """Arguments for NumPy: emulated arrays unwrapped; host NumPy arrays refused (a host/device leak)."""
    if isinstance(value, EmulatedArray):
        return value._a
    if isinstance(value, np.ndarray):
        raise TypeError(f"{where}: {_HOST_HINT}")
    if isinstance(value, (tuple, list)):
        items = [_unwrap(v, where) for v in value]
        return tuple(items) if isinstance(value, tuple) else items
    if isinstance(value, dict):
        return {k: _unwrap(v, where) for k, v in value.items()}
    return value


def _device_function(fn, name: str):
    @functools.wraps(fn)
    def call(*args, **kwargs):
        return _wrap(fn(*(_unwrap(a, name) for a in args), **{k: _unwrap(v, name) for k, v in kwargs.items()}))

    return call


class _Ufunc:
    """A NumPy ufunc on device arrays (``xp.add``, ``xp.add.at``, ``xp.maximum.reduce``...)."""

    def __init__(self, ufunc) -> None:
        self._ufunc = ufunc
        self.__name__ = ufunc.__name__

    def __call__(self, *args, **kwargs):
        return _device_function(self._ufunc, self.__name__)(*args, **kwargs)

    def __getattr__(self, name: str):
        value = getattr(self._ufunc, name)
        return _device_function(value, f"{self.__name__}.{name}") if callable(value) else value

    def __repr__(self) -> str:
        return f"<emulated ufunc {self.__name__!r}>"


#: functions that take host data on purpose: the explicit host-to-device transfer
_TRANSFERS = frozenset({"asarray", "array", "asanyarray", "ascontiguousarray", "asfortranarray"})


class Namespace(types.SimpleNamespace):
    """NumPy's namespace on emulated arrays (the ``xp`` of device code; see the module docstring)."""

    def __init__(self, module, name: str) -> None:
        super().__init__()
        object.__setattr__(self, "_module", module)
        object.__setattr__(self, "__name__", name)
        object.__setattr__(self, "_cache", {})

    def __getattr__(self, name: str):
        cache = object.__getattribute__(self, "_cache")
        if name in cache:
            return cache[name]
        module = object.__getattribute__(self, "_module")
        value = getattr(module, name)
        if name == "ndarray":
            value = EmulatedArray
        elif isinstance(value, np.ufunc):
            value = _Ufunc(value)
        elif isinstance(value, types.ModuleType):
            value = Namespace(value, f"{self.__name__}.{name}")
        elif name in _TRANSFERS:
            value = _transfer(value)
        elif callable(value) and not isinstance(value, type) and name not in ("errstate", "dtype", "finfo", "iinfo",
                                                                              "result_type", "promote_types",
                                                                              "can_cast", "issubdtype"):
            value = _device_function(value, name)
        cache[name] = value
        return value

    def __repr__(self) -> str:
        return f"<emulated namespace {self.__name__}>"


def _transfer(fn):
    @functools.wraps(fn)
    def call(obj, *args, **kwargs):
        if isinstance(obj, EmulatedArray):
            obj = obj._a
        elif isinstance(obj, (list, tuple)):
            obj = _host_values(obj)
        return EmulatedArray(fn(obj, *args, **kwargs))

    return call


def _host_values(value):
    """A nested list for ``xp.asarray``: device arrays inside it are read (a list mixing device
    arrays and numbers, as CuPy accepts)."""
    if isinstance(value, EmulatedArray):
        return value._a
    if isinstance(value, (list, tuple)):
        return [_host_values(v) for v in value]
    return value


#: the emulated device's array namespace (what ``namespace_of`` gives for an :class:`EmulatedArray`)
xp = Namespace(np, "graphgrad.backend.emulated.xp")


def to_device(array: Any) -> EmulatedArray:
    """Host data (a NumPy array, scalar or list) copied to the emulated device."""
    if isinstance(array, EmulatedArray):
        return array
    return EmulatedArray(np.array(array, copy=True))


def is_emulated(value: Any) -> bool:
    return isinstance(value, EmulatedArray)


def kernel(numpy_kernel):
    """A NumPy backend kernel (``erf``, ``scatter_add_rows``...) made to take and give device arrays."""
    return _device_function(numpy_kernel, getattr(numpy_kernel, "__name__", "kernel"))
