"""ONNX export: write a graphgrad Module, ``gg.function`` or static graph as an ONNX model.

The exporter builds (or takes) a graphgrad graph and walks the nodes the outputs need, in order:

* a placeholder becomes a graph input (``None`` dims and ``dynamic_axes`` become ``dim_param``);
* a Variable read (parameters, buffers) or a constant becomes an initializer (weights travel in the
  model);
* any other node is converted by the op's own declaration (``Op.onnx``, the ONNX op type of a
  one-to-one mapping, with ``Op.onnx_attributes(opset)``: "one op, one place"), or by a converter
  registered here with ``@exports(OpClass)`` when the op needs several ONNX nodes, or an attribute
  that became an input in some opset (reductions, Squeeze, Pad, Clip...).

An op with neither raises :class:`OnnxExportError` naming the op, the node and where it was made.
Gradient-only ops (``ConvWeightGrad``, ``IndexAdd``...) have no ONNX form: export forward models.

Like ``torch.onnx.export``, a Module is exported as it behaves in its current mode: call
``model.eval()`` first so that Dropout is the identity and BatchNorm uses its running statistics.
"""
from __future__ import annotations

import os
import tempfile
from typing import Any, Callable, Optional, Sequence, Union

from graphgrad.backend import np, to_numpy
from graphgrad.core.spec import TensorSpec
from graphgrad.core.tensor import Tensor
from graphgrad.errors import GraphgradError
from graphgrad.graph.graph import Graph, GraphNode, topo_order
from graphgrad.graph.variables import Const, Placeholder, PlaceholderWithDefault, ReadVariable, placeholder
from graphgrad.io.onnx.importer import onnx_module, onnx_type

#: the opset written when ``opset=`` is not given (onnxruntime 1.20+ runs it)
DEFAULT_OPSET = 20
#: the oldest opset the exporter writes (attribute-vs-input forms are handled from here on)
MIN_OPSET = 13
#: op class -> ``fn(ctx, node) -> str`` writing the ONNX nodes of ``node``, returning its output's name
CONVERTERS: dict = {}

_INT64_MAX = np.iinfo(np.int64).max
_INT64_MIN = np.iinfo(np.int64).min
# ONNX ops whose operands must share one element type: the exporter promotes them as NumPy does
_ELEMENTWISE = {"Add", "Sub", "Mul", "Div", "Pow", "Max", "Min", "Equal", "Less", "LessOrEqual", "Greater",
                "GreaterOrEqual", "Where", "Concat", "Neg", "Abs", "Sign", "Exp", "Log", "Sqrt", "Reciprocal",
                "Sin", "Cos", "Tan", "Tanh", "Sinh", "Cosh", "Asin", "Acos", "Atan", "Sigmoid", "Relu", "Erf",
                "Floor", "Ceil", "IsNaN", "IsInf"}


class OnnxExportError(GraphgradError, ValueError):
    """A model that cannot be written as ONNX, and why (the op, the node and where it was made)."""


def exports(*op_classes: type) -> Callable:
    """Register ``fn(ctx, node) -> output name`` as the ONNX converter of ``op_classes``."""

    def register(fn: Callable) -> Callable:
        for cls in op_classes:
            CONVERTERS[cls] = fn
        return fn

    return register


