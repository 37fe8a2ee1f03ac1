"""Graph inputs and state: placeholders, constants and Variables, and the ops that read and assign.

A :class:`Variable` is a Tensor that holds a value and can change: eagerly it is an ordinary leaf
tensor (``nn.Parameter`` builds on it); in a graph, using it adds a node that reads its value when
the graph runs, and ``assign`` adds a node that writes it.
"""
from __future__ import annotations

from typing import Any, Optional, Sequence

from graphgrad.backend import np, to_numpy
from graphgrad.core.autograd import note_inplace_write
from graphgrad.core.op import Op
from graphgrad.core.spec import TensorSpec
from graphgrad.core.tensor import Tensor, to_array
from graphgrad.dtypes import as_dtype
from graphgrad.errors import FeedError, GraphError, ShapeError
from graphgrad.graph.graph import GraphNode, build_in, building_graph, get_default_graph, graph_of


def _shape_text(shape) -> str:
    if shape is None:
        return "(any shape)"
    return "(" + ", ".join("None" if d is None else str(d) for d in shape) + ("," if len(shape) == 1 else "") + ")"


def compatible(shape: Sequence, spec_shape: Sequence) -> bool:
    """Whether a concrete ``shape`` fits ``spec_shape`` (``None`` dims match anything; a ``None``
    ``spec_shape`` any shape)."""
    if spec_shape is None:
        return True
    return len(shape) == len(spec_shape) and all(s is None or s == d for d, s in zip(shape, spec_shape))


class Placeholder(Op):
    """A value supplied at run time through ``feed_dict``."""

    props = ("shape", "dtype")

    def __init__(self, shape, dtype):
        self.shape, self.dtype = (None if shape is None else tuple(shape)), as_dtype(dtype)

    def infer(self):
        return TensorSpec(self.shape, self.dtype)

    def forward(self, xp):
        raise FeedError("a placeholder was not fed")  # Session.run reports which one, before running


class PlaceholderWithDefault(Op):
    """Its input, unless fed."""

    props = ("shape",)

    def __init__(self, shape):
        self.shape = tuple(shape)

    def infer(self, default):
        if len(default.shape) != len(self.shape) or any(
                s is not None and d is not None and s != d for d, s in zip(default.shape, self.shape)):
            raise ShapeError(f"placeholder_with_default: default of shape {_shape_text(default.shape)} does "
                             f"not fit shape {_shape_text(self.shape)}")
        return TensorSpec(self.shape, default.dtype)

    def forward(self, xp, default):
        return default

    def backward(self, inputs, out, g):
        return (g,)


class Const(Op):
    """A constant value stored in the graph."""

    props = ("value",)

    def __init__(self, value):
        self.value = value

    def _key(self) -> tuple:
        v = self.value
        if v.size <= 16:  # small constants compare by value (so equal constants are equal ops)
            return (Const, v.dtype.str, v.shape, to_numpy(v).tobytes())
        return (Const, id(v))

    def __repr__(self) -> str:
        return f"Const(shape={self.value.shape}, dtype={self.value.dtype})"

    def infer(self):
        return TensorSpec(self.value.shape, self.value.dtype)

    def forward(self, xp):
        return self.value


class _VariableOp(Op):
    """An op bound to one Variable (compared by identity, not by value)."""

    props = ("variable",)

    def __init__(self, variable: "Variable"):
        self.variable = variable

    def _key(self) -> tuple:
        return (type(self), id(self.variable))

    def __repr__(self) -> str:
        return f"{self.name}({self.variable.base_name!r})"


class ReadVariable(_VariableOp):
    """The variable's value when the graph runs."""

    def infer(self):
        return TensorSpec(self.variable.shape, self.variable.dtype)

    @property
    def gradient_target(self) -> "Variable":
        """The leaf that autograd credits with this read's gradient (``loss.backward()`` in a graph,
        e.g. inside ``gg.function``, fills the variable's ``.grad`` with a graph tensor)."""
        return self.variable

    def forward(self, xp):
        return self.variable._data

    def backward(self, inputs, out, g):
        return ()


