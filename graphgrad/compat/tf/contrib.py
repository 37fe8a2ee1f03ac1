"""``tf.contrib``: the few names TF1 programs still use from it: ``contrib.layers`` (``xavier_initializer``,
``fully_connected``, ``flatten``, ``l2_regularizer``, ``l1_regularizer``) and ``contrib.rnn`` (the cells of ``tf.nn.rnn_cell``)."""
from __future__ import annotations

import builtins
import contextlib
import functools
import types
from typing import Any

import graphgrad as _gg
from graphgrad.compat.tf import (Tensor, float32, glorot_normal_initializer, glorot_uniform_initializer, layers, nn,
                                 variance_scaling_initializer, zeros_initializer)
from graphgrad.compat.tf import rnn as _rnn
from graphgrad.compat.tf._common import graph_state


def _l2_regularizer(scale: float, scope: Any = None):
    """``tf.contrib.layers.l2_regularizer(scale)``: ``w -> scale * sum(w ** 2) / 2``."""
    if not scale:
        return lambda weights: None
    return lambda weights: _gg.multiply(nn.l2_loss(weights), float(scale))


def _l1_regularizer(scale: float, scope: Any = None):
    if not scale:
        return lambda weights: None
    return lambda weights: _gg.multiply(_gg.sum(_gg.abs(weights)), float(scale))


def _xavier_initializer(uniform: builtins.bool = True, seed: Any = None, dtype: Any = float32):
    """Glorot's initializer: uniform (default) or a truncated normal."""
    return glorot_uniform_initializer(seed, dtype) if uniform else glorot_normal_initializer(seed, dtype)


class _FullyConnected(layers.Dense):
    """``contrib.layers.fully_connected``'s layer: ``weights`` and ``biases`` under ``fully_connected``."""

    _default_name = "fully_connected"

    def build(self, inputs: Any) -> None:
        depth = inputs.shape[-1]
        if depth is None:
            raise _gg.ShapeError("tf.contrib.layers.fully_connected: the last dimension of the inputs must be known")
        self.kernel = self.add_variable("weights", [depth, self.units], self.kernel_initializer,
                                        self.kernel_regularizer)
        self.bias = self.add_variable("biases", [self.units], self.bias_initializer, self.bias_regularizer) \
            if self.bias_initializer is not None else None


# ---- arg_scope: default arguments for the contrib layer functions ------------------------------------------------
_ARG_SCOPES: list = []


