"""The Op contract: one class holds an op's whole story.

An op subclass defines:

* ``props``: names of its (hashable) attributes, e.g. ``("axis", "keepdims")``;
* ``forward(self, xp, *arrays) -> array``: the computation on backend arrays (``xp`` is ``numpy``
  or ``cupy``; op code never imports an array library);
* ``backward(self, inputs, out, g) -> tuple``: one gradient per input, written with graphgrad ops
  on Tensors (``None`` where an input needs none); ``inputs`` are the op's inputs as given
  (Tensors, or Python scalars), ``out`` the output Tensor (``None`` when the class sets
  ``saves_output = False``) and ``g`` the gradient of the loss with respect to ``out``.
  Gradients may have a broadcast shape: autograd sums them back to the input;
* ``infer(self, *specs) -> TensorSpec``: the shape/dtype rule, raising ``ShapeError`` or
  ``DTypeError`` that name the op; ``specs`` are ``TensorSpec`` for tensor inputs and the values
  themselves for Python scalars. The default runs ``forward`` on zeros of the input shapes;
* ``onnx``: the ONNX op type of a one-to-one mapping (same inputs in the same order, one output),
  e.g. ``onnx = "Relu"``, and ``onnx_attributes(self, opset) -> dict`` its ONNX attributes for that
  opset (dtypes are written as ONNX element types; raise ``ValueError`` for attribute values with
  no ONNX form). Ops needing several ONNX nodes leave ``onnx = None`` and register a converter in
  ``graphgrad/io/onnx/`` (``@exports(OpClass)``). Ops never import ``onnx``.

``op.apply(*inputs)`` runs the forward eagerly when every input has a value, and records a node
when any input is symbolic (a graph placeholder), so one definition serves both modes.
"""
from __future__ import annotations

import threading

from typing import Any, Callable, ClassVar

from graphgrad import backend, config
from graphgrad.backend import np
from graphgrad.core.autograd import GRAD_MODE, MODE_SWITCHES, Node, check_finite, record_creation_site, user_frame
from graphgrad.core.profiler import PROFILER, user_site
from graphgrad.core.spec import TensorSpec, spec_of
from graphgrad.core.tensor import Tensor
from graphgrad.errors import DeviceError, GradError, GraphgradError, NonFiniteError, ShapeError

_ndarray = np.ndarray
#: NumPy's scalar types: an op takes them as the Python numbers they hold (weak in type promotion)
_NUMPY_SCALARS = frozenset((np.float16, np.float32, np.float64, np.int8, np.int16, np.int32, np.int64, np.uint8,
                            np.uint16, np.uint32, np.uint64, np.bool_))


def _weak(x: Any) -> Any:
    return x.item() if x.__class__ in _NUMPY_SCALARS else x

_namespace_of = backend.namespace_of
_new_tensor = object.__new__


