"""ONNX import converters: sequences and optionals.

A sequence is a Python list of graphgrad tensors and an optional is ``None`` (empty) or the value it
holds (see the importer's docstring). These ops only build and take apart lists, so they run when
the model is imported: positions, lengths and split sizes must be known then, while the tensors in
a sequence may depend on the model's inputs (and stay differentiable).
"""
from __future__ import annotations

import graphgrad.ops as G
from graphgrad.backend import np
from graphgrad.io.onnx.importer import const_tensor, converter
from graphgrad.io.onnx.ops_control import run_subgraph


def _sequence(node, value, index: int = 0) -> list:
    if not isinstance(value, list):
        what = "an empty optional" if value is None else "a tensor"
        raise node.error(f"input {index} must be a sequence, got {what}")
    return value


def _position(node, index: int, length: int, default: int, inclusive_end: bool = False) -> int:
    """Input ``index`` as a position in a sequence of ``length`` (negative counts from the end)."""
    value = node.const(index)
    if value is None:
        return default
    position = int(np.asarray(value).reshape(-1)[0])
    last = length if inclusive_end else length - 1
    if not -length <= position <= last:
        raise node.error(f"position {position} is out of range for a sequence of length {length}")
    return position + length if position < 0 else position


@converter("SequenceEmpty")
def sequence_empty(node):
    return []


@converter("SequenceConstruct")
def sequence_construct(node, *tensors):
    return list(tensors)


@converter("SequenceLength")
def sequence_length(node, seq):
    return const_tensor(len(_sequence(node, seq)), np.int64)


@converter("SequenceAt")
def sequence_at(node, seq, position):
    seq = _sequence(node, seq)
    return seq[_position(node, 1, len(seq), 0)]


@converter("SequenceInsert")
def sequence_insert(node, seq, tensor, position=None):
    seq = list(_sequence(node, seq))
    seq.insert(_position(node, 2, len(seq), len(seq), inclusive_end=True), tensor)
    return seq


@converter("SequenceErase")
def sequence_erase(node, seq, position=None):
    seq = list(_sequence(node, seq))
    if not seq:
        raise node.error("cannot erase from an empty sequence")
    del seq[_position(node, 1, len(seq), len(seq) - 1)]
    return seq


@converter("SplitToSequence")
def split_to_sequence(node, x, split=None):
    axis = node.attr("axis", 0)
    axis = axis + x.ndim if axis < 0 else axis
    n = x.shape[axis]
    if n is None:
        raise node.error(f"splitting axis {axis} of shape {x.shape} needs its size at import time")
    sizes = node.const(1)
    if sizes is None:
        pieces = G.split(x, list(range(1, n)), axis) if n > 1 else [x]
        return [G.squeeze(p, axis) for p in pieces] if not node.attr("keepdims", 1) else list(pieces)
    sizes = np.asarray(sizes).astype(np.int64)
    if sizes.ndim == 0:
        step = int(sizes)
        if step <= 0:
            raise node.error(f"split size must be positive, got {step}")
        sizes = [min(step, n - start) for start in range(0, n, step)]
    elif int(sizes.sum()) != n:
        raise node.error(f"split sizes {sizes.tolist()} do not add up to the axis size {n}")
    points = np.cumsum(np.asarray(sizes, dtype=np.int64))[:-1]
    return list(G.split(x, [int(p) for p in points], axis))


@converter("ConcatFromSequence")
def concat_from_sequence(node, seq):
    seq = _sequence(node, seq)
    if not seq:
        raise node.error("cannot concatenate an empty sequence")
    axis = node.attr("axis")
    if node.attr("new_axis", 0):
        return G.stack(seq, axis=axis)
    return G.concatenate(seq, axis)


@converter("SequenceMap")
def sequence_map(node, seq, *extra):
    seq = _sequence(node, seq)
    body = node.attr("body")
    names = [i.name for i in body.input]
    if len(names) != 1 + len(extra):
        raise node.error(f"the body takes {len(names)} inputs, the node has {1 + len(extra)}")
    for k, value in enumerate(extra, start=1):
        if isinstance(value, list) and len(value) != len(seq):
            raise node.error(f"input {k} is a sequence of length {len(value)}, the first {len(seq)}")
    results = [[] for _ in body.output]
    for i, item in enumerate(seq):
        inputs = {names[0]: item}
        inputs.update({name: value[i] if isinstance(value, list) else value
                       for name, value in zip(names[1:], extra)})
        outputs, _ = run_subgraph(node, body, inputs)
        for k, out in enumerate(outputs):
            results[k].append(out)
    results = results[:node.num_outputs]
    return tuple(results) if len(results) != 1 else results[0]


# ---- optionals ---------------------------------------------------------------------------------------------
@converter("Optional")
def optional(node, value=None):
    return value


@converter("OptionalHasElement")
def optional_has_element(node, value=None):
    return const_tensor(value is not None)


@converter("OptionalGetElement")
def optional_get_element(node, value):
    if value is None:
        raise node.error("the optional is empty")
    return value
