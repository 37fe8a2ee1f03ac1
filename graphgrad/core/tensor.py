"""Tensor: an n-d array (NumPy or CuPy) plus what autograd needs to know about it.

A Tensor is small on purpose (``__slots__``): eager overhead per op matters. Operators and most
methods (``+``, ``@``, ``sum``, ``reshape``...) are installed by ``graphgrad.ops`` so that every
computation goes through one op definition; this module only defines storage, conversion and the
autograd entry points.
"""
from __future__ import annotations

from collections import namedtuple
from typing import Any, Callable, Optional

from graphgrad import backend, config
from graphgrad.backend import np
from graphgrad.core.spec import TensorSpec
from graphgrad.errors import GradError, GraphError


def to_array(data: Any, dtype=None, device: Optional[str] = None):
    """Convert ``data`` (Tensor, array, scalar, nested list) to a backend array.

    Python floats become ``config.default_float`` (float32), Python ints int64, bools bool;
    NumPy/CuPy arrays keep their dtype unless ``dtype`` is given, and so do float tensors, arrays and
    NumPy scalars inside a nested list (the widest float of them and the default float).
    """
    if isinstance(data, Tensor):
        data = data._data
        if data is None:
            raise GraphError("a symbolic tensor has no value; run it in a Session first")
    if backend.is_array(data):
        array = data
        if not hasattr(array, "ndim") or isinstance(array, np.generic):
            array = np.asarray(array)
    else:
        typed: set = set()
        try:
            array = np.asarray(_unwrap_nested(data, typed))
        except ValueError as exc:  # ragged nesting: [[1, 2], [3]]
            from graphgrad.errors import ArgumentError

            raise ArgumentError(f"cannot make a tensor from {type(data).__name__} data whose nested sequences "
                                f"differ in length (every row must have the same shape): {exc}") from None
        if dtype is None and array.dtype.kind == "f":
            # Python floats count as the default float, and a float tensor, array or NumPy scalar as its
            # own dtype; the widest wins (as PyTorch: torch.tensor([np.float64(0.5)]) is float64)
            array = array.astype(np.result_type(*typed) if typed else config.default_float)
        elif dtype is None and array.dtype.kind in "iu" and array.dtype != config.default_int:
            array = array.astype(config.default_int)
        elif array.dtype.kind not in "biuf":
            from graphgrad.errors import ArgumentError

            raise ArgumentError(f"cannot make a tensor from {type(data).__name__} of dtype {array.dtype}: "
                                "expected numbers, bools or nested lists of them")
    if dtype is not None:
        from graphgrad.dtypes import as_dtype

        dtype = as_dtype(dtype)
        if array.dtype != dtype:
            array = array.astype(dtype)
    if device is None:
        device = config.default_device
    if device is not None:
        array = backend.to_device(array, device)
    return array


def dtype_and_device(args: tuple, dtype=None, device=None) -> tuple:
    """The ``(dtype, device)`` a PyTorch-style ``.to(...)`` call asks for: its positional ``args`` may
    be a dtype, a device (a string such as ``"cpu"``/``"cuda:0"``, or an object whose ``str()`` is
    one), or a tensor (its dtype and device). ``"cuda"`` means ``"cuda:0"``; absent parts are ``None``."""
    for a in args:
        if isinstance(a, Tensor):
            dtype, device = a.dtype, a.device
        elif isinstance(a, str) or type(a).__name__ == "device":
            device = a
        elif a is not None:
            dtype = a
    if device is not None:
        from graphgrad.core.device import device as as_device

        device = as_device(device)
    return dtype, device


def host_array(value: Any):
    """``value`` (a Tensor, a NumPy/CuPy array, a scalar or a nested list) as a NumPy array on the host."""
    if isinstance(value, Tensor):
        return value.numpy()
    if backend.is_array(value):
        return backend.to_numpy(value)
    return np.asarray(value)


def _unwrap_nested(data, typed: set):
    # A list of tensors (e.g. [t1, t2]) becomes a list of arrays so np.asarray can stack it; the float
    # dtypes of its tensors, NumPy arrays and NumPy scalars are collected in `typed` (they keep theirs)
    if isinstance(data, (list, tuple)):
        return [_unwrap_nested(d, typed) for d in data]
    if isinstance(data, Tensor):
        data = backend.to_numpy(data._data)
    if isinstance(data, (np.ndarray, np.generic)):
        if data.dtype.kind == "f":
            typed.add(data.dtype)
    elif isinstance(data, float):
        typed.add(np.dtype(config.default_float))  # (a Python float)
    return data


