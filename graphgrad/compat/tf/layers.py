"""``tf.layers``: TF1's layer functions (``dense``, ``conv2d``, ``max_pooling2d``, ``dropout``,
``batch_normalization``...) and their classes (``Dense``, ``Conv2D``...), NHWC by default.

Each layer makes its variables with ``tf.get_variable`` inside ``tf.variable_scope(name)``, so they are
named as TensorFlow names them (``dense/kernel``, ``dense_1/bias``, ``conv2d/kernel``,
``batch_normalization/moving_mean``), show in ``tf.trainable_variables()``, follow ``reuse=`` and are
saved by ``tf.train.Saver``. The computation is the facade's ``tf.nn`` functions (graphgrad's ops).
``batch_normalization`` adds its moving-average updates to ``tf.GraphKeys.UPDATE_OPS``.
"""
from __future__ import annotations

import contextlib
import math
from typing import Any, Optional

import graphgrad as _gg
from graphgrad.compat.tf import nn as _nn
from graphgrad.compat.tf._common import current_scope, graph_state

Tensor = _gg.Tensor


def _tf():
    import graphgrad.compat.tf as tf

    return tf


def unique_name(base: str) -> str:
    """``base``, or ``base_1``, ``base_2``... when the current variable scope already has one (TF1's
    naming of layers made without ``name=``)."""
    counts = graph_state().setdefault("layer_names", {})
    key = current_scope()[1] + base
    n = counts.get(key, 0)
    counts[key] = n + 1
    return base if n == 0 else f"{base}_{n}"


@contextlib.contextmanager
def layer_scope(name: Optional[str], default: str, reuse: Any = None):
    """The variable scope of one layer: ``name``, or a fresh ``default`` name (``dense``, ``dense_1``)."""
    with _tf().variable_scope(name or unique_name(default), reuse=reuse or None) as scope:
        yield scope


def _tuple(value: Any, n: int) -> tuple:
    if isinstance(value, int):
        return (value,) * n
    value = tuple(int(v) for v in value)
    return value * n if len(value) == 1 else value


def _format(data_format: str, rank: int = 2) -> str:
    if data_format in ("channels_last", None):
        return "NHWC" if rank == 2 else "NWC"
    if data_format == "channels_first":
        return "NCHW" if rank == 2 else "NCW"
    raise ValueError(f"data_format must be 'channels_last' or 'channels_first', got {data_format!r}")


class Layer:
    """The base of the layer classes: variables made on the first call, in the layer's variable scope."""

    _default_name = "layer"

    def __init__(self, name: Optional[str] = None, trainable: bool = True, _reuse: Any = None, dtype: Any = None,
                 **kwargs) -> None:
        self.name, self.trainable, self._reuse = name, trainable, _reuse
        self.dtype = None if dtype is None else _tf().as_dtype(dtype)  # default: the first inputs' float dtype
        self.built = False
        self.variables: list = []

    def __call__(self, inputs: Any, *args, **kwargs) -> Any:
        tf = _tf()
        graph = _gg.get_default_graph()
        with graph.as_default():
            if not self.built:
                if self.dtype is None:
                    kind = getattr(getattr(inputs, "dtype", None), "kind", "")
                    self.dtype = inputs.dtype if kind == "f" else _tf().float32
                with layer_scope(self.name, self._default_name, self._reuse) as scope:
                    self.name = scope.name.rsplit("/", 1)[-1]
                    self._scope = scope
                    self.build(inputs)
                    self.built = True
                    return self.call(inputs, *args, **kwargs)
            with tf.name_scope(self.name):
                return self.call(inputs, *args, **kwargs)

    apply = __call__

    def add_variable(self, name: str, shape: Any, initializer: Any = None, regularizer: Any = None,
                     trainable: bool = True) -> Any:
        var = _tf().get_variable(name, shape, dtype=self.dtype or _tf().float32, initializer=initializer,
                                 regularizer=regularizer, trainable=trainable and self.trainable)
        self.variables.append(var)
        return var

    add_weight = add_variable

    @property
    def trainable_variables(self) -> list:
        return [v for v in self.variables if v.trainable]

    trainable_weights = trainable_variables
    weights = property(lambda self: list(self.variables))

    def build(self, inputs: Any) -> None:
        pass


