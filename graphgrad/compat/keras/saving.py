"""``model.save("m.keras")`` / ``keras.models.load_model``: a zip archive holding ``config.json``
(the architecture: each layer's class and constructor arguments, and for functional models the
graph of layer calls; plus the compile arguments when they are names or keras objects) and
``model.weights.npz`` (the ``state_dict``). No pickle: loading runs no code from the file. Files are
written to a temporary file and renamed into place."""
from __future__ import annotations

import io
import json
import os
import tempfile
import zipfile
from typing import Any, Optional

import graphgrad as gg
from graphgrad.backend import np

from graphgrad.compat.keras import losses as _losses
from graphgrad.compat.keras import optimizers as _optimizers
from graphgrad.compat.keras.engine import Input, KerasTensor, Layer

FORMAT = "graphgrad.compat.keras/1"


def _atomic_write(path: str, data: bytes) -> None:
    directory = os.path.dirname(os.path.abspath(path))
    os.makedirs(directory, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=directory)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise


def _weights_bytes(model) -> bytes:
    buffer = io.BytesIO()
    np.savez(buffer, **{k: v.numpy() for k, v in model.state_dict().items()})
    return buffer.getvalue()


def _load_weights_bytes(model, data: bytes, where: str) -> None:
    with np.load(io.BytesIO(data), allow_pickle=False) as arrays:
        state = {k: gg.tensor(arrays[k]) for k in arrays.files}
    try:
        model.load_state_dict(state)
    except Exception as exc:
        raise ValueError(f"{where}: the weights do not fit the model: {exc}") from None


def save_weights(model, path: str) -> None:
    if not model.built:
        raise ValueError(f"save_weights: {model.name} is not built yet, so it has no weights")
    _atomic_write(str(path), _weights_bytes(model))


def load_weights(model, path: str) -> None:
    if not os.path.exists(path):
        raise FileNotFoundError(f"load_weights: no file {path!r}")
    if not model.built:
        raise ValueError(f"load_weights: build {model.name} first (give it keras.Input / input_shape or call it on "
                         "data) so its weights exist")
    with open(path, "rb") as f:
        _load_weights_bytes(model, f.read(), f"load_weights({path!r})")


# ---- architecture ------------------------------------------------------------------------------------------------------
def _jsonable(value: Any, where: str) -> Any:
    from graphgrad.compat.keras import activations

    if isinstance(value, (list, tuple)):
        return [_jsonable(v, where) for v in value]
    if isinstance(value, dict):
        return {str(k): _jsonable(v, where) for k, v in value.items()}
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    from graphgrad.compat.keras import constraints, regularizers

    if isinstance(value, (regularizers.Regularizer, constraints.Constraint)):  # Keras' serialized form
        return {"class_name": type(value).__name__, "config": _jsonable(value.get_config(), where)}
    if callable(value):
        name = activations.serialize(value)
        if isinstance(name, str):
            return name
    raise TypeError(f"save: {where} has an argument {value!r} that cannot be written as JSON (use names such as "
                    "activation='relu' to save the architecture, or save_weights)")


def layer_config(layer: Layer) -> dict:
    from graphgrad.compat.keras.models import Model

    if isinstance(layer, Model):  # a model used as a layer
        return {"class_name": "__model__", "config": model_config(layer)}
    if not isinstance(layer, Layer):
        raise TypeError(f"save: {type(layer).__name__} is not a keras layer; save the weights instead")
    return {"class_name": type(layer).__name__, "config": _jsonable(layer.get_config(), layer.name)}


def model_config(model) -> dict:
    from graphgrad.compat.keras.models import Sequential

    if isinstance(model, Sequential):
        shape = model.input_shape_seen
        return {"class_name": "Sequential", "name": model.name,
                "input_shape": None if shape is None else list(shape[1:]),
                "input_dtype": None if model._symbolic is None else str(_input_of(model._symbolic).dtype),
                "layers": [layer_config(layer) for layer in model.layers]}
    if model.inputs is None:
        raise NotImplementedError(f"save: {type(model).__name__} is a subclassed model, whose architecture is Python "
                                  "code; save its weights (save_weights) and rebuild it in code")
    ids: dict = {}
    inputs = []
    for t in model.inputs:
        ids[id(t)] = len(ids)
        inputs.append({"id": ids[id(t)], "shape": list(t.shape[1:]), "dtype": str(t.dtype)})
    nodes = []
    for t in model._nodes:
        ids[id(t)] = len(ids)
        inbound = [ids[id(s)] for s in t.inbound] if isinstance(t.inbound, (list, tuple)) else ids[id(t.inbound)]
        nodes.append({"id": ids[id(t)], "layer": t.layer.name, "inbound": inbound, "index": t.index})
    return {"class_name": "Functional", "name": model.name, "inputs": inputs, "nodes": nodes,
            "layers": [layer_config(layer) for layer in model.layers],
            "outputs": [ids[id(t)] for t in model.outputs], "input_was_list": model._input_was_list,
            "output_was_list": model._output_was_list}


def _input_of(t: KerasTensor) -> KerasTensor:
    while t.layer is not None:
        t = t.inbound[0] if isinstance(t.inbound, (list, tuple)) else t.inbound
    return t


def _layer_from(config: dict, custom_objects: Optional[dict]) -> Layer:
    from graphgrad.compat.keras import layers

    name = config["class_name"]
    if name == "__model__":
        return model_from_config(config["config"], custom_objects)
    from graphgrad.compat.keras.utils import get_custom_objects

    cls = (custom_objects or {}).get(name) or get_custom_objects().get(name) or getattr(layers, name, None)
    if not (isinstance(cls, type) and issubclass(cls, Layer)):
        raise ValueError(f"load_model: unknown layer class {name!r}; pass custom_objects={{{name!r}: TheClass}}")
    return cls.from_config(config["config"])


