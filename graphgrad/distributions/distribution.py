"""The ``Distribution`` base class and the helpers the families share (parameter broadcasting,
probability clamping, NumPy-generator draws for the families without a closed-form sampler)."""
from __future__ import annotations

import math
from typing import Any, Callable, Optional

import graphgrad as gg  # graphgrad's ops, by their public names (looked up when called)
from graphgrad.backend import np
from graphgrad.core.autograd import no_grad
from graphgrad.core.random import Generator, rng_of
from graphgrad.core.tensor import Tensor

from graphgrad.distributions import constraints

_LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)
EULER = 0.57721566490153286060


def _tensor(x: Any, like: Optional[Tensor] = None) -> Tensor:
    """``x`` as a Tensor; a number (or list) takes ``like``'s float dtype, else the default float."""
    if isinstance(x, Tensor):
        return x
    dtype = like.dtype if like is not None and like.dtype.kind == "f" else None
    return Tensor(x, dtype=dtype or gg.get_default_dtype())


def broadcast_all(*values: Any) -> list:
    """Parameters as tensors broadcast to one shape; numbers take the first tensor's float dtype."""
    like = next((v for v in values if isinstance(v, Tensor) and v.dtype.kind == "f"), None)
    ts = [_tensor(v, like) for v in values]
    if like is None:
        ts = [gg.astype(t, gg.get_default_dtype()) if t.dtype.kind != "f" else t for t in ts]
    shape = gg.broadcast_shapes(*[tuple(t.shape) for t in ts])
    return [t if tuple(t.shape) == shape else gg.broadcast_to(t, shape) for t in ts]


def _shape(sample_shape: Any) -> tuple:
    if isinstance(sample_shape, int):
        return (sample_shape,)
    return tuple(int(s) for s in sample_shape)


def _eps(t: Tensor) -> float:
    return float(np.finfo(t.dtype).eps) if t.dtype.kind == "f" else float(np.finfo(np.float32).eps)


def _tiny(t: Tensor) -> float:
    return float(np.finfo(t.dtype).tiny) if t.dtype.kind == "f" else float(np.finfo(np.float32).tiny)


def clamp_probs(probs: Tensor) -> Tensor:
    """Probabilities clamped into ``[eps, 1 - eps]`` (PyTorch's ``clamp_probs``)."""
    eps = _eps(probs)
    return gg.clip(probs, eps, 1.0 - eps)


def probs_to_logits(probs: Tensor, is_binary: bool = False) -> Tensor:
    clamped = clamp_probs(probs)
    return gg.log(clamped) - gg.log1p(-clamped) if is_binary else gg.log(clamped)


def logits_to_probs(logits: Tensor, is_binary: bool = False) -> Tensor:
    return gg.sigmoid(logits) if is_binary else gg.softmax(logits, axis=-1)


def _sum_rightmost(x: Any, n: int) -> Any:
    if n <= 0 or not isinstance(x, Tensor):
        return x
    return gg.sum(x, axis=tuple(range(-n, 0)))


def _standard_draw(fn: Callable, like: Tensor, generator: Optional[Generator] = None) -> Tensor:
    """A draw ``fn(numpy_generator)`` from graphgrad's generator (``gg.manual_seed`` reproduces it),
    as a constant tensor of ``like``'s dtype and device."""
    arr = np.asarray(fn(rng_of(generator)))
    return gg.tensor(arr.astype(like.dtype if like.dtype.kind == "f" else np.float32), device=like.device)


def _np(t: Tensor):
    return np.asarray(t.detach().numpy())


