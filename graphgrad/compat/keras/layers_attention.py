"""Keras' attention and structural layers: ``MultiHeadAttention``, ``Attention``, ``TimeDistributed``,
``RepeatVector``, ``Dot``, and the convolutions ``DepthwiseConv2D``, ``SeparableConv2D`` (graphgrad's
grouped convolution) and ``Conv3D``; channels_last, each composed of graphgrad's modules and ops."""
from __future__ import annotations

import math
from typing import Any, Optional, Sequence, Union

import graphgrad as gg
from graphgrad import nn
from graphgrad.nn import functional as F

from graphgrad.compat.keras import activations
from graphgrad.compat.keras.engine import Layer, _is_symbolic, pop_weight_rules
from graphgrad.compat.keras.layers_core import _channels_last, _Conv, _initialize, _tuple

__all__ = ["MultiHeadAttention", "Attention", "TimeDistributed", "RepeatVector", "Dot", "DepthwiseConv2D",
           "SeparableConv2D", "Conv3D"]

_NEGATIVE = -1e9  # what a masked-out score becomes before the softmax (Keras' large negative number)


def _masked_softmax(scores, mask):
    """Softmax over the last axis; ``mask`` (broadcastable, true = attend) sends the rest to ~0."""
    if mask is not None:
        mask = mask if mask.dtype.kind == "b" else mask != 0
        scores = gg.where(mask, scores, gg.tensor(_NEGATIVE, dtype=scores.dtype))
    return gg.softmax(scores, axis=-1)


def _call_with_list(layer: Layer, inputs: list, training: Optional[bool]):
    """Run ``layer`` on a list of inputs (symbolic or concrete) through the base ``Layer.__call__``."""
    if training is None:
        return Layer.__call__(layer, inputs)
    return Layer.__call__(layer, inputs, training=training)


