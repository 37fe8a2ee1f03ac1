"""``gg.function``: trace eager code into a graph once per input signature, then run the compiled plan.

``@gg.function`` (or ``gg.function(fn)``) wraps a Python function of tensors and modules. On the first
call with a new **input signature** it *traces* the function: it runs it once inside a fresh graph,
with a placeholder standing for each tensor argument, so every op builds a node instead of computing
(DESIGN principle 3: one definition, two modes). The graph is compiled by a :class:`Session` (the
rewrite pipeline, then an execution plan) and cached; later calls with the same signature only feed
the arrays and run the plan.

A whole training step works: ``loss.backward()`` (or ``gg.grad``) builds the gradient nodes and puts
graph tensors in the parameters' ``.grad`` while tracing; ``optimizer.step()`` turns the parameter and
optimizer-state updates into ``assign`` nodes. Every assignment made while tracing runs on each call,
after the reads that come before it in the function and before the reads that come after it.
After a call, each parameter's ``.grad`` holds that call's gradient (a concrete tensor).

The signature of a call: for each argument, tensors and arrays count by shape, dtype and
``requires_grad`` (or by the ``gg.TensorSpec`` given in ``input_signature``, whose ``None`` dims accept
any size); Variables, Python numbers, strings and other objects count by identity or value. So
Python control flow is evaluated at trace time (as in ``tf.function`` and ``jax.jit``): an ``if`` on
a Python argument retraces when that argument changes, but an ``if`` on a tensor's *value* cannot be
traced (the value is unknown) and raises a ``GraphError`` saying so; use ``gg.where``.

Examples:
    >>> model = gg.nn.Linear(3, 1)
    >>> opt = gg.optim.Adam(model.parameters(), lr=1e-2)
    >>> @gg.function
    ... def train_step(x, y):
    ...     opt.zero_grad()
    ...     loss = ((model(x) - y) ** 2).mean()
    ...     loss.backward()
    ...     opt.step()
    ...     return loss
    >>> for x, y in batches:
    ...     loss = train_step(x, y)          # traced on the first call, compiled afterwards
    >>> train_step.trace_count
    1
"""
from __future__ import annotations

import functools
import os
import traceback
import types
import warnings
from collections import OrderedDict
from typing import Any, Callable, Optional, Sequence

from graphgrad import backend
from graphgrad.backend import np
from graphgrad.core.autograd import ThreadLocalStack
from graphgrad.core.profiler import PROFILER, profile_span
from graphgrad.core.spec import TensorSpec
from graphgrad.core.tensor import Tensor
from graphgrad.errors import GraphError
from graphgrad.graph.graph import Graph, GraphNode, building_graph
from graphgrad.graph.session import Session
from graphgrad.graph.variables import Assign, ReadVariable, compatible, group, placeholder

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
#: retraces of one function beyond which a warning suggests ``input_signature``
RETRACE_WARNING = 8
#: Traces a gg.function keeps by default; the least recently used is dropped beyond (``max_traces=``).
MAX_TRACES = 64


# ---- the tracing context ----------------------------------------------------------------------------
class Tracer:
    """What is known while one function is being traced: its graph, and callbacks to run before each
    call of the compiled function (an optimizer registers one that feeds the current learning rate)."""

    def __init__(self, graph: "TraceGraph") -> None:
        self.graph = graph
        self.callbacks: list = []

    def before_each_call(self, callback: Callable[[], None]) -> None:
        """Run ``callback()`` before every run of the compiled function (e.g. refresh a Variable)."""
        self.callbacks.append(callback)


_TRACERS = ThreadLocalStack()  # each thread's traces in progress


def current_trace() -> Optional[Tracer]:
    """The innermost :class:`Tracer` while ``gg.function`` traces a function, else ``None``."""
    return _TRACERS[-1] if _TRACERS else None


