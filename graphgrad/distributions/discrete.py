"""Discrete families: Bernoulli, Categorical, OneHotCategorical, Poisson, Binomial, Multinomial,
Geometric. Samples are floats (class indices of ``Categorical`` are int64), as PyTorch's; they are
drawn outside autograd (no ``rsample``)."""
from __future__ import annotations

import math
from typing import Any, Optional

import graphgrad as gg
from graphgrad.core.autograd import no_grad
from graphgrad.core.random import Generator
from graphgrad.core.tensor import Tensor

from graphgrad.distributions import constraints
from graphgrad.distributions.distribution import (Distribution, ExponentialFamily, _np, _shape, _standard_draw,
                                                  _tensor, _tiny, broadcast_all, clamp_probs, logits_to_probs,
                                                  probs_to_logits)


def _probs_or_logits(name: str, probs: Any, logits: Any, is_binary: bool, normalize: bool = True) -> tuple:
    if (probs is None) == (logits is None):
        raise ValueError(f"{name}: either `probs` or `logits` must be specified, but not both.")
    if probs is not None:
        probs = _tensor(probs)
        if not is_binary and normalize:
            probs = probs / gg.sum(probs, axis=-1, keepdims=True)
        return probs, probs_to_logits(probs, is_binary)
    logits = _tensor(logits)
    if not is_binary:
        logits = logits - gg.logsumexp(logits, axis=-1, keepdims=True)
    return logits_to_probs(logits, is_binary), logits


class Bernoulli(ExponentialFamily):
    """0/1 outcomes with probability ``probs`` of 1 (or ``logits``, its log-odds); samples are floats."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.boolean
    has_enumerate_support = True

    def __init__(self, probs: Any = None, logits: Any = None, validate_args: Optional[bool] = None):
        self.probs, self.logits = _probs_or_logits("Bernoulli", probs, logits, True)
        super().__init__(tuple(self.logits.shape), validate_args=validate_args)

    @property
    def param_shape(self) -> tuple:
        return tuple(self.probs.shape)

    @property
    def mean(self) -> Tensor:
        return self.probs

    @property
    def mode(self) -> Tensor:
        mode = gg.astype(gg.greater_equal(self.probs, 0.5), self.probs.dtype)
        return gg.where(gg.equal(self.probs, 0.5), math.nan, mode)

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
        self._validate_sample(value)
        logits, value = gg.broadcast_tensors(self.logits, value)
        return -gg.binary_cross_entropy_with_logits(logits, value, reduction="none")

    def entropy(self) -> Tensor:
        return gg.binary_cross_entropy_with_logits(self.logits, self.probs, reduction="none")

    def enumerate_support(self, expand: bool = True) -> Tensor:
        values = gg.arange(2, dtype=self.probs.dtype).reshape((-1,) + (1,) * len(self.batch_shape))
        return gg.broadcast_to(values, (2,) + self.batch_shape) if expand else values


class Categorical(Distribution):
    """One of ``K`` classes with probabilities ``probs`` (normalized along the last axis) or ``logits``
    (unnormalized log-probabilities). Samples are int64 class indices of shape
    ``sample_shape + batch_shape`` (``batch_shape`` = the parameters' shape without the class axis)."""

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.independent(constraints.real, 1)}
    has_enumerate_support = True

    def __init__(self, probs: Any = None, logits: Any = None, validate_args: Optional[bool] = None):
        self.probs, self.logits = _probs_or_logits(type(self).__name__, probs, logits, False)
        if self.logits.ndim < 1:
            raise ValueError("`probs`/`logits` parameter must be at least one-dimensional.")
        self._num_events = int(self.logits.shape[-1])
        super().__init__(tuple(self.logits.shape[:-1]), validate_args=validate_args)

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self):
        return constraints.integer_interval(0, self._num_events - 1)

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
            below = gg.astype(gg.less_equal(cdf, u * cdf[..., -1:]), "int64")
            index = gg.sum(below, axis=-1)
            return gg.clip(index, 0, self._num_events - 1)

    def log_prob(self, value: Any) -> Tensor:
        value = gg.astype(value if isinstance(value, Tensor) else Tensor(value), "int64")
        batch = gg.broadcast_shapes(tuple(value.shape), self.batch_shape)
        logits = gg.broadcast_to(self.logits, batch + (self._num_events,))
        index = gg.expand_dims(gg.broadcast_to(value, batch), -1)
        return gg.squeeze(gg.take_along_axis(logits, index, -1), -1)

    def entropy(self) -> Tensor:
        min_real = float(gg.backend.np.finfo(self.logits.dtype).min)
        return -gg.sum(self.probs * gg.clip(self.logits, min_real, None), axis=-1)

    def enumerate_support(self, expand: bool = True) -> Tensor:
        values = gg.arange(self._num_events, dtype="int64").reshape((-1,) + (1,) * len(self.batch_shape))
        return gg.broadcast_to(values, (self._num_events,) + self.batch_shape) if expand else values


