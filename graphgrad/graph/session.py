"""Session: run the part of a graph that some fetches need, with values fed for some tensors.

``run`` prunes the graph to the nodes the fetches depend on (stopping at fed tensors), orders them
by creation (a topological order, since a node's inputs always exist before it), and executes each
node's ``op.forward`` once. The plan, a flat list of steps over numbered value slots, is cached per
(fetches, fed tensors), so a training loop does no graph work per step.

Devices: a graph is built on the host and runs where its data is. A run's array namespace (NumPy,
CuPy, the emulated device's) is that of its fed arrays and the variables it uses (all on one
device), or, with neither, the default device's (``gg.device``, ``gg.set_default_device``). Values
fed as Python numbers or lists belong to no device: they are made on the run's. Constants (kept in
the graph as they were captured; the compiler's rewrites make theirs on the host) are moved to the
run's device once per plan and device. Fetched values stay where they were computed: NumPy arrays
(NumPy scalars for 0-d results, as in TensorFlow) on the CPU, device arrays (0-d arrays for 0-d
results: CuPy has no scalars) on a device; ``graphgrad.backend.to_numpy`` copies one to the host.
"""
from __future__ import annotations

import contextlib
from typing import Any, Callable, Optional, Sequence

from graphgrad import backend, config
from graphgrad.backend import np
from graphgrad.core.autograd import GRAD_MODE, INPLACE_WRITES, MODE_SWITCHES, ThreadLocalStack, check_finite
from graphgrad.core.profiler import PROFILER
from graphgrad.core.tensor import Tensor
from graphgrad.errors import DeviceError, FeedError, GraphError, GraphgradError
from graphgrad.graph.graph import Graph, GraphNode, get_default_graph, topo_order
from graphgrad.graph.plan import reads_first, schedule, straight_line, variable_storage_slots
from graphgrad.graph.variables import Assign, Const, NoOp, Placeholder, ReadVariable, _shape_text, compatible

_ndarray = np.ndarray
_SESSIONS = ThreadLocalStack()  # each thread's default sessions (``with sess:`` / ``sess.as_default()``)


class _Plan:
    """What one (fetches, feeds) combination runs: steps over value slots.

    Each step is ``(slot, forward, argument slots, node, slots to free)``: a value is dropped right
    after its last use, so a run holds only the live intermediates (the liveness part of buffer
    planning). ``program`` is the optimized copy the steps come from (``None`` without optimization).
    """

    __slots__ = ("steps", "template", "feed_slots", "fetch_slots", "program", "memory", "runner", "variables",
                 "copied", "templates", "writes", "invariant")

    def __init__(self, steps, template, feed_slots, fetch_slots, program, memory=None):
        self.steps = steps
        self.template = template
        self.feed_slots = feed_slots
        self.fetch_slots = fetch_slots
        self.program = program
        #: peak live intermediate bytes without/with buffer planning (``graph/plan.py``)
        self.memory = memory or {}
        # the steps as one generated function (see plan.straight_line), and the variables read or
        # assigned, whose arrays (with the feeds) decide the array namespace of a run (an initializer
        # run reads none, and must still write a device variable's new value on its device)
        self.runner = straight_line(steps, len(template), [f for f in fetch_slots if f is not None])
        self.variables = list({id(s[3].op.variable): s[3].op.variable for s in steps
                               if isinstance(s[3].op, (ReadVariable, Assign))}.values())
        self.writes = any(isinstance(s[3].op, Assign) for s in steps)  # (assigns variables: see _run_steps)
        self.invariant: Optional[_Invariant] = None  # the part computed from variables alone, kept
        # fetched values that are a variable's own array (or a view of it) are returned as copies:
        # later runs (and eager optimizers) update variables in place
        self.copied = variable_storage_slots(steps) & {f for f in fetch_slots if f is not None}
        # the template's values per device (constants moved there), made at the first run on it;
        # NumPy's is the template itself when it holds host values only
        on_device = any(backend.is_array(v) and backend.namespace_of(v) is not np for v in template)
        self.templates = {} if on_device else {"cpu": template}

    def template_on(self, xp) -> list:
        """The slot values a run on namespace ``xp`` starts from: constants moved to its device."""
        where = "cpu" if xp is np else backend.placement(xp)
        values = self.templates.get(where)
        if values is None:
            values = self.templates[where] = [_on_device(xp, v) for v in self.template]
        return values

    @property
    def peak_bytes(self) -> int:
        """Estimated peak bytes of live intermediate arrays of one run (with buffer planning)."""
        return self.memory.get("peak_after", 0)


