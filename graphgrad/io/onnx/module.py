"""An imported ONNX model as a ``gg.nn.Module`` (see :func:`graphgrad.io.onnx.to_module`).

The ONNX graph is converted once per input signature (the shapes and dtypes of the tensors a call
is given), not on every call: the interpreter runs on placeholders of those exact shapes inside a
graph of its own, so import-time constants (shape computations, folded initializers) are computed
once, and every call only runs the graphgrad ops that depend on the inputs or the parameters:

* with gradients wanted (grad mode on, and an input or a parameter requiring grad), the recorded
  nodes are applied again eagerly, op by op, on the call's tensors and the Parameters themselves,
  so autograd records them as it would for hand-written code (fine-tuning works);
* otherwise a ``Session`` runs the same graph's compiled plan (fused elementwise kernels, buffer
  reuse), reading the Parameters' current values.

A model that cannot be converted that way (a shape read from the input data, an output whose size
depends on the data) is interpreted on each call's tensors, as is a call made inside a graph or a
``gg.function`` trace (which converts it once anyway).
"""
from __future__ import annotations


import contextlib

from graphgrad import backend
from graphgrad.backend import np
from graphgrad.core.device import device
from graphgrad.core.autograd import GRAD_MODE
from graphgrad.core.tensor import Tensor
from graphgrad.graph.graph import Graph, building_graph, topo_order
from graphgrad.graph.session import Session
from graphgrad.graph.variables import Const, NoOp, Placeholder, ReadVariable, placeholder
from graphgrad.io.onnx.trainable import Trainable, trainable_initializers
from graphgrad.io.onnx.importer import (Interpreter, OnnxImportError, flatten, graph_inputs, initializer_arrays,
                                        make_input, opsets_of, structure_of)
from graphgrad.nn.module import Module
from graphgrad.nn.parameter import Parameter

#: input signatures whose conversion a module keeps (the oldest is dropped beyond this)
MAX_SIGNATURES = 16


