"""Parameter initializers with PyTorch's semantics (``torch.nn.init``).

Every ``*_`` function fills a tensor (usually a :class:`~graphgrad.nn.Parameter`) in place, outside
autograd, and returns it. Random ones take an optional ``generator=`` (a :class:`gg.Generator`; the
default generator, seeded by ``gg.manual_seed``, otherwise). Names without the trailing underscore
(``uniform``, ``xavier_normal``...) are aliases, as PyTorch's old names.

Examples:
    >>> w = gg.nn.Parameter(gg.empty(64, 32))
    >>> gg.nn.init.kaiming_normal_(w, mode="fan_out", nonlinearity="relu", generator=gg.Generator(0))
"""
from __future__ import annotations

import math
import warnings
from typing import Optional

from graphgrad import backend
from graphgrad.backend import np
from graphgrad.core.autograd import no_grad, note_inplace_write
from graphgrad.core.random import Generator, rng_of
from graphgrad.core.tensor import Tensor
from graphgrad.errors import ShapeError

__all__ = ["calculate_gain", "uniform_", "normal_", "constant_", "zeros_", "ones_", "eye_", "dirac_", "xavier_uniform_",
           "xavier_normal_", "kaiming_uniform_", "kaiming_normal_", "orthogonal_", "trunc_normal_",
           "uniform", "normal", "constant", "zeros", "ones", "eye", "xavier_uniform", "xavier_normal",
           "kaiming_uniform", "kaiming_normal", "orthogonal", "trunc_normal"]

_LINEAR_FNS = ("linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
               "conv_transpose3d", "sigmoid", "identity")


def calculate_gain(nonlinearity: str, param: Optional[float] = None) -> float:
    """The recommended gain for a nonlinearity (PyTorch's table).

    ``linear``/``conv*``/``sigmoid``/``identity``: 1; ``tanh``: 5/3; ``relu``: sqrt(2);
    ``leaky_relu``: sqrt(2 / (1 + slope^2)) (``param`` the negative slope, default 0.01);
    ``selu``: 3/4.

    Examples:
        >>> gg.nn.init.calculate_gain("relu")
        1.4142135623730951
    """
    if nonlinearity in _LINEAR_FNS:
        return 1.0
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            slope = 0.01
        elif isinstance(param, (int, float)) and not isinstance(param, bool):
            slope = float(param)
        else:
            raise ValueError(f"calculate_gain: negative_slope {param!r} is not a valid number")
        return math.sqrt(2.0 / (1 + slope ** 2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"calculate_gain: unsupported nonlinearity {nonlinearity!r} (expected one of "
                     f"{', '.join(_LINEAR_FNS + ('tanh', 'relu', 'leaky_relu', 'selu'))})")


def _calculate_fan_in_and_fan_out(tensor: Tensor) -> tuple:
    """``(fan_in, fan_out)`` of a weight: ``shape[1] * receptive field`` and ``shape[0] * receptive
    field`` (the receptive field is the product of ``shape[2:]``), as PyTorch."""
    shape = tuple(tensor.shape)
    if len(shape) < 2:
        raise ShapeError(f"fan in and fan out cannot be computed for a tensor with fewer than 2 dimensions, "
                         f"got shape {shape}")
    receptive = math.prod(shape[2:]) if len(shape) > 2 else 1
    return shape[1] * receptive, shape[0] * receptive


def _calculate_correct_fan(tensor: Tensor, mode: str) -> int:
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"mode must be 'fan_in' or 'fan_out', got {mode!r}")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def _fill(tensor: Tensor, values) -> Tensor:
    """Write ``values`` (a NumPy array or scalar) into ``tensor``'s array in place, outside autograd.
    ``tensor`` may also be a backend array: PyTorch programs pass ``m.weight.data``, which is the
    parameter's array in graphgrad; it is filled in place all the same."""
    if backend.is_array(tensor):
        _fill(Tensor._wrap(tensor), values)
        return tensor
    if not isinstance(tensor, Tensor) or tensor._data is None:
        raise TypeError(f"initializers fill a tensor with a value (a Parameter or Tensor), got "
                        f"{type(tensor).__name__}{' (symbolic)' if isinstance(tensor, Tensor) else ''}")
    with no_grad():
        data = tensor._data
        values = np.asarray(values, dtype=data.dtype) if data.dtype.kind != "b" else np.asarray(values)
        data[...] = backend.to_device(values, tensor.device) if tensor.device != "cpu" else values
        note_inplace_write(data, "an initializer (gg.nn.init)")
    return tensor


