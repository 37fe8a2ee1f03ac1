"""Install operators and methods on Tensor, so ``a + b`` and ``x.sum()`` go through the same ops.

Tensor lives in ``core`` and may not import ``ops`` (imports go one way); instead this module,
imported by ``graphgrad.ops``, attaches the op functions to the class. ``TENSOR_METHODS`` is the
list of method names.
"""
from __future__ import annotations

from graphgrad import ops
from graphgrad.core.autograd import note_inplace_write
from graphgrad.core.tensor import Tensor
from graphgrad.ops import elementwise as ew
from graphgrad.ops.inplace import apply_in_place, assign_in_graph, recorded
from graphgrad.ops import unary

_ADD, _SUB, _MUL, _DIV = ew.Add(), ew.Sub(), ew.Mul(), ew.Div()
_NEG = unary.Neg()

#: Tensor methods that are the op function of the same name, called with the tensor first.
TENSOR_METHODS = (
    # elementwise
    "abs", "sign", "exp", "expm1", "log", "log1p", "log2", "sqrt", "rsqrt", "square", "reciprocal", "sin",
    "cos", "tan", "tanh", "sinh", "cosh", "arcsin", "arccos", "arctan", "sigmoid", "relu", "erf", "floor",
    "ceil", "round", "isnan", "isinf", "isfinite", "logical_not", "logical_and", "logical_or", "logical_xor",
    "clip", "clamp", "maximum", "minimum", "pow", "astype", "softplus", "gelu", "silu",
    # reductions
    "sum", "mean", "prod", "max", "min", "argmax", "argmin", "var", "std", "logsumexp", "norm", "all", "any",
    "cumsum", "cumprod", "sum_to", "sum_like",
    # shape
    "reshape", "flatten", "squeeze", "expand_dims", "unsqueeze", "transpose", "permute", "swapaxes", "moveaxis",
    "broadcast_to", "tile", "repeat", "flip", "roll", "take", "take_along_axis", "gather", "tril", "triu",
    "diag", "broadcast_like", "reshape_like",
    # indexing and selection (PyTorch's argument order: dim first, then index)
    "scatter", "scatter_reduce", "masked_select", "nonzero", "diagonal", "diag_embed", "tensor_split", "rot90",
    "mm", "bmm", "addmm", "baddbmm",
    # sorting, order statistics and counting
    "msort", "topk", "kthvalue", "mode", "cummax", "cummin", "logcumsumexp", "quantile", "nanquantile", "histc",
    "bincount", "unique_consecutive",
    # linear algebra and nn
    "matmul", "dot", "softmax", "log_softmax",
    "trace", "outer", "ger", "inner", "kron", "vdot", "mv", "addmv", "addr", "addbmm", "det", "inverse", "logdet",
    "slogdet", "pinverse", "matrix_power", "matrix_exp", "cholesky", "renorm", "dist",
    "cholesky_solve", "cholesky_inverse", "geqrf", "orgqr", "ormqr", "triangular_solve",
)


def _inplace(op):
    """``a op= b``: written into ``a``'s array when no gradient is recorded (an optimizer update under
    ``no_grad``); with ``a`` or ``b`` in the autograd graph, ``a`` becomes ``op(a, b)``, recorded."""

    def method(a, b):
        if recorded(a, b):  # a tensor in the autograd graph: a becomes op(a, b), recorded (as PyTorch)
            return apply_in_place(a, lambda value: op.apply(value, b), f"an in-place {op.name} (x op= y)")
        result = op.apply(a, b)
        if assign_in_graph(a, result, f"an in-place {op.name} (x op= y)"):  # (graph building, e.g. gg.function)
            return a
        a._value()[...] = result._data
        note_inplace_write(a._data, f"an in-place {op.name} (x op= y)")
        return a

    return method


_CORE_SETITEM = Tensor.__setitem__


