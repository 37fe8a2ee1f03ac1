"""More ``torch.*`` names programs use: the dtype class, type promotion, signal windows, and small
functions that are aliases or compositions of graphgrad's (star-imported by the facade's ``__init__``)."""
from __future__ import annotations

import math
from typing import Any, Optional, Sequence

import graphgrad as _gg
from graphgrad.backend import np

Tensor = _gg.Tensor

pi, e, inf, nan = math.pi, math.e, math.inf, math.nan

#: ``torch.dtype``: graphgrad's dtypes are NumPy's, so ``isinstance(torch.float32, torch.dtype)`` holds
dtype = np.dtype


def _as_tensor(x: Any) -> Tensor:
    return x if isinstance(x, Tensor) else _gg.tensor(x)


def asarray(obj: Any, *, dtype: Any = None, device: Any = None, copy: Optional[bool] = None,
            requires_grad: bool = False) -> Tensor:
    """``torch.asarray``: ``obj`` as a tensor, sharing a tensor's or array's memory unless ``copy``."""
    if isinstance(obj, Tensor) and not copy and (dtype is None or _gg.dtypes.as_dtype(dtype) == obj.dtype):
        return obj
    out = _gg.tensor(obj, dtype=dtype) if copy else _gg.as_tensor(obj, dtype=dtype)
    return out.requires_grad_(True) if requires_grad else out


def result_type(tensor1: Any, tensor2: Any) -> Any:
    """``torch.result_type``: the dtype of ``tensor1 + tensor2`` (Python numbers count as weak)."""
    def empty(x: Any) -> Any:  # no elements: the promotion without the arithmetic
        return _gg.reshape(x, (-1,))[:0] if isinstance(x, Tensor) else x

    if not isinstance(tensor1, Tensor) and not isinstance(tensor2, Tensor):
        return _gg.tensor(tensor1 + tensor2).dtype
    return (empty(tensor1) + empty(tensor2)).dtype if isinstance(tensor1, Tensor) else (empty(tensor2) + tensor1).dtype


def can_cast(from_: Any, to: Any) -> bool:
    """``torch.can_cast``: whether PyTorch's casting rules allow ``from_`` -> ``to`` (no float to
    integer, no non-bool to bool); sizes may shrink, as in PyTorch."""
    source, target = np.dtype(from_), np.dtype(to)
    rank = {"b": 0, "u": 1, "i": 1, "f": 2, "c": 3}
    return rank[source.kind] <= rank[target.kind]


def scalar_tensor(s: Any, *, dtype: Any = None, device: Any = None, requires_grad: bool = False) -> Tensor:
    """``torch.scalar_tensor``: a 0-d tensor of the default float dtype."""
    out = _gg.tensor(s, dtype=dtype or _gg.get_default_dtype())
    return out.requires_grad_(True) if requires_grad else out


def _window(name: str, values, window_length: int, periodic: bool, dtype: Any) -> Tensor:
    if window_length < 0:
        raise ValueError(f"{name}: window_length must be non-negative, got {window_length}")
    if window_length <= 1:
        return _gg.ones(window_length, dtype=dtype or _gg.get_default_dtype())
    n = window_length + 1 if periodic else window_length
    out = np.asarray(values(n), dtype="float64")
    return _gg.tensor(out[:window_length] if periodic else out, dtype=dtype or _gg.get_default_dtype())


def hann_window(window_length: int, periodic: bool = True, *, dtype: Any = None, **kwargs: Any) -> Tensor:
    """``torch.hann_window``: ``0.5 - 0.5 cos(2 pi n / (N - 1))`` (N = length + 1 when periodic)."""
    return _window("hann_window", np.hanning, window_length, periodic, dtype)


def hamming_window(window_length: int, periodic: bool = True, alpha: float = 0.54, beta: float = 0.46, *,
                   dtype: Any = None, **kwargs: Any) -> Tensor:
    """``torch.hamming_window``: ``alpha - beta cos(2 pi n / (N - 1))``."""
    return _window("hamming_window", lambda n: alpha - beta * np.cos(2 * math.pi * np.arange(n) / (n - 1)),
                   window_length, periodic, dtype)