def _empty(fn: str, tensor: Tensor) -> bool:
    """Whether ``tensor`` has no elements: then the initializer has nothing to do (PyTorch warns and
    returns it; a layer of size 0, as an adaptive softmax's smallest projection, is built)."""
    if 0 in tuple(tensor.shape):
        warnings.warn(f"{fn}: initializing a zero-element tensor of shape {tuple(tensor.shape)} is a no-op",
                      stacklevel=3)
        return True
    return False


# ---- plain distributions -------------------------------------------------------------------------
def uniform_(tensor: Tensor, a: float = 0.0, b: float = 1.0, generator: Optional[Generator] = None) -> Tensor:
    """Fill with values drawn from U(a, b)."""
    return _fill(tensor, rng_of(generator).uniform(a, b, tuple(tensor.shape)))


def normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0, generator: Optional[Generator] = None) -> Tensor:
    """Fill with values drawn from N(mean, std^2)."""
    return _fill(tensor, rng_of(generator).normal(mean, std, tuple(tensor.shape)))


def trunc_normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0, a: float = -2.0, b: float = 2.0,
                  generator: Optional[Generator] = None) -> Tensor:
    """Fill with N(mean, std^2) truncated to ``[a, b]`` (absolute bounds, as PyTorch). Drawn by
    rejection: out-of-range values are drawn again."""
    if not a < b:
        raise ValueError(f"trunc_normal_: need a < b, got a={a}, b={b}")
    rng = rng_of(generator)
    shape = tuple(tensor.shape)
    out = rng.normal(mean, std, shape)
    for _ in range(1000):
        bad = (out < a) | (out > b)
        count = int(bad.sum())
        if not count:
            break
        out[bad] = rng.normal(mean, std, count)
    else:  # the interval is far in a tail: fall back to clamping what is left
        out = np.clip(out, a, b)
    return _fill(tensor, out)


def constant_(tensor: Tensor, val: float) -> Tensor:
    """Fill with ``val``."""
    return _fill(tensor, val)


def zeros_(tensor: Tensor) -> Tensor:
    """Fill with 0."""
    return _fill(tensor, 0)


def ones_(tensor: Tensor) -> Tensor:
    """Fill with 1."""
    return _fill(tensor, 1)


def eye_(tensor: Tensor) -> Tensor:
    """Fill a 2-D tensor with the identity matrix (ones on the diagonal, also for non-square shapes)."""
    if len(tensor.shape) != 2:
        raise ShapeError(f"eye_: only 2-D tensors are supported, got shape {tuple(tensor.shape)}")
    return _fill(tensor, np.eye(*tensor.shape))


