"""One exception hierarchy for the whole framework.

Every message says which op (or placeholder, or node) failed, what was expected and what was received.
The classes also derive from the matching built-in exception so ``except ValueError`` keeps working.
"""
from __future__ import annotations


class GraphgradError(Exception):
    """Base class of every error graphgrad raises on purpose."""


class ShapeError(GraphgradError, ValueError):
    """Operands of an op have incompatible shapes."""


class DTypeError(GraphgradError, TypeError):
    """An operand has a dtype the op does not accept (e.g. float labels for cross_entropy)."""


class GradError(GraphgradError, RuntimeError):
    """Autograd was asked for something it cannot do (freed graph, non-scalar output, leaf update...)."""


class GraphError(GraphgradError, RuntimeError):
    """A static-graph or symbolic-tensor misuse."""


class FeedError(GraphgradError, ValueError):
    """A feed for a placeholder is missing or does not match it."""


class NonFiniteError(GraphgradError, FloatingPointError):
    """An op produced NaN or inf while anomaly detection was on."""


class ArgumentError(GraphgradError, TypeError, ValueError):
    """A function got an argument of the wrong type or value (a float size, a zero step, an empty
    range); the message names the function and the argument. Caught as TypeError or ValueError."""


def check_count(where: str, what: str, value, least: int = 0) -> int:
    """``value`` as an int when it is an integer (a NumPy integer too, never a bool or a float) of at
    least ``least``; else an :class:`ArgumentError` naming ``where`` and ``what`` (a layer's channel or
    feature count: ``Conv2d(16, 24 / 4, 1)`` is refused, as PyTorch refuses it, rather than truncated)."""
    if isinstance(value, bool) or not hasattr(value, "__index__") or int(value) < least:
        kind = "a positive" if least == 1 else "a non-negative" if least == 0 else f"an at least {least}"
        raise ArgumentError(f"{where}: {what} must be {kind} integer, got {value!r}")
    return int(value)


class IndexRangeError(GraphgradError, IndexError):
    """An index tensor holds a value outside the dimension it indexes (embedding rows, one_hot classes)."""


class DivisionByZeroError(GraphgradError, ZeroDivisionError):
    """Integer division or remainder by zero (float division gives inf or NaN instead)."""


class DeviceError(GraphgradError, RuntimeError):
    """An op got inputs on different devices (a CPU tensor with a GPU or emulated one); the message
    names the op and each input's device. Move them with ``.to(device)`` first (as PyTorch requires)."""


class FileLoadError(GraphgradError, ValueError):
    """A file cannot be loaded: truncated, corrupt, of another format (a PyTorch pickle, a foreign
    zip), or with a structure graphgrad does not read. The message names the file and what is wrong.
    Caught as ValueError too."""


class LoadLimitError(FileLoadError):
    """A file declares more data than ``graphgrad.config.max_load_bytes`` allows (a zip bomb, a
    header declaring a huge shape); refused before anything that large is allocated. Raise the limit
    to load a genuinely large file: ``graphgrad.config.max_load_bytes = 16 << 30``."""
