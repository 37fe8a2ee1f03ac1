"""How a tensor prints: PyTorch's layout, so that a program's output reads the same on graphgrad.

The rules (PyTorch's ``torch/_tensor_str.py``, written again here from its documented behaviour):

* Floats all print with the same format, chosen from the finite non-zero values: whole numbers print
  as ``1.`` (scientific when the largest is over 1e8 or over 1000 times the smallest); otherwise
  ``precision`` digits after the point (``0.1235``), scientific (``1.2346e-01``) when the largest is
  over 1e8, over 1000 times the smallest, or the smallest is under 1e-4. ``sci_mode`` forces it.
* Every element is right-aligned to the widest; a row wraps after as many elements as fit in
  ``linewidth`` characters after the ``tensor(`` prefix.
* Over ``threshold`` elements, each axis shows ``edgeitems`` at either end around ``...``.
* Then ``dtype=`` (when not the default float, int64 or bool), ``device=``, and ``grad_fn=`` or
  ``requires_grad=True``, moved to a new line when the last line would pass ``linewidth``.

The options are ``graphgrad.config.print_options`` (``gg.set_printoptions``).
"""
from __future__ import annotations

import math
from typing import Any, Optional

from graphgrad import config
from graphgrad.backend import np

_PREFIX = "tensor("


def _options() -> dict:
    defaults = config.PRINT_DEFAULTS
    return {name: defaults[name] if value is None else value for name, value in config.print_options.items()}


class _Formatter:
    """One format for every element of an array (its chosen mode and width)."""

    def __init__(self, values, precision: int, sci_mode: Optional[bool]) -> None:
        self.floating = values.dtype.kind == "f"
        self.precision = precision
        self.int_mode, self.sci_mode, self.width = True, False, 1
        if not self.floating:
            for value in values.ravel().tolist():
                self.width = max(self.width, len(str(value)))
            return
        finite = values[np.isfinite(values) & (values != 0)].astype(np.float64)
        if finite.size:
            magnitudes = np.abs(finite)
            low, high = float(magnitudes.min()), float(magnitudes.max())
            self.int_mode = bool(np.all(finite == np.ceil(finite)))
            if self.int_mode:
                self.sci_mode = high / low > 1000.0 or high > 1.0e8
            else:
                self.sci_mode = high / low > 1000.0 or high > 1.0e8 or low < 1.0e-4
            if sci_mode is not None:
                self.sci_mode = sci_mode
            for value in finite.tolist():
                self.width = max(self.width, len(self._text(value)))
        elif sci_mode is not None:
            self.sci_mode = sci_mode

    def _text(self, value) -> str:
        if not self.floating:
            return str(value)
        if self.sci_mode:
            return f"{value:.{self.precision}e}"
        if self.int_mode:
            return f"{value:.0f}" + ("" if math.isinf(value) or math.isnan(value) else ".")
        return f"{value:.{self.precision}f}"

    def format(self, value) -> str:
        return self._text(value).rjust(self.width)


def _summarized(array, edgeitems: int):
    """The elements a summary shows (``edgeitems`` at either end of every axis), for the formatter."""
    if array.ndim == 0:
        return array
    if array.shape[0] > 2 * edgeitems:
        parts = [array[:edgeitems], array[-edgeitems:]] if edgeitems else [array[:0]]
        array = np.concatenate(parts)
    if array.ndim == 1:
        return array
    return np.stack([_summarized(a, edgeitems) for a in array]) if array.shape[0] else array


def _vector(array, indent: int, summarize: bool, fmt: _Formatter, opts: dict) -> str:
    edge = opts["edgeitems"]
    per_line = max(1, int(math.floor((opts["linewidth"] - indent) / (fmt.width + 2))))
    if summarize and not edge:
        items = ["..."]
    elif summarize and array.shape[0] > 2 * edge:
        items = ([fmt.format(v) for v in array[:edge].tolist()] + [" ..."]
                 + [fmt.format(v) for v in array[-edge:].tolist()])
    else:
        items = [fmt.format(v) for v in array.tolist()]
    lines = [", ".join(items[i:i + per_line]) for i in range(0, len(items), per_line)]
    return "[" + ("," + "\n" + " " * (indent + 1)).join(lines) + "]"


def _nested(array, indent: int, summarize: bool, fmt: _Formatter, opts: dict) -> str:
    if array.ndim == 0:
        return fmt.format(array.item())
    if array.ndim == 1:
        return _vector(array, indent, summarize, fmt, opts)
    edge, count = opts["edgeitems"], array.shape[0]
    if summarize and count > 2 * edge:
        rows = ([_nested(array[i], indent + 1, summarize, fmt, opts) for i in range(edge)] + ["..."]
                + [_nested(array[i], indent + 1, summarize, fmt, opts) for i in range(count - edge, count)])
    else:
        rows = [_nested(array[i], indent + 1, summarize, fmt, opts) for i in range(count)]
    return "[" + ("," + "\n" * (array.ndim - 1) + " " * (indent + 1)).join(rows) + "]"


def array_text(array, indent: int = len(_PREFIX)) -> str:
    """The values part of a tensor's repr (``array``: a NumPy array) under the current print options."""
    opts = _options()
    if array.dtype.kind == "c":  # (complex: NumPy's own layout, with the digits asked for)
        return np.array2string(array, separator=", ", prefix=_PREFIX, precision=opts["precision"],
                               max_line_width=opts["linewidth"])
    if array.size == 0:
        return "[]"
    summarize = array.size > opts["threshold"]
    shown = _summarized(array, opts["edgeitems"]) if summarize else array
    fmt = _Formatter(shown, int(opts["precision"]), opts["sci_mode"])
    return _nested(array, indent, summarize, fmt, opts)


def with_suffixes(text: str, suffixes: list, indent: int = len(_PREFIX)) -> str:
    """``text`` followed by ``, suffix`` each, a suffix that would pass the line width on a new line."""
    width = _options()["linewidth"]
    parts = [text]
    last_line = len(text) - text.rfind("\n") + 1
    for suffix in suffixes:
        if last_line + len(suffix) + 2 > width:
            parts.append(",\n" + " " * indent + suffix)
            last_line = indent + len(suffix)
        else:
            parts.append(", " + suffix)
            last_line += len(suffix) + 2
    return "".join(parts) + ")"


def tensor_repr(tensor: Any) -> str:
    """``repr`` of a concrete tensor: values, then dtype (when not the default float, int or bool),
    device, and grad_fn (named by ``config.grad_fn_name`` when set) or requires_grad."""
    array = tensor.numpy()
    suffixes = []
    if array.size == 0 and array.ndim > 1:
        suffixes.append(f"size={tuple(array.shape)}")
    if tensor.dtype not in (config.default_float, config.default_int, np.dtype(bool)):
        suffixes.append(f"dtype={config.repr_dtype_prefix}{tensor.dtype}")
    if tensor.device != "cpu":
        suffixes.append(f"device={tensor.device!r}")
    node = tensor._node
    if node is not None:
        suffixes.append(f"grad_fn=<{config.grad_fn_name(node) if config.grad_fn_name else node.op.name}>")
    elif tensor.requires_grad:
        suffixes.append("requires_grad=True")
    return with_suffixes(_PREFIX + array_text(array), suffixes)