def blackman_window(window_length: int, periodic: bool = True, *, dtype: Any = None, **kwargs: Any) -> Tensor:
    """``torch.blackman_window``."""
    return _window("blackman_window", np.blackman, window_length, periodic, dtype)


def bartlett_window(window_length: int, periodic: bool = True, *, dtype: Any = None, **kwargs: Any) -> Tensor:
    """``torch.bartlett_window``: a triangle."""
    return _window("bartlett_window", np.bartlett, window_length, periodic, dtype)


def kaiser_window(window_length: int, periodic: bool = True, beta: float = 12.0, *, dtype: Any = None,
                  **kwargs: Any) -> Tensor:
    """``torch.kaiser_window``."""
    return _window("kaiser_window", lambda n: np.kaiser(n, beta), window_length, periodic, dtype)


def fix(input: Tensor) -> Tensor:
    """``torch.fix``: rounding towards zero (``trunc``)."""
    return _gg.trunc(input)


def i0(input: Tensor) -> Tensor:
    """``torch.i0``: the modified Bessel function of the first kind, order 0 (values; no gradient)."""
    x = _as_tensor(input)
    return _gg.tensor(np.i0(x.detach().numpy()).astype(x.dtype if x.dtype.kind == "f" else "float32"))


def frexp(input: Tensor) -> tuple:
    """``torch.frexp``: ``(mantissa, exponent)`` with ``input = mantissa * 2 ** exponent``."""
    mantissa, exponent = np.frexp(_as_tensor(input).detach().numpy())
    return _gg.tensor(mantissa), _gg.tensor(exponent.astype("int32"))


def gradient(input: Tensor, *, spacing: Any = 1, dim: Any = None, edge_order: int = 1) -> tuple:
    """``torch.gradient``: central differences inside, one-sided at the edges, one tensor per ``dim``
    (values; no gradient)."""
    x = _as_tensor(input)
    dims = list(range(x.ndim)) if dim is None else ([dim] if isinstance(dim, int) else list(dim))
    spacings = spacing if isinstance(spacing, (list, tuple)) else [spacing] * len(dims)
    spacings = [s.detach().numpy() if isinstance(s, Tensor) else s for s in spacings]
    grads = np.gradient(x.detach().numpy(), *spacings, axis=tuple(dims), edge_order=edge_order)
    grads = grads if isinstance(grads, (list, tuple)) else [grads]
    return tuple(_gg.tensor(g.astype(x.dtype if x.dtype.kind == "f" else "float32")) for g in grads)


def is_same_size(input: Tensor, other: Tensor) -> bool:
    return tuple(input.shape) == tuple(other.shape)


def is_signed(input: Tensor) -> bool:
    return input.dtype.kind in "fic"


def detach(input: Tensor) -> Tensor:
    return input.detach()


def get_device(input: Tensor) -> int:
    """-1 for a CPU tensor, else the device index."""
    return -1 if input.device.type == "cpu" else (input.device.index or 0)


def frobenius_norm(input: Tensor, dim: Any = (-2, -1), keepdim: bool = False) -> Tensor:
    return _gg.sqrt(_gg.sum(input * input, axis=tuple(dim) if isinstance(dim, (list, tuple)) else dim,
                            keepdims=keepdim))


def nuclear_norm(input: Tensor, dim: Any = (-2, -1), keepdim: bool = False) -> Tensor:
    return _gg.linalg.matrix_norm(input, "nuc", dim=tuple(dim), keepdim=keepdim)


def rms_norm(input: Tensor, normalized_shape: Sequence[int], weight: Optional[Tensor] = None,
             eps: Optional[float] = None) -> Tensor:
    return _gg.nn.functional.rms_norm(input, normalized_shape, weight, eps)