def _flag(training: Tensor) -> Tensor:
    """A boolean ``training`` tensor as a scalar (a placeholder made without a shape is one), so that
    selecting with it keeps the other operand's shape."""
    flag = _gg.astype(training, _gg.bool_)
    return _gg.reshape(flag, ()) if flag.shape is None else flag


def _activate(y: Any, activation: Any) -> Any:
    return y if activation is None else activation(y)


class Dense(Layer):
    """``outputs = activation(inputs @ kernel + bias)``; ``kernel`` (in, units) starts glorot-uniform."""

    _default_name = "dense"

    def __init__(self, units: int, activation: Any = None, use_bias: bool = True, kernel_initializer: Any = None,
                 bias_initializer: Any = None, kernel_regularizer: Any = None, bias_regularizer: Any = None,
                 activity_regularizer: Any = None, kernel_constraint: Any = None, bias_constraint: Any = None,
                 trainable: bool = True, name: Optional[str] = None, **kwargs) -> None:
        super().__init__(name, trainable, **kwargs)
        self.units, self.activation, self.use_bias = int(units), activation, use_bias
        self.kernel_initializer, self.bias_initializer = kernel_initializer, bias_initializer
        self.kernel_regularizer, self.bias_regularizer = kernel_regularizer, bias_regularizer

    def build(self, inputs: Any) -> None:
        depth = inputs.shape[-1]
        if depth is None:
            raise _gg.ShapeError("tf.layers.dense: the last dimension of the inputs must be known")
        self.kernel = self.add_variable("kernel", [depth, self.units], self.kernel_initializer,
                                        self.kernel_regularizer)
        self.bias = self.add_variable("bias", [self.units], self.bias_initializer or _tf().zeros_initializer(),
                                      self.bias_regularizer) if self.use_bias else None

    def call(self, inputs: Any) -> Any:
        y = _gg.matmul(inputs, self.kernel)
        if self.bias is not None:
            y = y + self.bias
        return _activate(y, self.activation)


class _Conv(Layer):
    """Convolutions: ``kernel`` (window..., in, filters) and ``bias`` (filters)."""

    rank = 2
    _default_name = "conv2d"

    def __init__(self, filters: int, kernel_size: Any, strides: Any = 1, padding: str = "valid",
                 data_format: str = "channels_last", dilation_rate: Any = 1, activation: Any = None,
                 use_bias: bool = True, kernel_initializer: Any = None, bias_initializer: Any = None,
                 kernel_regularizer: Any = None, bias_regularizer: Any = None, activity_regularizer: Any = None,
                 kernel_constraint: Any = None, bias_constraint: Any = None, trainable: bool = True,
                 name: Optional[str] = None, **kwargs) -> None:
        super().__init__(name, trainable, **kwargs)
        self.filters, self.kernel_size = int(filters), _tuple(kernel_size, self.rank)
        self.strides, self.dilation_rate = _tuple(strides, self.rank), _tuple(dilation_rate, self.rank)
        self.padding, self.data_format = padding.upper(), _format(data_format, self.rank)
        self.activation, self.use_bias = activation, use_bias
        self.kernel_initializer, self.bias_initializer = kernel_initializer, bias_initializer
        self.kernel_regularizer, self.bias_regularizer = kernel_regularizer, bias_regularizer

    def _channels(self, inputs: Any) -> int:
        depth = inputs.shape[1] if self.data_format.startswith("NC") else inputs.shape[-1]
        if depth is None:
            raise _gg.ShapeError(f"tf.layers.{self._default_name}: the channel dimension of the inputs must be known")
        return depth

    def _kernel_shape(self, channels: int) -> list:
        return list(self.kernel_size) + [channels, self.filters]

    def build(self, inputs: Any) -> None:
        self.kernel = self.add_variable("kernel", self._kernel_shape(self._channels(inputs)), self.kernel_initializer,
                                        self.kernel_regularizer)
        self.bias = self.add_variable("bias", [self.filters], self.bias_initializer or _tf().zeros_initializer(),
                                      self.bias_regularizer) if self.use_bias else None

    def call(self, inputs: Any) -> Any:
        y = self._convolve(inputs)
        if self.bias is not None:
            y = _nn.bias_add(y, self.bias, data_format=self.data_format)
        return _activate(y, self.activation)

    def _convolve(self, inputs: Any) -> Any:
        return _nn.conv2d(inputs, self.kernel, strides=[1, *self.strides, 1] if self.data_format == "NHWC" else
                          [1, 1, *self.strides], padding=self.padding, data_format=self.data_format,
                          dilations=list(self.dilation_rate))


