"""``kl_divergence(p, q)`` and ``register_kl`` (``torch.distributions.kl``): closed forms registered
per pair of families, dispatched to the most specific registered pair of base classes.

    >>> @register_kl(MyDist, MyDist)
    ... def _kl_mine(p, q): ...
"""
from __future__ import annotations

import math
from typing import Any, Callable, Dict, Tuple

import graphgrad as gg
from graphgrad.core.tensor import Tensor

from graphgrad.distributions.composite import (Gumbel, HalfNormal, Independent, LogNormal, TransformedDistribution)
from graphgrad.distributions.continuous import (Beta, Cauchy, Dirichlet, Exponential, Gamma, Laplace, Normal,
                                                Uniform)
from graphgrad.distributions.discrete import (Bernoulli, Binomial, Categorical, Geometric, OneHotCategorical,
                                              Poisson)
from graphgrad.distributions.distribution import EULER, Distribution, _sum_rightmost
from graphgrad.distributions.multivariate import MultivariateNormal, _batch_mahalanobis, _diag

_KL_REGISTRY: Dict[Tuple[type, type], Callable] = {}
_KL_MEMOIZE: Dict[Tuple[type, type], Callable] = {}


def register_kl(type_p: type, type_q: type) -> Callable:
    """Decorator registering ``fn(p, q)`` as ``KL(p || q)`` for ``p``, ``q`` instances of these classes."""
    if not (isinstance(type_p, type) and issubclass(type_p, Distribution)):
        raise TypeError(f"Expected type_p to be a Distribution subclass but got {type_p}")
    if not (isinstance(type_q, type) and issubclass(type_q, Distribution)):
        raise TypeError(f"Expected type_q to be a Distribution subclass but got {type_q}")

    def decorator(fn: Callable) -> Callable:
        _KL_REGISTRY[type_p, type_q] = fn
        _KL_MEMOIZE.clear()
        return fn

    return decorator


def _dispatch_kl(type_p: type, type_q: type) -> Any:
    matches = [(sp, sq) for sp, sq in _KL_REGISTRY if issubclass(type_p, sp) and issubclass(type_q, sq)]
    if not matches:
        return NotImplemented
    mro_p, mro_q = type_p.__mro__, type_q.__mro__
    best = min(matches, key=lambda m: (mro_p.index(m[0]) + mro_q.index(m[1]), mro_p.index(m[0])))
    return _KL_REGISTRY[best]


def kl_divergence(p: Distribution, q: Distribution) -> Tensor:
    """``KL(p || q)``, of the broadcast batch shape, for the registered pairs of families."""
    key = (type(p), type(q))
    fn = _KL_MEMOIZE.get(key)
    if fn is None:
        fn = _KL_MEMOIZE[key] = _dispatch_kl(*key)
    if fn is NotImplemented:
        raise NotImplementedError(f"No KL(p || q) is implemented for p type {type(p).__name__} and "
                                  f"q type {type(q).__name__}")
    return fn(p, q)


def _inf_like(t: Tensor) -> Tensor:
    return gg.full_like(t, math.inf)


@register_kl(Normal, Normal)
def _kl_normal_normal(p: Normal, q: Normal) -> Tensor:
    var_ratio = (p.scale / q.scale) ** 2
    t1 = ((p.loc - q.loc) / q.scale) ** 2
    return 0.5 * (var_ratio + t1 - 1.0 - gg.log(var_ratio))


@register_kl(Bernoulli, Bernoulli)
def _kl_bernoulli_bernoulli(p: Bernoulli, q: Bernoulli) -> Tensor:
    return (p.probs * (gg.softplus(-q.logits) - gg.softplus(-p.logits))
            + (1.0 - p.probs) * (gg.softplus(q.logits) - gg.softplus(p.logits)))


@register_kl(Binomial, Binomial)
def _kl_binomial_binomial(p: Binomial, q: Binomial) -> Tensor:
    if not bool(gg.all(gg.equal(p.total_count, q.total_count)).numpy()):
        raise NotImplementedError("KL between Binomials where q.total_count != p.total_count is not implemented")
    return p.total_count * (p.probs * (p.logits - q.logits) + gg.log1p(-p.probs) - gg.log1p(-q.probs))


