"""ONNX import: run an ONNX graph with graphgrad ops, eagerly, in a static graph or in a trace.

One interpreter serves every use. :class:`Interpreter` walks the ONNX nodes in order and calls the
converter registered for each op type (``@converter("Relu")`` in ``ops_*.py``), which builds the
node's outputs from graphgrad ops on graphgrad tensors. Whether that computes values (eager
tensors), adds nodes to a graph (placeholders) or is traced by ``gg.function`` depends only on the
tensors given, as for any graphgrad code:

* :func:`load` makes a ``gg.Graph`` with a placeholder per model input and interprets the model on
  them: an :class:`OnnxGraph` to run with ``Session.run`` (or ``.run(feeds)``);
* :func:`to_module` returns an :class:`OnnxModule`, whose ``forward(*inputs)`` interprets the model
  on the tensors it is given: eager (differentiable, so the model can be fine-tuned with graphgrad
  optimizers: float initializers are Parameters), or traced by ``gg.function``.

**Import-time constants.** ONNX computes shapes with ops (``Shape -> Gather -> Concat -> Reshape``)
and, since opset 10-18, passes what used to be attributes (``axes``, ``pads``, ``starts``...) as
inputs. A node whose inputs are all constants (``Constant`` nodes, integer initializers, static
shapes of the inputs) is evaluated when the model is imported, so those values are known numbers by
the time a converter needs them (``node.const(i)``); a converter that needs a value computed from
the model's data raises :class:`OnnxImportError` naming the node.

**Values.** An ONNX value is a tensor (a graphgrad ``Tensor``), a sequence (a Python list of
tensors) or an optional (``None`` when empty, else the value it holds). Sequence ops build and take
apart lists when the model is imported, so a sequence's length is fixed by the import; its tensors
may still depend on the inputs.
"""
from __future__ import annotations

import contextlib
import os
from typing import Any, Callable, Optional, Sequence

import graphgrad.ops as G
from graphgrad.backend import np, to_numpy
from graphgrad.core import op as core_op
from graphgrad.core.tensor import Tensor
from graphgrad.errors import GraphgradError, LoadLimitError
from graphgrad.graph import files

#: ONNX op type -> converter ``fn(node: OnnxNode, *inputs) -> value | tuple of values`` (a value: a Tensor, a
#: list of Tensors for a sequence, or None for an omitted input or an empty optional)
CONVERTERS: dict = {}


class OnnxImportError(GraphgradError, ValueError):
    """An ONNX model (or one of its nodes) that graphgrad cannot import, and why."""


class OnnxLoadLimitError(OnnxImportError, LoadLimitError):
    """An ONNX model file, or its external data, over ``graphgrad.config.max_load_bytes`` (refused before
    reading; raise the limit to import it). Caught as OnnxImportError and as LoadLimitError."""


def converter(*op_types: str, domain: str = "") -> Callable:
    """Register ``fn(node, *inputs)`` as the converter of the ONNX op types ``op_types`` (of ``domain``,
    the default ONNX domain unless given)."""

    def register(fn: Callable) -> Callable:
        for op_type in op_types:
            CONVERTERS[op_key(domain, op_type)] = fn
        return fn

    return register


def op_key(domain: str, op_type: str) -> str:
    """The key of an op in :data:`CONVERTERS`: ``"Relu"``, or ``"ai.onnx.preview.training.Adam"``."""
    return op_type if domain in ("", "ai.onnx") else f"{domain}.{op_type}"


def load_converters() -> None:
    """Register every converter family (they import this module, so they are loaded on first use)."""
    from graphgrad.io.onnx import (fusion, ops_attention, ops_control, ops_math, ops_ml, ops_nn,  # noqa: F401
                                   ops_quantize, ops_random, ops_resize, ops_rnn, ops_sequence, ops_shape,
                                   ops_signal, ops_training, ops_vision)


def onnx_module():
    """The ``onnx`` package, or an ImportError saying how to install it."""
    try:
        import onnx
    except ImportError:
        raise ImportError("ONNX support needs the onnx package: pip install 'graphgrad[onnx]'") from None
    return onnx