class OnnxModule(Module):
    """Runs an ONNX graph with graphgrad ops on the tensors it is called with.

    The initializers that are weights are Parameters, registered under their ONNX names (made
    attribute-safe); the others (scales, exponents, mask fills, epsilons, running statistics, tables)
    stay constants. ``trainable`` chooses: ``"auto"`` (the default: PyTorch's own record of its
    parameters when the exporter wrote one, else the graph's structure, see
    :mod:`graphgrad.io.onnx.trainable`), ``True`` (every float initializer), ``False``, a collection of
    initializer names, or a predicate ``fn(name, array) -> bool``. So ``model.parameters()``, ``state_dict()`` and optimizers work as for any
    module. ``forward(*inputs)`` takes the model's inputs in order (arrays or tensors; a list of them
    for a sequence input, None for an empty optional) and returns one value for a one-output model,
    else a tuple (a sequence output is a list of tensors).

    Attributes:
        trained_initializers: the ONNX names of the initializers that are Parameters, in model order.
        constant_initializers: the ONNX names of the float initializers kept constant.
        conversions: how many times the ONNX graph was converted (once per new input signature, and
            on every call of a model that must be interpreted per call).
    """

    def __init__(self, model, trainable: Trainable = "auto", max_unrolled_nodes=None):
        super().__init__()
        self.model = model
        self.input_names = [i.name for i in graph_inputs(model)]
        self.input_types = [i.type for i in graph_inputs(model)]
        self.output_names = [o.name for o in model.graph.output]
        self._constants = {}
        self._param_names = {}
        arrays = initializer_arrays(model.graph)
        trained = trainable_initializers(model, arrays, trainable)
        self.trained_initializers = [name for name in arrays if name in trained]
        self.constant_initializers = [name for name, a in arrays.items() if a.dtype.kind == "f" and name not in trained]
        for name, array in arrays.items():
            if name in trained:
                key = _attribute_name(name, self._param_names.values())
                setattr(self, key, Parameter(array))
                self._param_names[name] = key
            else:
                self._constants[name] = array
        self._interpreter = Interpreter(model.graph, opsets_of(model), max_unrolled_nodes=max_unrolled_nodes)
        self._programs: dict = {}
        self.conversions = 0

    def forward(self, *inputs):
        if len(inputs) != len(self.input_names):
            raise OnnxImportError(f"this ONNX model takes {len(self.input_names)} input(s) "
                                  f"{self.input_names}, got {len(inputs)}")
        leaves, structures = [], []
        for name, type_proto, x in zip(self.input_names, self.input_types, inputs):
            structure = structure_of(x)
            value = make_input(type_proto, name, _checked_input(iter(flatten(x))), structure)
            leaves.extend(flatten(value))
            structures.append(structure)
        # constants the conversion makes (initializers, folded values) go to the inputs' device
        on = next((t.device for t in leaves if t._data is not None), None)
        with device(on) if on is not None and on != "cpu" else contextlib.nullcontext():
            if building_graph() or any(t._data is None for t in leaves):
                outputs = self._interpret(leaves, structures)  # inside a graph or a trace: it converts once anyway
            else:
                outputs = self._run(leaves, structures)
        outputs = tuple(outputs)
        return outputs[0] if len(outputs) == 1 else outputs

    # ---- per-call interpretation ----------------------------------------------------------------
    def _interpret(self, leaves: list, structures: list) -> list:
        """Interpret the ONNX graph on ``leaves`` (the inputs' tensors) now."""
        self.conversions += 1
        given = iter(leaves)
        feeds = {name: make_input(type_proto, name, lambda *_: next(given), structure)
                 for name, type_proto, structure in zip(self.input_names, self.input_types, structures)}
        values = self._interpreter.run(feeds, self._initializers())
        return [values[name] for name in self.output_names]

    def _initializers(self) -> dict:
        initializers = dict(self._constants)
        initializers.update({name: getattr(self, key) for name, key in self._param_names.items()})
        return initializers

    # ---- converted once per signature ---------------------------------------------------------------
    def _run(self, leaves: list, structures: list) -> list:
        key = (tuple((tuple(t.shape), t.dtype.str, str(t.device)) for t in leaves), repr(structures))
        program = self._programs.get(key)
        if program is not None and not program.current():
            program = None  # a parameter it took as a constant has changed: convert again
        if program is None:
            if len(self._programs) >= MAX_SIGNATURES:
                self._programs.pop(next(iter(self._programs)))
            program = self._programs[key] = self._convert(leaves, structures)
        if program.graph is None:
            return self._interpret(leaves, structures)
        wants_grad = GRAD_MODE.enabled and (any(t.requires_grad for t in leaves) or program.any_trained())
        return program.replay(leaves) if wants_grad else program.run(leaves)

    def _convert(self, leaves: list, structures: list) -> "_Program":
        """Interpret the model once on placeholders shaped like ``leaves``, in a graph of its own."""
        graph = Graph()
        placeholders = []
        with graph.as_default():
            def make_placeholder(name, shape, dtype):
                placeholders.append(placeholder(dtype, shape, name="input"))
                return placeholders[-1]

            feeds = {name: make_input(type_proto, name, make_placeholder, structure)
                     for name, type_proto, structure in zip(self.input_names, self.input_types, structures)}
            initializers = dict(self._constants)
            reads = []
            for name, key in self._param_names.items():
                initializers[name] = graph.read_variable(getattr(self, key))
                reads.append((initializers[name], getattr(self, key)))
            # (no batch norm folded into convolution weights: from Parameters, which may be written in
            # place, the folded weights would be made again at every call; a per-channel multiply-add
            # after the convolution fuses with its activation instead: MobileNet-, EfficientNet- and
            # ResNet-style b1/b8 calls 1.1-1.5x faster)
            interpreter = _RecordingInterpreter(self.model.graph, opsets_of(self.model), reads, fuse=False)
            interpreter.unroll = [0, self._interpreter.unroll[1]]
            try:
                values = interpreter.run(feeds, initializers)
            except Exception:  # noqa: BLE001 - needs the data itself (or fails): interpret on every call,
                return _Program(None, [], [], [])  # which computes the values or raises the real error
        self.conversions += 1
        outputs = [values[name] for name in self.output_names]
        return _Program(graph, placeholders, outputs, interpreter.constant_reads)

    def __getstate__(self) -> dict:
        """Copies and pickles leave the conversions behind (they hold graphs reading this module's
        own Parameters): a copy converts again on its first call."""
        state = dict(self.__dict__)
        state["_programs"] = {}
        return state

    def extra_repr(self) -> str:
        ops = sorted({n.op_type for n in self.model.graph.node})
        values = sum(int(getattr(self, key).size) for key in self._param_names.values())
        return (f"inputs={self.input_names}, outputs={self.output_names}, ops={ops},\n"
                f"trained={_name_summary(self.trained_initializers)} ({values:,} values), "
                f"constant={_name_summary(self.constant_initializers)}")


def _name_summary(names: list, shown: int = 8) -> str:
    """``[a, b, ... (+N more)]``: a list of names short enough for a repr."""
    head = ", ".join(names[:shown])
    return f"[{head}{f', ... (+{len(names) - shown} more)' if len(names) > shown else ''}] ({len(names)})"


