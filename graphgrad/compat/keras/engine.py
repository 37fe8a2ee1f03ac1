"""Keras' layer and tensor model on graphgrad: :class:`Layer` (a ``gg.nn.Module`` built from its first
input, as Keras builds), :class:`KerasTensor` (the symbolic value that ``keras.Input`` makes and
that calling a layer on one returns) and ``keras.Input``.

A KerasTensor carries a shape (batch ``None``), a dtype, the layer call that made it and a small
example value (a batch of two zeros pushed through the layers in eval mode, without gradients): the
example gives every layer its input shape, so it is built when it is first called, as in Keras, and
gives ``summary()`` its output shapes. Nothing here computes: every layer forwards to graphgrad's
modules and ops.
"""
from __future__ import annotations

import contextlib
import functools
import operator
import re
import threading
from typing import Any, Optional, Sequence

import graphgrad as gg
from graphgrad import nn
from graphgrad.backend import np

__all__ = ["KerasTensor", "Input", "Layer", "InputLayer", "OpLayer", "pop_weight_rules", "symbolic_call",
           "symbolic_aware"]

_NAME_COUNTS: dict = {}


def snake_case(name: str) -> str:
    """``Conv2D`` -> ``conv2d``, ``BatchNormalization`` -> ``batch_normalization``, ``Conv2DTranspose`` ->
    ``conv2d_transpose`` (Keras' layer names, by Keras' rule)."""
    name = re.sub(r"\W+", "", name)
    name = re.sub(r"(.)([A-Z][a-z]+)", r"\1_\2", name)
    return re.sub(r"([a-z])([A-Z])", r"\1_\2", name).lower()


def unique_name(base: str) -> str:
    """``dense``, ``dense_1``, ``dense_2``... as Keras numbers its layers and models."""
    count = _NAME_COUNTS.get(base, 0)
    _NAME_COUNTS[base] = count + 1
    return base if count == 0 else f"{base}_{count}"


_CALLS = threading.local()  # how deep in layer calls this thread is (Keras clears losses per top-level call)


@contextlib.contextmanager
def top_level_losses(module: Any):
    """Around a concrete call: at the outermost one, clear the penalties ``add_loss`` recorded in
    ``module``'s layers by earlier calls (so ``layer.losses`` / ``model.losses`` are the last call's, as Keras)."""
    depth = getattr(_CALLS, "depth", 0)
    if depth == 0:
        for m in module.modules():
            if isinstance(m, Layer):
                m._pending_losses.clear()
    _CALLS.depth = depth + 1
    try:
        yield
    finally:
        _CALLS.depth = depth


#: the size an unknown dimension (``keras.Input(shape=(None,))``) has in the example values: long enough for
#: convolutions and pooling over a sequence of unknown length
FREE_DIM = 8


def _example_dim(d: Optional[int]) -> int:
    return FREE_DIM if d is None else int(d)


def symbolic_shapes(call: Any, inputs: Any, out: Any) -> list:
    """The output shapes (batch ``None``) of ``call`` on the KerasTensors ``inputs``, whose examples gave
    ``out``: a dimension that follows an unknown input dimension (it changes when that dimension does, on a
    second probe twice as long) is ``None``, as in Keras."""
    outs = list(out) if isinstance(out, (list, tuple)) else [out]
    shapes = [[None] + list(o.shape[1:]) for o in outs]
    tensors = list(inputs) if isinstance(inputs, (list, tuple)) else [inputs]
    if not any(None in t.shape[1:] for t in tensors if isinstance(t, KerasTensor)) or any(
            not isinstance(t.example, gg.Tensor) for t in tensors):
        return [tuple(s) for s in shapes]
    probes = []
    for t in tensors:
        dims = [int(n) * (2 if d is None else 1) for d, n in zip(t.shape[1:], t.example.shape[1:])]
        probes.append(gg.zeros((int(t.example.shape[0]),) + tuple(dims), dtype=t.example.dtype))
    try:
        with gg.no_grad():
            again = call(probes if isinstance(inputs, (list, tuple)) else probes[0])
    except Exception:  # noqa: BLE001  (a layer that needs the sizes it was built on: keep the example's)
        return [tuple(s) for s in shapes]
    again = list(again) if isinstance(again, (list, tuple)) else [again]
    for shape, o in zip(shapes, again):
        if isinstance(o, gg.Tensor) and o.ndim == len(shape):
            for axis in range(1, len(shape)):
                if int(o.shape[axis]) != shape[axis]:
                    shape[axis] = None
    return [tuple(s) for s in shapes]