# ---- dtypes -------------------------------------------------------------------------------------------
def np_dtype(onnx_type: int):
    """The NumPy dtype of an ONNX ``TensorProto`` element type (an OnnxImportError if it has none)."""
    onnx = onnx_module()
    try:
        return np.dtype(onnx.helper.tensor_dtype_to_np_dtype(int(onnx_type)))
    except Exception:
        name = onnx.TensorProto.DataType.Name(int(onnx_type)) if int(onnx_type) in \
            onnx.TensorProto.DataType.values() else str(onnx_type)
        raise OnnxImportError(f"ONNX element type {name} has no NumPy dtype in graphgrad") from None


def onnx_type(dtype) -> int:
    """The ONNX ``TensorProto`` element type of a NumPy dtype."""
    return onnx_module().helper.np_dtype_to_tensor_dtype(np.dtype(dtype))


def const_tensor(value, dtype=None) -> Tensor:
    """An import-time constant: ``value`` as a concrete tensor, of ``dtype`` when given (tables and
    attribute floats are float64: giving the input's dtype keeps them from promoting it), else of
    ``value``'s own dtype exactly."""
    return Tensor(np.asarray(value, dtype=dtype))


# ---- the node seen by a converter ------------------------------------------------------------------------
class OnnxNode:
    """An ONNX node as its converter sees it: attributes with defaults, the opset, constant inputs.

    Attributes:
        op_type, name, domain: the node's.
        opset: the model's opset version for the node's domain (converters branch on it where an
            attribute became an input).
        inputs: graphgrad tensors, ``None`` for omitted optional inputs.
        num_outputs: how many outputs the model uses (trailing optional outputs may be absent).
    """

    def __init__(self, proto, opset: int, inputs: list, interpreter: "Interpreter"):
        self.proto = proto
        self.op_type = proto.op_type
        self.name = proto.name or (f"{proto.op_type} (unnamed, output {proto.output[0]!r})" if proto.output
                                   else f"{proto.op_type} (unnamed, no outputs)")
        self.domain = proto.domain
        self.opset = opset
        self.inputs = inputs
        self.num_outputs = len(proto.output)
        self.output_names = list(proto.output)
        self._interpreter = interpreter
        self._attrs = {a.name: a for a in proto.attribute}

    def has(self, name: str) -> bool:
        return name in self._attrs

    def attr(self, name: str, default: Any = None) -> Any:
        """The attribute's value as Python (int, float, str, list, NumPy array for a tensor)."""
        a = self._attrs.get(name)
        if a is None:
            return default
        onnx = onnx_module()
        value = onnx.helper.get_attribute_value(a)
        if isinstance(value, bytes):
            return value.decode()
        if isinstance(value, onnx.TensorProto):
            return onnx.numpy_helper.to_array(value)
        if isinstance(value, list) and value and isinstance(value[0], bytes):
            return [v.decode() for v in value]
        return value

    def const(self, index: int, default: Any = None):
        """Input ``index`` as a NumPy array known now (a constant, an initializer, a static shape...),
        ``default`` when the input is omitted; an OnnxImportError when it depends on the model's data."""
        if index >= len(self.inputs) or self.inputs[index] is None:
            return default
        t = self.inputs[index]
        value = self._interpreter.known_value(t)
        if value is None:
            raise self.error(f"input {index} ({self.proto.input[index]!r}) must be known when the model is "
                             "imported (a constant, an initializer or computed from static shapes), but it "
                             "depends on the model's input data")
        return to_numpy(value)  # (a value computed on a device is read back: converters use it as numbers)

    def entries(self, index: int) -> Optional[list]:
        """The elements of input ``index`` (a 0-d or 1-d integer tensor, e.g. a shape) that are known
        when the model is imported, ``None`` for those known only at run time: all of a constant, the
        static dimensions of a run-time ``Shape``. ``None`` when the input is absent or not such a
        tensor of known length."""
        if index >= len(self.inputs) or self.inputs[index] is None:
            return None
        t = self.inputs[index]
        if not isinstance(t, Tensor) or t.dtype.kind not in "iu" or len(t.shape) > 1 or None in t.shape:
            return None
        value = self._interpreter.known_value(t)
        if value is not None:
            return [int(v) for v in to_numpy(value).reshape(-1)]
        return list(self._interpreter.partial_of(t) or [None] * (t.shape[0] if t.shape else 1))

    def shape_value(self, t: Tensor, entries: Sequence) -> Tensor:
        """``t``, a run-time integer tensor whose elements ``entries`` are partly known now (``None``
        for the others): the constant itself when every element is known, else ``t``, remembered with
        its known elements for the shape arithmetic that follows (see :meth:`entries`)."""
        entries = list(entries)
        if all(e is not None for e in entries):
            return const_tensor(np.asarray(entries, dtype=t.dtype).reshape(t.shape))
        self._interpreter.record_partial(t, entries)
        return t

    def error(self, message: str) -> OnnxImportError:
        return OnnxImportError(f"ONNX {self.op_type} node {self.name!r}: {message}")

    def unsupported(self, what: str) -> OnnxImportError:
        return self.error(f"{what} is not supported by graphgrad's importer")