class Distribution:
    """The common interface (``torch.distributions.Distribution``). Subclasses set ``batch_shape`` and
    ``event_shape`` and define ``rsample`` (or ``sample``), ``log_prob``, ``entropy``, ``mean``, ``variance``.
    ``arg_constraints`` maps parameter names to constraints; ``support`` is the values' constraint."""

    has_rsample = False
    has_enumerate_support = False
    arg_constraints: dict = {}
    support: Any = None
    _default_validate_args = False
    # the tensor attributes whose leading dims are the batch shape (broadcast by ``expand``)
    _batch_params: tuple = ()

    @staticmethod
    def set_default_validate_args(value: bool) -> None:
        Distribution._default_validate_args = bool(value)

    def __init__(self, batch_shape: tuple = (), event_shape: tuple = (), validate_args: Optional[bool] = None):
        self.batch_shape = tuple(batch_shape)
        self.event_shape = tuple(event_shape)
        self._validate_args = self._default_validate_args if validate_args is None else bool(validate_args)
        if self._validate_args:
            for name, constraint in self.arg_constraints.items():
                if constraints.is_dependent(constraint) or name not in self.__dict__:
                    continue
                value = self.__dict__[name]
                if not isinstance(value, Tensor):
                    continue
                ok = constraint.check(value)
                if not bool(gg.all(ok).numpy()):
                    raise ValueError(f"Expected parameter {name} ({type(value).__name__} of shape "
                                     f"{tuple(value.shape)}) "
                                     f"of distribution {self!r} to satisfy the constraint {constraint!r}, "
                                     f"but found invalid values:\n{value}")

    def _validate_sample(self, value: Tensor) -> None:
        if not self._validate_args or self.support is None or constraints.is_dependent(self.support):
            return
        if not bool(gg.all(self.support.check(value)).numpy()):
            raise ValueError(f"Expected value argument ({type(value).__name__} of shape {tuple(value.shape)}) to be "
                             f"within the support ({self.support!r}) of the distribution {self!r}, "
                             f"but found invalid values:\n{value}")

    def expand(self, batch_shape: Any, _instance: Any = None) -> "Distribution":
        """The same distribution with its parameters broadcast to ``batch_shape`` (no copy)."""
        batch_shape = _shape(batch_shape)
        new = object.__new__(type(self))
        new.__dict__.update(self.__dict__)
        names = self._batch_params or tuple(self.arg_constraints)
        for name in names:
            value = self.__dict__.get(name)
            if isinstance(value, Tensor):
                extra = tuple(value.shape[len(self.batch_shape):])
                new.__dict__[name] = gg.broadcast_to(value, batch_shape + extra)
        new.batch_shape = batch_shape
        return new

    def _extended_shape(self, sample_shape: Any = ()) -> tuple:
        return _shape(sample_shape) + self.batch_shape + self.event_shape

    def sample(self, sample_shape: Any = (), generator: Optional[Generator] = None) -> Tensor:
        """Samples of shape ``sample_shape + batch_shape + event_shape``, outside autograd."""
        with no_grad():
            return self.rsample(sample_shape, generator=generator)

    def rsample(self, sample_shape: Any = (), generator: Optional[Generator] = None) -> Tensor:
        raise NotImplementedError(f"{type(self).__name__} has no reparameterized sampling (rsample); use sample()")

    def sample_n(self, n: int) -> Tensor:
        return self.sample((n,))

    def log_prob(self, value: Any) -> Tensor:
        raise NotImplementedError(f"{type(self).__name__}.log_prob is not implemented")

    def cdf(self, value: Any) -> Tensor:
        raise NotImplementedError(f"{type(self).__name__}.cdf is not implemented")

    def icdf(self, value: Any) -> Tensor:
        raise NotImplementedError(f"{type(self).__name__}.icdf is not implemented")

    def entropy(self) -> Tensor:
        raise NotImplementedError(f"{type(self).__name__}.entropy is not implemented")

    def enumerate_support(self, expand: bool = True) -> Tensor:
        raise NotImplementedError(f"{type(self).__name__} has no enumerable support")

    @property
    def mean(self) -> Tensor:
        raise NotImplementedError(f"{type(self).__name__}.mean is not implemented")

    @property
    def mode(self) -> Tensor:
        raise NotImplementedError(f"{type(self).__name__}.mode is not implemented")

    @property
    def variance(self) -> Tensor:
        raise NotImplementedError(f"{type(self).__name__}.variance is not implemented")

    @property
    def stddev(self) -> Tensor:
        return gg.sqrt(self.variance)

    def perplexity(self) -> Tensor:
        return gg.exp(self.entropy())

    def __repr__(self) -> str:
        shown = {k: self.__dict__[k] for k in self.arg_constraints if k in self.__dict__}
        params = ", ".join(f"{k}: {tuple(v.shape) if isinstance(v, Tensor) else v}" for k, v in shown.items())
        return f"{type(self).__name__}({params or f'batch_shape={self.batch_shape}, event_shape={self.event_shape}'})"


class ExponentialFamily(Distribution):
    """Marker base class of the exponential families (PyTorch's ``ExponentialFamily``)."""