def dirac_(tensor: Tensor, groups: int = 1) -> Tensor:
    """Fill a 3-, 4- or 5-d convolution weight (out, in, *kernel) with the Dirac delta: the layer passes
    its input channels through unchanged (per group: out channel ``i`` of each group reads its input
    channel ``i`` at the kernel's centre)."""
    shape = tuple(tensor.shape)
    if len(shape) not in (3, 4, 5):
        raise ShapeError(f"dirac_: only 3, 4 or 5-d tensors are supported, got shape {shape}")
    if shape[0] % groups:
        raise ValueError(f"dirac_: dim 0 ({shape[0]}) must be divisible by groups ({groups})")
    per_group = shape[0] // groups
    values = np.zeros(shape)
    centre = tuple(k // 2 for k in shape[2:])
    for g in range(groups):
        for i in range(min(per_group, shape[1])):
            values[(g * per_group + i, i) + centre] = 1.0
    return _fill(tensor, values)


# ---- scaled by fan ------------------------------------------------------------------------------
def xavier_uniform_(tensor: Tensor, gain: float = 1.0, generator: Optional[Generator] = None) -> Tensor:
    """Glorot uniform: U(-a, a) with ``a = gain * sqrt(6 / (fan_in + fan_out))``."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    bound = math.sqrt(3.0) * std
    return uniform_(tensor, -bound, bound, generator)


def xavier_normal_(tensor: Tensor, gain: float = 1.0, generator: Optional[Generator] = None) -> Tensor:
    """Glorot normal: N(0, std^2) with ``std = gain * sqrt(2 / (fan_in + fan_out))``."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return normal_(tensor, 0.0, std, generator)


def kaiming_uniform_(tensor: Tensor, a: float = 0.0, mode: str = "fan_in", nonlinearity: str = "leaky_relu",
                     generator: Optional[Generator] = None) -> Tensor:
    """He uniform: U(-bound, bound) with ``bound = gain * sqrt(3 / fan)``, ``gain =
    calculate_gain(nonlinearity, a)`` and ``fan`` the fan in or out (``mode``).

    PyTorch's Linear and Conv layers use ``a=sqrt(5)``, which gives ``bound = 1 / sqrt(fan_in)``.
    """
    if _empty("kaiming_uniform_", tensor):
        return tensor
    fan = _calculate_correct_fan(tensor, mode)
    std = calculate_gain(nonlinearity, a) / math.sqrt(fan)
    bound = math.sqrt(3.0) * std
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(tensor: Tensor, a: float = 0.0, mode: str = "fan_in", nonlinearity: str = "leaky_relu",
                    generator: Optional[Generator] = None) -> Tensor:
    """He normal: N(0, std^2) with ``std = gain / sqrt(fan)`` (see :func:`kaiming_uniform_`)."""
    if _empty("kaiming_normal_", tensor):
        return tensor
    fan = _calculate_correct_fan(tensor, mode)
    std = calculate_gain(nonlinearity, a) / math.sqrt(fan)
    return normal_(tensor, 0.0, std, generator)


def orthogonal_(tensor: Tensor, gain: float = 1.0, generator: Optional[Generator] = None) -> Tensor:
    """A (semi-)orthogonal matrix, scaled by ``gain`` (Saxe et al., 2013); trailing dimensions are
    flattened, so the tensor viewed as ``(shape[0], -1)`` has orthonormal rows or columns."""
    if len(tensor.shape) < 2:
        raise ShapeError(f"orthogonal_: only tensors with 2 or more dimensions are supported, got shape "
                         f"{tuple(tensor.shape)}")
    if _empty("orthogonal_", tensor):
        return tensor
    rows = tensor.shape[0]
    cols = math.prod(tensor.shape) // rows
    flat = rng_of(generator).normal(0.0, 1.0, (rows, cols))
    if rows < cols:
        flat = flat.T
    q, r = np.linalg.qr(flat)
    q = q * np.sign(np.diag(r))  # makes the decomposition unique (uniform over orthogonal matrices)
    if rows < cols:
        q = q.T
    return _fill(tensor, (gain * q).reshape(tuple(tensor.shape)))


# ---- old names (aliases) -----------------------------------------------------------------------------
uniform = uniform_
normal = normal_
constant = constant_
zeros = zeros_
ones = ones_
eye = eye_
xavier_uniform = xavier_uniform_
xavier_normal = xavier_normal_
kaiming_uniform = kaiming_uniform_
kaiming_normal = kaiming_normal_
orthogonal = orthogonal_
trunc_normal = trunc_normal_
