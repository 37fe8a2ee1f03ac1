"""Control flow in graphs: loops and conditionals decided when the graph runs, and tensor lists.

``while_loop(cond, body, loop_vars)`` and ``cond(pred, true_fn, false_fn)`` call their Python
functions once, when the graph is built, on placeholders that stand for the loop variables (a
*subgraph*, as TensorFlow 1 builds its loop frames). Tensors of the enclosing graph that the
functions use are *captured*: the subgraph reads them through placeholders of its own, and they
become inputs of the node that runs it. Running that node (``WhileLoop``, ``Cond``) evaluates the
subgraph with a small interpreter over its nodes, as many times as the run decides, so only the
branch taken runs (with its assignments), and a loop's trip count can depend on fed values.

The node's output is packed (all results at once); ``Unpacked`` nodes give each result as a tensor.
Gradients: an output's rule builds, once, the symbolic gradient of the subgraph (the same reverse
walk as everywhere, ``graph.gradients``) and a ``LoopGrad``/``CondGrad`` node that runs it backwards
over the values the forward run kept (the loop's iterations, or the branch taken): gradients reach
the initial values and every captured tensor (weights read in a loop body, for example). Second
derivatives through a loop are not supported.

Tensor lists (``list_write``, ``list_read``, ``list_stack``) are arrays whose rows are written one by
one, the storage of TensorFlow's ``TensorArray``: writing row ``n`` of an ``n``-row list (a loop's
usual append) fills spare capacity of a shared buffer instead of copying, and older versions of the
list, which never see rows past their own length, stay valid.
"""
from __future__ import annotations

import itertools
from typing import Any, Callable, Optional, Sequence

from graphgrad.backend import np
from graphgrad.core.op import Op
from graphgrad.core.spec import TensorSpec
from graphgrad.core.tensor import Tensor
from graphgrad.errors import GradError, GraphError, ShapeError
from graphgrad.graph.graph import GraphNode, get_default_graph
from graphgrad.graph.variables import Assign, Const, NoOp, Placeholder, ReadVariable

_KEYS = itertools.count()
_PACKED = TensorSpec((), np.bool_)  # the spec shown for a packed node (its value is a tuple)


# ---- subgraphs ------------------------------------------------------------------------------------------
class _Runner:
    """Evaluates ``targets`` (tensors or operations of a subgraph) from values for ``sources``
    (nodes): the nodes in between, each once, in a topological order; nothing past ``sources``."""

    def __init__(self, sources: Sequence[GraphNode], targets: Sequence[Any], allowed: set):
        self.n_sources = len(sources)
        slot = {node: i for i, node in enumerate(sources)}
        order, done, stack = [], set(sources), []
        target_nodes = [t._node if isinstance(t, Tensor) else t for t in targets]
        for root in target_nodes:
            stack.append((root, False))
            while stack:
                node, expanded = stack.pop()
                if expanded:
                    order.append(node)
                    continue
                if node in done:
                    continue
                done.add(node)
                stack.append((node, True))
                for c in node.control_inputs:
                    if c in allowed and c not in done:
                        stack.append((c, False))
                for x in node.inputs:
                    if isinstance(x, Tensor) and x._node not in done:
                        if x._node not in allowed:
                            raise GraphError(f"{node.name!r} uses {x.name!r}, which is outside its loop or branch "
                                             "and was not captured")
                        stack.append((x._node, False))
        template: list = [None] * len(sources)
        steps = []
        for node in order:
            slot[node] = len(template)
            template.append(None)
            if type(node.op) is Const:
                template[slot[node]] = node.op.value
                continue
            if isinstance(node.op, Placeholder):
                raise GraphError(f"placeholder {node.name!r} is used inside a loop or branch but was not fed")
            if type(node.op) is NoOp:
                continue
            args = []
            for x in node.inputs:
                if isinstance(x, Tensor):
                    args.append(slot[x._node])
                else:
                    args.append(len(template))
                    template.append(x)
            steps.append((slot[node], node.op.forward, tuple(args), node))
        self.template, self.steps = template, steps
        self.outputs = [slot[n] if n.out is not None else None for n in target_nodes]

    def __call__(self, xp, values: Sequence[Any]) -> list:
        slots = list(self.template)
        slots[:self.n_sources] = values
        for slot, forward, args, node in self.steps:
            try:
                out = forward(xp, *[slots[i] for i in args])
            except Exception as exc:
                where = f" (created at {node.site})" if node.site else ""
                raise type(exc)(f"while running node {node.name!r} ({node.op!r}){where}: {exc}") from exc
            if out is not None and not getattr(node.op, "multiple_outputs", False) and not isinstance(out, np.ndarray):
                out = xp.asarray(out)
            slots[slot] = out
        return [None if s is None else slots[s] for s in self.outputs]