def _plan_frees(steps: list, keep: set) -> None:
    """Attach to each step the slots whose last reader it is (never a fetched slot)."""
    last_use: dict = {}
    for index, step in enumerate(steps):
        for slot in step[2]:
            last_use[slot] = index
    frees: dict = {}
    for slot, index in last_use.items():
        if slot not in keep:
            frees.setdefault(index, []).append(slot)
    for index, slots in frees.items():
        steps[index][4] = tuple(slots)


class Session:
    """Runs graphs: ``with gg.Session() as sess: sess.run(fetches, feed_dict)``.

    Args:
        graph: the graph to run (default: the default graph when the session is made).
        optimize: how hard the compiler works on each plan: ``0`` runs the graph as built, ``1`` the
            cheap rewrites, ``2`` or ``True`` (default) every pass (see ``graphgrad.graph.rewrite``). The user's
            graph is never changed: passes work on a copy.
    """

    def __init__(self, graph: Optional[Graph] = None, optimize: int = 2) -> None:
        self.graph = graph or get_default_graph()
        self.optimize = 2 if optimize is True else int(optimize)  # True: the default level
        self._plans: dict = {}
        self._closed = False

    def __enter__(self) -> "Session":
        _SESSIONS.append(self)  # the default session inside the block, as in TensorFlow 1
        return self

    def __exit__(self, *exc) -> bool:
        if _SESSIONS and _SESSIONS[-1] is self:
            _SESSIONS.pop()
        self.close()
        return False

    @contextlib.contextmanager
    def as_default(self):
        """``with sess.as_default():`` makes this the default session (for ``tensor.eval()`` and
        ``operation.run()``) without closing it at the end of the block."""
        _SESSIONS.append(self)
        try:
            yield self
        finally:
            if _SESSIONS and _SESSIONS[-1] is self:
                _SESSIONS.pop()

    def close(self) -> None:
        """Release cached plans; the session cannot run afterwards."""
        self._closed = True
        self._plans.clear()

    # ---- run ----------------------------------------------------------------------------------------
    def run(self, fetches: Any, feed_dict: Optional[dict] = None) -> Any:
        """Evaluate ``fetches`` (a tensor, operation, Variable, name, or a nested list/tuple/dict/
        namedtuple of them) and return their values in the same structure: NumPy arrays, NumPy
        scalars for 0-d tensors, ``None`` for operations; device arrays for a run on a device (see
        the module docstring).

        ``feed_dict`` maps tensors (placeholders or any other graph tensor, Variables, or their names)
        to values (scalars, lists, arrays, tensors) that replace them for this run.
        """
        if self._closed:
            raise GraphError("this Session is closed")
        flat: list = []
        structure = self._flatten(fetches, flat)
        feeds, loose = {}, []
        for key, value in (feed_dict or {}).items():
            node = self._node_of(key, "feed_dict key")
            feeds[node] = _feed_value(node, value)
            if _python_data(value):
                loose.append(node)
        fetch_nodes = tuple(flat)
        plan_key = (fetch_nodes, frozenset(feeds))  # fed-but-unneeded tensors are part of the key: rare
        return _unflatten(structure, iter(self._results(plan_key, fetch_nodes, feeds, loose)))

    def make_callable(self, fetches: Any, feed_list: Sequence = ()) -> Callable:
        """TensorFlow 1's ``Session.make_callable``: a function ``f(*feed_values)`` that runs
        ``fetches`` with the tensors of ``feed_list`` fed, in that order, and returns what
        :meth:`run` would. Fetches and feeds are resolved once, so a call costs less than ``run``
        (``gg.function`` calls its plans this way). Once the plan exists, a call fed NumPy arrays of
        exactly the fed tensors' dtypes and shapes, with every variable of the plan on the host and
        neither ``gg.profile()`` nor ``gg.detect_anomaly()`` on, puts them straight into the plan's
        slots: there is nothing to convert or check, and no device to look for (a small compiled
        step spent tens of microseconds there)."""
        flat: list = []
        structure = self._flatten(fetches, flat)
        fetch_nodes = tuple(flat)
        feed_nodes = [self._node_of(key, "feed_list entry") for key in feed_list]
        plan_key = (fetch_nodes, frozenset(feed_nodes))
        flat_list = structure == (list, list(range(len(flat))))  # a plain list of fetches: no rebuilding
        specs = [(None, None) if n.out is None else (n.out.spec.dtype, n.out.spec.shape) for n in feed_nodes]
        direct: list = []  # (plan, host template, [(feed index, slot)]), once the plan is made

        def run_direct(values) -> Optional[list]:
            """The fetched values of a run of exact host arrays, or None for the checked way."""
            if not direct or PROFILER.active or (MODE_SWITCHES.count and GRAD_MODE.anomaly) \
                    or len(values) != len(specs):
                return None
            for value, (dtype, shape) in zip(values, specs):
                if value.__class__ is not _ndarray or value.dtype != dtype or value.shape != shape:
                    return None
            plan, template, fed = direct[0]
            for variable in plan.variables:
                if variable._data.__class__ is not _ndarray:
                    return None
            slots = list(template)
            for i, slot in fed:
                slots[slot] = values[i]
            if plan.invariant is not None:
                plan.invariant.fill(slots, np, _run_plain)
            return _fetch_all(plan, _run_steps(plan, slots, np, plan.runner))

        def call(*values):
            if self._closed:
                raise GraphError("this Session is closed")
            results = run_direct(values)
            if results is None:
                if len(values) != len(feed_nodes):
                    raise TypeError(f"this callable takes {len(feed_nodes)} feed values, got {len(values)}")
                feeds = {node: _feed_value(node, value) for node, value in zip(feed_nodes, values)}
                loose = [node for node, value in zip(feed_nodes, values) if value.__class__ is not _ndarray
                         and _python_data(value)]
                results = self._results(plan_key, fetch_nodes, feeds, loose)
                plan = self._plans.get(plan_key)
                if not direct and plan is not None and "cpu" in plan.templates:
                    direct.append((plan, plan.templates["cpu"],
                                   [(i, plan.feed_slots[n]) for i, n in enumerate(feed_nodes) if n in plan.feed_slots]))
            return results if flat_list else _unflatten(structure, iter(results))

        return call

    def _results(self, plan_key: tuple, fetch_nodes: tuple, feeds: dict, loose: Sequence = ()) -> list:
        """Run the plan of ``plan_key`` (made on first use) and return the fetched values, in order.
        ``loose``: the fed nodes whose value was Python data (numbers, lists), made on the run's device."""
        plan = self._plans.get(plan_key)
        if plan is None:
            plan = self._plans[plan_key] = self._make_plan(fetch_nodes, feeds)
        return _fetch_all(plan, self._execute(plan, feeds, loose))

    def _node_of(self, key: Any, what: str) -> GraphNode:
        if isinstance(key, str):
            if key.endswith(":0") or key in self.graph._by_name:
                node = self.graph.get_tensor_by_name(key)._node
            else:
                node = self.graph.get_operation_by_name(key)
        elif isinstance(key, GraphNode):
            node = key
        elif getattr(key, "is_variable", False):
            node = self.graph.read_variable(key)._node
        elif isinstance(key, Tensor) and isinstance(key._node, GraphNode):
            node = key._node
        elif isinstance(key, Tensor):
            raise GraphError(f"{what}: {key!r} is an eager tensor with a value, not a tensor of a graph")
        else:
            raise GraphError(f"{what}: expected a graph tensor, operation, Variable or name, got "
                             f"{type(key).__name__}")
        if node.graph is not self.graph:
            raise GraphError(f"{what}: {node.name!r} belongs to a different graph than this Session's")
        return node

    def _flatten(self, fetches: Any, flat: list) -> Any:
        """Replace every leaf of ``fetches`` by its position in ``flat``; return the skeleton."""
        if isinstance(fetches, dict):
            return {k: self._flatten(v, flat) for k, v in fetches.items()}
        if isinstance(fetches, tuple) and hasattr(fetches, "_fields"):
            return ("namedtuple", type(fetches), [self._flatten(v, flat) for v in fetches])
        if isinstance(fetches, (list, tuple)) and not getattr(fetches, "is_variable", False):
            return (type(fetches), [self._flatten(v, flat) for v in fetches])
        flat.append(self._node_of(fetches, "fetch"))
        return len(flat) - 1

    # ---- planning -----------------------------------------------------------------------------------
    def _make_plan(self, fetch_nodes: tuple, feeds: dict) -> _Plan:
        needed = Graph.ancestors(fetch_nodes, stop=feeds)
        missing = sorted((n for n in needed if isinstance(n.op, Placeholder) and n not in feeds), key=lambda n: n.seq)
        if missing:
            shown = ", ".join(f"{n.name!r} ({_shape_text(n.out.shape)}, {n.out.dtype})" for n in missing)
            raise FeedError(f"you must feed a value for placeholder {shown}: pass it in feed_dict "
                            f"(needed by {', '.join(repr(f.name) for f in fetch_nodes)})")
        program = None
        if self.optimize:
            from graphgrad.graph.rewrite import optimize

            program = optimize(fetch_nodes, feeds, self.optimize)
            order, targets, fed = program.nodes(), program.outputs, program.inputs
            if self.optimize >= 2:
                order = schedule(order, targets)
            else:
                order = reads_first(order)
        else:
            order, targets, fed = topo_order(fetch_nodes, stop=feeds), list(fetch_nodes), {n: n for n in feeds}
            order = reads_first(order)
        split = _invariant_split(order, targets, fed) if self.optimize >= 2 else None
        if split is None:
            return _build_plan(order, targets, fed, program, self.optimize)
        prefix_order, frontier, main_order = split
        prefix = _build_plan(prefix_order, frontier, {}, None, self.optimize)
        plan = _build_plan(main_order, targets, {**fed, **{node: node for node in frontier}}, program, self.optimize)
        plan.invariant = _Invariant(prefix, [plan.feed_slots[node] for node in frontier])
        plan.variables = list({id(v): v for v in plan.variables + prefix.variables}.values())
        # a fetched value that comes from the kept ones is returned as a copy (the next run reuses it)
        plan.copied |= set(plan.invariant.slots) & {f for f in plan.fetch_slots if f is not None}
        return plan

    def _execute(self, plan: _Plan, feeds: dict, loose: Sequence = ()) -> list:
        xp = _run_namespace(plan, feeds, loose)
        if loose and xp is not np:
            feeds = dict(feeds)
            for node in loose:  # Python numbers and lists are data of no device: made on the run's
                feeds[node] = xp.asarray(feeds[node])
        values = list(plan.template_on(xp))
        for node, value in feeds.items():
            slot = plan.feed_slots.get(node)
            if slot is not None:  # feeds the fetches do not need are ignored, as in TensorFlow
                values[slot] = value
        if plan.invariant is not None:
            plan.invariant.fill(values, xp, self._run_plan)
        return self._run_plan(plan, values, xp)

    def _run_plan(self, plan: _Plan, values: list, xp) -> list:
        """Run ``plan``'s steps over ``values``: checked under ``gg.detect_anomaly()``, recorded under
        ``gg.profile()``."""
        if MODE_SWITCHES.count and GRAD_MODE.anomaly:
            return self._interpret(plan, values, xp)
        runner = plan.runner if not PROFILER.active else PROFILER.profile.plan_runner(plan)  # gg.profile()
        return _run_steps(plan, values, xp, runner)

    def _interpret(self, plan: _Plan, values: list, xp) -> list:
        """Run the steps one by one, checking every output for NaN/inf (``gg.detect_anomaly()``)."""
        if plan.writes:  # (as _run_steps does)
            INPLACE_WRITES.epoch += 1
            try:
                return self._check_steps(plan, values, xp)
            finally:
                INPLACE_WRITES.epoch += 1
        return self._check_steps(plan, values, xp)

    @staticmethod
    def _check_steps(plan: _Plan, values: list, xp) -> list:
        for slot, forward, args, node, frees in plan.steps:
            arrays = [values[i] for i in args]
            try:
                out = forward(xp, *arrays)
            except Exception as exc:
                raise _node_error(node, exc) from exc
            where = f"node {node.name!r} ({node.op.name}, created at {node.site})"
            if getattr(node.op, "multiple_outputs", False):
                for item in out:
                    check_finite(where, xp.asarray(item))
            elif out is not None:
                out = out if out.__class__ is _ndarray else xp.asarray(out)
                check_finite(where, out)
            values[slot] = out
            for dead in frees:
                values[dead] = None
        return values


