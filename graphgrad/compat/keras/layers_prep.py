"""Keras' small layers: cropping, padding and upsampling in 1-D, noise and spatial dropout (active in
training only), ``PReLU``, ``Identity``, ``UnitNormalization``, ``GroupNormalization``,
``ActivityRegularization``, and the preprocessing layers that are plain math (``Resizing``,
``CenterCrop``, ``RandomFlip``, ``RandomRotation``, ``CategoryEncoding``, ``Discretization``);
channels_last, each composed of graphgrad's modules and ops."""
from __future__ import annotations

import math
from typing import Any, Optional, Sequence

import graphgrad as gg
from graphgrad import nn
from graphgrad.nn import functional as F

from graphgrad.compat.keras.engine import Layer, as_tensor
from graphgrad.compat.keras.layers_core import _channels_last, _initialize

__all__ = ["Cropping1D", "Cropping2D", "UpSampling1D", "ZeroPadding1D", "GaussianNoise", "GaussianDropout",
           "SpatialDropout1D", "SpatialDropout2D", "PReLU", "Identity", "UnitNormalization", "GroupNormalization",
           "ActivityRegularization", "Resizing", "CenterCrop", "RandomFlip", "RandomRotation", "CategoryEncoding",
           "Discretization"]


def _pair(value: Any) -> tuple:
    return (int(value), int(value)) if isinstance(value, int) else (int(value[0]), int(value[1]))


def _float(x):
    return x if x.dtype.kind == "f" else x.astype(gg.get_default_dtype())


# ---- shape ---------------------------------------------------------------------------------------------------------
class Cropping1D(Layer):
    """``Cropping1D(cropping=(1, 1))``: drop steps at the start and end of axis 1 of ``(B, T, C)``."""

    def __init__(self, cropping: Any = (1, 1), **kwargs) -> None:
        super().__init__(**kwargs)
        self.cropping = _pair(cropping)

    def forward(self, x):
        start, end = self.cropping
        return x[:, start:int(x.shape[1]) - end]


class Cropping2D(Layer):
    """``Cropping2D(cropping=((0, 0), (0, 0)))``: an int, ``(rows, cols)`` or ``((top, bottom), (left, right))``."""

    def __init__(self, cropping: Any = ((0, 0), (0, 0)), data_format: Optional[str] = None, **kwargs) -> None:
        super().__init__(**kwargs)
        if isinstance(cropping, int):
            cropping = ((cropping, cropping), (cropping, cropping))
        elif all(isinstance(c, int) for c in cropping):
            cropping = ((cropping[0], cropping[0]), (cropping[1], cropping[1]))
        self.cropping = tuple(_pair(c) for c in cropping)
        self.channels_last = _channels_last(data_format, "Cropping2D")

    def forward(self, x):
        (top, bottom), (left, right) = self.cropping
        if self.channels_last:
            h, w = int(x.shape[1]), int(x.shape[2])
            return x[:, top:h - bottom, left:w - right]
        h, w = int(x.shape[2]), int(x.shape[3])
        return x[:, :, top:h - bottom, left:w - right]


class UpSampling1D(Layer):
    """``UpSampling1D(size=2)``: each step of axis 1 repeated ``size`` times."""

    def __init__(self, size: int = 2, **kwargs) -> None:
        super().__init__(**kwargs)
        self.size = int(size)

    def forward(self, x):
        return gg.repeat(x, self.size, axis=1)


class ZeroPadding1D(Layer):
    """``ZeroPadding1D(padding=1)``: an int or ``(start, end)`` zeros on axis 1 of ``(B, T, C)``."""

    def __init__(self, padding: Any = 1, **kwargs) -> None:
        super().__init__(**kwargs)
        self.padding = _pair(padding)

    def forward(self, x):
        return gg.pad(x, [(0, 0), self.padding] + [(0, 0)] * (x.ndim - 2))


