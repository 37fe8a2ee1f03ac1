"""Buffer planning for execution plans: in-place execution where it is safe, and memory estimates.

A plan is a flat list of steps ``[slot, forward, argument slots, node, slots freed after]`` (see
``session.py``); values are dropped after their last use (liveness). On top of that:

* **in-place kernels**: a fused elementwise kernel writes its output into the array of an input
  that dies at that step (same shape and dtype, read before the kernel first writes its output),
  instead of allocating;
* **assign without copy**: an ``Assign`` of a value that dies there takes the array as the
  variable's new value instead of copying it.
* **in-place updates**: a fused kernel computing a variable's new value from its old one (an
  optimizer update) writes into the variable's own array when no later step needs the old value
  (``_in_place_updates``); fetched values that are a variable's storage are returned as copies.

A buffer is reused only when it is certainly private to the run: made by an op known to return a
fresh array (elementwise ops, matmul, fused kernels), never fetched, never a fed value, a Variable's
value or a constant, and never seen by an op that may return a view of it (reshape, transpose,
broadcast, indexing, identity...), whose result would alias it.

:func:`memory_estimate` gives the peak bytes of live intermediate arrays at the worst step, without
and with this planning (``plan.memory = {"peak_before": ..., "peak_after": ...}``).
"""
from __future__ import annotations

import heapq
import math

from typing import Callable, Iterable, Sequence

from graphgrad.backend import np
from graphgrad.graph.variables import Assign, Const, Placeholder, ReadVariable
from graphgrad.ops import elementwise as E
from graphgrad.ops import unary as U
from graphgrad.ops.linalg import Linear, MatMul

_FRESH_CACHE: dict = {}


def _fresh_classes() -> tuple:
    """Op classes whose forward always returns a new array that nothing else references."""
    if not _FRESH_CACHE:
        from graphgrad.graph.rewrite.fuse import FusedElementwise

        classes = {FusedElementwise, MatMul, Linear, E.Add, E.Sub, E.Mul, E.Div, E.Maximum, E.Minimum, E.Where, E.Cast,
                   U.Neg, U.Exp, U.Log, U.Tanh, U.TanhGrad, U.Sqrt, U.Relu, U.Abs, U.Sin, U.Cos}
        _FRESH_CACHE["fresh"] = frozenset(classes)
        from graphgrad.ops import reduce as R

        readers = {c for c in vars(R).values() if isinstance(c, type) and issubclass(c, R._Reduction)}
        _FRESH_CACHE["readers"] = frozenset(classes | readers | {R.SumTo})
    return _FRESH_CACHE["fresh"]


def _safe_readers() -> frozenset:
    """Ops that only read their inputs (their output never aliases an input)."""
    _fresh_classes()
    return _FRESH_CACHE["readers"]


def _is_view_op(op) -> bool:
    """Ops whose output may share memory with their first input (counted as that input's storage)."""
    from graphgrad.ops import array as A
    from graphgrad.ops import shape as S
    from graphgrad.ops.indexing import GetItem
    from graphgrad.graph.variables import PlaceholderWithDefault

    return isinstance(op, (S.Reshape, S.Transpose, S.ExpandDims, S.Squeeze, S.BroadcastTo, GetItem,
                           A.Identity, A.ReshapeLike, A.BroadcastLike, A.Flatten, PlaceholderWithDefault))


def _nbytes(node) -> int:
    spec = None if node.out is None else node.out.spec
    if spec is None or spec.shape is None or None in spec.shape:
        return 0
    return math.prod(spec.shape) * spec.dtype.itemsize


def _analyse(steps: list) -> tuple:
    producer = {}
    users: dict = {}
    for i, step in enumerate(steps):
        producer[step[0]] = i
        for slot in step[2]:
            users.setdefault(slot, []).append(i)
    return producer, users