class Conv2D(_Conv):
    """2-D convolution (NHWC by default); ``padding`` 'valid' or 'same'."""


class Conv1D(_Conv):
    rank = 1
    _default_name = "conv1d"

    def _convolve(self, inputs: Any) -> Any:
        return _nn.conv1d(inputs, self.kernel, stride=self.strides[0], padding=self.padding,
                          data_format=self.data_format, dilations=self.dilation_rate[0])


class Conv2DTranspose(_Conv):
    """The transpose (gradient) of a 2-D convolution: ``kernel`` is (kh, kw, filters, in)."""

    _default_name = "conv2d_transpose"

    def _kernel_shape(self, channels: int) -> list:
        return list(self.kernel_size) + [self.filters, channels]

    def _convolve(self, inputs: Any) -> Any:
        tf = _tf()
        channels_last = self.data_format == "NHWC"
        h, w = (inputs.shape[1], inputs.shape[2]) if channels_last else (inputs.shape[2], inputs.shape[3])
        sizes = []
        for size, k, s, d in zip((h, w), self.kernel_size, self.strides, self.dilation_rate):
            if size is None:
                raise _gg.ShapeError("tf.layers.conv2d_transpose: the input's height and width must be known")
            span = (k - 1) * d + 1
            sizes.append(size * s if self.padding == "SAME" else size * s + max(span - s, 0))
        batch = tf.shape(inputs)[0]
        shape = [batch, sizes[0], sizes[1], self.filters] if channels_last else [batch, self.filters, *sizes]
        strides = [1, *self.strides, 1] if channels_last else [1, 1, *self.strides]
        return _nn.conv2d_transpose(inputs, self.kernel, shape, strides, padding=self.padding,
                                    data_format=self.data_format, dilations=list(self.dilation_rate))


def dense(inputs: Any, units: int, activation: Any = None, use_bias: bool = True, kernel_initializer: Any = None,
          bias_initializer: Any = None, kernel_regularizer: Any = None, bias_regularizer: Any = None,
          activity_regularizer: Any = None, kernel_constraint: Any = None, bias_constraint: Any = None,
          trainable: bool = True, name: Optional[str] = None, reuse: Any = None) -> Tensor:
    """``tf.layers.dense``: a fully connected layer, variables ``<name>/kernel`` and ``<name>/bias``."""
    return Dense(units, activation, use_bias, kernel_initializer, bias_initializer, kernel_regularizer,
                 bias_regularizer, trainable=trainable, name=name, _reuse=reuse)(inputs)


def conv2d(inputs: Any, filters: int, kernel_size: Any, strides: Any = (1, 1), padding: str = "valid",
           data_format: str = "channels_last", dilation_rate: Any = (1, 1), activation: Any = None,
           use_bias: bool = True, kernel_initializer: Any = None, bias_initializer: Any = None,
           kernel_regularizer: Any = None, bias_regularizer: Any = None, activity_regularizer: Any = None,
           kernel_constraint: Any = None, bias_constraint: Any = None, trainable: bool = True,
           name: Optional[str] = None, reuse: Any = None) -> Tensor:
    """``tf.layers.conv2d``: variables ``<name>/kernel`` (kh, kw, in, filters) and ``<name>/bias``."""
    return Conv2D(filters, kernel_size, strides, padding, data_format, dilation_rate, activation, use_bias,
                  kernel_initializer, bias_initializer, kernel_regularizer, bias_regularizer, trainable=trainable,
                  name=name, _reuse=reuse)(inputs)