#: Fewest steps computed from variables alone that a plan keeps between runs (see _invariant_split).
MIN_INVARIANT_STEPS = 4


def _build_plan(order: list, targets: list, fed: dict, program, optimize: int) -> _Plan:
    """The plan that runs ``order`` (graph nodes in a topological order) for ``targets``; ``fed``
    maps fed nodes to their node in ``order`` (their values come from the run's feeds)."""
    slot_of = {node: i for i, node in enumerate(order)}
    template: list = [None] * len(order)
    fed_nodes = set(fed.values())
    steps = []
    for node in order:
        if node in fed_nodes:
            continue
        if type(node.op) is Const:  # a constant's value waits in its slot: no step to run
            template[slot_of[node]] = node.op.value
            continue
        if type(node.op) is NoOp:  # nothing to run (its control inputs are ordered already)
            continue
        args = []
        for x in node.inputs:
            if isinstance(x, Tensor):
                args.append(slot_of[x._node])
            else:  # a literal (Python scalar, None...): give it a slot of its own
                args.append(len(template))
                template.append(x)
        steps.append([slot_of[node], node.op.forward, tuple(args), node, ()])
    fetch_slots = [slot_of[n] if n.out is not None else None for n in targets]
    _plan_frees(steps, set(s for s in fetch_slots if s is not None))
    from graphgrad.graph.plan import plan_buffers, plan_memory

    shared = plan_buffers(steps, fetch_slots) if optimize >= 2 else {}
    memory = plan_memory(steps, fetch_slots, shared)
    feed_slots = {orig: slot_of[copy] for orig, copy in fed.items() if copy in slot_of}
    return _Plan([tuple(s) for s in steps], template, feed_slots, fetch_slots, program, memory)


