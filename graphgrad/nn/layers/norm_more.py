"""More normalization layers, as PyTorch's: BatchNorm3d, InstanceNorm1d/2d/3d, LocalResponseNorm, and the
lazy forms LazyBatchNorm1d/2d/3d and LazyInstanceNorm1d/2d/3d (``num_features`` from the first input)."""
from __future__ import annotations

from typing import Optional

from graphgrad.core.creation import empty, ones, zeros
from graphgrad.core.tensor import Tensor
from graphgrad.errors import ShapeError
from graphgrad.nn.layers.norm import BatchNorm1d, BatchNorm2d, _BatchNorm
from graphgrad.nn.module import Module
from graphgrad.nn.parameter import Buffer, Parameter
from graphgrad.ops.norm_spatial import instance_norm, local_response_norm
from graphgrad.ops.shape import expand_dims, squeeze

__all__ = ["BatchNorm3d", "InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d", "LocalResponseNorm", "LazyBatchNorm1d",
           "LazyBatchNorm2d", "LazyBatchNorm3d", "LazyInstanceNorm1d", "LazyInstanceNorm2d", "LazyInstanceNorm3d"]


class BatchNorm3d(_BatchNorm):
    """Batch normalization of ``(N, C, D, H, W)`` inputs, per channel (see :class:`BatchNorm1d`).

    Shapes: (N, C, D, H, W) -> same.

    Examples:
        >>> gg.nn.BatchNorm3d(4)(gg.randn(2, 4, 3, 5, 5)).shape
        (2, 4, 3, 5, 5)
    """

    ranks = (5,)


class _InstanceNorm(_BatchNorm):
    """Instance normalization (see InstanceNorm1d): PyTorch's defaults ``affine=False``,
    ``track_running_stats=False``; an input without a batch axis is normalized as a batch of one."""

    nd = 1

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: Optional[float] = 0.1, affine: bool = False,
                 track_running_stats: bool = False, dtype=None, device: Optional[str] = None) -> None:
        super().__init__(num_features, eps, momentum, affine, track_running_stats, dtype, device)

    def forward(self, input: Tensor) -> Tensor:
        name, nd = type(self).__name__, self.nd
        if input.ndim not in (nd + 1, nd + 2):
            raise ShapeError(f"{name}: expected a {nd + 1}-D or {nd + 2}-D input, got shape {tuple(input.shape)}")
        unbatched = input.ndim == nd + 1
        x = expand_dims(input, 0) if unbatched else input
        c = x.shape[1]
        if c is not None and c != self.num_features and self.affine:
            raise ShapeError(f"{name}({self.num_features}): input has {c} channels (shape {tuple(input.shape)})")
        use_input_stats = self.training or not self.track_running_stats
        y = instance_norm(x, self.running_mean, self.running_var, self.weight, self.bias, use_input_stats,
                          0.0 if self.momentum is None else self.momentum, self.eps)
        return squeeze(y, 0) if unbatched else y


class InstanceNorm1d(_InstanceNorm):
    """Instance normalization of ``(N, C, L)`` (or ``(C, L)``): each channel of each sample normalized
    over its length, as PyTorch's.

    Args:
        num_features: C. eps: added to the variance. momentum: running-stat update factor.
        affine: learn per-channel ``weight`` (init 1) and ``bias`` (init 0); default False.
        track_running_stats: keep running mean/variance (batch averages of the instance statistics)
            and normalize with them in eval mode; default False.

    Shapes: (N, C, L) -> same.

    Examples:
        >>> gg.nn.InstanceNorm1d(4)(gg.randn(2, 4, 10)).shape
        (2, 4, 10)
    """

    nd = 1


class InstanceNorm2d(_InstanceNorm):
    """Instance normalization of ``(N, C, H, W)`` (or ``(C, H, W)``); see :class:`InstanceNorm1d`.

    Examples:
        >>> gg.nn.InstanceNorm2d(3, affine=True)(gg.randn(2, 3, 8, 8)).shape
        (2, 3, 8, 8)
    """

    nd = 2


class InstanceNorm3d(_InstanceNorm):
    """Instance normalization of ``(N, C, D, H, W)`` (or ``(C, D, H, W)``); see :class:`InstanceNorm1d`."""

    nd = 3