def conv1d(inputs: Any, filters: int, kernel_size: Any, strides: Any = 1, padding: str = "valid",
           data_format: str = "channels_last", dilation_rate: Any = 1, activation: Any = None, use_bias: bool = True,
           kernel_initializer: Any = None, bias_initializer: Any = None, kernel_regularizer: Any = None,
           bias_regularizer: Any = None, activity_regularizer: Any = None, kernel_constraint: Any = None,
           bias_constraint: Any = None, trainable: bool = True, name: Optional[str] = None,
           reuse: Any = None) -> Tensor:
    """``tf.layers.conv1d`` on (batch, width, channels)."""
    return Conv1D(filters, kernel_size, strides, padding, data_format, dilation_rate, activation, use_bias,
                  kernel_initializer, bias_initializer, kernel_regularizer, bias_regularizer, trainable=trainable,
                  name=name, _reuse=reuse)(inputs)


def conv2d_transpose(inputs: Any, filters: int, kernel_size: Any, strides: Any = (1, 1), padding: str = "valid",
                     data_format: str = "channels_last", activation: Any = None, use_bias: bool = True,
                     kernel_initializer: Any = None, bias_initializer: Any = None, kernel_regularizer: Any = None,
                     bias_regularizer: Any = None, activity_regularizer: Any = None, kernel_constraint: Any = None,
                     bias_constraint: Any = None, trainable: bool = True, name: Optional[str] = None,
                     reuse: Any = None) -> Tensor:
    """``tf.layers.conv2d_transpose``: 'same' gives ``size * stride``, 'valid' ``size * stride +
    max(kernel - stride, 0)``."""
    return Conv2DTranspose(filters, kernel_size, strides, padding, data_format, 1, activation, use_bias,
                           kernel_initializer, bias_initializer, kernel_regularizer, bias_regularizer,
                           trainable=trainable, name=name, _reuse=reuse)(inputs)


class _Pooling(Layer):
    rank = 2
    how = "max"

    def __init__(self, pool_size: Any, strides: Any, padding: str = "valid", data_format: str = "channels_last",
                 name: Optional[str] = None, **kwargs) -> None:
        super().__init__(name, **kwargs)
        self.pool_size, self.strides = _tuple(pool_size, self.rank), _tuple(strides, self.rank)
        self.padding, self.data_format = padding.upper(), _format(data_format, self.rank)

    def call(self, inputs: Any) -> Any:
        pool = _nn.max_pool if self.how == "max" else _nn.avg_pool
        if self.rank == 2:
            last = self.data_format == "NHWC"
            ksize = [1, *self.pool_size, 1] if last else [1, 1, *self.pool_size]
            strides = [1, *self.strides, 1] if last else [1, 1, *self.strides]
            return pool(inputs, ksize, strides, self.padding, data_format=self.data_format)
        x = _gg.expand_dims(inputs, 1 if self.data_format == "NWC" else 2)
        fmt = "NHWC" if self.data_format == "NWC" else "NCHW"
        ksize = [1, 1, self.pool_size[0], 1] if fmt == "NHWC" else [1, 1, 1, self.pool_size[0]]
        strides = [1, 1, self.strides[0], 1] if fmt == "NHWC" else [1, 1, 1, self.strides[0]]
        return _gg.squeeze(pool(x, ksize, strides, self.padding, data_format=fmt), 1 if fmt == "NHWC" else 2)


class MaxPooling2D(_Pooling):
    _default_name = "max_pooling2d"


class AveragePooling2D(_Pooling):
    _default_name = "average_pooling2d"
    how = "avg"


class MaxPooling1D(_Pooling):
    _default_name = "max_pooling1d"
    rank = 1


class AveragePooling1D(_Pooling):
    _default_name = "average_pooling1d"
    rank = 1
    how = "avg"


def _pooling(cls):
    def pooling(inputs: Any, pool_size: Any, strides: Any, padding: str = "valid",
                data_format: str = "channels_last", name: Optional[str] = None) -> Tensor:
        return cls(pool_size, strides, padding, data_format, name=name)(inputs)

    pooling.__name__ = cls._default_name
    pooling.__doc__ = f"``tf.layers.{cls._default_name}(inputs, pool_size, strides, padding='valid')``."
    return pooling


max_pooling2d = _pooling(MaxPooling2D)
average_pooling2d = _pooling(AveragePooling2D)
max_pooling1d = _pooling(MaxPooling1D)
average_pooling1d = _pooling(AveragePooling1D)