# ---- the interpreter -----------------------------------------------------------------------------------
@contextlib.contextmanager
def _evaluating_now():
    """Run ops eagerly even inside a graph or a trace (for import-time constants)."""
    previous = core_op.GRAPH_BUILDER.active
    core_op.GRAPH_BUILDER.active = False
    try:
        yield
    finally:
        core_op.GRAPH_BUILDER.active = previous


def _foldable(t) -> bool:
    """An import-time constant: a concrete tensor that is neither a variable nor trained (or a
    sequence of them, or an empty optional)."""
    if isinstance(t, list):
        return all(_foldable(item) for item in t)
    return t is None or (t._data is not None and not t.requires_grad and not getattr(t, "is_variable", False))


def _as_value(out):
    """A converter's output as an interpreter value: a Tensor, a list of Tensors, or None."""
    if out is None or isinstance(out, Tensor):
        return out
    if isinstance(out, list):
        return [_as_value(item) for item in out]
    return const_tensor(out)


class Interpreter:
    """Runs an ONNX ``GraphProto`` with graphgrad ops (see the module docstring).

    ``reads`` pairs graph tensors that read a variable with it, so that converters may still use the
    variable's current value as an import-time constant (a clip bound stored as an initializer)."""

    def __init__(self, graph_proto, opsets: dict, reads: Sequence = (), max_unrolled_nodes: Optional[int] = None,
                 fuse: bool = True):
        load_converters()
        # the control-flow budget, shared with subgraph interpreters: [node copies unrolled, limit]
        self.unroll = [0, MAX_UNROLLED_NODES if max_unrolled_nodes is None else int(max_unrolled_nodes)]
        from graphgrad.io.onnx.fusion import fused_nodes

        self.graph = graph_proto
        # patterns converted as one node (fusion.py), unless ``fuse`` is off
        self.nodes = fused_nodes(graph_proto, opsets.get("", 1)) if fuse else list(graph_proto.node)
        self.opsets = opsets
        self.reads = {id(t): variable for t, variable in reads}
        # id(run-time integer tensor) -> (the tensor, its elements known at import or None): the static
        # parts of shapes computed at run time (a graph whose inputs have None dimensions)
        self.partial: dict = {}

    def record_partial(self, t: Tensor, entries: list) -> None:
        self.partial[id(t)] = (t, list(entries))

    def partial_of(self, t: Tensor) -> Optional[list]:
        entry = self.partial.get(id(t))
        return entry[1] if entry is not None and entry[0] is t else None

    def subgraph_interpreter(self, graph_proto) -> "Interpreter":
        """An interpreter of the same kind for a subgraph (If, Loop, Scan bodies), sharing the reads
        of variables, which stay usable as import-time constants."""
        sub = Interpreter(graph_proto, self.opsets)
        sub.reads, sub.unroll, sub.partial = self.reads, self.unroll, self.partial
        sub._is_subgraph = True
        return sub

    def charge_unrolled(self, node, count: int) -> None:
        """Count ``count`` more node copies unrolled from control flow (``node``: the If, Loop or Scan)
        against the budget; an OnnxImportError naming the node when it is exceeded."""
        self.unroll[0] += count
        if self.unroll[0] > self.unroll[1]:
            raise node.error(f"unrolling it needs more than {self.unroll[1]:,} node copies, the import budget "
                             "(graphgrad unrolls control flow at import time); raise it with "
                             "gg.onnx.load(..., max_unrolled_nodes=N) or "
                             "graphgrad.io.onnx.importer.MAX_UNROLLED_NODES")

    def known_value(self, t: Tensor):
        """The value of ``t`` if it is known now (a concrete tensor, or a read of a variable)."""
        if t._data is not None:
            return t._data
        variable = self.reads.get(id(t))
        return None if variable is None else variable._data

    def run(self, inputs: dict, initializers: dict) -> dict:
        """Interpret the graph with ``inputs`` and ``initializers`` (name -> Tensor or array);
        returns every value by name (outputs included)."""
        values: dict = {name: value if isinstance(value, Tensor) else const_tensor(value)
                        for name, value in initializers.items()}
        values.update(inputs)
        if not getattr(self, "_is_subgraph", False):
            self.unroll[0] = 0  # a new import (or conversion): the budget starts again
        # the values in scope so far, for control-flow converters (If, Loop, Scan) whose subgraphs
        # read outer-scope names (see ops_control.py)
        self.scope = values
        for proto in self.nodes:
            args = []
            for name in proto.input:
                if not name:
                    args.append(None)
                    continue
                if name not in values:
                    raise OnnxImportError(f"ONNX {proto.op_type} node {proto.name!r}: input {name!r} is not "
                                          "produced by any earlier node, input or initializer")
                args.append(values[name])
            outputs = self._convert(proto, args)
            for name, out in zip(proto.output, outputs):
                if name:
                    values[name] = out
        return values

    def _convert(self, proto, args: list) -> list:
        domain = proto.domain if proto.domain not in ("", "ai.onnx") else ""
        fn = CONVERTERS.get(op_key(domain, proto.op_type))
        if fn is None:
            where = f" (domain {proto.domain!r})" if domain else ""
            raise OnnxImportError(f"ONNX op {proto.op_type}{where} (node {proto.name!r}) is not supported by "
                                  "graphgrad's importer")
        bfloat16 = next((a.dtype for a in args if _is_bfloat16(a)), None) \
            if proto.op_type not in _KEEPS_BFLOAT16 else None
        node = OnnxNode(proto, self.opsets.get(domain, 1), args, self)
        fold = all(_foldable(a) for a in args) and proto.op_type not in _NEVER_FOLD
        try:
            with _evaluating_now() if fold else contextlib.nullcontext():
                if bfloat16 is not None:
                    args = node.inputs = [G.astype(a, np.float32) if _is_bfloat16(a) else a for a in args]
                result = fn(node, *args)
                outputs = list(result) if isinstance(result, tuple) else [result]  # a list is one sequence
                outputs = [_as_value(out) for out in outputs]
                if self.partial and not fold:
                    outputs = _carry_partial(node, outputs)
                if bfloat16 is not None:
                    outputs = [G.astype(out, bfloat16) if isinstance(out, Tensor) and out.dtype == np.float32
                               else out for out in outputs]
        except OnnxImportError:
            raise
        except GraphgradError as exc:
            raise OnnxImportError(f"ONNX {proto.op_type} node {node.name!r}: {exc}") from exc
        except MemoryError:
            raise
        except Exception as exc:  # a converter meeting a node it does not expect (a corrupt or unusual model)
            raise OnnxImportError(f"ONNX {proto.op_type} node {node.name!r} cannot be imported "
                                  f"({type(exc).__name__}: {exc})") from exc
        return outputs