class _Subgraph:
    """What a Python function built on placeholders: its outputs, the outer tensors it captured
    (each read through a placeholder of its own) and its nodes."""

    def __init__(self, graph, fn: Callable, specs: Sequence[TensorSpec], name: str, owner=None):
        self.graph = graph
        start = len(graph._nodes)
        self.inputs = [graph.add_node(Placeholder(s.shape, s.dtype), (), s, name=f"{name}/Placeholder",
                                      requires_grad=s.dtype.kind in "fc") for s in specs]
        for p in self.inputs:
            p.control_inputs = ()
        first_seq = self.inputs[0].seq if self.inputs else None
        self.results = [_as_graph_tensor(graph, r) for r in fn(*[p.out for p in self.inputs])]
        self.nodes = set(graph._nodes[start:])
        if first_seq is None:
            first_seq = min((n.seq for n in self.nodes), default=0)
        self.captured, self.capture_inputs, self.outer_controls = [], [], []
        self._capture(first_seq)

    def _capture(self, first_seq) -> None:
        """Read every outer tensor the nodes use (and each variable read made here without control
        inputs, which stands for the variable's value in the run) through a new placeholder."""
        graph = self.graph
        sources: dict = {}  # outer tensor's node -> its capture placeholder's output
        reads = {n for n in self.nodes if type(n.op) is ReadVariable and not n.control_inputs}

        def placeholder_for(t: Tensor) -> Tensor:
            p = sources.get(t._node)
            if p is None:
                spec = t.spec
                node = graph.add_node(Placeholder(spec.shape, spec.dtype), (), spec,
                                      name=t._node.name.split("/")[-1] + "/captured", requires_grad=t.requires_grad)
                node.control_inputs = ()
                self.captured.append(t)
                self.capture_inputs.append(node)
                p = sources[t._node] = node.out
            return p

        inner = self.nodes - reads
        for node in sorted(inner, key=lambda n: n.seq):
            if node.inputs and any(isinstance(x, Tensor) and x._node not in inner for x in node.inputs):
                node.inputs = tuple(placeholder_for(x) if isinstance(x, Tensor) and x._node not in inner else x
                                    for x in node.inputs)
            for c in node.control_inputs:
                if c not in self.nodes and c not in self.outer_controls:
                    self.outer_controls.append(c)
        self.results = [placeholder_for(r) if isinstance(r, Tensor) and r._node not in inner else r
                        for r in self.results]
        # the new placeholders come before every node that reads them in creation order (the reverse
        # walk of gradients visits nodes by decreasing creation number)
        k = len(self.capture_inputs)
        for j, node in enumerate(self.capture_inputs):
            node.seq = first_seq - 1 + (j + 1) / (k + 2)
            self.nodes.add(node)
        self.nodes -= reads
        self.nodes.update(self.inputs)

    @property
    def sources(self) -> list:
        return self.inputs + self.capture_inputs


def _as_graph_tensor(graph, value):
    """An output of a subgraph as a graph tensor (an operation stays as it is)."""
    if value is None or isinstance(value, GraphNode):
        return value
    if isinstance(value, Tensor):
        return graph.capture(value)
    from graphgrad.graph.variables import constant

    with graph.as_default():
        return constant(value)


def _float(spec) -> bool:
    return spec is not None and spec.dtype.kind in "fc"


