"""The rewrite engine: copy the part of a graph a run needs, then apply registered rules to it.

Passes never touch the user's graph: :func:`copy_program` clones the nodes the fetches depend on
into a fresh :class:`Graph` (fed tensors become inputs of the copy), and every rule works on that
copy. A rule is a function ``rule(node, ctx) -> Tensor | None`` registered for a phase and the op
classes it looks at; returning a tensor replaces the node's output everywhere. The driver visits
nodes in topological order until no rule fires (a fixed point), and logs what fired.

Rewrites compute on the host: a rule reads a constant's value as a host NumPy array
(:func:`host_value`; a constant captured from a device tensor is copied to the host once per rule
that asks) and makes host constants. The Session moves constants to the run's device when it runs
the plan (``session.py``), so a compiled graph runs on whatever device its feeds and variables are.
"""
from __future__ import annotations

import collections
import time
from dataclasses import dataclass, field
from typing import Callable, Iterable, Optional

from graphgrad import backend
from graphgrad.backend import np
from graphgrad.core.op import Op
from graphgrad.core.spec import TensorSpec
from graphgrad.core.tensor import Tensor
from graphgrad.errors import GraphError
from graphgrad.graph.graph import Graph, GraphNode, topo_order
from graphgrad.graph.variables import Const, Placeholder

#: phase name -> list of (rule function, tracked op classes or None for every op)
RULES: dict = collections.defaultdict(list)
#: phase name -> whole-program pass ``fn(program) -> Counter of what fired`` (for rewrites that need
#: the whole program at once, such as fusion and pruning)
PROGRAM_PASSES: dict = {}


def rewrite(phase: str, tracks: Optional[Iterable[type]] = None) -> Callable:
    """Register ``fn(node, ctx)`` as a rule of ``phase`` for nodes whose op is one of ``tracks``."""

    def register(fn: Callable) -> Callable:
        RULES[phase].append((fn, tuple(tracks) if tracks is not None else None))
        return fn

    return register


def program_pass(phase: str) -> Callable:
    """Register ``fn(program) -> collections.Counter`` as the whole-program pass ``phase``."""

    def register(fn: Callable) -> Callable:
        PROGRAM_PASSES[phase] = fn
        return fn

    return register


def run_program_pass(program: "Program", phase: str) -> "PassRecord":
    """Run the whole-program pass ``phase`` and record what it changed."""
    start = time.perf_counter()
    before = len(program.nodes())
    fired = PROGRAM_PASSES[phase](program)
    return PassRecord(phase, before, len(program.nodes()), collections.Counter(fired or {}),
                      time.perf_counter() - start)


class Fed(Placeholder):
    """A tensor fed at run time, seen from inside an optimized copy (passes must not look through it)."""


@dataclass
class PassRecord:
    """What one pass changed: node counts, rules fired, time."""

    name: str
    nodes_before: int
    nodes_after: int
    fired: collections.Counter = field(default_factory=collections.Counter)
    seconds: float = 0.0


@dataclass
class Program:
    """An optimized copy of the subgraph a run needs.

    ``outputs[i]`` is the copy's node for the i-th fetch; ``inputs`` maps each fed original node to
    its ``Fed`` node in the copy; ``effects`` are nodes run for their side effects (assignments).
    """

    graph: Graph
    outputs: list
    inputs: dict
    log: list = field(default_factory=list)

    def nodes(self) -> list:
        """The copy's nodes that the outputs need, in execution order."""
        return topo_order([n for n in self.outputs if n is not None])


def producer_op(x) -> Optional[Op]:
    """The op that produced tensor ``x`` (``None`` for literals and sources)."""
    return x._node.op if isinstance(x, Tensor) and x._node is not None else None