class KerasTensor:
    """A symbolic tensor: ``shape`` (with ``None`` for the batch and other unknown dims), ``dtype``,
    and the layer call that produced it (``None`` for an ``Input``)."""

    def __init__(self, shape: Sequence[Optional[int]], dtype: Any, example: gg.Tensor, layer: Any = None,
                 inbound: Any = None, name: Optional[str] = None, index: Optional[int] = None) -> None:
        self.shape = tuple(shape)
        self.dtype = dtype
        self.example = example
        self.layer = layer
        self.inbound = inbound
        self.index = index  # which of the layer's outputs, for layers with several
        self.name = name or (layer.name if layer is not None else unique_name("input_layer"))

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def __repr__(self) -> str:
        return f"<KerasTensor shape={self.shape}, dtype={self.dtype}, name={self.name}>"

    # arithmetic on symbolic tensors makes op layers, as Keras 3 (x + y, x * 2, x[:, 0], -x, x @ w)
    def __add__(self, other): return symbolic_call(operator.add, self, other)  # noqa: E704
    def __radd__(self, other): return symbolic_call(operator.add, other, self)  # noqa: E704
    def __sub__(self, other): return symbolic_call(operator.sub, self, other)  # noqa: E704
    def __rsub__(self, other): return symbolic_call(operator.sub, other, self)  # noqa: E704
    def __mul__(self, other): return symbolic_call(operator.mul, self, other)  # noqa: E704
    def __rmul__(self, other): return symbolic_call(operator.mul, other, self)  # noqa: E704
    def __truediv__(self, other): return symbolic_call(operator.truediv, self, other)  # noqa: E704
    def __rtruediv__(self, other): return symbolic_call(operator.truediv, other, self)  # noqa: E704
    def __pow__(self, other): return symbolic_call(operator.pow, self, other)  # noqa: E704
    def __rpow__(self, other): return symbolic_call(operator.pow, other, self)  # noqa: E704
    def __matmul__(self, other): return symbolic_call(operator.matmul, self, other)  # noqa: E704
    def __rmatmul__(self, other): return symbolic_call(operator.matmul, other, self)  # noqa: E704
    def __neg__(self): return symbolic_call(operator.neg, self)  # noqa: E704
    def __abs__(self): return symbolic_call(operator.abs, self)  # noqa: E704
    def __lt__(self, other): return symbolic_call(operator.lt, self, other)  # noqa: E704
    def __le__(self, other): return symbolic_call(operator.le, self, other)  # noqa: E704
    def __gt__(self, other): return symbolic_call(operator.gt, self, other)  # noqa: E704
    def __ge__(self, other): return symbolic_call(operator.ge, self, other)  # noqa: E704
    def __getitem__(self, key): return symbolic_call(operator.getitem, self, key)  # noqa: E704
    __hash__ = object.__hash__


class _Slot:
    """Where the ``index``-th symbolic argument of an op goes."""

    def __init__(self, index: int) -> None:
        self.index = index


def _template(value: Any, found: list) -> Any:
    if isinstance(value, KerasTensor):
        found.append(value)
        return _Slot(len(found) - 1)
    if isinstance(value, (list, tuple)):
        items = [_template(v, found) for v in value]
        return items if isinstance(value, list) else tuple(items)
    if isinstance(value, dict):
        return {k: _template(v, found) for k, v in value.items()}
    return value


