"""``torch.serialization``: the globals a ``weights_only`` load may unpickle.

``torch.load`` of a pickled object (a whole module saved with ``torch.save(model, f)``) runs code
while unpickling, so with ``weights_only=True`` (PyTorch's default since 2.6) only allowed globals are
resolved: containers, arrays, tensors and parameters, plus what the program allows itself with
:func:`add_safe_globals` or the :func:`safe_globals` context (its model classes, ``nn.Linear``...).
Each global is checked by its name before anything is imported, as PyTorch's weights-only unpickler
does."""
from __future__ import annotations

import contextlib
import pickle
from typing import Any, Iterable, Iterator

#: (module, name) pairs every weights-only load allows: what tensors, parameters and their arrays are
#: made of (NumPy's array reconstruction under both of its module names), and ordered dicts.
DEFAULT_ALLOWED = frozenset({
    ("collections", "OrderedDict"),
    ("graphgrad.core.tensor", "Tensor"),
    ("graphgrad.nn.parameter", "Parameter"),
    ("graphgrad.nn.parameter", "Buffer"),
    ("numpy", "ndarray"),
    ("numpy", "dtype"),
    ("numpy._core.multiarray", "_reconstruct"),
    ("numpy.core.multiarray", "_reconstruct"),
    ("numpy._core.multiarray", "scalar"),
    ("numpy.core.multiarray", "scalar"),
})

_SAFE: list = []


def _name_of(obj: Any) -> tuple:
    """The (module, name) pair that pickle writes for ``obj`` (a class or a function), or for an entry
    ``(obj, "module.name")`` as PyTorch also takes."""
    if isinstance(obj, tuple) and len(obj) == 2 and isinstance(obj[1], str):
        module, _, name = obj[1].rpartition(".")
        return module, name
    return getattr(obj, "__module__", None), getattr(obj, "__qualname__", getattr(obj, "__name__", None))


def _allowed() -> set:
    """Every (module, name) pair allowed now: the defaults, the program's globals, and the functions
    those wrap (``torch.nn.functional.relu`` allows the ``relu`` a layer stores)."""
    allowed = set(DEFAULT_ALLOWED)
    for obj in _SAFE:
        allowed.add(_name_of(obj))
        if getattr(obj, "__wrapped__", None) is not None:
            allowed.add(_name_of(obj.__wrapped__))
    return allowed


def add_safe_globals(safe_globals: Iterable[Any]) -> None:
    """Allow these classes and functions in every later weights-only load of this process."""
    _SAFE.extend(safe_globals)


def get_safe_globals() -> list:
    """The globals allowed by :func:`add_safe_globals` (and any :func:`safe_globals` block open now)."""
    return list(_SAFE)


def clear_safe_globals() -> None:
    """Forget every global allowed by :func:`add_safe_globals`."""
    _SAFE.clear()


@contextlib.contextmanager
def safe_globals(safe_globals: Iterable[Any]) -> Iterator[None]:
    """Allow these classes and functions in the weights-only loads made within the block."""
    added = list(safe_globals)
    _SAFE.extend(added)
    try:
        yield
    finally:
        for obj in added:
            _SAFE.remove(obj)


class _WeightsOnlyUnpickler(pickle.Unpickler):
    """An unpickler that resolves only allowed globals (checked by name before any import)."""

    def find_class(self, module: str, name: str) -> Any:
        if (module, name) not in _allowed():
            raise pickle.UnpicklingError(f"Unsupported global: GLOBAL {module}.{name} was not an allowed global by "
                                         f"default. Allow it with torch.serialization.add_safe_globals([{name}]) "
                                         "or the torch.serialization.safe_globals([...]) context, if you trust it")
        return super().find_class(module, name)


def weights_only_load(handle, where: str) -> Any:
    """Unpickle from ``handle`` resolving only allowed globals; a RuntimeError says which one was not
    (and that ``weights_only=False`` loads anything, for a trusted file)."""
    try:
        return _WeightsOnlyUnpickler(handle).load()
    except pickle.UnpicklingError as exc:
        raise RuntimeError(f"torch.load: weights only load of {where} failed: {exc}. Unpickling runs code; pass "
                           "weights_only=False if you trust the file") from None
