"""Univariate continuous families: Normal, Uniform, Exponential, Laplace, Cauchy, Gamma, Chi2, Beta,
StudentT, and the (multivariate-event) Dirichlet. All formulas are graphgrad ops (differentiable);
``rsample`` is reparameterized (Gamma, Chi2, Beta, Dirichlet and StudentT through the implicit
gamma gradient of :mod:`._gamma`)."""
from __future__ import annotations

import math
from typing import Any, Optional

import graphgrad as gg
from graphgrad.core.random import Generator
from graphgrad.core.tensor import Tensor

from graphgrad.distributions import constraints
from graphgrad.distributions._gamma import gammainc, standard_gamma
from graphgrad.distributions.distribution import (_LOG_SQRT_2PI, Distribution, ExponentialFamily, _eps, _np,
                                                  _tensor, _tiny, broadcast_all)

_nan, _inf = math.nan, math.inf


def _full(shape: tuple, fill: float, like: Tensor) -> Tensor:
    return gg.full(shape, fill, dtype=like.dtype, device=like.device)


class _LocationScale:
    """What the real-line location-scale families share: ``loc`` and ``scale`` broadcast to the batch
    shape, their constraints, reparameterized sampling, and the mode at ``loc``."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc: Any, scale: Any, validate_args: Optional[bool] = None):
        self.loc, self.scale = broadcast_all(loc, scale)
        super().__init__(tuple(self.loc.shape), validate_args=validate_args)

    @property
    def mode(self) -> Tensor:
        return self.loc


class Normal(_LocationScale, ExponentialFamily):
    """The normal distribution ``N(loc, scale^2)``; ``rsample`` is ``loc + scale * eps`` (reparameterized).

        >>> Normal(gg.zeros(3), gg.ones(3)).rsample((5,)).shape
        (5, 3)
    """

    @property
    def mean(self) -> Tensor:
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
        self._validate_sample(value)
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

    arg_constraints = {"low": constraints.dependent(is_discrete=False, event_dim=0),
                       "high": constraints.dependent(is_discrete=False, event_dim=0)}
    has_rsample = True

    def __init__(self, low: Any, high: Any, validate_args: Optional[bool] = None):
        self.low, self.high = broadcast_all(low, high)
        super().__init__(tuple(self.low.shape), validate_args=validate_args)
        if self._validate_args and not bool(gg.all(gg.less(self.low, self.high)).numpy()):
            raise ValueError("Uniform: expected low < high")

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        return constraints.interval(self.low, self.high)

    @property
    def mean(self) -> Tensor:
        return (self.low + self.high) * 0.5

    @property
    def mode(self) -> Tensor:
        return _full(self.batch_shape, _nan, self.low)

    @property
    def stddev(self) -> Tensor:
        return (self.high - self.low) / 12 ** 0.5

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

    def icdf(self, value: Any) -> Tensor:
        value = _tensor(value, self.low)
        return value * (self.high - self.low) + self.low

    def entropy(self) -> Tensor:
        return gg.log(self.high - self.low)


class Exponential(ExponentialFamily):
    """The exponential distribution with ``rate`` (mean ``1 / rate``)."""

    arg_constraints = {"rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True

    def __init__(self, rate: Any, validate_args: Optional[bool] = None):
        (self.rate,) = broadcast_all(rate)
        super().__init__(tuple(self.rate.shape), validate_args=validate_args)

    @property
    def mean(self) -> Tensor:
        return 1.0 / self.rate

    @property
    def mode(self) -> Tensor:
        return gg.zeros_like(self.rate)

    @property
    def stddev(self) -> Tensor:
        return 1.0 / self.rate

    @property
    def variance(self) -> Tensor:
        return 1.0 / (self.rate * self.rate)

    def rsample(self, sample_shape: Any = (), generator: Optional[Generator] = None) -> Tensor:
        u = gg.rand(*self._extended_shape(sample_shape), generator=generator, dtype=self.rate.dtype,
                    device=self.rate.device)
        return -gg.log1p(-u) / self.rate

    def log_prob(self, value: Any) -> Tensor:
        value = _tensor(value, self.rate)
        self._validate_sample(value)
        return gg.log(self.rate) - self.rate * value

    def cdf(self, value: Any) -> Tensor:
        value = _tensor(value, self.rate)
        return 1.0 - gg.exp(-self.rate * value)

    def icdf(self, value: Any) -> Tensor:
        value = _tensor(value, self.rate)
        return -gg.log1p(-value) / self.rate

    def entropy(self) -> Tensor:
        return 1.0 - gg.log(self.rate)


class Laplace(_LocationScale, Distribution):
    """The Laplace (double exponential) distribution with ``loc`` and ``scale``."""

    @property
    def mean(self) -> Tensor:
        return self.loc

    @property
    def variance(self) -> Tensor:
        return self.scale * self.scale * 2.0

    @property
    def stddev(self) -> Tensor:
        return self.scale * math.sqrt(2.0)

    def rsample(self, sample_shape: Any = (), generator: Optional[Generator] = None) -> Tensor:
        eps = _eps(self.loc)
        u = gg.rand(*self._extended_shape(sample_shape), generator=generator, dtype=self.loc.dtype,
                    device=self.loc.device) * (2.0 - eps) + (eps - 1.0)
        return self.loc - self.scale * gg.sign(u) * gg.log1p(-gg.abs(u))

    def log_prob(self, value: Any) -> Tensor:
        value = _tensor(value, self.loc)
        return -gg.log(2.0 * self.scale) - gg.abs(value - self.loc) / self.scale

    def cdf(self, value: Any) -> Tensor:
        value = _tensor(value, self.loc)
        return 0.5 - 0.5 * gg.sign(value - self.loc) * gg.expm1(-gg.abs(value - self.loc) / self.scale)

    def icdf(self, value: Any) -> Tensor:
        value = _tensor(value, self.loc)
        term = value - 0.5
        return self.loc - self.scale * gg.sign(term) * gg.log1p(-2.0 * gg.abs(term))

    def entropy(self) -> Tensor:
        return 1.0 + gg.log(2.0 * self.scale)


class Cauchy(_LocationScale, Distribution):
    """The Cauchy (Lorentz) distribution; its mean and variance are undefined (NaN / inf, as PyTorch)."""

    @property
    def mean(self) -> Tensor:
        return _full(self.batch_shape, _nan, self.loc)

    @property
    def variance(self) -> Tensor:
        return _full(self.batch_shape, _inf, self.loc)

    def rsample(self, sample_shape: Any = (), generator: Optional[Generator] = None) -> Tensor:
        u = gg.rand(*self._extended_shape(sample_shape), generator=generator, dtype=self.loc.dtype,
                    device=self.loc.device)
        return self.loc + self.scale * gg.tan(math.pi * (u - 0.5))

    def log_prob(self, value: Any) -> Tensor:
        value = _tensor(value, self.loc)
        z = (value - self.loc) / self.scale
        return -math.log(math.pi) - gg.log(self.scale) - gg.log1p(z * z)

    def cdf(self, value: Any) -> Tensor:
        value = _tensor(value, self.loc)
        return gg.arctan((value - self.loc) / self.scale) / math.pi + 0.5

    def icdf(self, value: Any) -> Tensor:
        value = _tensor(value, self.loc)
        return gg.tan(math.pi * (value - 0.5)) * self.scale + self.loc

    def entropy(self) -> Tensor:
        return math.log(4 * math.pi) + gg.log(self.scale)


class Gamma(ExponentialFamily):
    """The gamma distribution with shape ``concentration`` and ``rate`` (mean ``concentration / rate``).

    Samples come from NumPy's gamma sampler through graphgrad's generator; ``rsample`` carries the
    implicit reparameterization gradient into ``concentration`` (and ``rate``), as PyTorch's.
    ``cdf`` is the regularized incomplete gamma function: differentiable in ``value`` and ``rate``,
    constant in ``concentration``."""

    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True

    def __init__(self, concentration: Any, rate: Any, validate_args: Optional[bool] = None):
        self.concentration, self.rate = broadcast_all(concentration, rate)
        super().__init__(tuple(self.concentration.shape), validate_args=validate_args)

    @property
    def mean(self) -> Tensor:
        return self.concentration / self.rate

    @property
    def mode(self) -> Tensor:
        return gg.clip((self.concentration - 1.0) / self.rate, 0.0, None)

    @property
    def variance(self) -> Tensor:
        return self.concentration / (self.rate * self.rate)

    def rsample(self, sample_shape: Any = (), generator: Optional[Generator] = None) -> Tensor:
        shape = self._extended_shape(sample_shape)
        value = standard_gamma(self.concentration, shape, generator) / self.rate
        return gg.clip(value, _tiny(value), None)

    def log_prob(self, value: Any) -> Tensor:
        value = _tensor(value, self.rate)
        self._validate_sample(value)
        a, b = self.concentration, self.rate
        return gg.xlogy(a, b) + gg.xlogy(a - 1.0, value) - b * value - gg.lgamma(a)

    def cdf(self, value: Any) -> Tensor:
        value = _tensor(value, self.rate)
        x = self.rate * value
        a = gg.broadcast_to(self.concentration, tuple(x.shape))
        p = gg.tensor(gammainc(_np(a), _np(x)).astype(x.dtype), device=x.device)
        # P(a, x) with dP/dx = the standard gamma density, so gradients reach value and rate
        dens = gg.exp(gg.xlogy(a - 1.0, x) - x - gg.lgamma(a)).detach()
        return p + (x - x.detach()) * dens

    def entropy(self) -> Tensor:
        a = self.concentration
        return a - gg.log(self.rate) + gg.lgamma(a) + (1.0 - a) * gg.digamma(a)


class Chi2(Gamma):
    """The chi-squared distribution with ``df`` degrees of freedom (``Gamma(df / 2, 1 / 2)``)."""

    arg_constraints = {"df": constraints.positive}
    _batch_params = ("concentration", "rate")

    def __init__(self, df: Any, validate_args: Optional[bool] = None):
        (df,) = broadcast_all(df)
        super().__init__(0.5 * df, gg.full_like(df, 0.5), validate_args=validate_args)

    @property
    def df(self) -> Tensor:
        return self.concentration * 2.0


class Beta(ExponentialFamily):
    """The beta distribution on ``(0, 1)`` with ``concentration1`` (alpha) and ``concentration0`` (beta).
    ``rsample`` is ``X / (X + Y)`` of reparameterized gamma draws."""

    arg_constraints = {"concentration1": constraints.positive, "concentration0": constraints.positive}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, concentration1: Any, concentration0: Any, validate_args: Optional[bool] = None):
        self.concentration1, self.concentration0 = broadcast_all(concentration1, concentration0)
        super().__init__(tuple(self.concentration1.shape), validate_args=validate_args)

    @property
    def mean(self) -> Tensor:
        return self.concentration1 / (self.concentration1 + self.concentration0)

    @property
    def mode(self) -> Tensor:
        # PyTorch's: the Dirichlet mode of (concentration1, concentration0), first coordinate
        a, b = gg.clip(self.concentration1 - 1.0, 0.0, None), gg.clip(self.concentration0 - 1.0, 0.0, None)
        mode = a / (a + b)
        both_below = gg.logical_and(gg.less(self.concentration1, 1.0), gg.less(self.concentration0, 1.0))
        larger = gg.astype(gg.greater_equal(self.concentration1, self.concentration0), mode.dtype)
        return gg.where(both_below, larger, mode)

    @property
    def variance(self) -> Tensor:
        a, b = self.concentration1, self.concentration0
        total = a + b
        return a * b / (total * total * (total + 1.0))

    def rsample(self, sample_shape: Any = (), generator: Optional[Generator] = None) -> Tensor:
        shape = self._extended_shape(sample_shape)
        x = standard_gamma(self.concentration1, shape, generator)
        y = standard_gamma(self.concentration0, shape, generator)
        eps = _eps(x)
        return gg.clip(x / (x + y), eps, 1.0 - eps)

    def log_prob(self, value: Any) -> Tensor:
        value = _tensor(value, self.concentration1)
        self._validate_sample(value)
        a, b = self.concentration1, self.concentration0
        return (gg.xlogy(a - 1.0, value) + gg.xlogy(b - 1.0, 1.0 - value)
                - (gg.lgamma(a) + gg.lgamma(b) - gg.lgamma(a + b)))

    def entropy(self) -> Tensor:
        a, b = self.concentration1, self.concentration0
        total = a + b
        return (gg.lgamma(a) + gg.lgamma(b) - gg.lgamma(total) - (a - 1.0) * gg.digamma(a)
                - (b - 1.0) * gg.digamma(b) + (total - 2.0) * gg.digamma(total))


class Dirichlet(ExponentialFamily):
    """The Dirichlet distribution over the simplex (event shape ``(K,)``) with ``concentration``;
    ``rsample`` normalizes reparameterized gamma draws."""

    arg_constraints = {"concentration": constraints.independent(constraints.positive, 1)}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, concentration: Any, validate_args: Optional[bool] = None):
        self.concentration = _tensor(concentration)
        if self.concentration.ndim < 1:
            raise ValueError("Dirichlet: `concentration` parameter must be at least one-dimensional.")
        shape = tuple(self.concentration.shape)
        super().__init__(shape[:-1], shape[-1:], validate_args=validate_args)

    @property
    def mean(self) -> Tensor:
        return self.concentration / gg.sum(self.concentration, axis=-1, keepdims=True)

    @property
    def mode(self) -> Tensor:
        cm1 = gg.clip(self.concentration - 1.0, 0.0, None)
        mode = cm1 / gg.sum(cm1, axis=-1, keepdims=True)
        all_below = gg.all(gg.less(self.concentration, 1.0), axis=-1, keepdims=True)
        one_hot = gg.astype(gg.one_hot(gg.argmax(self.concentration, axis=-1), self.event_shape[0]), mode.dtype)
        return gg.where(all_below, one_hot, mode)

    @property
    def variance(self) -> Tensor:
        a = self.concentration
        a0 = gg.sum(a, axis=-1, keepdims=True)
        return a * (a0 - a) / (a0 * a0 * (a0 + 1.0))

    def rsample(self, sample_shape: Any = (), generator: Optional[Generator] = None) -> Tensor:
        x = standard_gamma(self.concentration, self._extended_shape(sample_shape), generator)
        tiny = _tiny(x)
        x = x / gg.sum(x, axis=-1, keepdims=True)
        return gg.clip(x, tiny, 1.0 - _eps(x))

    def log_prob(self, value: Any) -> Tensor:
        value = _tensor(value, self.concentration)
        self._validate_sample(value)
        a = self.concentration
        return (gg.sum(gg.xlogy(a - 1.0, value), axis=-1) + gg.lgamma(gg.sum(a, axis=-1))
                - gg.sum(gg.lgamma(a), axis=-1))

    def entropy(self) -> Tensor:
        a = self.concentration
        k = a.shape[-1]
        a0 = gg.sum(a, axis=-1)
        return (gg.sum(gg.lgamma(a), axis=-1) - gg.lgamma(a0) - (k - a0) * gg.digamma(a0)
                - gg.sum((a - 1.0) * gg.digamma(a), axis=-1))


class StudentT(Distribution):
    """Student's t-distribution with ``df`` degrees of freedom, ``loc`` and ``scale``; ``rsample`` is
    ``loc + scale * N / sqrt(Chi2(df) / df)`` (reparameterized)."""

    arg_constraints = {"df": constraints.positive, "loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, df: Any, loc: Any = 0.0, scale: Any = 1.0, validate_args: Optional[bool] = None):
        self.df, self.loc, self.scale = broadcast_all(df, loc, scale)
        super().__init__(tuple(self.df.shape), validate_args=validate_args)

    @property
    def mode(self) -> Tensor:
        return self.loc

    @property
    def mean(self) -> Tensor:
        return gg.where(gg.greater(self.df, 1.0), self.loc, _nan)

    @property
    def variance(self) -> Tensor:
        df = self.df
        var = self.scale * self.scale * df / gg.where(gg.greater(df, 2.0), df - 2.0, 1.0)
        var = gg.where(gg.greater(df, 2.0), var, _inf)
        return gg.where(gg.greater(df, 1.0), var, _nan)

    def rsample(self, sample_shape: Any = (), generator: Optional[Generator] = None) -> Tensor:
        shape = self._extended_shape(sample_shape)
        x = gg.randn(*shape, generator=generator, dtype=self.df.dtype, device=self.df.device)
        z = standard_gamma(0.5 * self.df, shape, generator) * 2.0
        y = x * gg.rsqrt(z / self.df)
        return self.loc + self.scale * y

    def log_prob(self, value: Any) -> Tensor:
        value = _tensor(value, self.df)
        y = (value - self.loc) / self.scale
        z = (gg.log(self.scale) + 0.5 * gg.log(self.df) + 0.5 * math.log(math.pi)
             + gg.lgamma(0.5 * self.df) - gg.lgamma(0.5 * (self.df + 1.0)))
        return -0.5 * (self.df + 1.0) * gg.log1p(y * y / self.df) - z

    def entropy(self) -> Tensor:
        df = self.df
        lbeta = gg.lgamma(0.5 * df) + math.lgamma(0.5) - gg.lgamma(0.5 * (df + 1.0))
        return (gg.log(self.scale) + 0.5 * (df + 1.0) * (gg.digamma(0.5 * (df + 1.0)) - gg.digamma(0.5 * df))
                + 0.5 * gg.log(df) + lbeta)