def _invariant_split(order: list, targets: list, fed: dict) -> Optional[tuple]:
    """``(prefix order, frontier, main order)`` when part of a plan is computed from variables and
    constants alone, else ``None``.

    An imported ONNX model run in a Session folds each BatchNormalization into its convolution's
    weights from the variables at every run (trainable: the variables may change), hundreds of small
    steps. Those steps (pure ops, no control inputs, every tensor input a read of a graph Variable,
    a constant or another such step) form the prefix; the frontier is what the rest of the plan
    reads from it. The plan runs the prefix again only when a variable may have changed
    (:class:`_Invariant`). Left whole: a plan that assigns a variable (it changes one at every run),
    plans with control dependencies, those with fewer than :data:`MIN_INVARIANT_STEPS` such steps.
    Only graph Variables count (TensorFlow's: changed by assign ops and ``load``), not an eager
    model's parameters and buffers, whose NumPy arrays PyTorch-style code writes in place
    (``p.data[...] = v``) where no version can see it."""
    from graphgrad.graph.rewrite.cse import is_pure

    fed_nodes = set(fed.values())
    invariant, computed = set(), set()
    for node in order:
        op = node.op
        if type(op) is Assign or node.control_inputs:
            return None
        if node in fed_nodes:
            continue
        if type(op) is Const or (type(op) is ReadVariable and op.variable.graph_collected):
            invariant.add(node)
            continue
        tensors = [x._node for x in node.inputs if isinstance(x, Tensor)]
        if tensors and node.out is not None and is_pure(op) and all(t in invariant for t in tensors):
            invariant.add(node)
            computed.add(node)
    if len(computed) < MIN_INVARIANT_STEPS:
        return None
    fetched = set(targets)
    used_by_main = {x._node for node in order if node not in invariant
                    for x in node.inputs if isinstance(x, Tensor)}
    frontier = [node for node in order if node in computed and (node in used_by_main or node in fetched)]
    used_by_prefix = {x._node for node in computed for x in node.inputs if isinstance(x, Tensor)}
    prefix_order = [node for node in order if node in computed or node in used_by_prefix]
    kept = set(frontier)
    main_order = [node for node in order if node not in invariant or node in kept
                  or (node not in computed and (node in used_by_main or node in fetched))]
    return prefix_order, frontier, main_order


