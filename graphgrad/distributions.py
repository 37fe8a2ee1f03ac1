"""Probability distributions with PyTorch's ``torch.distributions`` API: sampling (``rsample``
reparameterized, so gradients flow into the parameters), ``log_prob``, ``entropy``, moments, and
``kl_divergence`` — what policy-gradient agents (``Categorical(logits=...).sample()``, ``log_prob``)
and variational autoencoders (``Normal(mu, sigma).rsample()``, ``kl_divergence``) use.

Every formula is written in graphgrad ops, so it is differentiable, runs in graphs and on any device.
Shapes follow PyTorch: parameters broadcast to ``batch_shape``; ``sample(sample_shape)`` has shape
``sample_shape + batch_shape + event_shape``; ``log_prob(value)`` has the broadcast shape without the
event dims. ``Categorical``'s event is a class index (``event_shape == ()``; its last parameter axis
holds the classes).

    >>> dist = gg.distributions.Normal(gg.zeros(3), gg.ones(3))
    >>> x = dist.rsample((5,))                       # (5, 3)
    >>> dist.log_prob(x).shape
    (5, 3)
"""
from __future__ import annotations

import math
from typing import Any, Optional, Sequence

import graphgrad as gg  # graphgrad's ops, by their public names (looked up when called)
from graphgrad.core.autograd import no_grad
from graphgrad.core.random import Generator
from graphgrad.core.tensor import Tensor

_LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)


def _tensor(x: Any, like: Optional[Tensor] = None) -> Tensor:
    if isinstance(x, Tensor):
        return x
    dtype = like.dtype if like is not None and like.dtype.kind == "f" else None
    return Tensor(x, dtype=dtype or "float32")


def _broadcast(a: Any, b: Any) -> tuple:
    """Two parameters as tensors (``b`` in ``a``'s float dtype when a number) broadcast to one shape:
    ``(a, b, batch_shape)``."""
    a = _tensor(a)
    b = _tensor(b, a)
    batch = gg.broadcast_shapes(tuple(a.shape), tuple(b.shape))
    a = a if tuple(a.shape) == batch else gg.broadcast_to(a, batch)
    b = b if tuple(b.shape) == batch else gg.broadcast_to(b, batch)
    return a, b, batch


def _shape(sample_shape: Any) -> tuple:
    if isinstance(sample_shape, int):
        return (sample_shape,)
    return tuple(int(s) for s in sample_shape)


class Distribution:
    """The common interface. Subclasses set ``batch_shape`` and ``event_shape`` and define ``rsample``
    (or ``sample``), ``log_prob``, ``entropy``, ``mean`` and ``variance``."""

    has_rsample = False

    def __init__(self, batch_shape: tuple = (), event_shape: tuple = (), validate_args: Optional[bool] = None):
        self.batch_shape = tuple(batch_shape)
        self.event_shape = tuple(event_shape)

    def _extended_shape(self, sample_shape: Any = ()) -> tuple:
        return _shape(sample_shape) + self.batch_shape + self.event_shape

    def sample(self, sample_shape: Any = ()) -> Tensor:
        """Samples of shape ``sample_shape + batch_shape + event_shape``, outside autograd."""
        with no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        raise NotImplementedError(f"{type(self).__name__} has no reparameterized sampling (rsample); use sample()")

    def sample_n(self, n: int) -> Tensor:
        return self.sample((n,))

    @property
    def stddev(self) -> Tensor:
        return gg.sqrt(self.variance)

    def perplexity(self) -> Tensor:
        return gg.exp(self.entropy())

    def __repr__(self) -> str:
        return f"{type(self).__name__}(batch_shape={self.batch_shape}, event_shape={self.event_shape})"


class Normal(Distribution):
    """The normal distribution ``N(loc, scale^2)``; ``rsample`` is ``loc + scale * eps`` (reparameterized)."""

    has_rsample = True

    def __init__(self, loc: Any, scale: Any, validate_args: Optional[bool] = None):
        self.loc, self.scale, batch = _broadcast(loc, scale)
        super().__init__(batch)

    @property
    def mean(self) -> Tensor:
        return self.loc

    @property
    def mode(self) -> Tensor:
        return self.loc

    @property
    def stddev(self) -> Tensor:
        return self.scale

    @property
    def variance(self) -> Tensor:
        return self.scale * self.scale

    def rsample(self, sample_shape: Any = (), generator: Optional[Generator] = None) -> Tensor:
        eps = gg.randn(*self._extended_shape(sample_shape), generator=generator, dtype=self.loc.dtype,
                              device=self.loc.device)
        return self.loc + eps * self.scale

    def log_prob(self, value: Any) -> Tensor:
        value = _tensor(value, self.loc)
        z = (value - self.loc) / self.scale
        return z * z * -0.5 - gg.log(self.scale) - _LOG_SQRT_2PI

    def cdf(self, value: Any) -> Tensor:
        value = _tensor(value, self.loc)
        return (gg.erf((value - self.loc) / (self.scale * math.sqrt(2.0))) + 1.0) * 0.5

    def icdf(self, value: Any) -> Tensor:
        value = _tensor(value, self.loc)
        return self.loc + self.scale * gg.erfinv(value * 2.0 - 1.0) * math.sqrt(2.0)

    def entropy(self) -> Tensor:
        return gg.log(self.scale) + (0.5 + _LOG_SQRT_2PI)


