"""``tf.nn``: activations, convolution and pooling (NHWC by default, "SAME"/"VALID" padding), dropout,
cross-entropies with logits, moments and batch normalization — graphgrad's ops under TF1's names and
argument conventions.

Convolutions and pooling transpose NHWC to graphgrad's NCHW (and HWIO filters to OIHW) around
graphgrad's ``conv2d``/``max_pool2d``/``avg_pool2d``; "SAME" pads as TensorFlow does (the extra row or
column, when the padding is odd, goes after).
"""
from __future__ import annotations

import math
from typing import Any, Optional

import graphgrad as _gg
from graphgrad.compat.tf._common import as_axis, as_dtype, in_graph, need_rank

Tensor = _gg.Tensor


def _same(fn):
    return in_graph(lambda *args, **kwargs: fn(*args, **kwargs))


relu = _same(_gg.relu)
relu6 = _same(_gg.relu6)
elu = _same(_gg.elu)
selu = _same(_gg.selu)
softplus = _same(_gg.softplus)
softsign = _same(_gg.softsign)
sigmoid = _same(_gg.sigmoid)
tanh = _same(_gg.tanh)
swish = silu = _same(_gg.silu)
gelu = _same(_gg.gelu)


@in_graph
def leaky_relu(features: Any, alpha: float = 0.2) -> Tensor:
    return _gg.leaky_relu(features, alpha)


@in_graph
def softmax(logits: Any, axis: Optional[int] = None, dim: Optional[int] = None) -> Tensor:
    axis = dim if axis is None else axis
    return _gg.softmax(logits, axis=-1 if axis is None else int(axis))


@in_graph
def log_softmax(logits: Any, axis: Optional[int] = None, dim: Optional[int] = None) -> Tensor:
    axis = dim if axis is None else axis
    return _gg.log_softmax(logits, axis=-1 if axis is None else int(axis))


@in_graph
def dropout(x: Any, keep_prob: Any = None, noise_shape: Any = None, seed: Any = None, rate: Any = None) -> Tensor:
    """Zero each element with probability ``rate`` (TF2) or ``1 - keep_prob`` (TF1) and scale the rest by
    ``1 / keep_prob``; drawn anew on every run. ``keep_prob`` may be a placeholder (1.0 to evaluate).
    With ``noise_shape`` (broadcastable to ``x``'s shape; it may hold tensors such as ``tf.shape(x)[0]``)
    one draw is shared along its dimensions of size 1."""
    if (keep_prob is None) == (rate is None):
        raise ValueError("dropout: give exactly one of keep_prob and rate")
    generator = None if seed is None else _gg.Generator(seed)
    if noise_shape is None and not isinstance(keep_prob, Tensor) and not isinstance(rate, Tensor):
        p = float(rate) if rate is not None else 1.0 - float(keep_prob)
        return _gg.dropout(x, p=p, training=True, generator=generator) if p > 0 else _gg.identity(x)
    keep = keep_prob if keep_prob is not None else 1.0 - rate
    keep = _gg.astype(keep, x.dtype) if isinstance(keep, Tensor) else _gg.tensor(float(keep), dtype=x.dtype)
    keep = _gg.reshape(keep, ())  # a scalar, as TensorFlow requires: x keeps its shape
    if noise_shape is None:
        noise = _gg.rand_like(x, generator=generator)
    else:
        from graphgrad.compat.tf import random_uniform

        noise = _gg.astype(random_uniform(noise_shape, seed=seed), x.dtype)
    mask = _gg.astype(noise < keep, x.dtype)
    return x * mask / keep


def _pair(value: Any, data_format: str, what: str) -> tuple:
    """TF's 4-element (or 1-, 2-element) strides/ksize/dilations as graphgrad's (h, w)."""
    if isinstance(value, int):
        return value, value
    value = [int(v) for v in value]
    if len(value) == 1:
        return value[0], value[0]
    if len(value) == 2:
        return value[0], value[1]
    if len(value) == 4:
        return (value[1], value[2]) if data_format.startswith("NH") else (value[2], value[3])
    raise ValueError(f"{what}: expected 1, 2 or 4 values, got {value}")


