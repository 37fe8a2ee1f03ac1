"""The rest of PyTorch's Tensor methods: the op functions under PyTorch's method names, and the
in-place ``name_`` form of every elementwise and indexing method.

An in-place method computes the out-of-place result and writes it into the tensor's array, with
PyTorch's rules: the result must keep the tensor's shape (no broadcasting the tensor itself up) and
must be castable to its dtype (a float result does not go into an integer tensor); it is refused on
a tensor that requires grad while gradients are recorded, and on graph tensors.
"""
from __future__ import annotations

import math
import mmap
from typing import Any, Callable

from graphgrad import backend
from graphgrad.backend import np
from graphgrad.core import creation
from graphgrad.core.autograd import note_inplace_write
from graphgrad.core.tensor import Tensor
from graphgrad.errors import DTypeError, ShapeError
from graphgrad.ops import elementwise as ew
from graphgrad.core.spec import normalize_axes
from graphgrad.dtypes import float_result
from graphgrad.ops import math_more, reduce, shape, unary
from graphgrad.ops.inplace import apply_in_place, recorded
from graphgrad.ops.torch_methods import _writable, masked_fill


def add(x: Tensor, other: Any, *, alpha: Any = 1) -> Tensor:
    """``x + alpha * other``."""
    return ew.add(x, other if alpha == 1 else other * alpha)


def sub(x: Tensor, other: Any, *, alpha: Any = 1) -> Tensor:
    """``x - alpha * other``."""
    return ew.sub(x, other if alpha == 1 else other * alpha)


def rsub(x: Tensor, other: Any, *, alpha: Any = 1) -> Tensor:
    """``other - alpha * x``."""
    return ew.sub(other, x if alpha == 1 else x * alpha)


def where_(x: Tensor, condition: Any, other: Any) -> Tensor:
    """PyTorch's ``x.where(condition, other)``: ``x`` where ``condition``, else ``other``."""
    return ew.where(condition, x, other)


def equal(x: Tensor, other: Any) -> bool:
    """Whether ``x`` and ``other`` have the same shape and elements (a Python bool)."""
    other = other if isinstance(other, Tensor) else Tensor(other)
    return tuple(x.shape) == tuple(other.shape) and bool(ew.equal(x, other).all().item())


def allclose(x: Tensor, other: Any, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False) -> bool:
    """Whether every element of ``x`` is close to ``other``'s (a Python bool)."""
    from graphgrad.ops.pointwise import isclose

    return bool(isclose(x, other, rtol, atol, equal_nan).all().item())


def polygamma(x: Tensor, n: int) -> Tensor:
    """PyTorch's ``x.polygamma(n)``."""
    return math_more.polygamma(n, x)


def argsort(x: Tensor, dim: int = -1, descending: bool = False, *, stable: bool = False, axis: Any = None) -> Tensor:
    """int64 indices that sort ``x`` along ``dim`` (always stable)."""
    from graphgrad.ops.indexing import argsort as _argsort

    return _argsort(x, dim if axis is None else axis, descending)


def flip(x: Tensor, *dims: Any, axis: Any = None) -> Tensor:
    """PyTorch's ``x.flip(dims)``, also with the dims spread (``x.flip(0, 2)``)."""
    return shape.flip(x, axis if not dims else dims[0] if len(dims) == 1 else dims)


