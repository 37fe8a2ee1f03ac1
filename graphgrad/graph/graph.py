"""Graph: the nodes of a static computation, TensorFlow-1 style.

A node is an autograd :class:`Node` that also has a name, a graph and the place in the user's code
where it was made (:class:`GraphNode`); its output is a symbolic :class:`Tensor` (a spec, no value).
Ops build nodes through ``core.op.GRAPH_BUILDER.build`` (installed here), so every op of the library
works in graphs with no graph-specific code.

Inputs that have values are captured when a node is built: a :class:`Variable` becomes a read of the
variable (its value at run time, differentiable), any other tensor or array a constant.
"""
from __future__ import annotations

import contextlib
import itertools
import re
import weakref
from typing import Any, Iterable, Optional

from graphgrad import backend
from graphgrad.backend import np
from graphgrad.core import op as core_op
from graphgrad.core.autograd import MODE_SWITCHES, Node, ThreadLocalStack
from graphgrad.core.op import Op, creation_site
from graphgrad.core.spec import TensorSpec, spec_of
from graphgrad.core.tensor import Tensor
from graphgrad.errors import GraphError, GraphgradError


class GraphNode(Node):
    """An operation of a graph: ``op`` applied to ``inputs``, named ``name``, made at ``site``.

    ``out`` is the symbolic output tensor (``None`` for operations without output, such as
    ``group``/``no_op``); ``control_inputs`` are nodes that must run before this one.
    """

    __slots__ = ("name", "graph", "site", "control_inputs")

    def __init__(self, op: Op, inputs: tuple, graph: "Graph", name: str, site: str, control_inputs: tuple):
        super().__init__(op, inputs, None)
        self.name = name
        self.graph = graph
        self.site = site
        self.control_inputs = control_inputs

    @property
    def type(self) -> str:
        """The op's name, e.g. ``"MatMul"`` (TensorFlow's ``Operation.type``)."""
        return self.op.name

    @property
    def outputs(self) -> list:
        return [] if self.out is None else [self.out]

    def __repr__(self) -> str:
        spec = "" if self.out is None else f" {self.out.spec}"
        return f"<GraphNode {self.name!r} {self.op!r}{spec}>"