class _Invariant:
    """The prefix of a plan computed from variables and constants alone (:func:`_invariant_split`)
    and the values it gave, kept between runs on the host.

    They are reused while no variable can have changed: nothing was written in place since
    (``INPLACE_WRITES.epoch``, which every in-place write path and every run of a plan that assigns
    variables bumps) and each variable still holds the same array. A graph Variable's array written
    through NumPy directly (``v.data[...] = x`` rather than ``v.load(x)`` or an assign op) is not
    seen, as in TensorFlow, where a variable changes only through its ops."""

    __slots__ = ("prefix", "slots", "kept")

    def __init__(self, prefix: _Plan, slots: list):
        self.prefix = prefix
        self.slots = slots  # the main plan's slots of the frontier values, in prefix fetch order
        self.kept = None    # (epoch, variables' arrays, frontier values) of the last host run

    def fill(self, values: list, xp, run: Callable) -> None:
        """Put the frontier values into the main plan's slot ``values``: the kept ones when still
        valid, else the prefix's, computed by ``run(plan, values, xp)``."""
        kept = self.kept
        if kept is not None and xp is np and kept[0] == INPLACE_WRITES.epoch:
            for variable, array in zip(self.prefix.variables, kept[1]):
                if variable._data is not array:
                    break
            else:
                for slot, value in zip(self.slots, kept[2]):
                    values[slot] = value
                return
        epoch = INPLACE_WRITES.epoch
        prefix = self.prefix
        computed = run(prefix, list(prefix.template_on(xp)), xp)
        results = [computed[slot] for slot in prefix.fetch_slots]
        self.kept = (epoch, [v._data for v in prefix.variables], results) if xp is np else None
        for slot, value in zip(self.slots, results):
            values[slot] = value