class Op:
    """Base class of every op, built-in or user-defined (see the module docstring)."""

    props: ClassVar[tuple] = ()
    #: Whether ``backward`` reads ``out``. When False autograd does not keep the output array alive
    #: for the backward pass and passes ``out=None`` (the memory contract of the op).
    saves_output: ClassVar[bool] = True
    #: Which inputs ``backward`` reads the values of (True: all; False: none, it needs only their
    #: shapes; a ``slice`` of the inputs). A saved input written in place after the op ran makes
    #: backward raise instead of silently using the new values (PyTorch's version-counter check).
    saves_inputs: ClassVar[Any] = True
    #: ONNX op type of a one-to-one mapping (e.g. ``"Relu"``), or ``None`` (see the module docstring).
    onnx: ClassVar[Any] = None

    @property
    def name(self) -> str:
        return type(self).__name__

    def forward(self, xp, *arrays):
        raise NotImplementedError(f"{self.name} must define forward(xp, *arrays)")

    def backward(self, inputs: tuple, out: Tensor, g: Tensor) -> tuple:
        raise GradError(f"{self.name} is not differentiable")

    def onnx_attributes(self, opset: int) -> dict:
        """The ONNX attributes of the one-to-one mapping ``onnx`` in ``opset`` (default: none)."""
        return {}

    def infer(self, *specs) -> TensorSpec:
        """Default shape rule: run ``forward`` on zeros of the input specs (needs known shapes)."""
        arrays = []
        for s in specs:
            if isinstance(s, TensorSpec):
                if any(d is None for d in s.shape):
                    raise ShapeError(f"{self.name} has no shape rule for unknown dimensions {s.shape}")
                arrays.append(np.zeros(s.shape, s.dtype))
            else:
                arrays.append(s)
        out = np.asarray(self.forward(np, *arrays))
        return TensorSpec(out.shape, out.dtype)

    # ---- identity: ops are immutable values ------------------------------------------------------
    def _key(self) -> tuple:
        return (type(self),) + tuple(getattr(self, p) for p in self.props)

    def __eq__(self, other) -> bool:
        return type(self) is type(other) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        args = ", ".join(f"{p}={getattr(self, p)!r}" for p in self.props)
        return f"{self.name}({args})"

    # ---- dispatch ----------------------------------------------------------------------------------
    def apply(self, *inputs) -> Tensor:
        """Run the op on ``inputs`` (Tensors, arrays or Python scalars) and return a Tensor."""
        # The hot path of eager mode: kept flat, with no per-call allocations beyond the output.
        arrays = []
        requires = False
        first = None
        for x in inputs:
            if x.__class__ is Tensor or isinstance(x, Tensor):
                data = x._data
                if data is None:
                    return self._apply_symbolic(inputs)
                if first is None:
                    first = data
                if x.requires_grad:
                    requires = True
                arrays.append(data)
            elif x.__class__ in _NUMPY_SCALARS:  # a NumPy scalar counts as the Python number it holds (weak),
                return self.apply(*[_weak(v) for v in inputs])  # as in PyTorch: x * np.sqrt(d) stays float32
            else:
                arrays.append(x)
        switched = MODE_SWITCHES.count  # some thread is in a non-default mode: read this thread's
        if switched and GRAPH_BUILDER.active:
            return self._apply_symbolic(inputs)
        xp = np if first is None or first.__class__ is _ndarray else _namespace_of(first)
        try:
            if PROFILER.active:  # gg.profile() is recording (the one check eager mode pays without one)
                out = PROFILER.profile.forward(self, xp, arrays, inputs)
            else:
                out = self.forward(xp, *arrays)
        except GraphgradError:
            raise
        except Exception as exc:
            raise self._explain(inputs, exc) from exc
        if out.__class__ is not _ndarray:
            out = xp.asarray(out)
        if switched and GRAD_MODE.anomaly:
            self._check_anomaly(out)
        t = _new_tensor(Tensor)
        t._data = out
        t.grad = t._spec = t._hooks = t.name = None
        if requires and (not switched or GRAD_MODE.enabled) and out.dtype.kind in "fc":
            t._node = Node(self, inputs, out if self.saves_output else None)
            t.requires_grad = True
            for x in inputs:
                if isinstance(x, Tensor):
                    x._used = True
            if switched and GRAD_MODE.anomaly:
                record_creation_site(t._node)
        else:
            t._node = None
            t.requires_grad = False
        return t

    __call__ = apply

    def _check_anomaly(self, out) -> None:
        """Under ``detect_anomaly``: a NaN/inf result raises, naming the op and the user's line."""
        try:
            check_finite(f"{self.name} (forward)", out)
        except NonFiniteError as error:
            site = user_frame()
            where = f" at {site[0]}:{site[1]} in {site[2]}" if site else ""
            raise NonFiniteError(f"{error}{where}") from None

    def _explain(self, inputs, exc: Exception) -> Exception:
        """Turn a backend failure into an error naming the op: the inputs' devices when they differ,
        else via the shape rule when it can."""
        devices = [backend.device_of(x._data if isinstance(x, Tensor) else x) for x in inputs
                   if (isinstance(x, Tensor) and x._data is not None) or backend.is_array(x)]
        if len(set(devices)) > 1:
            where = ", ".join(f"input {i} on {d}" for i, d in enumerate(devices))
            return DeviceError(f"{self.name}: expected all inputs on one device, got {where}; move them with "
                               f".to(device) first")
        specs = [spec_of(x) for x in inputs]
        try:
            self.infer(*specs)
        except GraphgradError as error:
            return error
        except Exception:
            pass
        shown = ", ".join(f"{tuple(s.shape)} {s.dtype}" if isinstance(s, TensorSpec) else repr(s) for s in specs)
        return type(exc)(f"{self.name} failed on inputs [{shown}]: {exc}")

    def _apply_symbolic(self, inputs) -> Tensor:
        """Record a node instead of computing: the graph layer installs ``GRAPH_BUILDER.build``; without
        it (core alone) a bare symbolic tensor is made, enough for shape inference."""
        if any(x.__class__ in _NUMPY_SCALARS for x in inputs):
            inputs = tuple(_weak(x) for x in inputs)
        if GRAPH_BUILDER.build is not None:
            return GRAPH_BUILDER.build(self, inputs)
        specs = [spec_of(x) for x in inputs]
        try:
            spec = self.infer(*specs)
        except GraphgradError as error:
            site = creation_site()
            raise type(error)(f"{error}\n  (node created at {site})" if site else str(error)) from None
        requires = any(isinstance(x, Tensor) and x.requires_grad for x in inputs) and spec.dtype.kind in "fc"
        return Tensor.symbolic(spec, Node(self, tuple(inputs), None), requires)


class _GraphBuilder(threading.local):
    """Where symbolic op applications go. ``build(op, inputs)`` is set by ``graphgrad.graph`` (on the
    class: every thread's); ``active`` is True inside ``with graph.as_default():`` in this thread, where
    every op builds a node, even one whose inputs all have values (they are captured as constants,
    Variables as variable reads). Per thread: one thread building a graph leaves the others eager."""

    build: Callable | None = None
    active: bool = False


GRAPH_BUILDER = _GraphBuilder()


def creation_site() -> str:
    """``file:line`` of the innermost stack frame outside the graphgrad library (the user's code)."""
    site = user_site()
    return f"{site[0]}:{site[1]}" if site else ""


def needs_grad(x: Any) -> bool:
    """True when ``x`` is a Tensor that requires grad (use it in ``backward`` to skip work)."""
    return isinstance(x, Tensor) and x.requires_grad


def as_tensor_args(*values) -> list:
    """Tensors and Python scalars pass through; arrays and lists become Tensors."""
    return [v if isinstance(v, (Tensor, int, float, bool)) or v is None else Tensor(v) for v in values]