def bilinear(input1: Tensor, input2: Tensor, weight: Tensor, bias: Optional[Tensor] = None) -> Tensor:
    return _gg.nn.functional.bilinear(input1, input2, weight, bias)


def constant_pad_nd(input: Tensor, pad: Sequence[int], value: float = 0.0) -> Tensor:
    return _gg.nn.functional.pad(input, list(pad), value=value)


def split_with_sizes(input: Tensor, split_sizes: Sequence[int], dim: int = 0) -> tuple:
    return tuple(input.split(list(split_sizes), dim))


def unsafe_split(input: Tensor, split_size: Any, dim: int = 0) -> tuple:
    return tuple(input.split(split_size, dim))


def unsafe_chunk(input: Tensor, chunks: int, dim: int = 0) -> tuple:
    return tuple(input.chunk(chunks, dim))


def fill(input: Tensor, value: Any) -> Tensor:
    """``torch.fill``: a new tensor of ``input``'s shape and dtype filled with ``value``."""
    return _gg.full(tuple(input.shape), value.item() if isinstance(value, Tensor) else value, dtype=input.dtype)


def put(input: Tensor, index: Tensor, source: Tensor, accumulate: bool = False) -> Tensor:
    """``torch.put``: ``input`` (as if flattened) with ``source`` written at ``index``."""
    flat = _gg.reshape(input, (-1,))
    index = _gg.where(index < 0, index + flat.shape[0], index)
    return _gg.reshape(_gg.index_put(flat, (_gg.reshape(index, (-1,)),), _gg.reshape(source, (-1,)),
                                     accumulate=accumulate), tuple(input.shape))


def vmap(func: Any, in_dims: Any = 0, out_dims: Any = 0, randomness: str = "error", *, chunk_size: Any = None):
    """``torch.vmap``: ``torch.func.vmap``."""
    from graphgrad.compat.torch.func import vmap as _vmap

    return _vmap(func, in_dims, out_dims, randomness, chunk_size=chunk_size)


_INTEROP = [1]


def get_num_interop_threads() -> int:
    return _INTEROP[0]


def set_num_interop_threads(n: int) -> None:
    """Accepted: graphgrad has no inter-op thread pool."""
    _INTEROP[0] = int(n)


def set_flush_denormal(mode: bool) -> bool:
    """Accepted; returns False (not changed: NumPy keeps the CPU's setting)."""
    return False


def is_inference_mode_enabled() -> bool:
    return not _gg.is_grad_enabled()


def is_autocast_enabled(device_type: Any = None) -> bool:
    """Autocast never changes dtypes here (torch.amp)."""
    return False


# ---- Tensor methods PyTorch programs call that graphgrad's Tensor lacks --------------------------------------
def _new(x: Tensor, *args: Any, **kwargs: Any) -> Tensor:
    """PyTorch's legacy ``x.new(...)``: ``x.new(2, 3)`` an uninitialized (here zero) tensor of that shape,
    ``x.new([1, 2])`` / ``x.new(tensor)`` from data, ``x.new()`` an empty one; always ``x``'s dtype."""
    dtype = kwargs.get("dtype", x.dtype)
    if not args:
        return _gg.zeros(0, dtype=dtype)
    if len(args) == 1 and not isinstance(args[0], int):
        data = args[0]
        if isinstance(data, (tuple, list)) and all(isinstance(d, int) for d in data) and type(data).__name__ == "Size":
            return _gg.zeros(tuple(data), dtype=dtype)
        return _gg.tensor(data.detach().numpy() if isinstance(data, Tensor) else data, dtype=dtype)
    return _gg.zeros(tuple(args), dtype=dtype)


def _resize_(x: Tensor, *sizes: Any, memory_format: Any = None) -> Tensor:
    """``x.resize_(*sizes)``: ``x`` takes the new shape in place, keeping its leading elements in order
    (new elements are zero; PyTorch leaves them uninitialized)."""
    shape = tuple(sizes[0]) if len(sizes) == 1 and not isinstance(sizes[0], int) else tuple(sizes)
    n = math.prod(shape)
    flat = x._data.reshape(-1)
    if flat.size == n:
        x._data = flat.reshape(shape)
    else:
        data = np.zeros(n, dtype=x._data.dtype)
        k = min(n, flat.size)
        data[:k] = flat[:k]
        x._data = data.reshape(shape)
    return x


