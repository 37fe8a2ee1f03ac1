"""PyTorch's namespace on graphgrad: ``import graphgrad.compat.torch as torch``.

Names PyTorch and graphgrad share map straight through (``torch.exp`` is ``gg.exp``); where PyTorch's
convention differs, the name here follows PyTorch: ``torch.max(x, 1)`` returns ``(values, indices)``,
``torch.cat(xs, dim)``, ``torch.float``/``torch.long``, ``torch.no_grad()``, ``torch.save``/``load``
(``weights_only=`` accepted). Submodules: ``torch.nn`` (with ``functional``, ``init``, ``utils``),
``torch.optim`` (with ``lr_scheduler``), ``torch.utils.data``, ``torch.autograd``, ``torch.cuda``.

:func:`install` makes ``import torch`` itself resolve to this namespace, so a program written for
PyTorch runs unchanged.
"""
from __future__ import annotations

import builtins
import sys
from typing import Any

import graphgrad as _gg
from graphgrad import no_grad, enable_grad, set_grad_enabled, manual_seed  # noqa: F401
from graphgrad import float16, float32, float64, int32, int64, bool_ as bool, uint8, int8, int16  # noqa: F401

float = float32  # noqa: A001
double = float64
half = float16
long = int64
int = int32  # noqa: A001
inference_mode = no_grad


def _bfloat16():
    """``torch.bfloat16``: ml_dtypes' bfloat16 when installed (graphgrad's ops do not compute in it:
    convert to float32 first), else a name that raises when used as a dtype."""
    try:
        import ml_dtypes
        from graphgrad.backend import np

        return np.dtype(ml_dtypes.bfloat16)
    except ImportError:
        return "bfloat16"


bfloat16 = _bfloat16()


class Generator(_gg.Generator):
    """``torch.Generator(device="cpu")``: graphgrad's generator (any graphgrad function's ``generator=``)
    with PyTorch's interface: ``manual_seed(s)`` returns it, ``initial_seed()`` and ``seed()`` are
    methods, ``device`` the device named. Unseeded it starts from PyTorch's default seed, 67280421310721."""

    DEFAULT_SEED = 67280421310721

    def __init__(self, device="cpu") -> None:
        self.device = _gg.device(device)
        super().__init__(self.DEFAULT_SEED)

    @property
    def initial_seed(self):
        """``g.initial_seed()``: the seed the generator was last seeded with."""
        return lambda: self._seed

    @initial_seed.setter
    def initial_seed(self, seed) -> None:  # (graphgrad's Generator.manual_seed records it here)
        self._seed = seed

    def manual_seed(self, seed) -> "Generator":
        return super().manual_seed(builtins.int(seed))

    def seed(self) -> int:
        """Seed from the system's entropy; returns the seed."""
        from graphgrad.backend import np

        seed = builtins.int(np.random.SeedSequence().entropy) % (1 << 63)
        self.manual_seed(seed)
        return seed
atan2 = _gg.arctan2
is_tensor = lambda obj: isinstance(obj, Tensor)  # noqa: E731

#: PyTorch's ``torch.return_types``: the (values, indices) of max/min/sort/topk.
return_types = _gg.ValuesIndices


device = _gg.device

# A program written for PyTorch reads ``p.data`` as a tensor (``p.data.add_(...)``, ``.data.numpy()``):
# from here on Tensor.data is PyTorch's, a detached tensor sharing the array (graphgrad's own code
# reads the array as ``_data``; docs/pytorch.md)
_gg.Tensor._data_as_torch = True


class _TensorType(type):
    """The metaclass of :class:`Tensor`: graphgrad's tensors are instances, and the class's attributes
    are graphgrad Tensor's (``torch.Tensor.add`` is the method). A typed class (``torch.FloatTensor``,
    ``torch.cuda.LongTensor``) holds only the tensors of its dtype and device kind."""

    _dtype = None
    _cuda = False

    def __instancecheck__(cls, obj) -> builtins.bool:
        if not isinstance(obj, _gg.Tensor) or cls._dtype is None:
            return isinstance(obj, _gg.Tensor)
        return obj.dtype == cls._dtype and _on_cuda(obj) == cls._cuda

    @property
    def dtype(cls):
        """``torch.FloatTensor.dtype`` is ``torch.float32``; ``torch.Tensor.dtype`` is the tensors' attribute."""
        return _gg.Tensor.dtype if cls._dtype is None else cls._dtype

    @property
    def is_cuda(cls):
        return _gg.Tensor.is_cuda if cls._dtype is None else cls._cuda

    def __subclasscheck__(cls, other) -> builtins.bool:
        return issubclass(other, _gg.Tensor)

    def __getattr__(cls, name: str) -> Any:
        return getattr(_gg.Tensor, name)


