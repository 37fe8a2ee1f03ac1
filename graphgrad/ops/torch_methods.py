"""Tensor methods under PyTorch's names, each a composition of the op functions.

``methods.py`` installs the methods that are op functions of the same name; this module adds the
ones PyTorch code calls under other names or conventions (``view``, ``expand``, ``masked_fill``,
``split`` by size, in-place ``add_``...). Nothing here computes: every method maps its arguments onto
graphgrad's ops, so it has the ops' gradients and graph mode for free.
"""
from __future__ import annotations

import math
from typing import Any, Sequence, Union

from graphgrad import backend
from graphgrad.core import creation
from graphgrad.core.autograd import is_grad_enabled, note_inplace_write
from graphgrad.core.tensor import Tensor, ValuesIndices, dtype_and_device
from graphgrad.dtypes import as_dtype
from graphgrad.errors import GradError, GraphError
from graphgrad.ops import array, elementwise as ew, reduce, shape
from graphgrad.ops.inplace import apply_in_place, assign_in_graph, recorded


def _sizes(args: tuple) -> tuple:
    """``f(2, 3)`` and ``f((2, 3))`` alike."""
    return tuple(args[0]) if len(args) == 1 and isinstance(args[0], (tuple, list)) else tuple(args)


def view(x: Tensor, *shape_: int) -> Tensor:
    """``x`` with a new shape (``-1`` inferred); PyTorch's ``view``. Shapes: (...) -> shape."""
    return shape.reshape(x, _sizes(shape_))


def view_as(x: Tensor, other: Tensor) -> Tensor:
    """``x`` reshaped to ``other``'s shape."""
    return shape.reshape(x, tuple(other.shape))


def expand(x: Tensor, *sizes: int) -> Tensor:
    """``x`` broadcast to ``sizes`` (``-1`` keeps that dimension). Shapes: (...) -> sizes."""
    sizes = _sizes(sizes)
    lead = len(sizes) - x.ndim
    if lead < 0:
        raise ValueError(f"expand: the number of sizes ({len(sizes)}) must be at least the tensor's dims ({x.ndim})")
    target = tuple(x.shape[i - lead] if s == -1 and i >= lead else s for i, s in enumerate(sizes))
    return shape.broadcast_to(x, target)


def expand_as(x: Tensor, other: Tensor) -> Tensor:
    """``x`` broadcast to ``other``'s shape."""
    return shape.broadcast_to(x, tuple(other.shape))


def t(x: Tensor) -> Tensor:
    """The transpose of a matrix (0-d and 1-d tensors are returned as they are)."""
    if x.ndim > 2:
        raise ValueError(f"t() expects a tensor with at most 2 dimensions, got {x.ndim}; use transpose(dim0, dim1)")
    return x if x.ndim < 2 else shape.transpose(x)


def transpose(x: Tensor, *axes) -> Tensor:
    """PyTorch's ``x.transpose(dim0, dim1)`` swaps two dimensions; NumPy's forms stay: no argument
    reverses the dimensions, a tuple (or three or more ints) is a permutation."""
    if len(axes) == 2 and all(isinstance(a, int) for a in axes):
        return shape.swapaxes(x, axes[0], axes[1])
    return shape.transpose(x, *axes)


def matrix_transpose(x: Tensor) -> Tensor:
    """The last two dimensions swapped (``x.mT``)."""
    return shape.swapaxes(x, -1, -2)


def split_by_size(x: Tensor, split_size_or_sections: Union[int, Sequence[int]], dim: int = 0) -> list:
    """PyTorch's ``split``: pieces of ``split_size`` along ``dim`` (the last one shorter), or pieces of
    the listed sizes (which must add up to the dimension)."""
    n = x.shape[dim]
    if isinstance(split_size_or_sections, int):
        if split_size_or_sections <= 0:
            raise ValueError(f"split: split_size must be positive, got {split_size_or_sections}")
        cuts = list(range(split_size_or_sections, n, split_size_or_sections))
    else:
        sizes = list(split_size_or_sections)
        if sum(sizes) != n:
            raise ValueError(f"split: sizes {sizes} must add up to {n}, the size of dim {dim}")
        cuts = [sum(sizes[:i + 1]) for i in range(len(sizes) - 1)]
    return shape.split(x, cuts, axis=dim)


