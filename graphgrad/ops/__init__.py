"""The op library. Every public op function and op class of the family modules is re-exported here
(``gg.ops.exp``), and from there by ``graphgrad`` itself (``gg.exp``)."""
import importlib as _importlib

#: The op family modules, in dependency order.
FAMILIES = ("elementwise", "unary", "composite", "reduce", "shape", "indexing", "linalg", "nn", "losses", "conv", "pool")

__all__ = []
for _family in FAMILIES:
    try:
        _module = _importlib.import_module(f"graphgrad.ops.{_family}")
    except ModuleNotFoundError as _exc:
        if _exc.name != f"graphgrad.ops.{_family}":
            raise
        continue
    for _name, _value in vars(_module).items():
        if not _name.startswith("_") and getattr(_value, "__module__", None) == _module.__name__:
            globals()[_name] = _value
            __all__.append(_name)

from graphgrad.ops import methods as _methods  # noqa: E402  (installs Tensor operators last)