class Tensor(metaclass=_TensorType):
    """``torch.Tensor``: ``isinstance(x, torch.Tensor)`` holds for graphgrad tensors; called, it makes
    a tensor of the default float dtype as PyTorch's legacy constructor does: ``torch.Tensor(3, 4)``
    (zeros here, uninitialized in PyTorch) or ``torch.Tensor([1, 2])``. ``FloatTensor``,
    ``LongTensor``... likewise with their dtypes."""

    _dtype = None

    def __new__(cls, *args, **kwargs):
        dtype = cls._dtype or _gg.get_default_dtype()
        device = kwargs.pop("device", None)
        if kwargs:
            raise TypeError(f"torch.{cls.__name__}(): unexpected keyword arguments {sorted(kwargs)} (only device=; "
                            "torch.tensor(data, dtype=...) takes a dtype)")
        out = cls._made(args, dtype)
        return out if device is None else out.to(device)

    @classmethod
    def _made(cls, args, dtype):
        if args and builtins.all(isinstance(a, builtins.int) for a in args):
            return _gg.zeros(tuple(args), dtype=dtype)
        if builtins.len(args) == 1 and isinstance(args[0], Size):  # torch.FloatTensor(x.size()): that shape
            return _gg.zeros(tuple(args[0]), dtype=dtype)
        if builtins.len(args) == 1 and isinstance(args[0], _gg.Tensor) and cls._dtype is not None \
                and args[0].dtype != cls._dtype:
            raise TypeError(f"torch.{cls.__name__}(tensor): expected a tensor of dtype {cls._dtype}, got "
                            f"{args[0].dtype} (convert with .type(torch.{cls.__name__}) or .to(dtype))")
        if builtins.len(args) == 1 and isinstance(args[0], (tuple, list)) and not args[0]:
            return _gg.zeros((0,), dtype=dtype)
        if builtins.len(args) == 1:
            return _gg.tensor(args[0], dtype=dtype)
        return _gg.zeros((0,), dtype=dtype)


def _on_cuda(x) -> builtins.bool:
    return str(x.device).startswith("cuda")


def _typed_tensor(name: str, dtype, cuda: builtins.bool = False) -> type:
    where = "torch.cuda" if cuda else "torch"
    made = _TensorType(name, (Tensor,), {"_dtype": _gg.dtypes.as_dtype(dtype), "_cuda": cuda,
                                         "__doc__": f"``{where}.{name}``: tensors of dtype {dtype}"
                                                    f"{' on a GPU' if cuda else ''}."})
    made.__module__ = where
    made.__qualname__ = name
    return made


FloatTensor = _typed_tensor("FloatTensor", "float32")
DoubleTensor = _typed_tensor("DoubleTensor", "float64")
HalfTensor = _typed_tensor("HalfTensor", "float16")
LongTensor = _typed_tensor("LongTensor", "int64")
IntTensor = _typed_tensor("IntTensor", "int32")
ShortTensor = _typed_tensor("ShortTensor", "int16")
ByteTensor = _typed_tensor("ByteTensor", "uint8")
CharTensor = _typed_tensor("CharTensor", "int8")
BoolTensor = _typed_tensor("BoolTensor", "bool")
#: the dtype of each legacy tensor type (``x.type()`` is ``"torch." + its name``)
TENSOR_TYPE_DTYPES = {"FloatTensor": "float32", "DoubleTensor": "float64", "HalfTensor": "float16",
                      "LongTensor": "int64", "IntTensor": "int32", "ShortTensor": "int16", "ByteTensor": "uint8",
                      "CharTensor": "int8", "BoolTensor": "bool", "ComplexFloatTensor": "complex64",
                      "ComplexDoubleTensor": "complex128"}
if not isinstance(bfloat16, str):
    BFloat16Tensor = _typed_tensor("BFloat16Tensor", bfloat16)
    TENSOR_TYPE_DTYPES["BFloat16Tensor"] = bfloat16
#: the typed classes of torch.cuda (``torch.cuda.FloatTensor``...): their tensors live on a GPU
CUDA_TENSOR_TYPES = {name: _typed_tensor(name, dtype, cuda=True) for name, dtype in TENSOR_TYPE_DTYPES.items()}
_TYPE_NAME_OF_DTYPE = {_gg.dtypes.as_dtype(dtype): name for name, dtype in TENSOR_TYPE_DTYPES.items()}


def _tensor_type_name(x) -> str:
    """PyTorch's ``x.type()``: ``"torch.FloatTensor"``, ``"torch.cuda.LongTensor"``..."""
    name = _TYPE_NAME_OF_DTYPE.get(x.dtype)
    if name is None:
        raise TypeError(f"x.type(): no PyTorch tensor type for dtype {x.dtype}")
    return ("torch.cuda." if _on_cuda(x) else "torch.") + name


_core_tensor_type = _gg.Tensor.type


def _tensor_type(self, dtype=None, non_blocking: builtins.bool = False, **kwargs):
    """PyTorch's ``Tensor.type``: without ``dtype`` the type's name (``"torch.FloatTensor"``); with one (a
    dtype, a typed class such as ``torch.LongTensor`` / ``torch.cuda.FloatTensor``, or its name as a
    string) the tensor converted to it, or the tensor itself when it is of that type already.
    (graphgrad's own ``Tensor.type`` gives the dtype's name: it is kept outside programs run through
    the facade, whose switch is ``Tensor._data_as_torch``.)"""
    if not self._data_as_torch:
        return _core_tensor_type(self, dtype)
    dtype = kwargs.pop("dst_type", dtype)
    if kwargs:
        raise TypeError(f"type() got unexpected keyword arguments {sorted(kwargs)}")
    if dtype is None:
        return _tensor_type_name(self)
    cuda = None
    if isinstance(dtype, str):
        name = dtype
        prefix, _, short = name.rpartition(".")
        if prefix not in ("torch", "torch.cuda") or short not in TENSOR_TYPE_DTYPES:
            raise ValueError(f"invalid type: {name!r}")
        dtype, cuda = _gg.dtypes.as_dtype(TENSOR_TYPE_DTYPES[short]), prefix == "torch.cuda"
    elif isinstance(dtype, _TensorType):
        if dtype._dtype is None:  # torch.Tensor: the default dtype
            dtype, cuda = _gg.get_default_dtype(), False
        else:
            dtype, cuda = dtype._dtype, dtype._cuda
    else:
        dtype = _gg.dtypes.as_dtype(dtype)
    out = self
    if cuda is not None and cuda != _on_cuda(self):
        out = out.to("cuda" if cuda else "cpu")
    return out if out.dtype == dtype else out.to(dtype)