class TraceGraph(Graph):
    """The graph a function is traced into. On top of :class:`Graph` it orders variable accesses as
    the function made them: a read made after an assignment reads the assigned value, an assignment
    runs after every earlier read (and assignment) of its variable. It also remembers each Variable's
    ``.grad`` as it was when the trace first read the variable, to restore it afterwards."""

    def __init__(self) -> None:
        super().__init__()
        self.grads_before: dict = {}  # id(variable) -> (variable, its .grad when first read)
        self._accesses: dict = {}     # id(variable) -> the nodes that read or assigned it
        self._assigned: dict = {}     # id(variable) -> its latest Assign node
        self._after: dict = {}        # id(variable) -> the read made after that assignment

    def register_variable(self, variable, keep: bool = False) -> None:
        if id(variable) not in self.grads_before:
            self.grads_before[id(variable)] = (variable, variable.grad)
        super().register_variable(variable, keep)

    def read_variable(self, variable) -> Tensor:
        key = id(variable)
        assign = self._assigned.get(key)
        if assign is None or self._control:
            return super().read_variable(variable)
        read = self._after.get(key)
        if read is None:
            super().read_variable(variable)  # (the shared read exists, so the next one is a fresh one)
            with self.control_dependencies([assign]):
                read = super().read_variable(variable)
            self._after[key] = read
        return read

    def add_node(self, op, inputs: tuple, spec, name=None, requires_grad: bool = False,
                 control_inputs: tuple = ()) -> GraphNode:
        if isinstance(op, Assign):
            earlier = tuple(self._accesses.get(id(op.variable), ()))
            control_inputs = tuple(control_inputs) + earlier
        node = super().add_node(op, inputs, spec, name=name, requires_grad=requires_grad,
                                control_inputs=control_inputs)
        if isinstance(op, (Assign, ReadVariable)):
            key = id(op.variable)
            self._accesses.setdefault(key, []).append(node)
            if isinstance(op, Assign):
                self._assigned[key] = node
                self._after.pop(key, None)
        return node


# ---- signatures ---------------------------------------------------------------------------------------
def _is_tensor_value(value: Any) -> bool:
    if isinstance(value, Tensor):
        return not getattr(value, "is_variable", False)
    return backend.is_array(value) and not isinstance(value, np.generic)


def _python_key(value: Any) -> Any:
    try:
        hash(value)
    except TypeError:
        return ("id", id(value))
    return (type(value).__qualname__, value)


def _signature(value: Any, spec: Any, leaves: list) -> Any:
    """The cache key of one argument; tensor leaves are appended to ``leaves`` as (value, spec)."""
    if isinstance(spec, TensorSpec) or _is_tensor_value(value):
        if not _is_tensor_value(value):
            raise TypeError(f"gg.function: input_signature gives {spec} for an argument that is not a tensor "
                            f"({type(value).__name__})")
        array = value._data if isinstance(value, Tensor) else value
        if array is None:
            raise GraphError("gg.function got a symbolic graph tensor as argument; call it with concrete tensors")
        requires = bool(isinstance(value, Tensor) and value.requires_grad)
        if isinstance(spec, TensorSpec):
            if not compatible(array.shape, spec.shape):
                raise GraphError(f"gg.function: an argument of shape {tuple(array.shape)} does not fit its "
                                 f"input_signature {spec}")
            leaves.append((value, spec, requires))
            return ("tensor", spec.shape, spec.dtype.str, requires)
        leaves.append((value, TensorSpec(array.shape, array.dtype), requires))
        return ("tensor", tuple(array.shape), array.dtype.str, requires)
    if isinstance(value, (list, tuple)) and not hasattr(value, "_fields"):
        specs = spec if isinstance(spec, (list, tuple)) else [None] * len(value)
        return (type(value).__name__, tuple(_signature(v, s, leaves) for v, s in zip(value, specs)))
    if isinstance(value, dict):
        specs = spec if isinstance(spec, dict) else {}
        return ("dict", tuple((k, _signature(value[k], specs.get(k), leaves)) for k in value))
    return _python_key(value)


def _substitute(value: Any, spec: Any, placeholders) -> Any:
    """``value`` with its tensor leaves replaced by the next placeholders (the order of _signature)."""
    if isinstance(spec, TensorSpec) or _is_tensor_value(value):
        return next(placeholders)
    if isinstance(value, (list, tuple)) and not hasattr(value, "_fields"):
        specs = spec if isinstance(spec, (list, tuple)) else [None] * len(value)
        return type(value)(_substitute(v, s, placeholders) for v, s in zip(value, specs))
    if isinstance(value, dict):
        specs = spec if isinstance(spec, dict) else {}
        return {k: _substitute(v, specs.get(k), placeholders) for k, v in value.items()}
    return value