class Assign(_VariableOp):
    """Write its input into the variable (as a new array: reads earlier in the run keep the old
    value); outputs the new value."""

    def infer(self, value):
        var = self.variable
        shape = tuple(value.shape) if isinstance(value, TensorSpec) else np.shape(value)
        fits = len(shape) <= len(var.shape) and all(d is None or d == 1 or d == v for d, v in
                                                     zip(shape[::-1], var.shape[::-1]))
        if not fits:
            raise ShapeError(f"assign: value of shape {_shape_text(shape)} does not match variable "
                             f"{var.base_name!r} of shape {_shape_text(var.shape)}")
        return TensorSpec(var.shape, var.dtype)

    def forward(self, xp, value):
        var = self.variable
        value = xp.asarray(value, dtype=var.dtype)
        # (broadcast_to costs a few microseconds: a step counter's assignment is mostly that)
        new = value.copy() if value.shape == var.shape else xp.broadcast_to(value, var.shape).copy()
        var._data = new
        note_inplace_write(var, f"assign to {var.base_name!r}")
        return new


class NoOp(Op):
    """Does nothing; with control inputs it groups other operations (``gg.group``)."""

    def infer(self):
        return None

    def forward(self, xp):
        return None


class Variable(Tensor):
    """A tensor with a name and a value that graph ops (and optimizers) update.

    Args:
        initial_value: the starting value (array, list, scalar, Tensor, or a graph tensor that is
            evaluated once); kept for ``global_variables_initializer()``.
        trainable: whether optimizers update it (``requires_grad`` for float variables).
        name: a readable name (default ``"Variable"``, made unique in each graph).
        dtype: convert the initial value to this dtype.

    Examples:
        >>> w = gg.Variable(gg.zeros((2, 3)), name="w")
        >>> x = gg.placeholder(gg.float32, (None, 2))
        >>> y = x @ w          # a graph node that reads w when run
    """

    __slots__ = ("trainable", "initial_value", "base_name")
    is_variable = True
    #: Whether a new variable joins the default graph's collections (``gg.global_variables()``) and
    #: keeps a copy of its initial value for ``global_variables_initializer()``. ``nn.Parameter``
    #: turns both off: an eager model's parameters join a graph only when a graph uses them.
    graph_collected = True

    def __init__(self, initial_value: Any, trainable: bool = True, name: Optional[str] = None, dtype=None):
        if isinstance(initial_value, Tensor) and initial_value.is_symbolic:
            from graphgrad.graph.session import Session

            initial_value = Session(graph_of([initial_value])).run(initial_value)
        super().__init__(to_array(initial_value, dtype).copy())
        self.trainable = bool(trainable)
        self.base_name = name or type(self).__name__
        if self.trainable and self.dtype.kind in "fc":
            self.requires_grad = True
        self.initial_value = None
        if self.graph_collected:
            self.initial_value = self._data.copy()
            get_default_graph().register_variable(self, keep=building_graph())

    # ---- graph API -----------------------------------------------------------------------------
    def value(self) -> Tensor:
        """The graph tensor reading this variable in the default graph."""
        return get_default_graph().read_variable(self)

    read_value = value

    def assign(self, value: Any, name: Optional[str] = None) -> Tensor:
        """A graph op that writes ``value`` into the variable when run; its output is the new value."""
        graph = graph_of([value])
        return build_in(graph, Assign(self), (value,), name=name or f"{self.base_name}/Assign")

    def assign_add(self, delta: Any, name: Optional[str] = None) -> Tensor:
        """A graph op that adds ``delta`` to the variable when run."""
        graph = graph_of([delta])
        return self.assign(graph.read_variable(self) + delta, name=name or f"{self.base_name}/AssignAdd")

    def assign_sub(self, delta: Any, name: Optional[str] = None) -> Tensor:
        """A graph op that subtracts ``delta`` from the variable when run."""
        graph = graph_of([delta])
        return self.assign(graph.read_variable(self) - delta, name=name or f"{self.base_name}/AssignSub")

    @property
    def initializer(self) -> Tensor:
        """A graph op that resets the variable to its initial value."""
        if self.initial_value is None:
            raise GraphError(f"{self.base_name!r} keeps no initial value (an nn.Parameter): re-initialize it "
                             "with its module's reset_parameters() instead")
        return self.assign(self.initial_value, name=f"{self.base_name}/Initializer")

    # ---- eager API -------------------------------------------------------------------------------
    def load(self, value: Any, session: Any = None) -> None:
        """Set the value now (same shape; converted to the variable's dtype)."""
        array = to_array(value)
        if tuple(array.shape) != tuple(self.shape):
            raise ShapeError(f"load: value of shape {tuple(array.shape)} does not match variable "
                             f"{self.base_name!r} of shape {tuple(self.shape)}")
        self._data = array.astype(self.dtype, copy=True)
        note_inplace_write(self, f"load() of {self.base_name!r}")

    def __repr__(self) -> str:
        return (f"<gg.Variable {self.base_name!r} shape={tuple(self.shape)} dtype={self.dtype}, "
                f"value={np.array2string(self.numpy(), threshold=8, separator=', ')}>")