def _pads(size: Optional[int], kernel: int, stride: int, dilation: int, padding: str, what: str) -> tuple:
    """(before, after) padding of one spatial dimension, as TensorFlow computes "SAME"."""
    if padding == "VALID":
        return 0, 0
    if padding != "SAME":
        raise ValueError(f"{what}: padding must be 'SAME' or 'VALID', got {padding!r}")
    span = (kernel - 1) * dilation + 1
    if size is None:
        if stride != 1:
            raise _gg.ShapeError(f"{what}: 'SAME' padding with stride {stride} needs the spatial size, which is "
                                 "unknown; give the input's height and width")
        total = span - 1
    else:
        total = max((math.ceil(size / stride) - 1) * stride + span - size, 0)
    return total // 2, total - total // 2


def _to_nchw(x: Any, data_format: str) -> Any:
    return x if data_format == "NCHW" else _gg.permute(x, 0, 3, 1, 2)


def _from_nchw(y: Any, data_format: str) -> Any:
    return y if data_format == "NCHW" else _gg.permute(y, 0, 2, 3, 1)


def _check_format(data_format: str, what: str) -> str:
    if data_format not in ("NHWC", "NCHW"):
        raise ValueError(f"{what}: data_format must be 'NHWC' or 'NCHW', got {data_format!r}")
    return data_format


def _padded(x: Any, pads: list, value: float) -> tuple:
    """``x`` (NCHW) padded by ``pads`` [(before, after)] * 2 where they are uneven; else the symmetric
    padding to give the op itself."""
    if all(b == a for b, a in pads):
        return x, tuple(b for b, _ in pads)
    return _gg.pad(x, [(0, 0), (0, 0)] + [tuple(p) for p in pads], constant_values=value), (0, 0)


@in_graph
def conv2d(input: Any, filter: Any = None, strides: Any = None, padding: Any = None, use_cudnn_on_gpu: Any = True,
           data_format: str = "NHWC", dilations: Any = None, filters: Any = None) -> Tensor:
    """2-D convolution of ``input`` (N, H, W, C) with ``filter`` (kh, kw, C_in, C_out)."""
    filter = filters if filter is None else filter
    need_rank("nn.conv2d", input, filter)
    data_format = _check_format(data_format, "conv2d")
    stride = _pair(strides if strides is not None else 1, data_format, "conv2d strides")
    dilation = _pair(dilations if dilations is not None else 1, data_format, "conv2d dilations")
    x = _to_nchw(input, data_format)
    w = _gg.permute(filter, 3, 2, 0, 1)  # HWIO -> OIHW
    kh, kw = filter.shape[0], filter.shape[1]
    pads = [_pads(x.shape[2], kh, stride[0], dilation[0], padding, "conv2d"),
            _pads(x.shape[3], kw, stride[1], dilation[1], padding, "conv2d")]
    x, symmetric = _padded(x, pads, 0.0)
    return _from_nchw(_gg.conv2d(x, w, stride=stride, padding=symmetric, dilation=dilation), data_format)


def _pool(value: Any, ksize: Any, strides: Any, padding: str, data_format: str, what: str) -> tuple:
    need_rank(f"nn.{what}", value)
    data_format = _check_format(data_format, what)
    kernel = _pair(ksize, data_format, f"{what} ksize")
    stride = _pair(strides, data_format, f"{what} strides")
    x = _to_nchw(value, data_format)
    pads = [_pads(x.shape[2], kernel[0], stride[0], 1, padding, what),
            _pads(x.shape[3], kernel[1], stride[1], 1, padding, what)]
    return x, kernel, stride, pads, data_format


