"""Normalization layers: BatchNorm1d, BatchNorm2d, LayerNorm, GroupNorm (PyTorch's parameters,
buffers and defaults)."""
from __future__ import annotations

from typing import Optional, Sequence, Union

from graphgrad.core.autograd import no_grad
from graphgrad.core.creation import empty, ones, tensor, zeros
from graphgrad.core.tensor import Tensor
from graphgrad.errors import GraphError, ShapeError, check_count
from graphgrad.nn import init
from graphgrad.nn.module import Module
from graphgrad.nn.parameter import Buffer, Parameter
from graphgrad.ops.nn import batch_norm, group_norm, layer_norm

__all__ = ["BatchNorm1d", "BatchNorm2d", "LayerNorm", "GroupNorm"]


class _BatchNorm(Module):
    """Batch normalization over every axis but the channel axis 1 (see BatchNorm1d/BatchNorm2d)."""

    ranks: tuple = ()

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: Optional[float] = 0.1, affine: bool = True,
                 track_running_stats: bool = True, dtype=None, device: Optional[str] = None, *, bias: bool = True) -> None:
        super().__init__()
        self.num_features = check_count(type(self).__name__, "num_features", num_features)
        self.eps, self.momentum = float(eps), momentum
        self.affine, self.track_running_stats = bool(affine), bool(track_running_stats)
        if self.affine:
            self.weight = Parameter(empty(self.num_features, dtype=dtype, device=device))
            if bias:
                self.bias = Parameter(empty(self.num_features, dtype=dtype, device=device))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        if self.track_running_stats:
            # Buffers (Variables) so that compiled training steps update them with assign nodes
            self.register_buffer("running_mean", Buffer(zeros(self.num_features, dtype=dtype, device=device)))
            self.register_buffer("running_var", Buffer(ones(self.num_features, dtype=dtype, device=device)))
            self.register_buffer("num_batches_tracked", Buffer(tensor(0, dtype="int64", device=device)))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)
        self.reset_parameters()

    def reset_running_stats(self) -> None:
        """Running mean 0, running variance 1, no batches tracked."""
        if self.track_running_stats:
            init.zeros_(self.running_mean)
            init.ones_(self.running_var)
            init.zeros_(self.num_batches_tracked)

    def reset_parameters(self) -> None:
        """Reset the running statistics, weight to 1 and bias to 0."""
        self.reset_running_stats()
        if self.affine:
            init.ones_(self.weight)
            if self.bias is not None:
                init.zeros_(self.bias)

    def _check_input(self, input: Tensor) -> None:
        if len(input.shape) not in self.ranks:
            want = " or ".join(f"{r}-D" for r in self.ranks)
            raise ShapeError(f"{type(self).__name__}: expected {want} input, got shape {tuple(input.shape)}")
        c = input.shape[1]
        if c is not None and c != self.num_features:
            raise ShapeError(f"{type(self).__name__}({self.num_features}): input has {c} channels (shape "
                             f"{tuple(input.shape)})")

    def forward(self, input: Tensor) -> Tensor:
        self._check_input(input)
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats and input.is_symbolic:
            if self.momentum is None:
                raise GraphError(f"{type(self).__name__}(momentum=None) keeps a cumulative average whose factor "
                                 "depends on a count known only at run time: give a momentum to use it in a graph")
            self.num_batches_tracked.assign_add(1)
        elif self.training and self.track_running_stats:
            with no_grad():
                self.num_batches_tracked._data += 1
            if self.momentum is None:  # cumulative moving average
                factor = 1.0 / float(self.num_batches_tracked.item())
        # batch statistics in training, and in eval when there are no running statistics
        use_batch = self.training or (self.running_mean is None and self.running_var is None)
        track = not self.training or self.track_running_stats
        return batch_norm(input, self.running_mean if track else None, self.running_var if track else None,
                          self.weight, self.bias, use_batch, factor, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, affine={self.affine}, "
                f"bias={self.bias is not None}, track_running_stats={self.track_running_stats}")