# ---- the model being written ---------------------------------------------------------------------------
class ExportContext:
    """What converters write into: nodes, initializers, and the ONNX name of each graph value.

    Attributes:
        opset: the ONNX opset being written (converters branch on it where an attribute became an input).
    """

    def __init__(self, opset: int, variable_names: dict) -> None:
        self.opset = opset
        self.nodes: list = []
        self.initializers: list = []
        self.names: dict = {}            # GraphNode -> ONNX value name of its output
        self._variable_names = variable_names  # id(Variable) -> preferred initializer name
        self._variables: dict = {}       # id(Variable) -> initializer name (one per variable)
        self._consts: dict = {}          # (dtype, shape, bytes) -> initializer name (deduplicated)
        self._casts: dict = {}           # (name, dtype) -> name of the cast value
        self._taken: set = set()

    def fresh(self, base: str) -> str:
        """A value name not used yet, from ``base``."""
        name, i = base, 1
        while name in self._taken:
            name, i = f"{base}_{i}", i + 1
        self._taken.add(name)
        return name

    def add(self, op_type: str, inputs: Sequence[str], n_outputs: int = 1, **attrs) -> Union[str, list]:
        """Append an ONNX node; returns its output name (a list when ``n_outputs > 1``)."""
        outputs = [self.fresh(f"{op_type}_out") for _ in range(n_outputs)]
        attrs = {k: _attribute(v) for k, v in attrs.items() if v is not None}
        self.nodes.append(onnx_module().helper.make_node(op_type, list(inputs), outputs,
                                                         name=self.fresh(op_type), **attrs))
        return outputs[0] if n_outputs == 1 else outputs

    def initializer(self, array, name: str) -> str:
        array = np.array(to_numpy(array), order="C")  # (ascontiguousarray would make 0-d arrays 1-d)
        name = self.fresh(name)
        self.initializers.append(onnx_module().numpy_helper.from_array(array, name))
        return name

    def onnx_tensor(self, array):
        """A ``TensorProto`` of ``array`` (for tensor-valued attributes)."""
        return onnx_module().numpy_helper.from_array(np.array(array, order="C"))

    def const(self, value, dtype=None) -> str:
        """An initializer holding ``value`` (of ``dtype``), shared by equal constants."""
        array = np.asarray(to_numpy(value) if isinstance(value, np.ndarray) else value, dtype=dtype)
        key = (array.dtype.str, array.shape, array.tobytes())
        if key not in self._consts:
            self._consts[key] = self.initializer(array, "const")
        return self._consts[key]

    def ints(self, values) -> str:
        """A 1-D int64 initializer (shapes, axes, pads given as ONNX inputs)."""
        return self.const([int(v) for v in values], np.int64)

    def variable(self, variable, fallback: str) -> str:
        """The initializer of a Variable (a parameter or buffer), written once however often it is read."""
        key = id(variable)
        if key not in self._variables:
            name = self._variable_names.get(key) or fallback
            self._variables[key] = self.initializer(variable._data, name)
        return self._variables[key]

    def value(self, x, dtype=None) -> str:
        """The ONNX name of the op input ``x`` (graph tensor, Python scalar, ``None`` for an omitted
        optional input), cast to ``dtype`` when given and different."""
        if x is None:
            return ""
        if not isinstance(x, Tensor):
            return self.const(x, dtype if dtype is not None else np.result_type(x))
        if x._data is not None and not isinstance(x._node, GraphNode):
            return self.const(x._data, dtype)
        name = self.names[x._node]
        return self.cast(name, x.dtype, dtype)

    def cast(self, name: str, have, want) -> str:
        if want is None or np.dtype(have) == np.dtype(want):
            return name
        key = (name, np.dtype(want).str)
        if key not in self._casts:
            self._casts[key] = self.add("Cast", [name], to=np.dtype(want))
        return self._casts[key]

    def shape_of(self, x) -> str:
        """The run-time shape of ``x`` (an int64 vector), for ops whose result follows another's shape."""
        return self.add("Shape", [self.value(x)])


def _attribute(value):
    """Attribute values as ONNX wants them: dtypes as element types, tuples as lists."""
    if isinstance(value, np.dtype) or (isinstance(value, type) and issubclass(value, np.generic)):
        return onnx_type(value)
    if isinstance(value, tuple):
        return [int(v) if isinstance(v, (bool, np.integer)) else v for v in value]
    if isinstance(value, (bool, np.bool_)):
        return int(value)
    return value


# ---- node conversion -------------------------------------------------------------------------------------
def _where(node: GraphNode) -> str:
    return f"node {node.name!r}" + (f" (created at {node.site})" if node.site else "")


def _operand_dtype(node: GraphNode):
    """The element type the operands of an elementwise ONNX op are cast to: the output's float dtype,
    else NumPy's promotion of the non-bool operands (Python scalars weak)."""
    operands = [x.dtype if isinstance(x, Tensor) else x for x in node.inputs
                if not (isinstance(x, Tensor) and x.dtype.kind == "b") and not isinstance(x, bool)]
    if not operands:
        return None
    dtype = np.result_type(*operands)
    out = node.out.dtype
    # a float output fixes the operands' type: that of a float function of integers, or graphgrad's
    # promotion where NumPy alone would widen to float64 (an integer tensor with a Python float)
    return out if out.kind == "f" else dtype