@in_graph
def max_pool(value: Any, ksize: Any, strides: Any, padding: str, data_format: str = "NHWC", input: Any = None
             ) -> Tensor:
    """Max over ``ksize`` windows (``[1, kh, kw, 1]`` in NHWC); "SAME" pads with -inf."""
    value = input if value is None else value
    x, kernel, stride, pads, data_format = _pool(value, ksize, strides, padding, data_format, "max_pool")
    if any(b or a for b, a in pads):
        x = _gg.pad(x, [(0, 0), (0, 0)] + [tuple(p) for p in pads], constant_values=-math.inf)
    return _from_nchw(_gg.max_pool2d(x, kernel, stride), data_format)


@in_graph
def avg_pool(value: Any, ksize: Any, strides: Any, padding: str, data_format: str = "NHWC", input: Any = None
             ) -> Tensor:
    """Mean over ``ksize`` windows; with "SAME" the padding is not counted (TensorFlow's rule)."""
    value = input if value is None else value
    x, kernel, stride, pads, data_format = _pool(value, ksize, strides, padding, data_format, "avg_pool")
    if not any(b or a for b, a in pads):
        return _from_nchw(_gg.avg_pool2d(x, kernel, stride), data_format)
    widths = [(0, 0), (0, 0)] + [tuple(p) for p in pads]
    if x.shape[2] is None or x.shape[3] is None:
        raise _gg.ShapeError("avg_pool: 'SAME' padding needs the input's height and width")
    counts = _gg.avg_pool2d(_gg.pad(_gg.ones((1, 1, x.shape[2], x.shape[3]), dtype=x.dtype), widths), kernel, stride)
    return _from_nchw(_gg.avg_pool2d(_gg.pad(x, widths), kernel, stride) / counts, data_format)


max_pool2d, avg_pool2d = max_pool, avg_pool


@in_graph
def bias_add(value: Any, bias: Any, data_format: Optional[str] = None) -> Tensor:
    if data_format in ("NCHW", "NCW", "NCDHW"):
        return value + _gg.reshape(bias, (-1,) + (1,) * (len(value.shape) - 2))
    return value + bias


@in_graph
def xw_plus_b(x: Any, weights: Any, biases: Any) -> Tensor:
    return _gg.matmul(x, weights) + biases


@in_graph
def l2_loss(t: Any) -> Tensor:
    """``sum(t ** 2) / 2``."""
    return _gg.sum(_gg.square(t)) / 2


@in_graph
def l2_normalize(x: Any, axis: Any = None, epsilon: float = 1e-12, dim: Any = None) -> Tensor:
    axis = dim if axis is None else axis
    squares = _gg.sum(_gg.square(x), axis=as_axis(axis), keepdims=True)
    return x * _gg.rsqrt(_gg.maximum(squares, epsilon))


@in_graph
def embedding_lookup(params: Any, ids: Any, partition_strategy: str = "mod", validate_indices: Any = True,
                     max_norm: Any = None) -> Tensor:
    """Rows ``ids`` of ``params`` (a tensor, or a list holding one)."""
    if isinstance(params, (list, tuple)):
        if len(params) != 1:
            raise NotImplementedError("embedding_lookup: partitioned params (a list of several) are not supported")
        params = params[0]
    need_rank("nn.embedding_lookup", params)
    return _gg.embedding(_gg.astype(ids, _gg.int64), params)


@in_graph
def softmax_cross_entropy_with_logits_v2(_sentinel: Any = None, labels: Any = None, logits: Any = None,
                                         dim: int = -1, axis: Any = None) -> Tensor:
    """``-sum(labels * log_softmax(logits))`` along the class axis, one value per example; gradients
    reach both ``labels`` and ``logits``."""
    if _sentinel is not None:
        raise ValueError("softmax_cross_entropy_with_logits: pass labels= and logits= by name")
    axis = dim if axis is None else axis
    return -_gg.sum(labels * _gg.log_softmax(logits, axis=axis), axis=axis)