def _fill(value: Any, tensors: Sequence[Any]) -> Any:
    if isinstance(value, _Slot):
        return tensors[value.index]
    if isinstance(value, (list, tuple)):
        items = [_fill(v, tensors) for v in value]
        return items if isinstance(value, list) else tuple(items)
    if isinstance(value, dict):
        return {k: _fill(v, tensors) for k, v in value.items()}
    return value


def _has_symbolic(value: Any) -> bool:
    if isinstance(value, KerasTensor):
        return True
    if isinstance(value, (list, tuple)):
        return any(_has_symbolic(v) for v in value)
    if isinstance(value, dict):
        return any(_has_symbolic(v) for v in value.values())
    return False


def symbolic_call(fn: Any, *args, **kwargs) -> Any:
    """``fn(*args, **kwargs)`` where some arguments are KerasTensors: an :class:`OpLayer` node of the
    functional graph (run on the concrete tensors when the model runs), as Keras 3 records ops on
    symbolic tensors."""
    found: list = []
    template = _template((list(args), kwargs), found)
    layer = OpLayer(fn, template, name=unique_name(getattr(fn, "__name__", "op").strip("_")))
    return layer(found if len(found) > 1 else found[0])


def symbolic_aware(fn: Any) -> Any:
    """``fn`` that, given KerasTensors, records an op layer instead of computing (``keras.ops``,
    ``keras.backend`` and the loss functions on symbolic tensors)."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        if _has_symbolic(args) or _has_symbolic(kwargs):
            return symbolic_call(fn, *args, **kwargs)
        return fn(*args, **kwargs)

    wrapper.symbolic_aware = True
    return wrapper


def _is_symbolic(value: Any) -> bool:
    if isinstance(value, KerasTensor):
        return True
    return isinstance(value, (list, tuple)) and bool(value) and all(isinstance(v, KerasTensor) for v in value)


def Input(shape: Optional[Sequence[Optional[int]]] = None, batch_size: Optional[int] = None, dtype: Any = None,
          name: Optional[str] = None, batch_shape: Optional[Sequence[Optional[int]]] = None, **kwargs) -> KerasTensor:
    """``keras.Input(shape=(28, 28, 1))``: a symbolic input (the shape of one sample, no batch)."""
    if batch_shape is not None:
        shape = tuple(batch_shape)[1:]
    if shape is None:
        raise ValueError("keras.Input: pass shape=(...) (one sample's shape, without the batch dimension)")
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    if is_string_dtype(dtype):  # text for a TextVectorization layer: kept as a NumPy array of strings
        example = np.full((2,) + tuple(_example_dim(d) for d in shape), "", dtype=object)
        return KerasTensor((None,) + shape, "string", example, name=name)
    dtype = gg.dtypes.as_dtype(dtype) if dtype is not None else gg.get_default_dtype()
    example = gg.zeros((2,) + tuple(_example_dim(d) for d in shape), dtype=dtype)
    return KerasTensor((None,) + shape, dtype, example, name=name)


def is_string_dtype(dtype: Any) -> bool:
    return dtype in ("string", "str", "object", "bytes", str, bytes, object)


def is_text(value: Any) -> bool:
    """Whether ``value`` is text (a string, a list of them or a NumPy array of strings)."""
    if isinstance(value, (str, bytes)):
        return True
    if isinstance(value, list):
        return bool(value) and isinstance(value[0], (str, bytes))
    kind = getattr(getattr(value, "dtype", None), "kind", None)
    if kind == "O":
        flat = value.reshape(-1)
        return bool(flat.size) and isinstance(flat[0], (str, bytes))
    return kind in ("U", "S")


class WeightLists:
    """Keras' trainable / non-trainable weight lists of a layer or model (``weights`` is the class's own),
    and Keras 3's ``*_variables`` names for them."""

    @property
    def trainable_weights(self) -> list:
        return [p for p in self.parameters() if p.requires_grad]

    @property
    def non_trainable_weights(self) -> list:
        ids = {id(p) for p in self.trainable_weights}
        return [t for t in self.weights if id(t) not in ids]

    trainable_variables = trainable_weights
    non_trainable_variables = non_trainable_weights
    variables = property(lambda self: self.weights)


