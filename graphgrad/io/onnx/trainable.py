"""Which initializers of an imported ONNX model are trained, and which stay constants.

An ONNX file stores every tensor the model holds as an initializer: the weights, and also the
numbers the exporter lifted out of the code, such as attention scales, the fill value of a mask
(-3.4e38), GELU's 0.044715, the exponent of ``Pow(x, 3.0)``, an RMSNorm epsilon, a rotary embedding's
frequencies, or a BatchNorm's running statistics. Fine-tuning must train only the weights. Training
an exponent gives NaN gradients (x^p ln x at x < 0); training a scale or an epsilon drifts it silently.

``trainable="auto"`` (the default of ``gg.onnx.to_module`` and ``gg.onnx.load``) decides per
initializer:

* **The exporter's record, when there is one.** PyTorch's dynamo exporter marks every lifted tensor
  as a ``PARAMETER`` or a ``BUFFER`` (value metadata ``pkg.torch.export.graph_signature.InputSpec.kind``),
  and says which initializers its optimizer folded out of which (``pkg.onnxscript.optimizer.folded_from``:
  a transposed weight is folded from that weight). Exactly PyTorch's parameters are trained, and so
  are the initializers folded from them; buffers and constants are not.
* **Otherwise, the structure.** A float initializer is a weight when it has more than one element,
  holds only finite values of ordinary size (a table of -inf or -3.4e38 is a mask fill), and at least
  one of its uses is a weight use. Following the value through layout and selection ops (Reshape,
  Transpose, Cast, Gather, Slice, Concat...), a use is *not* a weight use when
  - it is an input that is never learned: an exponent (``Pow`` input 1), a ``Clip`` bound, the running
    statistics of ``BatchNormalization``, ``Resize`` scales, a ``Pad`` value, a quantization scale, or
    a ``Range`` bound;
  - or every other input of that op is known without the model's data: constants, shapes and the
    arithmetic on them (a frequency table multiplied by positions from ``Range(Shape(x))``).

``trainable`` may also be ``True`` (every float initializer), ``False`` (none), a collection of
initializer names, or a predicate ``fn(name, array) -> bool``.
"""
from __future__ import annotations

import re
from typing import Any, Callable, Collection, Union

from graphgrad.backend import np
from graphgrad.errors import ArgumentError

Trainable = Union[bool, str, Collection[str], Callable[[str, Any], bool]]

_KIND = "pkg.torch.export.graph_signature.InputSpec.kind"
_FOLDED = "pkg.onnxscript.optimizer.folded_from"

#: (op type, input position) of inputs that are never learned weights
_NEVER_WEIGHTS = frozenset({
    ("Pow", 1), ("Clip", 1), ("Clip", 2), ("BatchNormalization", 3), ("BatchNormalization", 4),
    ("Resize", 1), ("Resize", 2), ("Upsample", 1), ("Pad", 2), ("Dropout", 1),
    ("QuantizeLinear", 1), ("QuantizeLinear", 2), ("DequantizeLinear", 1), ("DequantizeLinear", 2),
    ("Range", 0), ("Range", 1), ("Range", 2), ("ConstantOfShape", 0),
    ("LSTM", 5), ("LSTM", 6), ("GRU", 5), ("RNN", 5),  # initial states
})

#: ops that move or select a value without computing with it: a weight stays a weight through them
#: (the data input only; a Concat passes every input)
_LAYOUT = frozenset({"Identity", "Cast", "CastLike", "Reshape", "Unsqueeze", "Squeeze", "Transpose", "Flatten",
                     "Expand", "Tile", "Slice", "Gather", "GatherElements", "GatherND", "Split", "Concat"})

#: ops whose output never depends on the values of their inputs (or that have none)
_SHAPE_ONLY = frozenset({"Shape", "Size", "Constant", "EyeLike"})

#: largest magnitude an ordinary weight holds; beyond it a table is a mask fill (-3.4e38, -1e9...)
_HUGE = 1e8


def trainable_initializers(model, arrays: dict, trainable: Trainable = "auto") -> set:
    """The names of the initializers of ``model`` (a ModelProto) to train, out of ``arrays``
    ({name: NumPy array}), as ``trainable`` chooses (see the module docstring)."""
    floats = {name for name, array in arrays.items() if array.dtype.kind == "f"}
    if trainable is True:
        return floats
    if trainable is False or trainable is None:
        return set()
    if callable(trainable):
        return {name for name in floats if trainable(name, arrays[name])}
    if isinstance(trainable, str):
        if trainable != "auto":
            raise ArgumentError(f"trainable must be True, False, 'auto', a list of initializer names or a "
                                f"predicate fn(name, array), got {trainable!r}")
        recorded = _exporter_record(model) or {}
        verdicts = {name: _recorded_verdict(name, recorded, set()) for name in floats}
        unknown = {name for name, verdict in verdicts.items() if verdict is None}
        structural = _weights_by_structure(model.graph, arrays, unknown) if unknown else set()
        return {name for name, verdict in verdicts.items() if verdict or name in structural}
    names = set(trainable)
    unknown = sorted(names - set(arrays))
    if unknown:
        raise ArgumentError(f"trainable names initializers the model does not have: {unknown[:5]}")
    not_float = sorted(names - floats)
    if not_float:
        raise ArgumentError(f"trainable names initializers that are not floating point (cannot be trained): "
                            f"{not_float[:5]}")
    return names


