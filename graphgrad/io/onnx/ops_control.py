"""ONNX import converters: control flow (If, Loop, Scan), unrolled when the model is imported.

graphgrad's graphs have no control flow, so these ops are expanded at import time: the branch of an
``If`` is chosen by its condition, which must be an import-time constant; a ``Loop`` runs its body
once per iteration (its trip count and condition must be known at import time, as must the body's
``cond`` output); a ``Scan`` runs its body once per element of the scan axis (a static size). Each
run interprets the subgraph with graphgrad ops on graphgrad tensors, so the unrolled result is
built from ordinary graphgrad ops: it runs eagerly, in a graph or in a trace, and stays
differentiable.

Subgraphs may read values of the enclosing scopes by name: the enclosing interpreter's values so
far (``Interpreter.scope``) are visible in the subgraph, shadowed by the subgraph's own
initializers, inputs and nodes.
"""
from __future__ import annotations

import graphgrad.ops as G
from graphgrad.backend import np
from graphgrad.core.tensor import Tensor
from graphgrad.io.onnx.importer import OnnxImportError, const_tensor, converter, initializer_arrays, value_info_spec

#: the most iterations a Loop with no trip count is unrolled to before giving up
MAX_UNROLL = 100_000


# ---- helpers --------------------------------------------------------------------------------------------
def run_subgraph(node, graph, inputs: dict) -> list:
    """Interpret the subgraph ``graph`` with ``inputs`` (name -> Tensor) on top of the enclosing
    scope; returns the subgraph's outputs (Tensors) in order."""
    outer = node._interpreter
    outer.charge_unrolled(node, max(1, len(graph.node)))
    sub = outer.subgraph_interpreter(graph)
    values = dict(getattr(outer, "scope", None) or {})
    values.update({name: const_tensor(a) for name, a in initializer_arrays(graph).items()})
    values.update(inputs)
    try:
        result = sub.run(values, {})
    except OnnxImportError as exc:
        raise node.error(f"in subgraph {graph.name!r}: {exc}") from exc
    outputs = []
    for info in graph.output:
        if info.name not in result:
            raise node.error(f"subgraph {graph.name!r} output {info.name!r} is not produced by any node, "
                             "input or outer-scope value")
        outputs.append(result[info.name])
    return outputs, sub


def _known(node, sub, t, what: str):
    value = None if t is None else sub.known_value(t)
    if value is None:
        raise node.error(f"{what} must be known when the model is imported (graphgrad unrolls control "
                         "flow), but it depends on the model's input data")
    return value


def _empty_stack(node, info, what: str) -> Tensor:
    """An empty (0, *shape) array for a scan output of a loop that ran zero times."""
    try:
        shape, dtype = value_info_spec(info)
    except OnnxImportError:
        shape, dtype = None, None
    if shape is None or dtype is None or None in shape:
        raise node.error(f"{what} ran zero times, and the shape of its scan output {info.name!r} is not "
                         "declared in the body graph, so its empty result cannot be built")
    return Tensor(np.zeros((0,) + tuple(shape), dtype=dtype))


def _check_budget(node, runs: int, body) -> None:
    """Refuse at once a body that would run ``runs`` times beyond the unrolling budget (rather than
    unrolling until the budget runs out, or hanging on 10**12 iterations)."""
    used, limit = node._interpreter.unroll
    need = max(0, runs) * max(1, len(body.node))
    if used + need > limit:
        raise node.error(f"unrolling it needs {runs:,} runs of its {len(body.node)}-node body, more than the "
                         f"budget of {limit:,} node copies (graphgrad unrolls control flow at import time); "
                         "raise it with gg.onnx.load(..., max_unrolled_nodes=N) or "
                         "graphgrad.io.onnx.importer.MAX_UNROLLED_NODES")


# ---- If ---------------------------------------------------------------------------------------------------
@converter("If")
def _if(node, cond):
    value = node.const(0)
    if value is None:
        raise node.error("the condition is missing")
    value = np.asarray(value)
    if value.size != 1:
        raise node.error(f"the condition must have one element, got shape {value.shape}")
    branch = node.attr("then_branch") if bool(value.reshape(-1)[0]) else node.attr("else_branch")
    if branch is None:
        raise node.error("the branch to run is missing")
    outputs, _ = run_subgraph(node, branch, {})
    if len(outputs) < node.num_outputs:
        raise node.error(f"the branch {branch.name!r} has {len(outputs)} outputs, the node {node.num_outputs}")
    return tuple(outputs[:node.num_outputs]) if node.num_outputs != 1 else outputs[0]


