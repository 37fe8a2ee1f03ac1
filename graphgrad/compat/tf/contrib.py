"""``tf.contrib``: the few names TF1 programs still use from it: ``contrib.layers`` (``xavier_initializer``,
``flatten``, ``l2_regularizer``, ``l1_regularizer``) and ``contrib.rnn`` (the cells of ``tf.nn.rnn_cell``)."""
from __future__ import annotations

import builtins
import types
from typing import Any

import graphgrad as _gg
from graphgrad.compat.tf import (Tensor, float32, glorot_normal_initializer, glorot_uniform_initializer, layers, nn,
                                 variance_scaling_initializer)
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


def _contrib_flatten(inputs: Any, outputs_collections: Any = None, scope: Any = None) -> Tensor:
    return layers.flatten(inputs)


contrib = types.SimpleNamespace(
    layers=types.SimpleNamespace(xavier_initializer=_xavier_initializer, xavier_initializer_conv2d=_xavier_initializer,
                                 flatten=_contrib_flatten, l2_regularizer=_l2_regularizer,
                                 l1_regularizer=_l1_regularizer,
                                 variance_scaling_initializer=variance_scaling_initializer),
    rnn=types.SimpleNamespace(**vars(nn.rnn_cell), static_rnn=_rnn.static_rnn))
