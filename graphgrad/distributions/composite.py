"""Distributions built from others: Independent, TransformedDistribution and the families PyTorch
defines as transformed ones (LogNormal, HalfNormal, HalfCauchy, Gumbel, RelaxedBernoulli,
RelaxedOneHotCategorical), and MixtureSameFamily."""
from __future__ import annotations

import math
from typing import Any, Optional, Sequence

import graphgrad as gg
from graphgrad.core.autograd import no_grad
from graphgrad.core.random import Generator
from graphgrad.core.tensor import Tensor

from graphgrad.distributions import constraints
from graphgrad.distributions.continuous import Cauchy, Normal, Uniform
from graphgrad.distributions.discrete import Categorical, OnCategorical, _probs_or_logits
from graphgrad.distributions.distribution import (EULER, Distribution, _eps, _shape, _sum_rightmost, _tensor, _tiny,
                                                  broadcast_all, clamp_probs)
from graphgrad.distributions.transforms import (AbsTransform, AffineTransform, ComposeTransform, ExpTransform,
                                                SigmoidTransform, Transform)


class Independent(Distribution):
    """Reinterprets the rightmost ``reinterpreted_batch_ndims`` batch dims of ``base_distribution`` as
    event dims: ``log_prob`` and ``entropy`` sum over them (a diagonal Gaussian is
    ``Independent(Normal(mu, sigma), 1)``)."""

    arg_constraints: dict = {}

    def __init__(self, base_distribution: Distribution, reinterpreted_batch_ndims: int,
                 validate_args: Optional[bool] = None):
        n = int(reinterpreted_batch_ndims)
        if n > len(base_distribution.batch_shape):
            raise ValueError("Expected reinterpreted_batch_ndims <= len(base_distribution.batch_shape), "
                             f"actual {n} vs {len(base_distribution.batch_shape)}")
        shape = base_distribution.batch_shape + base_distribution.event_shape
        event_dim = n + len(base_distribution.event_shape)
        self.base_dist = base_distribution
        self.reinterpreted_batch_ndims = n
        super().__init__(shape[:len(shape) - event_dim], shape[len(shape) - event_dim:], validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> "Independent":
        batch_shape = _shape(batch_shape)
        n = self.reinterpreted_batch_ndims
        base_batch = batch_shape + self.event_shape[:n]
        return Independent(self.base_dist.expand(base_batch), n)

    @property
    def has_rsample(self):  # type: ignore[override]
        return self.base_dist.has_rsample

    @property
    def has_enumerate_support(self):  # type: ignore[override]
        return False if self.reinterpreted_batch_ndims > 0 else self.base_dist.has_enumerate_support

    @constraints.dependent_property
    def support(self):
        result = self.base_dist.support
        if self.reinterpreted_batch_ndims:
            result = constraints.independent(result, self.reinterpreted_batch_ndims)
        return result

    @property
    def mean(self) -> Tensor:
        return self.base_dist.mean

    @property
    def mode(self) -> Tensor:
        return self.base_dist.mode

    @property
    def variance(self) -> Tensor:
        return self.base_dist.variance

    def sample(self, sample_shape: Any = (), generator: Optional[Generator] = None) -> Tensor:
        return self.base_dist.sample(sample_shape, generator=generator)

    def rsample(self, sample_shape: Any = (), generator: Optional[Generator] = None) -> Tensor:
        return self.base_dist.rsample(sample_shape, generator=generator)

    def log_prob(self, value: Any) -> Tensor:
        return _sum_rightmost(self.base_dist.log_prob(value), self.reinterpreted_batch_ndims)

    def entropy(self) -> Tensor:
        return _sum_rightmost(self.base_dist.entropy(), self.reinterpreted_batch_ndims)

    def enumerate_support(self, expand: bool = True) -> Tensor:
        if self.reinterpreted_batch_ndims > 0:
            raise NotImplementedError("Enumeration over cartesian product is not implemented")
        return self.base_dist.enumerate_support(expand=expand)

    def __repr__(self) -> str:
        return f"Independent({self.base_dist!r}, {self.reinterpreted_batch_ndims})"


class TransformedDistribution(Distribution):
    """``base_distribution`` pushed through ``transforms`` (applied in order): samples are
    ``transforms(base.sample())``; ``log_prob(y) = base.log_prob(x) - sum log|det J(x)|``."""

    arg_constraints: dict = {}

    def __init__(self, base_distribution: Distribution, transforms: Any, validate_args: Optional[bool] = None):
        if isinstance(transforms, Transform):
            self.transforms = [transforms]
        elif isinstance(transforms, (list, tuple)):
            if not all(isinstance(t, Transform) for t in transforms):
                raise ValueError("transforms must be a Transform or a list of Transforms")
            self.transforms = list(transforms)
        else:
            raise ValueError(f"transforms must be a Transform or list, but was {transforms}")
        base_shape = base_distribution.batch_shape + base_distribution.event_shape
        base_event_dim = len(base_distribution.event_shape)
        transform = ComposeTransform(self.transforms)
        if len(base_shape) < transform.domain.event_dim:
            raise ValueError(f"base_distribution needs to have shape with size at least {transform.domain.event_dim},"
                             f" but got {base_shape}.")
        forward_shape = transform.forward_shape(base_shape)
        expanded_base_shape = transform.inverse_shape(forward_shape)
        if base_shape != expanded_base_shape:
            base_batch = expanded_base_shape[:len(expanded_base_shape) - base_event_dim]
            base_distribution = base_distribution.expand(base_batch)
        reinterpreted = transform.domain.event_dim - base_event_dim
        if reinterpreted > 0:
            base_distribution = Independent(base_distribution, reinterpreted)
        self.base_dist = base_distribution
        event_dim = transform.codomain.event_dim + max(base_event_dim - transform.domain.event_dim, 0)
        cut = len(forward_shape) - event_dim
        super().__init__(forward_shape[:cut], forward_shape[cut:], validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> "TransformedDistribution":
        batch_shape = _shape(batch_shape)
        shape = batch_shape + self.event_shape
        for t in reversed(self.transforms):
            shape = t.inverse_shape(shape)
        base_batch = shape[:len(shape) - len(self.base_dist.event_shape)]
        new = object.__new__(type(self))
        new.__dict__.update(self.__dict__)
        new.base_dist = self.base_dist.expand(base_batch)
        new.batch_shape = batch_shape
        return new

    @property
    def has_rsample(self):  # type: ignore[override]
        return self.base_dist.has_rsample

    @constraints.dependent_property(is_discrete=False)
    def support(self):
        if not self.transforms:
            return self.base_dist.support
        support = self.transforms[-1].codomain
        if len(self.event_shape) > support.event_dim:
            support = constraints.independent(support, len(self.event_shape) - support.event_dim)
        return support

    def sample(self, sample_shape: Any = (), generator: Optional[Generator] = None) -> Tensor:
        with no_grad():
            x = self.base_dist.sample(sample_shape, generator=generator)
            for t in self.transforms:
                x = t(x)
            return x

    def rsample(self, sample_shape: Any = (), generator: Optional[Generator] = None) -> Tensor:
        x = self.base_dist.rsample(sample_shape, generator=generator)
        for t in self.transforms:
            x = t(x)
        return x

    def log_prob(self, value: Any) -> Tensor:
        y = _tensor(value)
        event_dim = len(self.event_shape)
        log_prob: Any = 0.0
        for t in reversed(self.transforms):
            x = t.inv(y)
            event_dim += t.domain.event_dim - t.codomain.event_dim
            log_prob = log_prob - _sum_rightmost(t.log_abs_det_jacobian(x, y), event_dim - t.domain.event_dim)
            y = x
        return log_prob + _sum_rightmost(self.base_dist.log_prob(y), event_dim - len(self.base_dist.event_shape))

    def _monotonize_cdf(self, value: Tensor) -> Tensor:
        sign = 1
        for t in self.transforms:
            sign = sign * t.sign
        if isinstance(sign, int) and sign == 1:
            return value
        return sign * (value - 0.5) + 0.5

    def cdf(self, value: Any) -> Tensor:
        value = _tensor(value)
        for t in reversed(self.transforms):
            value = t.inv(value)
        value = self.base_dist.cdf(value)
        return self._monotonize_cdf(value)

    def icdf(self, value: Any) -> Tensor:
        value = self._monotonize_cdf(_tensor(value))
        value = self.base_dist.icdf(value)
        for t in self.transforms:
            value = t(value)
        return value


class LogNormal(TransformedDistribution):
    """``exp(X)`` for ``X ~ Normal(loc, scale)``."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, loc: Any, scale: Any, validate_args: Optional[bool] = None):
        super().__init__(Normal(loc, scale, validate_args=validate_args), ExpTransform(), validate_args=validate_args)

    @property
    def loc(self) -> Tensor:
        return self.base_dist.loc

    @property
    def scale(self) -> Tensor:
        return self.base_dist.scale

    @property
    def mean(self) -> Tensor:
        return gg.exp(self.loc + self.scale * self.scale / 2.0)

    @property
    def mode(self) -> Tensor:
        return gg.exp(self.loc - self.scale * self.scale)

    @property
    def variance(self) -> Tensor:
        s2 = self.scale * self.scale
        return gg.expm1(s2) * gg.exp(2.0 * self.loc + s2)

    def entropy(self) -> Tensor:
        return self.base_dist.entropy() + self.loc


class _Folded(TransformedDistribution):
    """``|X|`` for ``X`` of a distribution symmetric about 0 with a ``scale`` (``base``: its class):
    the density doubles on ``[0, inf)``, and the cdf, quantiles and entropy follow from ``X``'s."""

    arg_constraints = {"scale": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    base: Any = None

    def __init__(self, scale: Any, validate_args: Optional[bool] = None):
        (scale,) = broadcast_all(scale)
        super().__init__(type(self).base(gg.zeros_like(scale), scale, validate_args=validate_args), AbsTransform(),
                         validate_args=validate_args)

    @property
    def scale(self) -> Tensor:
        return self.base_dist.scale

    @property
    def mode(self) -> Tensor:
        return gg.zeros_like(self.scale)

    def log_prob(self, value: Any) -> Tensor:
        value = _tensor(value, self.scale)
        lp = self.base_dist.log_prob(value) + math.log(2.0)
        return gg.where(gg.greater_equal(value, 0), lp, -math.inf)

    def cdf(self, value: Any) -> Tensor:
        return 2.0 * self.base_dist.cdf(value) - 1.0

    def icdf(self, prob: Any) -> Tensor:
        return self.base_dist.icdf((_tensor(prob, self.scale) + 1.0) / 2.0)

    def entropy(self) -> Tensor:
        return self.base_dist.entropy() - math.log(2.0)


class HalfNormal(_Folded):
    """``|X|`` for ``X ~ Normal(0, scale)``."""

    base = Normal

    @property
    def mean(self) -> Tensor:
        return self.scale * math.sqrt(2.0 / math.pi)

    @property
    def variance(self) -> Tensor:
        return self.scale * self.scale * (1.0 - 2.0 / math.pi)


class HalfCauchy(_Folded):
    """``|X|`` for ``X ~ Cauchy(0, scale)``."""

    base = Cauchy

    @property
    def mean(self) -> Tensor:
        return gg.full(self.batch_shape, math.inf, dtype=self.scale.dtype)

    @property
    def variance(self) -> Tensor:
        return self.base_dist.variance


class Gumbel(TransformedDistribution):
    """The Gumbel (type-I extreme value) distribution with ``loc`` and ``scale``."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc: Any, scale: Any, validate_args: Optional[bool] = None):
        loc, scale = broadcast_all(loc, scale)
        self.loc, self.scale = loc, scale
        base = Uniform(gg.full_like(loc, _tiny(loc)), gg.full_like(loc, 1.0 - _eps(loc)))
        transforms = [ExpTransform().inv, AffineTransform(0.0, -gg.ones_like(scale)), ExpTransform().inv,
                      AffineTransform(loc, -scale)]
        super().__init__(base, transforms, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> "Gumbel":
        batch_shape = _shape(batch_shape)
        return Gumbel(gg.broadcast_to(self.loc, batch_shape), gg.broadcast_to(self.scale, batch_shape))

    def log_prob(self, value: Any) -> Tensor:
        value = _tensor(value, self.loc)
        z = (self.loc - value) / self.scale
        return (z - gg.exp(z)) - gg.log(self.scale)

    @property
    def mean(self) -> Tensor:
        return self.loc + self.scale * EULER

    @property
    def mode(self) -> Tensor:
        return self.loc

    @property
    def stddev(self) -> Tensor:
        return (math.pi / math.sqrt(6)) * self.scale

    @property
    def variance(self) -> Tensor:
        return self.stddev * self.stddev

    def cdf(self, value: Any) -> Tensor:
        value = _tensor(value, self.loc)
        return gg.exp(-gg.exp(-(value - self.loc) / self.scale))

    def icdf(self, value: Any) -> Tensor:
        value = _tensor(value, self.loc)
        return self.loc - self.scale * gg.log(-gg.log(value))

    def entropy(self) -> Tensor:
        return gg.log(self.scale) + (1.0 + EULER)


class LogitRelaxedBernoulli(Distribution):
    """The logit of a ``RelaxedBernoulli`` sample (Concrete / Gumbel-softmax relaxation)."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.real
    has_rsample = True
    _batch_params = ("probs", "logits", "temperature")

    def __init__(self, temperature: Any, probs: Any = None, logits: Any = None, validate_args: Optional[bool] = None):
        probs, logits = _probs_or_logits("LogitRelaxedBernoulli", probs, logits, True)
        self.probs, self.logits = broadcast_all(probs, logits)
        self.temperature = _tensor(temperature, self.logits)
        super().__init__(tuple(self.logits.shape), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> "LogitRelaxedBernoulli":
        new = super().expand(batch_shape)
        new.temperature = self.temperature
        return new

    @property
    def param_shape(self) -> tuple:
        return tuple(self.logits.shape)

    def rsample(self, sample_shape: Any = (), generator: Optional[Generator] = None) -> Tensor:
        shape = self._extended_shape(sample_shape)
        probs = clamp_probs(gg.broadcast_to(self.probs, shape))
        u = clamp_probs(gg.rand(*shape, generator=generator, dtype=self.probs.dtype, device=self.probs.device))
        return (gg.log(u) - gg.log1p(-u) + gg.log(probs) - gg.log1p(-probs)) / self.temperature

    def log_prob(self, value: Any) -> Tensor:
        value = _tensor(value, self.logits)
        diff = self.logits - value * self.temperature
        return gg.log(self.temperature) + diff - 2.0 * gg.softplus(diff)


class _Relaxed(TransformedDistribution):
    """A relaxed distribution: ``_transform`` of its ``_relaxation`` in logit or log space (the base),
    whose parameters it reads."""

    _relaxation: Any = None
    _transform: Any = None

    def __init__(self, temperature: Any, probs: Any = None, logits: Any = None, validate_args: Optional[bool] = None):
        base = type(self)._relaxation(temperature, probs, logits)
        super().__init__(base, type(self)._transform(), validate_args=validate_args)

    @property
    def temperature(self) -> Tensor:
        return self.base_dist.temperature

    @property
    def logits(self) -> Tensor:
        return self.base_dist.logits

    @property
    def probs(self) -> Tensor:
        return self.base_dist.probs


class RelaxedBernoulli(_Relaxed):
    """A continuous relaxation of ``Bernoulli`` on ``(0, 1)`` with ``temperature`` (reparameterized)."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval
    has_rsample = True

    _relaxation, _transform = LogitRelaxedBernoulli, SigmoidTransform


class ExpRelaxedCategorical(OnCategorical, Distribution):
    """The log of a ``RelaxedOneHotCategorical`` sample."""

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    support = constraints.real_vector
    has_rsample = True
    _batch_params = ("probs", "logits")

    def __init__(self, temperature: Any, probs: Any = None, logits: Any = None, validate_args: Optional[bool] = None):
        self._set_categorical(probs, logits)
        self.temperature = _tensor(temperature, self.logits)
        shape = tuple(self.logits.shape)
        super().__init__(shape[:-1], shape[-1:], validate_args=validate_args)

    def rsample(self, sample_shape: Any = (), generator: Optional[Generator] = None) -> Tensor:
        shape = self._extended_shape(sample_shape)
        u = clamp_probs(gg.rand(*shape, generator=generator, dtype=self.logits.dtype, device=self.logits.device))
        gumbels = -gg.log(-gg.log(u))
        scores = (self.logits + gumbels) / self.temperature
        return scores - gg.logsumexp(scores, axis=-1, keepdims=True)

    def log_prob(self, value: Any) -> Tensor:
        value = _tensor(value, self.logits)
        k = self.event_shape[0]
        log_scale = math.lgamma(k) + gg.log(self.temperature) * (k - 1)
        score = self.logits - value * self.temperature
        score = gg.sum(score - gg.logsumexp(score, axis=-1, keepdims=True), axis=-1)
        return score + log_scale


class RelaxedOneHotCategorical(_Relaxed):
    """A continuous relaxation of ``OneHotCategorical`` on the simplex (Gumbel-softmax), reparameterized."""

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    support = constraints.simplex
    has_rsample = True

    _relaxation, _transform = ExpRelaxedCategorical, ExpTransform


class MixtureSameFamily(Distribution):
    """A mixture of ``K`` components of one family: ``mixture_distribution`` is a ``Categorical`` over
    the rightmost batch dim of ``component_distribution``."""

    arg_constraints: dict = {}
    has_rsample = False

    def __init__(self, mixture_distribution: Categorical, component_distribution: Distribution,
                 validate_args: Optional[bool] = None):
        self._mixture_distribution = mixture_distribution
        self._component_distribution = component_distribution
        if not isinstance(mixture_distribution, Categorical):
            raise ValueError("The Mixture distribution needs to be an instance of torch.distributions.Categorical")
        if not isinstance(component_distribution, Distribution):
            raise ValueError("The Component distribution need to be an instance of torch.distributions.Distribution")
        mdbs = mixture_distribution.batch_shape
        cdbs = component_distribution.batch_shape[:-1]
        for size1, size2 in zip(reversed(mdbs), reversed(cdbs)):
            if size1 != 1 and size2 != 1 and size1 != size2:
                raise ValueError(f"`mixture_distribution.batch_shape` ({mdbs}) is not compatible with "
                                 f"`component_distribution.batch_shape`({cdbs})")
        km = mixture_distribution.logits.shape[-1]
        kc = component_distribution.batch_shape[-1]
        if km != kc:
            raise ValueError(f"`mixture_distribution component` ({km}) does not equal "
                             f"`component_distribution.batch_shape[-1]` ({kc})")
        self._num_component = km
        self._event_ndims = len(component_distribution.event_shape)
        super().__init__(cdbs, component_distribution.event_shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> "MixtureSameFamily":
        batch_shape = _shape(batch_shape)
        comp = self._component_distribution.expand(batch_shape + (self._num_component,))
        mix = self._mixture_distribution.expand(batch_shape)
        return MixtureSameFamily(mix, comp)

    @constraints.dependent_property
    def support(self):
        return self._component_distribution.support

    @property
    def mixture_distribution(self) -> Categorical:
        return self._mixture_distribution

    @property
    def component_distribution(self) -> Distribution:
        return self._component_distribution

    def _pad_probs(self) -> Tensor:
        probs = self._mixture_distribution.probs
        return gg.reshape(probs, tuple(probs.shape) + (1,) * self._event_ndims)

    @property
    def mean(self) -> Tensor:
        return gg.sum(self._pad_probs() * self._component_distribution.mean, axis=-1 - self._event_ndims)

    @property
    def variance(self) -> Tensor:
        probs = self._pad_probs()
        axis = -1 - self._event_ndims
        mean_cond_var = gg.sum(probs * self._component_distribution.variance, axis=axis)
        diff = self._component_distribution.mean - gg.expand_dims(self.mean, axis)
        var_cond_mean = gg.sum(probs * diff * diff, axis=axis)
        return mean_cond_var + var_cond_mean

    def cdf(self, value: Any) -> Tensor:
        x = gg.expand_dims(_tensor(value), -1 - self._event_ndims)
        cdf_x = self._component_distribution.cdf(x)
        return gg.sum(cdf_x * self._mixture_distribution.probs, axis=-1)

    def log_prob(self, value: Any) -> Tensor:
        x = gg.expand_dims(_tensor(value), -1 - self._event_ndims)
        log_prob_x = self._component_distribution.log_prob(x)
        log_mix = gg.log_softmax(self._mixture_distribution.logits, axis=-1)
        return gg.logsumexp(log_prob_x + log_mix, axis=-1)

    def sample(self, sample_shape: Any = (), generator: Optional[Generator] = None) -> Tensor:
        sample_shape = _shape(sample_shape)
        with no_grad():
            mix_sample = self._mixture_distribution.sample(sample_shape, generator=generator)
            comp_samples = self._component_distribution.sample(sample_shape, generator=generator)
            # comp_samples: sample + batch + (K,) + event; pick the drawn component
            e = self._event_ndims
            index = gg.reshape(mix_sample, tuple(mix_sample.shape) + (1,) * (e + 1))
            target = tuple(comp_samples.shape)
            k_axis = len(target) - e - 1
            shape = gg.broadcast_shapes(tuple(index.shape), target[:k_axis] + (1,) + target[k_axis + 1:])
            index = gg.broadcast_to(index, shape)
            comp_samples = gg.broadcast_to(comp_samples, shape[:k_axis] + (target[k_axis],) + shape[k_axis + 1:])
            return gg.squeeze(gg.take_along_axis(comp_samples, index, k_axis), k_axis)

    def __repr__(self) -> str:
        return (f"MixtureSameFamily(\n  {self._mixture_distribution!r},\n  {self._component_distribution!r})")