class Graph:
    """A dataflow graph: nodes in creation order, unique names, name scopes, variables.

    Examples:
        >>> g = gg.Graph()
        >>> with g.as_default():
        ...     x = gg.placeholder(gg.float32, (None, 3), name="x")
        ...     y = x * 2
        >>> [n.name for n in g.get_operations()]
        ['x', 'Mul']
    """

    def __init__(self) -> None:
        self._nodes: list[GraphNode] = []
        self._by_name: dict[str, GraphNode] = {}
        self._name_counts: dict[str, int] = {}
        self._scopes: list[str] = []
        self._control: list[tuple] = []
        # the Variables made or used in this graph, in order, held weakly (see register_variable)
        self._variables: weakref.WeakValueDictionary = weakref.WeakValueDictionary()
        self._kept: list = []  # Variables this graph keeps alive (made inside its as_default block)
        self._reads: dict[int, Tensor] = {}  # id(variable) -> its read tensor in this graph
        self._constants: dict[int, tuple] = {}  # id(captured tensor) -> (its constant, the tensor)
        self.version = 0  # bumped on every new node; sessions use it to invalidate cached plans

    # ---- context ------------------------------------------------------------------------------
    @contextlib.contextmanager
    def as_default(self):
        """Make this the default graph; inside, every op builds a node in it (graph mode)."""
        _STACK.append(self)
        previous = core_op.GRAPH_BUILDER.active
        core_op.GRAPH_BUILDER.active = True
        MODE_SWITCHES.enter()
        try:
            yield self
        finally:
            MODE_SWITCHES.exit()
            core_op.GRAPH_BUILDER.active = previous
            _STACK.pop()

    @contextlib.contextmanager
    def name_scope(self, name: str):
        """Prefix the names of nodes made inside with ``name/`` (nests)."""
        if not name or not re.fullmatch(r"[A-Za-z0-9_.\-/]+", name):
            raise GraphError(f"invalid name scope {name!r}: use letters, digits, '_', '.', '-' and '/'")
        self._scopes.append(name.rstrip("/"))
        try:
            yield "/".join(self._scopes) + "/"
        finally:
            self._scopes.pop()

    @contextlib.contextmanager
    def control_dependencies(self, deps: Iterable[Any]):
        """Nodes made inside run only after every node (or tensor's node) in ``deps``."""
        nodes = tuple(_node_of(d) for d in deps if d is not None)
        self._control.append(nodes)
        try:
            yield
        finally:
            self._control.pop()

    # ---- names ----------------------------------------------------------------------------------
    def unique_name(self, name: str) -> str:
        """``scope/name``, suffixed ``_1``, ``_2``... when taken."""
        full = "/".join(self._scopes + [name]) if self._scopes else name
        count = self._name_counts.get(full, 0)
        self._name_counts[full] = count + 1
        candidate = full if count == 0 else f"{full}_{count}"
        while candidate in self._by_name:
            count += 1
            self._name_counts[full] = count + 1
            candidate = f"{full}_{count}"
        return candidate

    def rename(self, node: GraphNode, name: str) -> str:
        """Give ``node`` the name ``name`` (made unique in the current scope, as a new node's would be);
        its output becomes ``name:0``. What an op function's ``name=`` argument does. Returns the name."""
        if self._by_name.get(node.name) is node:
            del self._by_name[node.name]
        node.name = self.unique_name(name)
        self._by_name[node.name] = node
        if node.out is not None:
            node.out.name = node.name + ":0"
        self.version += 1
        return node.name

    def get_operations(self) -> list:
        """Every node, in creation order."""
        return list(self._nodes)

    def get_operation_by_name(self, name: str) -> GraphNode:
        node = self._by_name.get(name)
        if node is None:
            raise GraphError(f"no operation named {name!r} in this graph")
        return node

    def get_tensor_by_name(self, name: str) -> Tensor:
        """The output of the node ``name`` (TensorFlow's ``"name:0"`` form accepted)."""
        base = name[:-2] if name.endswith(":0") else name
        node = self._by_name.get(base)
        if node is None or node.out is None:
            close = [n for n in self._by_name if base.split("/")[-1] in n][:5]
            hint = f"; similar names: {close}" if close else ""
            raise GraphError(f"no tensor named {name!r} in this graph{hint}")
        return node.out

    def __len__(self) -> int:
        return len(self._nodes)

    def save(self, path: str) -> str:
        """Write this graph (JSON structure + npz values) so ``gg.load_graph`` can rebuild it; see
        docs/graph-format.md. Returns the JSON file's path."""
        from graphgrad.graph.serialize import save_graph  # serialize builds on this module

        return save_graph(self, path)

    def __repr__(self) -> str:
        return f"<Graph with {len(self._nodes)} nodes>"

    # ---- building ----------------------------------------------------------------------------------
    def add_node(self, op: Op, inputs: tuple, spec: Optional[TensorSpec], name: Optional[str] = None,
                 requires_grad: bool = False, control_inputs: tuple = ()) -> GraphNode:
        """Append a node (inputs already captured into this graph) and its symbolic output."""
        controls = tuple(itertools.chain(control_inputs, *self._control))
        node = GraphNode(op, tuple(inputs), self, self.unique_name(name or op.name), creation_site(), controls)
        if spec is not None:
            node.out = Tensor.symbolic(spec, node, requires_grad, name=node.name + ":0")
        self._nodes.append(node)
        self._by_name[node.name] = node
        self.version += 1
        return node

    def capture(self, value: Any) -> Any:
        """An op input as this graph sees it: graph tensors pass (if they are this graph's), a
        Variable becomes its read, other tensors and arrays become constants, Python scalars stay."""
        if isinstance(value, Tensor):
            if value._data is None:
                node = value._node
                if isinstance(node, GraphNode) and node.graph is not self:
                    raise GraphError(f"tensor {value.name!r} belongs to another graph than the one being built; "
                                     "build all of a computation inside one graph")
                return value
            if getattr(value, "is_variable", False):
                return self.read_variable(value)
            return self.constant_of(value)
        if backend.is_array(value) or isinstance(value, (list, tuple)):
            return self.constant_of(Tensor(value))
        return value

    def read_variable(self, variable) -> Tensor:
        """The node of this graph that reads ``variable``'s value: one shared read, or, inside
        ``control_dependencies``, a new read that runs after those dependencies."""
        read = self._reads.get(id(variable))
        if read is None or self._control:
            from graphgrad.graph.variables import ReadVariable

            spec = TensorSpec(variable.shape, variable.dtype)
            if read is None:  # the shared read first (outside any scope or control dependencies)
                self.register_variable(variable)
                with self._no_scope():
                    node = self.add_node(ReadVariable(variable), (), spec, name=variable.base_name,
                                         requires_grad=variable.requires_grad)
                read = self._reads[id(variable)] = node.out
            if self._control:  # then a read that runs after the dependencies
                return self.add_node(ReadVariable(variable), (), spec, name=variable.base_name + "/read",
                                     requires_grad=variable.requires_grad).out
        return read

    def constant_of(self, tensor: Tensor) -> Tensor:
        """A constant node holding ``tensor``'s value (one per captured tensor)."""
        entry = self._constants.get(id(tensor))
        if entry is None:
            from graphgrad.graph.variables import Const

            # the tensor is kept in the entry so that its id cannot be reused by another object
            entry = self._constants[id(tensor)] = (self.add_node(Const(tensor._data), (), tensor.spec,
                                                                 name="Const").out, tensor)
        return entry[0]

    @contextlib.contextmanager
    def _no_scope(self):
        scopes, controls = self._scopes, self._control
        self._scopes, self._control = [], []
        try:
            yield
        finally:
            self._scopes, self._control = scopes, controls

    @staticmethod
    def ancestors(roots: Iterable[GraphNode], stop: Iterable[GraphNode] = ()) -> set:
        """``roots`` and every node they depend on through inputs and control inputs, not looking
        past the nodes in ``stop`` (e.g. fed tensors). Iterative: deep graphs are fine."""
        stop = set(stop)
        found, stack = set(), list(roots)
        while stack:
            node = stack.pop()
            if node in found:
                continue
            found.add(node)
            if node in stop:
                continue
            stack.extend(x._node for x in node.inputs if isinstance(x, Tensor) and isinstance(x._node, GraphNode))
            stack.extend(node.control_inputs)
        return found

    def register_variable(self, variable, keep: bool = False) -> None:
        """Remember ``variable``: weakly (an eager program's dropped parameters are not kept alive by
        the global default graph), or, with ``keep``, for the graph's lifetime (variables made inside
        ``with graph.as_default():``, as in TensorFlow)."""
        self._variables.setdefault(id(variable), variable)  # an entry dies with its variable
        if keep and all(v is not variable for v in self._kept):
            self._kept.append(variable)

    def variables(self, trainable_only: bool = False) -> list:
        """The live Variables made or used in this graph, in creation order."""
        return [v for v in self._variables.values() if v.trainable or not trainable_only]