class _Gradient:
    """The reverse of one run of a subgraph: the gradients of its float results (seeded through
    placeholders) with respect to its float sources, and the forward values they need."""

    def __init__(self, graph, sub: _Subgraph, name: str):
        from graphgrad.graph.gradients import gradients

        start = len(graph._nodes)
        with graph.as_default():
            self.outputs = [i for i, r in enumerate(sub.results) if isinstance(r, Tensor) and _float(r.spec)]
            self.seeds = [graph.add_node(Placeholder(sub.results[i].spec.shape, sub.results[i].dtype), (),
                                         sub.results[i].spec, name=f"{name}/grad_seed") for i in self.outputs]
            for s in self.seeds:
                s.control_inputs = ()
            sources = sub.sources
            self.wrt = [i for i, s in enumerate(sources) if _float(s.out.spec) and s.out.requires_grad]
            ys = [sub.results[i] for i in self.outputs]
            live = [k for k, y in enumerate(ys) if y.requires_grad]
            found = gradients([ys[k] for k in live], [sources[i].out for i in self.wrt],
                              grad_ys=[self.seeds[k].out for k in live], name=f"{name}_grad") \
                if live and self.wrt else [None] * len(self.wrt)
        made = set(graph._nodes[start:])
        self.found = found
        allowed = sub.nodes | made
        # forward values the gradient reads: kept by each forward run (the sources are kept anyway)
        saved, seen, stack = [], set(), [g._node for g in found if g is not None]
        feeds = set(sub.sources) | {s for s in self.seeds}
        while stack:
            node = stack.pop()
            if node in seen:
                continue
            seen.add(node)
            for x in list(node.inputs) + list(node.control_inputs):
                n = x._node if isinstance(x, Tensor) else x
                if not isinstance(n, GraphNode) or n in seen or n in feeds:
                    continue
                if n in made:
                    stack.append(n)
                elif n in sub.nodes and n.out is not None and isinstance(x, Tensor):
                    if n not in saved:
                        saved.append(n)
        self.saved = saved
        targets = [g for g in found if g is not None]
        self.runner = _Runner(list(sub.sources) + self.seeds + saved, targets, allowed) if targets else None

    def run(self, xp, sources: list, seeds: list, saved: list) -> list:
        """Gradients for the float sources (``None`` where none flows), given the sources' values,
        the seeds of the float results and the saved forward values."""
        values = self.runner(xp, list(sources) + list(seeds) + list(saved)) if self.runner is not None else []
        it = iter(values)
        return [None if g is None else next(it) for g in self.found]


class _Packed(tuple):
    """The results of a loop or branch run; ``record`` keeps what its gradient needs."""


class Unpacked(Op):
    """Result ``index`` of a ``WhileLoop`` or ``Cond`` node (its first input); the other inputs are
    the node's differentiable inputs, which its gradient reaches."""

    props = ("owner", "index")

    def __init__(self, owner, index: int):
        self.owner, self.index = owner, int(index)

    def _key(self) -> tuple:
        return (Unpacked, id(self.owner), self.index)

    def forward(self, xp, packed, *inputs):
        return packed[self.index]

    def backward(self, inputs, out, g):
        grads = self.owner.gradient(inputs[0], self.index, g)
        return (None,) + tuple(grads)


class _Functional(Op):
    """What ``WhileLoop`` and ``Cond`` share: identity, purity, and the gradient nodes."""

    pure = False  # a run may assign variables or draw random numbers: never merged or folded
    multiple_outputs = True
    saves_output = False

    def __init__(self):
        self.key = next(_KEYS)
        self._gradient_nodes: dict = {}

    def _key(self) -> tuple:
        return (type(self), self.key)

    def __repr__(self) -> str:
        return f"{self.name}(#{self.key})"

    def infer(self, *specs):
        return _PACKED

    def _outputs(self, graph, node: GraphNode, specs: list, inputs: list) -> list:
        requires = [_float(s) and not self.stop_gradient and any(isinstance(x, Tensor) and x.requires_grad
                                                                   for x in inputs) for s in specs]
        return [None if s is None else graph.add_node(Unpacked(self, i), (node.out, *inputs), s, name=f"{node.name}/Exit",
                                                     requires_grad=r).out
                for i, (s, r) in enumerate(zip(specs, requires))]

    def gradient(self, packed: Tensor, index: int, g: Tensor) -> list:
        """Gradient tensors for the node's inputs (after the packed one) from ``g``, the gradient of
        result ``index``: a ``FunctionalGrad`` node runs the reverse pass."""
        graph = packed._node.graph
        inputs = packed._node.inputs
        self._prepare_gradient(graph)
        with graph.as_default():
            node = graph.add_node(FunctionalGrad(self, index), (packed, g), _PACKED, name=f"{packed._node.name}_grad")
            return [None if not (isinstance(x, Tensor) and x.requires_grad and _float(x.spec)) else
                    graph.add_node(GradPart(i), (node.out,), x.spec, name=f"{packed._node.name}_grad/part").out
                    for i, x in enumerate(inputs)]