def _one_to_one(ctx: ExportContext, node: GraphNode) -> str:
    op = node.op
    dtype = _operand_dtype(node) if op.onnx in _ELEMENTWISE else None
    inputs = [ctx.value(x, None if isinstance(x, Tensor) and x.dtype.kind == "b" else dtype) for x in node.inputs]
    return ctx.add(op.onnx, inputs, **op.onnx_attributes(ctx.opset))


def _convert(ctx: ExportContext, node: GraphNode) -> str:
    op = node.op
    converter = CONVERTERS.get(type(op))
    if converter is None and not getattr(op, "onnx", None):
        raise OnnxExportError(f"{op.name} has no ONNX form ({_where(node)}): declare `onnx` on the op class or "
                              f"register a converter with @exports({op.name}) in graphgrad/io/onnx/export.py"
                              + ("; it is a gradient or training-only op: export the forward model"
                                 if "Grad" in op.name or "Backward" in op.name else ""))
    try:
        out = converter(ctx, node) if converter is not None else _one_to_one(ctx, node)
    except OnnxExportError as error:
        raise OnnxExportError(f"{op!r} at {_where(node)}: {error}") from None
    except ValueError as error:  # the contract of onnx_attributes: no ONNX form for these values
        raise OnnxExportError(f"{op!r} at {_where(node)} cannot be exported to ONNX opset {ctx.opset}: "
                              f"{error}") from None
    return out


def _needs_opset(ctx: ExportContext, version: int, what: str) -> None:
    if ctx.opset < version:
        raise OnnxExportError(f"{what} needs ONNX opset {version} or later (exporting opset {ctx.opset})")


# ---- the model ---------------------------------------------------------------------------------------
def _value_info(name: str, spec: TensorSpec, dims: dict, prefix: str):
    """A typed value with ``dim_param`` for dynamic or unknown dims (``dims``: axis -> name)."""
    helper = onnx_module().helper
    shape = None if spec.shape is None else [
        dims.get(i) or (f"{prefix}_dim{i}" if d is None else int(d)) for i, d in enumerate(spec.shape)]
    return helper.make_tensor_value_info(name, onnx_type(spec.dtype), shape)


def _data_ancestors(roots: list) -> set:
    """The nodes the roots read through inputs (not control dependencies: assignments don't export)."""
    found, stack = set(), list(roots)
    while stack:
        node = stack.pop()
        if node not in found:
            found.add(node)
            stack.extend(x._node for x in node.inputs if isinstance(x, Tensor) and isinstance(x._node, GraphNode))
    return found


def graph_to_onnx(inputs: list, outputs: list, opset: int = DEFAULT_OPSET, dynamic_axes: Optional[dict] = None,
                  variable_names: Optional[dict] = None, name: str = "graphgrad"):
    """The ``onnx.ModelProto`` computing ``outputs`` from ``inputs``.

    Args:
        inputs: ``[(name, placeholder tensor)]``: the graph inputs, in order.
        outputs: ``[(name, graph tensor)]``: the graph outputs, in order.
        opset: ONNX opset version (``MIN_OPSET`` or later).
        dynamic_axes: ``{input_or_output_name: {axis: dim_name} or [axes]}``: named symbolic dims.
        variable_names: ``{id(Variable): name}`` for readable initializer names (a Module's state_dict keys).
    """
    onnx = onnx_module()
    helper = onnx.helper
    if opset < MIN_OPSET:
        raise OnnxExportError(f"graphgrad exports ONNX opset {MIN_OPSET} or later, got opset={opset}")
    dims = {k: ({a: f"{k}_{a}" for a in v} if isinstance(v, (list, tuple)) else dict(v))
            for k, v in (dynamic_axes or {}).items()}
    ctx = ExportContext(opset, variable_names or {})
    graph_inputs = []
    for in_name, ph in inputs:
        ctx.names[ph._node] = ctx.fresh(in_name)
        graph_inputs.append(_value_info(in_name, ph.spec, dims.get(in_name, {}), in_name))
    roots = [t._node for _, t in outputs]
    needed = _data_ancestors(roots)
    for node in topo_order(roots):
        if node not in needed or node in ctx.names:
            continue
        op = node.op
        if isinstance(op, ReadVariable):
            ctx.names[node] = ctx.variable(op.variable, node.name)
        elif isinstance(op, Const):
            ctx.names[node] = ctx.initializer(op.value, node.name)
        elif isinstance(op, Placeholder):
            raise OnnxExportError(f"placeholder {node.name!r} is needed by the outputs but is not an input "
                                  f"(created at {node.site}); pass it in example_inputs")
        elif isinstance(op, PlaceholderWithDefault):
            ctx.names[node] = ctx.value(node.inputs[0])  # exported with its default value
        else:
            ctx.names[node] = _convert(ctx, node)
    graph_outputs = []
    for out_name, t in outputs:
        ctx.nodes.append(helper.make_node("Identity", [ctx.names[t._node]], [out_name], name=ctx.fresh(out_name)))
        graph_outputs.append(_value_info(out_name, t.spec, dims.get(out_name, {}), out_name))
    graph = helper.make_graph(ctx.nodes, name, graph_inputs, graph_outputs, initializer=ctx.initializers)
    opsets = [helper.make_opsetid("", opset)]
    model = helper.make_model(graph, opset_imports=opsets, producer_name="graphgrad",
                              ir_version=helper.find_min_ir_version_for(opsets))
    return model