def _node_of(value) -> GraphNode:
    if isinstance(value, GraphNode):
        return value
    if isinstance(value, Tensor) and isinstance(value._node, GraphNode):
        return value._node
    raise GraphError(f"expected a graph tensor or operation, got {type(value).__name__}")


# ---- the default graph ------------------------------------------------------------------------------
_DEFAULT = [Graph()]
_STACK = ThreadLocalStack()  # each thread's ``with g.as_default():`` graphs


def topo_order(roots: Iterable[GraphNode], stop: Iterable[GraphNode] = ()) -> list:
    """The nodes ``roots`` depend on (through inputs and control inputs, not past ``stop``), each
    after everything it depends on. Iterative, so 100,000-node chains are fine."""
    stop = set(stop)
    order, done, stack = [], set(), [(r, False) for r in reversed(list(roots))]
    while stack:
        node, expanded = stack.pop()
        if expanded:
            order.append(node)
            continue
        if node in done:
            continue
        done.add(node)
        stack.append((node, True))
        if node in stop:
            continue
        for c in reversed(node.control_inputs):
            if c not in done:
                stack.append((c, False))
        for x in reversed(node.inputs):
            if isinstance(x, Tensor) and isinstance(x._node, GraphNode) and x._node not in done:
                stack.append((x._node, False))
    return order