def _run_namespace(plan: _Plan, feeds: dict, loose: Sequence = ()):
    """The array namespace a run computes with: that of its fed arrays and the variables it uses,
    which must share one device (a ``DeviceError`` names them otherwise); with neither, the default
    device (``gg.device``). Feeds given as Python data (the nodes in ``loose``) have no device of
    their own."""
    arrays = [v._data for v in plan.variables] + [v for n, v in feeds.items() if n not in loose]
    for first in arrays:
        if first.__class__ is not _ndarray and backend.namespace_of(first) is not np:
            break
    else:  # all on the host (the common case, checked at the cost of a class comparison each)
        return np if arrays else backend.namespace_for_device(config.default_device)
    devices = {}
    for variable in plan.variables:
        devices.setdefault(backend.device_of(variable._data), f"variable {variable.base_name!r}")
    for node, array in feeds.items():
        if node in loose:
            continue
        devices.setdefault(backend.device_of(array), f"the value fed for {node.name!r}")
    if len(devices) > 1:
        shown = ", ".join(f"{what} on {device}" for device, what in devices.items())
        raise DeviceError(f"Session.run: the fed values and the variables a run uses must be on one device, got "
                          f"{shown}; move them with .to(device) (make a graph's Variables inside "
                          "`with gg.device(...)`)")
    return backend.namespace_of(first)


def _python_data(value) -> bool:
    """Whether a fed value is Python data (a number, a list), not an array or a tensor of some device."""
    return not isinstance(value, Tensor) and not backend.is_array(value)


def _on_device(xp, value):
    """A template value (a constant's array, or a literal) on ``xp``'s device."""
    if not backend.is_array(value) or isinstance(value, np.generic):
        return value
    if backend.namespace_of(value) is xp and backend.device_of(value) == backend.placement(xp):
        return value
    host = backend.to_numpy(value)
    return host if xp is np else xp.asarray(host)


def _node_error(node: GraphNode, exc: Exception) -> Exception:
    """``exc`` restated with the node that raised it and where the user's code made that node."""
    where = f" (created at {node.site})" if node.site else ""
    message = f"while running node {node.name!r} ({node.op!r}){where}: {exc}"
    return type(exc)(message) if isinstance(exc, GraphgradError) else GraphError(message)


def _run_steps(plan: _Plan, values: list, xp, runner: Callable) -> list:
    """Run ``plan``'s steps over the slot ``values`` with ``runner``; an error names the node."""
    state = [0]
    if plan.writes:  # variables change (before and after: a plan keeping values may run in between)
        INPLACE_WRITES.epoch += 1
    try:
        runner(values, xp, state)
    except Exception as exc:
        raise _node_error(plan.steps[state[0]][3], exc) from exc
    finally:
        if plan.writes:
            INPLACE_WRITES.epoch += 1
    return values


def _run_plain(plan: _Plan, values: list, xp) -> list:
    """Run ``plan``'s steps with its own runner (the direct path of ``make_callable``)."""
    return _run_steps(plan, values, xp, plan.runner)