@register_kl(Categorical, Categorical)
def _kl_categorical_categorical(p: Categorical, q: Categorical) -> Tensor:
    t = p.probs * (p.logits - q.logits)
    t = gg.where(gg.equal(q.probs, 0), math.inf, t)
    t = gg.where(gg.equal(p.probs, 0), 0.0, t)
    return gg.sum(t, axis=-1)


@register_kl(OneHotCategorical, OneHotCategorical)
def _kl_onehot_onehot(p: OneHotCategorical, q: OneHotCategorical) -> Tensor:
    return _kl_categorical_categorical(p._categorical, q._categorical)


@register_kl(Uniform, Uniform)
def _kl_uniform_uniform(p: Uniform, q: Uniform) -> Tensor:
    result = gg.log((q.high - q.low) / (p.high - p.low))
    outside = gg.logical_or(gg.greater(q.low, p.low), gg.less(q.high, p.high))
    return gg.where(outside, math.inf, result)


@register_kl(Beta, Beta)
def _kl_beta_beta(p: Beta, q: Beta) -> Tensor:
    sum_p = p.concentration1 + p.concentration0
    sum_q = q.concentration1 + q.concentration0
    t1 = gg.lgamma(q.concentration1) + gg.lgamma(q.concentration0) + gg.lgamma(sum_p)
    t2 = gg.lgamma(p.concentration1) + gg.lgamma(p.concentration0) + gg.lgamma(sum_q)
    t3 = (p.concentration1 - q.concentration1) * gg.digamma(p.concentration1)
    t4 = (p.concentration0 - q.concentration0) * gg.digamma(p.concentration0)
    t5 = (sum_q - sum_p) * gg.digamma(sum_p)
    return t1 - t2 + t3 + t4 + t5


@register_kl(Dirichlet, Dirichlet)
def _kl_dirichlet_dirichlet(p: Dirichlet, q: Dirichlet) -> Tensor:
    sum_p = gg.sum(p.concentration, axis=-1)
    sum_q = gg.sum(q.concentration, axis=-1)
    t1 = gg.lgamma(sum_p) - gg.lgamma(sum_q)
    t2 = gg.sum(gg.lgamma(p.concentration) - gg.lgamma(q.concentration), axis=-1)
    t3 = p.concentration - q.concentration
    t4 = gg.digamma(p.concentration) - gg.expand_dims(gg.digamma(sum_p), -1)
    return t1 - t2 + gg.sum(t3 * t4, axis=-1)


@register_kl(Exponential, Exponential)
def _kl_exponential_exponential(p: Exponential, q: Exponential) -> Tensor:
    rate_ratio = q.rate / p.rate
    return -gg.log(rate_ratio) + rate_ratio - 1.0


@register_kl(Gamma, Gamma)
def _kl_gamma_gamma(p: Gamma, q: Gamma) -> Tensor:
    t1 = q.concentration * gg.log(p.rate / q.rate)
    t2 = gg.lgamma(q.concentration) - gg.lgamma(p.concentration)
    t3 = (p.concentration - q.concentration) * gg.digamma(p.concentration)
    t4 = (q.rate - p.rate) * (p.concentration / p.rate)
    return t1 + t2 + t3 + t4


@register_kl(Exponential, Gamma)
def _kl_exponential_gamma(p: Exponential, q: Gamma) -> Tensor:
    ratio = q.rate / p.rate
    t1 = -q.concentration * gg.log(ratio)
    return t1 + ratio + gg.lgamma(q.concentration) + q.concentration * EULER - (1.0 + EULER)


@register_kl(Gumbel, Gumbel)
def _kl_gumbel_gumbel(p: Gumbel, q: Gumbel) -> Tensor:
    ct1 = p.scale / q.scale
    ct2 = q.loc / q.scale
    ct3 = p.loc / q.scale
    t1 = -gg.log(ct1) - ct2 + ct3
    t2 = ct1 * EULER
    t3 = gg.exp(ct2 + gg.lgamma(1.0 + ct1) - ct3)
    return t1 + t2 + t3 - (1.0 + EULER)