class Uniform(Distribution):
    """The uniform distribution on ``[low, high)``; ``rsample`` is ``low + (high - low) * u``."""

    has_rsample = True

    def __init__(self, low: Any, high: Any, validate_args: Optional[bool] = None):
        self.low, self.high, batch = _broadcast(low, high)
        super().__init__(batch)

    @property
    def mean(self) -> Tensor:
        return (self.low + self.high) * 0.5

    @property
    def variance(self) -> Tensor:
        width = self.high - self.low
        return width * width / 12.0

    def rsample(self, sample_shape: Any = (), generator: Optional[Generator] = None) -> Tensor:
        u = gg.rand(*self._extended_shape(sample_shape), generator=generator, dtype=self.low.dtype,
                           device=self.low.device)
        return self.low + u * (self.high - self.low)

    def log_prob(self, value: Any) -> Tensor:
        value = _tensor(value, self.low)
        inside = gg.logical_and(gg.greater_equal(value, self.low), gg.less(value, self.high))
        return gg.where(inside, -gg.log(self.high - self.low), -math.inf)

    def cdf(self, value: Any) -> Tensor:
        value = _tensor(value, self.low)
        return gg.clip((value - self.low) / (self.high - self.low), 0.0, 1.0)

    def entropy(self) -> Tensor:
        return gg.log(self.high - self.low)


class Bernoulli(Distribution):
    """0/1 outcomes with probability ``probs`` of 1 (or ``logits``, its log-odds); samples are floats."""

    def __init__(self, probs: Any = None, logits: Any = None, validate_args: Optional[bool] = None):
        if (probs is None) == (logits is None):
            raise ValueError("Bernoulli: give either probs or logits, not both")
        if probs is not None:
            self.probs = _tensor(probs)
            clipped = gg.clip(self.probs, 1e-12, 1.0 - 1e-7)
            self.logits = gg.log(clipped) - gg.log1p(-clipped)
        else:
            self.logits = _tensor(logits)
            self.probs = gg.sigmoid(self.logits)
        super().__init__(tuple(self.logits.shape))

    @property
    def mean(self) -> Tensor:
        return self.probs

    @property
    def variance(self) -> Tensor:
        return self.probs * (1.0 - self.probs)

    def sample(self, sample_shape: Any = (), generator: Optional[Generator] = None) -> Tensor:
        with no_grad():
            u = gg.rand(*self._extended_shape(sample_shape), generator=generator, dtype=self.probs.dtype,
                               device=self.probs.device)
            return gg.astype(gg.less(u, self.probs), self.probs.dtype)

    def log_prob(self, value: Any) -> Tensor:
        value = _tensor(value, self.logits)
        logits, value = gg.broadcast_tensors(self.logits, value)
        return -gg.binary_cross_entropy_with_logits(logits, value, reduction="none")

    def entropy(self) -> Tensor:
        return gg.binary_cross_entropy_with_logits(self.logits, self.probs, reduction="none")