#: ops whose integer output holds the elements of their first input (same order, same count)
_KEEPS_ELEMENTS = frozenset({"Squeeze", "Unsqueeze", "Cast", "Identity", "Reshape", "Flatten", "CastLike"})
_ARITHMETIC = {"Add": np.add, "Sub": np.subtract, "Mul": np.multiply, "Max": np.maximum, "Min": np.minimum}


def _carry_partial(node: OnnxNode, outputs: list) -> list:
    """Keep track of known elements through ops that only move them or do arithmetic on them (a
    shape's static dims through Squeeze, Cast, Add...), so that later converters still see them."""
    out = outputs[0] if len(outputs) == 1 else None
    if not isinstance(out, Tensor) or out._data is not None or out.dtype.kind not in "iu" or len(out.shape) > 1 \
            or None in out.shape or node._interpreter.partial_of(out) is not None:
        return outputs
    size = out.shape[0] if out.shape else 1
    if node.op_type in _KEEPS_ELEMENTS:
        entries = node.entries(0)
        if entries is not None and len(entries) == size:
            return [node.shape_value(out, entries)]
    elif node.op_type in _ARITHMETIC and len(node.inputs) == 2:
        a, b = node.entries(0), node.entries(1)
        if a is not None and b is not None and (len(a) == size or len(a) == 1) and (len(b) == size or len(b) == 1):
            a, b = a * size if len(a) == 1 else a, b * size if len(b) == 1 else b
            combine = _ARITHMETIC[node.op_type]
            entries = [None if x is None or y is None else int(combine(x, y)) for x, y in zip(a, b)]
            return [node.shape_value(out, entries)]
    return outputs