class MultiHeadAttention(Layer):
    """``MultiHeadAttention(num_heads, key_dim, value_dim=None, dropout=0.0, use_bias=True,
    output_shape=None)`` called as ``mha(query, value, key=None, attention_mask=None,
    return_attention_scores=False, use_causal_mask=False)``: query ``(B, T, dq)``, value ``(B, S, dv)``, key (default: value)
    ``(B, S, dk)``; returns ``(B, T, output_shape or dq)`` (and the scores ``(B, heads, T, S)``). The
    mask ``(B, T, S)`` is true where a query position may attend. Weights in Keras' order and shapes:
    query/key/value kernels ``(d, heads, key_dim)`` with biases ``(heads, key_dim)``, then the output
    kernel ``(heads, value_dim, out)`` and bias ``(out,)``."""

    def __init__(self, num_heads: int, key_dim: int, value_dim: Optional[int] = None, dropout: float = 0.0,
                 use_bias: bool = True, output_shape: Any = None, attention_axes: Any = None,
                 kernel_initializer: Any = "glorot_uniform", bias_initializer: Any = "zeros", **kwargs) -> None:
        options = tuple(kwargs.pop("call_options", (False, False, False, False)))  # from a saved config
        super().__init__(**kwargs)
        if attention_axes is not None:
            raise NotImplementedError("MultiHeadAttention: attention_axes is not supported by graphgrad.compat.keras "
                                      "(attention runs over axis 1 of (batch, time, features) inputs)")
        self.num_heads, self.key_dim = int(num_heads), int(key_dim)
        self.value_dim = int(value_dim) if value_dim is not None else self.key_dim
        self.dropout_rate, self.use_bias = float(dropout), bool(use_bias)
        if isinstance(output_shape, (tuple, list)):
            if len(output_shape) != 1:
                raise NotImplementedError("MultiHeadAttention: output_shape must be one size")
            output_shape = output_shape[0]
        self.output_dim = None if output_shape is None else int(output_shape)
        self.dropout = nn.Dropout(self.dropout_rate)
        self._inits = (kernel_initializer, bias_initializer)
        object.__setattr__(self, "_options", options)  # (has key, has mask, return scores, causal)

    def __call__(self, query, value=None, key=None, attention_mask=None, return_attention_scores: bool = False,
                 training: Optional[bool] = None, use_causal_mask: bool = False, **kwargs):
        if value is None and isinstance(query, (list, tuple)):  # a functional model replaying the call
            return _call_with_list(self, list(query), training)
        inputs = [query, value] + ([key] if key is not None else []) + (
            [attention_mask] if attention_mask is not None else [])
        object.__setattr__(self, "_options", (key is not None, attention_mask is not None,
                                              bool(return_attention_scores), bool(use_causal_mask)))
        if not _is_symbolic(inputs) and any(_is_symbolic(t) for t in inputs):
            raise TypeError("MultiHeadAttention: mix of symbolic (keras.Input) and concrete inputs")
        return _call_with_list(self, inputs, training)

    def get_config(self) -> dict:
        config = super().get_config()
        config["kwargs"]["call_options"] = list(self._options)  # how the layer was called, for load_model
        return config

    def build(self, input_shape) -> None:
        has_key = self._options[0]
        dq, dv = int(input_shape[0][-1]), int(input_shape[1][-1])
        dk = int(input_shape[2][-1]) if has_key else dv
        h, kd, vd = self.num_heads, self.key_dim, self.value_dim
        self.query_dense = nn.Linear(dq, h * kd, bias=self.use_bias)
        self.key_dense = nn.Linear(dk, h * kd, bias=self.use_bias)
        self.value_dense = nn.Linear(dv, h * vd, bias=self.use_bias)
        self.output_dense = nn.Linear(h * vd, self.output_dim or dq, bias=self.use_bias)
        for linear, fan in ((self.query_dense, (dq, h * kd)), (self.key_dense, (dk, h * kd)),
                            (self.value_dense, (dv, h * vd)), (self.output_dense, (h * vd, self.output_dim or dq))):
            _initialize(linear.weight, self._inits[0])
            if self.use_bias:
                _initialize(linear.bias, self._inits[1])

    def _heads(self, x, size: int):
        b, t = int(x.shape[0]), int(x.shape[1])
        return gg.permute(x.reshape(b, t, self.num_heads, size), (0, 2, 1, 3))  # (B, H, T, size)

    def forward(self, inputs):
        has_key, has_mask, return_scores, causal = (tuple(self._options) + (False,))[:4]
        query, value = inputs[0], inputs[1]
        key = inputs[2] if has_key else value
        mask = inputs[-1] if has_mask else None
        q = self._heads(self.query_dense(query), self.key_dim) * (1.0 / math.sqrt(self.key_dim))
        k = self._heads(self.key_dense(key), self.key_dim)
        v = self._heads(self.value_dense(value), self.value_dim)
        scores = gg.matmul(q, gg.permute(k, (0, 1, 3, 2)))  # (B, H, T, S)
        if mask is not None:
            mask = mask if mask.dtype.kind == "b" else mask != 0
        if causal:  # query position i sees key positions <= i
            t, s = int(scores.shape[2]), int(scores.shape[3])
            lower = gg.tensor([[j <= i for j in range(s)] for i in range(t)])
            mask = lower if mask is None else gg.logical_and(mask, lower)
        if mask is not None and mask.ndim == 3:
            mask = gg.expand_dims(mask, 1)
        scores = _masked_softmax(scores, mask)
        out = gg.matmul(self.dropout(scores), v)  # (B, H, T, vd)
        b, t = int(out.shape[0]), int(out.shape[2])
        out = self.output_dense(gg.permute(out, (0, 2, 1, 3)).reshape(b, t, self.num_heads * self.value_dim))
        return [out, scores] if return_scores else out

    def keras_weights(self) -> list:
        h = self.num_heads
        out = []
        for linear, size in ((self.query_dense, self.key_dim), (self.key_dense, self.key_dim),
                             (self.value_dense, self.value_dim)):
            d = int(linear.weight.shape[1])
            out.append((linear.weight, lambda w, d=d, s=size: w.T.reshape(d, h, s).copy(),
                        lambda w, d=d, s=size: w.reshape(d, h * s).T.copy()))
            if self.use_bias:
                out.append((linear.bias, lambda b, s=size: b.reshape(h, s).copy(), lambda b, s=size: b.reshape(-1).copy()))
        o = int(self.output_dense.weight.shape[0])
        vd = self.value_dim
        out.append((self.output_dense.weight, lambda w: w.T.reshape(h, vd, o).copy(),
                    lambda w: w.reshape(h * vd, o).T.copy()))
        if self.use_bias:
            out.append((self.output_dense.bias, None, None))
        return out


