"""``keras.Model`` (functional ``Model(inputs, outputs)`` and subclassed, with ``call``),
``keras.Sequential`` and ``keras.models.load_model``, on ``gg.Model``: ``fit``/``evaluate``/
``predict`` are graphgrad's, with Keras' argument conventions (``y_true`` first in losses,
``evaluate`` returning the loss or ``[loss, *metrics]``, ``verbose="auto"``...)."""
from __future__ import annotations

import sys
from typing import Any, Optional, Sequence

import graphgrad as gg

from graphgrad.compat.keras import losses as _losses
from graphgrad.compat.keras import optimizers as _optimizers
from graphgrad.compat.keras import metrics as _keras_metrics
from graphgrad.compat.keras import outputs as _multi
from graphgrad.compat.keras import trainer as _trainer
from graphgrad.compat.keras import utils as _utils
from graphgrad.compat.keras.utils import get_custom_objects, register_keras_serializable  # noqa: F401  (keras.saving's)
from graphgrad.compat.keras.engine import (Input, InputLayer, KerasTensor, Layer, WeightLists, as_tensor, is_text,
                                           snake_case, symbolic_shapes, top_level_losses, unique_name)

__all__ = ["Model", "Sequential", "load_model", "save_model", "model_from_json", "model_from_config", "clone_model"]


def _with_penalties(model, loss):
    """``loss`` plus the layers' penalties of the last forward pass (Keras' ``model.losses``: ``add_loss``,
    activity and weight regularizers), which are then cleared."""
    layers = [m for m in model.modules() if isinstance(m, Layer)]
    extra = [penalty for layer in layers for penalty in layer._own_losses()]
    for layer in layers:
        layer._pending_losses.clear()
    extra += _model_losses(model, clear=True)
    if loss is None:
        if not extra:
            raise ValueError(f"{model.name}: compiled without a loss and no add_loss penalty was computed")
        return sum(extra[1:], extra[0])
    return loss + sum(extra[1:], extra[0]) if extra else loss


def _model_losses(model, clear: bool = False) -> list:
    """The losses added on the model itself (``model.add_loss``) by its last forward pass."""
    found = []
    for m in model.modules():
        pending = m.__dict__.get("_pending_model_losses")
        if pending:
            found += pending
            if clear:
                object.__setattr__(m, "_pending_model_losses", [])
    return found


def _batch_inputs(batch: Any) -> Any:
    return batch[0] if isinstance(batch, tuple) else batch


def _first_inputs(dataset: Any) -> Any:
    """The inputs of a PyDataset's first batch (the model is built from them)."""
    if len(dataset) == 0:
        raise ValueError("keras: the PyDataset has no batches (len() is 0)")
    return _batch_inputs(dataset[0])


def _model_input(value: Any) -> Any:
    """A model's input as a Tensor; booleans (one-hot arrays of ``dtype=bool``) become floats, as Keras
    casts its inputs to the ``Input``'s float dtype."""
    if is_text(value):  # strings for a TextVectorization layer stay a NumPy array
        return value
    tensor = as_tensor(value)
    return tensor.astype(gg.get_default_dtype()) if tensor.dtype == gg.bool_ else tensor


_NO_TARGETS = object()  # train_step(data): Keras' form; train_step(x, y): graphgrad's


def _verbose(verbose: Any) -> int:
    return 1 if verbose == "auto" else int(verbose)