class Categorical(Distribution):
    """One of ``K`` classes with probabilities ``probs`` (normalized along the last axis) or ``logits``
    (unnormalized log-probabilities). Samples are int64 class indices of shape
    ``sample_shape + batch_shape`` (``batch_shape`` = the parameters' shape without the class axis)."""

    def __init__(self, probs: Any = None, logits: Any = None, validate_args: Optional[bool] = None):
        if (probs is None) == (logits is None):
            raise ValueError("Categorical: give either probs or logits, not both")
        if probs is not None:
            probs = _tensor(probs)
            self.probs = probs / gg.sum(probs, axis=-1, keepdims=True)
            self.logits = gg.log(gg.clip(self.probs, 1e-38, None))
        else:
            logits = _tensor(logits)
            self.logits = logits - gg.logsumexp(logits, axis=-1, keepdims=True)
            self.probs = gg.exp(self.logits)
        self._num_events = int(self.logits.shape[-1])
        super().__init__(tuple(self.logits.shape[:-1]))

    @property
    def param_shape(self) -> tuple:
        return tuple(self.logits.shape)

    @property
    def mean(self) -> Tensor:
        return gg.full(self.batch_shape, math.nan, dtype=self.probs.dtype)

    @property
    def variance(self) -> Tensor:
        return gg.full(self.batch_shape, math.nan, dtype=self.probs.dtype)

    @property
    def mode(self) -> Tensor:
        return gg.argmax(self.probs, axis=-1)

    def sample(self, sample_shape: Any = (), generator: Optional[Generator] = None) -> Tensor:
        """Class indices by inverse-CDF sampling: for each draw, the first class whose cumulative
        probability exceeds a uniform number."""
        sample_shape = _shape(sample_shape)
        with no_grad():
            cdf = gg.cumsum(self.probs, axis=-1)
            u = gg.rand(*(sample_shape + self.batch_shape + (1,)), generator=generator, dtype=self.probs.dtype,
                               device=self.probs.device)
            # compare each draw with every class's cumulative probability (cdf broadcast over the draws)
            below = gg.astype(gg.less_equal(cdf, u * cdf[..., -1:]), "int64")
            index = gg.sum(below, axis=-1)
            return gg.clip(index, 0, self._num_events - 1)

    def log_prob(self, value: Any) -> Tensor:
        value = gg.astype(_tensor(value) if isinstance(value, Tensor) else Tensor(value), "int64")
        batch = gg.broadcast_shapes(tuple(value.shape), self.batch_shape)
        logits = gg.broadcast_to(self.logits, batch + (self._num_events,))
        index = gg.expand_dims(gg.broadcast_to(value, batch), -1)
        return gg.squeeze(gg.take_along_axis(logits, index, -1), -1)

    def entropy(self) -> Tensor:
        return -gg.sum(self.probs * self.logits, axis=-1)

    def enumerate_support(self, expand: bool = True) -> Tensor:
        values = gg.arange(self._num_events, dtype="int64").reshape((-1,) + (1,) * len(self.batch_shape))
        return gg.broadcast_to(values, (self._num_events,) + self.batch_shape) if expand else values


class OneHotCategorical(Categorical):
    """``Categorical`` whose samples (and ``log_prob`` values) are one-hot vectors over the classes."""

    def __init__(self, probs: Any = None, logits: Any = None, validate_args: Optional[bool] = None):
        super().__init__(probs, logits, validate_args)
        self.event_shape = (self._num_events,)

    def sample(self, sample_shape: Any = (), generator: Optional[Generator] = None) -> Tensor:
        index = super().sample(sample_shape, generator)
        return gg.astype(gg.equal(gg.expand_dims(index, -1), gg.arange(self._num_events)), self.probs.dtype)

    def log_prob(self, value: Any) -> Tensor:
        value = _tensor(value, self.probs)
        return gg.sum(value * self.logits, axis=-1)


def kl_divergence(p: Distribution, q: Distribution) -> Tensor:
    """``KL(p || q)`` for two distributions of the same family (Normal, Categorical, OneHotCategorical,
    Bernoulli, Uniform), of the broadcast batch shape."""
    if isinstance(p, Normal) and isinstance(q, Normal):
        ratio = p.scale / q.scale
        ratio = ratio * ratio
        diff = (p.loc - q.loc) / q.scale
        return (ratio + diff * diff - 1.0 - gg.log(ratio)) * 0.5
    if isinstance(p, Categorical) and isinstance(q, Categorical):
        return gg.sum(p.probs * (p.logits - q.logits), axis=-1)
    if isinstance(p, Bernoulli) and isinstance(q, Bernoulli):
        return (p.probs * (gg.softplus(-q.logits) - gg.softplus(-p.logits))
                + (1.0 - p.probs) * (gg.softplus(q.logits) - gg.softplus(p.logits)))
    if isinstance(p, Uniform) and isinstance(q, Uniform):
        inside = gg.logical_and(gg.less_equal(q.low, p.low), gg.greater_equal(q.high, p.high))
        return gg.where(inside, gg.log((q.high - q.low) / (p.high - p.low)), math.inf)
    raise NotImplementedError(f"kl_divergence: no formula for {type(p).__name__} and {type(q).__name__}")


__all__ = ["Distribution", "Normal", "Uniform", "Bernoulli", "Categorical", "OneHotCategorical", "kl_divergence"]