class Layer(WeightLists, nn.Module):
    """The base of the facade's layers: a Module with a Keras ``name``, built on its first input
    (``build(input_shape)`` creates the graphgrad modules it forwards to), callable on arrays,
    Tensors or KerasTensors. ``get_config()`` returns the constructor's arguments (``save`` writes
    them as JSON); ``get_weights()``/``set_weights()`` use Keras' shapes and order."""

    #: masks (Keras' ``Embedding(mask_zero=True)``): a layer that ``supports_masking`` passes its input's
    #: mask on unchanged; one that ``consumes_mask`` takes it as ``forward(x, mask=...)``
    supports_masking = False

    @property
    def consumes_mask(self) -> bool:
        """Whether the layer takes its input's mask: a custom layer does when its ``call`` has a ``mask``
        argument (Keras passes the mask there); built-in mask consumers set this to True."""
        return getattr(type(self), "call", None) is not None and "mask" in _call_parameters(type(self))

    def __new__(cls, *args, **kwargs):
        self = super().__new__(cls)
        object.__setattr__(self, "_init_args", (list(args), dict(kwargs)))
        return self

    def __init_subclass__(cls, **kwargs) -> None:
        """A subclass's ``build`` marks the layer built, as Keras' does: ``layer.build(shape)`` called by
        hand, then ``set_weights``, must not be undone by a second build at the first call."""
        super().__init_subclass__(**kwargs)
        build = cls.__dict__.get("build")
        if build is None or getattr(build, "marks_built", False):
            return

        @functools.wraps(build)
        def marked(self, *args, **kw):
            result = build(self, *args, **kw)
            object.__setattr__(self, "built", True)
            return result

        marked.marks_built = True
        cls.build = marked

    def __init__(self, name: Optional[str] = None, input_shape: Optional[Sequence[int]] = None,
                 input_dim: Optional[int] = None, dtype: Any = None, trainable: bool = True, **kwargs) -> None:
        super().__init__()
        from graphgrad.compat.keras import regularizers

        object.__setattr__(self, "activity_regularizer", regularizers.get(kwargs.pop("activity_regularizer", None)))
        object.__setattr__(self, "_weight_rules", {})
        object.__setattr__(self, "_pending_losses", [])
        unknown = set(kwargs) - {"autocast", "input_length", "batch_input_shape", "batch_size"}
        if unknown:
            raise TypeError(f"{type(self).__name__}: unknown keyword argument(s) {sorted(unknown)}")
        object.__setattr__(self, "name", name or unique_name(snake_case(type(self).__name__)))
        object.__setattr__(self, "built", False)
        if input_dim is not None and input_shape is None:
            input_shape = (input_dim,)
        if kwargs.get("batch_input_shape") is not None:
            input_shape = tuple(kwargs["batch_input_shape"])[1:]
        object.__setattr__(self, "input_shape_hint", None if input_shape is None else tuple(input_shape))
        object.__setattr__(self, "output_shape", None)
        object.__setattr__(self, "_trainable", bool(trainable))

    @property
    def trainable(self) -> bool:
        """Whether training changes the layer's weights (``layer.trainable = False`` freezes them)."""
        return self._trainable

    @trainable.setter
    def trainable(self, value: bool) -> None:
        object.__setattr__(self, "_trainable", bool(value))
        self.requires_grad_(bool(value))
        for m in self.modules():
            if isinstance(m, Layer) and m.built:
                m._after_requires_grad()

    def _after_requires_grad(self) -> None:
        """Re-freeze what must never train after ``requires_grad_`` (a hook for layers that hold such weights)."""

    # -- building and calling --
    def build(self, input_shape) -> None:
        """Create the layer's modules for inputs of ``input_shape`` (with the batch dimension)."""

    def add_weight(self, name: Optional[str] = None, shape: Any = None, dtype: Any = None, initializer: Any = None,
                   regularizer: Any = None, trainable: bool = True, constraint: Any = None, **kwargs) -> "Variable":
        """Keras' ``add_weight`` (custom layers' ``build``): a :class:`Variable` (a graphgrad Parameter with
        Keras' ``assign``) of ``shape`` filled by ``initializer`` (a name or an initializer; Keras' default
        is glorot_uniform for floats), registered on the layer; ``trainable=False`` keeps it out of
        training (``assign`` updates it); ``regularizer`` adds to the loss, ``constraint`` projects it
        after each step."""
        from graphgrad.compat.keras import regularizers
        from graphgrad.compat.keras.layers_core import _initialize

        if isinstance(name, (tuple, list)) and shape is None:  # Keras 2's add_weight(shape, ...) order
            name, shape = None, name
        shape = () if shape is None else ((int(shape),) if isinstance(shape, int) else tuple(int(d) for d in shape))
        dtype = gg.dtypes.as_dtype(dtype) if dtype is not None else gg.get_default_dtype()
        variable = Variable(gg.zeros(shape, dtype=dtype))
        if initializer is None:
            initializer = "glorot_uniform" if dtype.kind == "f" and len(shape) >= 2 else "zeros"
        _initialize(variable, initializer)
        variable.requires_grad_(bool(trainable) and self._trainable)
        object.__setattr__(variable, "trainable", bool(trainable))
        object.__setattr__(variable, "keras_name", name or "variable")
        added = self.__dict__.setdefault("_added_weights", [])
        base = "w_" + re.sub(r"\W", "_", name or "variable")
        key, n = base, 1
        while key in self._parameters:
            key, n = f"{base}_{n}", n + 1
        self.register_parameter(key, variable)
        added.append((variable, regularizers.get(regularizer), constraint))
        return variable

    def add_variable(self, *args, **kwargs) -> "Variable":
        return self.add_weight(*args, **kwargs)

    def forward(self, *args, **kwargs):
        """A custom layer computes in ``call(inputs, [training=...], [mask=...])``, as in Keras."""
        call = getattr(type(self), "call", None)
        if call is None:
            raise NotImplementedError(f"{type(self).__name__}: define call(self, inputs) (Keras) or forward")
        params = _call_parameters(type(self))
        if "training" in params and "training" not in kwargs:
            kwargs["training"] = self.training
        if "mask" not in params:
            kwargs.pop("mask", None)
        return call(self, *args, **kwargs)

    def _ensure_built(self, inputs: Any) -> None:
        if self.built:
            return
        shape = [tuple(t.shape) for t in inputs] if isinstance(inputs, (list, tuple)) else tuple(inputs.shape)
        self.build(shape)
        object.__setattr__(self, "built", True)
        if not self.trainable:
            self.requires_grad_(False)

    def compute_mask(self, inputs: Any, mask: Any = None) -> Any:
        """The mask of the output (``(batch, time)`` booleans) for ``inputs`` carrying ``mask``."""
        return mask if self.supports_masking else None

    def __call__(self, inputs: Any, *args, training: Optional[bool] = None, mask: Any = None, **kwargs):
        if _is_symbolic(inputs):
            return self._call_symbolic(inputs)
        if mask is not None and self.consumes_mask:
            kwargs["mask"] = as_tensor(mask)
        if not isinstance(inputs, (list, tuple)):
            inputs = as_tensor(inputs)
        else:
            inputs = [as_tensor(x) for x in inputs]
        self._ensure_built(inputs)
        with top_level_losses(self):
            if training is None:
                return self._regularized(super().__call__(inputs, *args, **kwargs))
            was = self.training
            self.train(bool(training))
            try:
                return self._regularized(super().__call__(inputs, *args, **kwargs))
            finally:
                self.train(was)

    # -- losses: add_loss, regularizers, constraints --
    def _regularized(self, outputs):
        """Record the activity regularizer's penalty of ``outputs`` (divided by the batch size), as Keras on
        every call; ``fit``'s and ``evaluate``'s loss take and clear them."""
        if self.activity_regularizer is not None:
            for out in (outputs if isinstance(outputs, (list, tuple)) else [outputs]):
                if isinstance(out, gg.Tensor) and out.ndim > 0:
                    self.add_loss(self.activity_regularizer(out) / int(out.shape[0]))
        return outputs

    def set_weight_rules(self, rules: dict, names: Sequence[str] = ("kernel", "bias")) -> None:
        """Keep the regularizers and constraints given as ``<name>_regularizer`` / ``<name>_constraint`` in
        ``rules`` for the Keras weights ``names`` (in the order of ``get_weights``)."""
        from graphgrad.compat.keras import constraints, regularizers

        mapping = {}
        for index, name in enumerate(names):
            pair = (regularizers.get(rules.get(f"{name}_regularizer")), constraints.get(rules.get(f"{name}_constraint")))
            if pair != (None, None):
                mapping[index] = pair
        object.__setattr__(self, "_weight_rules", mapping)

    def rule_slots(self) -> list:
        """The weights that regularizers and constraints name, as ``keras_weights`` lists them."""
        return self.keras_weights()

    def add_loss(self, value) -> None:
        """Add a scalar to the training loss of the current step (Keras' ``add_loss``)."""
        self._pending_losses.append(value)

    def _own_losses(self) -> list:
        out = list(self._pending_losses)
        for weight, regularizer, _ in self.__dict__.get("_added_weights", ()):
            if regularizer is not None and weight.requires_grad:
                out.append(regularizer(weight))
        if self._weight_rules and self.built:
            slots = self.rule_slots()
            for index, (regularizer, _) in sorted(self._weight_rules.items()):
                if regularizer is not None and index < len(slots) and slots[index][0].requires_grad:
                    out.append(regularizer(slots[index][0]))
        return out

    @property
    def losses(self) -> list:
        """The penalties of the last call (``add_loss``, activity regularizers) and the weight regularizers' now."""
        return [loss for m in self.modules() if isinstance(m, Layer) for loss in m._own_losses()]

    def _clear_losses(self) -> None:
        for m in self.modules():
            if isinstance(m, Layer):
                m._pending_losses.clear()

    def apply_constraints(self) -> None:
        """Project the constrained weights (after an optimizer step), in Keras' layout."""
        for weight, _, constraint in self.__dict__.get("_added_weights", ()):
            if constraint is not None:
                with gg.no_grad():
                    weight.copy_(gg.tensor(constraint(gg.tensor(weight.numpy())).numpy(), dtype=weight.dtype))
        if not (self._weight_rules and self.built):
            return
        slots = self.rule_slots()
        for index, (_, constraint) in sorted(self._weight_rules.items()):
            if constraint is None or index >= len(slots):
                continue
            tensor, to_keras, from_keras = slots[index]
            value = tensor.numpy().copy()
            value = to_keras(value) if to_keras is not None else value
            with gg.no_grad():
                value = constraint(gg.tensor(value, dtype=tensor.dtype)).numpy()
                tensor.copy_(gg.tensor(from_keras(value) if from_keras is not None else value, dtype=tensor.dtype))

    def _call_symbolic(self, inputs: Any):
        several = isinstance(inputs, (list, tuple))
        examples = [t.example for t in inputs] if several else inputs.example
        self._ensure_built(examples)
        in_mask = None if several else getattr(inputs, "_keras_mask", None)  # the example's mask, as Keras'
        extra = {"mask": in_mask} if in_mask is not None and self.consumes_mask else {}
        was = self.training
        self.eval()
        try:
            with gg.no_grad(), np.errstate(all="ignore"):  # example values (zeros, all masked) may divide 0 by 0
                out = nn.Module.__call__(self, examples, **extra)
                shapes = symbolic_shapes(lambda v: nn.Module.__call__(self, v, **extra), inputs, out)
                out_mask = None if several else self.compute_mask(examples, in_mask)
        finally:
            self.train(was)
        if isinstance(out, (list, tuple)):
            return [KerasTensor(shapes[i], o.dtype, o, self, inputs, f"{self.name}_{i}", i)
                    for i, o in enumerate(out)]
        result = KerasTensor(shapes[0], out.dtype, out, self, inputs)
        if out_mask is not None:
            result._keras_mask = out_mask
        if self.output_shape is None:
            object.__setattr__(self, "output_shape", result.shape)
        return result

    # -- weights in Keras' form --
    def keras_weights(self) -> list:
        """``[(tensor, to_keras, from_keras)]``: each weight Keras lists, in its order, with the
        conversions between graphgrad's layout and Keras' (identity by default)."""
        tensors = list(self.parameters()) + [b for b in self.buffers() if b is not None and b.dtype.kind == "f"]
        return [(t, None, None) for t in tensors]

    def get_weights(self) -> list:
        """The layer's weights as NumPy arrays, in Keras' order and shapes (Dense's kernel is
        ``(in, units)``; Conv2D's ``(kh, kw, in, filters)``)."""
        out = []
        for tensor, to_keras, _ in self.keras_weights():
            value = tensor.numpy().copy()
            out.append(to_keras(value) if to_keras is not None else value)
        return out

    def set_weights(self, weights: Sequence[Any]) -> None:
        """Set the weights from arrays in Keras' order and shapes (as :meth:`get_weights` returns)."""
        slots = self.keras_weights()
        weights = list(weights)
        if len(weights) != len(slots):
            raise ValueError(f"{self.name}.set_weights: expected {len(slots)} arrays, got {len(weights)}")
        for (tensor, _, from_keras), value in zip(slots, weights):
            value = gg.tensor(value).numpy()
            value = from_keras(value) if from_keras is not None else value
            if tuple(value.shape) != tuple(tensor.shape):
                raise ValueError(f"{self.name}.set_weights: an array of shape {tuple(value.shape)} for a weight of "
                                 f"shape {tuple(tensor.shape)} (in graphgrad's layout)")
            with gg.no_grad():
                tensor.copy_(gg.tensor(value, dtype=tensor.dtype))

    @property
    def weights(self) -> list:
        return [t for t, _, _ in self.keras_weights()]


    def count_params(self) -> int:
        """The number of weights (trainable and not, as Keras counts: BatchNorm's moving statistics too)."""
        return sum(int(t.size) for t in self.weights)

    def count_non_trainable(self) -> int:
        """The weights that training does not change (BatchNorm's moving statistics, frozen layers)."""
        trainable = {id(p) for p in self.parameters() if p.requires_grad}
        return sum(int(t.size) for t in self.weights if id(t) not in trainable)

    def get_config(self) -> dict:
        args, kwargs = self._init_args
        config = dict(kwargs)
        config["name"] = self.name
        return {"args": list(args), "kwargs": config}

    @classmethod
    def from_config(cls, config: dict) -> "Layer":
        """The layer ``get_config`` describes. A custom layer's ``get_config`` that adds its constructor's
        arguments to ``super().get_config()`` (Keras' idiom) is rebuilt from those, by keyword."""
        extra = {k: v for k, v in config.items() if k not in ("args", "kwargs")}
        if not extra:
            return cls(*config.get("args", []), **config.get("kwargs", {}))
        kwargs = dict(config.get("kwargs", {}))
        kwargs.update(extra)
        import inspect

        accepted = inspect.signature(cls.__init__).parameters
        if not any(p.kind == p.VAR_KEYWORD for p in accepted.values()):
            kwargs = {k: v for k, v in kwargs.items() if k in accepted}
        return cls(**kwargs)

    def extra_repr(self) -> str:
        return f"name={self.name!r}"