# ---- outputs ---------------------------------------------------------------------------------------------
def _flatten_outputs(value: Any, graph: TraceGraph, fetches: list) -> Any:
    """The structure of the function's result, with each graph tensor replaced by its fetch index."""
    if isinstance(value, Tensor):
        if getattr(value, "is_variable", False):  # its value after the call's assignments
            value = graph.read_variable(value)
        if value._data is None:
            fetches.append(value)
            return ("fetch", len(fetches) - 1)
        return ("const", value)
    if isinstance(value, tuple) and hasattr(value, "_fields"):
        return ("namedtuple", type(value), [_flatten_outputs(v, graph, fetches) for v in value])
    if isinstance(value, (list, tuple)):
        return ("seq", type(value), [_flatten_outputs(v, graph, fetches) for v in value])
    if isinstance(value, dict):
        return ("dict", type(value), [(k, _flatten_outputs(v, graph, fetches)) for k, v in value.items()])
    return ("const", value)


def _as_tensor(value) -> Tensor:
    """A fetched value (an array on the device it was computed on, or a NumPy scalar) as a Tensor there."""
    if value.__class__ is np.ndarray:
        return Tensor._wrap(value)
    return Tensor._wrap(value if backend.is_array(value) and not isinstance(value, np.generic) else np.asarray(value))


def _rebuild(structure: Any, values: list) -> Any:
    kind = structure[0]
    if kind == "fetch":
        return _as_tensor(values[structure[1]])
    if kind == "const":
        return structure[1]
    if kind == "namedtuple":
        return structure[1](*[_rebuild(s, values) for s in structure[2]])
    if kind == "seq":
        return structure[1](_rebuild(s, values) for s in structure[2])
    return structure[1]((k, _rebuild(s, values)) for k, s in structure[2])


def _data_dependent_error(error: GraphError) -> GraphError:
    """The GraphError of ``bool()``/``item()``... on a traced tensor, explained for gg.function."""
    site = ""
    for frame in reversed(traceback.extract_tb(error.__traceback__)):
        if not os.path.abspath(frame.filename).startswith(_PACKAGE_DIR) or "/tests/" in frame.filename:
            site = f" (at {frame.filename}:{frame.lineno}: {frame.line})"
            break
    return GraphError(
        f"gg.function: Python control flow depends on the value of a tensor{site}, but the function is "
        "being traced: tensor values are unknown while tracing (every tensor is a graph node that is computed "
        "later, on each call), so `if tensor:`, `while tensor:`, bool(), float(), int(), item() and numpy() "
        "cannot be traced. Use gg.where(cond, a, b) for a choice made per element, pass the value as a Python "
        "argument instead of a tensor (each distinct value traces its own graph), or run this code eagerly "
        f"(without @gg.function). ({error})")