class Attention(Layer):
    """``Attention(use_scale=False, score_mode="dot", dropout=0.0)``: dot-product attention called on
    ``[query, value]`` or ``[query, value, key]`` (key defaults to value): ``softmax(q @ k^T * scale) @ v``,
    with ``scale`` a trained scalar when ``use_scale``. ``return_attention_scores=True`` also returns the
    attention weights; ``use_causal_mask=True`` lets position ``i`` see positions ``<= i`` only. A call that
    passes neither of these two keeps those of the previous call (a functional model replays its calls so)."""

    def __init__(self, use_scale: bool = False, score_mode: str = "dot", dropout: float = 0.0, **kwargs) -> None:
        if score_mode != "dot":
            raise NotImplementedError("Attention: only score_mode='dot' is supported (AdditiveAttention is not)")
        options = tuple(kwargs.pop("call_options", (False, False)))  # from a saved config
        super().__init__(**kwargs)
        self.use_scale = bool(use_scale)
        self.dropout = nn.Dropout(float(dropout))
        object.__setattr__(self, "_options", options)  # (return scores, causal)

    def __call__(self, inputs, mask: Any = None, return_attention_scores: Optional[bool] = None,
                 training: Optional[bool] = None, use_causal_mask: Optional[bool] = None, **kwargs):
        if mask is not None:
            raise NotImplementedError("Attention: mask= is not supported by graphgrad.compat.keras")
        if return_attention_scores is not None or use_causal_mask is not None:  # else as called before (a model's replay)
            object.__setattr__(self, "_options", (bool(return_attention_scores), bool(use_causal_mask)))
        return _call_with_list(self, list(inputs), training)

    def get_config(self) -> dict:
        config = super().get_config()
        config["kwargs"]["call_options"] = list(self._options)  # how the layer was called, for load_model
        return config

    def build(self, input_shape) -> None:
        if self.use_scale:
            self.scale = nn.Parameter(gg.ones(()))

    def forward(self, inputs):
        return_scores, causal = self._options
        query, value = inputs[0], inputs[1]
        key = inputs[2] if len(inputs) > 2 else value
        scores = gg.matmul(query, gg.permute(key, (0, 2, 1)))
        if self.use_scale:
            scores = scores * self.scale
        mask = None
        if causal:
            t, s = int(scores.shape[1]), int(scores.shape[2])
            mask = gg.tensor([[j <= i for j in range(s)] for i in range(t)])
        weights = _masked_softmax(scores, mask)
        out = gg.matmul(self.dropout(weights), value)
        return [out, weights] if return_scores else out

    def keras_weights(self) -> list:
        return [(self.scale, None, None)] if self.use_scale else []


class TimeDistributed(Layer):
    """``TimeDistributed(layer)``: ``layer`` applied to every step of axis 1 (the batch and time axes
    folded into one); its weights are the inner layer's."""

    def __init__(self, layer: Layer, **kwargs) -> None:
        if isinstance(layer, dict):  # from a saved config
            from graphgrad.compat.keras import layers as _layers

            layer = getattr(_layers, layer["class_name"]).from_config(layer["config"])
        super().__init__(**kwargs)
        saved = {"layer": {"class_name": type(layer).__name__, "config": layer.get_config()}}
        object.__setattr__(self, "_init_args", ([], dict(kwargs, **saved)))
        self.layer = layer

    def forward(self, x):
        b, t = int(x.shape[0]), int(x.shape[1])
        y = self.layer(x.reshape((b * t,) + tuple(x.shape[2:])))
        return y.reshape((b, t) + tuple(y.shape[1:]))

    def keras_weights(self) -> list:
        return self.layer.keras_weights()