def _checked_input(given):
    """``make_input``'s callback for a call's arguments: each one as a Tensor of the declared dtype."""

    def check(tensor_name, shape, dtype):
        item = next(given)
        t = item if isinstance(item, Tensor) else Tensor(item)
        if t.dtype != dtype:
            raise OnnxImportError(f"input {tensor_name!r} must be {dtype}, got {t.dtype}")
        return t

    return check


class _RecordingInterpreter(Interpreter):
    """An interpreter that remembers the variables whose value a converter took as a constant."""

    def __init__(self, graph_proto, opsets: dict, reads, fuse: bool = True) -> None:
        super().__init__(graph_proto, opsets, reads, fuse=fuse)
        self.constant_reads: list = []

    def subgraph_interpreter(self, graph_proto) -> "_RecordingInterpreter":
        sub = _RecordingInterpreter(graph_proto, self.opsets, ())
        sub.reads, sub.constant_reads, sub.unroll = self.reads, self.constant_reads, self.unroll
        sub._is_subgraph = True
        return sub

    def known_value(self, t: Tensor):
        value = super().known_value(t)
        variable = self.reads.get(id(t))
        if variable is not None and value is not None and all(v is not variable for v, _ in self.constant_reads):
            self.constant_reads.append((variable, np.array(value, copy=True)))
        return value


class _Program:
    """The model converted for one input signature: a graph whose placeholders are the call's
    tensors and whose variable reads are the module's Parameters.

    ``replay(leaves)`` applies its nodes eagerly, op by op (autograd records them); ``run(leaves)``
    runs its compiled plan in a Session. ``graph`` is None when the model has to be interpreted on
    every call."""

    def __init__(self, graph, placeholders: list, outputs: list, constant_reads: list):
        self.graph = graph
        self.constant_reads = constant_reads
        if graph is None:
            return
        self.outputs = outputs
        self.fetches = [t for t in _leaves_of(outputs) if t._data is None]
        slot_of = {p._node: i for i, p in enumerate(placeholders)}
        self.n_inputs = len(placeholders)
        roots = [t._node for t in self.fetches]
        self.steps, self.template, self.variables = [], [None] * len(placeholders), []
        for node in topo_order(roots, stop=slot_of):
            if node in slot_of or type(node.op) is NoOp:
                continue
            slot_of[node] = len(self.template)
            if type(node.op) is ReadVariable:
                self.template.append(node.op.variable)
                self.variables.append(node.op.variable)
            elif type(node.op) is Const:
                self.template.append(Tensor._wrap(node.op.value))
            elif type(node.op) is Placeholder:
                raise OnnxImportError("an ONNX graph converted for a module reads an unknown placeholder")
            else:
                self.template.append(None)
                args = tuple((True, slot_of[x._node]) if isinstance(x, Tensor) else (False, x) for x in node.inputs)
                self.steps.append((slot_of[node], node.op.apply, args))
        self.slot_of = slot_of
        self.session = Session(graph)
        self._call = self.session.make_callable(self.fetches, placeholders) if self.fetches else None

    def current(self) -> bool:
        """Whether the parameters taken as constants when converting still have those values."""
        return all(np.array_equal(variable._data, value) for variable, value in self.constant_reads)

    def any_trained(self) -> bool:
        return any(v.requires_grad for v in self.variables)

    def replay(self, leaves: list) -> list:
        values = list(self.template)
        values[:self.n_inputs] = leaves
        for slot, apply, args in self.steps:
            values[slot] = apply(*[values[a] if is_slot else a for is_slot, a in args])
        return self._outputs(lambda t: values[self.slot_of[t._node]])

    def run(self, leaves: list) -> list:
        results = self._call(*[t._data for t in leaves]) if self._call is not None else []
        # a Session returns device arrays from a run on a device (NumPy scalars for 0-d CPU results)
        by_node = {t._node: Tensor._wrap(r if backend.is_array(r) and not isinstance(r, np.generic) else np.asarray(r))
                   for t, r in zip(self.fetches, results)}
        return self._outputs(lambda t: by_node[t._node])

    def _outputs(self, computed) -> list:
        def rebuild(value):
            if isinstance(value, list):
                return [rebuild(item) for item in value]
            if value is None:
                return None
            if value._data is not None:  # an import-time constant output
                return Tensor._wrap(value._data.copy())
            return computed(value)

        return [rebuild(out) for out in self.outputs]


def _leaves_of(values: list) -> list:
    return [leaf for value in values for leaf in flatten(value)]


def _attribute_name(name: str, taken) -> str:
    key = "".join(c if c.isalnum() else "_" for c in name)
    if not key or key[0].isdigit():
        key = "p_" + key
    base, i = key, 1
    while key in taken:
        key, i = f"{base}_{i}", i + 1
    return key
