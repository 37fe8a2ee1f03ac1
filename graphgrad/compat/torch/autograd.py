"""``torch.autograd``: ``grad``, ``backward``, ``gradcheck`` and ``Function`` on graphgrad's autograd.

A ``Function`` subclass (static ``forward(ctx, *args)`` and ``backward(ctx, *grads)``) becomes a
graphgrad :class:`~graphgrad.Op` when applied: the op's forward runs the user's ``forward`` on
tensors without recording, its gradient rule calls the user's ``backward``.
"""
from __future__ import annotations

import math
from typing import Any

import graphgrad as _gg
from graphgrad import Op, Tensor, grad, no_grad  # noqa: F401
from graphgrad.compat.torch import autograd_functional as functional  # noqa: F401,E402


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph: bool = False) -> None:
    tensors = [tensors] if isinstance(tensors, Tensor) else list(tensors)
    if grad_tensors is not None and isinstance(grad_tensors, Tensor):
        grad_tensors = [grad_tensors]
    for i, t in enumerate(tensors):
        t.backward(None if grad_tensors is None else grad_tensors[i], retain_graph=retain_graph,
                   create_graph=create_graph)


def gradcheck(func, inputs, eps: float = 1e-6, atol: float = 1e-5, rtol: float = 1e-3, **kwargs) -> bool:
    """``torch.autograd.gradcheck``: graphgrad's ``check_grad`` (float64 central differences)."""
    inputs = inputs if isinstance(inputs, (tuple, list)) else (inputs,)
    return _gg.check_grad(func, *inputs, eps=eps, atol=atol, rtol=rtol).ok


class _Context:
    """``ctx`` of a Function: saved tensors and which inputs need a gradient."""

    def __init__(self, needs_input_grad: tuple) -> None:
        self.needs_input_grad = needs_input_grad
        self.saved_tensors: tuple = ()
        self.non_differentiable: tuple = ()

    def save_for_backward(self, *tensors) -> None:
        self.saved_tensors = tensors

    def mark_non_differentiable(self, *tensors) -> None:
        """Outputs of forward that get no gradient: they come out of ``apply`` not requiring grad, and
        backward receives zeros for them."""
        self.non_differentiable = self.non_differentiable + tensors


class _FunctionOp(Op):
    """One application of a ``Function``: an impure op (never merged) holding its ``ctx``. A forward
    that returns several tensors gives one op whose output is its floating-point outputs raveled and
    concatenated (``layout`` says how to cut it back); other outputs (indices) are kept aside."""

    pure = False

    def __init__(self, function: type, inputs: tuple) -> None:
        self.function = function
        self.ctx = _Context(tuple(isinstance(x, Tensor) and x.requires_grad for x in inputs))
        self.layout, self.aside, self.detached = None, {}, set()

    @property
    def name(self) -> str:
        return self.function.__name__

    def forward(self, xp, *arrays):
        args = [Tensor(a) if hasattr(a, "shape") and hasattr(a, "dtype") else a for a in arrays]
        with no_grad():
            if _overrides(self.function, "setup_context"):  # forward(*args), then setup_context(ctx, ...)
                out = self.function.forward(*args)
                self.function.setup_context(self.ctx, tuple(args), out)
            else:
                out = self.function.forward(self.ctx, *args)
        marked = self.ctx.non_differentiable
        if not isinstance(out, (tuple, list)):
            self.detached = {0} if any(out is m for m in marked) else set()
            return out._data if isinstance(out, Tensor) else xp.asarray(out)
        self.detached = {i for i, o in enumerate(out) if any(o is m for m in marked)}
        arrays = [o._data if isinstance(o, Tensor) else xp.asarray(o) for o in out]
        self.layout = [(a.shape, a.dtype, a.dtype.kind in "fc") for a in arrays]
        packed = [a.reshape(-1) for a in arrays if a.dtype.kind in "fc"]
        self.aside = {i: a for i, a in enumerate(arrays) if a.dtype.kind not in "fc"}
        dtype = xp.result_type(*packed) if packed else xp.float32
        return xp.concatenate([p.astype(dtype, copy=False) for p in packed]) if packed else xp.zeros(0, dtype)

    def outputs(self, packed: Tensor):
        """The Function's outputs: ``packed`` itself, or cut back into the tensors forward returned."""
        if self.layout is None:
            return packed.detach() if self.detached else packed
        results, offset = [], 0
        for i, (shape, dtype, differentiable) in enumerate(self.layout):
            if not differentiable:
                results.append(Tensor(self.aside[i]))
                continue
            n = math.prod(shape)
            piece = _gg.reshape(packed[offset:offset + n], shape)
            piece = piece if piece.dtype == dtype else piece.astype(dtype)
            results.append(piece.detach() if i in self.detached else piece)
            offset += n
        return tuple(results)

    def backward(self, inputs, out, g):
        if self.layout is None:
            grads = self.function.backward(self.ctx, g)
        else:  # one gradient per output, as PyTorch passes them (zeros for non-float outputs)
            pieces, offset = [], 0
            for i, (shape, dtype, differentiable) in enumerate(self.layout):
                if not differentiable:
                    pieces.append(_gg.zeros(shape, dtype=g.dtype))
                    continue
                n = math.prod(shape)
                pieces.append(_gg.reshape(g[offset:offset + n], shape))
                offset += n
            grads = self.function.backward(self.ctx, *pieces)
        grads = tuple(grads) if isinstance(grads, (tuple, list)) else (grads,)
        return grads + (None,) * (len(inputs) - len(grads))