_gg.Tensor.type = _tensor_type


def set_default_tensor_type(t) -> None:
    """``torch.set_default_tensor_type(torch.DoubleTensor)`` (or its name): the default float dtype
    (and, for a ``torch.cuda`` type, the default device: a GPU, which must be available)."""
    if isinstance(t, str):
        prefix, _, short = t.rpartition(".")
        if prefix not in ("torch", "torch.cuda") or short not in TENSOR_TYPE_DTYPES:
            raise TypeError(f"invalid type: {t!r}")
        dtype, cuda_type = _gg.dtypes.as_dtype(TENSOR_TYPE_DTYPES[short]), prefix == "torch.cuda"
    elif isinstance(t, _TensorType) and t._dtype is not None:
        dtype, cuda_type = t._dtype, t._cuda
    else:
        raise TypeError(f"set_default_tensor_type: expected a tensor type such as torch.FloatTensor, got {t!r}")
    if dtype.kind != "f":
        raise TypeError("only floating-point types are supported as the default type")
    if cuda_type and not _gg.cuda.is_available():
        raise TypeError(f"type {typename_of_class(t)} not available: no GPU (CuPy sees none)")
    _gg.set_default_dtype(dtype)
    _gg.set_default_device("cuda" if cuda_type else "cpu")


def typename_of_class(t) -> str:
    return t if isinstance(t, str) else f"{t.__module__}.{t.__name__}"


def typename(obj) -> str:
    """``torch.typename``: a tensor's type name (``"torch.FloatTensor"``), else the object's class's
    qualified name."""
    if isinstance(obj, _gg.Tensor):
        return _tensor_type_name(obj)
    kind = obj if isinstance(obj, type) else type(obj)
    module = kind.__module__
    return kind.__qualname__ if module in ("builtins", None) else f"{module}.{kind.__qualname__}"


class Size(tuple):
    """``torch.Size``: a shape, a tuple (graphgrad's shapes are plain tuples, which compare equal).
    ``x.size()`` returns one in a program run through the facade, so ``torch.FloatTensor(x.size())``
    makes a tensor of that shape as in PyTorch."""

    def __repr__(self) -> str:
        return f"torch.Size({list(self)})"

    def __getitem__(self, index):
        got = tuple.__getitem__(self, index)
        return Size(got) if isinstance(index, slice) else got

    def numel(self) -> int:
        out = 1
        for d in self:
            out *= d
        return out


class _SizeOrCount(_gg.core.tensor.ElementCount):
    """``x.size`` in a program run through the facade: called, a :class:`Size` (PyTorch's ``x.size()``)."""

    def __call__(self, dim=None):
        return Size(self.shape) if dim is None else self.shape[dim]


_core_size = _gg.Tensor.size


def _size(self):
    count = _core_size.fget(self)
    return _SizeOrCount(count, count.shape) if self._data_as_torch else count


_gg.Tensor.size = property(_size, doc=_core_size.__doc__)

_core_shape = _gg.Tensor.shape


def _shape(self):
    shape = _core_shape.fget(self)
    return Size(shape) if self._data_as_torch and shape is not None else shape


# x.shape is a torch.Size too, so that printing it reads "torch.Size([3, 4])" as in PyTorch (a tuple still)
_gg.Tensor.shape = property(_shape, doc=_core_shape.__doc__)


def _own_array(out):
    """``out`` with an array of its own where it is a read-only view (graphgrad's tile of a tensor along
    new leading dimensions is a broadcast view; PyTorch's ``repeat``/``tile`` always copy, and programs
    write into the result in place: fast_neural_style's ``style.repeat(4, 1, 1, 1)`` then ``div_``)."""
    flags = getattr(out._data, "flags", None)
    return out.clone() if flags is not None and not flags.writeable else out


_core_repeat = _gg.Tensor.repeat


def _repeat(self, *sizes, **kwargs):
    out = _core_repeat(self, *sizes, **kwargs)
    return _own_array(out) if self._data_as_torch else out


_gg.Tensor.repeat = _repeat


def _size_one_dims(x, args: tuple, kwargs: dict) -> tuple:
    """PyTorch's ``squeeze(dim)`` leaves a dimension whose size is not 1 alone (graphgrad's, NumPy's,
    raises): the ``(args, kwargs)`` of a squeeze call with only the named dimensions of size 1."""
    dims = kwargs.pop("dim", kwargs.pop("axis", args[0] if args else None))
    if dims is None:
        return (), kwargs
    many = isinstance(dims, (tuple, list))
    shape = tuple(x.shape)
    kept = tuple(d for d in (dims if many else (dims,)) if shape[d] is None or shape[d] == 1)
    return (kept,), kwargs


def _squeezing(core):
    def squeeze(self, *args, **kwargs):
        if self._data_as_torch:
            args, kwargs = _size_one_dims(self, args, kwargs)
        return core(self, *args, **kwargs)

    squeeze.__name__ = core.__name__
    squeeze.__doc__ = core.__doc__
    return squeeze


_gg.Tensor.squeeze = _squeezing(_gg.Tensor.squeeze)
_gg.Tensor.squeeze_ = _squeezing(_gg.Tensor.squeeze_)