#: the most node copies that control flow (If, Loop, Scan bodies, nested ones included) may unroll to
#: in one import, by default (``gg.onnx.load(..., max_unrolled_nodes=N)`` sets it per model)
MAX_UNROLLED_NODES = 100_000


def _is_bfloat16(value) -> bool:
    # kind first: NumPy's own dtypes never are, and dtype.name builds a string on every call
    return isinstance(value, Tensor) and value.dtype.kind == "V" and value.dtype.name == "bfloat16"


#: bfloat16 (from ml_dtypes, which onnx installs) has few NumPy loops and no weak Python scalars, so
#: other ops compute it in float32 and round each result back to bfloat16, as bfloat16 hardware does;
#: these ops see their bfloat16 inputs as they are (they choose their output dtype themselves, or
#: only route values: control flow and sequences)
_KEEPS_BFLOAT16 = frozenset({"Cast", "CastLike", "BitCast", "EyeLike", "RandomNormalLike", "RandomUniformLike",
                             "Bernoulli", "Multinomial", "QuantizeLinear", "DequantizeLinear",
                             "DynamicQuantizeLinear", "If", "Loop", "Scan", "SequenceMap", "Identity",
                             "Shape", "Size"})


#: ops that must not be evaluated at import time even with constant inputs: random numbers, and
#: control flow, whose subgraphs may read outer-scope placeholders or trained tensors (their own
#: nodes are still folded one by one)
_NEVER_FOLD = frozenset({"RandomNormal", "RandomUniform", "RandomNormalLike", "RandomUniformLike", "Multinomial",
                         "Bernoulli", "Dropout", "If", "Loop", "Scan"})


def opsets_of(model) -> dict:
    """{domain: version} of a ModelProto ('' for the default ONNX domain)."""
    return {("" if o.domain in ("", "ai.onnx") else o.domain): int(o.version) for o in model.opset_import}


def initializer_arrays(graph_proto) -> dict:
    """{name: NumPy array} of a graph's initializers."""
    onnx = onnx_module()
    arrays = {}
    for init in graph_proto.initializer:
        try:
            arrays[init.name] = onnx.numpy_helper.to_array(init)
        except Exception as exc:  # data that does not fit its dims or type (a corrupt or mismatched file)
            raise OnnxImportError(f"ONNX initializer {init.name!r} (dims {list(init.dims)}) cannot be read: "
                                  f"{type(exc).__name__}: {exc}") from None
    return arrays


def value_info_spec(info) -> tuple:
    """(shape with None for symbolic dims, NumPy dtype) of a tensor ValueInfoProto."""
    return _tensor_spec(info.type, info.name)


def _tensor_spec(type_proto, name: str) -> tuple:
    if not type_proto.HasField("tensor_type"):
        raise OnnxImportError(f"ONNX value {name!r} is a {value_kind(type_proto)}, not a tensor")
    t = type_proto.tensor_type
    shape = None
    if t.HasField("shape"):
        shape = tuple(int(d.dim_value) if d.HasField("dim_value") else None for d in t.shape.dim)
    return shape, np_dtype(t.elem_type)


def value_kind(type_proto) -> str:
    """'tensor', 'sequence', 'optional' or 'map' for an ONNX TypeProto."""
    kinds = {"tensor_type": "tensor", "sparse_tensor_type": "sparse tensor", "sequence_type": "sequence",
             "optional_type": "optional", "map_type": "map"}
    return kinds.get(type_proto.WhichOneof("value"), "value of unknown type")


def make_input(type_proto, name: str, make_tensor: Callable, given: Any = ...):
    """The interpreter value for a model input of type ``type_proto``: ``make_tensor(name, shape,
    dtype)`` for a tensor; for a sequence, a list with one tensor per entry of ``given`` (the shapes
    of its tensors, which fix its length); for an optional, ``None`` when ``given`` is None (empty),
    else the value it holds. ``given`` is ``...`` when the caller fixes nothing."""
    kind = value_kind(type_proto)
    if kind == "tensor":
        shape, dtype = _tensor_spec(type_proto, name)
        if given is not ... and given is not None:
            shape = tuple(given)
        return make_tensor(name, shape, dtype)
    if kind == "optional":
        return None if given is None else make_input(type_proto.optional_type.elem_type, name, make_tensor, given)
    if kind == "sequence":
        if given is ... or given is None:
            raise OnnxImportError(f"ONNX input {name!r} is a sequence: give its length and tensor shapes "
                                  f"(input_shapes={{{name!r}: [shape, ...]}})")
        elem = type_proto.sequence_type.elem_type
        return [make_input(elem, f"{name}_{i}", make_tensor, shape) for i, shape in enumerate(given)]
    raise OnnxImportError(f"ONNX input {name!r} is a {kind}, which graphgrad's importer does not support")