def _overrides(function: type, name: str) -> bool:
    return getattr(function, name, None) is not getattr(Function, name)


class Function:
    """Subclass with static ``forward(ctx, *args)`` and ``backward(ctx, *grad_outputs)``; call ``.apply``.
    PyTorch 2's form also works: ``forward(*args)`` with a static ``setup_context(ctx, inputs, output)``.
    ``forward`` may return several tensors; ``backward`` then gets one gradient per output."""

    @staticmethod
    def forward(ctx, *args: Any) -> Any:
        raise NotImplementedError("a Function subclass must define forward(ctx, *args)")

    @staticmethod
    def setup_context(ctx, inputs: tuple, output: Any) -> None:
        """Save what backward needs (PyTorch 2's form, with a ``forward`` that takes no ``ctx``)."""

    @staticmethod
    def backward(ctx, *grad_outputs: Any) -> Any:
        raise NotImplementedError("a Function subclass must define backward(ctx, *grad_outputs)")

    @classmethod
    def apply(cls, *args) -> Any:
        op = _FunctionOp(cls, args)
        return op.outputs(op.apply(*args))


class _VariableType(type):
    def __instancecheck__(cls, obj) -> bool:
        return isinstance(obj, Tensor)

    def __subclasscheck__(cls, other) -> bool:
        return issubclass(other, Tensor)


class Variable(metaclass=_VariableType):
    """``torch.autograd.Variable`` (PyTorch before 0.4, still in old tutorials): every tensor is one;
    ``Variable(t, requires_grad=...)`` is ``t`` detached (sharing its array) with ``requires_grad`` set, as
    PyTorch gives today. ``volatile=True`` is accepted (no_grad replaced it)."""

    def __new__(cls, data, requires_grad: bool = False, volatile: bool = False):
        data = data if isinstance(data, Tensor) else _gg.tensor(data)
        out = data.detach()
        return out.requires_grad_(True) if requires_grad else out


class detect_anomaly(_gg.detect_anomaly):
    """``torch.autograd.detect_anomaly()``: graphgrad's (an op that yields NaN/inf raises, naming it)."""

    def __init__(self, check_nan: bool = True) -> None:
        super().__init__()


_ANOMALY: list = []  # the detect_anomaly entered by set_detect_anomaly(True), if any