def unbind(x: Tensor, dim: int = 0) -> tuple:
    """The slices of ``x`` along ``dim``, that dimension removed."""
    dim = dim % x.ndim
    lead = (slice(None),) * dim
    return tuple(x[lead + (i,)] for i in range(x.shape[dim]))


def masked_fill(x: Tensor, mask: Any, value: Any) -> Tensor:
    """``x`` with ``value`` where ``mask`` (broadcast to ``x``) is true."""
    return ew.where(mask, ew.astype(value, x.dtype) if isinstance(value, Tensor) else value, x).astype(x.dtype)


def index_select(x: Tensor, dim: int, index: Any) -> Tensor:
    """The entries of ``x`` at ``index`` (1-d integers) along ``dim``."""
    if x.ndim == 0:  # PyTorch reads a 0-d tensor as a one-element vector along dim 0 / -1 and keeps it 0-d
        shape.normalize_axis("index_select", dim, 0)
        return shape.reshape(shape.take(shape.reshape(x, (1,)), shape.reshape(index, (-1,)), axis=0), ())
    return shape.take(x, index, axis=dim)




def _extremum(values_fn, index_fn):
    def method(x: Tensor, dim: Any = None, keepdim: bool = False, *, axis: Any = None, keepdims: bool = None):
        if isinstance(dim, Tensor):  # x.max(other): the elementwise extremum, as in PyTorch
            return (ew.maximum if values_fn is reduce.max else ew.minimum)(x, dim)
        if dim is None:  # no dim: the extremum of all elements, or NumPy's axis= form (values only)
            return values_fn(x, axis, keepdims=bool(keepdims))
        keep = keepdim if keepdims is None else keepdims
        return ValuesIndices(values_fn(x, dim, keepdims=keep), index_fn(x, dim, keepdims=keep))

    method.__doc__ = (f"PyTorch's ``x.{values_fn.__name__}(dim)``: ``(values, indices)`` along ``dim``; without "
                      f"``dim`` the {values_fn.__name__}imum of all elements (or, with NumPy's ``axis=``, the values).")
    return method


def _spread(reduction):
    def method(x: Tensor, dim: Any = None, unbiased: Any = None, keepdim: bool = False, *, correction: Any = None,
               axis: Any = None, keepdims: Any = None, ddof: Any = None) -> Tensor:
        if isinstance(dim, bool):  # the old positional form x.std(unbiased)
            dim, unbiased = None, dim
        numpy_style = axis is not None or keepdims is not None or ddof is not None
        if ddof is None:
            ddof = (1 if unbiased is None else int(unbiased)) if correction is None else correction
            ddof = 0 if numpy_style and unbiased is None and correction is None else ddof
        return reduction(x, dim if axis is None else axis, bool(keepdim if keepdims is None else keepdims), ddof)

    method.__name__ = reduction.__name__
    method.__doc__ = (f"PyTorch's ``x.{reduction.__name__}(dim, unbiased, keepdim, *, correction)``: Bessel's "
                      "correction (divide by n - 1) unless ``unbiased=False`` or ``correction=0``. Called with "
                      f"NumPy's keywords (``axis=``, ``keepdims=``, ``ddof=``) it is ``gg.{reduction.__name__}`` (ddof 0 by default).")
    return method


def repeat_(x: Tensor, *sizes: int, axis: Any = None) -> Tensor:
    """PyTorch's ``x.repeat(*sizes)``: the whole tensor tiled ``sizes`` times along each dimension
    (``sizes`` may add leading dimensions). NumPy's element-wise repeat is ``gg.repeat`` /
    ``x.repeat_interleave``, or this method called with NumPy's ``axis=`` keyword.
    Shapes: (2, 3), sizes (2, 1) -> (4, 3)."""
    if axis is not None:
        return shape.repeat(x, sizes[0] if len(sizes) == 1 else list(sizes), axis=axis)
    sizes = _sizes(sizes)
    if len(sizes) < x.ndim:
        raise ValueError(f"repeat: the number of repeat sizes ({len(sizes)}) can not be smaller than the "
                         f"tensor's dims ({x.ndim})")
    return shape.tile(x, sizes)