class RepeatVector(Layer):
    """``RepeatVector(n)``: ``(B, F)`` -> ``(B, n, F)``."""

    def __init__(self, n: int, **kwargs) -> None:
        super().__init__(**kwargs)
        self.n = int(n)

    def forward(self, x):
        return gg.broadcast_to(gg.expand_dims(x, 1), (int(x.shape[0]), self.n) + tuple(x.shape[1:]))


class Dot(Layer):
    """``Dot(axes, normalize=False)`` of two inputs: the sum of products over ``axes`` (one int for
    both, or a pair), per sample; ``normalize=True`` l2-normalizes along those axes first (cosine
    proximity). ``(B, F), (B, F)`` -> ``(B, 1)``; ``(B, T, F), (B, S, F)`` with ``axes=2`` -> ``(B, T, S)``."""

    def __init__(self, axes: Union[int, Sequence[int]], normalize: bool = False, **kwargs) -> None:
        super().__init__(**kwargs)
        self.axes = (int(axes), int(axes)) if isinstance(axes, int) else tuple(int(a) for a in axes)
        self.normalize = bool(normalize)

    def forward(self, inputs):
        x, y = inputs
        ax, ay = self.axes[0] % x.ndim, self.axes[1] % y.ndim
        if self.normalize:
            x, y = F.normalize(x, dim=ax), F.normalize(y, dim=ay)
        if x.ndim == 2 and y.ndim == 2:
            return gg.sum(x * y, axis=1, keepdims=True)
        if x.ndim != 3 or y.ndim != 3:
            raise NotImplementedError("Dot: inputs of 2 or 3 dimensions only (batch included)")
        if ax == 1:
            x = gg.permute(x, (0, 2, 1))  # contraction axis last
        if ay == 2:
            y = gg.permute(y, (0, 2, 1))  # contraction axis in the middle
        return gg.matmul(x, y)