# ---- a traced function ---------------------------------------------------------------------------------
class ConcreteFunction:
    """One trace of a function: its graph, the placeholders fed with the tensor arguments, the fetched
    tensors, and the :class:`Session` that runs the optimized plan.

    Attributes:
        graph: the traced :class:`TraceGraph` (never changed by the compiler: it optimizes a copy).
        inputs: the placeholder of each tensor argument, in argument order.
        outputs: the graph tensors of the function's result (flattened).
        gradients: ``[(variable, graph tensor)]``: the ``.grad`` each call sets.
        effects: the group node running every assignment (``None`` without assignments).
        fetches: what each call fetches: outputs, then gradients, then effects.
        session: the Session running it (``session.optimize`` is the optimization level).
    """

    def __init__(self, graph: TraceGraph, inputs: list, structure: Any, outputs: list, gradients: list,
                 grad_feeds: list, final_grads: list, effects: Optional[GraphNode], callbacks: list,
                 optimize: int, signature: Any) -> None:
        self.graph = graph
        self.inputs = inputs
        self.structure = structure
        self.outputs = outputs
        self.gradients = gradients
        self.grad_feeds = grad_feeds
        self.final_grads = final_grads
        self.effects = effects
        self.callbacks = callbacks
        self.signature = signature
        self.fetches = list(outputs) + [g for _, g in gradients] + ([effects] if effects is not None else [])
        self.session = Session(graph, optimize=optimize)
        self._run = None  # the session's callable for these fetches and feeds, made at the first call

    @property
    def fetch_nodes(self) -> list:
        """The graph nodes each call fetches (the roots of the program)."""
        return [f if isinstance(f, GraphNode) else f._node for f in self.fetches]

    @property
    def feed_nodes(self) -> list:
        """The graph nodes each call feeds (the placeholders, then captured gradients)."""
        return [p._node for p in self.inputs] + [c._node for _, c in self.grad_feeds]

    def program(self):
        """A fresh optimized copy of the traced graph (``graphgrad.graph.rewrite.Program``, with the log
        of what each pass changed), made the way the session makes its plan."""
        from graphgrad.graph.rewrite import optimize

        return optimize(self.fetch_nodes, self.feed_nodes, self.session.optimize or 0)

    def explain(self) -> str:
        """What the compiler did to this trace: the size of the trace, then per pass the nodes
        before and after and the rules fired, the final op counts and the peak memory."""
        from graphgrad.graph.rewrite.report import explain_run

        text, _ = explain_run(self.session, self.fetch_nodes, self.feed_nodes)
        header = (f"gg.function trace: {len(self.graph)} nodes traced; {len(self.inputs)} inputs, "
                  f"{len(self.outputs)} outputs, {len(self.gradients)} gradients, "
                  f"{sum(isinstance(n.op, Assign) for n in self.graph.get_operations())} assignments")
        return header + "\n" + text

    def _feed_values(self, leaves: list) -> list:
        values = [value._data if isinstance(value, Tensor) else value for value, _, _ in leaves]
        for variable, _ in self.grad_feeds:
            g = variable.grad
            values.append(g._data if isinstance(g, Tensor) and g._data is not None
                          else backend.namespace_of(variable._data).zeros(variable.shape, variable.dtype))
        return values

    def __call__(self, leaves: list) -> Any:
        for callback in self.callbacks:
            callback()
        if self._run is None:
            self._run = self.session.make_callable(self.fetches, self.feed_nodes)
        values = self._run(*self._feed_values(leaves))
        n = len(self.outputs)
        for (variable, _), value in zip(self.gradients, values[n:n + len(self.gradients)]):
            variable.grad = _as_tensor(value)
        for variable, grad in self.final_grads:
            variable.grad = grad
        return _rebuild(self.structure, values[:n])