# ---- Loop -------------------------------------------------------------------------------------------------
@converter("Loop")
def _loop(node, trip_count=None, cond=None, *carried):
    body = node.attr("body")
    m = node.const(0)
    keep_going = node.const(1)
    m = None if m is None or np.asarray(m).size == 0 else int(np.asarray(m).reshape(-1)[0])
    keep_going = True if keep_going is None or np.asarray(keep_going).size == 0 else \
        bool(np.asarray(keep_going).reshape(-1)[0])
    if m is None and node.const(1) is None:
        raise node.error("a loop with neither a trip count nor a condition never ends")
    n_carried = len(carried)
    if len(body.input) != n_carried + 2:
        raise node.error(f"the body takes {len(body.input)} inputs, expected {n_carried + 2} "
                         "(iteration number, condition, loop-carried values)")
    n_scan = len(body.output) - 1 - n_carried
    if n_scan < 0:
        raise node.error(f"the body has {len(body.output)} outputs, expected at least {n_carried + 1}")
    if m is not None and node.const(1) is None:  # a fixed trip count: refuse a huge one before unrolling
        _check_budget(node, m, body)
    names = [i.name for i in body.input]
    state = list(carried)
    scans = [[] for _ in range(n_scan)]
    i = 0
    while keep_going and (m is None or i < m):
        if m is None and i >= MAX_UNROLL:
            raise node.error(f"the loop did not end within {MAX_UNROLL} iterations")
        inputs = {names[0]: const_tensor(i, np.int64), names[1]: const_tensor(True, np.bool_)}
        inputs.update(zip(names[2:], state))
        outputs, sub = run_subgraph(node, body, inputs)
        state = outputs[1:1 + n_carried]
        for k, out in enumerate(outputs[1 + n_carried:]):
            scans[k].append(out)
        i += 1
        if m is None or i < m:  # the condition decides whether another iteration runs
            keep_going = bool(np.asarray(_known(node, sub, outputs[0], "the body's condition output"))
                              .reshape(-1)[0])
    results = list(state)
    for k, items in enumerate(scans):
        results.append(G.stack(items, axis=0) if items else
                       _empty_stack(node, body.output[1 + n_carried + k], "the loop"))
    results = results[:node.num_outputs]
    return tuple(results) if len(results) != 1 else results[0]


# ---- Scan -------------------------------------------------------------------------------------------------
def _axes(node, name: str, count: int, ranks: list) -> list:
    axes = node.attr(name) or [0] * count
    if len(axes) != count:
        raise node.error(f"{name} has {len(axes)} entries, expected {count}")
    out = []
    for axis, rank in zip(axes, ranks):
        if not -rank <= axis < rank:
            raise node.error(f"{name}: axis {axis} is out of range for rank {rank}")
        out.append(axis + rank if axis < 0 else axis)
    return out