class FunctionalGrad(Op):
    """Runs the reverse pass of a ``WhileLoop`` or ``Cond`` run (kept in the packed result) from the
    gradient of result ``index``; gives one gradient per input of the forward node (``GradPart``)."""

    pure = False
    multiple_outputs = True
    props = ("owner", "index")

    def __init__(self, owner: _Functional, index: int):
        self.owner, self.index = owner, int(index)

    def _key(self) -> tuple:
        return (FunctionalGrad, id(self.owner), self.index)

    def infer(self, *specs):
        return _PACKED

    def forward(self, xp, packed, g):
        record = packed.record
        grads = self.owner.reverse(xp, record, self.index, g)
        return tuple(_zeros(xp, x) if gx is None else gx for gx, x in zip(grads, record["inputs"]))

    def backward(self, inputs, out, g):
        raise GradError("second derivatives through tf.while_loop / tf.cond are not supported")


class GradPart(Op):
    """Item ``index`` of a ``FunctionalGrad`` node's result."""

    props = ("index",)

    def __init__(self, index: int):
        self.index = int(index)

    def forward(self, xp, grads):
        return grads[self.index]

    def backward(self, inputs, out, g):
        raise GradError("second derivatives through tf.while_loop / tf.cond are not supported")


def _zeros(xp, like):
    return xp.zeros(np.shape(like), dtype=getattr(like, "dtype", np.float32))


# ---- while_loop -------------------------------------------------------------------------------------------
class WhileLoop(_Functional):
    """Runs ``body`` while ``cond`` holds (at most ``maximum_iterations`` times when given). Inputs:
    the initial loop values, the captured tensors, then the iteration limit if any."""

    def __init__(self, cond: _Subgraph, body: _Subgraph, n_vars: int, limited: bool, stop_gradient: bool):
        super().__init__()
        self.cond, self.body, self.n_vars = cond, body, n_vars
        self.limited, self.stop_gradient = limited, stop_gradient
        self.grad: Optional[_Gradient] = None
        self._cond_runner = _Runner(cond.sources, [cond.results[0]], cond.nodes)
        self._body_runners: dict = {}

    def _body_runner(self, saved: tuple) -> _Runner:
        runner = self._body_runners.get(saved)
        if runner is None:
            runner = self._body_runners[saved] = _Runner(self.body.sources, list(self.body.results) + list(saved),
                                                         self.body.nodes)
        return runner

    def _prepare_gradient(self, graph) -> None:
        if self.grad is None:
            self.grad = _Gradient(graph, self.body, "while")

    def forward(self, xp, *arrays):
        n, n_cond = self.n_vars, len(self.cond.captured)
        values = list(arrays[:n])
        cond_captured = list(arrays[n:n + n_cond])
        body_captured = list(arrays[n + n_cond:n + n_cond + len(self.body.captured)])
        limit = int(arrays[-1]) if self.limited else None
        saved = tuple(self.grad.saved) if self.grad is not None else None
        runner = self._body_runner(saved or ())
        history = [] if saved is not None else None
        steps = 0
        while limit is None or steps < limit:
            (go,) = self._cond_runner(xp, values + cond_captured)
            if not bool(go):
                break
            out = runner(xp, values + body_captured)
            if history is not None:
                history.append((values, out[n:]))
            values = out[:n]
            steps += 1
        packed = _Packed(v.copy() if any(v is a for a in arrays) else v for v in values)
        packed.record = {"inputs": arrays, "history": history, "captured": body_captured, "final": values}
        return packed

    def reverse(self, xp, record: dict, index: int, g) -> list:
        """Gradients for the inputs (``None`` where none) from ``g``, that of result ``index``."""
        grad, n = self.grad, self.n_vars
        history, captured = record["history"], record["captured"]
        if history is None:
            raise GraphError(f"{self!r}: the forward run kept no values for its gradient")
        seeds = {i: None for i in grad.outputs}
        seeds[index] = g
        capture_grads: list = [None] * len(captured)
        for k in range(len(history) - 1, -1, -1):
            values, saved = history[k]
            results = history[k + 1][0] if k + 1 < len(history) else record["final"]
            feeds = [_zeros(xp, results[i]) if seeds[i] is None else seeds[i] for i in grad.outputs]
            found = grad.run(xp, values + captured, feeds, saved)
            seeds = {i: None for i in grad.outputs}
            for k, src in enumerate(grad.wrt):
                gk = found[k]
                if gk is None:
                    continue
                if src < n:
                    seeds[src] = gk
                else:
                    c = src - n
                    capture_grads[c] = gk if capture_grads[c] is None else capture_grads[c] + gk
        grads = [seeds.get(i) for i in range(n)] + [None] * len(self.cond.captured) + capture_grads
        return grads + [None] if self.limited else grads