class Masking(Layer):
    """``Masking(mask_value=0.0)``: a timestep whose features all equal ``mask_value`` is masked: its values
    become 0 and the mask ``(batch, time)`` goes on to the layers that take masks (LSTM / GRU / SimpleRNN skip
    masked steps, carrying their state over them), as Keras."""

    supports_masking = True

    def __init__(self, mask_value: float = 0.0, **kwargs) -> None:
        super().__init__(**kwargs)
        self.mask_value = mask_value

    def _keep(self, x):
        return gg.any(x != self.mask_value, axis=-1, keepdims=True)

    def forward(self, x):
        return x * self._keep(x).astype(x.dtype)

    def compute_mask(self, inputs: Any, mask: Any = None) -> Any:
        return gg.any(as_tensor(inputs) != self.mask_value, axis=-1)


class Identity(Layer):
    """``Identity()``: returns its input."""

    supports_masking = True

    def forward(self, x):
        return x


# ---- noise and dropout (training only) -----------------------------------------------------------------------------
class GaussianNoise(Layer):
    """``GaussianNoise(stddev)``: adds N(0, stddev) noise in training; identity at inference."""

    supports_masking = True

    def __init__(self, stddev: float, seed: Optional[int] = None, **kwargs) -> None:
        super().__init__(**kwargs)
        self.stddev = float(stddev)

    def forward(self, x):
        if not self.training or self.stddev == 0:
            return x
        return x + gg.normal(0.0, self.stddev, tuple(x.shape), dtype=x.dtype)


class GaussianDropout(Layer):
    """``GaussianDropout(rate)``: multiplies by N(1, sqrt(rate / (1 - rate))) noise in training."""

    supports_masking = True

    def __init__(self, rate: float, seed: Optional[int] = None, **kwargs) -> None:
        super().__init__(**kwargs)
        self.rate = float(rate)

    def forward(self, x):
        if not self.training or not 0 < self.rate < 1:
            return x
        std = math.sqrt(self.rate / (1.0 - self.rate))
        return x * gg.normal(1.0, std, tuple(x.shape), dtype=x.dtype)


class SpatialDropout1D(Layer):
    """``SpatialDropout1D(rate)``: drops whole channels of ``(B, T, C)`` (``F.dropout1d``), in training."""

    supports_masking = True

    def __init__(self, rate: float, seed: Optional[int] = None, **kwargs) -> None:
        super().__init__(**kwargs)
        self.rate = float(rate)

    def forward(self, x):
        if not self.training or self.rate == 0:
            return x
        return gg.permute(F.dropout1d(gg.permute(x, (0, 2, 1)), self.rate, training=True), (0, 2, 1))


class SpatialDropout2D(Layer):
    """``SpatialDropout2D(rate)``: drops whole channels of ``(B, H, W, C)`` (``F.dropout2d``), in training."""

    def __init__(self, rate: float, data_format: Optional[str] = None, seed: Optional[int] = None, **kwargs) -> None:
        super().__init__(**kwargs)
        self.rate = float(rate)
        self.channels_last = _channels_last(data_format, "SpatialDropout2D")

    def forward(self, x):
        if not self.training or self.rate == 0:
            return x
        if not self.channels_last:
            return F.dropout2d(x, self.rate, training=True)
        return gg.permute(F.dropout2d(gg.permute(x, (0, 3, 1, 2)), self.rate, training=True), (0, 2, 3, 1))


# ---- activation and normalization ------------------------------------------------------------------------------------
class PReLU(Layer):
    """``PReLU(alpha_initializer="zeros", shared_axes=None)``: ``max(x, 0) - alpha * max(-x, 0)`` with a
    trained ``alpha`` per element of one sample (size 1 along ``shared_axes``, numbered from 1)."""

    supports_masking = True

    def __init__(self, alpha_initializer: Any = "zeros", shared_axes: Any = None, **kwargs) -> None:
        super().__init__(**kwargs)
        if shared_axes is not None and isinstance(shared_axes, int):
            shared_axes = [shared_axes]
        self.shared_axes = tuple(int(a) for a in shared_axes) if shared_axes is not None else ()
        self._init = alpha_initializer

    def build(self, input_shape) -> None:
        shape = tuple(1 if i + 1 in self.shared_axes else int(d) for i, d in enumerate(input_shape[1:]))
        self.alpha = nn.Parameter(gg.zeros(shape))
        _initialize(self.alpha, self._init)

    def forward(self, x):
        return gg.relu(x) - self.alpha * gg.relu(-x)


