"""Keras' core, convolution, pooling and normalization layers (channels_last), each forwarding to a
graphgrad module or op: ``Dense`` is ``gg.nn.Linear`` (kernel initialized glorot-uniform, bias
zeros, as Keras), ``Conv2D`` is ``gg.nn.Conv2d`` between two transposes (NHWC <-> NCHW)..."""
from __future__ import annotations

import math
from typing import Any, Optional, Sequence, Union

import graphgrad as gg
from graphgrad import nn
from graphgrad.nn import functional as F
from graphgrad.nn import init

from graphgrad.compat.keras import activations
from graphgrad.compat.keras.engine import Layer, as_tensor, pop_weight_rules

__all__ = ["Dense", "Activation", "Dropout", "Flatten", "Reshape", "Permute", "Conv1D", "Conv2D", "MaxPooling1D",
           "MaxPooling2D", "AveragePooling1D", "AveragePooling2D", "GlobalAveragePooling1D", "GlobalAveragePooling2D",
           "GlobalMaxPooling1D", "GlobalMaxPooling2D", "BatchNormalization", "LayerNormalization", "Embedding", "Rescaling", "Lambda"]


def _tuple(value: Union[int, Sequence[int]], n: int) -> tuple:
    return (int(value),) * n if isinstance(value, int) else tuple(int(v) for v in value)


def _initialize(tensor: gg.Tensor, how: Any) -> None:
    """Keras' initializers by name (the ones layers default to, and the common others)."""
    name = how
    if not isinstance(how, str) and callable(how):  # an initializer object or function: fn(shape, dtype)
        value = how(tuple(tensor.shape))
        with gg.no_grad():
            tensor.copy_(gg.tensor(value, dtype=tensor.dtype))
        return
    name = str(name).lower()
    name = {"uniform": "random_uniform", "normal": "random_normal", "zero": "zeros", "one": "ones",
            "xavier_uniform": "glorot_uniform", "xavier_normal": "glorot_normal"}.get(name, name)  # Keras 2's names
    if name == "glorot_uniform":
        init.xavier_uniform_(tensor)
    elif name == "glorot_normal":
        init.xavier_normal_(tensor)
    elif name == "he_normal":
        init.kaiming_normal_(tensor, nonlinearity="relu")
    elif name == "he_uniform":
        init.kaiming_uniform_(tensor, nonlinearity="relu")
    elif name == "zeros":
        init.zeros_(tensor)
    elif name == "ones":
        init.ones_(tensor)
    elif name == "orthogonal":
        init.orthogonal_(tensor)
    elif name == "random_normal":
        init.normal_(tensor, 0.0, 0.05)
    elif name == "random_uniform":
        init.uniform_(tensor, -0.05, 0.05)
    elif name in ("truncated_normal", "lecun_normal", "lecun_uniform", "identity"):
        from graphgrad.compat.keras import initializers

        maker = {"truncated_normal": initializers.TruncatedNormal, "lecun_normal": initializers.LecunNormal,
                 "lecun_uniform": initializers.LecunUniform, "identity": initializers.Identity}[name]
        _initialize(tensor, maker())
    else:
        raise ValueError(f"keras initializer {how!r} is not supported; use one of glorot_uniform, glorot_normal, "
                         "he_normal, he_uniform, zeros, ones, orthogonal, random_normal, random_uniform, "
                         "truncated_normal, lecun_normal, lecun_uniform, identity")


def _channels_last(data_format: Optional[str], who: str) -> bool:
    if data_format in (None, "channels_last"):
        return True
    if data_format == "channels_first":
        return False
    raise ValueError(f"{who}: data_format must be 'channels_last' or 'channels_first', got {data_format!r}")


