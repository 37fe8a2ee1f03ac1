"""Per-sample normalizations of feature maps, as PyTorch's ``F.instance_norm`` and
``F.local_response_norm``: compositions of reductions, slices and elementwise ops (so their gradients,
graph mode and ONNX export come from those ops)."""
from __future__ import annotations

from typing import Optional

from graphgrad.core.op import as_tensor_args
from graphgrad.core.tensor import Tensor
from graphgrad.errors import ShapeError
from graphgrad.ops.nn import _assign_running, _channel_view, _check_param, _moments, _update_running
from graphgrad.ops.reduce import mean as _mean
from graphgrad.ops.shape import pad as _pad
from graphgrad.ops.unary import sqrt


def instance_norm(input, running_mean: Optional[Tensor] = None, running_var: Optional[Tensor] = None,
                  weight=None, bias=None, use_input_stats: bool = True, momentum: float = 0.1,
                  eps: float = 1e-5) -> Tensor:
    """Normalize each channel of each sample over its spatial axes, as PyTorch's ``F.instance_norm``.

    Args:
        input: ``(N, C, *S)``.
        running_mean, running_var: ``(C,)`` or ``None``; with ``use_input_stats`` they are updated in
            place with the batch average of the per-instance mean and unbiased variance
            (``r = (1 - momentum) r + momentum * stat``); without it they normalize instead.
        weight, bias: ``(C,)`` or ``None`` (scale and shift per channel).
        use_input_stats: normalize with each instance's own statistics.

    Returns:
        ``(N, C, *S)``.

    Examples:
        >>> gg.instance_norm(gg.randn(2, 3, 8, 8)).shape
        (2, 3, 8, 8)
    """
    x, running_mean, running_var, weight, bias = as_tensor_args(input, running_mean, running_var, weight, bias)
    if x.ndim < 3:
        raise ShapeError(f"instance_norm: expected input of shape (N, C, *spatial), got {tuple(x.shape)}")
    c = x.shape[1]
    for name, p in (("running_mean", running_mean), ("running_var", running_var), ("weight", weight),
                    ("bias", bias)):
        _check_param("instance_norm", name, p, (c,))
    if use_input_stats:
        mean, centered, var, n = _moments(x, tuple(range(2, x.ndim)), "instance_norm")
        if running_mean is not None or running_var is not None:
            # the batch average of the per-instance statistics, the variance unbiased per instance
            batch_mean = _mean(mean, axis=0)
            batch_var = _mean(var, axis=0) * (n / max(n - 1, 1))
            update = _assign_running if x.is_symbolic else _update_running
            update(running_mean, batch_mean, momentum)
            update(running_var, batch_var, momentum)
        y = centered * (1.0 / sqrt(var + eps))
    else:
        if running_mean is None or running_var is None:
            raise ValueError("instance_norm: use_input_stats=False needs running_mean and running_var")
        y = (x - _channel_view(running_mean, x.ndim)) * (1.0 / sqrt(_channel_view(running_var, x.ndim) + eps))
    if weight is not None:
        y = y * _channel_view(weight, x.ndim)
    if bias is not None:
        y = y + _channel_view(bias, x.ndim)
    return y


def local_response_norm(input, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1.0) -> Tensor:
    """Local response normalization across channels, as PyTorch's ``F.local_response_norm``:
    ``y_c = x_c / (k + alpha / size * sum_{c'} x_{c'}^2)^beta`` with ``c'`` over the ``size`` channels
    from ``c - size // 2`` to ``c + (size - 1) // 2`` (missing ones count as zeros).

    Args:
        input: ``(N, C, *)`` with at least one axis after the channels.

    Examples:
        >>> gg.local_response_norm(gg.randn(2, 8, 5, 5), 3).shape
        (2, 8, 5, 5)
    """
    (x,) = as_tensor_args(input)
    if x.ndim < 3:
        raise ShapeError(f"local_response_norm: expected input of shape (N, C, *), got {tuple(x.shape)}")
    c, size = x.shape[1], int(size)
    if c is None:
        raise ShapeError(f"local_response_norm: the channel count must be known, got input shape {tuple(x.shape)}")
    pairs = [(0, 0)] * x.ndim
    pairs[1] = (size // 2, (size - 1) // 2)
    squares = _pad(x * x, tuple(pairs))
    total = None
    for offset in range(size):  # the sum over each channel window, one shifted slice per offset
        part = squares[:, offset:offset + c]
        total = part if total is None else total + part
    return x / (total * (alpha / size) + k) ** beta