class Function:
    """A function compiled by tracing: see the module docstring. Made by :func:`function`.

    Attributes:
        trace_count: how many times the function was traced (one per new input signature).
        signatures: the cache keys traced so far, in order.
    """

    def __init__(self, fn: Callable, input_signature: Optional[Sequence] = None, optimize: int = 2,
                 max_traces: int = MAX_TRACES) -> None:
        if not callable(fn):
            raise TypeError(f"gg.function needs a callable, got {type(fn).__name__}")
        functools.update_wrapper(self, fn)
        self.python_function = fn
        self.input_signature = None if input_signature is None else tuple(input_signature)
        self.optimize = int(optimize)
        if int(max_traces) < 1:
            raise ValueError(f"gg.function: max_traces must be at least 1, got {max_traces}")
        self.max_traces = int(max_traces)
        self.trace_count = 0
        self.signatures: list = []
        self._cache: OrderedDict = OrderedDict()  # least recently used first

    def __get__(self, instance, owner=None):
        """As a method decorator: bound to the instance (which then counts in the signature)."""
        return self if instance is None else types.MethodType(self, instance)

    def __repr__(self) -> str:
        return f"<gg.function {getattr(self, '__qualname__', self.python_function)!r}, traced {self.trace_count}x>"

    # ---- signatures and traces -------------------------------------------------------------------
    def _key(self, args: tuple, kwargs: dict) -> tuple:
        specs = list(self.input_signature or ())
        if self.input_signature is not None and len(args) < len(specs):
            raise TypeError(f"gg.function: input_signature has {len(specs)} entries but {len(args)} positional "
                            "arguments were given")
        specs += [None] * (len(args) - len(specs))
        leaves: list = []
        key = (tuple(_signature(a, s, leaves) for a, s in zip(args, specs)),
               tuple((k, _signature(kwargs[k], None, leaves)) for k in sorted(kwargs)))
        return key, leaves, specs

    def concrete(self, *args, **kwargs) -> ConcreteFunction:
        """The :class:`ConcreteFunction` for these arguments' signature (traced now if it is new)."""
        key, leaves, specs = self._key(args, kwargs)
        concrete = self._cache.get(key)
        if concrete is None:
            concrete = self._remember(key, self._trace(args, kwargs, specs, leaves, key))
        return concrete

    get_concrete_function = concrete

    def _remember(self, key, concrete: ConcreteFunction) -> ConcreteFunction:
        """Cache a new trace, dropping the least recently used one beyond ``max_traces``."""
        self._cache[key] = concrete
        if len(self._cache) > self.max_traces:
            self._cache.popitem(last=False)
        return concrete

    def graph_for(self, *args, **kwargs) -> Graph:
        """The traced graph for these arguments' signature."""
        return self.concrete(*args, **kwargs).graph

    def explain(self, *args, **kwargs) -> str:
        """What the compiler did to the trace for these arguments (see ``ConcreteFunction.explain``)."""
        return self.concrete(*args, **kwargs).explain()

    def __call__(self, *args, **kwargs) -> Any:
        concrete = None
        if not kwargs and self.input_signature is None and not building_graph():
            # the common call, concrete tensors only: the key _signature would make, without walking it
            parts = []
            for a in args:
                if type(a) is not Tensor or a._data is None:
                    break
                parts.append(("tensor", a._data.shape, a._data.dtype.str, a.requires_grad))
            else:
                key = (tuple(parts), ())
                concrete = self._cache.get(key)
                if concrete is not None:
                    leaves = [(a, None, p[3]) for a, p in zip(args, parts)]
        if concrete is None and (building_graph() or any(isinstance(a, Tensor) and a._data is None for a in args) or (
                kwargs and any(isinstance(a, Tensor) and a._data is None for a in kwargs.values()))):
            return self.python_function(*args, **kwargs)  # inside another trace or graph: inline it
        if concrete is None:
            key, leaves, specs = self._key(args, kwargs)
            concrete = self._cache.get(key)
        if concrete is None:
            with profile_span(f"trace {getattr(self, '__name__', 'function')}", "function"):
                concrete = self._remember(key, self._trace(args, kwargs, specs, leaves, key))
        elif len(self._cache) > 1:
            self._cache.move_to_end(key)
        if PROFILER.active:  # gg.profile(): the call is one event, the Session run of its plan inside it
            name = f"gg.function {getattr(self, '__name__', '')}"
            return PROFILER.profile.call(name, "function", concrete, leaves)
        return concrete(leaves)

    def _trace(self, args: tuple, kwargs: dict, specs: list, leaves: list, key: Any) -> ConcreteFunction:
        graph = TraceGraph()
        tracer = Tracer(graph)
        _TRACERS.append(tracer)
        try:
            with graph.as_default():
                inputs = []
                for i, (_, spec, requires) in enumerate(leaves):
                    ph = placeholder(spec.dtype, spec.shape, name=f"input_{i}")
                    ph.requires_grad = requires
                    inputs.append(ph)
                feed = iter(inputs)
                sym_args = [_substitute(a, s, feed) for a, s in zip(args, specs)]
                sym_kwargs = {k: _substitute(kwargs[k], None, feed) for k in sorted(kwargs)}
                sym_kwargs = {k: sym_kwargs[k] for k in kwargs}
                try:
                    result = self.python_function(*sym_args, **sym_kwargs)
                    outputs: list = []
                    structure = _flatten_outputs(result, graph, outputs)
                except GraphError as error:
                    text = str(error)
                    if "truth value of a symbolic tensor" in text or "has no value" in text:
                        raise _data_dependent_error(error) from None
                    raise
                finally:
                    gradients, grad_feeds, final_grads = self._collect_grads(graph)
                assigns = [n for n in graph.get_operations() if isinstance(n.op, Assign)]
                effects = group(*assigns, name="side_effects") if assigns else None
        finally:
            _TRACERS.pop()
        self.trace_count += 1
        self.signatures.append(key)
        if len(self.signatures) > 4 * self.max_traces:  # keep the history bounded too
            del self.signatures[: len(self.signatures) - 4 * self.max_traces]
        if self.trace_count == RETRACE_WARNING:
            warnings.warn(f"gg.function {self.__qualname__!r} was traced {self.trace_count} times (once per new "
                          "input signature: shapes, dtypes, Python argument values); pass input_signature= with "
                          "None dims, or tensors instead of changing Python values, to trace less", RuntimeWarning,
                          stacklevel=3)
        return ConcreteFunction(graph, inputs, structure, outputs, gradients, grad_feeds, final_grads, effects,
                                list(tracer.callbacks), self.optimize, key)

    @staticmethod
    def _collect_grads(graph: TraceGraph) -> tuple:
        """After tracing: the ``.grad`` of each variable the trace used. Graph-tensor gradients become
        fetches (set after each call); a concrete gradient present before the trace and accumulated into
        is fed on each call; every ``.grad`` is restored, so no graph tensor leaks into eager code."""
        gradients, grad_feeds, final_grads = [], [], []
        for variable, before in graph.grads_before.values():
            after = variable.grad
            if after is before:
                continue
            variable.grad = before
            if isinstance(after, Tensor) and after._data is None:
                node = after._node
                if isinstance(node, GraphNode) and node.graph is graph:
                    gradients.append((variable, after))
                    if isinstance(before, Tensor) and before._data is not None:
                        entry = graph._constants.get(id(before))
                        if entry is not None and entry[1] is before:
                            grad_feeds.append((variable, entry[0]))
            else:
                final_grads.append((variable, after))
        return gradients, grad_feeds, final_grads


