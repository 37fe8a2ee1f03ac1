"""More families of ``torch.distributions``: NegativeBinomial, Pareto, Weibull, InverseGamma and
FisherSnedecor (the last four reparameterized)."""
from __future__ import annotations

import math
from typing import Any, Optional

import graphgrad as gg
from graphgrad.core.random import Generator
from graphgrad.core.tensor import Tensor

from graphgrad.distributions import constraints
from graphgrad.distributions._gamma import standard_gamma
from graphgrad.distributions.composite import TransformedDistribution
from graphgrad.distributions.continuous import Exponential, Gamma
from graphgrad.distributions.discrete import _probs_or_logits
from graphgrad.distributions.distribution import (EULER, Distribution, _np, _shape, _standard_draw, _tensor, _tiny,
                                                  broadcast_all)
from graphgrad.distributions.transforms import AffineTransform, ExpTransform, PowerTransform


class NegativeBinomial(Distribution):
    """The number of successes (probability ``probs``) before ``total_count`` failures."""

    arg_constraints = {"total_count": constraints.greater_than_eq(0), "probs": constraints.half_open_interval(0.0, 1.0),
                       "logits": constraints.real}
    support = constraints.nonnegative_integer

    def __init__(self, total_count: Any, probs: Any = None, logits: Any = None, validate_args: Optional[bool] = None):
        probs, logits = _probs_or_logits("NegativeBinomial", probs, logits, True)
        self.total_count, self.probs, self.logits = broadcast_all(total_count, probs, logits)
        self.total_count = gg.astype(self.total_count, self.probs.dtype)
        super().__init__(tuple(self.probs.shape), validate_args=validate_args)

    @property
    def mean(self) -> Tensor:
        return self.total_count * gg.exp(self.logits)

    @property
    def mode(self) -> Tensor:
        return gg.clip(gg.floor((self.total_count - 1.0) * gg.exp(self.logits)), 0.0, None)

    @property
    def variance(self) -> Tensor:
        return self.mean / gg.sigmoid(-self.logits)

    def sample(self, sample_shape: Any = (), generator: Optional[Generator] = None) -> Tensor:
        shape = self._extended_shape(sample_shape)
        n, p = _np(self.total_count), _np(self.probs)
        np_ = gg.backend.np
        return _standard_draw(lambda rng: rng.negative_binomial(np_.broadcast_to(n, shape),
                                                                np_.broadcast_to(1.0 - p, shape)),
                              self.probs, generator)

    def log_prob(self, value: Any) -> Tensor:
        value = _tensor(value, self.probs)
        self._validate_sample(value)
        r = self.total_count
        log_unnormalized = r * gg.logsigmoid(-self.logits) + value * gg.logsigmoid(self.logits)
        log_normalization = -gg.lgamma(r + value) + gg.lgamma(1.0 + value) + gg.lgamma(r)
        log_normalization = gg.where(gg.equal(r + value, 0.0), 0.0, log_normalization)
        return log_unnormalized - log_normalization