class Model(WeightLists, gg.Model):
    """``keras.Model(inputs, outputs)`` (the functional API), or a subclass defining ``call(x)``."""

    def __init__(self, inputs: Any = None, outputs: Any = None, name: Optional[str] = None, **kwargs) -> None:
        super().__init__()
        object.__setattr__(self, "name", name or unique_name("functional" if inputs is not None else
                                                             snake_case(type(self).__name__)))
        object.__setattr__(self, "_keras_compile", None)
        object.__setattr__(self, "_inputs", None)
        object.__setattr__(self, "_outputs", None)
        object.__setattr__(self, "_nodes", [])
        object.__setattr__(self, "output_shape", None)
        if inputs is not None or outputs is not None:
            if inputs is None or outputs is None:
                raise ValueError("keras.Model: pass both inputs= and outputs= (or subclass Model and define call)")
            self._init_functional(inputs, outputs)

    # ---- the functional graph --------------------------------------------------------------------------------
    def _init_functional(self, inputs: Any, outputs: Any) -> None:
        ins = list(inputs) if isinstance(inputs, (list, tuple)) else [inputs]
        outs = list(outputs) if isinstance(outputs, (list, tuple)) else [outputs]
        for t in ins + outs:
            if not isinstance(t, KerasTensor):
                raise TypeError(f"keras.Model: inputs and outputs must be KerasTensors (from keras.Input and layer "
                                f"calls), got {type(t).__name__}")
        nodes, seen = [], set()

        def visit(t: KerasTensor) -> None:  # post-order: a node after the nodes it reads
            if id(t) in seen:
                return
            seen.add(id(t))
            if t.layer is None:
                if not any(t is i for i in ins):
                    raise ValueError(f"keras.Model: {t.name} is an Input that is not among the model's inputs")
                return
            for source in (t.inbound if isinstance(t.inbound, (list, tuple)) else [t.inbound]):
                visit(source)
            nodes.append(t)

        for t in outs:
            visit(t)
        object.__setattr__(self, "_inputs", ins)
        object.__setattr__(self, "_outputs", outs)
        object.__setattr__(self, "_input_was_list", isinstance(inputs, (list, tuple)))
        object.__setattr__(self, "_output_was_list", isinstance(outputs, (list, tuple)))
        object.__setattr__(self, "_nodes", nodes)
        object.__setattr__(self, "output_shape", [t.shape for t in outs] if len(outs) > 1 else outs[0].shape)
        for t in nodes:
            self._register(t.layer)

    def _register(self, layer: Layer) -> None:
        if not isinstance(layer, gg.nn.Module):
            raise TypeError(f"{type(self).__name__}: every layer must be a keras layer, got {type(layer).__name__}")
        name = getattr(layer, "name", None) or unique_name("layer")
        existing = self._modules.get(name)
        if existing is not None and existing is not layer:
            raise ValueError(f"{type(self).__name__}: two layers are named {name!r}; layer names must be unique")
        self.add_module(name, layer)

    def _run_functional(self, x):
        xs = list(x) if isinstance(x, (list, tuple)) else [x]
        if len(xs) != len(self._inputs):
            raise ValueError(f"{self.name}: expected {len(self._inputs)} inputs, got {len(xs)}")
        values = {id(t): v if is_text(v) else as_tensor(v) for t, v in zip(self._inputs, xs)}
        calls: dict = {}  # a layer with several outputs (return_state) runs once per call
        masks: dict = {}  # Keras' masks (Embedding(mask_zero=True)) by tensor, and by call
        for t in self._nodes:
            inbound = t.inbound
            key = (id(t.layer), id(inbound))
            if key not in calls:
                several = isinstance(inbound, (list, tuple))
                args = [values[id(s)] for s in inbound] if several else values[id(inbound)]
                mask = None if several else masks.get(id(inbound))
                if mask is not None and getattr(t.layer, "consumes_mask", False):
                    calls[key] = t.layer(args, mask=mask)
                else:
                    calls[key] = t.layer(args)
                masks[key] = t.layer.compute_mask(args, mask) if isinstance(t.layer, Layer) and not several else None
            out = calls[key]
            values[id(t)] = out if t.index is None else out[t.index]
            if masks[key] is not None and t.index in (None, 0):
                masks[id(t)] = masks[key]
        symbolic_losses = self.__dict__.get("_symbolic_losses")
        if symbolic_losses:  # model.add_loss(a KerasTensor): computed from this pass's values
            for t in self._loss_nodes:
                if id(t) not in values:
                    inbound = t.inbound
                    several = isinstance(inbound, (list, tuple))
                    args = [values[id(s)] for s in inbound] if several else values[id(inbound)]
                    out = t.layer(args)
                    values[id(t)] = out if t.index is None else out[t.index]
            object.__setattr__(self, "_pending_model_losses",
                               [gg.mean(values[id(t)]) if values[id(t)].ndim else values[id(t)]
                                for t in symbolic_losses])
        outs = [values[id(t)] for t in self._outputs]
        if len(outs) == 1:
            self._note_output_mask(outs[0], masks.get(id(self._outputs[0])))
        return outs if self._output_was_list else outs[0]

    def add_loss(self, value: Any) -> None:
        """Keras' ``model.add_loss``: a KerasTensor of the model's inputs and layers (Keras 2's VAE writes its
        loss this way, then compiles without a loss) becomes part of every forward pass's loss; a concrete
        Tensor (from a subclassed model's ``call``) counts for the current pass."""
        values = list(value) if isinstance(value, (list, tuple)) else [value]
        if callable(value) and not isinstance(value, (KerasTensor, gg.Tensor)):
            values = [value()]
        if all(isinstance(v, KerasTensor) for v in values):
            if self._inputs is None:
                raise ValueError("add_loss: a symbolic loss needs a functional model (keras.Model(inputs, outputs))")
            losses = list(self.__dict__.get("_symbolic_losses") or []) + values
            nodes, seen = [], {id(t) for t in self._inputs}

            def visit(t: KerasTensor) -> None:
                if id(t) in seen:
                    return
                seen.add(id(t))
                if t.layer is None:
                    raise ValueError(f"add_loss: {t.name} is an Input that is not among {self.name}'s inputs")
                for source in (t.inbound if isinstance(t.inbound, (list, tuple)) else [t.inbound]):
                    visit(source)
                nodes.append(t)

            for t in losses:
                visit(t)
            object.__setattr__(self, "_symbolic_losses", losses)
            object.__setattr__(self, "_loss_nodes", nodes)
            return
        pending = list(self.__dict__.get("_pending_model_losses") or [])
        object.__setattr__(self, "_pending_model_losses", pending + [as_tensor(v) for v in values])

    def forward(self, x, *args, **kwargs):
        if self._inputs is not None:
            return self._run_functional(x)
        call = getattr(type(self), "call", None)
        if call is None:
            raise NotImplementedError(f"{type(self).__name__}: define call(self, inputs) or build with Model(inputs, outputs)")
        return call(self, x, *args, **kwargs)

    def __call__(self, x, *args, training: Optional[bool] = None, **kwargs):
        if isinstance(x, KerasTensor) or (isinstance(x, (list, tuple)) and x and isinstance(x[0], KerasTensor)):
            return self._call_symbolic(x)
        if training is not None:
            was = self.training
            self.train(bool(training))
            try:
                return self(x, *args, **kwargs)
            finally:
                self.train(was)
        x = [_model_input(v) for v in x] if isinstance(x, (list, tuple)) else _model_input(x)
        with top_level_losses(self):
            return super().__call__(x, *args, **kwargs)

    def _call_symbolic(self, x):
        """A model used as a layer of another functional model: ``outputs = base_model(inputs)``."""
        examples = [t.example for t in x] if isinstance(x, (list, tuple)) else x.example
        was = self.training
        self.eval()
        try:
            with gg.no_grad():
                out = self(examples)
                shapes = symbolic_shapes(self, x, out)
        finally:
            self.train(was)
        if isinstance(out, (list, tuple)):
            return [KerasTensor(shapes[i], o.dtype, o, self, x, f"{self.name}_{i}", i)
                    for i, o in enumerate(out)]
        result = KerasTensor(shapes[0], out.dtype, out, self, x)
        object.__setattr__(self, "output_shape", result.shape)
        return result

    @property
    def trainable(self) -> bool:
        return any(p.requires_grad for p in self.parameters()) if list(self.parameters()) else True

    @trainable.setter
    def trainable(self, value: bool) -> None:
        """``base_model.trainable = False`` freezes every layer (transfer learning)."""
        for layer in self.layers:
            layer.trainable = bool(value)

    def keras_weights(self) -> list:
        return [w for layer in self.layers for w in layer.keras_weights()]

    def count_non_trainable(self) -> int:
        return sum(layer.count_non_trainable() for layer in self.layers if getattr(layer, "built", True))

    # ---- layers ----------------------------------------------------------------------------------------------------
    @property
    def layers(self) -> list:
        return [m for m in self._modules.values() if isinstance(m, gg.nn.Module)]

    def get_layer(self, name: Optional[str] = None, index: Optional[int] = None) -> Layer:
        layers = self.layers
        if index is not None:
            return layers[index]
        for layer in layers:
            if getattr(layer, "name", None) == name:
                return layer
        raise ValueError(f"{self.name}: no layer named {name!r}; layers: {[getattr(l, 'name', '?') for l in layers]}")

    @property
    def inputs(self) -> Optional[list]:
        return self._inputs

    @property
    def outputs(self) -> Optional[list]:
        return self._outputs

    @property
    def built(self) -> bool:
        if self.__dict__.get("_marked_built"):
            return True
        layers = self.layers
        return bool(layers) and all(getattr(l, "built", True) for l in layers)

    @built.setter
    def built(self, value: bool) -> None:
        """``self.built = True`` (a subclass whose weights live in models it holds, as keras-io's GAN)."""
        object.__setattr__(self, "_marked_built", bool(value))

    def _build_on(self, x: Any) -> None:
        """Build unbuilt layers by running two samples of ``x`` through the model (eval mode, no
        gradients), then apply a compile that waited for the weights."""
        if not self.built and x is not None and not hasattr(x, "__next__"):
            sample = x[:2] if not isinstance(x, (list, tuple)) or not self._inputs else [v[:2] for v in x]
            if not isinstance(sample, (list, tuple)) and gg.tensor(sample).dtype.kind == "f":
                sample = gg.tensor(sample).astype(self._float_dtype())
            was = self.training
            self.eval()
            try:
                with gg.no_grad():
                    self(sample)
            finally:
                self.train(was)
        if self._keras_compile is not None and not self.compiled:
            self._apply_compile()

    # ---- compile, fit, evaluate, predict ------------------------------------------------------------------------
    def compile(self, optimizer: Any = "rmsprop", loss: Any = None, metrics: Optional[Sequence[Any]] = None,
                loss_weights: Any = None, weighted_metrics: Any = None, run_eagerly: Any = None,
                steps_per_execution: Any = None, jit_compile: Any = None, **kwargs) -> None:
        """Keras' ``compile``: ``optimizer`` a name or a ``keras.optimizers`` object; ``loss`` a Keras
        loss name, object or function ``fn(y_true, y_pred)`` (crossentropies take probabilities
        unless ``from_logits=True``); ``metrics`` names (``"accuracy"``...) or ``keras.metrics``."""
        metrics = dict(metrics) if isinstance(metrics, dict) else list(metrics or [])
        weighted = dict(weighted_metrics) if isinstance(weighted_metrics, dict) else list(weighted_metrics or [])
        object.__setattr__(self, "_keras_compile", (optimizer, loss, metrics, loss_weights))
        object.__setattr__(self, "_keras_weighted_metrics", weighted)
        object.__setattr__(self, "compiled", False)
        if self.built:
            self._apply_compile()

    def _apply_compile(self) -> None:
        optimizer, loss, metrics, loss_weights = self._keras_compile
        user_loss = self.__dict__.get("loss_fn")  # a subclass's own compile may have set self.loss_fn (a GAN's)
        opt = _optimizers.get(optimizer)
        if list(self.parameters()) or opt._optimizer is None:
            opt = opt.bind(self.parameters()) if list(self.parameters()) else opt
        gg_loss, gg_metrics = _multi.compile_arguments(self, loss, metrics, loss_weights)
        gg_metrics += self._weighted_metrics(gg_metrics)
        gg_metrics = [_trainer.Masked(m, self) for m in gg_metrics]
        if gg_loss is None:  # compile(optimizer) alone: the loss is what add_loss adds (Keras 2's VAE)
            def no_loss(y_pred, y_true, sample_weight=None):
                return None

            no_loss.__name__ = "loss"
            gg_loss = no_loss
        super().compile(optimizer=opt if opt._optimizer is not None else None, loss=gg_loss, metrics=gg_metrics)
        object.__setattr__(self, "optimizer", opt)
        if self.loss_fn is not None:  # Keras' loss counts the layers' penalties (training and evaluation)
            base = self.loss_fn

            reduction = getattr(getattr(base, "keras_loss", None), "reduction", "sum_over_batch_size")

            def penalized(y_pred, y_true, sample_weight=None):
                sample_weight = self._masked_weight(y_pred, sample_weight, reduction)
                if sample_weight is None:
                    return _with_penalties(self, base(y_pred, y_true))
                return _with_penalties(self, base(y_pred, y_true, sample_weight=sample_weight))

            penalized.__name__ = getattr(base, "__name__", "loss")
            penalized.facade_loss = True
            if hasattr(base, "keras_loss"):
                penalized.keras_loss = base.keras_loss
            object.__setattr__(self, "loss_fn", penalized)
        if user_loss is not None and loss is None and not getattr(user_loss, "facade_loss", False):
            object.__setattr__(self, "loss_fn", user_loss)
        object.__setattr__(self, "_keras_trackers", None)  # model.metrics are made anew for this compile
        object.__setattr__(self, "keras_optimizer", opt)
        # the weights that train are those trainable when compile ran (Keras 2: a GAN's discriminator, frozen
        # afterwards for the combined model, still trains through its own train_on_batch)
        object.__setattr__(self, "_compiled_trainable", {id(p) for p in self.parameters() if p.requires_grad})

    def _note_output_mask(self, output: Any, mask: Any) -> None:
        """Keep the mask of the output just computed (``Embedding(mask_zero=True)``, ``Masking``): Keras'
        losses and metrics leave out the positions it hides (concrete tensors carry no ``_keras_mask``)."""
        object.__setattr__(self, "_output_mask", (output, mask) if mask is not None else None)

    def _mask_of(self, y_pred: Any) -> Any:
        """The mask of ``y_pred`` when it is (a view of the data of) the last output this model computed."""
        noted = self.__dict__.get("_output_mask")
        if noted is None or not isinstance(y_pred, gg.Tensor):
            return None
        output, mask = noted
        return mask if y_pred is output or y_pred._data is output._data else None

    def _masked_weight(self, y_pred: Any, sample_weight: Any, reduction: Any) -> Any:
        """``sample_weight`` times the output's mask, as Keras' ``apply_mask``: with a mean reduction the
        kept positions weigh total/kept, so the loss is the mean over them."""
        mask = self._mask_of(y_pred)
        if mask is None:
            return sample_weight
        return _trainer.mask_weight(mask, sample_weight, y_pred.dtype,
                                    mean=reduction in (None, "auto", "mean", "sum_over_batch_size"))

    def _weighted_metrics(self, plain: list) -> list:
        """compile's ``weighted_metrics`` as metrics that take each batch's sample (and class) weights;
        a name that an unweighted metric has already gets Keras' ``weighted_`` prefix."""
        specs = self.__dict__.get("_keras_weighted_metrics") or []
        if not specs:
            return []
        _, metrics = _multi.compile_arguments(self, None, specs, None)
        taken = {m.name for m in plain}
        return [_trainer.Weighted(m, f"weighted_{m.name}" if m.name in taken else m.name) for m in metrics]

    def _dict_inputs(self, x: Any) -> Any:
        """Keras' dict of input arrays by ``Input`` name as the list in the model's input order."""
        if not isinstance(x, dict) or self._inputs is None:
            return x
        names = [t.name for t in self._inputs]
        missing = [n for n in names if n not in x]
        if missing:
            raise ValueError(f"{self.name}: no arrays for the inputs {missing} (the dict has {sorted(x)})")
        values = [x[n] for n in names]
        return values if len(values) > 1 else values[0]

    @property
    def input_shape(self) -> Any:
        """The inputs' shapes with ``None`` for the batch (a list for several inputs), as Keras 2."""
        if self._inputs is not None:
            shapes = [t.shape for t in self._inputs]
            return shapes if len(shapes) > 1 else shapes[0]
        seen = self.__dict__.get("input_shape_seen")
        if seen is not None:
            return seen
        raise AttributeError(f"{self.name}: the input shape is not known before the model is built")

    def to_json(self, **kwargs) -> str:
        """The architecture as JSON (``keras.models.model_from_json`` rebuilds it, with new weights)."""
        import json

        return json.dumps({"class_name": type(self).__name__, "config": self.get_config()}, **kwargs)

    @classmethod
    def from_config(cls, config: dict, custom_objects: Optional[dict] = None) -> "Model":
        from graphgrad.compat.keras import saving

        return saving.model_from_config(config, custom_objects)

    def _inputs_of(self, x: Any) -> Any:
        """Keras' list of arrays for a model with several inputs as graphgrad's tuple."""
        if self._inputs is not None and len(self._inputs) > 1 and isinstance(x, (list, tuple)):
            if len(x) != len(self._inputs):
                raise ValueError(f"{self.name}: expected {len(self._inputs)} input arrays, got {len(x)}")
            return tuple(gg.tensor(v).numpy() if not hasattr(v, "shape") else v for v in x)
        return x

    def _targets_or_none(self, x: Any, y: Any) -> Any:
        """Keras' targets; for arrays without targets (a model whose loss comes from ``add_loss``),
        placeholder zeros that no loss reads."""
        if y is None and x is not None and not _utils.is_dataset(x) and not isinstance(x, (_utils.steps_of,
                                                                                             _utils.batches_of)):
            first = x[0] if isinstance(x, (list, tuple)) else x
            if hasattr(first, "shape") or isinstance(first, (list, tuple)):
                return gg.zeros((len(first),)).numpy()
        return _multi.targets_of(self, y)

    def _ready(self, what: str, x: Any) -> None:
        if self._keras_compile is None:
            raise RuntimeError(f"{what}: call model.compile(optimizer=..., loss=..., metrics=...) first")
        self._build_on(x)

    def fit(self, x: Any = None, y: Any = None, batch_size: Optional[int] = None, epochs: int = 1,
            verbose: Any = "auto", callbacks: Optional[Sequence[Any]] = None, validation_split: float = 0.0,
            validation_data: Any = None, shuffle: bool = True, class_weight: Any = None, sample_weight: Any = None,
            initial_epoch: int = 0, steps_per_epoch: Any = None, validation_steps: Any = None,
            validation_batch_size: Any = None, validation_freq: int = 1, **kwargs):
        """Keras' ``fit``; returns the ``History`` (``history.history["val_loss"]``...). A subclass's own
        ``train_step(data)``, ``sample_weight`` (or batches ``(x, y, sample_weight)``) train in Keras' loop
        (:mod:`graphgrad.compat.keras.trainer`); the rest in graphgrad's ``fit``."""
        x = self._dict_inputs(x)
        if isinstance(validation_data, (list, tuple)) and validation_data and isinstance(validation_data[0], dict):
            validation_data = (self._dict_inputs(validation_data[0]), *validation_data[1:])
        if self._keras_loop_wanted("train_step", x, sample_weight) or (
                isinstance(validation_data, (list, tuple)) and len(validation_data) == 3) or (
                class_weight and self.__dict__.get("_keras_weighted_metrics")):  # (class weights reach them)
            return self._fit_keras(x, y, batch_size, epochs, verbose, callbacks, validation_split, validation_data,
                                   shuffle, class_weight, sample_weight, initial_epoch, steps_per_epoch,
                                   validation_steps, validation_batch_size, validation_freq)
        if _utils.is_generator(x) or (steps_per_epoch is not None and _utils.is_dataset(x)):
            if y is not None:
                raise ValueError("fit: when x is a generator or a PyDataset, y must be None (its batches carry the "
                                 "targets)")
            x = _utils.steps_of(x, steps_per_epoch)
            self._ready("fit", _batch_inputs(tuple(x.first())))
        elif steps_per_epoch is not None:
            raise NotImplementedError("fit: steps_per_epoch is supported with a generator or a PyDataset as x, not "
                                      "with arrays (graphgrad.compat.keras)")
        elif _utils.is_dataset(x):  # a keras.utils.PyDataset: batches by index, targets inside
            if y is not None:
                raise ValueError("fit: when x is a PyDataset, y must be None (its batches carry the targets)")
            self._ready("fit", _first_inputs(x))
            x = _utils.batches_of(x)
        else:
            self._ready("fit", x)
        if _utils.is_generator(validation_data) or (validation_steps is not None and _utils.is_dataset(validation_data)):
            validation_data = _utils.steps_of(validation_data, validation_steps)
        elif _utils.is_dataset(validation_data):
            validation_data = _utils.batches_of(validation_data)
        for callback in callbacks or []:
            if hasattr(callback, "restore_into"):  # BackupAndRestore: resume after the last finished epoch
                initial_epoch = max(int(initial_epoch), callback.restore_into(self))
        x, y = self._inputs_of(x), self._targets_or_none(x, y)
        if isinstance(validation_data, (list, tuple)) and len(validation_data) in (2, 3):
            vx = self._inputs_of(validation_data[0])
            validation_data = (vx, self._targets_or_none(vx, validation_data[1]))
        if class_weight:  # only the training loss is weighted (not validation's), as in Keras
            object.__setattr__(self, "_train_loss", _losses.with_class_weight(self.loss_fn, class_weight))
        try:
            return super().fit(x, y, batch_size=batch_size or 32, epochs=epochs, verbose=_verbose(verbose),
                               callbacks=callbacks, validation_split=validation_split,
                               validation_data=validation_data, shuffle=shuffle, initial_epoch=initial_epoch)
        finally:
            object.__setattr__(self, "_train_loss", None)

    def train_step(self, data, y=_NO_TARGETS):
        """Keras' ``train_step(data)`` (``data`` is ``x``, ``(x, y)`` or ``(x, y, sample_weight)``): forward,
        ``compute_loss``, one update, ``compute_metrics``; returns the dict of metric results, as Keras (a
        subclass overrides it, or calls it through ``super()``). Called as ``train_step(x, y)`` it is
        graphgrad's step (``fit``'s loop), returning ``(loss, output)``. Both train the weights that were
        trainable at ``compile``, take the class-weighted loss while ``fit(class_weight=...)`` runs, add the
        layers' penalties (``add_loss``, regularizers) and apply their constraints after the update."""
        compiled = self.__dict__.get("_compiled_trainable")
        switched = []
        if compiled is not None:
            for p in self.parameters():
                if p.requires_grad != (id(p) in compiled):
                    switched.append((p, p.requires_grad))
                    p.requires_grad_(id(p) in compiled)
        try:
            if y is _NO_TARGETS:
                return self._keras_train_step(data)
            return self._train_step(data, y)
        finally:
            for p, was in switched:
                p.requires_grad_(was)

    # ---- Keras 3's trainer API: steps, compute_loss, metrics -------------------------------------------------------
    def _targets_tensor(self, y: Any) -> Any:
        y = _multi.targets_of(self, y) if isinstance(y, (list, dict)) else y
        if isinstance(y, tuple):
            return tuple(self._target_tensor(v) for v in y)
        return self._target_tensor(y)

    def _target_tensor(self, y: Any) -> Any:
        if y is None:
            return None
        t = as_tensor(y)
        return t.astype(self._float_dtype()) if t.dtype.kind == "f" and t.dtype != self._float_dtype() else t

    def _keras_train_step(self, data) -> dict:
        x, y, sample_weight = _trainer.unpack_x_y_sample_weight(data)
        class_weight = self.__dict__.get("_class_weight")
        if class_weight and y is not None:
            weights = _losses.class_weights_of(class_weight, y)
            sample_weight = weights if sample_weight is None else weights * as_tensor(sample_weight)
        layers = [m for m in self.modules() if isinstance(m, Layer)]
        for layer in layers:
            layer._pending_losses.clear()
        y_pred = self(x, training=True)
        loss = self.compute_loss(x, y, y_pred, sample_weight, training=True)
        self._trackers()[0].update_state(loss.detach(), sample_weight=_trainer._rows(x))
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        for layer in layers:
            layer.apply_constraints()
        return self.compute_metrics(x, y, y_pred, sample_weight)

    def test_step(self, data) -> dict:
        """Keras' ``test_step(data)``: forward in inference mode, ``compute_loss``, ``compute_metrics``."""
        x, y, sample_weight = _trainer.unpack_x_y_sample_weight(data)
        y_pred = self(x, training=False)
        loss = self.compute_loss(x, y, y_pred, sample_weight, training=False)
        if loss is not None:
            self._trackers()[0].update_state(loss.detach(), sample_weight=_trainer._rows(x))
        return self.compute_metrics(x, y, y_pred, sample_weight)

    def predict_step(self, data) -> Any:
        x, _, _ = _trainer.unpack_x_y_sample_weight(data)
        return self(x, training=False)

    def compute_loss(self, x: Any = None, y: Any = None, y_pred: Any = None, sample_weight: Any = None,
                     training: bool = True):
        """The compiled loss of ``y_pred`` against ``y`` (each sample's loss times its ``sample_weight``, summed
        and divided by the number of samples, as Keras' ``sum_over_batch_size``) plus the layers' and the
        model's penalties (``add_loss``, regularizers)."""
        loss_fn = self.loss_fn if self.__dict__.get("_keras_compile") is not None else None
        if loss_fn is None or not getattr(loss_fn, "facade_loss", False):
            return _with_penalties(self, None)
        y = self._targets_tensor(y)
        if y is None:
            return loss_fn(y_pred, y)
        if sample_weight is not None:
            return loss_fn(y_pred, y, sample_weight=as_tensor(sample_weight))
        return loss_fn(y_pred, y)

    def _trackers(self) -> tuple:
        """``(loss tracker, compile metrics or None)``: Keras' own entries of ``model.metrics``."""
        trackers = self.__dict__.get("_keras_trackers")
        if trackers is None:
            compiled = self.compiled and bool(self.metric_specs)
            trackers = (_keras_metrics.Mean(name="loss"),
                        _trainer.CompileMetrics(self._make_metrics()) if compiled else None)
            object.__setattr__(self, "_keras_trackers", trackers)
        return trackers

    @property
    def metrics(self) -> list:
        """Keras' ``model.metrics``: the loss tracker and the compiled metrics (after ``compile``), then the
        Keras metrics held as the model's attributes (a custom ``train_step``'s trackers)."""
        out = []
        if self.__dict__.get("_keras_compile") is not None:
            tracker, compiled = self._trackers()
            out += [tracker] + ([compiled] if compiled is not None else [])
        out += [v for k, v in self.__dict__.items() if isinstance(v, _keras_metrics.Metric) and not k.startswith("_")]
        return out

    def reset_metrics(self) -> None:
        for metric in self.metrics:
            metric.reset_state()

    def compute_metrics(self, x: Any, y: Any, y_pred: Any, sample_weight: Any = None) -> dict:
        """Update the compiled metrics with ``y_pred`` against ``y``; the results of ``model.metrics``."""
        compiled = self._trackers()[1] if self.__dict__.get("_keras_compile") is not None else None
        if compiled is not None and y is not None:
            compiled.update_state(self._targets_tensor(y), y_pred, sample_weight)
        return self.get_metrics_result()

    def get_metrics_result(self) -> dict:
        out = {}
        for metric in self.metrics:
            result = metric.result()
            if isinstance(result, dict):
                out.update(result)
            else:
                out[metric.name] = result
        return out

    @property
    def compiled_loss(self):
        """Keras 2's ``self.compiled_loss(y, y_pred, sample_weight, regularization_losses)`` (custom train steps)."""
        def compiled_loss(y_true, y_pred, sample_weight=None, regularization_losses=None):
            return self.compute_loss(None, y_true, y_pred, sample_weight)

        return compiled_loss

    @property
    def compiled_metrics(self):
        """Keras 2's ``self.compiled_metrics.update_state(y, y_pred)``."""
        compiled = self._trackers()[1]
        return compiled if compiled is not None else _trainer.CompileMetrics([])

    def _overrides(self, name: str) -> bool:
        return getattr(type(self), name) is not getattr(Model, name)

    def _keras_loop_wanted(self, step: str, x: Any, sample_weight: Any) -> bool:
        """Keras' loop for a subclass's own step, sample weights, or batches that carry them."""
        if self._overrides(step) or sample_weight is not None:
            return True
        if _utils.is_dataset(x) and len(x):
            first = x[0]
            return isinstance(first, tuple) and len(first) == 3
        return False

    def _ready_keras(self, what: str, data: Any, x: Any) -> None:
        """Compiled and built for Keras' loop; a subclass without ``call`` (its ``train_step`` uses the
        models it holds) is not run to be built."""
        if self._keras_compile is None:
            raise RuntimeError(f"{what}: call model.compile(...) first")
        if self._inputs is None and getattr(type(self), "call", None) is None:
            if not self.compiled:
                self._apply_compile()
            return
        if isinstance(data, _trainer.ArrayBatches):
            self._build_on(x)
        else:
            first = next(iter(data.epoch(False)), None)
            if first is not None:
                inputs = _trainer.unpack_x_y_sample_weight(first)[0]
                self._build_on(inputs.numpy() if isinstance(inputs, gg.Tensor) else inputs)
            elif not self.compiled:
                self._apply_compile()

    def _fit_keras(self, x, y, batch_size, epochs, verbose, callbacks, validation_split, validation_data, shuffle,
                   class_weight, sample_weight, initial_epoch, steps_per_epoch, validation_steps,
                   validation_batch_size, validation_freq):
        if class_weight and sample_weight is not None:
            raise ValueError("You cannot `class_weight` and `sample_weight` at the same time.")
        data = _trainer.batches(x, y, sample_weight, batch_size, steps_per_epoch)
        self._ready_keras("fit", data, x)
        validation = None
        if validation_data is not None:
            if isinstance(validation_data, (list, tuple)) and len(validation_data) in (2, 3):
                vx = self._dict_inputs(validation_data[0])
                validation = _trainer.ArrayBatches(vx, validation_data[1],
                                                   validation_data[2] if len(validation_data) == 3 else None,
                                                   validation_batch_size or batch_size)
            else:
                validation = _trainer.batches(validation_data, steps=validation_steps)
        elif validation_split:
            if not isinstance(data, _trainer.ArrayBatches):
                raise ValueError("fit: validation_split needs array data; pass validation_data with a dataset")
            data, validation = data.split(float(validation_split))
        for callback in callbacks or []:
            if hasattr(callback, "restore_into"):
                initial_epoch = max(int(initial_epoch), callback.restore_into(self))
        object.__setattr__(self, "_class_weight", dict(class_weight) if class_weight else None)
        try:
            return _trainer.fit_loop(self, data, epochs, _verbose(verbose), callbacks, validation, shuffle,
                                     initial_epoch, validation_freq)
        finally:
            object.__setattr__(self, "_class_weight", None)

    def _train_step(self, x, y) -> tuple:
        train_loss = getattr(self, "_train_loss", None)
        layers = [m for m in self.modules() if isinstance(m, Layer)]
        for layer in layers:
            layer._pending_losses.clear()
        output = self(x)
        if train_loss is None:
            loss = self.loss_fn(output, y)  # with the penalties (see _apply_compile)
        else:
            loss = _with_penalties(self, train_loss(output, y))
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        for layer in layers:
            layer.apply_constraints()
        return loss, output

    @property
    def losses(self) -> list:
        """The layers' penalties (``add_loss``, activity and weight regularizers), as Keras' ``model.losses``."""
        return [loss for m in self.modules() if isinstance(m, Layer) for loss in m._own_losses()]

    def evaluate(self, x: Any = None, y: Any = None, batch_size: Optional[int] = None, verbose: Any = "auto",
                 sample_weight: Any = None, steps: Any = None, callbacks: Any = None, return_dict: bool = False,
                 **kwargs):
        """The loss (a float), or ``[loss, *metrics]`` when compiled with metrics, as Keras;
        ``return_dict=True`` gives ``{"loss": ..., "accuracy": ...}``."""
        x = self._dict_inputs(x)
        if self._keras_loop_wanted("test_step", x, sample_weight):
            data = _trainer.batches(x, y, sample_weight, batch_size, steps)
            self._ready_keras("evaluate", data, x)
            logs = _trainer.evaluate_loop(self, data, callbacks)
            if _verbose(verbose):
                print(_trainer._line(logs), file=sys.stdout, flush=True)
            if return_dict:
                return logs
            values = list(logs.values())
            return values[0] if len(values) == 1 else values
        if _utils.is_generator(x) or (steps is not None and _utils.is_dataset(x)):
            x = _utils.steps_of(x, steps)
            self._ready("evaluate", _batch_inputs(tuple(x.first())))
        elif _utils.is_dataset(x):
            self._ready("evaluate", _first_inputs(x))
            x = _utils.batches_of(x)
        else:
            self._ready("evaluate", x)
        logs = super().evaluate(self._inputs_of(x), self._targets_or_none(x, y), batch_size=batch_size or 32, verbose=0, callbacks=callbacks)
        if _verbose(verbose):
            print(" - ".join(f"{k}: {v:.4f}" for k, v in logs.items()), file=sys.stdout, flush=True)
        if return_dict:
            return dict(logs)
        values = [float(v) for v in logs.values()]
        return values[0] if len(values) == 1 else values

    def predict(self, x: Any, batch_size: Optional[int] = None, verbose: Any = "auto", steps: Any = None,
                callbacks: Any = None, **kwargs):
        """The model's outputs as a NumPy array (probabilities when it ends in a softmax)."""
        x = self._dict_inputs(x)
        if _utils.is_generator(x) or (steps is not None and _utils.is_dataset(x)):
            batches = list(_utils.steps_of(x, steps))
            parts = [self.predict(_batch_inputs(b), batch_size=batch_size, verbose=0) for b in batches]
            return gg.concatenate([gg.tensor(p) for p in parts], axis=0).numpy()
        if _utils.is_dataset(x):  # each batch x (or (x, y)), predicted in order
            self._build_on(_first_inputs(x))
            parts = [self.predict(_batch_inputs(x[i]), batch_size=batch_size, verbose=0) for i in range(len(x))]
            return gg.concatenate([gg.tensor(p) for p in parts], axis=0).numpy()
        self._build_on(x)
        try:
            return super().predict(self._inputs_of(x), batch_size=batch_size or 32)
        finally:
            for layer in self.modules():
                if isinstance(layer, Layer):
                    layer._pending_losses.clear()  # activity penalties of predictions count nowhere
            _model_losses(self, clear=True)

    # Keras 2's generator methods (removed in Keras 3, kept by tf.keras): fit / evaluate / predict take generators
    def fit_generator(self, generator: Any, steps_per_epoch: Any = None, epochs: int = 1, verbose: Any = 1,
                      callbacks: Any = None, validation_data: Any = None, validation_steps: Any = None,
                      validation_freq: int = 1, class_weight: Any = None, max_queue_size: int = 10, workers: int = 1,
                      use_multiprocessing: bool = False, shuffle: bool = True, initial_epoch: int = 0):
        return self.fit(generator, steps_per_epoch=steps_per_epoch, epochs=epochs, verbose=verbose,
                        callbacks=callbacks, validation_data=validation_data, validation_steps=validation_steps,
                        class_weight=class_weight, initial_epoch=initial_epoch)

    def evaluate_generator(self, generator: Any, steps: Any = None, callbacks: Any = None, max_queue_size: int = 10,
                           workers: int = 1, use_multiprocessing: bool = False, verbose: Any = 0):
        return self.evaluate(generator, steps=steps, verbose=verbose)

    def predict_generator(self, generator: Any, steps: Any = None, callbacks: Any = None, max_queue_size: int = 10,
                          workers: int = 1, use_multiprocessing: bool = False, verbose: Any = 0):
        return self.predict(generator, steps=steps, verbose=verbose)

    def predict_classes(self, x: Any, batch_size: Optional[int] = 32, verbose: Any = 0):
        """Keras 2's ``Sequential.predict_classes``: the argmax over the last axis, or ``probability > 0.5``
        (int32) for a single output unit."""
        proba = self.predict(x, batch_size=batch_size, verbose=0)
        return proba.argmax(axis=-1) if proba.shape[-1] > 1 else (proba > 0.5).astype("int32")

    def predict_proba(self, x: Any, batch_size: Optional[int] = 32, verbose: Any = 0):
        """Keras 2's ``Sequential.predict_proba`` (the outputs of ``predict``)."""
        return self.predict(x, batch_size=batch_size, verbose=0)

    def predict_on_batch(self, x: Any):
        return self.predict(x, batch_size=len(x), verbose=0)

    def train_on_batch(self, x: Any, y: Any = None, sample_weight: Any = None, class_weight: Any = None,
                       return_dict: bool = False):
        """One update on the batch; the loss, or ``[loss, *metrics]`` (the metrics of this batch's
        predictions, before the update) when compiled with metrics, as Keras. With ``sample_weight`` /
        ``class_weight`` or a subclass's own ``train_step``, the step is Keras' ``train_step``."""
        if self._overrides("train_step") or sample_weight is not None or class_weight:
            x = self._dict_inputs(x)
            data = _trainer.ArrayBatches(x, y, sample_weight, batch_size=_trainer._rows(x))
            self._ready_keras("train_on_batch", data, x)
            self.reset_metrics()
            self.train()
            object.__setattr__(self, "_class_weight", dict(class_weight) if class_weight else None)
            try:
                logs = _trainer.logs_of(self.train_step(next(iter(data.epoch(False)))))
            finally:
                object.__setattr__(self, "_class_weight", None)
            if return_dict:
                return logs
            values = list(logs.values())
            return values[0] if len(values) == 1 else values
        self._ready("train_on_batch", x)
        xb = self._tensor(self._inputs_of(x), self._float_dtype())
        yb = self._tensor(self._targets_or_none(x, y), self._float_dtype())
        self.train()
        loss, output = self.train_step(xb, yb)
        values = {"loss": float(loss.item())}
        for metric in self._make_metrics():
            with gg.no_grad():
                metric.update(output.detach() if isinstance(output, gg.Tensor) else output, yb)
            values[getattr(metric, "name", "metric")] = float(metric.result())
        if return_dict:
            return values
        return values["loss"] if len(values) == 1 else list(values.values())

    def test_on_batch(self, x: Any, y: Any = None, sample_weight: Any = None, return_dict: bool = False):
        """The loss (and metrics) of one batch, as ``evaluate`` gives them."""
        x = self._dict_inputs(x)
        return self.evaluate(x, y, batch_size=_trainer._rows(x), verbose=0, sample_weight=sample_weight,
                             return_dict=return_dict)

    # ---- weights ------------------------------------------------------------------------------------------------------
    @property
    def metrics_names(self) -> list:
        """``["loss", *metric names]``: the order of ``evaluate``'s list (Keras 2)."""
        if self._keras_compile is None:
            return []
        if not self.compiled:
            return ["loss"] + [m if isinstance(m, str) else getattr(m, "name", getattr(m, "__name__", "metric"))
                               for m in (self._keras_compile[2] if isinstance(self._keras_compile[2], list) else [])]
        return ["loss"] + [getattr(m, "name", "metric") for m in (self.metric_specs or [])]

    def get_weights(self) -> list:
        """Every layer's weights in Keras' order and shapes (see ``Layer.get_weights``)."""
        return [w for layer in self.layers for w in layer.get_weights()]

    def set_weights(self, weights: Sequence[Any]) -> None:
        weights = list(weights)
        for layer in self.layers:
            n = len(layer.get_weights())
            layer.set_weights(weights[:n])
            weights = weights[n:]
        if weights:
            raise ValueError(f"set_weights: {len(weights)} arrays left over")

    @property
    def weights(self) -> list:
        return [w for layer in self.layers for w in layer.weights]


    def count_params(self) -> int:
        """All weights, as Keras counts them (BatchNorm's moving statistics included)."""
        if not self.built:
            raise ValueError(f"{self.name}: the model is not built yet (call it on data, or give keras.Input / "
                             "input_shape) so it has no weights to count")
        return sum(layer.count_params() for layer in self.layers)

    def save_weights(self, filepath: str, overwrite: bool = True) -> None:
        """The weights as an ``.npz`` archive (whatever the file's name, e.g. ``"m.weights.h5"``)."""
        from graphgrad.compat.keras import saving

        saving.save_weights(self, filepath)

    def load_weights(self, filepath: str, skip_mismatch: bool = False) -> None:
        from graphgrad.compat.keras import saving

        saving.load_weights(self, filepath)

    def save(self, filepath: str, overwrite: bool = True, **kwargs) -> None:
        """``model.save("m.keras")``: a zip of the architecture (JSON) and the weights (npz); no pickle."""
        from graphgrad.compat.keras import saving

        saving.save_model(self, filepath)

    def get_config(self) -> dict:
        from graphgrad.compat.keras import saving

        return saving.model_config(self)

    # ---- summary -------------------------------------------------------------------------------------------------------
    def summary(self, line_length: Optional[int] = None, positions: Any = None, print_fn: Any = None,
                **kwargs) -> str:
        """Keras' table: each layer's name and type, output shape and weight count, then the totals."""
        rows = []
        for layer in self.layers:
            shape = getattr(layer, "output_shape", None)
            count = layer.count_params() if getattr(layer, "built", True) else 0
            rows.append((f"{getattr(layer, 'name', '?')} ({type(layer).__name__})",
                         "?" if shape is None else str(shape), f"{count:,}"))
        header = ("Layer (type)", "Output Shape", "Param #")
        widths = [max([len(header[i])] + [len(r[i]) for r in rows]) + 3 for i in range(3)]
        line = lambda cells: "".join(c.ljust(w) for c, w in zip(cells, widths)).rstrip()  # noqa: E731
        width = sum(widths)
        total = sum(layer.count_params() for layer in self.layers if getattr(layer, "built", True))
        trainable = total - self.count_non_trainable()
        out = [f'Model: "{self.name}"', "_" * width, line(header), "=" * width]
        for i, row in enumerate(rows):
            out.append(line(row))
            out.append("_" * width if i != len(rows) - 1 else "=" * width)
        out += [f"Total params: {total:,}", f"Trainable params: {trainable:,}",
                f"Non-trainable params: {total - trainable:,}", "_" * width]
        text = "\n".join(out)
        (print_fn or print)(text)
        return text