class OnCategorical:
    """For a distribution built on a ``Categorical`` of the same ``probs``/``logits`` (kept as
    ``_categorical``): setting them up, ``expand`` (which expands the categorical too) and ``param_shape``."""

    def _set_categorical(self, probs: Any, logits: Any) -> None:
        self._categorical = Categorical(probs, logits)
        self.probs, self.logits = self._categorical.probs, self._categorical.logits

    def expand(self, batch_shape: Any, _instance: Any = None) -> Any:
        new = super().expand(batch_shape)
        new._categorical = self._categorical.expand(batch_shape)
        return new

    @property
    def param_shape(self) -> tuple:
        return tuple(self.logits.shape)


class OneHotCategorical(OnCategorical, Distribution):
    """``Categorical`` whose samples (and ``log_prob`` values) are one-hot vectors over the classes."""

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.independent(constraints.real, 1)}
    support = constraints.one_hot
    has_enumerate_support = True
    _batch_params = ("probs", "logits")

    def __init__(self, probs: Any = None, logits: Any = None, validate_args: Optional[bool] = None):
        self._set_categorical(probs, logits)
        self._num_events = self._categorical._num_events
        super().__init__(self._categorical.batch_shape, (self._num_events,), validate_args=validate_args)

    @property
    def mean(self) -> Tensor:
        return self.probs

    @property
    def mode(self) -> Tensor:
        return gg.astype(gg.one_hot(gg.argmax(self.probs, axis=-1), self._num_events), self.probs.dtype)

    @property
    def variance(self) -> Tensor:
        return self.probs * (1.0 - self.probs)

    def sample(self, sample_shape: Any = (), generator: Optional[Generator] = None) -> Tensor:
        index = self._categorical.sample(sample_shape, generator)
        return gg.astype(gg.equal(gg.expand_dims(index, -1), gg.arange(self._num_events)), self.probs.dtype)

    def log_prob(self, value: Any) -> Tensor:
        value = _tensor(value, self.probs)
        return self._categorical.log_prob(gg.argmax(value, axis=-1))

    def entropy(self) -> Tensor:
        return self._categorical.entropy()

    def enumerate_support(self, expand: bool = True) -> Tensor:
        n = self._num_events
        values = gg.eye(n, dtype=self.probs.dtype).reshape((n,) + (1,) * len(self.batch_shape) + (n,))
        return gg.broadcast_to(values, (n,) + self.batch_shape + (n,)) if expand else values


