"""``keras.layers.ConvLSTM2D``: an LSTM whose input and recurrent transformations are 2-D convolutions,
composed of graphgrad's ``conv2d`` and elementwise ops, one step per timestep, as Keras computes it."""
from __future__ import annotations

import math
from typing import Any, Optional, Sequence, Union

import graphgrad as gg
from graphgrad import nn

from graphgrad.compat.keras.engine import Layer
from graphgrad.compat.keras.layers_core import _initialize

__all__ = ["ConvLSTM2D"]


def _pair(value: Union[int, Sequence[int]]) -> tuple:
    return (int(value), int(value)) if isinstance(value, int) else tuple(int(v) for v in value)


class ConvLSTM2D(Layer):
    """``ConvLSTM2D(filters, kernel_size, strides=1, padding="valid", dilation_rate=1, activation="tanh",
    recurrent_activation="sigmoid", use_bias=True, unit_forget_bias=True, return_sequences=False,
    return_state=False, go_backwards=False, dropout=0.0, recurrent_dropout=0.0)`` on ``(batch, time, rows,
    cols, channels)``. Gates in Keras' order (input, forget, cell, output); the input convolution uses
    ``padding`` and ``strides``, the recurrent one ``"same"``; weights in Keras' layout: ``kernel (kh, kw,
    channels, 4 * filters)``, ``recurrent_kernel (kh, kw, filters, 4 * filters)``, ``bias (4 * filters,)``."""

    supports_masking = False

    def __init__(self, filters: int, kernel_size: Union[int, Sequence[int]], strides: Union[int, Sequence[int]] = 1,
                 padding: str = "valid", data_format: Optional[str] = None,
                 dilation_rate: Union[int, Sequence[int]] = 1, activation: Any = "tanh",
                 recurrent_activation: Any = "sigmoid", use_bias: bool = True,
                 kernel_initializer: Any = "glorot_uniform", recurrent_initializer: Any = "orthogonal",
                 bias_initializer: Any = "zeros", unit_forget_bias: bool = True, return_sequences: bool = False,
                 return_state: bool = False, go_backwards: bool = False, stateful: bool = False,
                 dropout: float = 0.0, recurrent_dropout: float = 0.0, **kwargs) -> None:
        from graphgrad.compat.keras import activations

        super().__init__(**kwargs)
        if data_format not in (None, "channels_last"):
            raise ValueError("ConvLSTM2D: only data_format='channels_last' (Keras' default) is supported")
        if stateful:
            raise ValueError("ConvLSTM2D: stateful=True is not supported by graphgrad.compat.keras")
        self.padding = str(padding).lower()
        if self.padding not in ("valid", "same"):
            raise ValueError(f"ConvLSTM2D: padding must be 'valid' or 'same', got {padding!r}")
        self.filters, self.kernel_size = int(filters), _pair(kernel_size)
        self.strides, self.dilation_rate = _pair(strides), _pair(dilation_rate)
        self.activation = activations.get(activation)
        self.recurrent_activation = activations.get(recurrent_activation)
        self.use_bias, self.unit_forget_bias = bool(use_bias), bool(unit_forget_bias)
        self.return_sequences, self.return_state = bool(return_sequences), bool(return_state)
        self.go_backwards = bool(go_backwards)
        self.dropout, self.recurrent_dropout = float(dropout), float(recurrent_dropout)
        self._inits = (kernel_initializer, recurrent_initializer, bias_initializer)

    def _weight(self, shape_torch: tuple, how: Any):
        """A Keras-layout weight ``(kh, kw, in, out)`` initialized as the graphgrad layout ``(out, in, kh, kw)``."""
        tensor = gg.zeros(shape_torch)
        _initialize(tensor, how)
        return nn.Parameter(gg.permute(tensor, (2, 3, 1, 0)).numpy().copy())

    def build(self, input_shape) -> None:
        channels, f = int(input_shape[-1]), self.filters
        kh, kw = self.kernel_size
        self.kernel = self._weight((4 * f, channels, kh, kw), self._inits[0])
        self.recurrent_kernel = self._weight((4 * f, f, kh, kw), self._inits[1])
        if self.use_bias:
            bias = gg.zeros((4 * f,))
            _initialize(bias, self._inits[2])
            if self.unit_forget_bias:
                value = bias.numpy().copy()
                value[f:2 * f] = 1.0
                bias = gg.tensor(value)
            self.bias = nn.Parameter(bias.numpy().copy())

    def _same(self, x, kernel: tuple, strides: tuple, dilation: tuple):
        """TensorFlow's 'same' padding (the odd pixel at the end) of ``x`` ``(N, C, H, W)``."""
        widths = [(0, 0), (0, 0)]
        for i in range(2):
            size, k, s, d = int(x.shape[2 + i]), kernel[i], strides[i], dilation[i]
            total = max((math.ceil(size / s) - 1) * s + (k - 1) * d + 1 - size, 0)
            widths.append((total // 2, total - total // 2))
        return gg.pad(x, widths)

    def _input_conv(self, x, weight):
        if self.padding == "same":
            x = self._same(x, self.kernel_size, self.strides, self.dilation_rate)
        return gg.nn.functional.conv2d(x, weight, stride=self.strides, dilation=self.dilation_rate)

    def _recurrent_conv(self, h, weight):
        return gg.nn.functional.conv2d(self._same(h, self.kernel_size, (1, 1), (1, 1)), weight)

    def forward(self, x, initial_state: Any = None):
        f = self.filters
        x = gg.permute(x, (1, 0, 4, 2, 3))  # (time, N, C, H, W)
        steps = int(x.shape[0])
        kernel = gg.permute(self.kernel, (3, 2, 0, 1))  # (4f, C, kh, kw)
        recurrent = gg.permute(self.recurrent_kernel, (3, 2, 0, 1))
        order = range(steps - 1, -1, -1) if self.go_backwards else range(steps)
        in_mask = None
        if self.training and self.dropout:  # one mask for every timestep, as Keras' recurrent dropout
            keep = 1.0 - self.dropout
            in_mask = (gg.rand(tuple(x.shape[1:])) < keep).astype(x.dtype) / keep
        inputs = [self._input_conv(x[t] if in_mask is None else x[t] * in_mask, kernel) for t in order]
        if self.use_bias:
            inputs = [z + gg.reshape(self.bias, (1, 4 * f, 1, 1)) for z in inputs]
        if initial_state is not None:
            h, c = (gg.permute(gg.tensor(s) if not isinstance(s, gg.Tensor) else s, (0, 3, 1, 2))
                    for s in initial_state)
        else:
            h = gg.zeros((int(x.shape[1]), f) + tuple(inputs[0].shape[2:]), dtype=inputs[0].dtype)
            c = h
        if self.training and self.recurrent_dropout:
            keep = 1.0 - self.recurrent_dropout
            rec_mask = (gg.rand(tuple(h.shape)) < keep).astype(h.dtype) / keep
        else:
            rec_mask = None
        outputs = []
        for z in inputs:
            r = self._recurrent_conv(h if rec_mask is None else h * rec_mask, recurrent)
            s = z + r
            i = self.recurrent_activation(s[:, :f])
            g = self.recurrent_activation(s[:, f:2 * f])
            c = g * c + i * self.activation(s[:, 2 * f:3 * f])
            o = self.recurrent_activation(s[:, 3 * f:])
            h = o * self.activation(c)
            outputs.append(h)
        last = gg.permute(h, (0, 2, 3, 1))
        if self.return_sequences:
            out = gg.permute(gg.stack(outputs, axis=1), (0, 1, 3, 4, 2))
        else:
            out = last
        if self.return_state:
            return [out, last, gg.permute(c, (0, 2, 3, 1))]
        return out

    def keras_weights(self) -> list:
        out = [(self.kernel, None, None), (self.recurrent_kernel, None, None)]
        return out + ([(self.bias, None, None)] if self.use_bias else [])