@converter("Scan")
def _scan(node, *args):
    if node.opset < 9:
        return _scan8(node, *args)
    body = node.attr("body")
    n_scan_in = int(node.attr("num_scan_inputs"))
    n_state = len(args) - n_scan_in
    if n_state < 0:
        raise node.error(f"num_scan_inputs={n_scan_in} but the node has {len(args)} inputs")
    states, scan_inputs = list(args[:n_state]), list(args[n_state:])
    n_scan_out = len(body.output) - n_state
    if n_scan_out < 0 or len(body.input) != len(args):
        raise node.error("the body's inputs and outputs do not match the node's states and scan inputs")
    in_axes = _axes(node, "scan_input_axes", n_scan_in, [len(x.shape) for x in scan_inputs])
    in_dirs = node.attr("scan_input_directions") or [0] * n_scan_in
    out_dirs = node.attr("scan_output_directions") or [0] * n_scan_out
    lengths = set()
    for x, axis in zip(scan_inputs, in_axes):
        size = x.shape[axis]
        if size is None:
            raise node.error(f"the scan axis {axis} of an input of shape {x.shape} must have a static size")
        lengths.add(int(size))
    if len(lengths) > 1:
        raise node.error(f"the scan inputs have different lengths along their scan axes: {sorted(lengths)}")
    if not lengths:
        raise node.error("Scan needs at least one scan input")
    length = lengths.pop()
    _check_budget(node, length, body)
    names = [i.name for i in body.input]
    scans = [[] for _ in range(n_scan_out)]
    for t in range(length):
        inputs = dict(zip(names[:n_state], states))
        for name, x, axis, direction in zip(names[n_state:], scan_inputs, in_axes, in_dirs):
            index = length - 1 - t if direction else t
            inputs[name] = x[(slice(None),) * axis + (index,)]
        outputs, _ = run_subgraph(node, body, inputs)
        states = outputs[:n_state]
        for k, out in enumerate(outputs[n_state:]):
            scans[k].append(out)
    results = list(states)
    for k, items in enumerate(scans):
        info = body.output[n_state + k]
        if not items:
            stacked = _empty_stack(node, info, "the scan")
            rank = len(stacked.shape)
        else:
            if out_dirs[k]:
                items = items[::-1]
            rank = len(items[0].shape) + 1
        axis = int((node.attr("scan_output_axes") or [0] * n_scan_out)[k])
        if not -rank <= axis < rank:
            raise node.error(f"scan_output_axes: axis {axis} is out of range for rank {rank}")
        axis = axis + rank if axis < 0 else axis
        if items:
            stacked = G.stack(items, axis=axis)
        elif axis:
            stacked = G.moveaxis(stacked, 0, axis)
        results.append(stacked)
    results = results[:node.num_outputs]
    return tuple(results) if len(results) != 1 else results[0]


def _scan8(node, sequence_lens, *args):
    """Scan-8: every state and scan input has a leading batch axis, the scan axis is axis 1, and
    ``sequence_lens`` (known at import) may stop a batch entry early (its scan outputs are zero-padded)."""
    body = node.attr("body")
    n_scan_in = int(node.attr("num_scan_inputs"))
    n_state = len(args) - n_scan_in
    states, scan_inputs = list(args[:n_state]), list(args[n_state:])
    if n_state < 0 or len(body.input) != len(args) or not scan_inputs:
        raise node.error("the body's inputs do not match the node's states and scan inputs")
    n_scan_out = len(body.output) - n_state
    batch, length = (scan_inputs[0].shape[0], scan_inputs[0].shape[1])
    if batch is None or length is None:
        raise node.error(f"the batch and scan axes of shape {scan_inputs[0].shape} must have static sizes")
    _check_budget(node, int(batch) * int(length), body)
    lens = node.const(0)
    lens = [length] * batch if lens is None else [int(n) for n in np.asarray(lens).reshape(-1)]
    directions = node.attr("directions") or [0] * n_scan_in
    names = [i.name for i in body.input]
    final_states, scan_outputs = [[] for _ in range(n_state)], [[] for _ in range(n_scan_out)]
    for b in range(batch):
        entry_states = [s[b] for s in states]
        steps = [[] for _ in range(n_scan_out)]
        for t in range(lens[b]):
            inputs = dict(zip(names[:n_state], entry_states))
            for name, x, direction in zip(names[n_state:], scan_inputs, directions):
                inputs[name] = x[b, lens[b] - 1 - t if direction else t]
            outputs, _ = run_subgraph(node, body, inputs)
            entry_states = outputs[:n_state]
            for k, out in enumerate(outputs[n_state:]):
                steps[k].append(out)
        for k, state in enumerate(entry_states):
            final_states[k].append(state)
        for k, items in enumerate(steps):
            if not items:
                raise node.error(f"batch entry {b} runs zero steps, so its scan outputs have no shape")
            padding = [G.zeros_like(items[0])] * (length - len(items))
            scan_outputs[k].append(G.stack(items + padding, axis=0))
    results = [G.stack(items, axis=0) for items in final_states + scan_outputs]
    results = results[:node.num_outputs]
    return tuple(results) if len(results) != 1 else results[0]
