"""What ``python -m graphgrad onnx info|run`` does: describe an ONNX model, or run it on .npy inputs."""
from __future__ import annotations

import collections
import math
from typing import Optional, Sequence

from graphgrad.backend import np
from graphgrad.errors import FileLoadError
from graphgrad.graph import files
from graphgrad.io.onnx.trainable import trainable_initializers
from graphgrad.io.onnx.importer import (CONVERTERS, OnnxImportError, as_model, graph_inputs, initializer_arrays,
                                        load_converters, np_dtype, op_key, opsets_of, value_info_spec, value_kind)


def _shape_text(shape) -> str:
    if shape is None:
        return "(any shape)"
    return "(" + ", ".join("?" if d is None else str(d) for d in shape) + ("," if len(shape) == 1 else "") + ")"


def info(path_or_proto) -> dict:
    """Inputs, outputs, ops used (with counts), parameter count, opsets, and the op types graphgrad's
    importer lacks (every node of the main graph; subgraphs of If/Loop are not descended into)."""
    load_converters()
    model = as_model(path_or_proto)
    inits = initializer_arrays(model.graph)
    ops = collections.Counter(op_key(n.domain, n.op_type) for n in model.graph.node)
    trained = trainable_initializers(model, inits)
    return {
        "inputs": [(i.name, *_maybe_spec(i)) for i in graph_inputs(model)],
        "outputs": [(o.name, *_maybe_spec(o)) for o in model.graph.output],
        "ops": dict(sorted(ops.items())),
        "parameters": int(sum(math.prod(a.shape) for a in inits.values())),
        "initializers": len(inits),
        "trained": [name for name in inits if name in trained],
        "trained_values": int(sum(inits[name].size for name in trained)),
        "constants": [name for name, a in inits.items() if a.dtype.kind == "f" and name not in trained],
        "opsets": opsets_of(model),
        "missing_ops": sorted(op for op in ops if op not in CONVERTERS),
        "producer": f"{model.producer_name} {model.producer_version}".strip(),
    }


def _maybe_spec(info_proto) -> tuple:
    """(shape, dtype) of a tensor; (None, "sequence<float32>") for a sequence or an optional."""
    kind = value_kind(info_proto.type)
    if kind in ("sequence", "optional"):
        return None, _type_text(info_proto.type)
    try:
        return value_info_spec(info_proto)
    except Exception:  # outputs may carry no type (a node-test model): not an error for info
        return None, None


def _type_text(type_proto) -> str:
    kind = value_kind(type_proto)
    if kind == "sequence":
        return f"sequence<{_type_text(type_proto.sequence_type.elem_type)}>"
    if kind == "optional":
        return f"optional<{_type_text(type_proto.optional_type.elem_type)}>"
    if kind == "tensor":
        return str(np_dtype(type_proto.tensor_type.elem_type))
    return kind


def format_info(report: dict) -> str:
    lines = [f"producer: {report['producer'] or '-'}; opsets: "
             + ", ".join(f"{d or 'ai.onnx'} {v}" for d, v in report["opsets"].items())]
    lines.append("inputs:")
    lines += [f"  {name} {_shape_text(shape)} {dtype}" for name, shape, dtype in report["inputs"]]
    lines.append("outputs:")
    lines += [f"  {name} {_shape_text(shape)} {dtype or ''}".rstrip() for name, shape, dtype in report["outputs"]]
    lines.append(f"parameters: {report['parameters']:,} in {report['initializers']} initializers")
    trained, constants = report["trained"], report["constants"]
    lines.append(f"fine-tuning trains {len(trained)} of them ({report['trained_values']:,} values; "
                 f"trainable=\"auto\"): " + _names(trained))
    lines.append(f"float initializers kept constant ({len(constants)}): " + _names(constants))
    lines.append("ops: " + ", ".join(f"{op} x{n}" for op, n in report["ops"].items()))
    missing = report["missing_ops"]
    lines.append("ops graphgrad lacks: " + (", ".join(missing) if missing else "none (every op is supported)"))
    return "\n".join(lines)