def structure_of(value) -> Any:
    """What :func:`make_input` needs to rebuild a value's structure: a shape for an array, a list of
    those for a sequence, None for an empty optional."""
    if value is None:
        return None
    if isinstance(value, (list, tuple)):
        return [structure_of(item) for item in value]
    return tuple(value.shape) if hasattr(value, "shape") else tuple(np.shape(value))


def flatten(value) -> list:
    """The tensors (or arrays) of a value, in order: itself, a sequence's items, nothing for None."""
    if value is None:
        return []
    if isinstance(value, (list, tuple)):
        return [leaf for item in value for leaf in flatten(item)]
    return [value]


def unflatten(structure, leaves) -> Any:
    """Rebuild a value shaped like ``structure`` (a value, list or None) from an iterator of leaves."""
    if structure is None:
        return None
    if isinstance(structure, (list, tuple)):
        return [unflatten(item, leaves) for item in structure]
    return next(leaves)


def as_model(path_or_proto, base_dir: Optional[str] = None):
    """A ModelProto from a path, bytes or a ModelProto, with its external data loaded.

    External-data tensors are read from ``base_dir``: by default the model file's folder for a path;
    a model given as bytes or a ModelProto has no folder, so its external data is refused unless
    ``base_dir`` is given (it is never looked up in the current directory). Every external file must
    lie inside that folder: absolute locations, ``..`` and links leading out are refused. A file that
    is not an ONNX model raises :class:`OnnxImportError` naming it."""
    onnx = onnx_module()
    if isinstance(path_or_proto, onnx.ModelProto):
        model, where = path_or_proto, "the ModelProto given"
    elif isinstance(path_or_proto, (bytes, bytearray, memoryview)):
        where = "the bytes given"
        try:
            model = onnx.load_from_string(bytes(path_or_proto))
        except Exception as exc:  # protobuf's DecodeError, or onnx's own errors on a broken model
            raise OnnxImportError(f"{where} are not an ONNX model ({type(exc).__name__}: {exc})") from None
    else:
        path = os.fspath(path_or_proto)
        where = f"ONNX model {path!r}"
        if os.path.isfile(path):  # protobuf parses the whole file in memory: bound it first
            size = os.path.getsize(path)
            if size > files.max_load_bytes():
                files.check_load_size(size, path, "the ONNX model file", OnnxLoadLimitError)
        try:
            model = onnx.load(path, load_external_data=False)
        except OSError:
            raise
        except Exception as exc:
            raise OnnxImportError(f"{path!r} is not a valid ONNX model file ({type(exc).__name__}: {exc})") from None
        if base_dir is None:
            base_dir = os.path.dirname(os.path.abspath(path))
    return _load_external_data(model, base_dir, where)


def _load_external_data(model, base_dir: Optional[str], where: str):
    """``model`` with the external data of its tensors read from files confined to ``base_dir`` (a
    copy when the caller's ModelProto would change)."""
    from onnx import external_data_helper as helper

    tensors = [t for t in helper._get_all_tensors(model) if helper.uses_external_data(t)]
    if not tensors:
        return model
    if base_dir is None:
        raise OnnxImportError(f"{where} stores tensor {tensors[0].name!r} as external data, but a model given "
                              "as bytes or a ModelProto has no folder to read it from: pass base_dir=... (the "
                              "folder of its data files) or load the model from its path")
    root = os.path.realpath(base_dir)
    total_external = 0
    for tensor in tensors:
        location = next((e.value for e in tensor.external_data if e.key == "location"), "")
        parts = location.replace("\\", "/").split("/")
        target = os.path.realpath(os.path.join(root, location))
        if (not location or os.path.isabs(location) or location.startswith(("/", "\\")) or ".." in parts
                or os.path.commonpath([root, target]) != root or target == root):
            raise OnnxImportError(f"{where}: tensor {tensor.name!r} has external data at {location!r}, which is "
                                  f"not a file inside the model's folder {base_dir!r} (absolute paths, '..' and "
                                  "links leading out are refused)")
        if not os.path.isfile(target):
            raise OnnxImportError(f"{where}: the external data file {location!r} of tensor {tensor.name!r} "
                                  f"is missing from {base_dir!r}")
        length = next((e.value for e in tensor.external_data if e.key == "length"), "")
        size = os.path.getsize(target)
        total_external += min(int(length), size) if length.isdigit() else size
    files.check_load_size(total_external, where, f"the external data of its {len(tensors)} tensor(s)",
                          OnnxLoadLimitError)
    if where == "the ModelProto given":
        copy = type(model)()
        copy.CopyFrom(model)
        model = copy
    try:
        helper.load_external_data_for_model(model, root)
    except Exception as exc:
        raise OnnxImportError(f"{where}: cannot read its external data ({type(exc).__name__}: {exc})") from None
    return model