class Pareto(TransformedDistribution):
    """The Pareto (type I) distribution with ``scale`` (minimum) and shape ``alpha``."""

    arg_constraints = {"alpha": constraints.positive, "scale": constraints.positive}
    has_rsample = True

    def __init__(self, scale: Any, alpha: Any, validate_args: Optional[bool] = None):
        self.scale, self.alpha = broadcast_all(scale, alpha)
        super().__init__(Exponential(self.alpha), [ExpTransform(), AffineTransform(0.0, self.scale)],
                         validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> "Pareto":
        batch_shape = _shape(batch_shape)
        return Pareto(gg.broadcast_to(self.scale, batch_shape), gg.broadcast_to(self.alpha, batch_shape))

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        return constraints.greater_than_eq(self.scale)

    @property
    def mean(self) -> Tensor:
        a = gg.clip(self.alpha, 1.0, None)
        return gg.where(gg.greater(self.alpha, 1.0), a * self.scale / (a - 1.0), math.inf)

    @property
    def mode(self) -> Tensor:
        return self.scale

    @property
    def variance(self) -> Tensor:
        a = gg.clip(self.alpha, 2.0, None)
        var = self.scale * self.scale * a / (gg.where(gg.greater(self.alpha, 2.0), (a - 1.0) ** 2 * (a - 2.0), 1.0))
        return gg.where(gg.greater(self.alpha, 2.0), var, math.inf)

    def entropy(self) -> Tensor:
        return gg.log(self.scale / self.alpha) + 1.0 / self.alpha + 1.0


class Weibull(TransformedDistribution):
    """The Weibull distribution with ``scale`` and shape ``concentration``."""

    arg_constraints = {"scale": constraints.positive, "concentration": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, scale: Any, concentration: Any, validate_args: Optional[bool] = None):
        self.scale, self.concentration = broadcast_all(scale, concentration)
        self.concentration_reciprocal = 1.0 / self.concentration
        super().__init__(Exponential(gg.ones_like(self.scale)),
                         [PowerTransform(self.concentration_reciprocal), AffineTransform(0.0, self.scale)],
                         validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> "Weibull":
        batch_shape = _shape(batch_shape)
        return Weibull(gg.broadcast_to(self.scale, batch_shape), gg.broadcast_to(self.concentration, batch_shape))

    @property
    def mean(self) -> Tensor:
        return self.scale * gg.exp(gg.lgamma(1.0 + self.concentration_reciprocal))

    @property
    def mode(self) -> Tensor:
        k = self.concentration
        return self.scale * ((k - 1.0) / k) ** self.concentration_reciprocal

    @property
    def variance(self) -> Tensor:
        r = self.concentration_reciprocal
        return self.scale ** 2 * (gg.exp(gg.lgamma(1.0 + 2.0 * r)) - gg.exp(2.0 * gg.lgamma(1.0 + r)))

    def entropy(self) -> Tensor:
        return EULER * (1.0 - self.concentration_reciprocal) + gg.log(self.scale * self.concentration_reciprocal) + 1.0


class InverseGamma(TransformedDistribution):
    """``1 / X`` for ``X ~ Gamma(concentration, rate)``."""

    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, concentration: Any, rate: Any, validate_args: Optional[bool] = None):
        super().__init__(Gamma(concentration, rate), PowerTransform(-1.0), validate_args=validate_args)

    @property
    def concentration(self) -> Tensor:
        return self.base_dist.concentration

    @property
    def rate(self) -> Tensor:
        return self.base_dist.rate

    @property
    def mean(self) -> Tensor:
        c = self.concentration
        return gg.where(gg.greater(c, 1.0), self.rate / gg.where(gg.greater(c, 1.0), c - 1.0, 1.0), math.inf)

    @property
    def mode(self) -> Tensor:
        return self.rate / (self.concentration + 1.0)

    @property
    def variance(self) -> Tensor:
        c = self.concentration
        safe = gg.where(gg.greater(c, 2.0), c, 3.0)
        var = self.rate ** 2 / ((safe - 1.0) ** 2 * (safe - 2.0))
        return gg.where(gg.greater(c, 2.0), var, math.inf)

    def entropy(self) -> Tensor:
        c = self.concentration
        return c + gg.log(self.rate) + gg.lgamma(c) - (1.0 + c) * gg.digamma(c)


class FisherSnedecor(Distribution):
    """The F-distribution with ``df1`` and ``df2`` degrees of freedom (reparameterized through gammas)."""

    arg_constraints = {"df1": constraints.positive, "df2": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, df1: Any, df2: Any, validate_args: Optional[bool] = None):
        self.df1, self.df2 = broadcast_all(df1, df2)
        super().__init__(tuple(self.df1.shape), validate_args=validate_args)

    @property
    def mean(self) -> Tensor:
        df2 = gg.where(gg.greater(self.df2, 2.0), self.df2, math.nan)
        return df2 / (df2 - 2.0)

    @property
    def mode(self) -> Tensor:
        m = (self.df1 - 2.0) / self.df1 * self.df2 / (self.df2 + 2.0)
        return gg.where(gg.greater(self.df1, 2.0), m, math.nan)

    @property
    def variance(self) -> Tensor:
        df2 = gg.where(gg.greater(self.df2, 4.0), self.df2, math.nan)
        return 2.0 * df2 ** 2 * (self.df1 + df2 - 2.0) / (self.df1 * (df2 - 2.0) ** 2 * (df2 - 4.0))

    def rsample(self, sample_shape: Any = (), generator: Optional[Generator] = None) -> Tensor:
        shape = self._extended_shape(sample_shape)
        x1 = standard_gamma(0.5 * self.df1, shape, generator) * 2.0 / self.df1
        x2 = standard_gamma(0.5 * self.df2, shape, generator) * 2.0 / self.df2
        tiny = _tiny(x1)
        return gg.clip(gg.clip(x1, tiny, None) / gg.clip(x2, tiny, None), tiny, None)

    def log_prob(self, value: Any) -> Tensor:
        value = _tensor(value, self.df1)
        ct1, ct2 = self.df1 * 0.5, self.df2 * 0.5
        ct3 = self.df1 / self.df2
        t1 = gg.lgamma(ct1 + ct2) - gg.lgamma(ct1) - gg.lgamma(ct2)
        t2 = ct1 * gg.log(ct3) + (ct1 - 1.0) * gg.log(value)
        t3 = (ct1 + ct2) * gg.log1p(ct3 * value)
        return t1 + t2 - t3


def _kumaraswamy_moment(a: Tensor, b: Tensor, n: int) -> Tensor:
    arg1 = 1.0 + n / a
    return b * gg.exp(gg.lgamma(arg1) + gg.lgamma(b) - gg.lgamma(arg1 + b))


class Kumaraswamy(TransformedDistribution):
    """The Kumaraswamy distribution on ``(0, 1)`` with ``concentration1`` (a) and ``concentration0`` (b):
    ``(1 - U^(1/b))^(1/a)`` for uniform ``U`` (reparameterized). ``mode`` is the true mode
    ``((a - 1) / (a b - 1))^(1/a)`` (NaN where a or b < 1); PyTorch 2.13's formula gives NaN throughout."""

    arg_constraints = {"concentration1": constraints.positive, "concentration0": constraints.positive}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, concentration1: Any, concentration0: Any, validate_args: Optional[bool] = None):
        self.concentration1, self.concentration0 = broadcast_all(concentration1, concentration0)
        from graphgrad.distributions.continuous import Uniform
        base = Uniform(gg.zeros_like(self.concentration0), gg.ones_like(self.concentration0))
        transforms = [PowerTransform(1.0 / self.concentration0), AffineTransform(1.0, -1.0),
                      PowerTransform(1.0 / self.concentration1)]
        super().__init__(base, transforms, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> "Kumaraswamy":
        batch_shape = _shape(batch_shape)
        return Kumaraswamy(gg.broadcast_to(self.concentration1, batch_shape),
                           gg.broadcast_to(self.concentration0, batch_shape))

    @property
    def mean(self) -> Tensor:
        return _kumaraswamy_moment(self.concentration1, self.concentration0, 1)

    @property
    def mode(self) -> Tensor:
        a, b = self.concentration1, self.concentration0
        mode = ((a - 1.0) / gg.where(gg.greater(a * b, 1.0), a * b - 1.0, 1.0)) ** (1.0 / a)
        return gg.where(gg.logical_or(gg.less(a, 1.0), gg.less(b, 1.0)), math.nan, mode)

    @property
    def variance(self) -> Tensor:
        return _kumaraswamy_moment(self.concentration1, self.concentration0, 2) - self.mean ** 2

    def entropy(self) -> Tensor:
        a, b = self.concentration1, self.concentration0
        t1, t0 = 1.0 - 1.0 / a, 1.0 - 1.0 / b
        h0 = gg.digamma(b + 1.0) + EULER
        return t0 + t1 * h0 - gg.log(a) - gg.log(b)


class LogisticNormal(TransformedDistribution):
    """The logistic-normal distribution on the simplex: ``StickBreakingTransform`` of ``Normal(loc, scale)``
    (event shape ``(K + 1,)`` for parameters of last size ``K``)."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, loc: Any, scale: Any, validate_args: Optional[bool] = None):
        from graphgrad.distributions.continuous import Normal
        from graphgrad.distributions.transforms import StickBreakingTransform
        base = Normal(loc, scale, validate_args=validate_args)
        if not base.batch_shape:
            base = base.expand((1,))
        super().__init__(base, StickBreakingTransform(), validate_args=validate_args)

    @property
    def loc(self) -> Tensor:
        return self.base_dist.base_dist.loc

    @property
    def scale(self) -> Tensor:
        return self.base_dist.base_dist.scale