class BatchNorm1d(_BatchNorm):
    """Batch normalization of ``(N, C)`` or ``(N, C, L)`` inputs, per channel.

    Args:
        num_features: C.
        eps: added to the variance.
        momentum: running-stat update ``r = (1 - momentum) r + momentum * batch_stat`` (``None``: a
            cumulative average); the running variance uses the unbiased batch variance.
        affine: learn ``weight`` (init 1) and ``bias`` (init 0).
        track_running_stats: keep ``running_mean``, ``running_var`` and ``num_batches_tracked``
            buffers and normalize with them in eval mode (else batch statistics always).

    Training mode normalizes with batch statistics and updates the running ones (in a graph or a
    ``gg.function``, with assign nodes); eval mode uses the running statistics.

    Shapes: (N, C) or (N, C, L) -> same.

    Examples:
        >>> bn = gg.nn.BatchNorm1d(100)
        >>> bn(gg.randn(20, 100)).shape
        (20, 100)
    """

    ranks = (2, 3)


class BatchNorm2d(_BatchNorm):
    """Batch normalization of ``(N, C, H, W)`` inputs, per channel (see :class:`BatchNorm1d`).

    Shapes: (N, C, H, W) -> same.

    Examples:
        >>> gg.nn.BatchNorm2d(16)(gg.randn(4, 16, 8, 8)).shape
        (4, 16, 8, 8)
    """

    ranks = (4,)


class LayerNorm(Module):
    """Normalize over the trailing ``normalized_shape`` dimensions of each sample, then scale and shift.

    Args:
        normalized_shape: int or tuple: the trailing dimensions.
        eps: added to the variance.
        elementwise_affine: learn ``weight`` (init 1) and ``bias`` (init 0) of shape ``normalized_shape``.
        bias: learn the bias (with ``elementwise_affine``).

    Shapes: (*, *normalized_shape) -> same.

    Examples:
        >>> gg.nn.LayerNorm(10)(gg.randn(20, 5, 10)).shape
        (20, 5, 10)
    """

    def __init__(self, normalized_shape: Union[int, Sequence[int]], eps: float = 1e-5,
                 elementwise_affine: bool = True, bias: bool = True, dtype=None, device: Optional[str] = None) -> None:
        super().__init__()
        if isinstance(normalized_shape, int):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(check_count("LayerNorm", "normalized_shape", s) for s in normalized_shape)
        self.eps, self.elementwise_affine = float(eps), bool(elementwise_affine)
        if self.elementwise_affine:
            self.weight = Parameter(empty(*self.normalized_shape, dtype=dtype, device=device))
            if bias:
                self.bias = Parameter(empty(*self.normalized_shape, dtype=dtype, device=device))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        if self.weight is not None:
            init.ones_(self.weight)
        if self.bias is not None:
            init.zeros_(self.bias)

    def forward(self, input: Tensor) -> Tensor:
        return layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}, "
                f"bias={self.bias is not None}")


class GroupNorm(Module):
    """Normalize each of ``num_groups`` groups of channels per sample, then scale and shift per channel.

    Args:
        num_groups: groups (``num_channels`` must be divisible by it).
        num_channels: C.
        eps: added to the variance.
        affine: learn ``weight`` (init 1) and ``bias`` (init 0) of shape (C,).

    Shapes: (N, C, *) -> same.

    Examples:
        >>> gg.nn.GroupNorm(3, 6)(gg.randn(20, 6, 10, 10)).shape
        (20, 6, 10, 10)
    """

    def __init__(self, num_groups: int, num_channels: int, eps: float = 1e-5, affine: bool = True, dtype=None,
                 device: Optional[str] = None, *, bias: bool = True) -> None:
        super().__init__()
        num_groups = check_count("GroupNorm", "num_groups", num_groups, least=1)
        num_channels = check_count("GroupNorm", "num_channels", num_channels)
        if num_channels % num_groups:
            raise ValueError(f"GroupNorm: num_channels ({num_channels}) must be divisible by num_groups "
                             f"({num_groups})")
        self.num_groups, self.num_channels = int(num_groups), int(num_channels)
        self.eps, self.affine = float(eps), bool(affine)
        if self.affine:
            self.weight = Parameter(empty(self.num_channels, dtype=dtype, device=device))
            if bias:
                self.bias = Parameter(empty(self.num_channels, dtype=dtype, device=device))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        if self.affine:
            init.ones_(self.weight)
            if self.bias is not None:
                init.zeros_(self.bias)

    def forward(self, input: Tensor) -> Tensor:
        return group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}, bias={self.bias is not None}"