class UnitNormalization(Layer):
    """``UnitNormalization(axis=-1)``: ``x / ||x||`` along ``axis`` (l2)."""

    supports_masking = True

    def __init__(self, axis: Any = -1, **kwargs) -> None:
        super().__init__(**kwargs)
        self.axis = axis

    def forward(self, x):
        axes = (self.axis,) if isinstance(self.axis, int) else tuple(self.axis)
        square_sum = gg.sum(x * x, axis=axes, keepdims=True)
        return x / gg.sqrt(gg.maximum(square_sum, gg.tensor(1e-12, dtype=x.dtype)))


class GroupNormalization(Layer):
    """``GroupNormalization(groups=32, axis=-1, epsilon=1e-3, center=True, scale=True)``: ``gg.nn.GroupNorm``
    over the channels of ``axis`` (channels_last). Weights ``gamma``, ``beta`` ``(channels,)``."""

    supports_masking = True

    def __init__(self, groups: int = 32, axis: int = -1, epsilon: float = 1e-3, center: bool = True,
                 scale: bool = True, **kwargs) -> None:
        for ignored in ("beta_initializer", "gamma_initializer"):
            kwargs.pop(ignored, None)
        super().__init__(**kwargs)
        if not (center and scale):
            raise NotImplementedError("GroupNormalization: center=False / scale=False are not supported")
        self.groups, self.axis, self.epsilon = int(groups), int(axis), float(epsilon)

    def build(self, input_shape) -> None:
        channels = int(input_shape[self.axis])
        if channels % self.groups:
            raise ValueError(f"GroupNormalization: {channels} channels do not split into {self.groups} groups")
        self.gn = nn.GroupNorm(self.groups, channels, eps=self.epsilon)

    def forward(self, x):
        axis = self.axis % x.ndim
        if axis == 1:
            return self.gn(x)
        order = (0, axis) + tuple(i for i in range(1, x.ndim) if i != axis)
        back = [0] * x.ndim
        for position, source in enumerate(order):
            back[source] = position
        return gg.permute(self.gn(gg.permute(x, order)), tuple(back))

    def keras_weights(self) -> list:
        return [(self.gn.weight, None, None), (self.gn.bias, None, None)]


class ActivityRegularization(Layer):
    """``ActivityRegularization(l1=0.0, l2=0.0)``: passes its input through and adds
    ``l1 * sum(|x|) + l2 * sum(x**2)``, divided by the batch size, to the loss (its activity regularizer)."""

    supports_masking = True

    def __init__(self, l1: float = 0.0, l2: float = 0.0, **kwargs) -> None:
        from graphgrad.compat.keras import regularizers

        super().__init__(**kwargs)
        self.l1, self.l2 = float(l1), float(l2)
        object.__setattr__(self, "activity_regularizer", regularizers.L1L2(self.l1, self.l2))

    def forward(self, x):
        return x


# ---- preprocessing ----------------------------------------------------------------------------------------------------
_INTERPOLATIONS = {"bilinear": "bilinear", "nearest": "nearest", "bicubic": "bicubic"}


class Resizing(Layer):
    """``Resizing(height, width, interpolation="bilinear")``: images ``(B, H, W, C)`` resized to
    ``(B, height, width, C)`` (half-pixel centers, no antialiasing, as Keras' default)."""

    def __init__(self, height: int, width: int, interpolation: str = "bilinear", crop_to_aspect_ratio: bool = False,
                 data_format: Optional[str] = None, **kwargs) -> None:
        kwargs.pop("pad_to_aspect_ratio", None)
        kwargs.pop("fill_mode", None)
        kwargs.pop("fill_value", None)
        kwargs.pop("antialias", None)
        super().__init__(**kwargs)
        if interpolation not in _INTERPOLATIONS:
            raise NotImplementedError(f"Resizing: interpolation {interpolation!r} is not supported; "
                                      f"use one of {sorted(_INTERPOLATIONS)}")
        if crop_to_aspect_ratio:
            raise NotImplementedError("Resizing: crop_to_aspect_ratio=True is not supported; add a CenterCrop first")
        self.size, self.interpolation = (int(height), int(width)), interpolation
        self.channels_last = _channels_last(data_format, "Resizing")

    def forward(self, x):
        x = _float(x)
        batched = x.ndim == 4
        if not batched:
            x = gg.expand_dims(x, 0)
        if self.channels_last:
            x = gg.permute(x, (0, 3, 1, 2))
        mode = _INTERPOLATIONS[self.interpolation]
        y = F.interpolate(x, size=self.size, mode=mode, align_corners=None if mode == "nearest" else False)
        if self.channels_last:
            y = gg.permute(y, (0, 2, 3, 1))
        return y if batched else y[0]