def building_graph() -> bool:
    """Whether code runs inside a ``with graph.as_default():`` block."""
    return bool(_STACK)


def get_default_graph() -> Graph:
    """The innermost ``with g.as_default():`` graph, else the global default graph."""
    return _STACK[-1] if _STACK else _DEFAULT[0]


def reset_default_graph() -> Graph:
    """Replace the global default graph by a new empty one (not allowed inside ``as_default``)."""
    if _STACK:
        raise GraphError("reset_default_graph() cannot be called inside a `with graph.as_default():` block")
    _DEFAULT[0] = Graph()
    return _DEFAULT[0]


def name_scope(name: str):
    """``with gg.name_scope("layer1"):`` prefixes node names in the default graph."""
    return get_default_graph().name_scope(name)


def control_dependencies(deps: Iterable[Any]):
    """``with gg.control_dependencies([a, b]):`` makes new nodes run after ``a`` and ``b``."""
    return get_default_graph().control_dependencies(deps)


def graph_of(values: Iterable[Any]) -> Graph:
    """The graph the symbolic values belong to (the default graph if none is symbolic)."""
    for v in values:
        node = v if isinstance(v, GraphNode) else getattr(v, "_node", None)
        if isinstance(node, GraphNode):
            return node.graph
    return get_default_graph()


def _build(op: Op, inputs: tuple) -> Tensor:
    """``GRAPH_BUILDER.build``: add ``op`` applied to ``inputs`` to the right graph."""
    graph = graph_of(inputs) if not core_op.GRAPH_BUILDER.active else get_default_graph()
    return build_in(graph, op, inputs)


def build_in(graph: Graph, op: Op, inputs: tuple, name: Optional[str] = None) -> Tensor:
    """Add ``op`` applied to ``inputs`` to ``graph`` (capturing concrete inputs) and return its output."""
    captured = tuple(graph.capture(x) for x in inputs)
    specs = [spec_of(x) for x in captured]
    try:
        if any(isinstance(s, TensorSpec) and s.shape is None for s in specs):
            spec = _unknown_rank_spec(op, specs)
        else:
            spec = op.infer(*specs)
    except GraphgradError as error:
        site = creation_site()
        raise type(error)(f"{error}\n  (node created at {site})" if site else str(error)) from None
    requires = spec.dtype.kind in "fc" and any(isinstance(x, Tensor) and x.requires_grad for x in captured)
    return graph.add_node(op, captured, spec, name=name, requires_grad=requires).out


def _unknown_rank_spec(op: Op, specs: list) -> TensorSpec:
    """The output spec when an input's rank is unknown (a placeholder made without a shape): the
    shape is unknown too; the dtype is what the op gives for scalars of the input dtypes. An op that
    knows better (a full reduction is 0-d whatever the rank) defines ``infer_unknown_rank(*specs)``."""
    rule = getattr(op, "infer_unknown_rank", None)
    if rule is not None:
        return rule(*specs)
    scalars = [TensorSpec((), s.dtype) if isinstance(s, TensorSpec) and s.shape is None else s for s in specs]
    try:
        dtype = op.infer(*scalars).dtype
    except Exception:
        dtype = np.result_type(*[s.dtype for s in specs if isinstance(s, TensorSpec)])
    return TensorSpec(None, dtype)


type(core_op.GRAPH_BUILDER).build = staticmethod(_build)  # on the class: seen by every thread