# ---- the exporter's record -------------------------------------------------------------------------------
def _exporter_record(model) -> "dict | None":
    """{value name: (kind or None, [names it was folded from])} from the value metadata PyTorch's
    exporter writes; None when the model has no such record."""
    record: dict = {}
    found = False
    entries = list(model.graph.value_info) + list(model.graph.input)
    for entry in entries:
        props = {p.key: p.value for p in getattr(entry, "metadata_props", ())}
        kind, folded = props.get(_KIND), props.get(_FOLDED)
        if kind is None and folded is None:
            continue
        found = found or kind is not None
        record[entry.name] = (kind, _name_list(folded) if folded else [])
    for init in model.graph.initializer:
        props = {p.key: p.value for p in getattr(init, "metadata_props", ())}
        if _KIND in props or _FOLDED in props:
            found = found or _KIND in props
            record.setdefault(init.name, (props.get(_KIND), _name_list(props.get(_FOLDED, ""))))
    return record if found else None


def _name_list(text: str) -> list:
    """The names in the exporter's ``"['a', 'b']"``."""
    import ast

    try:
        names = ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return []
    return [n for n in names if isinstance(n, str)] if isinstance(names, (list, tuple)) else []


def _recorded_verdict(name: str, record: dict, seen: set) -> "bool | None":
    """True for a PyTorch parameter (or a value folded from one), False for a buffer or a constant
    (or a value folded from those only), None when the record does not tell."""
    if name in seen:
        return None
    seen.add(name)
    if name not in record:
        return False if _CONSTANT_NAME.match(name) else None
    kind, sources = record[name]
    if kind is not None:
        return kind == "PARAMETER"
    verdicts = [_recorded_verdict(source, record, seen) for source in sources]
    if any(verdicts):
        return True
    return False if verdicts and all(v is False for v in verdicts) else None


#: names PyTorch's exporter gives to values that are not module state (folded temporaries, constants)
_CONSTANT_NAME = re.compile(r"^(val_\d+|.*lifted_tensor_\d+|.*_tensor_constant\d+)$")


# ---- the structure --------------------------------------------------------------------------------------
def _weights_by_structure(graph, arrays: dict, floats: set) -> set:
    candidates = {name for name in floats if _looks_like_weights(arrays[name])}
    static = _static_values(graph, arrays, candidates)
    uses: dict = {}
    for node in graph.node:
        for position, name in enumerate(node.input):
            if name:
                uses.setdefault(name, []).append((node, position))
    referenced_in_subgraphs = _subgraph_names(graph)
    weights = set()
    for name in candidates:
        if name in referenced_in_subgraphs or _has_weight_use(name, uses, static, set()):
            weights.add(name)
    return weights


def _looks_like_weights(array) -> bool:
    if array.size <= 1:
        return False
    with np.errstate(invalid="ignore", over="ignore"):
        finite = np.isfinite(array)
        return bool(finite.all()) and float(np.abs(array).max()) < _HUGE


def _static_values(graph, arrays: dict, candidates: set) -> tuple:
    """``(static, shaped)``: the names of the values known without the model's data (initializers that
    are not weight candidates, constants, shapes, and whatever is computed from those alone), and
    among them those computed from the inputs' shapes (positions from ``Range(Shape(x))``)."""
    static = {name for name in arrays if name not in candidates}
    shaped: set = set()
    for node in graph.node:
        outputs = [name for name in node.output if name]
        if node.op_type.startswith("Random") or node.op_type in ("Bernoulli", "Multinomial"):
            continue
        if node.op_type in ("Shape", "Size"):
            static.update(outputs)
            shaped.update(outputs)
        elif node.op_type in _SHAPE_ONLY or all(not name or name in static for name in node.input):
            static.update(outputs)
            if any(name in shaped for name in node.input):
                shaped.update(outputs)
    return static, shaped


def _has_weight_use(name: str, uses: dict, static: tuple, seen: set) -> bool:
    """Whether the value ``name``, derived from a weight candidate, meets the model's data (followed
    through layout ops and arithmetic with constants) other than as an input never learned, before
    it is combined with positions or other values computed from shapes (then it is a table)."""
    if name in seen:
        return False
    seen.add(name)
    known, shaped = static
    for node, position in uses.get(name, ()):
        op = node.op_type
        if op in _SHAPE_ONLY or (op, position) in _NEVER_WEIGHTS:
            continue
        if not (op in _LAYOUT and (position == 0 or op == "Concat")):
            others = [n for i, n in enumerate(node.input) if i != position and n]
            if any(n not in known for n in others):
                return True  # computed with the model's data (or another weight): a weight
            if any(n in shaped for n in others):
                continue  # arithmetic with positions or shapes: a table such as rotary frequencies
        if any(_has_weight_use(out, uses, static, seen) for out in node.output if out):
            return True
    return False


def _subgraph_names(graph) -> set:
    """Names read inside the subgraphs of control-flow nodes (their uses there are not followed)."""
    names: set = set()
    for node in graph.node:
        for attribute in node.attribute:
            for sub in list(attribute.graphs) + ([attribute.g] if attribute.HasField("g") else []):
                for inner in sub.node:
                    names.update(n for n in inner.input if n)
                names |= _subgraph_names(sub)
    return names