def _fetch_all(plan: _Plan, values: list) -> list:
    """The fetched values of a run, in order (see :func:`_fetched`; a variable's own array copied)."""
    results = []
    for slot in plan.fetch_slots:
        value = None if slot is None else values[slot]
        if slot is not None and (value.__class__ is not _ndarray or slot in plan.copied or not value.ndim):
            value = _fetched(value.copy() if slot in plan.copied else value)  # (a plain array as it is)
        results.append(value)
    return results


def _feed_value(node: GraphNode, value: Any):
    """``value`` as an array of the fed tensor's dtype, or a FeedError naming the tensor."""
    if node.out is None:
        raise FeedError(f"cannot feed operation {node.name!r}: it has no output")
    spec = node.out.spec
    if value.__class__ is _ndarray and value.dtype == spec.dtype and value.shape == spec.shape:
        return value  # the common case of a compiled function's call: nothing to check or convert
    kind = "placeholder" if isinstance(node.op, Placeholder) else "tensor"
    array = value._data if isinstance(value, Tensor) else value
    if not backend.is_array(array):
        try:
            array = np.asarray(array)
        except Exception as exc:
            raise FeedError(f"cannot feed {type(value).__name__} for {kind} {node.name!r}: {exc}") from None
    if array.dtype.kind not in "biuf" and array.dtype != spec.dtype:  # e.g. strings for a string placeholder
        raise FeedError(f"cannot feed a value of dtype {array.dtype} for {kind} {node.name!r} ({spec.dtype})")
    if not compatible(array.shape, spec.shape):
        raise FeedError(f"cannot feed a value of shape {_shape_text(array.shape)} for {kind} {node.name!r}, "
                        f"which has shape {_shape_text(spec.shape)}"
                        + (" (wrong rank)" if len(array.shape) != len(spec.shape) else ""))
    if array.dtype != spec.dtype:
        if not np.can_cast(array.dtype, spec.dtype, "same_kind"):
            raise FeedError(f"cannot feed a value of dtype {array.dtype} for {kind} {node.name!r} of dtype "
                            f"{spec.dtype} (it would lose its {array.dtype.kind == 'f' and 'fraction' or 'kind'})")
        array = array.astype(spec.dtype)
    return array


def _fetched(value):
    """A fetched value where it was computed: on the CPU a NumPy array, or a NumPy scalar for a 0-d
    result (as TensorFlow does); on a device the device array (0-d for a 0-d result)."""
    if isinstance(value, np.ndarray):
        return value[()] if value.ndim == 0 else value
    return value if backend.is_array(value) else np.asarray(value)


def _unflatten(structure: Any, values) -> Any:
    if isinstance(structure, int):
        return next(values)
    if isinstance(structure, dict):
        return {k: _unflatten(v, values) for k, v in structure.items()}
    if structure[0] == "namedtuple":
        return structure[1](*[_unflatten(v, values) for v in structure[2]])
    kind, items = structure
    return kind(_unflatten(v, values) for v in items)


def get_default_session() -> Optional[Session]:
    """The innermost session of ``with gg.Session() as sess:`` or ``with sess.as_default():`` in this
    thread, or ``None``."""
    return _SESSIONS[-1] if _SESSIONS else None


def _session_for(what: str, session: Optional[Session]) -> Session:
    session = session or get_default_session()
    if session is None:
        raise GraphError(f"cannot {what} without a session: pass session=, or call it inside "
                         "`with gg.Session() as sess:` or `with sess.as_default():`")
    return session


def _eval(self: Tensor, feed_dict: Optional[dict] = None, session: Optional[Session] = None) -> Any:
    """TensorFlow 1's ``tensor.eval(feed_dict)``: ``session.run(tensor, feed_dict)`` with the default
    session. An eager tensor gives its value as NumPy."""
    if not isinstance(self._node, GraphNode) and not getattr(self, "is_variable", False):
        return _fetched(self._data)
    return _session_for("evaluate a graph tensor", session).run(self, feed_dict)


def _run_operation(self: GraphNode, feed_dict: Optional[dict] = None, session: Optional[Session] = None) -> None:
    """TensorFlow 1's ``operation.run(feed_dict)``: ``session.run(operation, feed_dict)`` with the
    default session."""
    _session_for("run an operation", session).run(self, feed_dict)


Tensor.eval = _eval
GraphNode.run = _run_operation