class Poisson(ExponentialFamily):
    """The Poisson distribution with ``rate``; samples (floats) come from NumPy's Poisson sampler
    through graphgrad's generator."""

    arg_constraints = {"rate": constraints.nonnegative}
    support = constraints.nonnegative_integer

    def __init__(self, rate: Any, validate_args: Optional[bool] = None):
        (self.rate,) = broadcast_all(rate)
        super().__init__(tuple(self.rate.shape), validate_args=validate_args)

    @property
    def mean(self) -> Tensor:
        return self.rate

    @property
    def mode(self) -> Tensor:
        return gg.floor(self.rate)

    @property
    def variance(self) -> Tensor:
        return self.rate

    def sample(self, sample_shape: Any = (), generator: Optional[Generator] = None) -> Tensor:
        shape = self._extended_shape(sample_shape)
        rate = _np(self.rate)
        return _standard_draw(lambda rng: rng.poisson(gg.backend.np.broadcast_to(rate, shape)), self.rate, generator)

    def log_prob(self, value: Any) -> Tensor:
        value = _tensor(value, self.rate)
        self._validate_sample(value)
        return gg.xlogy(value, self.rate) - self.rate - gg.lgamma(value + 1.0)


class Binomial(Distribution):
    """The number of successes in ``total_count`` Bernoulli trials with ``probs`` (or ``logits``)."""

    arg_constraints = {"total_count": constraints.nonnegative_integer, "probs": constraints.unit_interval,
                       "logits": constraints.real}
    has_enumerate_support = True

    def __init__(self, total_count: Any = 1, probs: Any = None, logits: Any = None,
                 validate_args: Optional[bool] = None):
        probs, logits = _probs_or_logits("Binomial", probs, logits, True)
        self.total_count, self.probs, self.logits = broadcast_all(total_count, probs, logits)
        self.total_count = gg.astype(self.total_count, self.probs.dtype)
        super().__init__(tuple(self.probs.shape), validate_args=validate_args)

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self):
        return constraints.integer_interval(0, self.total_count)

    @property
    def param_shape(self) -> tuple:
        return tuple(self.probs.shape)

    @property
    def mean(self) -> Tensor:
        return self.total_count * self.probs

    @property
    def mode(self) -> Tensor:
        return gg.minimum(gg.floor((self.total_count + 1.0) * self.probs), self.total_count)

    @property
    def variance(self) -> Tensor:
        return self.total_count * self.probs * (1.0 - self.probs)

    def sample(self, sample_shape: Any = (), generator: Optional[Generator] = None) -> Tensor:
        shape = self._extended_shape(sample_shape)
        n = _np(self.total_count).astype("int64")
        p = _np(self.probs)
        np_ = gg.backend.np
        return _standard_draw(lambda rng: rng.binomial(np_.broadcast_to(n, shape), np_.broadcast_to(p, shape)),
                              self.probs, generator)

    def log_prob(self, value: Any) -> Tensor:
        value = _tensor(value, self.probs)
        self._validate_sample(value)
        n = self.total_count
        log_comb = gg.lgamma(n + 1.0) - gg.lgamma(value + 1.0) - gg.lgamma(n - value + 1.0)
        # k log p + (n - k) log(1 - p), stable in the logits (0 * log 0 = 0 at p = 0 or 1)
        return log_comb + value * self.logits - n * gg.softplus(self.logits)

    def entropy(self) -> Tensor:
        n = int(gg.max(self.total_count).numpy())
        if not bool(gg.all(gg.equal(self.total_count, n)).numpy()):
            raise NotImplementedError("Inhomogeneous total count not supported by `entropy`.")
        support = self.enumerate_support(False)
        lp = self.log_prob(support)
        return -gg.sum(gg.exp(lp) * lp, axis=0)

    def enumerate_support(self, expand: bool = True) -> Tensor:
        n = int(gg.max(self.total_count).numpy())
        if not bool(gg.all(gg.equal(self.total_count, n)).numpy()):
            raise NotImplementedError("Inhomogeneous total count not supported by `enumerate_support`.")
        values = gg.arange(1 + n, dtype=self.probs.dtype).reshape((-1,) + (1,) * len(self.batch_shape))
        return gg.broadcast_to(values, (1 + n,) + self.batch_shape) if expand else values