def model_from_config(config: dict, custom_objects: Optional[dict] = None):
    from graphgrad.compat.keras.models import Model, Sequential

    if config["class_name"] == "Sequential":
        layers = [_layer_from(c, custom_objects) for c in config["layers"]]
        model = Sequential(name=config.get("name"))
        if config.get("input_shape") is not None:
            model.add(Input(shape=tuple(config["input_shape"]), dtype=config.get("input_dtype")))
        for layer in layers:
            model.add(layer)
        return model
    if config["class_name"] != "Functional":
        raise ValueError(f"load_model: unknown model class {config['class_name']!r}")
    layers = {}
    for c in config["layers"]:
        layer = _layer_from(c, custom_objects)
        layers[layer.name] = layer
    tensors: dict = {}
    inputs = []
    for spec in config["inputs"]:
        tensors[spec["id"]] = Input(shape=tuple(spec["shape"]), dtype=spec["dtype"])
        inputs.append(tensors[spec["id"]])
    for node in config["nodes"]:
        inbound = node["inbound"]
        args = [tensors[i] for i in inbound] if isinstance(inbound, list) else tensors[inbound]
        out = layers[node["layer"]](args)
        tensors[node["id"]] = out if node["index"] is None else out[node["index"]]
    outputs = [tensors[i] for i in config["outputs"]]
    return Model(inputs if config["input_was_list"] else inputs[0],
                 outputs if config["output_was_list"] else outputs[0], name=config.get("name"))


# ---- compile arguments -------------------------------------------------------------------------------------------------
def _compile_config(model) -> Optional[dict]:
    if model._keras_compile is None:
        return None
    optimizer, loss, metrics, loss_weights = model._keras_compile
    opt = getattr(model, "keras_optimizer", None) or optimizer
    if isinstance(opt, str):
        opt_config: Any = opt
    elif isinstance(opt, _optimizers.Optimizer):
        opt_config = {k: v for k, v in opt.get_config().items() if k != "clipnorm"}
    else:
        return None
    if _names_only(loss):
        loss_config: Any = loss
    elif isinstance(loss, _losses.Loss):
        loss_config = {"__loss__": type(loss).__name__, "config": {k: v for k, v in loss.get_config().items()}}
    else:
        return None
    if not _names_only(metrics) or not (loss_weights is None or isinstance(loss_weights, (list, dict, float, int))):
        return None
    return {"optimizer": opt_config, "loss": loss_config, "metrics": metrics, "loss_weights": loss_weights}


def _names_only(spec: Any) -> bool:
    """Whether ``spec`` is None, a name, or lists/dicts of those (JSON as it is)."""
    if spec is None or isinstance(spec, str):
        return True
    if isinstance(spec, (list, tuple)):
        return all(_names_only(s) for s in spec)
    if isinstance(spec, dict):
        return all(isinstance(k, str) and _names_only(v) for k, v in spec.items())
    return False


def _compile_from(config: dict) -> tuple:
    loss = config["loss"]
    if isinstance(loss, dict) and "__loss__" in loss:  # a keras.losses object (else a dict by output name)
        cls = getattr(_losses, loss["__loss__"])
        kwargs = dict(loss["config"])
        kwargs.pop("name", None)
        loss = cls(**kwargs)
    return _optimizers.get(config["optimizer"]), loss, config["metrics"], config.get("loss_weights")


# ---- whole models ---------------------------------------------------------------------------------------------------------
def save_model(model, path: str) -> None:
    path = str(path)
    if not path.endswith((".keras", ".h5", ".hdf5")):
        raise ValueError(f"save: the file name must end in .keras (Keras 3's format) or .h5 (Keras 2's), got "
                         f"{path!r}; for the weights alone use save_weights")
    # a .h5 name (Keras 2's scripts) gets the same archive: load_model reads it back; it is not HDF5
    if not model.built:
        raise ValueError(f"save: {model.name} is not built yet (call it on data or give keras.Input first)")
    config = model_config(model)
    meta = {"format": FORMAT, "keras_version": "3 (graphgrad.compat.keras)"}
    compile_config = _compile_config(model)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("metadata.json", json.dumps(meta))
        archive.writestr("config.json", json.dumps({"model": config, "compile": compile_config}, indent=1))
        archive.writestr("model.weights.npz", _weights_bytes(model))
    _atomic_write(path, buffer.getvalue())


def load_model(path: str, custom_objects: Optional[dict] = None, compile: bool = True):
    path = str(path)
    if not os.path.exists(path):
        raise FileNotFoundError(f"load_model: no file {path!r}")
    try:
        archive = zipfile.ZipFile(path)
    except zipfile.BadZipFile:
        raise ValueError(f"load_model: {path!r} is not a .keras archive (a zip file)") from None
    with archive:
        names = set(archive.namelist())
        if "config.json" not in names or "model.weights.npz" not in names:
            raise ValueError(f"load_model: {path!r} lacks config.json or model.weights.npz; was it written by "
                             "graphgrad.compat.keras's model.save? (real Keras' .keras files keep their weights in "
                             "HDF5, which this facade does not read)")
        config = json.loads(archive.read("config.json"))
        weights = archive.read("model.weights.npz")
    model = model_from_config(config["model"], custom_objects)
    if not model.built:
        raise ValueError(f"load_model: {path!r} holds a model that was never built")
    _load_weights_bytes(model, weights, f"load_model({path!r})")
    if compile and config.get("compile"):
        model.compile(*_compile_from(config["compile"]))
    return model


from graphgrad.compat.keras.utils import get_custom_objects, register_keras_serializable  # noqa: E402  (keras.saving's names)