def plan_buffers(steps: list, fetch_slots) -> dict:
    """Rewrite ``steps`` (lists, in place) to run kernels in place and assigns without copies where
    safe. Returns {output slot: donor slot} for the memory estimate."""
    fresh = _fresh_classes()
    readers = _safe_readers()
    fetched = {s for s in fetch_slots if s is not None}
    producer, users = _analyse(steps)

    def private(slot, step_index) -> bool:
        """The value in ``slot`` is a fresh array that dies at step ``step_index`` and nothing aliases."""
        p = producer.get(slot)
        if p is None or slot in fetched or type(steps[p][3].op) not in fresh:
            return False
        if slot not in steps[step_index][4] or steps[step_index][2].count(slot) != 1:
            return False
        return all(u == step_index or type(steps[u][3].op) in readers for u in users.get(slot, ()))

    shared: dict = {}
    updated = _in_place_updates(steps, fetched, producer, users)
    for i, step in enumerate(steps):
        op = step[3].op
        donatable = getattr(op, "donatable", ())
        if i in updated:
            n_outputs = op.kernel.spec.shape[0] if getattr(op, "multiple_outputs", False) else 0
            step[1] = _into_outputs(op.forward_into, updated[i], n_outputs)
        elif donatable:
            for pos in donatable:
                slot = step[2][pos]
                if private(slot, i):
                    step[1] = _into(op.forward_into, pos)
                    shared[step[0]] = slot
                    break
        elif type(op) is Assign and step[2][0] in updated.get("assigns", ()):
            step[1] = _steal(op.variable)  # the value is the variable's own array, updated in place
        elif type(op) is Assign:
            slot = step[2][0]
            node = steps[producer[slot]][3] if slot in producer else None
            var = op.variable
            if node is not None and private(slot, i) and node.out.spec.shape == tuple(var.shape) \
                    and node.out.spec.dtype == var.dtype:
                step[1] = _steal(var)
                shared[step[0]] = slot
    return shared


def _in_place_updates(steps: list, fetched: set, producer: dict, users: dict) -> dict:
    """Fused kernels that may write a variable's new value into the variable's own array.

    A kernel computing ``assign(v, f(read(v), ...))`` (an optimizer update) normally makes a new
    array that the assign then keeps. It may write into the array of ``read(v)`` instead when: the
    kernel reads ``v`` element by element before writing that output (``donors``); every other use
    of the value read from ``v`` (and of views of it) comes before the kernel, and no other read of
    ``v`` sees it between the kernel and the assign; nothing fetches the old or the new value (a
    caller would see it change on the next run); and ``v`` is assigned once in the run.

    Returns {kernel step: {output index: input position}} and, under ``"assigns"``, the slots whose
    assign then only records the (same) array."""
    from graphgrad.graph.rewrite.fuse import Unpack

    reads: dict = {}    # id(variable) -> steps reading it
    assigns: dict = {}  # id(variable) -> steps assigning it
    for i, step in enumerate(steps):
        op = step[3].op
        if type(op) is ReadVariable:
            reads.setdefault(id(op.variable), []).append(i)
        elif type(op) is Assign:
            assigns.setdefault(id(op.variable), []).append(i)

    def aliases(slot) -> list:
        found, stack = [], [slot]
        while stack:
            s = stack.pop()
            found.append(s)
            stack.extend(steps[u][0] for u in users.get(s, ()) if _is_view_op(steps[u][3].op))
        return found

    result: dict = {}
    assigned_slots: list = []
    for i, step in enumerate(steps):
        op = step[3].op
        donors = getattr(op, "donors", None)
        if not donors:
            continue
        multiple = getattr(op, "multiple_outputs", False)
        outputs = {}  # output index -> slot holding that output
        if multiple:
            for u in users.get(step[0], ()):
                if type(steps[u][3].op) is Unpack:
                    outputs[steps[u][3].op.index] = steps[u][0]
        else:
            outputs[0] = step[0]
        chosen = {}
        for k, out_slot in outputs.items():
            if out_slot in fetched or step[0] in fetched:
                continue
            targets = [u for u in users.get(out_slot, ()) if type(steps[u][3].op) is Assign]
            if len(targets) != 1:
                continue
            a = targets[0]
            var = steps[a][3].op.variable
            if len(assigns.get(id(var), ())) != 1 or tuple(var.shape) != tuple(steps[a][3].out.spec.shape):
                continue
            for pos in donors.get(k, ()):
                slot = step[2][pos]
                p = producer.get(slot)
                if p is None or type(steps[p][3].op) is not ReadVariable or steps[p][3].op.variable is not var:
                    continue
                if step[2].count(slot) != 1 or pos in chosen.values():
                    continue
                alias = aliases(slot)
                if any(s in fetched for s in alias):
                    continue
                if any(u > i for s in alias for u in users.get(s, ())):
                    continue
                if any(s != slot and u == i for s in alias for u in users.get(s, ())):
                    continue
                if any(i < r < a for r in reads.get(id(var), ())):
                    continue
                chosen[k] = pos
                assigned_slots.append(out_slot)
                break
        if chosen:
            result[i] = chosen
    result["assigns"] = set(assigned_slots)
    return result


