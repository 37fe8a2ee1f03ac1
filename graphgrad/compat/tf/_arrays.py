"""The facade's array functions added for common TF1 programs: ``cumprod``, ``gather_nd``,
``boolean_mask``, ``sequence_mask``, and ``Print``/``print`` (pass-throughs: graphgrad has no printing op)."""
from __future__ import annotations

import builtins
from typing import Any, Optional

import graphgrad as _gg
from graphgrad.compat.tf._common import as_dtype, bool_, in_graph, int64, need_rank

Tensor = _gg.Tensor
Operation = _gg.GraphNode


@in_graph
def cumprod(x: Any, axis: int = 0, exclusive: builtins.bool = False, reverse: builtins.bool = False) -> Tensor:
    """The running product along ``axis``; ``exclusive`` starts from 1, ``reverse`` runs from the end."""
    x = x if isinstance(x, Tensor) else _gg.tensor(x)
    need_rank("cumprod", x)
    axis = int(axis) % len(x.shape)
    if reverse:
        x = _gg.flip(x, axis)
    if exclusive:
        widths = [(0, 0)] * len(x.shape)
        widths[axis] = (1, 0)
        index = [builtins.slice(None)] * len(x.shape)
        index[axis] = builtins.slice(0, -1)
        x = _gg.pad(x, widths, constant_values=1)[tuple(index)]
    out = _gg.cumprod(x, axis=axis)
    return _gg.flip(out, axis) if reverse else out


@in_graph
def gather_nd(params: Any, indices: Any, batch_dims: int = 0) -> Tensor:
    """``params[indices[..., 0], indices[..., 1], ...]``: each row of ``indices``' last axis picks an
    element (or a slice) of ``params``."""
    if batch_dims:
        raise NotImplementedError("gather_nd: batch_dims is not supported")
    params, indices = (v if isinstance(v, Tensor) else _gg.tensor(v) for v in (params, indices))
    need_rank("gather_nd", params, indices)
    indices = _gg.astype(indices, int64)
    depth = indices.shape[-1]
    lead = params.shape[:depth]
    if depth is None or builtins.any(d is None for d in lead[1:]):
        raise _gg.ShapeError(f"gather_nd: dimensions 1 to {depth - 1 if depth else '?'} of params (shape "
                             f"{params.shape}) must be known")
    flat = _gg.reshape(params, (-1,) + tuple(params.shape[depth:]))
    linear, stride = None, 1
    for i in builtins.range(depth - 1, -1, -1):
        term = indices[..., i] * stride
        linear = term if linear is None else linear + term
        stride *= lead[i] if i else 1
    return _gg.take(flat, linear, axis=0)


@in_graph
def boolean_mask(tensor: Any, mask: Any, axis: Any = None) -> Tensor:
    """The entries of ``tensor`` where ``mask`` (its leading dimensions, from ``axis``) is true, in order."""
    tensor, mask = (v if isinstance(v, Tensor) else _gg.tensor(v) for v in (tensor, mask))
    need_rank("boolean_mask", tensor, mask)
    axis = int(axis or 0)
    k = len(mask.shape)
    shape = tensor.shape
    if axis + k < len(shape) and builtins.any(d is None for d in shape[axis + k:]) or \
            builtins.any(d is None for d in shape[:axis]):
        raise _gg.ShapeError(f"boolean_mask: the dimensions of tensor (shape {shape}) outside the mask's must be "
                             "known")
    flat = _gg.reshape(tensor, tuple(shape[:axis]) + (-1,) + tuple(shape[axis + k:]))
    where_true = _gg.reshape(_gg.argwhere(_gg.reshape(mask, (-1,))), (-1,))
    return _gg.take(flat, where_true, axis=axis)


@in_graph
def sequence_mask(lengths: Any, maxlen: Any = None, dtype: Any = bool_) -> Tensor:
    """``mask[..., j] = j < lengths[...]``, ``maxlen`` wide (the longest length when not given)."""
    lengths = _gg.astype(lengths, int64)
    if maxlen is None:
        maxlen = _gg.max(lengths)
    if isinstance(maxlen, Tensor) and maxlen.is_symbolic:
        steps = _gg.ops.ArangeOf().apply(_gg.constant(0, dtype=int64), _gg.astype(maxlen, int64),
                                         _gg.constant(1, dtype=int64))
    else:
        steps = _gg.arange(int(maxlen.item() if isinstance(maxlen, Tensor) else maxlen), dtype=int64)
    mask = steps < _gg.expand_dims(lengths, -1)
    dtype = as_dtype(dtype)
    return mask if dtype == bool_ else _gg.astype(mask, dtype)


def Print(input_: Any, data: Any = None, message: Any = None, first_n: Any = None, summarize: Any = None,
          name: Optional[str] = None) -> Tensor:
    """``tf.Print``: ``input_`` passed through. It does not print: graphgrad has no printing op (fetch the
    values with ``sess.run`` instead)."""
    with _gg.get_default_graph().as_default():
        return _gg.identity(input_, name=name)


def print(*inputs: Any, output_stream: Any = None, summarize: Any = None, sep: str = " ", end: str = "\n",
          name: Optional[str] = None) -> Operation:  # noqa: A001
    """``tf.print``: an operation to run (or put in ``control_dependencies``). It does not print:
    graphgrad has no printing op (fetch the values with ``sess.run`` instead)."""
    return _gg.no_op(name=name or "PrintV2")