def graph_inputs(model) -> list:
    """The model's real inputs (older models also list their initializers as inputs)."""
    names = {i.name for i in model.graph.initializer}
    return [i for i in model.graph.input if i.name not in names]


# ---- load: a static graph ---------------------------------------------------------------------------------
class OnnxGraph:
    """An imported ONNX model as a graphgrad graph.

    Attributes:
        graph: the ``gg.Graph``.
        inputs: {ONNX input name: placeholder} (a list of placeholders for a sequence input, None for
            an optional input imported empty).
        outputs: {ONNX output name: graph tensor} (an import-time constant output is a constant node;
            a sequence output is a list of graph tensors, an empty optional None).
        variables: {initializer name: gg.Variable}: the initializers ``trainable`` chose (by default the weights).
    """

    def __init__(self, graph, inputs: dict, outputs: dict, variables: dict, model):
        self.graph, self.inputs, self.outputs, self.variables = graph, inputs, outputs, variables
        self.model = model
        self._session = None

    def run(self, feeds: dict, outputs: Optional[Sequence[str]] = None) -> list:
        """Run with ``feeds`` ({input name: array, or a list of arrays for a sequence input}); returns
        the outputs in order (NumPy arrays; a list of them for a sequence, None for an empty optional)."""
        from graphgrad.graph.session import Session

        if self._session is None:
            self._session = Session(self.graph)
        names = list(outputs or self.outputs)
        missing = [n for n in self.inputs if n not in feeds]
        if missing:
            raise OnnxImportError(f"missing input(s) {missing}: the model's inputs are {list(self.inputs)}")
        feed_dict = {}
        for name, value in feeds.items():
            if name not in self.inputs:
                continue
            placeholders, arrays = flatten(self.inputs[name]), flatten(value)
            if len(placeholders) != len(arrays):
                raise OnnxImportError(f"input {name!r} was imported with {len(placeholders)} tensor(s) "
                                      f"(a sequence's length is fixed at import), got {len(arrays)}")
            feed_dict.update(zip(placeholders, arrays))
        fetches = [self.outputs[n] for n in names]
        leaves = flatten(fetches)
        results = iter(self._session.run(leaves, feed_dict) if leaves else [])
        return [unflatten(fetch, results) for fetch in fetches]


def load(path_or_proto, trainable: Any = "auto", input_shapes: Optional[dict] = None,
         max_unrolled_nodes: Optional[int] = None, base_dir: Optional[str] = None) -> OnnxGraph:
    """Import an ONNX model (a path, bytes or ``onnx.ModelProto``) as a graphgrad graph.

    Args:
        trainable: which initializers become ``gg.Variable`` s (fine-tune with ``gg.gradients`` or an
            optimizer's ``minimize``); the others are constants. ``"auto"`` (default): the weights only,
            not the scales, exponents, mask fills, epsilons, running statistics or tables an exporter
            stores as initializers too (see :mod:`graphgrad.io.onnx.trainable`); ``True``: every float
            initializer; ``False``: none; or a collection of names, or a predicate ``fn(name, array)``.
        input_shapes: {input name: shape} to fix dims the model leaves symbolic (a static shape lets
            shape computations be evaluated at import time). A sequence input needs a list of
            shapes, one per tensor (its length is fixed by the import); an optional input given
            ``None`` is imported empty.
        max_unrolled_nodes: the most node copies that If/Loop/Scan may unroll to (default
            ``MAX_UNROLLED_NODES``, 100,000); a model needing more raises OnnxImportError naming the node.
        base_dir: the folder of the model's external-data files (default: the model file's folder; a
            model given as bytes or a ModelProto has none, and its external data is refused without it).

    Returns an :class:`OnnxGraph`: ``.graph``, ``.inputs``/``.outputs`` by ONNX name, ``.run(feeds)``.
    """
    model = as_model(path_or_proto, base_dir)
    with _import_errors(path_or_proto):
        return _load(model, trainable, input_shapes, max_unrolled_nodes)