class ElementCount(int):
    """A tensor's element count that can also be called like PyTorch's ``Tensor.size``:
    ``x.size`` is ``6`` for a (2, 3) tensor, ``x.size()`` is ``(2, 3)`` and ``x.size(-1)`` is ``3``."""

    def __new__(cls, count: int, shape: tuple) -> "ElementCount":
        value = super().__new__(cls, count)
        value.shape = tuple(shape)
        return value

    def __call__(self, dim: Optional[int] = None):
        return self.shape if dim is None else self.shape[dim]


class Tensor:
    """An n-dimensional array with autograd.

    Attributes:
        data: the backend array (``None`` for a symbolic tensor of a graph); in a program run
            through ``graphgrad.compat.torch``, PyTorch's ``.data`` (see :attr:`data`).
        requires_grad: whether gradients flow to this tensor.
        grad: the accumulated gradient (a Tensor of the same shape), or ``None``.

    Examples:
        >>> x = gg.tensor([1.0, 2.0], requires_grad=True)
        >>> (x * x).sum().backward()
        >>> x.grad
        tensor([2., 4.])
    """

    # _used (set only once an op recorded for autograd took the tensor as an input; unset reads as
    # False): an in-place op then keeps the earlier version for those ops (core.autograd._VERSIONS)
    __slots__ = ("_data", "requires_grad", "grad", "_node", "_spec", "_hooks", "name", "_used", "__weakref__")
    __array_ufunc__ = None  # NumPy defers `ndarray + Tensor` to Tensor.__radd__
    __hash__ = object.__hash__  # tensors are dict keys by identity, even though == is elementwise
    #: True once ``graphgrad.compat.torch`` is imported: :attr:`data` is then PyTorch's (a detached
    #: tensor sharing the array) for the programs written for PyTorch that it runs
    _data_as_torch = False

    @property
    def data(self):
        """The backend array (NumPy or CuPy; ``None`` for a symbolic tensor of a graph). Assigning
        replaces it (a tensor given is taken for its array).

        In a program run through ``graphgrad.compat.torch`` (once it is imported), PyTorch's ``.data``
        instead: a tensor sharing this one's array, cut out of autograd, so that ``p.data.add_(...)``,
        ``m.weight.data.normal_(0, 0.02)`` and ``x.data.numpy()`` work as written for PyTorch.
        graphgrad's own code reads the array as ``_data`` and is the same in both."""
        data = self._data
        if self._data_as_torch and data is not None:
            return Tensor._wrap(data)
        return data

    @data.setter
    def data(self, value) -> None:
        self._data = value._data if isinstance(value, Tensor) else value

    def __init__(self, data: Any, dtype=None, requires_grad: bool = False, device: Optional[str] = None):
        self._data = to_array(data, dtype, device)
        self.grad = None
        self._node = None
        self._spec = None
        self._hooks = None
        self.name = None
        self.requires_grad = False
        if requires_grad:
            self.requires_grad_(True)

    @classmethod
    def _wrap(cls, data, node=None, requires_grad: bool = False) -> "Tensor":
        """Fast constructor for op outputs: no conversion or checks."""
        t = object.__new__(cls)
        t._data = data
        t.requires_grad = requires_grad
        t.grad = None
        t._node = node
        t._spec = None
        t._hooks = None
        t.name = None
        return t

    @classmethod
    def symbolic(cls, spec: TensorSpec, node=None, requires_grad: bool = False, name: Optional[str] = None):
        """A tensor with a spec but no value (a graph's placeholder or node output)."""
        t = cls._wrap(None, node, requires_grad)
        t._spec = spec
        t.name = name
        return t

    # ---- attributes -------------------------------------------------------------------------
    @property
    def is_symbolic(self) -> bool:
        return self._data is None

    @property
    def spec(self) -> TensorSpec:
        return self._spec if self._data is None else TensorSpec(self._data.shape, self._data.dtype)

    @property
    def shape(self) -> tuple:
        d = self._data
        return d.shape if d is not None else self._spec.shape

    @property
    def dtype(self):
        d = self._data
        return d.dtype if d is not None else self._spec.dtype

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> "ElementCount":
        """The number of elements (NumPy's ``size``); calling it gives PyTorch's ``size()``: the shape,
        or ``size(dim)`` one dimension. ``numel()`` is the element count under PyTorch's name."""
        n = 1
        shape = self.shape
        for d in shape:
            if d is None:
                raise GraphError("size of a tensor with unknown dimensions is not defined before run time")
            n *= d
        return ElementCount(n, shape)

    @property
    def device(self) -> str:
        """The :class:`graphgrad.device` the array lives on (a ``str``: ``"cpu"`` or ``"cuda:N"``)."""
        from graphgrad.core.device import CPU, of_array

        return CPU if self._data is None or isinstance(self._data, np.ndarray) else of_array(self._data)

    @property
    def is_leaf(self) -> bool:
        return self._node is None

    @property
    def grad_fn(self):
        """The autograd node that produced this tensor (``None`` for leaves)."""
        return self._node

    # ---- conversion -------------------------------------------------------------------------
    def _value(self):
        if self._data is None:
            raise GraphError(f"symbolic tensor {self.name or ''} {self.spec} has no value: "
                             "evaluate it with Session.run")
        return self._data

    def numpy(self):
        """The value as a NumPy array (shares memory on the CPU; copies from a GPU)."""
        return backend.to_numpy(self._value())

    def item(self):
        """The value of a one-element tensor as a Python scalar."""
        value = self._value()
        if value.size != 1:
            raise ValueError(f"item() needs a tensor with one element, got shape {value.shape}")
        return value.reshape(()).item()

    def tolist(self):
        """The value as (nested) Python lists."""
        return self.numpy().tolist()

    def __array__(self, dtype=None, copy=None):
        array = self.numpy()
        return array if dtype is None else array.astype(dtype)

    def __len__(self) -> int:
        shape = self.shape
        if not shape:
            raise TypeError("len() of a 0-d tensor")
        return shape[0]

    def __iter__(self):
        if not self.shape:
            raise TypeError("iteration over a 0-d tensor")
        return (self[i] for i in range(self.shape[0]))

    def __bool__(self) -> bool:
        if self._data is None:
            raise GraphError("the truth value of a symbolic tensor is unknown when the graph is built; "
                             "Python control flow cannot depend on tensor values here")
        return bool(self.item())

    def __float__(self) -> float:
        return float(self.item())

    def __int__(self) -> int:
        return int(self.item())

    def __index__(self) -> int:
        if self.dtype.kind not in "iu":
            raise TypeError(f"only integer tensors can be used as an index, got {self.dtype}")
        return int(self.item())

    def __format__(self, spec: str) -> str:
        """``f"{x:.2f}"`` of a 0-d tensor formats its value, as PyTorch does; other tensors take only
        the empty spec (their ``str``)."""
        if self._data is not None and not self.shape:
            return format(self.item(), spec)
        return object.__format__(self, spec)

    def __repr__(self) -> str:
        if self._data is None:
            return f"Tensor(symbolic, name={self.name!r}, shape={self.shape}, dtype={self.dtype})"
        from graphgrad.core.printing import tensor_repr

        return tensor_repr(self)

    # ---- autograd -----------------------------------------------------------------------------
    def requires_grad_(self, requires_grad: bool = True) -> "Tensor":
        """Set ``requires_grad`` in place (leaves only, float dtypes only). Returns self."""
        if requires_grad and self.dtype.kind not in "fc":
            raise GradError(f"only floating-point tensors can require gradients, got {self.dtype}")
        if not requires_grad and self._node is not None:
            raise GradError("requires_grad can only be turned off on a leaf; use detach() instead")
        self.requires_grad = bool(requires_grad)
        return self

    def detach(self) -> "Tensor":
        """A tensor sharing this one's data, cut out of the autograd graph."""
        return Tensor._wrap(self._data)

    def detach_(self) -> "Tensor":
        """Cut this tensor out of the autograd graph in place. Returns self."""
        self._node = None
        self.requires_grad = False
        return self

    def backward(self, gradient: Any = None, retain_graph: Optional[bool] = None,
                 create_graph: bool = False) -> None:
        """Accumulate d(self)/d(leaf) into ``leaf.grad`` for every leaf that requires grad.

        Args:
            gradient: upstream gradient, shape ``self.shape``; may be omitted for a scalar.
            retain_graph: keep the graph for another backward (default: ``create_graph``).
            create_graph: record the backward pass too, for higher-order gradients.
        """
        from graphgrad.core import autograd

        autograd.backward([self], None if gradient is None else [gradient], retain_graph, create_graph)

    def register_hook(self, hook: Callable[["Tensor"], Optional["Tensor"]]) -> Callable[[], None]:
        """Call ``hook(grad)`` when this tensor's gradient is computed; a returned tensor replaces
        the gradient. Returns a function that removes the hook."""
        if not self.requires_grad:
            raise GradError("cannot register a hook on a tensor that does not require grad")
        owner = self if self._node is None else self._node
        if owner._hooks is None:
            owner._hooks = []
        owner._hooks.append(hook)
        return RemovableHandle(lambda: owner._hooks.remove(hook))

    def register_post_accumulate_grad_hook(self, hook: Callable[["Tensor"], None]) -> Callable[[], None]:
        """Call ``hook(self)`` once per backward pass, after this leaf's ``.grad`` holds all of that
        pass's gradient. Returns a function that removes the hook."""
        from graphgrad.core import autograd

        return autograd.register_post_accumulate_grad_hook(self, hook)

    def retain_grad(self) -> None:
        """Keep ``.grad`` on this non-leaf tensor after backward (leaves always keep it)."""
        if self._node is not None:
            import weakref

            self._node.retained = weakref.ref(self)

    def zero_(self) -> "Tensor":
        """Fill with zeros in place (not recorded by autograd). Returns self."""
        from graphgrad.core.autograd import note_inplace_write

        self._check_inplace()
        self._data[...] = 0
        note_inplace_write(self._data, "zero_()")
        return self

    def _check_inplace(self) -> None:
        if self.requires_grad:
            kind = "a leaf tensor" if self._node is None else "a tensor in the autograd graph"
            raise GradError(f"in-place modification of {kind} that requires grad is not allowed; "
                            "use `with gg.no_grad():` on a detached tensor, or write out-of-place code")

    def assign(self, value) -> None:
        """Only Variables can be assigned; this explains that for every other tensor."""
        kind = "a graph tensor (constants included) is immutable" if self._data is None else \
            "a plain tensor has no assign(); write x[...] = value, or use a gg.Variable"
        raise GraphError(f"cannot assign to {self.name or 'this tensor'}: {kind}; only a gg.Variable can be assigned")

    def __setitem__(self, key, value) -> None:
        from graphgrad.core import autograd

        if self._data is None:
            raise GraphError(f"cannot write into {self.name or 'a graph tensor'}: graph tensors (constants "
                             "included) are immutable; use a gg.Variable and assign()")
        if self.requires_grad and autograd.is_grad_enabled():
            self._check_inplace()
        self._value()[_index_arrays(key)] = value._data if isinstance(value, Tensor) else value
        autograd.note_inplace_write(self._data, "an item assignment (x[...] = value)")