def while_loop(cond: Callable, body: Callable, loop_vars: Sequence[Tensor],
               shape_invariants: Optional[Sequence[Any]] = None, maximum_iterations: Any = None,
               back_prop: bool = True, name: str = "while") -> list:
    """Graph tensors: ``loop_vars`` after ``body`` ran while ``cond`` held, decided when the graph
    runs (a trip count given by fed values is fine).

    Args:
        cond: ``cond(*vars) -> bool tensor`` (a scalar).
        body: ``body(*vars) -> list of tensors``, one per loop variable, each of its variable's dtype
            and a shape compatible with its invariant.
        loop_vars: the initial values (graph tensors, or values made constants).
        shape_invariants: per loop variable, the shape it keeps over the iterations (``None`` dims
            vary; default: the initial value's shape; ``None``: any shape).
        maximum_iterations: stop after this many iterations at most (a number or an int tensor).
        back_prop: ``False``: no gradient flows through the loop.

    Returns:
        One graph tensor per loop variable.

    Examples:
        >>> n = gg.placeholder(gg.int32, ())
        >>> i, x = while_loop(lambda i, x: i < n, lambda i, x: [i + 1, x * 2.0], [0, 1.0])
    """
    graph = get_default_graph()
    with graph.as_default():
        loop_vars = [_as_graph_tensor(graph, graph.capture(v) if isinstance(v, Tensor) else v) for v in loop_vars]
        if not loop_vars:
            raise ValueError("while_loop: no loop variables given")
        specs = [v.spec for v in loop_vars]
        if shape_invariants is not None:
            if len(shape_invariants) != len(loop_vars):
                raise ValueError(f"while_loop: {len(shape_invariants)} shape_invariants for {len(loop_vars)} loop "
                                 "variables")
            specs = [s if inv is False else TensorSpec(_invariant_shape(inv, s), s.dtype)
                     for s, inv in zip(specs, shape_invariants)]
        for v, s in zip(loop_vars, specs):
            if not _shape_fits(v.shape, s.shape):
                raise ValueError(f"while_loop: the initial value {v.name} of shape {v.shape} does not fit its shape "
                                 f"invariant {s.shape}")
        name = graph.unique_name(name).split("/")[-1]
        with graph.name_scope(name):
            cond_sub = _Subgraph(graph, lambda *xs: [cond(*xs)], specs, "cond")
            body_sub = _Subgraph(graph, lambda *xs: list(body(*xs)), specs, "body")
        pred = cond_sub.results[0]
        if not isinstance(pred, Tensor) or pred.dtype != np.bool_ or (pred.shape is not None and
                                                                      any(d != 1 for d in pred.shape if d is not None)
                                                                      and len(pred.shape)):
            raise ValueError(f"while_loop: cond must return a scalar boolean tensor, got "
                             f"{getattr(pred, 'spec', pred)!r}")
        if len(body_sub.results) != len(loop_vars):
            raise ValueError(f"while_loop: body returned {len(body_sub.results)} values for {len(loop_vars)} loop "
                             "variables")
        for v, s, r in zip(loop_vars, specs, body_sub.results):
            if not isinstance(r, Tensor):
                raise TypeError(f"while_loop: body must return tensors, got {type(r).__name__}")
            if r.dtype != s.dtype:
                raise TypeError(f"while_loop: the loop variable {v.name} enters the loop with dtype {s.dtype}, but "
                                f"has dtype {r.dtype} after one iteration")
            if not _shape_fits(r.shape, s.shape):
                raise ValueError(f"Input tensor `{v.name}` enters the loop with shape {_tf_shape(s.shape)}, but has "
                                 f"shape {_tf_shape(r.shape)} after one iteration. To allow the shape to vary across "
                                 "iterations, use the `shape_invariants` argument of tf.while_loop to specify a "
                                 "less-specific shape.")
        limited = maximum_iterations is not None
        op = WhileLoop(cond_sub, body_sub, len(loop_vars), limited, not back_prop)
        inputs = list(loop_vars) + cond_sub.captured + body_sub.captured
        if limited:
            from graphgrad.ops import astype

            inputs.append(astype(graph.capture(maximum_iterations) if isinstance(maximum_iterations, Tensor)
                                 else _as_graph_tensor(graph, np.asarray(maximum_iterations, np.int64)), np.int64))
        controls = tuple(dict.fromkeys(cond_sub.outer_controls + body_sub.outer_controls))
        node = _claim(graph, graph.add_node(op, tuple(inputs), _PACKED, name=name, control_inputs=controls), name)
        return op._outputs(graph, node, specs, inputs)


