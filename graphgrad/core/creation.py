"""Tensor factories: ``tensor``, ``zeros``, ``arange``, ``randn``... (no gradient history)."""
from __future__ import annotations

from typing import Any, Optional, Sequence

from graphgrad import backend, config
from graphgrad.backend import np
from graphgrad.core.random import Generator, rng_of
from graphgrad.core.tensor import Tensor
from graphgrad.dtypes import as_dtype
from graphgrad.errors import ArgumentError, ShapeError


def _int(fn: str, what: str, value, minimum: Optional[int] = 0) -> int:
    """``value`` as an int, or an ArgumentError naming ``fn`` and the argument (a float, a string, a bool
    or a value below ``minimum`` is refused)."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        if isinstance(value, Tensor) and value.ndim == 0 and value.dtype.kind in "iu" and value._data is not None:
            value = int(value.item())
        else:
            raise ArgumentError(f"{fn}: {what} must be an integer, got {value!r} ({type(value).__name__})")
    if minimum is not None and value < minimum:
        raise ArgumentError(f"{fn}: {what} must be at least {minimum}, got {value}")
    return int(value)


def _shape(size, fn: str = "tensor factory") -> tuple:
    # zeros(2, 3) and zeros((2, 3)) both mean shape (2, 3)
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    return tuple(_int(fn, f"size[{i}]", s) for i, s in enumerate(size))


def _float(dtype) -> np.dtype:
    return config.default_float if dtype is None else as_dtype(dtype)


def _make(array, requires_grad: bool, device: Optional[str]) -> Tensor:
    if device is None:
        device = config.default_device
    if device not in (None, "cpu"):
        array = backend.to_device(array, device)
    t = Tensor._wrap(array)
    if requires_grad:
        t.requires_grad_(True)
    return t


def tensor(data: Any, dtype=None, requires_grad: bool = False, device: Optional[str] = None) -> Tensor:
    """A new tensor from a Tensor, NumPy array, Python scalar or nested list (always a copy).

    Python floats give float32 (``gg.config.default_float``), ints int64; arrays keep their dtype.
    """
    array = Tensor(data, dtype=dtype, device=device)._data
    if isinstance(data, Tensor) or backend.is_array(data):
        array = array.copy()
    return _make(array, requires_grad, None)


def as_tensor(data: Any, dtype=None, device: Optional[str] = None) -> Tensor:
    """Like :func:`tensor` but shares memory with an array or tensor when no conversion is needed."""
    if isinstance(data, Tensor) and (dtype is None or data.dtype == as_dtype(dtype)):
        return data
    return Tensor(data, dtype=dtype, device=device)


def from_numpy(array) -> Tensor:
    """A tensor sharing memory with a NumPy array."""
    return Tensor._wrap(np.asarray(array))


def zeros(*size, dtype=None, requires_grad: bool = False, device: Optional[str] = None) -> Tensor:
    """Zeros of the given shape (default float32). ``zeros(2, 3)`` or ``zeros((2, 3))``."""
    return _make(np.zeros(_shape(size, "zeros"), _float(dtype)), requires_grad, device)


def ones(*size, dtype=None, requires_grad: bool = False, device: Optional[str] = None) -> Tensor:
    """Ones of the given shape (default float32)."""
    return _make(np.ones(_shape(size, "ones"), _float(dtype)), requires_grad, device)


def empty(*size, dtype=None, requires_grad: bool = False, device: Optional[str] = None) -> Tensor:
    """An uninitialized tensor of the given shape."""
    return _make(np.empty(_shape(size, "empty"), _float(dtype)), requires_grad, device)


def full(size, fill_value, dtype=None, requires_grad: bool = False, device: Optional[str] = None) -> Tensor:
    """A tensor of shape ``size`` filled with ``fill_value`` (dtype inferred from it when not given)."""
    size = _shape((size,) if not isinstance(size, (tuple, list)) else (tuple(size),), "full")
    if dtype is None:
        dtype = Tensor(fill_value).dtype
    return _make(np.full(size, fill_value, as_dtype(dtype)), requires_grad, device)


def arange(start, stop=None, step=1, dtype=None, requires_grad: bool = False,
           device: Optional[str] = None) -> Tensor:
    """Evenly spaced values in ``[start, stop)``; int64 for integer arguments, else float32."""
    if stop is None:
        start, stop = 0, start
    for what, value in (("start", start), ("end", stop), ("step", step)):
        if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
            raise ArgumentError(f"arange: {what} must be a number, got {value!r} ({type(value).__name__})")
    if step == 0:
        raise ArgumentError("arange: step must be nonzero")
    if (stop - start) * step < 0:
        raise ArgumentError(f"arange: the range [{start}, {stop}) cannot be walked with step {step} (its sign "
                            "points away from the end)")
    if dtype is None:
        integral = all(isinstance(v, (int, np.integer)) for v in (start, stop, step))
        dtype = config.default_int if integral else config.default_float
    return _make(np.arange(start, stop, step).astype(as_dtype(dtype)), requires_grad, device)


def linspace(start, stop, num: int = 50, endpoint: bool = True, dtype=None, requires_grad: bool = False,
             device: Optional[str] = None) -> Tensor:
    """``num`` evenly spaced values from ``start`` to ``stop`` (default float32)."""
    num = _int("linspace", "steps", num)
    return _make(np.linspace(start, stop, num, endpoint=endpoint).astype(_float(dtype)), requires_grad, device)


def eye(n: int, m: Optional[int] = None, k: int = 0, dtype=None, requires_grad: bool = False,
        device: Optional[str] = None) -> Tensor:
    """The ``(n, m)`` identity matrix (ones on diagonal ``k``)."""
    n = _int("eye", "n", n)
    m = None if m is None else _int("eye", "m", m)
    return _make(np.eye(n, m, _int("eye", "k", k, None), dtype=_float(dtype)), requires_grad, device)


def rand(*size, generator: Optional[Generator] = None, dtype=None, requires_grad: bool = False,
         device: Optional[str] = None) -> Tensor:
    """Uniform samples in ``[0, 1)`` of the given shape."""
    dtype = _float(dtype)
    return _make(rng_of(generator).random(_shape(size, "rand")).astype(dtype), requires_grad, device)


def randn(*size, generator: Optional[Generator] = None, dtype=None, requires_grad: bool = False,
          device: Optional[str] = None) -> Tensor:
    """Standard normal samples of the given shape."""
    dtype = _float(dtype)
    return _make(rng_of(generator).standard_normal(_shape(size, "randn")).astype(dtype), requires_grad, device)


def randint(low: int, high: Optional[int] = None, size: Sequence[int] = (), generator: Optional[Generator] = None,
            dtype=None, device: Optional[str] = None) -> Tensor:
    """Integers uniform in ``[low, high)`` (``randint(high, size=...)`` means ``low=0``); int64."""
    if high is None:
        low, high = 0, low
    elif isinstance(high, (tuple, list)) and size == ():  # randint(high, size), PyTorch's two-argument form
        low, high, size = 0, low, high
    low, high = _int("randint", "low", low, None), _int("randint", "high", high, None)
    if low >= high:
        raise ArgumentError(f"randint: low ({low}) must be less than high ({high}): the range [low, high) is empty")
    dtype = config.default_int if dtype is None else as_dtype(dtype)
    size = _shape((size,) if not isinstance(size, (tuple, list)) else (tuple(size),), "randint")
    return _make(rng_of(generator).integers(low, high, size).astype(dtype), False, device)


def randperm(n: int, generator: Optional[Generator] = None, dtype=None, requires_grad: bool = False,
             device: Optional[str] = None) -> Tensor:
    """A random permutation of ``0 .. n-1`` (int64 by default) drawn from ``generator``. Shape (n,)."""
    dtype = config.default_int if dtype is None else as_dtype(dtype)
    return _make(rng_of(generator).permutation(_int("randperm", "n", n)).astype(dtype), requires_grad, device)


def numel(x: Any) -> int:
    """The number of elements of a tensor or array (the product of its shape)."""
    shape = tuple(x.shape if hasattr(x, "shape") else np.shape(x))
    if None in shape:
        raise ShapeError(f"numel: shape {shape} has unknown dimensions")
    return int(np.prod(shape, dtype=np.int64))


def is_tensor(obj: Any) -> bool:
    """Whether ``obj`` is a graphgrad Tensor (PyTorch's ``is_tensor``)."""
    return isinstance(obj, Tensor)


def multinomial(probs: Tensor, num_samples: int = 1, generator: Optional[Generator] = None) -> Tensor:
    """Draw class indices from each row of ``probs`` (non-negative weights, normalized per row), with
    replacement, as ``torch.multinomial(..., replacement=True)``.

    Shapes: probs (C,) or (N, C) -> int64 (num_samples,) or (N, num_samples).

    Examples:
        >>> gg.multinomial(gg.softmax(logits / 0.8, axis=-1), generator=gg.Generator(0))
    """
    p = backend.to_numpy(probs._data if isinstance(probs, Tensor) else np.asarray(probs)).astype(np.float64)
    if p.ndim not in (1, 2) or p.shape[-1] == 0 or (p < 0).any() or not np.isfinite(p).all():
        raise ValueError(f"multinomial: expected finite non-negative weights of shape (C,) or (N, C), "
                         f"got shape {p.shape}")
    rows = p.reshape(-1, p.shape[-1])
    cdf = np.cumsum(rows, axis=1)
    if (cdf[:, -1] <= 0).any():
        raise ValueError("multinomial: every row needs a positive total weight")
    u = rng_of(generator).random((rows.shape[0], num_samples)) * cdf[:, -1:]
    # the first index whose cumulative weight exceeds the draw (a binary search per row)
    picks = np.stack([np.searchsorted(c, draw, side="right") for c, draw in zip(cdf, u)])
    picks = np.minimum(picks, rows.shape[1] - 1).astype(np.int64)
    return _make(picks.reshape(p.shape[:-1] + (num_samples,)), False, None)


def normal(mean: float = 0.0, std: float = 1.0, size: Sequence[int] = (), generator: Optional[Generator] = None,
           dtype=None, requires_grad: bool = False, device: Optional[str] = None) -> Tensor:
    """Normal samples with the given mean and standard deviation."""
    size = (size,) if isinstance(size, int) else tuple(size)
    return _make(rng_of(generator).normal(mean, std, size).astype(_float(dtype)), requires_grad, device)


def uniform(low: float = 0.0, high: float = 1.0, size: Sequence[int] = (), generator: Optional[Generator] = None,
            dtype=None, requires_grad: bool = False, device: Optional[str] = None) -> Tensor:
    """Uniform samples in ``[low, high)``."""
    size = (size,) if isinstance(size, int) else tuple(size)
    return _make(rng_of(generator).uniform(low, high, size).astype(_float(dtype)), requires_grad, device)