def variable_storage_slots(steps: list) -> set:
    """Slots whose value may be a variable's own array: reads, assigns, and views of those."""
    found = set()
    for slot, _, args, node, _ in steps:
        op = node.op
        if type(op) in (ReadVariable, Assign) or (_is_view_op(op) and args and args[0] in found):
            found.add(slot)
    return found


def _into_outputs(forward_into, chosen: dict, n_outputs: int):
    """A kernel's forward writing output ``k`` into the array at input position ``chosen[k]`` (a
    variable's value; skipped for a read-only array). ``n_outputs`` is 0 for a single-output kernel."""
    if not n_outputs:
        (pos,) = chosen.values()

        def forward(xp, *arrays):
            target = arrays[pos]
            return forward_into(xp, target if _writable(target) else None, *arrays)

        return forward

    def forward_many(xp, *arrays):
        outs = [None] * n_outputs
        for k, pos in chosen.items():
            if _writable(arrays[pos]):
                outs[k] = arrays[pos]
        return forward_into(xp, tuple(outs), *arrays)

    return forward_many


def _writable(array) -> bool:
    flags = getattr(array, "flags", None)
    return flags is None or getattr(flags, "writeable", True)


def _into(forward_into, pos: int):
    def forward(xp, *arrays):
        return forward_into(xp, arrays[pos], *arrays)

    return forward


def _steal(variable):
    def forward(xp, value):
        variable._data = value
        return value

    forward.steals_into = variable  # ``straight_line`` writes this step as one assignment
    return forward


def memory_estimate(steps: list, fetch_slots, shared: dict | None = None, liveness: bool = True) -> int:
    """Peak bytes of live intermediate arrays over the steps (values made by steps: not fed values,
    constants or variable values; a view counts as the array it views). ``shared`` maps output slots
    that reuse another slot's array (in-place steps) to that slot; without ``liveness`` every value is
    kept to the end of the run (an executor with no buffer planning at all)."""
    shared = shared or {}
    fetched = {s for s in fetch_slots if s is not None}
    storage: dict = {}  # slot -> storage id
    size: dict = {}
    end: dict = {}
    start: dict = {}
    n = len(steps)
    last_use: dict = {}
    for i, step in enumerate(steps):
        for slot in step[2]:
            last_use[slot] = i
    for i, step in enumerate(steps):
        slot, node = step[0], step[3]
        op = node.op
        if isinstance(op, (Const, ReadVariable, Placeholder)) or node.out is None:
            continue
        if slot in shared and shared[slot] in storage:
            storage[slot] = storage[shared[slot]]
        elif _is_view_op(op) and step[2]:
            src = storage.get(step[2][0])
            if src is None:
                continue
            storage[slot] = src
        else:
            storage[slot] = slot
            size[slot] = _nbytes(node)
            start[slot] = i
        sid = storage[slot]
        until = n if slot in fetched or not liveness else max(last_use.get(slot, i), i)
        end[sid] = max(end.get(sid, i), until)
    delta = [0] * (n + 2)
    for sid, nbytes in size.items():
        delta[start[sid]] += nbytes
        delta[end[sid] + 1] -= nbytes
    peak = live = 0
    for d in delta:
        live += d
        peak = max(peak, live)
    return peak