def _claim(graph, node: GraphNode, name: str) -> GraphNode:
    """Name ``node`` ``name`` (already made unique, for the name scope of its subgraphs)."""
    if node.name != name:
        del graph._by_name[node.name]
        node.name = name
        graph._by_name[name] = node
    return node


def _invariant_shape(inv, spec: TensorSpec):
    if inv is None:
        return None
    dims = getattr(inv, "as_list", None)
    if dims is not None:
        try:
            return tuple(dims())
        except ValueError:  # an unknown rank
            return None
    return tuple(None if d is None else int(d) for d in inv)


def _shape_fits(shape, invariant) -> bool:
    if invariant is None:
        return True
    if shape is None or len(shape) != len(invariant):
        return False
    return all(i is None or d == i for d, i in zip(shape, invariant))


def _tf_shape(shape) -> str:
    if shape is None:
        return "<unknown>"
    return "(" + ", ".join("None" if d is None else str(d) for d in shape) + ("," if len(shape) == 1 else "") + ")"


# ---- cond --------------------------------------------------------------------------------------------------
class Cond(_Functional):
    """Runs one of two branches, as its first input (a boolean) says; inputs after it: the tensors
    the true branch captured, then the false branch's."""

    stop_gradient = False

    def __init__(self, branches: tuple):
        super().__init__()
        self.branches = branches
        self.grads: Optional[tuple] = None
        self._runners: dict = {}

    def _runner(self, which: int, saved: tuple) -> _Runner:
        runner = self._runners.get((which, saved))
        if runner is None:
            sub = self.branches[which]
            runner = self._runners[(which, saved)] = _Runner(sub.sources, [r for r in sub.results] + list(saved),
                                                             sub.nodes)
        return runner

    def _prepare_gradient(self, graph) -> None:
        if self.grads is None:
            self.grads = tuple(_Gradient(graph, sub, "cond") for sub in self.branches)

    def forward(self, xp, pred, *arrays):
        which = 0 if bool(pred) else 1
        n_true = len(self.branches[0].captured)
        captured = list(arrays[:n_true]) if which == 0 else list(arrays[n_true:])
        saved = tuple(self.grads[which].saved) if self.grads is not None else ()
        out = self._runner(which, saved)(xp, captured)
        n = len(self.branches[which].results)
        packed = _Packed(v.copy() if v is not None and any(v is a for a in arrays) else v for v in out[:n])
        packed.record = {"inputs": (pred,) + arrays, "which": which, "captured": captured, "saved": out[n:],
                         "results": out[:n]}
        return packed

    def reverse(self, xp, record: dict, index: int, g) -> list:
        which, results = record["which"], record["results"]
        grad = self.grads[which]
        seeds = [g if i == index else _zeros(xp, results[i]) for i in grad.outputs]
        found = grad.run(xp, record["captured"], seeds, record["saved"])
        n_true = len(self.branches[0].captured)
        grads: list = [None] * len(record["inputs"])
        offset = 1 if which == 0 else 1 + n_true
        for k, src in enumerate(grad.wrt):
            grads[offset + src] = found[k]
        return grads


