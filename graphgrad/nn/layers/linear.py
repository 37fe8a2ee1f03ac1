"""Linear layers and shape helpers: Linear (optionally lazy), Bilinear, Identity, Flatten, Unflatten."""
from __future__ import annotations

import math
from typing import Optional, Sequence

from graphgrad.core.creation import empty
from graphgrad.core.random import Generator
from graphgrad.core.tensor import Tensor
from graphgrad.errors import ArgumentError, ShapeError
from graphgrad.nn import init
from graphgrad.nn.functional import bilinear, linear
from graphgrad.nn.module import Module
from graphgrad.nn.parameter import Parameter
from graphgrad.ops.shape import flatten, reshape

__all__ = ["Linear", "Bilinear", "Identity", "Flatten", "Unflatten"]


def _new_parameter(shape: tuple, dtype, device) -> Parameter:
    return Parameter(empty(*shape, dtype=dtype, device=device))


class Identity(Module):
    """Returns its input unchanged (arguments are accepted and ignored, as PyTorch).

    Shapes: (*) -> (*).
    """

    def __init__(self, *args, **kwargs) -> None:
        super().__init__()

    def forward(self, input):
        return input


class Linear(Module):
    """``y = x @ weight.T + bias``.

    Args:
        in_features: size of each input sample; ``None`` makes the layer lazy: the weight is created
            on the first call from ``x.shape[-1]``. Create the optimizer AFTER that first call
            (before it the layer has no parameters to hand over), and call it once before
            ``load_state_dict``.
        out_features: size of each output sample.
        bias: learn an additive bias.
        dtype, device: of the parameters (default: ``gg.get_default_dtype()``, CPU).
        generator: random source for the initialization.

    Shapes: input (*, in_features) -> (*, out_features).
    Parameters: ``weight`` (out_features, in_features), ``bias`` (out_features,), both initialized
    from U(-1/sqrt(in_features), 1/sqrt(in_features)), as PyTorch.

    Examples:
        >>> fc = gg.nn.Linear(20, 30)
        >>> fc(gg.randn(128, 20)).shape
        (128, 30)
    """

    def __init__(self, in_features: Optional[int], out_features: int, bias: bool = True, dtype=None,
                 device: Optional[str] = None, generator: Optional[Generator] = None) -> None:
        super().__init__()
        for what, value in (("in_features", in_features), ("out_features", out_features)):
            if (value is not None or what == "out_features") and (isinstance(value, bool) or not isinstance(value, int)
                                                                   or value < 0):
                raise ArgumentError(f"Linear: {what} must be a non-negative integer, got {value!r}")
        self.in_features = in_features
        self.out_features = int(out_features)
        self._use_bias = bool(bias)
        self._dtype, self._device, self._generator = dtype, device, generator
        if in_features is None:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        else:
            self._materialize(int(in_features))

    @property
    def is_lazy(self) -> bool:
        """Whether the weight is still waiting for the first input."""
        return self.weight is None

    def _materialize(self, in_features: int) -> None:
        self.in_features = in_features
        self.weight = _new_parameter((self.out_features, in_features), self._dtype, self._device)
        if self._use_bias:
            self.bias = _new_parameter((self.out_features,), self._dtype, self._device)
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Re-draw the weight (Kaiming uniform with a = sqrt(5)) and the bias, as PyTorch."""
        if self.weight is None:
            return
        init.kaiming_uniform_(self.weight, a=math.sqrt(5), generator=self._generator)
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
            init.uniform_(self.bias, -bound, bound, generator=self._generator)

    def forward(self, input: Tensor) -> Tensor:
        if self.weight is None:
            shape = input.shape
            size = shape[-1] if shape else None
            if size is None:
                raise ShapeError(f"Linear(in_features=None): the lazy layer needs the size of the input's last "
                                 f"dimension on its first call, got input shape "
                                 f"{'(unknown)' if shape is None else tuple(shape)}")
            self._materialize(int(size))
        return linear(input, self.weight, self.bias)

    def extra_repr(self) -> str:
        return f"in_features={self.in_features}, out_features={self.out_features}, bias={self._use_bias}"


class Bilinear(Module):
    """``y = x1^T A x2 + b`` for each output feature.

    Args:
        in1_features, in2_features: sizes of the two inputs' last dimensions.
        out_features: size of the output's last dimension.
        bias: learn an additive bias.

    Shapes: input1 (*, in1_features), input2 (*, in2_features) -> (*, out_features).
    Parameters: ``weight`` (out_features, in1_features, in2_features), ``bias`` (out_features,), from
    U(-1/sqrt(in1_features), 1/sqrt(in1_features)), as PyTorch.

    Examples:
        >>> m = gg.nn.Bilinear(20, 30, 40)
        >>> m(gg.randn(128, 20), gg.randn(128, 30)).shape
        (128, 40)
    """

    def __init__(self, in1_features: int, in2_features: int, out_features: int, bias: bool = True, dtype=None,
                 device: Optional[str] = None, generator: Optional[Generator] = None) -> None:
        super().__init__()
        self.in1_features, self.in2_features = int(in1_features), int(in2_features)
        self.out_features = int(out_features)
        self._generator = generator
        self.weight = _new_parameter((self.out_features, self.in1_features, self.in2_features), dtype, device)
        if bias:
            self.bias = _new_parameter((self.out_features,), dtype, device)
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        bound = 1 / math.sqrt(self.weight.shape[1])
        init.uniform_(self.weight, -bound, bound, generator=self._generator)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound, generator=self._generator)

    def forward(self, input1: Tensor, input2: Tensor) -> Tensor:
        return bilinear(input1, input2, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
                f"out_features={self.out_features}, bias={self.bias is not None}")


class Flatten(Module):
    """Merge dimensions ``start_dim..end_dim`` (inclusive) into one.

    Shapes: (N, *dims) -> (N, prod(dims)) with the defaults ``start_dim=1, end_dim=-1``.

    Examples:
        >>> gg.nn.Flatten()(gg.randn(32, 1, 5, 5)).shape
        (32, 25)
    """

    def __init__(self, start_dim: int = 1, end_dim: int = -1) -> None:
        super().__init__()
        self.start_dim, self.end_dim = int(start_dim), int(end_dim)

    def forward(self, input: Tensor) -> Tensor:
        return flatten(input, self.start_dim, self.end_dim)

    def extra_repr(self) -> str:
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Unflatten(Module):
    """Split dimension ``dim`` into ``unflattened_size`` (one entry may be -1).

    Shapes: (*, S, *) -> (*, *unflattened_size, *) with ``prod(unflattened_size) == S``.

    Examples:
        >>> gg.nn.Unflatten(1, (2, 5, 5))(gg.randn(2, 50)).shape
        (2, 2, 5, 5)
    """

    def __init__(self, dim: int, unflattened_size: Sequence[int]) -> None:
        super().__init__()
        self.dim = int(dim)
        self.unflattened_size = tuple(int(s) for s in unflattened_size)

    def forward(self, input: Tensor) -> Tensor:
        shape = list(input.shape)
        ndim = len(shape)
        if not -ndim <= self.dim < ndim:
            raise ShapeError(f"Unflatten: dim {self.dim} is out of range for input of shape {tuple(shape)}")
        d = self.dim % ndim
        size = shape[d]
        sizes = self.unflattened_size
        if size is not None and -1 not in sizes and math.prod(sizes) != size:
            raise ShapeError(f"Unflatten: unflattened_size {sizes} does not multiply to dimension {d}'s size "
                             f"{size} (input shape {tuple(shape)})")
        new = shape[:d] + list(sizes) + shape[d + 1:]
        if new.count(None) + new.count(-1) > 1:
            raise ShapeError(f"Unflatten: at most one dimension may be unknown, got input shape {tuple(shape)} "
                             f"and unflattened_size {sizes}")
        return reshape(input, tuple(-1 if s is None else s for s in new))

    def extra_repr(self) -> str:
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"