def schedule(order: list, fetched: Iterable = ()) -> list:
    """A memory-aware execution order of ``order`` (a topological order of a program's nodes).

    List scheduling: among the nodes whose inputs are ready, run the one that adds the fewest live
    bytes (its output's bytes minus those of the inputs it is the last reader of), ties broken by
    the original order. A training step then runs, for example, a layer's weight-gradient kernel
    before the kernel that back-propagates through the layer's activation, which thereby becomes
    the activation's last reader and may overwrite it in place. Variable reads without control
    inputs run first: every uncontrolled read sees the value from before the run's assignments.
    Ops that communicate (``collective = True``: the distributed collectives) keep their order in
    ``order``: every process must run them in the same sequence, whatever the sizes it sees.
    """
    fetched = set(fetched)
    index = {n: i for i, n in enumerate(order)}
    members = set(order)
    deps: dict = {}
    users: dict = {n: [] for n in order}
    for n in order:
        found = []
        for x in list(n.inputs) + list(n.control_inputs):
            p = x._node if hasattr(x, "_node") else x
            if p in members and p not in found:
                found.append(p)
                users[p].append(n)
        deps[n] = found
    previous = None
    for n in order:
        if getattr(n.op, "collective", False):
            if previous is not None and previous not in deps[n]:
                deps[n].append(previous)
                users[previous].append(n)
            previous = n
    owned = {n: 0 if n in fetched or _is_view_op(n.op) or isinstance(n.op, (Const, ReadVariable, Placeholder))
             else _nbytes(n) for n in order}
    remaining = {n: len(users[n]) for n in order}
    waiting = {n: len(deps[n]) for n in order}
    result = [n for n in order if _uncontrolled_read(n)]
    done = set(result)
    for n in result:
        for u in users[n]:
            waiting[u] -= 1
        for p in deps[n]:
            remaining[p] -= 1

    def cost(n) -> int:
        return owned[n] - sum(owned[p] for p in deps[n] if remaining[p] == 1)

    heap = [(cost(n), index[n], n) for n in order if waiting[n] == 0 and n not in done]
    heapq.heapify(heap)
    while heap:
        c, i, n = heapq.heappop(heap)
        if n in done or c != cost(n):
            continue  # an outdated entry: a fresher one was pushed when its cost changed
        done.add(n)
        result.append(n)
        for p in deps[n]:
            remaining[p] -= 1
            if remaining[p] == 1:  # its last reader now frees it: cheaper to run
                last = next(u for u in users[p] if u not in done)
                if waiting[last] == 0:
                    heapq.heappush(heap, (cost(last), index[last], last))
        for u in users[n]:
            waiting[u] -= 1
            if waiting[u] == 0:
                heapq.heappush(heap, (cost(u), index[u], u))
    if len(result) != len(order):
        return list(order)  # unreachable for a valid program: keep the order it came in
    return result


def _uncontrolled_read(node) -> bool:
    return type(node.op) is ReadVariable and not node.control_inputs


def reads_first(order: list) -> list:
    """``order`` with the variable reads that have no control inputs moved to the front: in a run,
    such a read sees the value from before any of the run's assignments, whatever the order of the
    fetches (read after an assignment with ``gg.control_dependencies``)."""
    return [n for n in order if _uncontrolled_read(n)] + [n for n in order if not _uncontrolled_read(n)]


def plan_memory(steps: list, fetch_slots, shared: dict) -> dict:
    """Peak intermediate bytes of a run: ``peak_before`` without buffer planning (every value kept to
    the end of the run), ``peak_liveness`` with values dropped after their last use, and ``peak_after``
    with in-place reuse of dying buffers as well."""
    return {"peak_before": memory_estimate(steps, fetch_slots, liveness=False),
            "peak_liveness": memory_estimate(steps, fetch_slots),
            "peak_after": memory_estimate(steps, fetch_slots, shared), "in_place_steps": len(shared)}


__all__ = ["plan_buffers", "memory_estimate", "plan_memory", "reads_first", "schedule", "np"]


# ---- straight-line execution ----------------------------------------------------------------------
#: Steps per generated function: CPython's compiler needs memory superlinear in a function's size, so
#: a plan of 100,000 steps is compiled as several functions run one after the other.
STEPS_PER_FUNCTION = 2000