# ---- what can be exported -------------------------------------------------------------------------------
def _flatten(value) -> list:
    if isinstance(value, (list, tuple)):
        return [t for v in value for t in _flatten(v)]
    if isinstance(value, dict):
        return [t for v in value.values() for t in _flatten(v)]
    return [value] if isinstance(value, Tensor) else []


def _as_arrays(example_inputs) -> list:
    if isinstance(example_inputs, (Tensor, np.ndarray)):
        example_inputs = [example_inputs]
    return [x._data if isinstance(x, Tensor) else np.asarray(x) for x in example_inputs]


def _names(given: Optional[Sequence[str]], n: int, base: str) -> list:
    if given is not None:
        if len(given) != n:
            raise OnnxExportError(f"{len(given)} {base} names given for {n} {base}s")
        return list(given)
    return [base] if n == 1 else [f"{base}_{i}" for i in range(n)]


def _specs(arrays: list, names: list, dynamic_axes: Optional[dict]) -> list:
    """TensorSpecs of the example inputs, with ``None`` on their dynamic axes."""
    specs = []
    for array, in_name in zip(arrays, names):
        axes = set((dynamic_axes or {}).get(in_name, ()))
        specs.append(TensorSpec(tuple(None if i in axes else d for i, d in enumerate(array.shape)), array.dtype))
    return specs


def _trace_module(module, arrays: list, names: list, dynamic_axes) -> tuple:
    graph = Graph()
    with graph.as_default():
        inputs = [placeholder(s.dtype, s.shape, name=n) for s, n in zip(_specs(arrays, names, dynamic_axes), names)]
        result = module(*inputs)
    variable_names = {id(t): n for n, t in list(module.named_parameters()) + list(module.named_buffers())}
    return inputs, _flatten(result), variable_names


def _trace_function(fn, arrays: list, names: list, dynamic_axes) -> tuple:
    from graphgrad.graph.trace import ConcreteFunction, Function

    if isinstance(fn, ConcreteFunction):
        concrete = fn
    else:
        if dynamic_axes and any(n in dynamic_axes for n in names):  # retrace with None dims
            fn = Function(fn.python_function, input_signature=_specs(arrays, names, dynamic_axes),
                          optimize=fn.optimize)
        concrete = fn.concrete(*[Tensor(a) for a in arrays])
    return list(concrete.inputs), list(concrete.outputs), {}


def _static_graph(outputs: list, example_inputs, names: Optional[Sequence[str]]) -> tuple:
    nodes = sorted((n for n in _data_ancestors([t._node for t in outputs]) if isinstance(n.op, Placeholder)),
                   key=lambda n: n.graph._nodes.index(n))
    inputs = [n.out for n in nodes]
    if isinstance(example_inputs, dict):
        missing = [n.name for n in nodes if n.out not in example_inputs]
        if missing:
            raise OnnxExportError(f"example_inputs has no value for placeholders {missing}")
    elif example_inputs is not None and len(_as_arrays(example_inputs)) != len(inputs):
        raise OnnxExportError(f"{len(_as_arrays(example_inputs))} example inputs given for the "
                              f"{len(inputs)} placeholders {[n.name for n in nodes]} (in creation order)")
    return inputs, names or [n.name for n in nodes]