def _names(names: list, shown: int = 12) -> str:
    if not names:
        return "none"
    more = f", ... (+{len(names) - shown} more)" if len(names) > shown else ""
    return ", ".join(names[:shown]) + more


def parse_inputs(specs: Sequence[str]) -> dict:
    """``["x=data.npy", "mask=m.npy"]`` -> {name: array}; a ``.npz`` file without a name gives all its arrays."""
    feeds = {}
    for spec in specs:
        name, sep, path = spec.partition("=")
        if not sep:
            name, path = "", spec
        # bounded reads: declared array sizes are checked against the file and against
        # graphgrad.config.max_load_bytes before allocating; nothing is unpickled
        if path.endswith(".npz"):
            archive = files.read_npz(path, f"--input {path!r}")
            if not archive:
                raise FileLoadError(f"--input {path!r} holds no arrays")
            if name:
                feeds[name] = archive[name] if name in archive else next(iter(archive.values()))
            else:
                feeds.update(archive)
        else:
            if not name:
                raise ValueError(f"--input {spec!r}: write NAME=FILE.npy (or a .npz file of named arrays)")
            feeds[name] = files.read_npy(path, f"--input {path!r}")
    return feeds


def run(path_or_proto, feeds: dict, output: Optional[str] = None) -> dict:
    """Run the model on ``feeds`` ({input name: array}); returns {output name: array} and writes them
    to ``output`` (.npz) when given."""
    from graphgrad.io.onnx.backend import GraphgradRep

    model = as_model(path_or_proto)
    feeds = check_inputs(model, feeds)
    values = GraphgradRep(model).run(feeds)  # the node tests' runner: static input shapes, shape inputs known
    results = dict(zip([o.name for o in model.graph.output], values))
    if output:
        np.savez(output, **results)
    return results


def check_inputs(model, feeds: dict, warn=None) -> dict:
    """Check ``feeds`` against the model's declared inputs before running: every input is given, each
    tensor has the declared rank and static dims, and a dtype of the declared kind (float64 for float32
    is cast here; an integer for a float, or the reverse, is refused). Given inputs the model does not take
    are reported through ``warn`` (default: a line on stderr) and left out. Returns the feeds to run."""
    import sys

    declared = graph_inputs(model)
    names = [i.name for i in declared]
    unused = [name for name in feeds if name not in names]
    if unused:
        message = (f"warning: the model does not use the given input(s) {unused} (its inputs are {names}); "
                   "they are ignored")
        (warn or (lambda text: print(text, file=sys.stderr)))(message)
    missing = [name for name in names if name not in feeds]
    if missing:
        raise OnnxImportError(f"missing input(s) {missing}: the model's inputs are {names}")
    checked = {}
    for info in declared:
        value = feeds[info.name]
        if value_kind(info.type) != "tensor" or not isinstance(value, np.ndarray):
            checked[info.name] = value
            continue
        try:
            shape, dtype = value_info_spec(info)
        except OnnxImportError:
            shape, dtype = None, None
        if shape is not None and (len(shape) != value.ndim or any(
                d is not None and d != n for d, n in zip(shape, value.shape))):
            raise OnnxImportError(f"input {info.name!r} has shape {_shape_text(value.shape)}, but the model "
                                  f"expects {_shape_text(shape)}")
        if dtype is not None and value.dtype != dtype:
            if value.dtype.kind != np.dtype(dtype).kind:
                raise OnnxImportError(f"input {info.name!r} is {value.dtype}, but the model expects {dtype}")
            value = value.astype(dtype)
        checked[info.name] = value
    return checked


def format_run(results: dict) -> str:
    lines = []
    for name, value in results.items():
        text = np.array2string(value, threshold=20, precision=6)
        lines.append(f"{name} {_shape_text(value.shape)} {value.dtype}:\n{text}")
    return "\n".join(lines)