class Sequential(Model):
    """``keras.Sequential([layers])``: built at once when the first item is ``keras.Input(shape)``
    (or a layer given ``input_shape=``), else on the first data."""

    def __init__(self, layers: Optional[Sequence[Any]] = None, name: Optional[str] = None, **kwargs) -> None:
        super().__init__(name=name or unique_name("sequential"))
        object.__setattr__(self, "_layer_list", [])
        object.__setattr__(self, "_symbolic", None)
        object.__setattr__(self, "input_shape_seen", None)
        for layer in layers or []:
            self.add(layer)

    def add(self, layer: Any) -> None:
        """Append a layer (or start with ``keras.Input(shape=...)``)."""
        if isinstance(layer, KerasTensor):
            if self._layer_list or self._symbolic is not None:
                raise ValueError("Sequential: keras.Input must come first")
            object.__setattr__(self, "_symbolic", layer)
            object.__setattr__(self, "input_shape_seen", layer.shape)
            return
        if not isinstance(layer, gg.nn.Module):
            raise TypeError(f"Sequential.add: expected a keras layer, got {type(layer).__name__}")
        if isinstance(layer, InputLayer) and not self._layer_list:
            object.__setattr__(self, "_symbolic", Input(shape=layer.input_shape_hint))
            object.__setattr__(self, "input_shape_seen", self._symbolic.shape)
            return
        if self._symbolic is None and not self._layer_list and getattr(layer, "input_shape_hint", None) is not None:
            object.__setattr__(self, "_symbolic", Input(shape=layer.input_shape_hint))
            object.__setattr__(self, "input_shape_seen", self._symbolic.shape)
        self._register(layer)
        self._layer_list.append(layer)
        if self._symbolic is not None:
            object.__setattr__(self, "_symbolic", layer(self._symbolic))
            if isinstance(self._symbolic, KerasTensor):
                object.__setattr__(self, "output_shape", self._symbolic.shape)

    def pop(self) -> Layer:
        layer = self._layer_list.pop()
        del self._modules[layer.name]
        return layer

    def forward(self, x, *args, **kwargs):
        mask = None
        for layer in self._layer_list:
            y = layer(x, mask=mask) if mask is not None and getattr(layer, "consumes_mask", False) else layer(x)
            mask = layer.compute_mask(x, mask) if isinstance(layer, Layer) else None
            x = y
        self._note_output_mask(x, mask)
        return x

    @property
    def layers(self) -> list:
        return list(self._layer_list)

    def _build_on(self, x: Any) -> None:
        if self.input_shape_seen is None and x is not None and hasattr(x, "shape"):
            object.__setattr__(self, "input_shape_seen", (None,) + tuple(x.shape[1:]))
            if not self.built:  # a symbolic pass records every layer's output shape for summary()
                dtype = gg.tensor(x[:1]).dtype
                dtype = self._float_dtype() if dtype.kind == "f" or dtype == gg.bool_ else dtype
                t = Input(shape=tuple(x.shape[1:]), dtype=dtype)
                for layer in self._layer_list:
                    t = layer(t)
                object.__setattr__(self, "_symbolic", t)
        super()._build_on(x)


def load_model(filepath: str, custom_objects: Optional[dict] = None, compile: bool = True, **kwargs) -> Model:
    """``keras.models.load_model("m.keras")``: the model ``save`` wrote (architecture, weights and,
    with ``compile=True``, the compile arguments when they were names or keras objects)."""
    from graphgrad.compat.keras import saving

    return saving.load_model(filepath, custom_objects=custom_objects, compile=compile)


def save_model(model: Model, filepath: str, **kwargs) -> None:
    model.save(filepath)


def clone_model(model: Model) -> Model:
    """A model of the same architecture with new weights."""
    from graphgrad.compat.keras import saving

    return saving.model_from_config(saving.model_config(model))


def model_from_json(json_string: str, custom_objects: Optional[dict] = None) -> Model:
    """The model ``model.to_json()`` described (new weights; ``load_weights`` fills them)."""
    import json

    from graphgrad.compat.keras import saving

    spec = json.loads(json_string)
    return saving.model_from_config(spec.get("config", spec), custom_objects)


def model_from_config(config: dict, custom_objects: Optional[dict] = None) -> Model:
    from graphgrad.compat.keras import saving

    return saving.model_from_config(config.get("config", config) if "class_name" in config else config,
                                    custom_objects)