def _add_arg_scope(fn):
    """``fn`` taking, for the arguments not given, those set by the enclosing ``arg_scope`` blocks."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        for entry in _ARG_SCOPES:
            for key, value in entry.get(wrapper, {}).items():
                kwargs.setdefault(key, value)
        return fn(*args, **kwargs)

    return wrapper


@contextlib.contextmanager
def _arg_scope(list_ops_or_scope: Any, **kwargs):
    """``with arg_scope([fully_connected, conv2d], activation_fn=tf.nn.relu):`` sets those functions'
    default arguments inside the block (a dict from an ``arg_scope`` may be given instead)."""
    if isinstance(list_ops_or_scope, dict):
        entry = list_ops_or_scope
    else:
        entry = {}
        for op in list_ops_or_scope:
            merged = {}
            for outer in _ARG_SCOPES:
                merged.update(outer.get(op, {}))
            merged.update(kwargs)
            entry[op] = merged
    _ARG_SCOPES.append(entry)
    try:
        yield entry
    finally:
        _ARG_SCOPES.pop()


def _normalize(y: Any, normalizer_fn: Any, normalizer_params: Any, activation_fn: Any, layer: Any) -> Any:
    """``activation_fn(normalizer_fn(y))`` with the normalizer's variables in the layer's scope."""
    if normalizer_fn is not None:
        tf = _tf()
        with tf.variable_scope(layer.name, reuse=tf.AUTO_REUSE):
            y = normalizer_fn(y, **(normalizer_params or {}))
    return y if activation_fn is None else activation_fn(y)


@_add_arg_scope
def _fully_connected(inputs: Any, num_outputs: int, activation_fn: Any = nn.relu, normalizer_fn: Any = None,
                     normalizer_params: Any = None, weights_initializer: Any = None, weights_regularizer: Any = None,
                     biases_initializer: Any = "zeros", biases_regularizer: Any = None, reuse: Any = None,
                     variables_collections: Any = None, outputs_collections: Any = None, trainable: bool = True,
                     scope: Any = None) -> Tensor:
    """``tf.contrib.layers.fully_connected``: ``activation_fn(inputs @ weights + biases)`` (relu by
    default; ``biases_initializer=None`` for no biases); with ``normalizer_fn`` (e.g. ``batch_norm``) the
    biases are left out and ``activation_fn(normalizer_fn(inputs @ weights, **normalizer_params))``."""
    biases = None if normalizer_fn is not None else biases_initializer
    init = (weights_initializer or glorot_uniform_initializer(),
            zeros_initializer() if biases == "zeros" else biases)
    layer = _FullyConnected(num_outputs, None, init[1] is not None, init[0], init[1], weights_regularizer,
                            biases_regularizer, trainable=trainable, name=scope, _reuse=reuse)
    return _normalize(layer(inputs), normalizer_fn, normalizer_params, activation_fn, layer)


@_add_arg_scope
def _batch_norm(inputs: Any, decay: float = 0.999, center: bool = True, scale: bool = False, epsilon: float = 0.001,
                activation_fn: Any = None, param_initializers: Any = None, param_regularizers: Any = None,
                updates_collections: Any = "update_ops", is_training: Any = True, reuse: Any = None,
                variables_collections: Any = None, outputs_collections: Any = None, trainable: bool = True,
                batch_weights: Any = None, fused: Any = None, data_format: str = "NHWC",
                zero_debias_moving_mean: bool = False, scope: Any = None, **kwargs) -> Tensor:
    """``tf.contrib.layers.batch_norm`` (``BatchNorm/beta``, ``moving_mean``, ``moving_variance``; ``gamma``
    only with ``scale=True``). ``updates_collections=None`` updates the moving averages with every
    training run of the output, as TensorFlow does; otherwise the updates go to that collection."""
    tf = _tf()
    state = tf.get_collection(tf.GraphKeys.UPDATE_OPS)
    layer = layers.BatchNormalization(axis=1 if data_format.startswith("NC") else -1, momentum=decay,
                                      epsilon=epsilon, center=center, scale=scale, trainable=trainable,
                                      name=scope or "BatchNorm", _reuse=reuse)
    out = layer(inputs, training=is_training)
    collection = graph_state()["collections"].setdefault(tf.GraphKeys.UPDATE_OPS, [])
    added = [op for op in collection if not any(op is old for old in state)]
    if updates_collections != tf.GraphKeys.UPDATE_OPS:
        collection[:] = [op for op in collection if not any(op is new for new in added)]
        if updates_collections is None and added:
            with _gg.get_default_graph().as_default(), _gg.control_dependencies(added):
                out = _gg.identity(out)
        elif updates_collections is not None:
            for op in added:
                tf.add_to_collection(updates_collections, op)
    return out if activation_fn is None else activation_fn(out)


@_add_arg_scope
def _dropout(inputs: Any, keep_prob: Any = 0.5, noise_shape: Any = None, is_training: Any = True,
             outputs_collections: Any = None, scope: Any = None, seed: Any = None) -> Tensor:
    """``tf.contrib.layers.dropout``: drop with probability ``1 - keep_prob`` when ``is_training``."""
    with _gg.get_default_graph().as_default():
        rate = 1.0 - keep_prob
    return layers.dropout(inputs, rate=rate, noise_shape=noise_shape, seed=seed, training=is_training)


def _tf():
    import graphgrad.compat.tf as tf

    return tf


def _contrib_flatten(inputs: Any, outputs_collections: Any = None, scope: Any = None) -> Tensor:
    return layers.flatten(inputs)


contrib = types.SimpleNamespace(
    framework=types.SimpleNamespace(arg_scope=_arg_scope, add_arg_scope=_add_arg_scope),
    layers=types.SimpleNamespace(xavier_initializer=_xavier_initializer, xavier_initializer_conv2d=_xavier_initializer,
                                 flatten=_contrib_flatten, l2_regularizer=_l2_regularizer,
                                 fully_connected=_fully_connected, batch_norm=_batch_norm, dropout=_dropout,
                                 l1_regularizer=_l1_regularizer, arg_scope=_arg_scope,
                                 variance_scaling_initializer=variance_scaling_initializer),
    rnn=types.SimpleNamespace(**vars(nn.rnn_cell), static_rnn=_rnn.static_rnn,
                              static_bidirectional_rnn=_rnn.static_bidirectional_rnn))