class CenterCrop(Layer):
    """``CenterCrop(height, width)``: the central ``height x width`` window of ``(B, H, W, C)`` images."""

    def __init__(self, height: int, width: int, data_format: Optional[str] = None, **kwargs) -> None:
        super().__init__(**kwargs)
        self.height, self.width = int(height), int(width)
        self.channels_last = _channels_last(data_format, "CenterCrop")

    def forward(self, x):
        x = _float(x)
        h_axis = x.ndim - 3 if self.channels_last else x.ndim - 2
        h, w = int(x.shape[h_axis]), int(x.shape[h_axis + 1])
        if h < self.height or w < self.width:
            raise NotImplementedError(f"CenterCrop: images of {h}x{w} are smaller than {self.height}x{self.width}; "
                                      "add a Resizing layer first")
        top, left = (h - self.height) // 2, (w - self.width) // 2
        index = [slice(None)] * x.ndim
        index[h_axis] = slice(top, top + self.height)
        index[h_axis + 1] = slice(left, left + self.width)
        return x[tuple(index)]


class RandomFlip(Layer):
    """``RandomFlip(mode="horizontal_and_vertical")``: in training, each image flipped left-right
    (``"horizontal"``) and/or up-down (``"vertical"``) with probability 1/2; identity at inference."""

    def __init__(self, mode: str = "horizontal_and_vertical", seed: Optional[int] = None, **kwargs) -> None:
        super().__init__(**kwargs)
        if mode not in ("horizontal", "vertical", "horizontal_and_vertical"):
            raise ValueError(f"RandomFlip: mode must be 'horizontal', 'vertical' or 'horizontal_and_vertical', got {mode!r}")
        self.mode = mode

    def _flip(self, x, axis: int):
        coin = gg.rand(int(x.shape[0]), *([1] * (x.ndim - 1)), dtype=x.dtype) < 0.5
        return gg.where(coin, gg.flip(x, axis=axis), x)

    def forward(self, x):
        if not self.training:
            return x
        x = _float(x)
        if "horizontal" in self.mode:
            x = self._flip(x, x.ndim - 2)
        if "vertical" in self.mode:
            x = self._flip(x, x.ndim - 3)
        return x