def export(target: Any, path: Optional[Union[str, os.PathLike]], example_inputs: Any,
           input_names: Optional[Sequence[str]] = None, output_names: Optional[Sequence[str]] = None,
           dynamic_axes: Optional[dict] = None, opset: Optional[int] = None):
    """Write ``target`` as an ONNX model to ``path`` (atomically) and return the ``onnx.ModelProto``.

    Args:
        target: an ``nn.Module`` (traced on placeholders shaped like ``example_inputs``; exported in its
            current mode: call ``model.eval()`` first, as with ``torch.onnx.export``), a ``gg.function``
            (traced for the example inputs) or a static graph: a graph tensor or a list/tuple of them.
        path: the ``.onnx`` file to write, or ``None`` to only return the model.
        example_inputs: one array/Tensor or a sequence of them (one per input); for a static graph, a
            dict ``{placeholder: array}`` or a list in the placeholders' creation order.
        input_names, output_names: ONNX names (default ``input``/``output``, numbered when several;
            a static graph's inputs default to its placeholders' names).
        dynamic_axes: ``{name: {axis: "dim_name"}}`` or ``{name: [axes]}``: axes of any size at run time
            (the batch dimension...). Module and function inputs are traced with ``None`` there.
        opset: ONNX opset version, 13 or later (default ``DEFAULT_OPSET``).

    Returns:
        the checked ``onnx.ModelProto``.

    Raises:
        OnnxExportError: an op without ONNX form (naming the op and where its node was made).

    Examples:
        >>> model.eval()
        >>> gg.onnx.export(model, "mlp.onnx", np.zeros((1, 2), np.float32),
        ...                dynamic_axes={"input": {0: "batch"}, "output": {0: "batch"}})
    """
    from graphgrad.graph.trace import ConcreteFunction, Function
    from graphgrad.nn.module import Module

    onnx = onnx_module()
    opset = DEFAULT_OPSET if opset is None else int(opset)
    variable_names: dict = {}
    if isinstance(target, (Module, Function, ConcreteFunction)):
        arrays = _as_arrays(example_inputs)
        names = _names(input_names, len(arrays), "input")
        trace = _trace_module if isinstance(target, Module) else _trace_function
        inputs, outputs, variable_names = trace(target, arrays, names, dynamic_axes)
    elif isinstance(target, Tensor) or (isinstance(target, (list, tuple)) and target
                                        and all(isinstance(t, Tensor) for t in target)):
        outputs = _flatten(target)
        if any(not isinstance(t._node, GraphNode) for t in outputs):
            raise OnnxExportError("a static graph is exported from its output graph tensors; got a concrete tensor")
        inputs, names = _static_graph(outputs, example_inputs, input_names)
    else:
        raise OnnxExportError(f"cannot export {type(target).__name__}: expected an nn.Module, a gg.function or "
                              "graph tensors")
    if not outputs:
        raise OnnxExportError("the exported computation returns no tensor")
    out_names = _names(output_names, len(outputs), "output")
    model = graph_to_onnx(list(zip(names, inputs)), list(zip(out_names, outputs)), opset, dynamic_axes,
                          variable_names)
    onnx.checker.check_model(model, full_check=True)
    if path is not None:
        _write_atomically(model.SerializeToString(), os.fspath(path))
    return model


def _write_atomically(data: bytes, path: str) -> None:
    """Write to a temporary file beside ``path``, then rename: readers never see half a model."""
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=".onnx", dir=directory)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


from graphgrad.io.onnx import export_ops as _export_ops  # noqa: E402,F401  (registers the converters)
from graphgrad.io.onnx import export_sorting as _export_sorting  # noqa: E402,F401
from graphgrad.io.onnx import export_spatial as _export_spatial  # noqa: E402,F401
from graphgrad.io.onnx import export_math as _export_math  # noqa: E402,F401

__all__ = ["export", "exports", "graph_to_onnx", "ExportContext", "OnnxExportError", "DEFAULT_OPSET",
           "CONVERTERS"]
