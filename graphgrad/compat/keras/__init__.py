"""Keras' API on graphgrad: ``from graphgrad.compat import keras``.

``keras.Sequential``, the functional ``keras.Model(inputs, outputs)`` and ``keras.Input``;
``keras.layers`` (channels_last, built from their first input); ``compile`` / ``fit`` / ``evaluate``
/ ``predict`` with Keras' conventions (crossentropies take probabilities unless
``from_logits=True``; ``evaluate`` returns the loss or ``[loss, *metrics]``); ``keras.losses``,
``keras.metrics``, ``keras.optimizers`` (Keras' defaults), ``keras.callbacks``, ``keras.utils``,
``keras.datasets`` (local files), ``model.save("m.keras")`` and ``keras.models.load_model``.

It maps names and argument conventions onto graphgrad's public API (``gg.Model`` trains, ``gg.nn``
computes); nothing is implemented a second time. :func:`install` makes ``import keras`` resolve to
this package, so a script written for Keras runs unchanged. See docs/keras.md.
"""
from __future__ import annotations

import sys
import types

from graphgrad.compat.keras import (activations, backend, callbacks, config, constraints, datasets, engine, initializers,
                                    layers, losses, metrics, models, ops, optimizers, preprocessing, random,
                                    regularizers, saving, utils, wrappers)
from graphgrad.compat.keras.engine import Input, KerasTensor
from graphgrad.compat.keras.models import Model, Sequential

__version__ = "3.0.0 (graphgrad.compat.keras)"

__all__ = ["Input", "KerasTensor", "Model", "Sequential", "activations", "backend", "initializers", "ops", "callbacks", "datasets", "layers", "losses",
           "metrics", "models", "optimizers", "saving", "utils", "regularizers", "constraints", "config", "random",
           "preprocessing", "install"]

#: Keras 2's module paths (``from keras.layers.convolutional import Conv2D``, ``from keras.utils.np_utils
#: import to_categorical``...) and where they live here
_KERAS2_PATHS = {
    **{".layers." + m: layers for m in ("core", "convolutional", "recurrent", "embeddings", "normalization",
                                        "pooling", "merge", "wrappers", "advanced_activations", "noise", "local",
                                        "convolutional_recurrent", "attention", "dense_attention",
                                        "preprocessing")},
    **{".utils." + m: utils for m in ("np_utils", "data_utils", "vis_utils", "generic_utils", "layer_utils")},
    ".engine": engine, ".engine.topology": engine, ".engine.base_layer": engine, ".engine.input_layer": engine,
    ".engine.training": models, ".engine.sequential": models, ".engine.functional": models,
}


def install() -> None:
    """Make ``import keras`` (and ``keras.layers``, ``keras.models``...) resolve to this package in
    this process; ``tensorflow.keras`` too, and ``from tensorflow import keras`` when a ``tensorflow``
    module (e.g. graphgrad's TF facade, installed first) is loaded."""
    me = sys.modules[__name__]
    names = {"": me, ".layers": layers, ".models": models, ".losses": losses, ".metrics": metrics,
             ".optimizers": optimizers, ".callbacks": callbacks, ".utils": utils, ".datasets": datasets,
             ".datasets.mnist": datasets.mnist, ".datasets.fashion_mnist": datasets.fashion_mnist,
             ".activations": activations, ".saving": models, ".backend": backend, ".initializers": initializers,
             ".ops": ops, ".regularizers": regularizers, ".constraints": constraints,
             ".optimizers.schedules": optimizers.schedules, ".config": config, ".random": random,
             ".preprocessing": preprocessing, ".preprocessing.sequence": preprocessing.sequence,
             ".preprocessing.text": preprocessing.text, ".preprocessing.image": preprocessing.image,
             ".datasets.imdb": datasets.imdb, ".datasets.reuters": datasets.reuters,
             ".datasets.cifar10": datasets.cifar10, ".datasets.cifar100": datasets.cifar100,
             ".datasets.boston_housing": datasets.boston_housing, ".wrappers": wrappers,
             ".wrappers.scikit_learn": wrappers.scikit_learn, **_KERAS2_PATHS}
    for suffix, module in names.items():
        sys.modules["keras" + suffix] = module
        sys.modules["tensorflow.keras" + suffix] = module
    for suffix, module in _KERAS2_PATHS.items():  # from keras.layers import recurrent; recurrent.LSTM
        parent, _, leaf = suffix.rpartition(".")
        holder = sys.modules.get("keras" + parent)
        if holder is not None and not hasattr(holder, leaf):
            setattr(holder, leaf, module)
    if "tensorflow" in sys.modules:
        setattr(sys.modules["tensorflow"], "keras", me)
        _add_tape(sys.modules["tensorflow"])
    elif not any(isinstance(f, _TensorflowFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, _TensorflowFinder())
    # TensorBoard's writer (the TensorBoard callback) uses TensorFlow when `import tensorflow` works; from
    # now on that gives graphgrad's facade, so tell TensorBoard (its documented switch) to use its stand-in
    sys.modules.setdefault("tensorboard.compat.notf", types.ModuleType("tensorboard.compat.notf"))


def _add_tape(tensorflow: types.ModuleType) -> None:
    """``tf.GradientTape`` for Keras 3 programs' custom ``train_step``\ s (keras-io's GANs and VAEs) when the
    ``tensorflow`` module has none: the tape of :mod:`graphgrad.compat.keras.trainer`, over graphgrad's eager
    autodiff."""
    if not hasattr(tensorflow, "GradientTape"):
        from graphgrad.compat.keras.trainer import GradientTape

        setattr(tensorflow, "GradientTape", GradientTape)


class _TensorflowFinder:
    """``import tensorflow`` after :func:`install` (``from tensorflow import keras``, ``tf.keras``): graphgrad's
    TensorFlow facade, installed then, with ``keras`` this package (a real TensorFlow would load its own
    Keras, which cannot run alongside this one)."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname != "tensorflow" or "tensorflow" in sys.modules:
            return None
        import importlib.util

        return importlib.util.spec_from_loader(fullname, self)

    def create_module(self, spec):
        from graphgrad.compat import tf

        tf.install()
        module = sys.modules["tensorflow"]
        setattr(module, "keras", sys.modules[__name__])
        _add_tape(module)
        return module

    def exec_module(self, module) -> None:
        sys.modules["tensorflow"] = module