@register_kl(Geometric, Geometric)
def _kl_geometric_geometric(p: Geometric, q: Geometric) -> Tensor:
    return -p.entropy() - gg.log1p(-q.probs) / p.probs - q.logits


@register_kl(HalfNormal, HalfNormal)
def _kl_halfnormal_halfnormal(p: HalfNormal, q: HalfNormal) -> Tensor:
    return _kl_normal_normal(p.base_dist, q.base_dist)


@register_kl(Laplace, Laplace)
def _kl_laplace_laplace(p: Laplace, q: Laplace) -> Tensor:
    scale_ratio = p.scale / q.scale
    loc_abs_diff = gg.abs(p.loc - q.loc)
    t1 = -gg.log(scale_ratio)
    t2 = loc_abs_diff / q.scale
    t3 = scale_ratio * gg.exp(-loc_abs_diff / p.scale)
    return t1 + t2 + t3 - 1.0


@register_kl(Cauchy, Cauchy)
def _kl_cauchy_cauchy(p: Cauchy, q: Cauchy) -> Tensor:
    t1 = gg.log((p.scale + q.scale) ** 2 + (p.loc - q.loc) ** 2)
    t2 = gg.log(4.0 * p.scale * q.scale)
    return t1 - t2


@register_kl(Poisson, Poisson)
def _kl_poisson_poisson(p: Poisson, q: Poisson) -> Tensor:
    return p.rate * (gg.log(p.rate) - gg.log(q.rate)) - (p.rate - q.rate)


@register_kl(MultivariateNormal, MultivariateNormal)
def _kl_mvn_mvn(p: MultivariateNormal, q: MultivariateNormal) -> Tensor:
    if p.event_shape != q.event_shape:
        raise ValueError("KL-divergence between two Multivariate Normals with different event shapes cannot "
                         "be computed")
    half_term1 = (gg.sum(gg.log(_diag(q._unbroadcasted_scale_tril)), axis=-1)
                  - gg.sum(gg.log(_diag(p._unbroadcasted_scale_tril)), axis=-1))
    batch = gg.broadcast_shapes(tuple(q._unbroadcasted_scale_tril.shape[:-2]),
                                tuple(p._unbroadcasted_scale_tril.shape[:-2]))
    n = p.event_shape[0]
    q_L = gg.broadcast_to(q._unbroadcasted_scale_tril, batch + (n, n))
    p_L = gg.broadcast_to(p._unbroadcasted_scale_tril, batch + (n, n))
    sol = gg.linalg.solve_triangular(q_L, p_L, upper=False)
    term2 = gg.sum(gg.sum(sol * sol, axis=-1), axis=-1)
    term3 = _batch_mahalanobis(q._unbroadcasted_scale_tril, q.loc - p.loc)
    return half_term1 + 0.5 * (term2 + term3 - n)


@register_kl(Independent, Independent)
def _kl_independent_independent(p: Independent, q: Independent) -> Tensor:
    if p.reinterpreted_batch_ndims != q.reinterpreted_batch_ndims:
        raise NotImplementedError("KL between Independents with different reinterpreted_batch_ndims")
    return _sum_rightmost(kl_divergence(p.base_dist, q.base_dist), p.reinterpreted_batch_ndims)


@register_kl(TransformedDistribution, TransformedDistribution)
def _kl_transformed_transformed(p: TransformedDistribution, q: TransformedDistribution) -> Tensor:
    if p.transforms != q.transforms:
        raise NotImplementedError("KL between TransformedDistributions with different transforms")
    if p.event_shape != q.event_shape:
        raise NotImplementedError("KL between TransformedDistributions with different event shapes")
    return kl_divergence(p.base_dist, q.base_dist)


@register_kl(LogNormal, LogNormal)
def _kl_lognormal_lognormal(p: LogNormal, q: LogNormal) -> Tensor:
    return _kl_normal_normal(p.base_dist, q.base_dist)
