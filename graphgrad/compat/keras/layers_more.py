"""More of Keras' layers: activation layers (``Softmax``, ``ReLU``...), ``Normalization`` (with
``adapt``), ``Conv2DTranspose``, ``UpSampling2D`` and ``ZeroPadding2D`` (channels_last), each
forwarding to graphgrad's modules and ops."""
from __future__ import annotations

import math
from typing import Any, Optional, Sequence, Union

import graphgrad as gg
from graphgrad import nn
from graphgrad.backend import np
from graphgrad.nn import functional as F

from graphgrad.compat.keras.engine import Layer, as_tensor, pop_weight_rules
from graphgrad.compat.keras.layers_core import _channels_last, _initialize, _tuple
from graphgrad.compat.keras import activations

__all__ = ["Softmax", "ReLU", "LeakyReLU", "ELU", "Normalization", "Conv2DTranspose", "UpSampling2D", "ZeroPadding2D"]


class Softmax(Layer):
    """``Softmax(axis=-1)``."""

    supports_masking = True

    def __init__(self, axis: int = -1, **kwargs) -> None:
        super().__init__(**kwargs)
        self.axis = int(axis)

    def forward(self, x):
        return gg.softmax(x, axis=self.axis)


class ReLU(Layer):
    """``ReLU(max_value=None, negative_slope=0.0, threshold=0.0)`` (the plain form and ``max_value=6``)."""

    supports_masking = True

    def __init__(self, max_value: Optional[float] = None, negative_slope: float = 0.0, threshold: float = 0.0,
                 **kwargs) -> None:
        super().__init__(**kwargs)
        self.options = (max_value, float(negative_slope), float(threshold))
        activations.relu(gg.zeros(1), negative_slope, max_value, threshold)  # unsupported forms fail now

    def forward(self, x):
        max_value, negative_slope, threshold = self.options
        return activations.relu(x, negative_slope, max_value, threshold)


class LeakyReLU(Layer):
    """``LeakyReLU(negative_slope=0.3)`` (Keras 3's default slope)."""

    supports_masking = True

    def __init__(self, negative_slope: float = 0.3, **kwargs) -> None:
        if "alpha" in kwargs:  # Keras 2's name
            negative_slope = kwargs.pop("alpha")
        super().__init__(**kwargs)
        self.negative_slope = float(negative_slope)

    def forward(self, x):
        return gg.leaky_relu(x, self.negative_slope)


class ELU(Layer):
    """``ELU(alpha=1.0)``."""

    supports_masking = True

    def __init__(self, alpha: float = 1.0, **kwargs) -> None:
        super().__init__(**kwargs)
        self.alpha = float(alpha)

    def forward(self, x):
        return gg.elu(x, self.alpha) if self.alpha != 1.0 else gg.elu(x)


class Normalization(Layer):
    """``Normalization(axis=-1)``: ``(x - mean) / sqrt(var)`` per feature of ``axis``, with the mean and
    variance from ``adapt(data)`` (or given as ``mean=``, ``variance=``). Its weights are ``mean``,
    ``variance`` and ``count``, not trained."""

    def __init__(self, axis: Optional[int] = -1, mean: Any = None, variance: Any = None, invert: bool = False,
                 **kwargs) -> None:
        super().__init__(**kwargs)
        if axis is None or isinstance(axis, (tuple, list)) or invert:
            raise NotImplementedError("Normalization: only a single axis (and invert=False) is supported")
        self.axis = int(axis)
        self._given = (mean, variance)

    def _stats_shape(self, shape: Sequence[int]) -> tuple:
        axis = self.axis % len(shape)
        return tuple(int(shape[i]) if i == axis else 1 for i in range(1, len(shape)))

    def build(self, input_shape) -> None:
        stats = self._stats_shape(input_shape)
        self.register_buffer("mean", gg.zeros(stats))
        self.register_buffer("variance", gg.ones(stats))
        self.register_buffer("count", gg.zeros(()))
        mean, variance = self._given
        if mean is not None:
            with gg.no_grad():
                self.mean.copy_(gg.broadcast_to(gg.tensor(mean, dtype=self.mean.dtype), stats))
                self.variance.copy_(gg.broadcast_to(gg.tensor(variance, dtype=self.variance.dtype), stats))

    def adapt(self, data: Any, batch_size: Any = None, steps: Any = None) -> None:
        """Set the mean and variance from ``data`` (an array of samples)."""
        values = np.asarray(as_tensor(data).numpy(), dtype=np.float64)
        if not self.built:
            self.build(values.shape)
            object.__setattr__(self, "built", True)
        axis = self.axis % values.ndim
        reduce = tuple(i for i in range(values.ndim) if i != axis)
        stats = self._stats_shape(values.shape)
        with gg.no_grad():
            self.mean.copy_(gg.tensor(values.mean(axis=reduce).reshape(stats), dtype=self.mean.dtype))
            self.variance.copy_(gg.tensor(values.var(axis=reduce).reshape(stats), dtype=self.variance.dtype))
            self.count.copy_(gg.tensor(float(values.shape[0]), dtype=self.count.dtype))

    def forward(self, x):
        if x.dtype.kind != "f":
            x = x.astype(gg.get_default_dtype())
        return (x - self.mean) / gg.sqrt(gg.maximum(self.variance, gg.tensor(1e-7, dtype=self.variance.dtype)))

    def keras_weights(self) -> list:
        return [(self.mean, None, None), (self.variance, None, None), (self.count, None, None)]