def _set_anomaly(mode: bool) -> None:
    if mode and not _ANOMALY:
        _ANOMALY.append(_gg.detect_anomaly().__enter__())
    elif not mode and _ANOMALY:
        _ANOMALY.pop().__exit__(None, None, None)


class set_detect_anomaly:
    """``torch.autograd.set_detect_anomaly(mode)``: anomaly detection on or off from here on, or, used as a
    context manager, inside the block only."""

    def __init__(self, mode: bool, check_nan: bool = True) -> None:
        self.prev = bool(_ANOMALY)
        _set_anomaly(bool(mode))

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> bool:
        _set_anomaly(self.prev)
        return False


def is_anomaly_enabled() -> bool:
    return bool(_ANOMALY)


set_grad_enabled, enable_grad = _gg.set_grad_enabled, _gg.enable_grad


class AccumulateGrad:
    """The end of a ``grad_fn.next_functions`` chain: a leaf tensor that requires grad, where backward
    accumulates into ``variable.grad`` (PyTorch's ``AccumulateGrad`` node)."""

    def __init__(self, variable: Tensor) -> None:
        self.variable = variable
        self.next_functions = ()

    def name(self) -> str:
        return "torch::autograd::AccumulateGrad"

    def __repr__(self) -> str:
        return f"<AccumulateGrad object at {hex(id(self))}>"


def _next_functions(node) -> tuple:
    """``grad_fn.next_functions``: for each input of the op that made the tensor, ``(its grad_fn, 0)``, an
    :class:`AccumulateGrad` for a leaf that requires grad, or ``(None, 0)`` for a constant. Python numbers
    come after the tensors, as in PyTorch (``2 * b`` is ``b.mul(2)`` there)."""
    out = []
    for x in sorted(node.inputs, key=lambda x: not isinstance(x, Tensor)):
        if isinstance(x, Tensor) and x._node is not None:
            out.append((x._node, 0))
        elif isinstance(x, Tensor) and x.requires_grad:
            out.append((AccumulateGrad(x), 0))
        else:
            out.append((None, 0))
    return tuple(out)


#: graphgrad's op names that PyTorch's autograd names otherwise (the rest: the same name)
_TORCH_NAMES = {"Linear": "Addmm", "Reshape": "View", "SoftmaxCrossEntropy": "NllLoss", "ExpandDims": "Unsqueeze",
                "BroadcastTo": "Expand", "LayerNorm": "NativeLayerNorm", "Transpose": "Permute"}


def _node_name(node) -> str:
    """``grad_fn.name()``: PyTorch's style of name, ``"MulBackward0"`` for graphgrad's ``Mul``, and
    PyTorch's own names where they differ (``MmBackward0`` for a product of matrices)."""
    name = getattr(node.op, "name", None) or type(node.op).__name__
    if name == "MatMul":
        ranks = [x.ndim for x in node.inputs if isinstance(x, Tensor)]
        name = {(2, 2): "Mm", (3, 3): "Bmm"}.get(tuple(ranks), name)
    return f"{_TORCH_NAMES.get(name, name)}Backward0"


# a tensor's grad_fn is graphgrad's autograd node; programs written for PyTorch walk it (the tutorials print
# d.grad_fn.next_functions[0][0].next_functions)
_gg.core.autograd.Node.next_functions = property(_next_functions)
_gg.core.autograd.Node.name = _node_name
# and a tensor prints as in PyTorch: grad_fn=<MulBackward0>, dtype=torch.float64
_gg.config.grad_fn_name = _node_name
_gg.config.repr_dtype_prefix = "torch."


def __getattr__(name: str):
    """``torch.autograd.profiler`` (imported on first use: it builds on ``torch.profiler``)."""
    if name == "profiler":
        from graphgrad.compat.torch import autograd_profiler

        return autograd_profiler
    raise AttributeError(f"graphgrad.compat.torch.autograd has no {name!r}")