@contextlib.contextmanager
def _import_errors(path_or_proto):
    """Any other exception while importing a parsed model (a corrupt or malformed model: names that are
    not text, fields of the wrong kind) as an OnnxImportError naming the model."""
    try:
        yield
    except (GraphgradError, MemoryError):
        raise
    except Exception as exc:
        if isinstance(path_or_proto, (str, os.PathLike)):
            where = f"ONNX model {os.fspath(path_or_proto)!r}"
        else:
            where = "the ONNX model given"
        raise OnnxImportError(f"{where} cannot be imported: it is malformed ({type(exc).__name__}: {exc})") from exc


def _load(model, trainable: Any, input_shapes: Optional[dict], max_unrolled_nodes: Optional[int]) -> OnnxGraph:
    from graphgrad.graph.graph import Graph
    from graphgrad.graph.variables import Variable, constant, placeholder
    from graphgrad.io.onnx.trainable import trainable_initializers

    graph = Graph()
    inputs, variables = {}, {}
    with graph.as_default():
        def make_placeholder(name, shape, dtype):
            return placeholder(dtype, shape, name=_safe_name(name))

        for info in graph_inputs(model):
            given = (input_shapes or {}).get(info.name, ...)
            inputs[info.name] = make_input(info.type, info.name, make_placeholder, given)
        initializers = {}
        arrays = initializer_arrays(model.graph)
        trained = trainable_initializers(model, arrays, trainable)
        for name, array in arrays.items():
            if name in trained:
                variables[name] = Variable(array, name=_safe_name(name))
                initializers[name] = graph.read_variable(variables[name])
            else:
                initializers[name] = array
    reads = [(initializers[name], var) for name, var in variables.items()]
    with graph.as_default():  # so that ops on constants alone that must run each time (random) are nodes
        values = Interpreter(model.graph, opsets_of(model), reads,
                             max_unrolled_nodes).run(inputs, initializers)

    def graph_tensor(out, name):  # an import-time constant output becomes a constant node
        if isinstance(out, list):
            return [graph_tensor(item, f"{name}_{i}") for i, item in enumerate(out)]
        if out is not None and out._data is not None and not getattr(out, "is_variable", False):
            with graph.as_default():
                return constant(out._data, name=_safe_name(name))
        return out

    outputs = {info.name: graph_tensor(values[info.name], info.name) for info in model.graph.output}
    return OnnxGraph(graph, inputs, outputs, variables, model)


def _safe_name(name: str) -> str:
    return "".join(c if c.isalnum() or c in "_-./" else "_" for c in name) or "onnx"


# ---- to_module: a Module -----------------------------------------------------------------------------------
def to_module(path_or_proto, trainable: Any = "auto", max_unrolled_nodes: Optional[int] = None,
              base_dir: Optional[str] = None):
    """Import an ONNX model as a ``gg.nn.Module``: its weights are Parameters (so
    ``model.parameters()`` fine-tunes it; ``trainable`` chooses which initializers, as for :func:`load`:
    by default the weights, not the constants an exporter stores as initializers), and ``model(*inputs)`` runs the ONNX graph on graphgrad
    tensors, eagerly or inside ``gg.function``. Returns one tensor for a one-output model, else a tuple."""
    from graphgrad.io.onnx.module import OnnxModule

    model = as_model(path_or_proto, base_dir)
    with _import_errors(path_or_proto):
        return OnnxModule(model, trainable=trainable, max_unrolled_nodes=max_unrolled_nodes)


__all__ = ["CONVERTERS", "converter", "op_key", "load_converters", "OnnxNode", "OnnxImportError", "Interpreter",
           "OnnxGraph", "load", "to_module", "np_dtype", "onnx_type", "as_model", "graph_inputs", "value_info_spec",
           "value_kind", "make_input", "structure_of", "flatten", "unflatten", "const_tensor"]