class Flatten(Layer):
    """(batch, ...) to (batch, everything else)."""

    _default_name = "flatten"

    def __init__(self, data_format: str = "channels_last", name: Optional[str] = None, **kwargs) -> None:
        super().__init__(name, **kwargs)

    def call(self, inputs: Any) -> Any:
        rest = inputs.shape[1:]
        if any(d is None for d in rest):
            tf = _tf()
            return tf.reshape(inputs, [tf.shape(inputs)[0], -1])
        return _gg.reshape(inputs, (-1, math.prod(rest)))


def flatten(inputs: Any, name: Optional[str] = None, data_format: str = "channels_last") -> Tensor:
    return Flatten(data_format, name=name)(inputs)


class Dropout(Layer):
    """Zero each element with probability ``rate`` when ``training`` (a Python bool or a boolean tensor:
    both results are computed and one selected)."""

    _default_name = "dropout"

    def __init__(self, rate: float = 0.5, noise_shape: Any = None, seed: Any = None, name: Optional[str] = None,
                 **kwargs) -> None:
        super().__init__(name, **kwargs)
        self.rate, self.noise_shape, self.seed = rate, noise_shape, seed

    def call(self, inputs: Any, training: Any = False) -> Any:
        if isinstance(training, Tensor):
            dropped = _nn.dropout(inputs, rate=self.rate, noise_shape=self.noise_shape, seed=self.seed)
            return _gg.where(_flag(training), dropped, inputs)
        if not training or (not isinstance(self.rate, Tensor) and float(self.rate) == 0.0):
            return _gg.identity(inputs)
        return _nn.dropout(inputs, rate=self.rate, noise_shape=self.noise_shape, seed=self.seed)


def dropout(inputs: Any, rate: float = 0.5, noise_shape: Any = None, seed: Any = None, training: Any = False,
            name: Optional[str] = None) -> Tensor:
    """``tf.layers.dropout``: note ``training=False`` by default (nothing dropped)."""
    return Dropout(rate, noise_shape, seed, name=name)(inputs, training=training)