def _index_arrays(key):
    """Replace tensors inside an index expression by their arrays."""
    if isinstance(key, Tensor):
        return key._data
    if isinstance(key, tuple):
        return tuple(k._data if isinstance(k, Tensor) else k for k in key)
    return key


#: The ``(values, indices)`` result of ``x.max(dim)``, ``x.sort()``, ``gg.topk``... (PyTorch's
#: ``torch.return_types``): a named tuple, so ``values, indices = x.max(1)`` and ``x.max(1).indices`` both work.
ValuesIndices = namedtuple("ValuesIndices", ["values", "indices"])

#: The ``(min, max)`` result of ``gg.aminmax`` (PyTorch's ``torch.return_types.aminmax``).
MinMax = namedtuple("MinMax", ["min", "max"])


class RemovableHandle:
    """What a ``register_*hook`` returns: ``handle.remove()`` (or calling it) takes the hook away
    (again a no-op), as PyTorch's ``RemovableHandle``; also a context manager that removes on exit."""

    def __init__(self, remove: Callable[[], None]) -> None:
        self._remove = remove

    def remove(self) -> None:
        if self._remove is not None:
            remove, self._remove = self._remove, None
            try:
                remove()
            except (ValueError, KeyError):  # already gone
                pass

    __call__ = remove

    def __enter__(self) -> "RemovableHandle":
        return self

    def __exit__(self, *exc) -> None:
        self.remove()