def _reduce_with_indices(value_fn, index_fn):
    def reduce(x, dim=None, keepdim: bool = False, *, out=None):
        if isinstance(dim, Tensor):  # torch.max(a, b): the elementwise maximum
            return (_gg.maximum if value_fn is _gg.max else _gg.minimum)(x, dim)
        if dim is None:
            return value_fn(x)
        return return_types(value_fn(x, dim, keepdims=keepdim), index_fn(x, dim, keepdims=keepdim))

    return reduce


max = _reduce_with_indices(_gg.max, _gg.argmax)  # noqa: A001
min = _reduce_with_indices(_gg.min, _gg.argmin)  # noqa: A001


def cat(tensors, dim: int = 0, *, out=None) -> Tensor:
    """``torch.cat``: concatenate along ``dim`` (into ``out`` when given)."""
    result = _gg.concatenate(list(tensors), axis=dim)
    return result if out is None else _into(out, result, "cat")


concat = cat


def stack(tensors, dim: int = 0, *, out=None) -> Tensor:
    result = _gg.stack(list(tensors), axis=dim)
    return result if out is None else _into(out, result, "stack")


_PICKLE_MAGIC = b"GGPICKLE"


def _is_file_object(f) -> bool:
    """Whether ``f`` is an open file or a buffer (``io.BytesIO``) rather than a path."""
    return hasattr(f, "write") or hasattr(f, "read")


def save(obj: Any, f, **kwargs) -> None:
    """``torch.save``: graphgrad's atomic checkpoint format (safetensors or npz) for tensors and nested
    dicts/lists of them; any other object (a whole module) is pickled, also atomically. ``f`` is a
    path, or an open binary file or buffer (``io.BytesIO``) that the bytes are written to."""
    import os
    import tempfile

    if _is_file_object(f):  # the same bytes as a file at a path, made there and copied
        with tempfile.TemporaryDirectory(prefix="graphgrad-save-") as folder:
            path = os.path.join(folder, "saved.pt")
            save(obj, path)
            with open(path, "rb") as made:
                f.write(made.read())
        return
    try:
        _gg.save(obj, f)
    except TypeError:
        import pickle

        path = os.fspath(f)
        folder = os.path.dirname(os.path.abspath(path))
        handle, tmp = tempfile.mkstemp(dir=folder, prefix=".tmp-")
        try:
            with os.fdopen(handle, "wb") as out:
                out.write(_PICKLE_MAGIC)
                pickle.dump(obj, out)
                out.flush()
                os.fsync(out.fileno())
            os.replace(tmp, path)
        except BaseException:
            if os.path.exists(tmp):
                os.remove(tmp)
            raise


def load(f, map_location=None, weights_only: Any = None, **kwargs) -> Any:
    """``torch.load``: what :func:`save` wrote, or a file PyTorch's ``torch.save`` wrote (its weights:
    tensors, parameters, state dicts and plain containers, as PyTorch's default ``weights_only=True``
    reads them), from a path or an open binary file or buffer (read from its current position, as
    PyTorch does). A pickled object (a whole module) of the facade's own loads with
    ``weights_only=False``, or by default only where each class and function it names is allowed
    (``torch.serialization.add_safe_globals`` / ``safe_globals``: unpickling runs code)."""
    import os

    if _is_file_object(f):
        import tempfile

        data = f.read()
        with tempfile.TemporaryDirectory(prefix="graphgrad-load-") as folder:
            path = os.path.join(folder, "loaded.pt")
            with open(path, "wb") as copy:
                copy.write(data)
            return load(path, map_location=map_location, weights_only=weights_only)
    with open(os.fspath(f), "rb") as handle:
        if handle.read(len(_PICKLE_MAGIC)) == _PICKLE_MAGIC:
            if weights_only is None or weights_only:  # (only allowed globals: torch.serialization)
                return serialization.weights_only_load(handle, os.fspath(f))
            import pickle

            return pickle.load(handle)
    from graphgrad.compat.torch import _pytorch_files

    if _pytorch_files.is_pytorch_zip(os.fspath(f)):  # written by PyTorch's own torch.save
        allowed = {}
        for item in serialization.get_safe_globals():
            obj, name = item if isinstance(item, tuple) else (item, None)
            allowed[name or f"{obj.__module__}.{obj.__qualname__}"] = obj
        return _pytorch_files.load_pytorch_zip(os.fspath(f), allowed)
    return _gg.load(f)


def _into(out: Tensor, result: Tensor, name: str) -> Tensor:
    """PyTorch's ``out=``: ``result`` written into ``out`` (same shape; cast to its dtype), which is returned."""
    if not isinstance(out, _gg.Tensor):
        raise TypeError(f"torch.{name}: out= must be a tensor, got {type(out).__name__}")
    if tuple(out.shape) != tuple(result.shape):
        raise ValueError(f"torch.{name}: out= has shape {tuple(out.shape)} but the result has {tuple(result.shape)} "
                         "(graphgrad does not resize out= tensors: allocate it with the result's shape)")
    with _gg.no_grad():
        out.copy_(result)
    return out


def _writes_out(fn, name: str):
    """``fn`` taking PyTorch's ``out=`` keyword."""
    import functools

    @functools.wraps(fn)
    def function(*args, out=None, **kwargs):
        result = fn(*args, **kwargs)
        return result if out is None else _into(out, result, name)

    return function