# ---- core -------------------------------------------------------------------------------------------------------
class Dense(Layer):
    """``Dense(units, activation=None, use_bias=True)`` on the last axis: ``gg.nn.Linear``."""

    supports_masking = True

    def __init__(self, units: int, activation: Any = None, use_bias: bool = True,
                 kernel_initializer: Any = "glorot_uniform", bias_initializer: Any = "zeros", **kwargs) -> None:
        rules = pop_weight_rules(kwargs)
        super().__init__(**kwargs)
        self.set_weight_rules(rules)
        self.units, self.use_bias = int(units), bool(use_bias)
        self.activation = activations.get(activation)
        self._inits = (kernel_initializer, bias_initializer)

    def build(self, input_shape) -> None:
        self.linear = nn.Linear(int(input_shape[-1]), self.units, bias=self.use_bias)
        _initialize(self.linear.weight, self._inits[0])
        if self.use_bias:
            _initialize(self.linear.bias, self._inits[1])

    def forward(self, x):
        return self.activation(self.linear(x))

    def keras_weights(self) -> list:
        out = [(self.linear.weight, lambda w: w.T.copy(), lambda w: w.T.copy())]
        return out + ([(self.linear.bias, None, None)] if self.use_bias else [])


class Activation(Layer):
    """``Activation("relu")``."""

    supports_masking = True

    def __init__(self, activation: Any, **kwargs) -> None:
        super().__init__(**kwargs)
        self.activation = activations.get(activation)

    def forward(self, x):
        return self.activation(x)


class Dropout(Layer):
    """``Dropout(rate)``: ``gg.nn.Dropout`` (active in ``fit`` only)."""

    supports_masking = True

    def __init__(self, rate: float, noise_shape: Any = None, seed: Optional[int] = None, **kwargs) -> None:
        super().__init__(**kwargs)
        self.rate = float(rate)
        self.dropout = nn.Dropout(self.rate)

    def forward(self, x):
        return self.dropout(x)


class Flatten(Layer):
    """``Flatten()``: every axis but the batch into one (in the channels_last order of the data)."""

    def __init__(self, data_format: Optional[str] = None, **kwargs) -> None:
        super().__init__(**kwargs)
        self.channels_last = _channels_last(data_format, "Flatten")

    def forward(self, x):
        if not self.channels_last and x.ndim > 2:  # Keras flattens channels_first data as channels_last
            x = gg.permute(x, (0,) + tuple(range(2, x.ndim)) + (1,))
        return x.reshape(int(x.shape[0]), -1)


class Reshape(Layer):
    """``Reshape(target_shape)``: one sample's new shape (``-1`` allowed once)."""

    def __init__(self, target_shape: Sequence[int], **kwargs) -> None:
        super().__init__(**kwargs)
        self.target_shape = tuple(int(d) for d in target_shape)

    def forward(self, x):
        return x.reshape((int(x.shape[0]),) + self.target_shape)


class Permute(Layer):
    """``Permute(dims)``: permute the non-batch axes (numbered from 1)."""

    def __init__(self, dims: Sequence[int], **kwargs) -> None:
        super().__init__(**kwargs)
        self.dims = tuple(int(d) for d in dims)

    def forward(self, x):
        return gg.permute(x, (0,) + self.dims)


