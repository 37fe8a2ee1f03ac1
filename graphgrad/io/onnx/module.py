"""An imported ONNX model as a ``gg.nn.Module`` (see :func:`graphgrad.io.onnx.to_module`)."""
from __future__ import annotations

from graphgrad.core.tensor import Tensor
from graphgrad.io.onnx.importer import (Interpreter, OnnxImportError, flatten, graph_inputs, initializer_arrays,
                                        make_input, opsets_of, structure_of)
from graphgrad.nn.module import Module
from graphgrad.nn.parameter import Parameter


class OnnxModule(Module):
    """Runs an ONNX graph with graphgrad ops on the tensors it is called with.

    Float initializers are Parameters (``trainable=True``), registered under their ONNX names (made
    attribute-safe), so ``model.parameters()``, ``state_dict()`` and optimizers work as for any
    module. ``forward(*inputs)`` takes the model's inputs in order (arrays or tensors; a list of them
    for a sequence input, None for an empty optional) and returns one value for a one-output model,
    else a tuple (a sequence output is a list of tensors).
    """

    def __init__(self, model, trainable: bool = True):
        super().__init__()
        self.model = model
        self.input_names = [i.name for i in graph_inputs(model)]
        self.input_types = [i.type for i in graph_inputs(model)]
        self.output_names = [o.name for o in model.graph.output]
        self._constants = {}
        self._param_names = {}
        for name, array in initializer_arrays(model.graph).items():
            if trainable and array.dtype.kind == "f":
                key = _attribute_name(name, self._param_names.values())
                setattr(self, key, Parameter(array))
                self._param_names[name] = key
            else:
                self._constants[name] = array
        self._interpreter = Interpreter(model.graph, opsets_of(model))

    def forward(self, *inputs):
        if len(inputs) != len(self.input_names):
            raise OnnxImportError(f"this ONNX model takes {len(self.input_names)} input(s) "
                                  f"{self.input_names}, got {len(inputs)}")
        feeds = {}
        for name, type_proto, x in zip(self.input_names, self.input_types, inputs):
            given = iter(flatten(x))

            def check(tensor_name, shape, dtype):
                item = next(given)
                t = item if isinstance(item, Tensor) else Tensor(item)
                if t.dtype != dtype:
                    raise OnnxImportError(f"input {tensor_name!r} must be {dtype}, got {t.dtype}")
                return t

            feeds[name] = make_input(type_proto, name, check, structure_of(x))
        initializers = dict(self._constants)
        initializers.update({name: getattr(self, key) for name, key in self._param_names.items()})
        values = self._interpreter.run(feeds, initializers)
        outputs = tuple(values[name] for name in self.output_names)
        return outputs[0] if len(outputs) == 1 else outputs

    def extra_repr(self) -> str:
        ops = sorted({n.op_type for n in self.model.graph.node})
        return f"inputs={self.input_names}, outputs={self.output_names}, ops={ops}"


def _attribute_name(name: str, taken) -> str:
    key = "".join(c if c.isalnum() else "_" for c in name)
    if not key or key[0].isdigit():
        key = "p_" + key
    base, i = key, 1
    while key in taken:
        key, i = f"{base}_{i}", i + 1
    return key