# ---- convolutions ------------------------------------------------------------------------------------------------
def _tf_same_widths(x, kernel: tuple, strides: tuple, dilation: tuple) -> list:
    """TensorFlow's 'same' padding of a channels_first input (the odd pixel at the end)."""
    widths = [(0, 0), (0, 0)]
    for i, (k, s, d) in enumerate(zip(kernel, strides, dilation)):
        size = int(x.shape[2 + i])
        total = max((math.ceil(size / s) - 1) * s + (k - 1) * d + 1 - size, 0)
        widths.append((total // 2, total - total // 2))
    return widths


class DepthwiseConv2D(Layer):
    """``DepthwiseConv2D(kernel_size, strides=1, padding="valid", depth_multiplier=1, activation=None,
    use_bias=True)``: one filter per input channel (graphgrad's grouped ``Conv2d``, groups = channels).
    Kernel in Keras' layout ``(kh, kw, in, depth_multiplier)``."""

    pointwise = False

    def __init__(self, kernel_size: Union[int, Sequence[int]] = 3, strides: Union[int, Sequence[int]] = 1,
                 padding: str = "valid", depth_multiplier: int = 1, data_format: Optional[str] = None,
                 dilation_rate: Union[int, Sequence[int]] = 1, activation: Any = None, use_bias: bool = True,
                 depthwise_initializer: Any = "glorot_uniform", bias_initializer: Any = "zeros", **kwargs) -> None:
        names = ("depthwise", "pointwise", "bias") if self.pointwise else ("depthwise", "bias")
        rules = pop_weight_rules(kwargs, names)
        super().__init__(**kwargs)
        self.set_weight_rules(rules, names)
        self.padding = str(padding).lower()
        if self.padding not in ("valid", "same"):
            raise ValueError(f"{type(self).__name__}: padding must be 'valid' or 'same', got {padding!r}")
        self.kernel_size, self.strides = _tuple(kernel_size, 2), _tuple(strides, 2)
        self.dilation_rate, self.depth_multiplier = _tuple(dilation_rate, 2), int(depth_multiplier)
        self.channels_last = _channels_last(data_format, type(self).__name__)
        self.activation, self.use_bias = activations.get(activation), bool(use_bias)
        self._inits = (depthwise_initializer, bias_initializer)

    def build(self, input_shape) -> None:
        c = int(input_shape[-1] if self.channels_last else input_shape[1])
        self.depthwise = nn.Conv2d(c, c * self.depth_multiplier, self.kernel_size, stride=self.strides,
                                   dilation=self.dilation_rate, groups=c, bias=self.use_bias and not self.pointwise)
        _initialize(self.depthwise.weight, self._inits[0])
        if self.use_bias and not self.pointwise:
            _initialize(self.depthwise.bias, self._inits[1])

    def _convolve(self, x):
        return self.depthwise(x)

    def forward(self, x):
        if self.channels_last:
            x = gg.permute(x, (0, 3, 1, 2))
        if self.padding == "same":
            x = gg.pad(x, _tf_same_widths(x, self.kernel_size, self.strides, self.dilation_rate))
        y = self._convolve(x)
        if self.channels_last:
            y = gg.permute(y, (0, 2, 3, 1))
        return self.activation(y)

    def _depthwise_weight(self) -> tuple:
        # graphgrad (in * m, 1, kh, kw) <-> Keras (kh, kw, in, m)
        m = self.depth_multiplier
        w = self.depthwise.weight
        c, kh, kw = int(w.shape[0]) // m, int(w.shape[2]), int(w.shape[3])
        return (w, lambda a: a.reshape(c, m, kh, kw).transpose(2, 3, 0, 1).copy(),
                lambda a: a.transpose(2, 3, 0, 1).reshape(c * m, 1, kh, kw).copy())

    def keras_weights(self) -> list:
        out = [self._depthwise_weight()]
        return out + ([(self.depthwise.bias, None, None)] if self.use_bias else [])


class SeparableConv2D(DepthwiseConv2D):
    """``SeparableConv2D(filters, kernel_size, strides=1, padding="valid", depth_multiplier=1,
    activation=None, use_bias=True)``: a depthwise convolution then a 1x1 pointwise one. Weights:
    depthwise kernel ``(kh, kw, in, m)``, pointwise kernel ``(1, 1, in * m, filters)``, bias ``(filters,)``."""

    pointwise = True

    def __init__(self, filters: int, kernel_size: Union[int, Sequence[int]] = 3,
                 strides: Union[int, Sequence[int]] = 1, padding: str = "valid", data_format: Optional[str] = None,
                 dilation_rate: Union[int, Sequence[int]] = 1, depth_multiplier: int = 1, activation: Any = None,
                 use_bias: bool = True, depthwise_initializer: Any = "glorot_uniform",
                 pointwise_initializer: Any = "glorot_uniform", bias_initializer: Any = "zeros", **kwargs) -> None:
        super().__init__(kernel_size, strides, padding, depth_multiplier, data_format, dilation_rate, activation,
                         use_bias, depthwise_initializer, bias_initializer, **kwargs)
        self.filters = int(filters)
        self._pointwise_init = pointwise_initializer

    def build(self, input_shape) -> None:
        super().build(input_shape)
        c = int(input_shape[-1] if self.channels_last else input_shape[1])
        self.pointwise_conv = nn.Conv2d(c * self.depth_multiplier, self.filters, 1, bias=self.use_bias)
        _initialize(self.pointwise_conv.weight, self._pointwise_init)
        if self.use_bias:
            _initialize(self.pointwise_conv.bias, self._inits[1])

    def _convolve(self, x):
        return self.pointwise_conv(self.depthwise(x))

    def keras_weights(self) -> list:
        pointwise = (self.pointwise_conv.weight, lambda w: w.transpose(2, 3, 1, 0).copy(),
                     lambda w: w.transpose(3, 2, 0, 1).copy())
        out = [self._depthwise_weight(), pointwise]
        return out + ([(self.pointwise_conv.bias, None, None)] if self.use_bias else [])


class Conv3D(_Conv):
    """``Conv3D(filters, kernel_size, strides=1, padding="valid", activation=None)`` on ``(N, D, H, W, C)``;
    kernel ``(kd, kh, kw, in, filters)``."""

    nd = 3