def _strides(x: Tensor) -> tuple:
    """Element strides (PyTorch's ``stride()``): the array's, or the row-major layout's for a graph tensor."""
    if x._data is not None and getattr(x._data, "strides", None) is not None:
        return tuple(s // x._data.itemsize for s in x._data.strides)
    out, step = [], 1
    for d in reversed(x.shape):
        out.append(step)
        step *= d
    return tuple(reversed(out))


def norm(x: Tensor, p: Any = "fro", dim: Any = None, keepdim: bool = False, dtype: Any = None, *,
         ord: Any = None, axis: Any = None, keepdims: Any = None) -> Tensor:
    """PyTorch's ``x.norm(p='fro', dim=None, keepdim=False)``: the ``p``-norm of the elements over
    ``dim`` (all of them by default) taken as one vector ('fro' is 2; ``inf``, ``-inf``, 0, 1 and any
    other p), or ``'nuc'`` over a pair of dims. Called with NumPy's keywords (``ord=``, ``axis=``) it is
    ``gg.norm``. The gradient at zero is 0."""
    if ord is not None or axis is not None or keepdims is not None:
        return reduce.norm(x, ord, axis, bool(keepdims))
    if dtype is not None:
        x = ew.astype(x, dtype)
    if x.dtype.kind != "f":
        x = ew.astype(x, float_result(x.dtype))
    axes = tuple(range(x.ndim)) if dim is None else normalize_axes("norm", dim, x.ndim)
    if p == "nuc":
        return reduce.norm(x, "nuc", axes, keepdim)
    return reduce._vector_norm(x, 2 if p == "fro" else p, axes, keepdim)


def unfold_windows(x: Tensor, dimension: int, size: int, step: int) -> Tensor:
    """PyTorch's ``x.unfold(dimension, size, step)``: every window of ``size`` along ``dimension``,
    ``step`` apart, as a new last dimension. Shapes: (..., n, ...) -> (..., (n - size) // step + 1, ..., size)."""
    from graphgrad.backend import np as _np
    from graphgrad.core.spec import normalize_axis

    dim = normalize_axis("unfold", dimension, max(x.ndim, 1))
    n = x.shape[dim] if x.ndim else 1
    if size > n or step <= 0:
        raise ValueError(f"unfold: size {size} must be at most {n} and step {step} positive")
    starts = _np.arange(0, n - size + 1, step)
    index = Tensor((starts[:, None] + _np.arange(size)[None, :]).reshape(-1))
    picked = shape.take(x, index, axis=dim)  # (..., windows * size, ...)
    windows = picked.reshape(tuple(x.shape[:dim]) + (len(starts), size) + tuple(x.shape[dim + 1:]))
    return shape.moveaxis(windows, dim + 1, -1)


def fill_diagonal_(x: Tensor, fill_value: Any, wrap: bool = False) -> Tensor:
    """Fill the main diagonal (of a matrix, or of an n-d tensor with equal sizes) in place. Returns ``x``."""
    from graphgrad.backend import np as _np

    data = _writable(x, "fill_diagonal_")
    if data.ndim == 2:
        rows, cols = data.shape
        limit = rows if wrap else min(rows, cols)
        positions = _np.arange(0, limit * cols, cols + 1)
        positions = positions[positions < data.size]
        data[positions // cols, positions % cols] = fill_value  # (not data.reshape(-1): a copy for a transposed view)
        return x
    if len(set(data.shape)) != 1:
        raise ValueError(f"fill_diagonal_: all dimensions must be equal for an n-d tensor, got {data.shape}")
    index = tuple(_np.arange(data.shape[0]) for _ in range(data.ndim))
    data[index] = fill_value
    return x


def angle(x: Tensor) -> Tensor:
    """The argument of each (real) element: 0 for ``x >= 0``, pi for ``x < 0`` (NaN stays NaN)."""
    x = x if x.dtype.kind == "f" else ew.astype(x, float_result(x.dtype))
    return ew.where(ew.less(x, 0), math.pi, 0.0).astype(x.dtype) + x * 0


def _real(x: Tensor) -> Tensor:
    """The real part: ``x`` itself for a real tensor; of a complex one (eigenvalues, FFTs), a real tensor
    (not differentiated: graphgrad's autograd is real-valued)."""
    return Tensor(x._data.real) if x.dtype.kind == "c" and x._data is not None else x


def _imag(x: Tensor) -> Tensor:
    """The imaginary part of a complex tensor (PyTorch refuses it on a real one)."""
    if x.dtype.kind != "c":
        raise TypeError("imag is not implemented for tensors with non-complex dtypes")
    return Tensor(x._data.imag)


def share_memory_(x: Tensor) -> Tensor:
    """Move a CPU tensor's array into memory shared with the processes forked after the call (an
    anonymous shared mapping), so that in-place updates made by either side are seen by the other:
    PyTorch's Hogwild! training, ``model.share_memory()`` then ``torch.multiprocessing`` workers.
    Returns ``x``; a tensor shared already, empty, or on a device is left as it is."""
    data = x._data
    if type(data) is not np.ndarray or not data.size or is_shared(x):
        return x
    shared = np.frombuffer(mmap.mmap(-1, data.nbytes), dtype=data.dtype).reshape(data.shape)
    shared[...] = data
    x._data = shared
    return x


def is_shared(x: Tensor) -> bool:
    """Whether the tensor's array lives in memory shared between processes (see :func:`share_memory_`)."""
    base = x._data
    while isinstance(base, np.ndarray):
        base = base.base
    return isinstance(base.obj if isinstance(base, memoryview) else base, mmap.mmap)

def _element_size(x: Tensor) -> int:
    return x.dtype.itemsize


#: PyTorch method name -> the op function it is (called with the tensor first).
METHODS: dict = {
    "add": add, "sub": sub, "subtract": sub, "rsub": rsub, "mul": ew.mul, "multiply": ew.mul, "div": math_more.div,
    "divide": math_more.div, "true_divide": ew.div, "floor_divide": ew.floor_divide, "remainder": ew.remainder,
    "neg": unary.neg, "negative": unary.neg, "positive": lambda x: x, "absolute": unary.abs, "sgn": unary.sign,
    "fix": unary.trunc, "trunc": unary.trunc, "acos": unary.arccos, "arccos": unary.arccos, "asin": unary.arcsin,
    "arcsin": unary.arcsin, "atan": unary.arctan, "arctan": unary.arctan, "acosh": unary.arccosh,
    "arccosh": unary.arccosh, "asinh": unary.arcsinh, "arcsinh": unary.arcsinh, "atanh": unary.arctanh,
    "arctanh": unary.arctanh, "atan2": ew.arctan2, "arctan2": ew.arctan2, "greater": ew.greater,
    "greater_equal": ew.greater_equal, "less": ew.less, "less_equal": ew.less_equal, "not_equal": ew.not_equal,
    "bitwise_and": ew.bitwise_and, "bitwise_or": ew.bitwise_or, "bitwise_xor": ew.bitwise_xor,
    "bitwise_not": unary.invert, "where": where_, "equal": equal, "allclose": allclose, "polygamma": polygamma,
    "argsort": argsort, "moveaxis": shape.moveaxis, "norm": norm, "type_as": lambda x, other: ew.astype(x, other.dtype),
    "is_floating_point": lambda x: x.dtype.kind == "f", "is_complex": lambda x: x.dtype.kind == "c",
    "is_signed": lambda x: x.dtype.kind in "fic", "is_nonzero": lambda x: bool(x.item()),
    "is_contiguous": lambda x, memory_format=None: x._data is None or bool(x._data.flags.c_contiguous), "element_size": _element_size,
    "nelement": lambda x: math.prod(x.shape), "ndimension": lambda x: x.ndim,
    "byte": lambda x: ew.astype(x, "uint8"), "char": lambda x: ew.astype(x, "int8"),
    "short": lambda x: ew.astype(x, "int16"), "reshape_as": lambda x, other: shape.reshape(x, tuple(other.shape)),
    "is_same_size": lambda x, other: tuple(x.shape) == tuple(other.shape),
    "get_device": lambda x: -1 if x.device.type == "cpu" else x.device.index,
    "is_pinned": lambda x, device=None: False, "pin_memory": lambda x, device=None: x,
    "share_memory_": share_memory_, "is_shared": is_shared, "is_inference": lambda x: False, "is_conj": lambda x: False,
    "is_neg": lambda x: False, "conj": lambda x: x, "resolve_conj": lambda x: x, "resolve_neg": lambda x: x,
    "conj_physical": lambda x: x, "real": property(_real), "imag": property(_imag), "positive": lambda x: x, "angle": angle,
    "adjoint": lambda x: shape.swapaxes(x, -1, -2), "sum_to_size": lambda x, *size: reduce.sum_to(x, _shape_args(size)),
    "split_with_sizes": lambda x, split_sizes, dim=0: x.split(list(split_sizes), dim),
    "unfold": unfold_windows, "flip": flip, "fill_diagonal_": fill_diagonal_, "hardshrink": None, "prelu": None,
    "cov": None, "corrcoef": None, "diagflat": None, "multinomial": None, "retains_grad": None,
}


def _shape_args(size: tuple) -> tuple:
    return tuple(size[0]) if len(size) == 1 and isinstance(size[0], (tuple, list)) else tuple(size)

#: Methods that are the op function of the same name in ``math_more`` / ``shape_more`` / others.
SAME_NAME = (
    "addcdiv", "addcmul", "aminmax", "clamp_max", "clamp_min", "copysign", "count_nonzero", "deg2rad", "rad2deg",
    "diff", "digamma", "erfc", "erfinv", "float_power", "fmax", "fmin", "frac", "gcd", "lcm", "heaviside", "hypot",
    "isneginf", "isposinf", "isreal", "ldexp", "lgamma", "logit", "mvlgamma", "nanmean", "nansum", "nextafter",
    "signbit", "sinc", "xlogy", "bitwise_left_shift", "bitwise_right_shift", "movedim", "swapdims", "unflatten",
    "ravel", "select", "select_scatter", "slice_scatter", "diagonal_scatter", "take_along_dim", "index_add",
    "index_copy", "index_fill", "index_put", "masked_scatter", "fliplr", "flipud", "hsplit", "vsplit", "dsplit",
    "argwhere", "amax", "amin", "isclose", "exp2", "log10", "logaddexp", "logaddexp2", "lerp", "fmod",
    "nan_to_num", "isin", "logical_and", "logical_or", "logical_xor", "logical_not", "scatter_add",
)

#: Methods with an in-place ``name_`` form (computed out of place, then written into the tensor).
INPLACE = (
    "abs", "absolute", "acos", "arccos", "asin", "arcsin", "atan", "arctan", "acosh", "arccosh", "asinh", "arcsinh",
    "atanh", "arctanh", "atan2", "arctan2", "ceil", "floor", "round", "trunc", "fix", "frac", "cos", "cosh", "sin",
    "sinh", "tan", "tanh", "exp", "exp2", "expm1", "log", "log10", "log1p", "log2", "sqrt", "rsqrt", "square",
    "reciprocal", "sigmoid", "relu", "neg", "negative", "sign", "sgn", "erf", "erfc", "erfinv", "lgamma",
    "digamma", "polygamma", "deg2rad", "rad2deg", "logit", "nan_to_num", "sinc", "i0", "mvlgamma", "pow",
    "float_power", "fmod", "remainder", "lerp", "hypot", "copysign", "xlogy", "ldexp", "nextafter", "gcd", "lcm",
    "addcmul", "addcdiv", "clamp_min", "clamp_max", "clip", "heaviside", "true_divide", "divide", "multiply",
    "subtract", "floor_divide", "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not", "bitwise_left_shift",
    "bitwise_right_shift", "logical_and", "logical_or", "logical_xor", "logical_not", "eq", "ne", "lt", "le", "gt",
    "ge", "greater", "greater_equal", "less", "less_equal", "not_equal", "masked_fill", "masked_scatter",
    "index_add", "index_copy", "index_fill", "index_put", "scatter", "scatter_add", "scatter_reduce", "tril", "triu",
    "cumsum", "cumprod", "rsub", "addmm", "addbmm", "addmv", "addr", "baddbmm", "renorm",
)

#: In-place methods that change the tensor's shape (they rebind its array).
RESHAPING = ("unsqueeze", "squeeze", "t", "transpose", "swapaxes", "swapdims")


def _inplace(name: str, fn: Callable) -> Callable:
    def method(x: Tensor, *args, **kwargs) -> Tensor:
        if recorded(x, *args, *kwargs.values()):  # in the autograd graph: x becomes x.name(...), recorded
            return apply_in_place(x, lambda value: fn(value, *args, **kwargs), name + "_()")
        data = _writable(x, name + "_")
        args = tuple(a.detach() if isinstance(a, Tensor) else a for a in args)
        result = fn(x.detach(), *args, **kwargs)._data
        if result.dtype.kind in "fc" and data.dtype.kind in "biu":
            raise DTypeError(f"{name}_: the result type {result.dtype} can't be written into a {data.dtype} "
                             f"tensor in place; use x = x.{name}(...) or convert x first")
        if result.shape != data.shape:
            if backend.np.broadcast_shapes(result.shape, data.shape) != data.shape:
                raise ShapeError(f"{name}_: the result of shape {result.shape} does not fit the tensor of shape "
                                 f"{data.shape} being written in place")
        data[...] = result
        return x

    method.__name__ = name + "_"
    method.__doc__ = f"In place: ``x = x.{name}(...)`` written into ``x``'s array. Returns ``x``."
    return method


def _reshaping_inplace(name: str) -> Callable:
    def method(x: Tensor, *args, **kwargs) -> Tensor:
        _writable(x, name + "_")
        x._data = getattr(Tensor, name)(x.detach(), *args, **kwargs)._data
        note_inplace_write(x, name + "_()")
        return x

    method.__name__ = name + "_"
    method.__doc__ = f"In place: ``x`` becomes ``x.{name}(...)`` (a new shape for the same tensor). Returns ``x``."
    return method


def zero_(x: Tensor) -> Tensor:
    """Set every element to 0. Returns ``x``."""
    _writable(x, "zero_")[...] = 0
    return x


def bernoulli_(x: Tensor, p: Any = 0.5, *, generator=None) -> Tensor:
    """Fill with 0/1 samples that are 1 with probability ``p``. Returns ``x``."""
    data = _writable(x, "bernoulli_")
    u = creation.uniform(0.0, 1.0, tuple(x.shape), generator=generator, dtype="float64")._data
    prob = p._data if isinstance(p, Tensor) else p
    data[...] = (u < prob).astype(data.dtype)
    return x


def exponential_(x: Tensor, lambd: float = 1.0, *, generator=None) -> Tensor:
    """Fill with exponential samples of rate ``lambd``. Returns ``x``."""
    data = _writable(x, "exponential_")
    u = creation.uniform(0.0, 1.0, tuple(x.shape), generator=generator, dtype="float64")._data
    data[...] = -backend.np.log1p(-u) / lambd
    return x


def random_(x: Tensor, from_: int = 0, to: Any = None, *, generator=None) -> Tensor:
    """Fill with integers uniform in ``[from_, to)`` (``random_(to)``: ``[0, to)``). Returns ``x``."""
    data = _writable(x, "random_")
    low, high = (0, from_) if to is None and from_ else (from_, to if to is not None else 2 ** 24)
    data[...] = creation.randint(low, high, tuple(x.shape), generator=generator)._data
    return x


def _install() -> None:
    from graphgrad import ops

    for name, fn in METHODS.items():
        if fn is None:  # the op function of the same name
            fn = ops.RAW_FUNCTIONS.get(name)
            if fn is None:
                continue
        setattr(Tensor, name, fn)
    Tensor.itemsize = property(lambda x: x.dtype.itemsize)
    Tensor.nbytes = property(lambda x: x.dtype.itemsize * math.prod(x.shape))
    Tensor.H = property(lambda x: shape.swapaxes(x, -1, -2) if x.ndim == 2 else x)
    Tensor.mH = property(lambda x: shape.swapaxes(x, -1, -2))
    Tensor.stride = lambda x, dim=None: _strides(x) if dim is None else _strides(x)[dim]
    Tensor.storage_offset = lambda x: 0
    Tensor.data_ptr = lambda x: int(x._data.__array_interface__["data"][0]) if x._data is not None else 0
    for name in SAME_NAME:
        setattr(Tensor, name, ops.RAW_FUNCTIONS.get(name) or getattr(ops, name))
    for name in INPLACE:
        fn = getattr(Tensor, name, None)
        if fn is None:
            fn = ops.RAW_FUNCTIONS.get(name)
        if fn is not None and not hasattr(Tensor, name + "_"):
            setattr(Tensor, name + "_", _inplace(name, fn))
    for name in RESHAPING:
        setattr(Tensor, name + "_", _reshaping_inplace(name))
    Tensor.masked_fill_ = _inplace("masked_fill", masked_fill)
    Tensor.zero_ = zero_
    Tensor.bernoulli_ = bernoulli_
    Tensor.exponential_ = exponential_
    Tensor.random_ = random_
    Tensor.is_cuda = property(lambda x: x.device.type == "cuda")
    Tensor.is_cpu = property(lambda x: x.device.type == "cpu")
    for kind in ("xpu", "mps", "meta"):  # devices graphgrad does not run on (programs test for them)
        setattr(Tensor, f"is_{kind}", property(lambda x, kind=kind: x.device.type == kind))
    for layout in ("is_sparse", "is_quantized", "is_mkldnn", "is_nested"):  # layouts graphgrad does not have
        setattr(Tensor, layout, property(lambda x: False))
    # last, every op family's TORCH_METHODS: methods whose PyTorch meaning differs from the op function's
    for family in ops.FAMILIES:
        for name, fn in getattr(ops._families[family], "TORCH_METHODS", {}).items():
            setattr(Tensor, name, fn)
    for name, (renames, spread) in TORCH_KEYWORDS.items():
        setattr(Tensor, name, _torch_keywords(getattr(Tensor, name), renames, spread))


#: PyTorch's keyword names for methods whose graphgrad parameters are named otherwise: ``{torch name:
#: graphgrad name}``, and the keywords whose value is spread as positional arguments (``x.permute(dims=...)``)
TORCH_KEYWORDS = {
    "unsqueeze": ({"dim": "axis"}, ()), "squeeze": ({"dim": "axis"}, ()),
    "flatten": ({"start_dim": "start_axis", "end_dim": "end_axis"}, ()),
    "flip": ({"dims": "axis"}, ()), "roll": ({"shifts": "shift", "dims": "axis"}, ()),
    "gather": ({"dim": "axis"}, ()), "tile": ({"dims": "reps"}, ()),
    "triu": ({"diagonal": "k"}, ()), "tril": ({"diagonal": "k"}, ()),
    "transpose": ({}, ("dim0", "dim1")), "permute": ({}, ("dims",)), "view": ({}, ("size",)),
    "expand": ({}, ("size",)), "reshape": ({}, ("shape",)),
}


def _torch_keywords(fn: Callable, renames: dict, spread: tuple) -> Callable:
    """``fn`` that also takes PyTorch's keyword names (``x.unsqueeze(dim=0)``, ``x.transpose(dim0=0,
    dim1=1)``, ``x.view(size=(2, 3))``); a call without keywords goes straight through."""

    def method(x, *args, **kwargs):
        if kwargs:
            for torch_name, own in renames.items():
                if torch_name in kwargs:
                    kwargs[own] = kwargs.pop(torch_name)
            for torch_name in spread:
                if torch_name in kwargs:
                    value = kwargs.pop(torch_name)
                    args += tuple(value) if isinstance(value, (list, tuple)) and len(spread) == 1 else (value,)
        return fn(x, *args, **kwargs)

    method.__name__, method.__qualname__, method.__doc__ = fn.__name__, fn.__qualname__, fn.__doc__
    return method


_install()