def cond(pred: Tensor, true_fn: Callable, false_fn: Callable, name: str = "cond") -> list:
    """Run ``true_fn``'s subgraph where ``pred`` (a boolean graph tensor) holds when the graph runs,
    else ``false_fn``'s: only the branch taken runs, with its side effects (assignments).

    Each function returns a list of tensors or operations, the same number for both, with matching
    dtypes. Returns one graph tensor per result (shapes merged: a dimension the branches disagree on
    is unknown), ``None`` where the branches return operations.
    """
    graph = get_default_graph()
    with graph.as_default():
        pred = graph.capture(pred)
        name = graph.unique_name(name).split("/")[-1]
        with graph.name_scope(name):
            subs = (_Subgraph(graph, lambda: list(true_fn()), [], "true"),
                    _Subgraph(graph, lambda: list(false_fn()), [], "false"))
        yes, no = subs[0].results, subs[1].results
        if len(yes) != len(no):
            raise ValueError(f"cond: true_fn and false_fn must return the same number of values, got {len(yes)} "
                             f"and {len(no)}")
        specs = []
        for a, b in zip(yes, no):
            if isinstance(a, Tensor) != isinstance(b, Tensor):
                raise TypeError("cond: where one branch returns a tensor, the other must too (not an operation)")
            if not isinstance(a, Tensor):
                specs.append(None)
                continue
            if a.dtype != b.dtype:
                raise TypeError(f"cond: the branches return {a.dtype} and {b.dtype} for the same output")
            specs.append(TensorSpec(_merge_shapes(a.shape, b.shape), a.dtype))
        op = Cond(subs)
        inputs = [pred] + subs[0].captured + subs[1].captured
        controls = tuple(dict.fromkeys(subs[0].outer_controls + subs[1].outer_controls))
        node = _claim(graph, graph.add_node(op, tuple(inputs), _PACKED, name=name, control_inputs=controls), name)
        outs = op._outputs(graph, node, specs, inputs)
        return [o if o is not None else node for o in outs]


def _merge_shapes(a, b):
    if a is None or b is None or len(a) != len(b):
        return None
    return tuple(x if x == y else None for x, y in zip(a, b))


# ---- tensor lists -----------------------------------------------------------------------------------------
_CAPACITY: dict = {}  # id(buffer) -> (buffer, rows used): the buffers with spare rows, and how many are taken


def _grow(xp, rows, index: int, value):
    """``rows`` (an array of rows) with row ``index`` set to ``value``, as a new array or a longer
    view of the same buffer (when ``index`` is the next row and the buffer has room nobody uses)."""
    n = rows.shape[0]
    value = xp.asarray(value, dtype=rows.dtype) if rows.size or n else xp.asarray(value)
    base = rows.base if rows.base is not None else rows
    entry = _CAPACITY.get(id(base))
    if index == n and entry is not None and entry[0] is base and entry[1] == n and n < base.shape[0] \
            and base.shape[1:] == value.shape and base.dtype == rows.dtype:
        base[n] = value
        _CAPACITY[id(base)] = (base, n + 1)
        return base[:n + 1]
    if index < 0:
        raise IndexError(f"tensor list: cannot write at index {index}")
    if n and rows.shape[1:] != value.shape:
        raise ShapeError(f"tensor list: cannot write a value of shape {value.shape} into a list of elements of "
                         f"shape {rows.shape[1:]}")
    size = max(n, index + 1)
    dtype = rows.dtype if n else value.dtype
    if index == n:  # an append: leave room to grow
        base = xp.zeros((max(2 * size, 8),) + value.shape, dtype=dtype)
        if n:
            base[:n] = rows
        base[index] = value
        _CAPACITY.clear() if len(_CAPACITY) > 256 else None
        _CAPACITY[id(base)] = (base, size)
        return base[:size]
    out = xp.zeros((size,) + value.shape, dtype=dtype)
    if n:
        out[:n] = rows
    out[index] = value
    return out


class ListWrite(Op):
    """``rows`` with row ``index`` set to ``value`` (longer if ``index`` is past the end: rows in
    between are zeros)."""

    saves_inputs = False

    def infer(self, rows, index, value):
        if value.shape is None:
            return TensorSpec(None, rows.dtype)
        return TensorSpec((None,) + tuple(value.shape), rows.dtype)

    def infer_unknown_rank(self, rows, index, value):
        return self.infer(rows, index, value)

    def forward(self, xp, rows, index, value):
        return _grow(xp, rows, int(index), value)

    def backward(self, inputs, out, g):
        rows, index, value = inputs
        return ListRows().apply(ListWrite().apply(g, index, ListRead().apply(g, index) * 0.0), rows), None, \
            ListRead().apply(g, index)