def function(fn: Optional[Callable] = None, *, input_signature: Optional[Sequence] = None,
             optimize: int = 2, max_traces: int = MAX_TRACES) -> Any:
    """Compile ``fn`` by tracing it into a graph: ``@gg.function``, ``@gg.function(optimize=1)`` or
    ``gg.function(fn)``.

    Args:
        fn: a Python function of tensors (and modules, optimizers, Python values). It may run a whole
            training step: forward, ``loss.backward()`` or ``gg.grad``, ``optimizer.step()``.
        input_signature: optional, one ``gg.TensorSpec`` (or ``None``: from the value) per positional
            argument; ``None`` dims accept any size without retracing (e.g. the batch dimension).
        optimize: the compiler level of the plan (0, 1 or 2, as ``Session(optimize=...)``).
        max_traces: how many traces (input signatures) to keep; beyond it the least recently used is
            dropped (and traced again if its signature comes back). A warning says when a function
            is traced often (each new shape, dtype or Python argument value traces anew).

    Returns:
        a :class:`Function`: call it like ``fn``; it returns graphgrad Tensors in the same structure.
        ``trace_count`` counts traces; ``concrete(*args)``, ``graph_for(*args)`` and ``explain(*args)``
        show what a signature compiles to.

    Python control flow runs once, at trace time; it may depend on Python arguments (each value traces
    its own graph) but not on tensor values (a ``GraphError`` explains why; use ``gg.where``).

    Examples:
        >>> @gg.function(input_signature=[gg.TensorSpec((None, 784), "float32")])
        ... def predict(x):
        ...     return model(x).argmax(axis=1)
    """
    if fn is None:
        return lambda f: Function(f, input_signature=input_signature, optimize=optimize, max_traces=max_traces)
    return Function(fn, input_signature=input_signature, optimize=optimize, max_traces=max_traces)


__all__ = ["function", "Function", "ConcreteFunction", "TraceGraph", "Tracer", "current_trace"]