class LocalResponseNorm(Module):
    """Local response normalization across channels (see ``F.local_response_norm``).

    Args: size (channels per window), alpha, beta, k.

    Shapes: (N, C, *) -> same.

    Examples:
        >>> gg.nn.LocalResponseNorm(2)(gg.randn(2, 6, 4, 4)).shape
        (2, 6, 4, 4)
    """

    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1.0) -> None:
        super().__init__()
        self.size, self.alpha, self.beta, self.k = int(size), float(alpha), float(beta), float(k)

    def forward(self, input: Tensor) -> Tensor:
        return local_response_norm(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self) -> str:
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"


# ---- lazy forms ---------------------------------------------------------------------------------------------
class _LazyNorm:
    """Built with ``num_features = 0`` (empty parameters and statistics, which ``to(dtype)`` converts);
    the first input's channel count sizes the weight, bias and running statistics, which are then
    initialized as PyTorch's, in the placeholders' dtype and device."""

    def _lazy_init(self, dtype, device) -> None:
        self._lazy_dtype, self._lazy_device = dtype, device

    @property
    def is_lazy(self) -> bool:
        """Whether the parameters and statistics are still waiting for the first input."""
        return self.num_features == 0

    def _channels(self, input: Tensor):
        return input.shape[1] if input.ndim >= 2 else None

    def _materialize(self, input: Tensor) -> None:
        c = self._channels(input)
        if c is None:
            raise ShapeError(f"{type(self).__name__}: the first input must have a known channel count, got shape "
                             f"{tuple(input.shape)}")
        placeholder = self.weight if self.affine else self.running_mean if self.track_running_stats else None
        dtype = self._lazy_dtype if placeholder is None else placeholder.dtype
        device = self._lazy_device if placeholder is None else placeholder.device
        c = int(c)
        self.num_features = c
        if self.affine:
            self.weight = Parameter(empty(c, dtype=dtype, device=device))
            self.bias = Parameter(empty(c, dtype=dtype, device=device))
        if self.track_running_stats:
            self.running_mean = Buffer(zeros(c, dtype=dtype, device=device))
            self.running_var = Buffer(ones(c, dtype=dtype, device=device))
        self.reset_parameters()

    def forward(self, input: Tensor) -> Tensor:
        if self.num_features == 0:
            self._materialize(input)
        return super().forward(input)


class _LazyBatchNorm(_LazyNorm):
    def __init__(self, eps: float = 1e-5, momentum: Optional[float] = 0.1, affine: bool = True,
                 track_running_stats: bool = True, dtype=None, device: Optional[str] = None) -> None:
        super().__init__(0, eps, momentum, affine, track_running_stats, dtype, device)
        self._lazy_init(dtype, device)


class _LazyInstanceNorm(_LazyNorm):
    # (PyTorch's lazy forms default to affine=True, track_running_stats=True, unlike InstanceNorm)
    def __init__(self, eps: float = 1e-5, momentum: Optional[float] = 0.1, affine: bool = True,
                 track_running_stats: bool = True, dtype=None, device: Optional[str] = None) -> None:
        super().__init__(0, eps, momentum, affine, track_running_stats, dtype, device)
        self._lazy_init(dtype, device)

    def _channels(self, input: Tensor):
        return input.shape[0] if input.ndim == self.nd + 1 else super()._channels(input)


class LazyBatchNorm1d(_LazyBatchNorm, BatchNorm1d):
    """BatchNorm1d whose ``num_features`` is read from the first input.

    Examples:
        >>> bn = gg.nn.LazyBatchNorm1d()
        >>> bn(gg.randn(8, 5)).shape, bn.weight.shape
        ((8, 5), (5,))
    """


class LazyBatchNorm2d(_LazyBatchNorm, BatchNorm2d):
    """BatchNorm2d whose ``num_features`` is read from the first input."""


class LazyBatchNorm3d(_LazyBatchNorm, BatchNorm3d):
    """BatchNorm3d whose ``num_features`` is read from the first input."""


class LazyInstanceNorm1d(_LazyInstanceNorm, InstanceNorm1d):
    """InstanceNorm1d whose ``num_features`` is read from the first input."""


class LazyInstanceNorm2d(_LazyInstanceNorm, InstanceNorm2d):
    """InstanceNorm2d whose ``num_features`` is read from the first input.

    Examples:
        >>> gg.nn.LazyInstanceNorm2d(affine=True)(gg.randn(2, 3, 4, 4)).shape
        (2, 3, 4, 4)
    """


class LazyInstanceNorm3d(_LazyInstanceNorm, InstanceNorm3d):
    """InstanceNorm3d whose ``num_features`` is read from the first input."""