class BatchNormalization(Layer):
    """Batch normalization over every axis but ``axis``: ``gamma``, ``beta`` (trainable) and
    ``moving_mean``, ``moving_variance`` (not trainable), updated by ``moving -= (moving - batch) * (1 -
    momentum)`` in ops added to ``tf.GraphKeys.UPDATE_OPS`` when training. As TensorFlow's fused kernel,
    a 4-D input's moving variance takes the batch's unbiased variance."""

    _default_name = "batch_normalization"

    def __init__(self, axis: int = -1, momentum: float = 0.99, epsilon: float = 1e-3, center: bool = True,
                 scale: bool = True, beta_initializer: Any = None, gamma_initializer: Any = None,
                 moving_mean_initializer: Any = None, moving_variance_initializer: Any = None,
                 beta_regularizer: Any = None, gamma_regularizer: Any = None, beta_constraint: Any = None,
                 gamma_constraint: Any = None, renorm: bool = False, renorm_clipping: Any = None,
                 renorm_momentum: float = 0.99, fused: Any = None, trainable: bool = True,
                 name: Optional[str] = None, virtual_batch_size: Any = None, adjustment: Any = None,
                 **kwargs) -> None:
        super().__init__(name, trainable, **kwargs)
        if renorm or virtual_batch_size or adjustment:
            raise NotImplementedError("batch_normalization: renorm, virtual_batch_size and adjustment are not "
                                      "supported")
        if isinstance(axis, (list, tuple)):
            if len(axis) != 1:
                raise NotImplementedError("batch_normalization: one axis only")
            axis = axis[0]
        self.axis, self.momentum, self.epsilon, self.center, self.scale = int(axis), momentum, epsilon, center, scale
        self.inits = (beta_initializer, gamma_initializer, moving_mean_initializer, moving_variance_initializer)
        self.regs = (beta_regularizer, gamma_regularizer)
        self.fused = fused

    def build(self, inputs: Any) -> None:
        tf = _tf()
        depth = inputs.shape[self.axis]
        if depth is None:
            raise _gg.ShapeError("tf.layers.batch_normalization: the size of the normalized axis must be known")
        beta_init, gamma_init, mean_init, var_init = self.inits
        self.gamma = self.add_variable("gamma", [depth], gamma_init or tf.ones_initializer(),
                                       self.regs[1]) if self.scale else None
        self.beta = self.add_variable("beta", [depth], beta_init or tf.zeros_initializer(),
                                      self.regs[0]) if self.center else None
        self.moving_mean = self.add_variable("moving_mean", [depth], mean_init or tf.zeros_initializer(),
                                             trainable=False)
        self.moving_variance = self.add_variable("moving_variance", [depth], var_init or tf.ones_initializer(),
                                                 trainable=False)

    def call(self, inputs: Any, training: Any = False) -> Any:
        tf = _tf()
        rank = len(inputs.shape)
        axis = self.axis % rank
        reduce = [a for a in range(rank) if a != axis]
        shape = [1] * rank
        shape[axis] = -1

        def per_channel(v):
            return v if v is None or axis == rank - 1 else _gg.reshape(v, tuple(shape))

        gamma, beta = per_channel(self.gamma), per_channel(self.beta)
        if training is False or training is None:
            return _nn.batch_normalization(inputs, per_channel(self.moving_mean), per_channel(self.moving_variance),
                                           beta, gamma, self.epsilon)
        mean, variance = _nn.moments(inputs, reduce)
        out = _nn.batch_normalization(inputs, per_channel(mean), per_channel(variance), beta, gamma, self.epsilon)
        if isinstance(training, Tensor):
            inference = _nn.batch_normalization(inputs, per_channel(self.moving_mean),
                                                per_channel(self.moving_variance), beta, gamma, self.epsilon)
            out = _gg.where(_flag(training), out, inference)
            decay = _gg.where(_flag(training), _gg.tensor(1.0 - self.momentum, dtype=inputs.dtype),
                              _gg.tensor(0.0, dtype=inputs.dtype))
        else:
            decay = 1.0 - self.momentum
        fused = self.fused is not False and rank == 4 and axis in (1, 3)
        if fused:  # TensorFlow's fused kernel hands the moving average the unbiased variance
            count = _gg.astype(_gg.prod(_gg.shape_of(inputs)), inputs.dtype) / float(inputs.shape[axis])
            variance = variance * count / _gg.maximum(count - 1.0, 1.0)
        with tf.name_scope("AssignMovingAvg"):
            update_mean = tf.assign_sub(self.moving_mean, (self.moving_mean - _gg.stop_gradient(mean)) * decay)
        with tf.name_scope("AssignMovingAvg_1"):
            update_var = tf.assign_sub(self.moving_variance,
                                       (self.moving_variance - _gg.stop_gradient(variance)) * decay)
        tf.add_to_collection(tf.GraphKeys.UPDATE_OPS, update_mean)
        tf.add_to_collection(tf.GraphKeys.UPDATE_OPS, update_var)
        self.updates = [update_mean, update_var]
        return out


def batch_normalization(inputs: Any, axis: int = -1, momentum: float = 0.99, epsilon: float = 1e-3,
                        center: bool = True, scale: bool = True, beta_initializer: Any = None,
                        gamma_initializer: Any = None, moving_mean_initializer: Any = None,
                        moving_variance_initializer: Any = None, beta_regularizer: Any = None,
                        gamma_regularizer: Any = None, beta_constraint: Any = None, gamma_constraint: Any = None,
                        training: Any = False, trainable: bool = True, name: Optional[str] = None,
                        reuse: Any = None, renorm: bool = False, renorm_clipping: Any = None,
                        renorm_momentum: float = 0.99, fused: Any = None, virtual_batch_size: Any = None,
                        adjustment: Any = None) -> Tensor:
    """``tf.layers.batch_normalization``: ``training`` a Python bool or a boolean tensor; run the ops of
    ``tf.get_collection(tf.GraphKeys.UPDATE_OPS)`` with each training step to update the moving averages."""
    layer = BatchNormalization(axis, momentum, epsilon, center, scale, beta_initializer, gamma_initializer,
                               moving_mean_initializer, moving_variance_initializer, beta_regularizer,
                               gamma_regularizer, renorm=renorm, fused=fused, trainable=trainable, name=name,
                               virtual_batch_size=virtual_batch_size, adjustment=adjustment, _reuse=reuse)
    return layer(inputs, training=training)


BatchNorm = BatchNormalization
Convolution1D, Convolution2D, Convolution2DTranspose = Conv1D, Conv2D, Conv2DTranspose
MaxPool2D, AveragePool2D = MaxPooling2D, AveragePooling2D
