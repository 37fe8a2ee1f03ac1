"""``tf.contrib``: the few names TF1 programs still use from it: ``contrib.layers`` (``xavier_initializer``,
``fully_connected``, ``flatten``, ``l2_regularizer``, ``l1_regularizer``) and ``contrib.rnn`` (the cells of ``tf.nn.rnn_cell``)."""
from __future__ import annotations

import builtins
import types
from typing import Any

import graphgrad as _gg
from graphgrad.compat.tf import (Tensor, float32, glorot_normal_initializer, glorot_uniform_initializer, layers, nn,
                                 variance_scaling_initializer, zeros_initializer)
from graphgrad.compat.tf import rnn as _rnn


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


def _fully_connected(inputs: Any, num_outputs: int, activation_fn: Any = nn.relu, normalizer_fn: Any = None,
                     normalizer_params: Any = None, weights_initializer: Any = None, weights_regularizer: Any = None,
                     biases_initializer: Any = "zeros", biases_regularizer: Any = None, reuse: Any = None,
                     variables_collections: Any = None, outputs_collections: Any = None, trainable: bool = True,
                     scope: Any = None) -> Tensor:
    """``tf.contrib.layers.fully_connected``: ``activation_fn(inputs @ weights + biases)`` (relu by
    default; ``biases_initializer=None`` for no biases)."""
    if normalizer_fn is not None:
        raise NotImplementedError("fully_connected: normalizer_fn is not supported")
    init = (weights_initializer or glorot_uniform_initializer(),
            zeros_initializer() if biases_initializer == "zeros" else biases_initializer)
    layer = _FullyConnected(num_outputs, activation_fn, init[1] is not None, init[0], init[1], weights_regularizer,
                            biases_regularizer, trainable=trainable, name=scope, _reuse=reuse)
    return layer(inputs)


def _contrib_flatten(inputs: Any, outputs_collections: Any = None, scope: Any = None) -> Tensor:
    return layers.flatten(inputs)


contrib = types.SimpleNamespace(
    layers=types.SimpleNamespace(xavier_initializer=_xavier_initializer, xavier_initializer_conv2d=_xavier_initializer,
                                 flatten=_contrib_flatten, l2_regularizer=_l2_regularizer,
                                 fully_connected=_fully_connected,
                                 l1_regularizer=_l1_regularizer,
                                 variance_scaling_initializer=variance_scaling_initializer),
    rnn=types.SimpleNamespace(**vars(nn.rnn_cell), static_rnn=_rnn.static_rnn,
                              static_bidirectional_rnn=_rnn.static_bidirectional_rnn))
