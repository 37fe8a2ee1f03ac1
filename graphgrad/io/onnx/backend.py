"""graphgrad as an ONNX backend (``onnx.backend.base.Backend``), for the ONNX project's backend tests.

``prepare(model)`` checks the model; ``run(inputs)`` imports it with the inputs' exact shapes (so
every shape computation is an import-time constant) into a graph and runs it with ``Session.run``;
imports are cached per input signature. The node tests also feed as inputs what real models keep in
initializers (a Reshape's shape, Slice's starts, TopK's k...): when an import with placeholders fails,
the model is imported again with its integer, boolean, scalar and short 1-D inputs as constants
(cached per value): the backend specializes on those values, as a tracing JIT would. A sequence
input (a list of arrays) is imported with one placeholder per array, so its length is part of the
signature; an optional input fed ``None`` is imported empty.
"""
from __future__ import annotations

from graphgrad.backend import np
from graphgrad.io.onnx.importer import OnnxImportError, graph_inputs, load, onnx_module, structure_of

onnx = onnx_module()
from onnx.backend.base import Backend, BackendRep  # noqa: E402


class GraphgradRep(BackendRep):
    def __init__(self, model):
        self.model = model
        self.input_names = [i.name for i in graph_inputs(model)]
        self._imports: dict = {}

    def run(self, inputs, **kwargs):
        if isinstance(inputs, dict):
            feeds = dict(inputs)
        else:
            inputs = [inputs] if isinstance(inputs, np.ndarray) else list(inputs)
            feeds = dict(zip(self.input_names, inputs))
        feeds = {k: _as_arrays(v) for k, v in feeds.items()}
        key = tuple((k, _signature(v)) for k, v in sorted(feeds.items()))
        imported = self._imports.get(key)
        if imported is None:
            imported = self._imports[key] = self._load(self.model, feeds)
        if imported is _NEEDS_VALUES:
            fixed = {k: v for k, v in feeds.items() if isinstance(v, np.ndarray) and (
                v.dtype.kind in "iub" or v.ndim == 0 or (v.ndim == 1 and v.size <= 16))}
            # ^ shapes, axes, k, scales/roi of Resize
            key += ("values",) + tuple((k, v.tobytes()) for k, v in sorted(fixed.items()))
            imported = self._imports.get(key)
            if imported is None:
                imported = self._imports[key] = load(_with_constants(self.model, fixed), trainable=False,
                                                     input_shapes=_shapes(feeds))
            feeds = {k: v for k, v in feeds.items() if k not in fixed}
        return tuple(_as_arrays(out) for out in imported.run(feeds))

    @staticmethod
    def _load(model, feeds):
        try:
            return load(model, trainable=False, input_shapes=_shapes(feeds))
        except OnnxImportError:  # maybe an input that must be known at import time (a shape, axes)
            return _NEEDS_VALUES


def _as_arrays(value):
    """An array, a list of them (a sequence), or None (an empty optional)."""
    if value is None:
        return None
    if isinstance(value, (list, tuple)):
        return [_as_arrays(item) for item in value]
    return np.asarray(value)


def _signature(value):
    if isinstance(value, list):
        return ("sequence",) + tuple(_signature(item) for item in value)
    return None if value is None else (value.shape, value.dtype.str)


def _shapes(feeds: dict) -> dict:
    return {k: structure_of(v) for k, v in feeds.items()}


#: marks an input signature whose import needs the values of the integer and scalar inputs
_NEEDS_VALUES = object()


def _with_constants(model, values: dict):
    """A copy of ``model`` with the inputs named in ``values`` turned into initializers."""
    fixed = onnx.ModelProto()
    fixed.CopyFrom(model)
    kept = [i for i in fixed.graph.input if i.name not in values]
    del fixed.graph.input[:]
    fixed.graph.input.extend(kept)
    fixed.graph.initializer.extend(onnx.numpy_helper.from_array(v, name=k) for k, v in values.items())
    return fixed


class GraphgradBackend(Backend):
    @classmethod
    def prepare(cls, model, device: str = "CPU", **kwargs):
        super().prepare(model, device, **kwargs)
        return GraphgradRep(model)

    @classmethod
    def supports_device(cls, device: str) -> bool:
        return device == "CPU"

    @classmethod
    def run_model(cls, model, inputs, device: str = "CPU", **kwargs):
        return cls.prepare(model, device, **kwargs).run(inputs)

    @classmethod
    def run_node(cls, node, inputs, device: str = "CPU", outputs_info=None, **kwargs):
        """Run one NodeProto on ``inputs`` (arrays, in the node's input order) as a one-node model."""
        helper = onnx.helper
        arrays = [_as_arrays(x) for x in inputs]
        names = [n for n in node.input if n]
        graph = helper.make_graph(
            [node], "node",
            [helper.make_value_info(n, _type_of(a)) for n, a in zip(names, arrays)],
            [helper.make_empty_tensor_value_info(n) for n in node.output if n])
        opset = kwargs.get("opset_version", onnx.defs.onnx_opset_version())
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
        return GraphgradRep(model).run(arrays)


def _type_of(value):
    """The ONNX TypeProto of an array, a list of arrays (a sequence) or None (an empty optional of a
    float tensor: the type an empty value cannot tell)."""
    helper = onnx.helper
    if value is None:
        return helper.make_optional_type_proto(helper.make_tensor_type_proto(onnx.TensorProto.FLOAT, None))
    if isinstance(value, list):
        elem = value[0].dtype if value else np.dtype(np.float32)
        return helper.make_sequence_type_proto(
            helper.make_tensor_type_proto(helper.np_dtype_to_tensor_dtype(elem), None))
    return helper.make_tensor_type_proto(helper.np_dtype_to_tensor_dtype(value.dtype), value.shape)


prepare = GraphgradBackend.prepare
run_model = GraphgradBackend.run_model
supports_device = GraphgradBackend.supports_device