class RandomRotation(Layer):
    """``RandomRotation(factor, fill_mode="reflect", interpolation="bilinear")``: in training, each image
    rotated by an angle drawn uniformly from ``factor * 2pi`` (``factor`` a number ``f`` meaning
    ``(-f, f)``, or a pair); identity at inference. ``fill_mode`` ``"reflect"``, ``"constant"`` (zeros) or
    ``"nearest"``."""

    _FILL = {"reflect": "reflection", "constant": "zeros", "nearest": "border"}

    def __init__(self, factor: Any, fill_mode: str = "reflect", interpolation: str = "bilinear",
                 seed: Optional[int] = None, fill_value: float = 0.0, data_format: Optional[str] = None,
                 **kwargs) -> None:
        super().__init__(**kwargs)
        if fill_mode not in self._FILL or (fill_mode == "constant" and fill_value):
            raise NotImplementedError(f"RandomRotation: fill_mode {fill_mode!r} (fill_value {fill_value}) is not "
                                      "supported; use 'reflect', 'nearest' or 'constant' with fill_value=0")
        if interpolation not in ("bilinear", "nearest"):
            raise NotImplementedError(f"RandomRotation: interpolation {interpolation!r} is not supported")
        low, high = (-float(factor), float(factor)) if isinstance(factor, (int, float)) else map(float, factor)
        self.range = (low * 2 * math.pi, high * 2 * math.pi)
        self.fill_mode, self.interpolation = fill_mode, interpolation
        self.channels_last = _channels_last(data_format, "RandomRotation")

    def forward(self, x):
        if not self.training:
            return x
        x = _float(x)
        if self.channels_last:
            x = gg.permute(x, (0, 3, 1, 2))
        n = int(x.shape[0])
        low, high = self.range
        angle = gg.rand(n, dtype=x.dtype) * (high - low) + low
        cos, sin, zero = gg.cos(angle), gg.sin(angle), gg.zeros(n, dtype=x.dtype)
        theta = gg.stack([gg.stack([cos, -sin, zero], axis=1), gg.stack([sin, cos, zero], axis=1)], axis=1)
        grid = F.affine_grid(theta, tuple(int(d) for d in x.shape), align_corners=False)
        y = F.grid_sample(x, grid, mode=self.interpolation, padding_mode=self._FILL[self.fill_mode],
                          align_corners=False)
        return gg.permute(y, (0, 2, 3, 1)) if self.channels_last else y


class CategoryEncoding(Layer):
    """``CategoryEncoding(num_tokens, output_mode="multi_hot")``: integer tokens ``< num_tokens`` as
    ``"one_hot"`` rows, ``"multi_hot"`` (1 where a token occurs in a sample) or ``"count"`` (how often)."""

    def __init__(self, num_tokens: Optional[int] = None, output_mode: str = "multi_hot", sparse: bool = False,
                 **kwargs) -> None:
        super().__init__(**kwargs)
        if num_tokens is None:
            raise ValueError("CategoryEncoding: pass num_tokens=")
        if output_mode not in ("one_hot", "multi_hot", "count"):
            raise ValueError(f"CategoryEncoding: output_mode must be 'one_hot', 'multi_hot' or 'count', got {output_mode!r}")
        if sparse:
            raise NotImplementedError("CategoryEncoding: sparse=True is not supported")
        self.num_tokens, self.output_mode = int(num_tokens), output_mode

    def forward(self, x):
        tokens = x if x.dtype.kind in "iu" else x.astype("int64")
        if self.output_mode == "one_hot":
            if tokens.ndim >= 1 and int(tokens.shape[-1]) == 1 and tokens.ndim > 1:
                tokens = tokens.reshape(tuple(tokens.shape[:-1]))
            return gg.one_hot(tokens.astype("int64"), self.num_tokens).astype(gg.get_default_dtype())
        if tokens.ndim == 1:
            tokens = tokens.reshape(-1, 1)
        hot = gg.one_hot(tokens.astype("int64"), self.num_tokens).astype(gg.get_default_dtype())
        return gg.max(hot, axis=-2) if self.output_mode == "multi_hot" else gg.sum(hot, axis=-2)


class Discretization(Layer):
    """``Discretization(bin_boundaries)``: the bin index of each value, bin ``i`` holding
    ``boundaries[i - 1] <= x < boundaries[i]`` (int64)."""

    def __init__(self, bin_boundaries: Optional[Sequence[float]] = None, num_bins: Optional[int] = None,
                 epsilon: float = 0.01, output_mode: str = "int", sparse: bool = False, **kwargs) -> None:
        super().__init__(**kwargs)
        if bin_boundaries is None:
            raise NotImplementedError("Discretization: pass bin_boundaries= (adapt() with num_bins is not supported)")
        if output_mode != "int":
            raise NotImplementedError("Discretization: only output_mode='int' is supported; follow it with "
                                      "CategoryEncoding for one_hot/multi_hot/count")
        self.bin_boundaries = [float(b) for b in bin_boundaries]

    def forward(self, x):
        boundaries = gg.tensor(self.bin_boundaries, dtype=x.dtype if x.dtype.kind == "f" else gg.get_default_dtype())
        return gg.bucketize(_float(x), boundaries, right=True)