_CALL_PARAMETERS: dict = {}


def _call_parameters(cls: type) -> frozenset:
    """The parameter names of ``cls.call`` (cached per class)."""
    found = _CALL_PARAMETERS.get(cls)
    if found is None:
        import inspect

        try:
            found = frozenset(inspect.signature(cls.call).parameters)
        except (TypeError, ValueError):
            found = frozenset()
        _CALL_PARAMETERS[cls] = found
    return found


class Variable(nn.Parameter):
    """A Keras weight (``add_weight``): a graphgrad Parameter with Keras' ``assign`` / ``assign_add`` /
    ``assign_sub`` (in place, outside the gradient), ``value`` and ``path``."""

    def assign(self, value: Any) -> "Variable":
        with gg.no_grad():
            self.copy_(gg.tensor(value.numpy() if isinstance(value, gg.Tensor) else value, dtype=self.dtype))
        return self

    def assign_add(self, value: Any) -> "Variable":
        return self.assign(self.numpy() + (value.numpy() if isinstance(value, gg.Tensor) else value))

    def assign_sub(self, value: Any) -> "Variable":
        return self.assign(self.numpy() - (value.numpy() if isinstance(value, gg.Tensor) else value))

    @property
    def value(self):
        return self

    @property
    def path(self) -> str:
        return getattr(self, "keras_name", "variable")