@in_graph
def softmax_cross_entropy_with_logits(_sentinel: Any = None, labels: Any = None, logits: Any = None,
                                      dim: int = -1, axis: Any = None) -> Tensor:
    """TF1's version: as ``_v2``, but no gradient reaches ``labels``."""
    if _sentinel is not None:
        raise ValueError("softmax_cross_entropy_with_logits: pass labels= and logits= by name")
    return softmax_cross_entropy_with_logits_v2(labels=_gg.stop_gradient(labels), logits=logits, dim=dim, axis=axis)


@in_graph
def sparse_softmax_cross_entropy_with_logits(_sentinel: Any = None, labels: Any = None, logits: Any = None
                                             ) -> Tensor:
    """Cross-entropy with integer class ``labels`` (shape of ``logits`` without its last axis)."""
    if _sentinel is not None:
        raise ValueError("sparse_softmax_cross_entropy_with_logits: pass labels= and logits= by name")
    need_rank("nn.sparse_softmax_cross_entropy_with_logits", logits)
    labels = _gg.astype(labels, _gg.int64)
    if len(logits.shape) > 2:
        logits = _gg.moveaxis(logits, -1, 1)
    return _gg.cross_entropy(logits, labels, reduction="none")


@in_graph
def sigmoid_cross_entropy_with_logits(_sentinel: Any = None, labels: Any = None, logits: Any = None) -> Tensor:
    """Elementwise ``max(x, 0) - x * z + log(1 + exp(-|x|))`` for logits ``x`` and labels ``z``."""
    if _sentinel is not None:
        raise ValueError("sigmoid_cross_entropy_with_logits: pass labels= and logits= by name")
    need_rank("nn.sigmoid_cross_entropy_with_logits", logits)
    return _gg.binary_cross_entropy_with_logits(logits, _gg.astype(labels, logits.dtype), reduction="none")


@in_graph
def weighted_cross_entropy_with_logits(labels: Any = None, logits: Any = None, pos_weight: Any = None,
                                       targets: Any = None) -> Tensor:
    labels = targets if labels is None else labels
    need_rank("nn.weighted_cross_entropy_with_logits", logits)
    return _gg.binary_cross_entropy_with_logits(logits, _gg.astype(labels, logits.dtype), pos_weight=pos_weight,
                                                reduction="none")


def moments(x: Any, axes: Any, shift: Any = None, name: Optional[str] = None, keep_dims: Any = None,
            keepdims: Any = None) -> tuple:
    """``(mean, variance)`` over ``axes`` (the population variance, as TensorFlow)."""
    keep = bool(keepdims if keepdims is not None else keep_dims)
    with _gg.get_default_graph().as_default():
        axes = as_axis(axes)
        mean = _gg.mean(x, axis=axes, keepdims=True)
        variance = _gg.mean(_gg.square(x - _gg.stop_gradient(mean)), axis=axes, keepdims=True)
        if not keep:
            need_rank("nn.moments (without keep_dims)", x)
            mean, variance = _gg.squeeze(mean, axes), _gg.squeeze(variance, axes)
    return mean, variance


@in_graph
def batch_normalization(x: Any, mean: Any, variance: Any, offset: Any, scale: Any, variance_epsilon: float
                        ) -> Tensor:
    """``(x - mean) / sqrt(variance + eps) * scale + offset`` (``offset``/``scale`` may be None)."""
    inv = _gg.rsqrt(variance + variance_epsilon)
    if scale is not None:
        inv = inv * scale
    shift = -mean * inv if offset is None else offset - mean * inv
    return x * _gg.astype(inv, x.dtype) + _gg.astype(shift, x.dtype)


def top_k(input: Any, k: int = 1, sorted: bool = True, name: Optional[str] = None):
    """``(values, indices)`` of the ``k`` largest along the last axis (indices int32)."""
    need_rank("nn.top_k", input)
    with _gg.get_default_graph().as_default():
        values, indices = _gg.topk(input, int(k), dim=-1, sorted=sorted)
        return TopKV2(values, _gg.astype(indices, _gg.int32))  # (TensorFlow's indices are int32)