class Conv2DTranspose(Layer):
    """``Conv2DTranspose(filters, kernel_size, strides=1, padding="valid")`` on ``(N, H, W, C)``:
    ``gg.nn.ConvTranspose2d``, cropped to TensorFlow's output size for ``padding="same"`` (``in * strides``).
    Kernel in Keras' layout ``(kh, kw, filters, in)``."""

    def __init__(self, filters: int, kernel_size: Union[int, Sequence[int]], strides: Union[int, Sequence[int]] = 1,
                 padding: str = "valid", data_format: Optional[str] = None, activation: Any = None,
                 use_bias: bool = True, kernel_initializer: Any = "glorot_uniform", bias_initializer: Any = "zeros",
                 **kwargs) -> None:
        rules = pop_weight_rules(kwargs)
        super().__init__(**kwargs)
        self.set_weight_rules(rules)
        self.filters, self.padding = int(filters), str(padding).lower()
        if self.padding not in ("valid", "same"):
            raise ValueError(f"Conv2DTranspose: padding must be 'valid' or 'same', got {padding!r}")
        self.kernel_size, self.strides = _tuple(kernel_size, 2), _tuple(strides, 2)
        if any(k < s for k, s in zip(self.kernel_size, self.strides)):
            raise NotImplementedError("Conv2DTranspose: kernels smaller than the strides are not supported")
        self.channels_last = _channels_last(data_format, "Conv2DTranspose")
        self.activation, self.use_bias = activations.get(activation), bool(use_bias)
        self._inits = (kernel_initializer, bias_initializer)

    def build(self, input_shape) -> None:
        channels = int(input_shape[-1] if self.channels_last else input_shape[1])
        self.conv = nn.ConvTranspose2d(channels, self.filters, self.kernel_size, stride=self.strides,
                                       bias=self.use_bias)
        _initialize(self.conv.weight, self._inits[0])
        if self.use_bias:
            _initialize(self.conv.bias, self._inits[1])

    def forward(self, x):
        if self.channels_last:
            x = gg.permute(x, (0, 3, 1, 2))
        size = (int(x.shape[2]), int(x.shape[3]))
        y = self.conv(x)  # (in - 1) * s + k: TensorFlow's 'valid' size
        if self.padding == "same":
            starts = [(k - s) // 2 for k, s in zip(self.kernel_size, self.strides)]
            y = y[:, :, starts[0]:starts[0] + size[0] * self.strides[0], starts[1]:starts[1] + size[1] * self.strides[1]]
        if self.channels_last:
            y = gg.permute(y, (0, 2, 3, 1))
        return self.activation(y)

    def keras_weights(self) -> list:
        # graphgrad (in, out, kh, kw) <-> Keras (kh, kw, out, in)
        out = [(self.conv.weight, lambda w: w.transpose(2, 3, 1, 0).copy(), lambda w: w.transpose(3, 2, 0, 1).copy())]
        return out + ([(self.conv.bias, None, None)] if self.use_bias else [])


class UpSampling2D(Layer):
    """``UpSampling2D(size=(2, 2), interpolation="nearest")`` on ``(N, H, W, C)``."""

    def __init__(self, size: Union[int, Sequence[int]] = (2, 2), data_format: Optional[str] = None,
                 interpolation: str = "nearest", **kwargs) -> None:
        super().__init__(**kwargs)
        if interpolation not in ("nearest", "bilinear"):
            raise NotImplementedError(f"UpSampling2D: interpolation {interpolation!r} is not supported")
        self.size, self.interpolation = _tuple(size, 2), interpolation
        self.channels_last = _channels_last(data_format, "UpSampling2D")

    def forward(self, x):
        if self.channels_last:
            x = gg.permute(x, (0, 3, 1, 2))
        y = F.interpolate(x, scale_factor=tuple(float(s) for s in self.size), mode=self.interpolation,
                          align_corners=False if self.interpolation == "bilinear" else None)
        return gg.permute(y, (0, 2, 3, 1)) if self.channels_last else y


class ZeroPadding2D(Layer):
    """``ZeroPadding2D(padding=1)``: an int, ``(rows, cols)`` or ``((top, bottom), (left, right))``."""

    def __init__(self, padding: Any = (1, 1), data_format: Optional[str] = None, **kwargs) -> None:
        super().__init__(**kwargs)
        if isinstance(padding, int):
            padding = ((padding, padding), (padding, padding))
        elif all(isinstance(p, int) for p in padding):
            padding = ((padding[0], padding[0]), (padding[1], padding[1]))
        self.padding = tuple(tuple(int(v) for v in p) for p in padding)
        self.channels_last = _channels_last(data_format, "ZeroPadding2D")

    def forward(self, x):
        widths = [(0, 0), *self.padding, (0, 0)] if self.channels_last else [(0, 0), (0, 0), *self.padding]
        return gg.pad(x, widths)