#: graphgrad functions that take PyTorch's ``out=`` here (``torch.matmul(a, b, out=c)`` writes into ``c``)
OUT_FUNCTIONS = ("mul", "multiply", "div", "divide", "true_divide", "matmul", "mm", "bmm",
                 "addmm", "pow", "exp", "log", "log2", "log10", "log1p", "expm1", "sin", "cos", "tan", "tanh",
                 "sigmoid", "abs", "sqrt", "rsqrt", "neg", "negative", "reciprocal", "floor", "ceil", "round",
                 "clamp", "clip", "sum", "mean", "prod", "cumsum", "cumprod", "maximum", "minimum", "eq", "ne",
                 "lt", "le", "gt", "ge", "logical_and", "logical_or", "logical_not", "outer", "dot", "mv",
                 "sign", "square", "arange", "eye", "full", "exp2", "erf", "lerp", "remainder", "fmod",
                 "atan2", "arctan2", "argmax", "argmin", "logsumexp", "std", "var", "norm")
for _name in OUT_FUNCTIONS:
    if hasattr(_gg, _name):
        import inspect as _inspect

        try:
            _takes_out = "out" in _inspect.signature(getattr(_gg, _name)).parameters
        except (TypeError, ValueError):
            _takes_out = False
        if not _takes_out and _name not in globals():
            globals()[_name] = _writes_out(getattr(_gg, _name), _name)


def _scaled(name: str):
    """``torch.add`` / ``sub``: ``input + alpha * other`` (PyTorch's ``alpha=``), with ``out=``."""
    made = getattr(_gg, {"sub": "subtract", "subtract": "subtract"}.get(name, name))

    def function(input, other, *, alpha=1, out=None):
        result = made(input, other if alpha == 1 else other * alpha)
        return result if out is None else _into(out, result, name)

    function.__name__ = function.__qualname__ = name
    function.__doc__ = f"``torch.{name}(input, other, alpha=1, out=None)``: ``input {'+' if name == 'add' else '-'} alpha * other``."
    return function


add, sub, subtract = _scaled("add"), _scaled("sub"), _scaled("subtract")


def _factory(name: str):
    """``torch.<name>(*size)``, also ``torch.<name>(size=(2, 3))`` (the pytorch/examples GAT's
    ``torch.empty(size=...)``), with PyTorch's ``layout=``, ``pin_memory=`` and ``memory_format=`` accepted."""
    made = getattr(_gg, name)

    def factory(*size, layout=None, pin_memory: builtins.bool = False, memory_format=None, out=None, **kwargs):
        if "size" in kwargs:
            if size:
                raise TypeError(f"torch.{name}: the size given both positionally and as size=")
            size = (kwargs.pop("size"),)
        result = made(*size, **kwargs)
        return result if out is None else _into(out, result, name)

    factory.__name__ = factory.__qualname__ = name
    factory.__doc__ = made.__doc__
    return factory


empty, zeros, ones, rand, randn = (_factory(n) for n in ("empty", "zeros", "ones", "rand", "randn"))


def randint(low, high=None, size=None, *, generator=None, dtype=None, **kwargs) -> Tensor:
    """``torch.randint(high, size)`` or ``torch.randint(low, high, size)``."""
    if size is None:  # the two-argument form: (high, size)
        low, high, size = 0, low, high
    out = _gg.randint(low, high, tuple(size), generator=generator)
    return out if dtype is None else out.astype(dtype)


def randint_like(input: Tensor, low=0, high=None, *, dtype=None, generator=None, **kwargs) -> Tensor:
    """``torch.randint_like(x, high)`` or ``(x, low, high)``: integers in ``[low, high)`` of ``x``'s shape."""
    if high is None:
        low, high = 0, low
    return randint(low, high, tuple(input.shape), generator=generator, dtype=dtype or input.dtype)


def linspace(start, end, steps: int, *, dtype=None, device=None, requires_grad: bool = False, **kwargs) -> Tensor:
    """``steps`` values evenly spaced from ``start`` to ``end`` (both included)."""
    return _gg.linspace(start, end, builtins.int(steps), dtype=dtype, requires_grad=requires_grad, device=device)


def normal(mean=0.0, std=1.0, size=None, *, generator=None, dtype=None, device=None, requires_grad: bool = False,
           **kwargs) -> Tensor:
    """``torch.normal``: samples with the given mean and standard deviation, each a number or a tensor
    (the result takes their broadcast shape; ``size`` when both are numbers)."""
    if isinstance(mean, Tensor) or isinstance(std, Tensor):
        mean_t = mean if isinstance(mean, Tensor) else _gg.tensor(mean)
        std_t = std if isinstance(std, Tensor) else _gg.tensor(std)
        shape = _gg.broadcast_shapes(tuple(mean_t.shape), tuple(std_t.shape))
        dtype = dtype or (mean_t.dtype if mean_t.dtype.kind == "f" else std_t.dtype)
        eps = _gg.randn(*shape, generator=generator, dtype=dtype, device=device)
        with _gg.no_grad():
            return (eps * std_t + mean_t).astype(dtype)
    return _gg.normal(mean, std, () if size is None else size, generator=generator, dtype=dtype,
                      requires_grad=requires_grad, device=device)


def allclose(input, other, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False) -> bool:
    """``torch.allclose``: whether every element is close (graphgrad's ``isclose``)."""
    return builtins.bool(_gg.isclose(input, other, rtol, atol, equal_nan).all().item())


def numel(x: Tensor) -> int:
    return x.numel()


def empty_like(input: Tensor, **kwargs) -> Tensor:
    """``torch.empty_like``: uninitialized in PyTorch; zeros here (graphgrad's ``zeros_like``)."""
    return _gg.zeros_like(input, **kwargs)