def _random_fill(name: str, draw) -> Any:
    def method(x: Tensor, *args: Any, generator: Any = None) -> Tensor:
        rng = _gg.core.random.rng_of(generator)
        with _gg.no_grad():
            x._data[...] = np.asarray(draw(rng, tuple(x.shape), *args), dtype=x._data.dtype)
        return x

    method.__name__ = name
    return method


TENSOR_METHODS = {
    "multinomial": lambda x, num_samples, replacement=False, *, generator=None: _facade().multinomial(
        x, num_samples, replacement, generator=generator),
    "bernoulli": lambda x, p=None, *, generator=None: _gg.bernoulli(x if p is None else _gg.full_like(x, p),
                                                                   generator=generator),
    "new": _new,
    "resize_": _resize_,
    "resize_as_": lambda x, other, memory_format=None: _resize_(x, tuple(other.shape)),
    "log_normal_": _random_fill("log_normal_", lambda rng, shape, mean=1.0, std=2.0: np.exp(
        rng.normal(mean, std, shape))),
    "geometric_": _random_fill("geometric_", lambda rng, shape, p: rng.geometric(p, shape)),
    "cauchy_": _random_fill("cauchy_", lambda rng, shape, median=0.0, sigma=1.0: median + sigma * np.tan(
        math.pi * (rng.uniform(0.0, 1.0, shape) - 0.5))),
    "put": lambda x, index, source, accumulate=False: put(x, index, source, accumulate),
    "apply_": lambda x, fn: _map_in_place(x, fn),
    "map_": lambda x, other, fn: _map_in_place(x, fn, other),
    "i0": i0,
    "frexp": frexp,
    "unsafe_chunk": unsafe_chunk,
    "unsafe_split": unsafe_split,
}


def _map_in_place(x: Tensor, fn: Any, other: Optional[Tensor] = None) -> Tensor:
    """``x.apply_(fn)`` / ``x.map_(other, fn)``: ``fn`` called on every element (a Python loop, as PyTorch's)."""
    flat = x._data.reshape(-1)
    if other is None:
        values = [fn(v) for v in flat.tolist()]
    else:
        values = [fn(a, b) for a, b in zip(flat.tolist(), np.broadcast_to(other.numpy(), x.shape).reshape(-1).tolist())]
    x._data[...] = np.asarray(values, dtype=x._data.dtype).reshape(x.shape)
    return x


def _put_(x: Tensor, index: Tensor, source: Tensor, accumulate: bool = False) -> Tensor:
    with _gg.no_grad():
        x._data[...] = put(x.detach(), index, source, accumulate)._data
    return x


def _facade():
    import graphgrad.compat.torch as torch

    return torch


def install_methods() -> None:
    """Give graphgrad's Tensor the methods above where it has none of that name."""
    for name, fn in {**TENSOR_METHODS, "put_": _put_}.items():
        if not hasattr(Tensor, name):
            setattr(Tensor, name, fn)


install_methods()


__all__ = ["pi", "e", "inf", "nan", "dtype", "asarray", "result_type", "can_cast", "scalar_tensor", "hann_window", "hamming_window",
           "blackman_window", "bartlett_window", "kaiser_window", "fix", "i0", "frexp", "gradient", "is_same_size",
           "is_signed", "detach", "get_device", "frobenius_norm", "nuclear_norm", "rms_norm", "bilinear",
           "constant_pad_nd", "split_with_sizes", "unsafe_split", "unsafe_chunk", "fill", "put", "vmap",
           "get_num_interop_threads", "set_num_interop_threads", "set_flush_denormal", "is_inference_mode_enabled",
           "is_autocast_enabled"]