class ListRead(Op):
    """Row ``index`` of ``rows``."""

    def infer(self, rows, index):
        return TensorSpec(None if rows.shape is None else tuple(rows.shape[1:]), rows.dtype)

    def infer_unknown_rank(self, rows, index):
        return TensorSpec(None, rows.dtype)

    def forward(self, xp, rows, index):
        i = int(index)
        if not -rows.shape[0] <= i < rows.shape[0]:
            raise IndexError(f"tensor list: cannot read index {i} of a list of {rows.shape[0]} elements")
        return rows[i]

    def backward(self, inputs, out, g):
        rows, index = inputs
        return ListRows().apply(ListWrite().apply(_zeros_rows(rows, g), index, g), rows), None


class ListRows(Op):
    """``rows`` cut or padded with zero rows to as many rows as ``like`` has (gradients of list ops)."""

    saves_inputs = False

    def infer(self, rows, like):
        if like.shape is not None and not like.shape:  # a number of rows
            return TensorSpec(None if rows.shape is None else (None,) + tuple(rows.shape[1:]), rows.dtype)
        shape = None if like.shape is None else tuple(like.shape)
        return TensorSpec(shape, rows.dtype)

    def infer_unknown_rank(self, rows, like):
        return self.infer(rows, like)

    def forward(self, xp, rows, like):
        if like.ndim == 0:  # a number of rows
            n = int(like)
        elif like.shape[1:] != rows.shape[1:]:  # an empty list whose elements had no shape yet
            return xp.zeros(like.shape, dtype=rows.dtype)
        else:
            n = like.shape[0]
        if rows.shape[0] >= n:
            return rows[:n]
        out = xp.zeros((n,) + rows.shape[1:], dtype=rows.dtype)
        out[:rows.shape[0]] = rows
        return out

    def backward(self, inputs, out, g):
        rows, like = inputs
        return ListRows().apply(g, rows), None


class _ZeroRows(Op):
    """Zeros of ``rows``' shape and ``g``'s dtype."""

    def infer(self, rows, g):
        return TensorSpec(rows.shape, g.dtype)

    def infer_unknown_rank(self, rows, g):
        return TensorSpec(None, g.dtype)

    def forward(self, xp, rows, g):
        return xp.zeros(rows.shape, dtype=g.dtype)


def _zeros_rows(rows, g):
    return _ZeroRows().apply(rows, g)


class ListStack(Op):
    """The rows of a tensor list as one tensor whose elements have shape ``element_shape`` (known
    when the graph is built, where the list's own spec lost it: a loop variable of any shape)."""

    props = ("element_shape",)

    def __init__(self, element_shape):
        self.element_shape = None if element_shape is None else tuple(element_shape)

    def infer(self, rows):
        if self.element_shape is None:
            return TensorSpec(rows.shape, rows.dtype)
        first = rows.shape[0] if rows.shape is not None and len(rows.shape) == len(self.element_shape) + 1 else None
        return TensorSpec((first,) + self.element_shape, rows.dtype)

    def infer_unknown_rank(self, rows):
        return self.infer(rows)

    def forward(self, xp, rows):
        if self.element_shape is not None and (rows.ndim != len(self.element_shape) + 1 or any(
                d is not None and d != r for d, r in zip(self.element_shape, rows.shape[1:]))) and rows.shape[0]:
            raise ShapeError(f"tensor list: elements of shape {rows.shape[1:]} where {self.element_shape} was expected")
        return rows

    def backward(self, inputs, out, g):
        return (g,)


def list_stack(rows: Tensor, element_shape=None) -> Tensor:
    """The rows of a tensor list, its spec saying elements have ``element_shape``."""
    return ListStack(element_shape).apply(rows)


def list_write(rows: Tensor, index: Any, value: Tensor) -> Tensor:
    """A tensor list with row ``index`` set to ``value`` (the list grows as needed)."""
    return ListWrite().apply(rows, index, value)


def list_read(rows: Tensor, index: Any) -> Tensor:
    """Row ``index`` of a tensor list."""
    return ListRead().apply(rows, index)


def list_resize(rows: Tensor, like: Tensor) -> Tensor:
    """``rows`` cut, or padded with zero rows, to as many rows as ``like``."""
    return ListRows().apply(rows, like)


__all__ = ["while_loop", "cond", "list_write", "list_read", "list_resize", "list_stack", "WhileLoop", "Cond", "Unpacked",
           "ListWrite", "ListRead", "ListRows"]