# ---- convolution ----------------------------------------------------------------------------------------------------
class _Conv(Layer):
    nd = 2

    def __init__(self, filters: int, kernel_size: Union[int, Sequence[int]], strides: Union[int, Sequence[int]] = 1,
                 padding: str = "valid", data_format: Optional[str] = None, dilation_rate: Union[int, Sequence[int]] = 1,
                 groups: int = 1, activation: Any = None, use_bias: bool = True,
                 kernel_initializer: Any = "glorot_uniform", bias_initializer: Any = "zeros", **kwargs) -> None:
        rules = pop_weight_rules(kwargs)
        super().__init__(**kwargs)
        self.set_weight_rules(rules)
        who = type(self).__name__
        padding = str(padding).lower()
        if padding not in ("valid", "same") and not (padding == "causal" and self.nd == 1):
            raise ValueError(f"{who}: padding must be 'valid' or 'same'{' or causal' if self.nd == 1 else ''}, "
                             f"got {padding!r}")
        self.filters, self.padding, self.groups = int(filters), padding, int(groups)
        self.kernel_size = _tuple(kernel_size, self.nd)
        self.strides = _tuple(strides, self.nd)
        self.dilation_rate = _tuple(dilation_rate, self.nd)
        self.channels_last = _channels_last(data_format, who)
        self.activation = activations.get(activation)
        self.use_bias = bool(use_bias)
        self._inits = (kernel_initializer, bias_initializer)

    def build(self, input_shape) -> None:
        channels = int(input_shape[-1] if self.channels_last else input_shape[1])
        conv = {1: nn.Conv1d, 2: nn.Conv2d, 3: nn.Conv3d}[self.nd]
        stride_one = all(s == 1 for s in self.strides)
        padding = "same" if self.padding == "same" and stride_one else 0  # strided 'same': padded in forward
        self.conv = conv(channels, self.filters, self.kernel_size, stride=self.strides, padding=padding,
                         dilation=self.dilation_rate, groups=self.groups, bias=self.use_bias)
        _initialize(self.conv.weight, self._inits[0])
        if self.use_bias:
            _initialize(self.conv.bias, self._inits[1])

    def _same_padding(self, x):
        """TensorFlow's 'same' for strided convolutions: pad so the output is ceil(size / stride), the
        odd pixel at the end."""
        widths = [(0, 0), (0, 0)]
        for i in range(self.nd):
            size, k, s, d = int(x.shape[2 + i]), self.kernel_size[i], self.strides[i], self.dilation_rate[i]
            total = max((math.ceil(size / s) - 1) * s + (k - 1) * d + 1 - size, 0)
            widths.append((total // 2, total - total // 2))
        return gg.pad(x, widths)

    def forward(self, x):
        if self.channels_last:
            x = gg.permute(x, (0, x.ndim - 1) + tuple(range(1, x.ndim - 1)))
        if self.padding == "same" and any(s != 1 for s in self.strides):
            x = self._same_padding(x)
        elif self.padding == "causal":  # the past only: (kernel - 1) * dilation zeros before the sequence
            x = gg.pad(x, [(0, 0), (0, 0), ((self.kernel_size[0] - 1) * self.dilation_rate[0], 0)])
        y = self.conv(x)
        if self.channels_last:
            y = gg.permute(y, (0,) + tuple(range(2, y.ndim)) + (1,))
        return self.activation(y)

    def keras_weights(self) -> list:
        # graphgrad (out, in, *k) <-> Keras (*k, in, out)
        nd = self.nd
        to_keras = lambda w: w.transpose(tuple(range(2, 2 + nd)) + (1, 0)).copy()  # noqa: E731
        from_keras = lambda w: w.transpose((nd + 1, nd) + tuple(range(nd))).copy()  # noqa: E731
        out = [(self.conv.weight, to_keras, from_keras)]
        return out + ([(self.conv.bias, None, None)] if self.use_bias else [])


class Conv1D(_Conv):
    """``Conv1D(filters, kernel_size, strides=1, padding="valid", activation=None)`` on ``(N, L, C)``."""

    nd = 1


class Conv2D(_Conv):
    """``Conv2D(filters, kernel_size, strides=(1, 1), padding="valid", activation=None)`` on ``(N, H, W, C)``."""

    nd = 2


# ---- pooling -----------------------------------------------------------------------------------------------------------
class _Pool(Layer):
    nd, kind = 2, "max"

    def __init__(self, pool_size: Union[int, Sequence[int]] = 2, strides: Union[None, int, Sequence[int]] = None,
                 padding: str = "valid", data_format: Optional[str] = None, **kwargs) -> None:
        super().__init__(**kwargs)
        self.padding = str(padding).lower()
        if self.padding not in ("valid", "same"):
            raise ValueError(f"{type(self).__name__}: padding must be 'valid' or 'same', got {padding!r}")
        self.pool_size = _tuple(pool_size, self.nd)
        self.strides = self.pool_size if strides is None else _tuple(strides, self.nd)
        self.channels_last = _channels_last(data_format, type(self).__name__)

    def forward(self, x):
        if self.channels_last:
            x = gg.permute(x, (0, x.ndim - 1) + tuple(range(1, x.ndim - 1)))
        pool = {("max", 1): F.max_pool1d, ("max", 2): F.max_pool2d, ("avg", 1): F.avg_pool1d,
                ("avg", 2): F.avg_pool2d}[(self.kind, self.nd)]
        if self.padding == "same":
            y = self._same(x, pool)
        else:
            y = pool(x, self.pool_size, self.strides)
        if self.channels_last:
            y = gg.permute(y, (0,) + tuple(range(2, y.ndim)) + (1,))
        return y


    def _same(self, x, pool):
        """TensorFlow's 'same' pooling: the output is ceil(size / stride), the window's overhang padded
        (the odd pixel at the end); padded positions never win a max and are not counted in a mean."""
        widths = [(0, 0), (0, 0)]
        for i in range(self.nd):
            size, k, s = int(x.shape[2 + i]), self.pool_size[i], self.strides[i]
            total = max((math.ceil(size / s) - 1) * s + k - size, 0)
            widths.append((total // 2, total - total // 2))
        if self.kind == "max":
            return pool(gg.pad(x, widths, constant_values=float("-inf")), self.pool_size, self.strides)
        ones = gg.ones((1, 1) + tuple(int(d) for d in x.shape[2:]), dtype=x.dtype)
        counts = pool(gg.pad(ones, widths), self.pool_size, self.strides)
        return pool(gg.pad(x, widths), self.pool_size, self.strides) / counts


class MaxPooling1D(_Pool):
    nd, kind = 1, "max"


class MaxPooling2D(_Pool):
    """``MaxPooling2D(pool_size=(2, 2), strides=None)`` on ``(N, H, W, C)``."""

    nd, kind = 2, "max"


class AveragePooling1D(_Pool):
    nd, kind = 1, "avg"


class AveragePooling2D(_Pool):
    nd, kind = 2, "avg"


class _GlobalPool(Layer):
    nd, kind = 2, "avg"

    def __init__(self, data_format: Optional[str] = None, keepdims: bool = False, **kwargs) -> None:
        super().__init__(**kwargs)
        self.channels_last = _channels_last(data_format, type(self).__name__)
        self.keepdims = bool(keepdims)

    def forward(self, x, mask=None):
        axes = tuple(range(1, 1 + self.nd)) if self.channels_last else tuple(range(2, 2 + self.nd))
        if mask is not None:  # GlobalAveragePooling1D: the mean over the unmasked steps, as Keras
            weights = gg.expand_dims(mask.astype(x.dtype), 2 if self.channels_last else 1)
            return gg.sum(x * weights, axis=axes, keepdims=self.keepdims) / gg.sum(weights, axis=axes,
                                                                                   keepdims=self.keepdims)
        reduce = gg.mean if self.kind == "avg" else gg.max
        return reduce(x, axis=axes, keepdims=self.keepdims)


class GlobalAveragePooling1D(_GlobalPool):
    """``GlobalAveragePooling1D()``; with a mask (after ``Embedding(mask_zero=True)``) the mean of the unmasked steps."""

    nd, kind = 1, "avg"
    consumes_mask = True


class GlobalAveragePooling2D(_GlobalPool):
    nd, kind = 2, "avg"


class GlobalMaxPooling1D(_GlobalPool):
    nd, kind = 1, "max"


class GlobalMaxPooling2D(_GlobalPool):
    nd, kind = 2, "max"


# ---- normalization ---------------------------------------------------------------------------------------------------
class BatchNormalization(Layer):
    """``BatchNormalization(axis=-1, momentum=0.99, epsilon=1e-3)``: ``gg.nn.BatchNorm1d`` over every
    axis but ``axis`` (Keras' momentum m is PyTorch's 1 - m). With ``trainable = False`` it runs in
    inference mode (its moving statistics), as in Keras."""

    supports_masking = True

    def __init__(self, axis: int = -1, momentum: float = 0.99, epsilon: float = 1e-3, center: bool = True,
                 scale: bool = True, **kwargs) -> None:
        for ignored in ("beta_initializer", "gamma_initializer", "moving_mean_initializer",
                        "moving_variance_initializer"):
            kwargs.pop(ignored, None)
        super().__init__(**kwargs)
        if not (center and scale):
            raise NotImplementedError("BatchNormalization: center=False / scale=False are not supported")
        self.axis, self.momentum, self.epsilon = int(axis), float(momentum), float(epsilon)

    def build(self, input_shape) -> None:
        self.bn = nn.BatchNorm1d(int(input_shape[self.axis]), eps=self.epsilon, momentum=1.0 - self.momentum)

    def forward(self, x):
        axis = self.axis % x.ndim
        if axis != x.ndim - 1:
            order = tuple(i for i in range(x.ndim) if i != axis) + (axis,)
            x = gg.permute(x, order)
        shape = tuple(x.shape)
        frozen = not self.trainable and self.bn.training  # Keras: a frozen BatchNormalization runs in inference mode
        if frozen:
            self.bn.train(False)
        try:
            y = self.bn(x.reshape(-1, shape[-1])).reshape(shape)
        finally:
            if frozen:
                self.bn.train(True)
        if axis != len(shape) - 1:
            back = [0] * len(shape)
            for position, source in enumerate(order):
                back[source] = position
            y = gg.permute(y, tuple(back))
        return y

    def keras_weights(self) -> list:
        return [(self.bn.weight, None, None), (self.bn.bias, None, None), (self.bn.running_mean, None, None),
                (self.bn.running_var, None, None)]


class LayerNormalization(Layer):
    """``LayerNormalization(axis=-1, epsilon=1e-3)``: ``gg.nn.LayerNorm`` over the last axis."""

    supports_masking = True

    def __init__(self, axis: int = -1, epsilon: float = 1e-3, center: bool = True, scale: bool = True,
                 **kwargs) -> None:
        super().__init__(**kwargs)
        if axis not in (-1,) and not isinstance(axis, int):
            raise NotImplementedError("LayerNormalization: only the last axis is supported")
        self.axis, self.epsilon, self.center, self.scale = axis, float(epsilon), bool(center), bool(scale)

    def build(self, input_shape) -> None:
        if self.axis % len(input_shape) != len(input_shape) - 1:
            raise NotImplementedError("LayerNormalization: only axis=-1 is supported by graphgrad.compat.keras")
        self.ln = nn.LayerNorm(int(input_shape[-1]), eps=self.epsilon, elementwise_affine=self.scale or self.center,
                               bias=self.center)

    def forward(self, x):
        return self.ln(x)

    def keras_weights(self) -> list:
        out = [(self.ln.weight, None, None)] if self.ln.weight is not None else []
        return out + ([(self.ln.bias, None, None)] if getattr(self.ln, "bias", None) is not None else [])


class Embedding(Layer):
    """``Embedding(input_dim, output_dim, mask_zero=False)``: ``gg.nn.Embedding``, initialized U(-0.05, 0.05)
    as Keras. With ``mask_zero=True`` token 0 is padding: the mask goes on through layers that pass masks
    (Dense, Dropout, normalization, activations) to an LSTM/GRU/SimpleRNN/Bidirectional (which skips the
    masked steps) or a GlobalAveragePooling1D (which averages the unmasked ones); other layers drop it."""

    def __init__(self, input_dim: int, output_dim: int, embeddings_initializer: Any = "random_uniform",
                 mask_zero: bool = False, **kwargs) -> None:
        rules = pop_weight_rules(kwargs, ("embeddings",))
        super().__init__(**kwargs)
        self.set_weight_rules(rules, ("embeddings",))
        self.mask_zero = bool(mask_zero)
        self.input_dim, self.output_dim = int(input_dim), int(output_dim)
        self.embedding = nn.Embedding(self.input_dim, self.output_dim)
        _initialize(self.embedding.weight, embeddings_initializer)

    def forward(self, x):
        if x.dtype.kind not in "iu":
            x = x.astype("int64")
        return self.embedding(x)

    def compute_mask(self, inputs: Any, mask: Any = None) -> Any:
        """With ``mask_zero=True``: true where the token is not 0 (the padding), as Keras."""
        return (as_tensor(inputs) != 0) if self.mask_zero else None


class Rescaling(Layer):
    """``Rescaling(scale, offset=0.0)``: ``x * scale + offset`` (e.g. ``1 / 255`` for images)."""

    def __init__(self, scale: float, offset: float = 0.0, **kwargs) -> None:
        super().__init__(**kwargs)
        self.scale, self.offset = float(scale), float(offset)

    def forward(self, x):
        if x.dtype.kind != "f":
            x = x.astype(gg.get_default_dtype())
        return x * self.scale + self.offset


class Lambda(Layer):
    """``Lambda(fn)``: ``fn(x)`` with graphgrad ops (a model holding one saves only its weights)."""

    def __init__(self, function: Any, output_shape: Any = None, mask: Any = None, arguments: Optional[dict] = None,
                 **kwargs) -> None:
        super().__init__(**kwargs)
        self.function = function
        self.arguments = dict(arguments or {})  # keyword arguments for function, as Keras' Lambda(arguments=)
        # output_shape and mask are accepted: shapes come from running the function

    def forward(self, x):
        return self.function(x, **self.arguments)
