"""Reading checkpoints that PyTorch's ``torch.save`` wrote (a zip archive: ``data.pkl`` and one raw
file per storage), weights only.

The pickle is read by an unpickler that resolves only the globals a weights file holds (tensor and
parameter rebuilders, storage types, ``OrderedDict``, plus what ``torch.serialization.add_safe_globals``
allowed) and refuses any other before it is imported: the same rule as PyTorch's
``torch.load(weights_only=True)``, its default. Storages become NumPy arrays (bfloat16 widened to
float32), tensors the facade's tensors sharing them, views keeping their storage offsets and strides.
"""
from __future__ import annotations

import collections
import pickle
import zipfile
from typing import Any, Callable

from graphgrad import Tensor
from graphgrad import nn as _nn
from graphgrad.backend import np

#: Storage class name -> NumPy dtype (``BFloat16`` is read as its 16-bit pattern, then widened).
STORAGE_DTYPES = {"FloatStorage": np.float32, "DoubleStorage": np.float64, "HalfStorage": np.float16,
                  "BFloat16Storage": np.uint16, "LongStorage": np.int64, "IntStorage": np.int32,
                  "ShortStorage": np.int16, "CharStorage": np.int8, "ByteStorage": np.uint8,
                  "BoolStorage": np.bool_}
_DTYPE_NAMES = {"float32": np.float32, "float": np.float32, "float64": np.float64, "double": np.float64,
                "float16": np.float16, "half": np.float16, "bfloat16": np.uint16, "int64": np.int64,
                "long": np.int64, "int32": np.int32, "int": np.int32, "int16": np.int16, "int8": np.int8,
                "uint8": np.uint8, "bool": np.bool_}


def is_pytorch_zip(path: str) -> bool:
    """Whether ``path`` is a zip archive holding a ``data.pkl`` (PyTorch's format since 1.6)."""
    if not zipfile.is_zipfile(path):
        return False
    with zipfile.ZipFile(path) as z:
        return any(name.endswith("data.pkl") for name in z.namelist())


class _Storage:
    """One storage of the archive: its bytes as a flat array of its element type."""

    def __init__(self, array, bfloat16: bool) -> None:
        self.array, self.bfloat16 = array, bfloat16


def _widen(array, bfloat16: bool):
    if not bfloat16:
        return array
    return (array.astype(np.uint32) << np.uint32(16)).view(np.float32)


def _rebuild_tensor(storage: _Storage, offset: int, size, stride, requires_grad=False, hooks=None,
                    metadata=None) -> Tensor:
    flat = storage.array
    itemsize = flat.dtype.itemsize
    if not size:
        array = flat[offset:offset + 1].reshape(()).copy() if flat.size else np.zeros((), flat.dtype)
    else:
        array = np.lib.stride_tricks.as_strided(flat[offset:], shape=tuple(size),
                                                strides=tuple(s * itemsize for s in stride)).copy()
    t = Tensor(_widen(array, storage.bfloat16))
    if requires_grad:
        t.requires_grad_(True)
    return t


def _rebuild_tensor_v3(storage: _Storage, offset: int, size, stride, requires_grad, hooks, dtype=None,
                       metadata=None) -> Tensor:
    return _rebuild_tensor(storage, offset, size, stride, requires_grad, hooks)


def _rebuild_parameter(data: Tensor, requires_grad: bool = True, hooks=None, *state) -> Tensor:
    return _nn.Parameter(data, requires_grad=requires_grad)


def _rebuild_parameter_with_state(data: Tensor, requires_grad: bool, hooks, state) -> Tensor:
    return _rebuild_parameter(data, requires_grad, hooks)


class _DType:
    """``torch.float32`` and the others, as pickled by name."""

    def __init__(self, name: str) -> None:
        self.name = name


class _Device(str):
    """``torch.device('cpu')`` as pickled: the device string."""

    def __new__(cls, kind="cpu", index=None):
        return super().__new__(cls, kind if index is None else f"{kind}:{index}")


_ALLOWED: dict = {
    ("collections", "OrderedDict"): collections.OrderedDict,
    ("torch._utils", "_rebuild_tensor"): lambda storage, offset, size, stride: _rebuild_tensor(storage, offset,
                                                                                               size, stride),
    ("torch._utils", "_rebuild_tensor_v2"): _rebuild_tensor,
    ("torch._utils", "_rebuild_tensor_v3"): _rebuild_tensor_v3,
    ("torch._utils", "_rebuild_parameter"): _rebuild_parameter,
    ("torch._utils", "_rebuild_parameter_with_state"): _rebuild_parameter_with_state,
    ("torch", "device"): _Device,
    ("builtins", "set"): set, ("builtins", "frozenset"): frozenset, ("builtins", "slice"): slice,
    ("builtins", "complex"): complex,
}


class _WeightsUnpickler(pickle.Unpickler):
    def __init__(self, file, storage_of: Callable, extra: dict) -> None:
        super().__init__(file, encoding="utf-8")
        self._storage_of, self._extra = storage_of, extra

    def find_class(self, module: str, name: str) -> Any:
        if (module, name) in _ALLOWED:
            return _ALLOWED[(module, name)]
        if module == "torch" and (name in STORAGE_DTYPES or name == "UntypedStorage"):
            return name  # (a storage type: its name says the element type)
        if module == "torch" and name in _DTYPE_NAMES:
            return _DType(name)
        allowed = self._extra.get(f"{module}.{name}")
        if allowed is not None:
            return allowed
        raise pickle.UnpicklingError(
            f"weights-only load: the file names the global {module}.{name}, which is not a tensor, a storage or "
            f"a plain container; if you trust the file, allow it with torch.serialization.add_safe_globals or "
            f"load with weights_only=False")

    def persistent_load(self, saved_id: Any) -> Any:
        if not (isinstance(saved_id, tuple) and saved_id and saved_id[0] == "storage"):
            raise pickle.UnpicklingError(f"unsupported persistent id {saved_id!r} in a PyTorch file")
        _, kind, key, _location, numel = saved_id[:5]
        dtype_name = kind.name if isinstance(kind, _DType) else kind
        return self._storage_of(str(key), dtype_name, int(numel))


def load_pytorch_zip(path: str, extra_globals: dict | None = None) -> Any:
    """The object a PyTorch ``torch.save`` wrote to ``path``: tensors as the facade's tensors, containers
    as they were. Raises ``pickle.UnpicklingError`` naming a global that is not allowed."""
    with zipfile.ZipFile(path) as z:
        names = z.namelist()
        pickle_name = next(n for n in names if n.endswith("data.pkl"))
        prefix = pickle_name[:-len("data.pkl")]
        byteorder = "little"
        if prefix + "byteorder" in names:
            byteorder = z.read(prefix + "byteorder").decode().strip() or "little"
        cache: dict = {}

        def storage_of(key: str, kind: str, numel: int) -> _Storage:
            if key not in cache:
                dtype = STORAGE_DTYPES.get(kind) or _DTYPE_NAMES.get(kind)
                if dtype is None:
                    if kind == "UntypedStorage":
                        dtype = np.uint8
                    else:
                        raise pickle.UnpicklingError(f"storage type {kind!r} is not supported")
                raw = z.read(f"{prefix}data/{key}")
                array = np.frombuffer(raw, dtype=np.dtype(dtype).newbyteorder("<" if byteorder == "little" else ">"))
                cache[key] = _Storage(array.astype(np.dtype(dtype)), kind in ("BFloat16Storage", "bfloat16"))
            return cache[key]

        with z.open(pickle_name) as f:
            return _WeightsUnpickler(f, storage_of, extra_globals or {}).load()