def repeat_interleave(x: Tensor, repeats: Any, dim: Any = None, *, output_size: Any = None) -> Tensor:
    """Each element repeated ``repeats`` times (a number, or one count per element) along ``dim``
    (``None``: of the flattened tensor). Shapes: (2, 3), 2, dim 1 -> (2, 6)."""
    if isinstance(repeats, Tensor):
        repeats = repeats.tolist() if repeats.ndim else int(repeats.item())
    return shape.repeat(x, repeats, axis=dim)


def narrow(x: Tensor, dim: int, start: int, length: int) -> Tensor:
    """The ``length`` entries of ``x`` from ``start`` along ``dim``."""
    index = [slice(None)] * x.ndim
    index[dim] = slice(start, start + length)
    return x[tuple(index)]


def _new(fill):
    def method(x: Tensor, *size, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
        out = fill(_sizes(size), dtype or x.dtype)
        return out.requires_grad_(True) if requires_grad else out

    return method


def new_tensor(x: Tensor, data: Any, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """A new tensor of ``data`` with ``x``'s dtype (unless ``dtype`` is given)."""
    return Tensor(data, dtype=dtype or x.dtype, requires_grad=requires_grad)


def numel(x: Tensor) -> int:
    """The number of elements."""
    return math.prod(x.shape)


def to(x: Tensor, *args, **kwargs) -> Tensor:
    """``x.to(dtype)``, ``x.to(device)``, ``x.to(device, dtype)`` or ``x.to(other)`` (its dtype and device)."""
    dtype, device = dtype_and_device(args, kwargs.get("dtype"), kwargs.get("device"))
    out = x
    if dtype is not None and as_dtype(dtype) != x.dtype:
        out = ew.astype(out, dtype)
    if device is not None and device != out.device:
        if out._data is None:
            raise GraphError("to(device) on a graph tensor: move the inputs before building the graph")
        out = Tensor._wrap(backend.to_device(out._data, device))
    return out


_TYPE_NAMES = {"torch.FloatTensor": "float32", "torch.DoubleTensor": "float64", "torch.HalfTensor": "float16",
               "torch.LongTensor": "int64", "torch.IntTensor": "int32", "torch.ShortTensor": "int16",
               "torch.ByteTensor": "uint8", "torch.CharTensor": "int8", "torch.BoolTensor": "bool"}


def type_(x: Tensor, dtype: Any = None):
    """Without an argument, the dtype's name; with one (a dtype, a name such as ``"torch.LongTensor"``,
    or a typed tensor class such as ``torch.LongTensor``), ``x`` converted to that dtype."""
    if dtype is None:
        return str(x.dtype)
    if isinstance(dtype, str):
        dtype = _TYPE_NAMES.get(dtype, dtype)
    return ew.astype(x, getattr(dtype, "_dtype", None) or dtype)


# ---- in place ---------------------------------------------------------------------------------------------
def _writable(x: Tensor, what: str):
    if x._data is None:
        raise GraphError(f"{what} on a graph tensor: graph tensors are immutable; write x = ... instead")
    if x.requires_grad and is_grad_enabled():
        raise GradError(f"{what}: a tensor that requires grad cannot be modified in place while gradients are "
                        "recorded (a leaf Variable that requires grad is being used in an in-place operation); "
                        "wrap it in `with gg.no_grad():`")
    note_inplace_write(x._data, f"{what}()")
    return x._data


def _store(x: Tensor, result: Tensor, what: str) -> Tensor:
    """Write ``result`` (x's shape) into x's array; while a graph is being built, an assign node for a
    Variable (see ``inplace.assign_in_graph``)."""
    if not assign_in_graph(x, result, what + "()"):
        _writable(x, what)[...] = result._data
    return x


def _inplace_binary(fn):
    def method(x: Tensor, other: Any, *, alpha: Any = None) -> Tensor:
        if alpha is not None:
            other = other * alpha
        if recorded(x, other):  # in the autograd graph: x becomes fn(x, other), recorded (as PyTorch)
            return apply_in_place(x, lambda value: fn(value, other), fn.__name__ + "_()")
        return _store(x, fn(x.detach(), other.detach() if isinstance(other, Tensor) else other), fn.__name__ + "_")

    method.__name__ = fn.__name__ + "_"
    method.__doc__ = f"In place: ``x = {fn.__name__}(x, other)`` (``alpha`` scales ``other``). Returns ``x``."
    return method


def fill_(x: Tensor, value: Any) -> Tensor:
    """Set every element to ``value``. Returns ``x``."""
    _writable(x, "fill_")[...] = value._data if isinstance(value, Tensor) else value
    return x


def copy_(x: Tensor, src: Any) -> Tensor:
    """Copy ``src`` (broadcast to ``x``'s shape, converted to its dtype) into ``x``. Returns ``x``."""
    if isinstance(src, Tensor) and recorded(x, src):  # x becomes src (broadcast, cast), recorded
        return apply_in_place(x, lambda value: shape.broadcast_to(ew.astype(src, x.dtype), tuple(x.shape)), "copy_()")
    if isinstance(src, Tensor) and src._data is None:  # a graph tensor (a graph is being built)
        return _store(x, shape.broadcast_to(ew.astype(src, x.dtype), tuple(x.shape)), "copy_")
    data = _writable(x, "copy_")
    data[...] = backend.to_device(src._data, backend.device_of(data)) if isinstance(src, Tensor) else src
    return x


def clamp_(x: Tensor, min: Any = None, max: Any = None) -> Tensor:
    """Clamp in place to ``[min, max]``. Returns ``x``."""
    if recorded(x, min, max):
        return apply_in_place(x, lambda value: ew.clip(value, min, max), "clamp_()")
    return _store(x, ew.clip(x.detach(), min, max), "clamp_")


def normal_(x: Tensor, mean: float = 0.0, std: float = 1.0, generator=None) -> Tensor:
    """Fill with normal samples. Returns ``x``."""
    return _store(x, creation.normal(mean, std, tuple(x.shape), generator=generator, dtype=x.dtype), "normal_")


def uniform_(x: Tensor, a: float = 0.0, b: float = 1.0, generator=None) -> Tensor:
    """Fill with uniform samples in ``[a, b)``. Returns ``x``."""
    return _store(x, creation.uniform(a, b, tuple(x.shape), generator=generator, dtype=x.dtype), "uniform_")


def contiguous(x: Tensor, memory_format: Any = None) -> Tensor:
    """``x`` itself when its array is laid out row-major, else a row-major copy (in the autograd graph),
    as PyTorch's: writing into the result of ``x.t().contiguous()`` leaves ``x`` alone."""
    data = x._data
    return x if data is None or data.flags.c_contiguous else array.clone(x)


def _install() -> None:
    """Install the methods above (``torch_methods_more`` adds the rest, then every op family's
    ``TORCH_METHODS``)."""
    T = Tensor
    for name, fn in {"view": view, "view_as": view_as, "expand": expand, "expand_as": expand_as, "t": t, "transpose": transpose,
                     "max": _extremum(reduce.max, reduce.argmax), "min": _extremum(reduce.min, reduce.argmin),
                     "split": split_by_size, "unbind": unbind, "masked_fill": masked_fill,
                     "index_select": index_select, "std": _spread(reduce.std), "var": _spread(reduce.var),
                     "repeat": repeat_, "repeat_interleave": repeat_interleave, "numel": numel, "narrow": narrow,
                     "new_zeros": _new(lambda size, dtype: creation.zeros(size, dtype=dtype)),
                     "new_ones": _new(lambda size, dtype: creation.ones(size, dtype=dtype)),
                     "new_empty": _new(lambda size, dtype: creation.zeros(size, dtype=dtype)),
                     "new_full": lambda x, size, fill_value, dtype=None, **kw: creation.full(
                         tuple(size), fill_value, dtype=dtype or x.dtype), "new_tensor": new_tensor, "to": to, "type": type_, "clone": array.clone,
                     "chunk": lambda x, chunks, dim=0: shape.chunk(x, chunks, axis=dim),
                     "eq": ew.equal, "ne": ew.not_equal, "lt": ew.less, "le": ew.less_equal, "gt": ew.greater,
                     "ge": ew.greater_equal, "add_": _inplace_binary(ew.add), "sub_": _inplace_binary(ew.sub),
                     "mul_": _inplace_binary(ew.mul), "div_": _inplace_binary(ew.div), "fill_": fill_,
                     "copy_": copy_, "clamp_": clamp_, "normal_": normal_, "uniform_": uniform_}.items():
        setattr(T, name, fn)
    T.mT = property(matrix_transpose)
    T.dim = lambda x: x.ndim
    T.contiguous = contiguous
    T.cpu = lambda x: to(x, "cpu")
    T.cuda = lambda x, device=None: to(x, device or "cuda")


_install()