def straight_line(steps: list, n_slots: int, keep: Iterable[int]) -> Callable:
    """Generated Python code that runs every step in order, with slots as local variables.

    The interpreter loop in ``Session._execute`` costs a few microseconds per step (list indexing,
    argument lists, bookkeeping); for graphs of small arrays that is most of the time. The code made
    here does only the calls: ``run(values, xp)`` reads the inputs from ``values``, runs the steps,
    drops dead values as the plan says, and writes back the slots in ``keep``. ``state[0]`` records
    the running step, so an error can still name its node. A long plan is split into functions of
    ``STEPS_PER_FUNCTION`` steps that hand their live values to each other through ``values``.
    """
    keep = sorted(set(keep))
    namespace = {"_nd": np.ndarray}
    if len(steps) <= STEPS_PER_FUNCTION:
        source = _function_source("run", steps, 0, namespace, sorted(_reads(steps, keep)), keep, ())
        exec(compile(source, "<graphgrad plan>", "exec"), namespace)
        run = namespace["run"]
        run.source = source
        return run
    chunks = [steps[i:i + STEPS_PER_FUNCTION] for i in range(0, len(steps), STEPS_PER_FUNCTION)]
    needed_after, later = [], set(keep)
    for chunk in reversed(chunks):  # the slots each chunk's successors read (or the caller keeps)
        needed_after.append(set(later))
        for _, _, args, _, _ in chunk:
            later.update(args)
    needed_after.reverse()
    parts = []
    for k, chunk in enumerate(chunks):
        loaded = sorted({i for _, _, args, _, _ in chunk for i in args})
        touched = set(loaded) | {s[0] for s in chunk}
        write = sorted(touched & needed_after[k])
        drop = sorted(set(loaded) - needed_after[k] - set(keep))  # read here for the last time
        name = f"run{k}"
        source = _function_source(name, chunk, k * STEPS_PER_FUNCTION, namespace, loaded, write, drop)
        exec(compile(source, f"<graphgrad plan, part {k}>", "exec"), namespace)
        parts.append(namespace[name])

    def run(values, xp, state):
        for part in parts:
            part(values, xp, state)

    run.source = f"<{len(parts)} generated functions of up to {STEPS_PER_FUNCTION} steps (sources not kept)>"
    return run


def _reads(steps: list, keep: Sequence[int]) -> set:
    """The slots a function over ``steps`` must read from ``values``: read (or kept) but not made here."""
    return ({i for _, _, args, _, _ in steps for i in args} | set(keep)) - {s[0] for s in steps}


def _function_source(name: str, steps: list, first: int, namespace: dict, read: Sequence[int],
                     write: Sequence[int], drop: Sequence[int]) -> str:
    """The source of ``name(values, xp, state)``: load ``read`` from ``values``, run ``steps`` (numbered
    from ``first``), store ``write`` back and clear ``drop`` in ``values``."""
    lines = [f"def {name}(values, xp, state):"]
    lines += [f"    s{i} = values[{i}]" for i in read]
    for offset, (slot, forward, args, node, frees) in enumerate(steps):
        index = first + offset
        lines.append(f"    state[0] = {index}")
        # reading a variable and an assign that takes its value's array are plain attribute accesses
        if type(node.op) is ReadVariable and forward == node.op.forward:
            namespace[f"v{index}"] = node.op.variable
            lines.append(f"    s{slot} = v{index}._data")
            continue
        if getattr(forward, "steals_into", None) is not None:
            namespace[f"v{index}"] = forward.steals_into
            lines.append(f"    s{slot} = v{index}._data = s{args[0]}")
            continue
        namespace[f"f{index}"] = forward
        call = f"f{index}(xp{''.join(f', s{a}' for a in args)})"
        lines.append(f"    s{slot} = {call}")
        if not getattr(node.op, "multiple_outputs", False):  # a tuple of outputs stays a tuple
            lines.append(f"    if s{slot} is not None and s{slot}.__class__ is not _nd: s{slot} = xp.asarray(s{slot})")
        lines.extend(f"    s{dead} = None" for dead in frees if dead not in write)
    lines += [f"    values[{i}] = s{i}" for i in write]
    lines += [f"    values[{i}] = None" for i in drop]
    lines.append("    return None")
    return "\n".join(lines) + "\n"