def _setitem(x, key, value) -> None:
    """``x[key] = value``: written into ``x``'s array, or, with ``x`` or ``value`` in the autograd graph,
    ``x`` becomes ``index_put(x, key, value)``, recorded (PyTorch's ``CopySlices``), so gradients
    reach ``value`` and the rest of ``x``."""
    if isinstance(x, Tensor) and recorded(x, value):
        indices = key if isinstance(key, tuple) else (key,)
        apply_in_place(x, lambda v: ops.index_put(v, indices, value), "an item assignment (x[...] = value)")
        return
    _CORE_SETITEM(x, key, value)


def _install() -> None:
    for name in TENSOR_METHODS:
        setattr(Tensor, name, ops.RAW_FUNCTIONS.get(name) or getattr(ops, name))

    T = Tensor
    T.__add__ = lambda a, b: _ADD.apply(a, b)
    T.__radd__ = lambda a, b: _ADD.apply(b, a)
    T.__sub__ = lambda a, b: _SUB.apply(a, b)
    T.__rsub__ = lambda a, b: _SUB.apply(b, a)
    T.__mul__ = lambda a, b: _MUL.apply(a, b)
    T.__rmul__ = lambda a, b: _MUL.apply(b, a)
    T.__truediv__ = lambda a, b: _DIV.apply(a, b)
    T.__rtruediv__ = lambda a, b: _DIV.apply(b, a)
    T.__floordiv__ = lambda a, b: ew.floor_divide(a, b)
    T.__rfloordiv__ = lambda a, b: ew.floor_divide(b, a)
    T.__mod__ = lambda a, b: ew.remainder(a, b)
    T.__rmod__ = lambda a, b: ew.remainder(b, a)
    T.__pow__ = lambda a, b: ew.pow(a, b)
    T.__rpow__ = lambda a, b: ew.pow(b, a)
    T.__neg__ = lambda a: _NEG.apply(a)
    T.__pos__ = lambda a: a
    T.__abs__ = lambda a: unary.abs(a)
    T.__invert__ = lambda a: unary.invert(a)
    T.__and__ = lambda a, b: ew.bitwise_and(a, b)
    T.__rand__ = lambda a, b: ew.bitwise_and(b, a)
    T.__or__ = lambda a, b: ew.bitwise_or(a, b)
    T.__ror__ = lambda a, b: ew.bitwise_or(b, a)
    T.__lshift__ = lambda a, b: ops.bitwise_left_shift(a, b)
    T.__rlshift__ = lambda a, b: ops.bitwise_left_shift(b, a)
    T.__rshift__ = lambda a, b: ops.bitwise_right_shift(a, b)
    T.__rrshift__ = lambda a, b: ops.bitwise_right_shift(b, a)
    T.__xor__ = lambda a, b: ew.bitwise_xor(a, b)
    T.__rxor__ = lambda a, b: ew.bitwise_xor(b, a)
    # a tensor compared with None or a string is simply not equal (Python's fallback), as in PyTorch
    T.__eq__ = lambda a, b: NotImplemented if b is None or isinstance(b, str) else ew.equal(a, b)
    T.__ne__ = lambda a, b: NotImplemented if b is None or isinstance(b, str) else ew.not_equal(a, b)
    T.__lt__ = lambda a, b: ew.less(a, b)
    T.__le__ = lambda a, b: ew.less_equal(a, b)
    T.__gt__ = lambda a, b: ew.greater(a, b)
    T.__ge__ = lambda a, b: ew.greater_equal(a, b)
    T.__matmul__ = lambda a, b: ops.matmul(a, b)
    T.__rmatmul__ = lambda a, b: ops.matmul(b, a)
    T.__getitem__ = lambda a, key: ops.getitem(a, key)
    T.T = property(lambda a: ops.transpose(a))
    T.__iadd__ = _inplace(_ADD)
    T.__isub__ = _inplace(_SUB)
    T.__imul__ = _inplace(_MUL)
    T.__itruediv__ = _inplace(_DIV)
    T.__setitem__ = _setitem
    T.float = lambda a: ew.astype(a, "float32")
    T.double = lambda a: ew.astype(a, "float64")
    T.half = lambda a: ew.astype(a, "float16")
    T.int = lambda a: ew.astype(a, "int32")
    T.long = lambda a: ew.astype(a, "int64")
    T.bool = lambda a: ew.astype(a, "bool")


_install()