# ---- public functions ---------------------------------------------------------------------------
def placeholder(dtype, shape=None, name: Optional[str] = None) -> Tensor:
    """A graph input fed at run time. ``shape`` may contain ``None`` (that dimension is known only
    when fed), or be ``None``: any shape may be fed, and nodes built on it have unknown shapes (fine
    for elementwise math; ops that need a rank, like ``matmul`` or reductions over an axis, want a
    shape).

    Examples:
        >>> x = gg.placeholder(gg.float32, shape=(None, 784), name="images")
    """
    if shape is not None:
        shape = (shape,) if isinstance(shape, int) else tuple(shape)
        for i, d in enumerate(shape):
            if d is not None and (isinstance(d, bool) or not isinstance(d, int) or d < 0):
                from graphgrad.errors import ArgumentError

                raise ArgumentError(f"placeholder: shape[{i}] must be a non-negative integer or None (unknown), "
                                    f"got {d!r}")
    graph = get_default_graph()
    node = graph.add_node(Placeholder(shape, dtype), (), TensorSpec(shape, dtype), name=name or "Placeholder",
                          requires_grad=as_dtype(dtype).kind in "fc")
    return node.out


def placeholder_with_default(default: Any, shape=None, name: Optional[str] = None) -> Tensor:
    """A graph input that takes ``default`` unless fed. ``shape`` defaults to the default's shape."""
    graph = get_default_graph()
    default_t = default if isinstance(default, Tensor) else Tensor(default)
    shape = tuple(default_t.shape) if shape is None else tuple(shape)
    return build_in(graph, PlaceholderWithDefault(shape), (default_t,), name=name or "PlaceholderWithDefault")


def constant(value: Any, dtype=None, shape=None, name: Optional[str] = None) -> Tensor:
    """An immutable graph tensor. ``shape`` broadcasts a scalar (or reshapes a value of equal size)."""
    array = to_array(value, dtype)
    if shape is not None:
        shape = (shape,) if isinstance(shape, int) else tuple(shape)
        array = np.broadcast_to(array, shape).copy() if array.size == 1 else array.reshape(shape)
    graph = get_default_graph()
    return graph.add_node(Const(array), (), TensorSpec(array.shape, array.dtype), name=name or "Const").out


def group(*inputs: Any, name: Optional[str] = None) -> GraphNode:
    """An operation that runs all of ``inputs`` (tensors or operations, or lists of them)."""
    flat = []
    for item in inputs:
        flat.extend(item if isinstance(item, (list, tuple)) else [item])
    graph = graph_of(flat)
    from graphgrad.graph.graph import _node_of

    return graph.add_node(NoOp(), (), None, name=name or "group_deps",
                          control_inputs=tuple(_node_of(x) for x in flat))


def no_op(name: Optional[str] = None) -> GraphNode:
    """An operation that does nothing (useful with ``control_dependencies``)."""
    return get_default_graph().add_node(NoOp(), (), None, name=name or "NoOp")


def global_variables(graph=None) -> list:
    """Every Variable made or used in the (default) graph."""
    return (graph or get_default_graph()).variables()


def trainable_variables(graph=None) -> list:
    """The trainable Variables made or used in the (default) graph."""
    return (graph or get_default_graph()).variables(trainable_only=True)


def variables_initializer(variables: Sequence[Variable], name: str = "init") -> GraphNode:
    """An operation that resets ``variables`` to their initial values."""
    return group(*[v.initializer for v in variables if v.initial_value is not None], name=name)


def global_variables_initializer() -> GraphNode:
    """An operation that resets every variable of the default graph to its initial value."""
    return variables_initializer(global_variables())