class RewriteContext:
    """What a rule can ask: constant values, how many nodes read a value, and a way to add nodes to
    the copy."""

    def __init__(self, graph: Graph) -> None:
        self.graph = graph

    def readers(self, x: Tensor) -> int:
        """How many input slots of the copy's nodes read ``x`` (dead nodes count too: a rule that
        needs ``x`` unshared then errs on the side of not firing)."""
        return sum(1 for n in self.graph._nodes for i in n.inputs if i is x)

    def make(self, op: Op, *inputs) -> Tensor:
        """Add ``op(*inputs)`` to the copy and return its output (shape rule checked)."""
        specs = [x.spec if isinstance(x, Tensor) else x for x in inputs]
        spec = op.infer(*specs)
        requires = spec is not None and spec.dtype.kind in "fc" and any(
            isinstance(x, Tensor) and x.requires_grad for x in inputs)
        return self.graph.add_node(op, tuple(inputs), spec, requires_grad=requires).out

    def constant(self, value, like: Optional[Tensor] = None) -> Tensor:
        """A constant node (with ``like``'s dtype when given), on the host (see the module docstring)."""
        array = np.asarray(value, dtype=None if like is None else like.dtype)
        return self.graph.add_node(Const(array), (), TensorSpec(array.shape, array.dtype), name="Const").out

    @staticmethod
    def const_value(x):
        """The value of a constant input (a Const node's array, on the host, or a Python scalar), else None."""
        if isinstance(x, Tensor):
            node = x._node
            return host_value(node.op) if node is not None and type(node.op) is Const else None
        if isinstance(x, (bool, int, float)):
            return x
        return None

    def is_const(self, x, value=None) -> bool:
        """Whether ``x`` is a constant (equal everywhere to ``value`` when given)."""
        v = self.const_value(x)
        if v is None:
            return False
        if value is None:
            return True
        array = np.asarray(v)
        return array.size > 0 and bool(np.all(array == value))


def host_value(const: Const):
    """A ``Const`` op's value as a host NumPy array (the array itself when it is one already; a copy
    from the device otherwise: rewrites compute on the host)."""
    value = const.value
    return value if isinstance(value, (np.ndarray, np.generic)) else backend.to_numpy(value)


def copy_program(fetch_nodes: Iterable[GraphNode], feeds: Iterable[GraphNode] = ()) -> Program:
    """Clone the nodes ``fetch_nodes`` depend on into a new graph; fed nodes become ``Fed`` inputs."""
    fetch_nodes = list(fetch_nodes)
    feeds = set(feeds)
    graph = Graph()
    mapping: dict = {}
    inputs: dict = {}
    for node in topo_order(fetch_nodes, stop=feeds):
        if node in feeds:
            spec = node.out.spec
            copy = graph.add_node(Fed(spec.shape, spec.dtype), (), spec, name=node.name,
                                  requires_grad=node.out.requires_grad)
            inputs[node] = copy
        else:
            args = tuple(mapping[x._node].out if isinstance(x, Tensor) else x for x in node.inputs)
            controls = tuple(mapping[c] for c in node.control_inputs)
            spec = None if node.out is None else node.out.spec
            requires = node.out is not None and node.out.requires_grad
            copy = graph.add_node(node.op, args, spec, name=node.name, requires_grad=requires,
                                  control_inputs=controls)
            copy.site = node.site
        mapping[node] = copy
    return Program(graph, [mapping[n] for n in fetch_nodes], inputs)


def run_phase(program: Program, phase: str, max_rounds: int = 20) -> PassRecord:
    """Apply the rules of ``phase`` to ``program`` until none fires; return what changed."""
    rules = RULES.get(phase, [])
    before = len(program.nodes())
    record = PassRecord(phase, before, before)
    start = time.perf_counter()
    ctx = RewriteContext(program.graph)
    for _ in range(max_rounds):
        replaced: dict = {}  # node -> tensor standing for its output
        changed = False
        for node in program.nodes():
            _remap_inputs(node, replaced)
            for rule, tracks in rules:
                if tracks is not None and not isinstance(node.op, tracks):
                    continue
                result = rule(node, ctx)
                if result is None or (isinstance(result, Tensor) and result._node is node):
                    continue
                if node.out is None or not _same_spec(result, node.out):
                    raise GraphError(f"rewrite rule {rule.__name__} changed the spec of {node.name}: "
                                     f"{node.out.spec if node.out is not None else None} -> {getattr(result, 'spec', result)}")
                replaced[node] = result
                record.fired[rule.__name__] += 1
                changed = True
                break
        program.outputs = [_final(n, replaced) for n in program.outputs]
        if not changed:
            break
    record.nodes_after = len(program.nodes())
    record.seconds = time.perf_counter() - start
    return record


def _same_spec(result, out: Tensor) -> bool:
    return isinstance(result, Tensor) and result.shape == out.shape and result.dtype == out.dtype


def _final(node: GraphNode, replaced: dict) -> GraphNode:
    while node in replaced:
        node = replaced[node]._node
    return node


def _remap_inputs(node: GraphNode, replaced: dict) -> None:
    if not replaced:
        return
    if any(isinstance(x, Tensor) and x._node in replaced for x in node.inputs):
        node.inputs = tuple(_final(x._node, replaced).out if isinstance(x, Tensor) and x._node in replaced
                            else x for x in node.inputs)
    if any(c in replaced for c in node.control_inputs):
        node.control_inputs = tuple(_final(c, replaced) for c in node.control_inputs)