def pop_weight_rules(kwargs: dict, names: Sequence[str] = ("kernel", "bias")) -> dict:
    """Take ``<name>_regularizer`` and ``<name>_constraint`` for each weight name out of a layer's ``kwargs``."""
    return {f"{name}_{kind}": kwargs.pop(f"{name}_{kind}", None) for name in names
            for kind in ("regularizer", "constraint")}


def as_tensor(value: Any) -> gg.Tensor:
    """A Tensor of ``value`` (float arrays in the default float dtype, integers kept)."""
    if isinstance(value, gg.Tensor):
        return value
    tensor = gg.tensor(value)
    if tensor.dtype.kind == "f" and tensor.dtype != gg.get_default_dtype():
        tensor = tensor.astype(gg.get_default_dtype())
    return tensor


class InputLayer(Layer):
    """``keras.layers.InputLayer(shape=...)``: marks a Sequential model's input shape; passes data through."""

    def __init__(self, shape: Optional[Sequence[int]] = None, input_shape: Optional[Sequence[int]] = None,
                 name: Optional[str] = None, **kwargs) -> None:
        kwargs.pop("dtype", None)
        super().__init__(name=name, input_shape=shape if shape is not None else input_shape, **kwargs)

    def forward(self, x):
        return x


class OpLayer(Layer):
    """An op applied to symbolic tensors (``x + y``, ``keras.ops.concatenate([a, b])``, ``K.mean(z)``): it
    holds the function and the other arguments and computes on the concrete tensors. A model holding one
    saves its weights only (the function is code, as a ``Lambda``'s)."""

    def __init__(self, fn: Any, template: Any, **kwargs) -> None:
        super().__init__(**kwargs)
        object.__setattr__(self, "fn", fn)
        object.__setattr__(self, "template", template)

    def forward(self, inputs):
        tensors = inputs if isinstance(inputs, (list, tuple)) else [inputs]
        args, kwargs = _fill(self.template, tensors)
        return self.fn(*args, **kwargs)