def meshgrid(*tensors, indexing: str = "ij") -> tuple:
    """``torch.meshgrid``: PyTorch's default indexing is 'ij' (graphgrad's, NumPy's, is 'xy')."""
    return tuple(_gg.meshgrid(*tensors, indexing=indexing))


def masked_fill(input: Tensor, mask, value) -> Tensor:
    """``torch.masked_fill``: the Tensor method as a function."""
    return input.masked_fill(mask, value)


#: ``torch.<name>(x, ...)`` is the Tensor method ``x.<name>(...)`` for these names: where PyTorch's function
#: and graphgrad's (NumPy's) differ in meaning, the Tensor method follows PyTorch.
METHOD_FORMS = ("index_select", "narrow", "unbind", "t", "transpose", "split", "std", "var", "repeat_interleave",
                "argsort", "equal", "is_floating_point", "is_complex", "is_nonzero", "swapdims", "swapaxes", "rsub",
                "sort", "median", "nanmedian", "unique", "histogram", "norm", "svd", "qr", "cross", "lu", "lu_solve",
                "sgn", "positive", "angle", "resolve_conj", "resolve_neg", "conj", "conj_physical", "adjoint")


def _method_form(name: str):
    def function(input, *args, **kwargs):
        return getattr(input, name)(*args, **kwargs)

    function.__name__ = name
    function.__doc__ = f"``torch.{name}(x, ...)``: the Tensor method ``x.{name}(...)``."
    return function


for _name in METHOD_FORMS:
    globals()[_name] = _method_form(_name)


def _renamed(name: str, **renames):
    """graphgrad's ``name`` taking PyTorch's keyword names (``torch.unsqueeze(x, dim=1)``,
    ``torch.flatten(x, start_dim=1)``, ``torch.roll(x, shifts=1, dims=0)``) and ``input=``."""
    made = getattr(_gg, name)

    def function(*args, **kwargs):
        if "input" in kwargs:
            args = (kwargs.pop("input"),) + args
        for torch_name, own in renames.items():
            if torch_name in kwargs:
                kwargs[own] = kwargs.pop(torch_name)
        return made(*args, **kwargs)

    function.__name__ = function.__qualname__ = name
    function.__doc__ = made.__doc__
    return function


unsqueeze = _renamed("unsqueeze", dim="axis")


def squeeze(input, *args, **kwargs) -> Tensor:
    """``torch.squeeze(x, dim=None)``: the dimensions of size 1 (of those named) taken out."""
    return input.squeeze(*args, **kwargs)
flatten = _renamed("flatten", start_dim="start_axis", end_dim="end_axis")
chunk, gather = _renamed("chunk", dim="axis"), _renamed("gather", dim="axis")
flip, _tile = _renamed("flip", dims="axis"), _renamed("tile", dims="reps")


def tile(*args, **kwargs) -> Tensor:
    """``torch.tile(x, dims)``: ``x`` tiled (a copy, as PyTorch's; graphgrad's may be a view)."""
    return _own_array(_tile(*args, **kwargs))
roll = _renamed("roll", shifts="shift", dims="axis")
triu, tril = _renamed("triu", diagonal="k"), _renamed("tril", diagonal="k")


def transpose(input, dim0: int, dim1: int) -> Tensor:  # noqa: F811
    """``torch.transpose(x, dim0, dim1)``: swap two dimensions."""
    return input.transpose(dim0, dim1)


def where(condition, input=None, other=None) -> Any:
    """``torch.where(condition, input, other)``; with the condition alone, ``nonzero(as_tuple=True)``."""
    if input is None and other is None:
        return _gg.nonzero(condition, as_tuple=True)
    return _gg.where(condition, input, other)


def range(start, end=None, step=1, *, dtype=None, **kwargs) -> Tensor:  # noqa: A001
    """``torch.range`` (deprecated in PyTorch): ``start`` to ``end`` inclusive, the default float dtype."""
    if end is None:
        start, end = 0, start
    count = builtins.int((end - start) // step) + 1
    return _gg.arange(count, dtype=dtype or _gg.get_default_dtype()) * step + start


def real(input: Tensor) -> Tensor:
    """graphgrad's tensors are real: the tensor itself."""
    return input


def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None, profile=None,
                     sci_mode=None) -> None:
    """How tensors print (``gg.set_printoptions``, PyTorch's arguments)."""
    _gg.set_printoptions(precision=precision, threshold=threshold, edgeitems=edgeitems, linewidth=linewidth,
                         profile=profile, sci_mode=sci_mode)


def compile(model=None, **kwargs):  # noqa: A001
    """``torch.compile``: the model (or function) unchanged, so programs that compile run as written.
    graphgrad compiles a whole training step with ``gg.function`` (see docs/compiler.md)."""
    if model is None:
        return lambda fn: fn
    return model


def trapezoid(y, x=None, *, dx: float = 1.0, dim: int = -1) -> Tensor:
    """The trapezoid rule along ``dim``: ``sum((y[1:] + y[:-1]) / 2 * diff(x))``."""
    y = y if isinstance(y, Tensor) else _gg.tensor(y)
    n = y.shape[dim]
    upper = _gg.narrow(y, dim, 1, n - 1) if hasattr(_gg, "narrow") else y.narrow(dim, 1, n - 1)
    lower = y.narrow(dim, 0, n - 1)
    widths = dx if x is None else _gg.diff(x, dim=dim if x.ndim > 1 else -1)
    return _gg.sum((upper + lower) * widths / 2, axis=dim)