class Multinomial(Distribution):
    """Counts over ``K`` classes from ``total_count`` (an int) categorical draws with ``probs`` or
    ``logits``; the event shape is ``(K,)``."""

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.independent(constraints.real, 1)}
    _batch_params = ("probs", "logits")

    def __init__(self, total_count: int = 1, probs: Any = None, logits: Any = None,
                 validate_args: Optional[bool] = None):
        if not isinstance(total_count, int):
            raise NotImplementedError("inhomogeneous total_count is not supported")
        self.total_count = total_count
        self._categorical = Categorical(probs=probs, logits=logits)
        self.probs, self.logits = self._categorical.probs, self._categorical.logits
        shape = tuple(self.probs.shape)
        super().__init__(shape[:-1], shape[-1:], validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> "Multinomial":
        new = super().expand(batch_shape)
        new._categorical = self._categorical.expand(batch_shape)
        return new

    @constraints.dependent_property(is_discrete=True, event_dim=1)
    def support(self):
        return constraints.multinomial(self.total_count)

    @property
    def param_shape(self) -> tuple:
        return tuple(self.probs.shape)

    @property
    def mean(self) -> Tensor:
        return self.probs * self.total_count

    @property
    def variance(self) -> Tensor:
        return self.total_count * self.probs * (1.0 - self.probs)

    def sample(self, sample_shape: Any = (), generator: Optional[Generator] = None) -> Tensor:
        sample_shape = _shape(sample_shape)
        k = self.event_shape[0]
        with no_grad():
            draws = self._categorical.sample((self.total_count,) + sample_shape, generator)
            one_hot = gg.equal(gg.expand_dims(draws, -1), gg.arange(k))
            return gg.sum(gg.astype(one_hot, self.probs.dtype), axis=0)

    def log_prob(self, value: Any) -> Tensor:
        value = _tensor(value, self.probs)
        self._validate_sample(value)
        logits = gg.where(gg.logical_and(gg.equal(value, 0), gg.isneginf(self.logits)), 0.0, self.logits)
        log_factorial_n = math.lgamma(self.total_count + 1)
        return log_factorial_n - gg.sum(gg.lgamma(value + 1.0), axis=-1) + gg.sum(value * logits, axis=-1)

    def entropy(self) -> Tensor:
        n = float(self.total_count)
        cat_entropy = self._categorical.entropy()
        binomial = Binomial(n, probs=self.probs)
        support = binomial.enumerate_support(False)[1:]   # (n, 1.., 1)
        lp = binomial.log_prob(support)
        weights = gg.lgamma(support + 1.0)
        return n * cat_entropy - math.lgamma(n + 1) + gg.sum(gg.sum(gg.exp(lp) * weights, axis=0), axis=-1)


class Geometric(Distribution):
    """The number of failures before the first success in Bernoulli trials with ``probs`` (or ``logits``)."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.nonnegative_integer

    def __init__(self, probs: Any = None, logits: Any = None, validate_args: Optional[bool] = None):
        self.probs, self.logits = _probs_or_logits("Geometric", probs, logits, True)
        super().__init__(tuple(self.probs.shape), validate_args=validate_args)

    @property
    def mean(self) -> Tensor:
        return 1.0 / self.probs - 1.0

    @property
    def mode(self) -> Tensor:
        return gg.zeros_like(self.probs)

    @property
    def variance(self) -> Tensor:
        return (1.0 / self.probs - 1.0) / self.probs

    def sample(self, sample_shape: Any = (), generator: Optional[Generator] = None) -> Tensor:
        with no_grad():
            u = gg.rand(*self._extended_shape(sample_shape), generator=generator, dtype=self.probs.dtype,
                        device=self.probs.device)
            u = gg.clip(u, _tiny(u), None)
            return gg.floor(gg.log(u) / gg.log1p(-self.probs))

    def log_prob(self, value: Any) -> Tensor:
        value = _tensor(value, self.probs)
        self._validate_sample(value)
        probs = gg.where(gg.logical_and(gg.equal(self.probs, 1.0), gg.equal(value, 0.0)), 0.0, self.probs)
        return value * gg.log1p(-probs) + gg.log(self.probs)

    def entropy(self) -> Tensor:
        return gg.binary_cross_entropy_with_logits(self.logits, self.probs, reduction="none") / self.probs