class TopKV2(tuple):
    """``top_k``'s result: ``(values, indices)``, also by name."""

    def __new__(cls, values: Tensor, indices: Tensor) -> "TopKV2":
        return super().__new__(cls, (values, indices))

    values = property(lambda self: self[0])
    indices = property(lambda self: self[1])


@in_graph
def in_top_k(predictions: Any, targets: Any, k: int) -> Tensor:
    """Whether each target's prediction is among the ``k`` largest of its row."""
    target_values = _gg.take_along_axis(predictions, _gg.expand_dims(_gg.astype(targets, _gg.int64), -1), -1)
    return _gg.sum(_gg.astype(predictions > target_values, _gg.int32), axis=-1) < k


def zero_fraction(value: Any, name: Optional[str] = None) -> Tensor:
    with _gg.get_default_graph().as_default():
        return _gg.mean(_gg.astype(_gg.equal(value, 0), as_dtype("float32")))


@in_graph
def conv2d_transpose(value: Any = None, filter: Any = None, output_shape: Any = None, strides: Any = None,
                     padding: str = "SAME", data_format: str = "NHWC", input: Any = None, filters: Any = None,
                     dilations: Any = None) -> Tensor:
    """The transpose (input gradient) of ``conv2d``: ``filter`` is (kh, kw, out_channels, in_channels) and
    ``output_shape`` the shape of the result (the input of the matching ``conv2d``)."""
    value = input if value is None else value
    filter = filters if filter is None else filter
    need_rank("nn.conv2d_transpose", value, filter)
    data_format = _check_format(data_format, "conv2d_transpose")
    stride = _pair(strides if strides is not None else 1, data_format, "conv2d_transpose strides")
    dilation = _pair(dilations if dilations is not None else 1, data_format, "conv2d_transpose dilations")
    x = _to_nchw(value, data_format)
    if isinstance(output_shape, Tensor) and output_shape.is_symbolic:  # known when run: the usual sizes
        out_hw = [None, None]
    else:
        out_hw = [output_shape[1], output_shape[2]] if data_format == "NHWC" else [output_shape[2], output_shape[3]]
        out_hw = [None if isinstance(d, Tensor) and d.is_symbolic else int(d.numpy()) if isinstance(d, Tensor)
                  else int(d) for d in out_hw]
    for axis, (k, s, d) in enumerate(zip(filter.shape[:2], stride, dilation)):
        if out_hw[axis] is None:  # what TensorFlow's conv2d of this output would take back to the input's size
            if x.shape[2 + axis] is None:
                raise _gg.ShapeError("conv2d_transpose: give output_shape's height and width as numbers (the "
                                     "input's are unknown)")
            out_hw[axis] = x.shape[2 + axis] * s if padding == "SAME" else (x.shape[2 + axis] - 1) * s + (k - 1) * d + 1
    w = _gg.permute(filter, 3, 2, 0, 1)  # (kh, kw, out, in) -> (in, out, kh, kw)
    y = _gg.conv_transpose2d(x, w, stride=stride, dilation=dilation)
    index = [slice(None), slice(None)]
    widths = [(0, 0), (0, 0)]
    for axis, (size, k, s, d) in enumerate(zip(out_hw, filter.shape[:2], stride, dilation)):
        before, _ = _pads(size, k, s, d, padding, "conv2d_transpose")
        full = y.shape[2 + axis]
        index.append(slice(before, min(before + size, full)))
        widths.append((0, max(before + size - full, 0)))
    y = y[tuple(index)]
    if any(a for _, a in widths):
        y = _gg.pad(y, widths)
    return _from_nchw(y, data_format)