trapz = trapezoid


def cumulative_trapezoid(y, x=None, *, dx: float = 1.0, dim: int = -1) -> Tensor:
    """The running trapezoid rule along ``dim`` (one element shorter)."""
    y = y if isinstance(y, Tensor) else _gg.tensor(y)
    n = y.shape[dim]
    widths = dx if x is None else _gg.diff(x, dim=dim if x.ndim > 1 else -1)
    return _gg.cumsum((y.narrow(dim, 1, n - 1) + y.narrow(dim, 0, n - 1)) * widths / 2, axis=dim)


def unravel_index(indices, shape) -> tuple:
    """The coordinates of flat ``indices`` in a tensor of ``shape`` (a tuple of int64 tensors)."""
    from graphgrad.backend import np

    flat = indices.numpy() if isinstance(indices, Tensor) else np.asarray(indices)
    return tuple(_gg.tensor(c) for c in np.unravel_index(flat, tuple(shape)))


def poisson(input: Tensor, generator=None) -> Tensor:
    """Poisson samples with rates ``input`` (same shape and dtype)."""
    rng = (generator or _gg.default_generator).rng
    return _gg.tensor(rng.poisson(input.numpy()).astype(input.dtype))


_MATMUL_PRECISION = ["highest"]
_DETERMINISTIC = [False]


def set_float32_matmul_precision(precision: str) -> None:
    """Kept and read back; graphgrad's float32 matmuls are always full float32."""
    if precision not in ("highest", "high", "medium"):
        raise ValueError(f"set_float32_matmul_precision: expected 'highest', 'high' or 'medium', got {precision!r}")
    _MATMUL_PRECISION[0] = precision


def get_float32_matmul_precision() -> str:
    return _MATMUL_PRECISION[0]


def use_deterministic_algorithms(mode: bool, *, warn_only: bool = False) -> None:
    """Kept and read back: graphgrad's CPU ops are deterministic already."""
    _DETERMINISTIC[0] = builtins.bool(mode)


def are_deterministic_algorithms_enabled() -> bool:
    return _DETERMINISTIC[0]


def set_num_threads(n: int) -> None:
    """The number of threads graphgrad's kernels use."""
    _gg.backend.parallel.set_num_threads(n)


def get_num_threads() -> int:
    return _gg.backend.parallel.num_threads()


def finfo(dtype=None):
    """The limits of a float dtype (``eps``, ``max``, ``min``, ``tiny``, ``bits``; NumPy's finfo)."""
    from graphgrad.backend import np

    return np.finfo(dtype or _gg.get_default_dtype())


def iinfo(dtype):
    """The limits of an integer dtype (``max``, ``min``, ``bits``; NumPy's iinfo)."""
    from graphgrad.backend import np

    return np.iinfo(dtype)


def einsum(equation: str, *operands) -> Tensor:
    """``torch.einsum(eq, a, b)`` or ``torch.einsum(eq, [a, b])``."""
    if builtins.len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    return _gg.einsum(equation, *operands)


def multinomial(input: Tensor, num_samples: int, replacement: bool = False, *, generator=None) -> Tensor:
    """Class indices drawn from each row of ``input`` (non-negative weights). Without ``replacement``
    a class is drawn at most once per row."""
    if replacement or num_samples == 1:
        return _gg.multinomial(input, num_samples, generator=generator)
    from graphgrad.backend import np

    rng = (generator or _gg.default_generator).rng
    probs = input.numpy().astype(np.float64)
    rows = probs.reshape(-1, probs.shape[-1])
    if num_samples > rows.shape[-1]:
        raise ValueError(f"multinomial: cannot draw {num_samples} samples without replacement from "
                         f"{rows.shape[-1]} categories")
    picks = [rng.choice(rows.shape[-1], num_samples, replace=False, p=row / row.sum()) for row in rows]
    return _gg.tensor(np.asarray(picks).reshape(probs.shape[:-1] + (num_samples,)))


def spmm(input, mat2) -> Tensor:
    """``torch.spmm``: the matrix product (sparse tensors are dense here; torch.sparse)."""
    return _gg.matmul(input, mat2)


def broadcast_shapes(*shapes) -> tuple:
    return _gg.broadcast_shapes(*shapes)


# the submodules, imported before the module __getattr__ below exists (which would answer for them)
from graphgrad.compat.torch import (accelerator, amp, autograd, backends, cuda, distributed, jit, nn,  # noqa: E402,F401
                                    onnx, optim, profiler, random, serialization, special, testing, utils)
from graphgrad.compat.torch import func, sparse  # noqa: E402
from graphgrad.compat.torch import _dynamo  # noqa: E402,F401  (torch._dynamo: config, allow_in_graph...)
from graphgrad.compat.torch.sparse import (sparse_coo_tensor, sparse_csr_tensor, strided, sparse_coo,  # noqa: E402,F401
                                           sparse_csr, sparse_csc, sparse_bsr, sparse_bsc, layout)

# sparse layouts are dense here (torch.sparse): x.to_sparse() and x.to_dense() are x, x.indices() / x.values()
# its nonzero entries; graphgrad's tensors gain these PyTorch methods where they lack them
for _name, _method in sparse.SPARSE_METHODS.items():
    if not hasattr(_gg.Tensor, _name):
        setattr(_gg.Tensor, _name, _method)
from graphgrad.compat.torch.random import fork_rng, get_rng_state, initial_seed, seed, set_rng_state  # noqa: E402,F401
from graphgrad import distributions  # noqa: E402,F401  (torch.distributions)
from graphgrad.compat.torch._more_functions import *  # noqa: E402,F401,F403  (dtype, windows, aliases)


class memory_format:
    """PyTorch's memory layouts (``torch.channels_last``...): accepted by ``.to()``/``.contiguous()``
    and change nothing (NumPy lays arrays out itself)."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"torch.{self.name}"


contiguous_format, channels_last = memory_format("contiguous_format"), memory_format("channels_last")
channels_last_3d, preserve_format = memory_format("channels_last_3d"), memory_format("preserve_format")
autocast = amp.autocast


def __getattr__(name: str) -> Any:
    """Every other name is graphgrad's (``torch.exp``, ``torch.randn``, ``torch.tensor``...); an in-place
    function (``torch.sin_(x)``, ``torch.relu_(x)``) is the Tensor method of that name."""
    try:
        return getattr(_gg, name)
    except AttributeError:
        if name.endswith("_") and not name.startswith("_") and callable(getattr(_gg.Tensor, name, None)):
            return _method_form(name)
        raise AttributeError(f"graphgrad.compat.torch has no {name!r} (PyTorch's torch.{name} is not mapped "
                             "yet; see docs/pytorch.md)") from None


def install() -> None:
    """Make ``import torch`` (and its submodules) resolve to this namespace in this process, and
    ``import torchvision`` to :mod:`graphgrad.compat.torchvision`."""
    from graphgrad.compat.torch import (accelerator, amp, autograd, backends, cuda, distributed, jit, multiprocessing,
                                        nn, onnx, optim, profiler, random, serialization, special, testing, utils)
    from graphgrad.compat.torch.utils import checkpoint, tensorboard
    from graphgrad.compat.torch.nn import functional, init, parallel
    from graphgrad.compat.torch.nn import utils as nn_utils
    from graphgrad.compat.torch.optim import lr_scheduler
    from graphgrad.compat.torch.utils import data

    me = sys.modules[__name__]
    for name, module in {"torch": me, "torch.nn": nn, "torch.nn.functional": functional, "torch.nn.init": init,
                         "torch.nn.utils": nn_utils, "torch.nn.utils.rnn": nn_utils.rnn, "torch.optim": optim, "torch.optim.lr_scheduler": lr_scheduler,
                         "torch.utils": utils, "torch.utils.data": data, "torch.autograd": autograd,
                         "torch.cuda": cuda, "torch.accelerator": accelerator, "torch.special": special,
                         "torch.amp": amp, "torch.backends": backends, "torch.serialization": serialization,
                         "torch.cuda.amp": amp, "torch.linalg": _gg.linalg, "torch.nn.parallel": parallel,
                         "torch.backends.cudnn": backends.cudnn, "torch.backends.cuda": backends.cuda,
                         "torch.backends.mps": backends.mps, "torch.distributed": distributed,
                         "torch.utils.data.distributed": data, "torch.utils.data.sampler": data,
                         "torch.utils.data.dataloader": data, "torch.utils.data.dataset": data,
                         "torch.utils.checkpoint": checkpoint, "torch.utils.benchmark": utils.benchmark, "torch.utils.tensorboard": tensorboard,
                         "torch.jit": jit, "torch.onnx": onnx, "torch.profiler": profiler, "torch.testing": testing,
                         "torch.random": random, "torch.sparse": sparse, "torch.func": func, "torch.nn.modules": nn, "torch.nn.modules.module": nn,
                         "torch.nn.modules.loss": nn, "torch.optim.optimizer": optim,
                         "torch.distributions": _gg.distributions, "torch.distributions.kl": _gg.distributions.kl,
                         **{f"torch.distributions.{m}": _gg.distributions for m in (
                             "normal", "categorical", "bernoulli", "uniform", "multivariate_normal",
                             "lowrank_multivariate_normal", "independent", "transformed_distribution", "log_normal",
                             "exponential", "laplace", "gamma", "beta", "dirichlet", "chi2", "poisson", "binomial",
                             "multinomial", "geometric", "studentT", "cauchy", "half_normal", "half_cauchy", "gumbel",
                             "relaxed_bernoulli", "relaxed_categorical", "mixture_same_family", "one_hot_categorical",
                             "exp_family", "negative_binomial", "pareto", "weibull", "inverse_gamma",
                             "fishersnedecor", "kumaraswamy", "logistic_normal")},
                         "torch.distributions.transforms": _gg.distributions.transforms,
                         "torch.distributions.constraint_registry": _gg.distributions.transforms,
                         "torch.distributions.constraints": _gg.distributions.constraints,
                         "torch.distributions.distribution": _gg.distributions.distribution,
                         "torch.distributions.utils": _gg.distributions.distribution,
                         "torch.autograd.functional": autograd.functional,
                         "torch.autograd.profiler": autograd.profiler,
                         "torch.nn.utils.parametrize": nn_utils.parametrize,
                         "torch.nn.utils.prune": nn_utils.prune,
                         "torch.nn.utils.parametrizations": nn_utils.parametrizations,
                         "torch.multiprocessing": multiprocessing, "torch._dynamo": _dynamo,
                         "torch.nn.attention": nn.attention, "torch.utils._pytree": utils._pytree}.items():
        sys.modules[name] = module
    # torchvision's datasets, transforms and models come with it: a program's `import torchvision`
    # must not load a real torchvision built against a real torch
    from graphgrad.compat import torchvision

    torchvision.install()