@in_graph
def depthwise_conv2d(input: Any, filter: Any, strides: Any, padding: str, rate: Any = None,
                     data_format: str = "NHWC", dilations: Any = None) -> Tensor:
    """Each input channel convolved with its own ``channel_multiplier`` filters: ``filter`` is (kh, kw,
    in_channels, channel_multiplier); output channel ``c * multiplier + m``."""
    need_rank("nn.depthwise_conv2d", input, filter)
    data_format = _check_format(data_format, "depthwise_conv2d")
    stride = _pair(strides, data_format, "depthwise_conv2d strides")
    dilation = _pair(rate if rate is not None else dilations if dilations is not None else 1, "NHWC"
                     if rate is not None else data_format, "depthwise_conv2d rate")
    kh, kw, channels, multiplier = filter.shape
    x = _to_nchw(input, data_format)
    w = _gg.reshape(_gg.permute(_gg.reshape(filter, (kh, kw, channels * multiplier)), 2, 0, 1),
                    (channels * multiplier, 1, kh, kw))
    pads = [_pads(x.shape[2], kh, stride[0], dilation[0], padding, "depthwise_conv2d"),
            _pads(x.shape[3], kw, stride[1], dilation[1], padding, "depthwise_conv2d")]
    x, symmetric = _padded(x, pads, 0.0)
    y = _gg.conv2d(x, w, stride=stride, padding=symmetric, dilation=dilation, groups=channels)
    return _from_nchw(y, data_format)


@in_graph
def separable_conv2d(input: Any, depthwise_filter: Any, pointwise_filter: Any, strides: Any, padding: str,
                     rate: Any = None, data_format: str = "NHWC", dilations: Any = None) -> Tensor:
    """``depthwise_conv2d`` then a 1x1 ``conv2d`` with ``pointwise_filter`` (1, 1, in * multiplier, out)."""
    y = depthwise_conv2d(input, depthwise_filter, strides, padding, rate=rate, data_format=data_format,
                         dilations=dilations)
    return conv2d(y, pointwise_filter, strides=[1, 1, 1, 1], padding="VALID", data_format=data_format)


def _one(value: Any, data_format: str) -> int:
    """TF's 1-D stride or dilation (an int, or 1 or 3 values) as an int."""
    if isinstance(value, int):
        return value
    value = [int(v) for v in value]
    return value[0] if len(value) == 1 else value[1 if data_format == "NWC" else 2]


@in_graph
def conv1d(value: Any = None, filters: Any = None, stride: Any = 1, padding: str = "VALID",
           use_cudnn_on_gpu: Any = None, data_format: str = "NWC", input: Any = None, dilations: Any = None
           ) -> Tensor:
    """1-D convolution of ``value`` (N, W, C) with ``filters`` (kw, C_in, C_out), as a ``conv2d`` of height 1."""
    value = input if value is None else value
    need_rank("nn.conv1d", value, filters)
    if data_format not in ("NWC", "NCW"):
        raise ValueError(f"conv1d: data_format must be 'NWC' or 'NCW', got {data_format!r}")
    stride, dilation = _one(stride, data_format), _one(1 if dilations is None else dilations, data_format)
    fmt = "NHWC" if data_format == "NWC" else "NCHW"
    x = _gg.expand_dims(value, 1 if fmt == "NHWC" else 2)
    w = _gg.expand_dims(filters, 0)
    y = conv2d(x, w, strides=[1, stride], padding=padding, data_format=fmt, dilations=[1, dilation])
    return _gg.squeeze(y, 1 if fmt == "NHWC" else 2)


@in_graph
def relu_layer(x: Any, weights: Any, biases: Any) -> Tensor:
    """``relu(x @ weights + biases)``."""
    return _gg.relu(_gg.matmul(x, weights) + biases)


from graphgrad.compat.tf._sampled import (log_uniform_candidate_sampler, nce_loss,  # noqa: E402
                                          sampled_softmax_loss)

from graphgrad.compat.tf._segments import depth_to_space, local_response_normalization, lrn, space_to_depth  # noqa: E402,F401,I001
