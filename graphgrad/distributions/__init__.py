"""Probability distributions with PyTorch's ``torch.distributions`` API: sampling (``rsample``
reparameterized, so gradients flow into the parameters), ``log_prob``, ``entropy``, moments, CDFs,
``expand``, ``support`` / ``arg_constraints``, transforms and ``kl_divergence`` — what policy-gradient
agents (``Categorical(logits=...).sample()``), variational autoencoders (``Normal(mu, sigma).rsample()``,
``kl_divergence``), SAC (``TransformedDistribution(Normal, TanhTransform())``) and mixture models use.

Every formula is written in graphgrad ops, so it is differentiable, runs in graphs and on any device.
Shapes follow PyTorch: parameters broadcast to ``batch_shape``; ``sample(sample_shape)`` has shape
``sample_shape + batch_shape + event_shape``; ``log_prob(value)`` has the broadcast shape without the
event dims. Random draws use graphgrad's generator, so ``gg.manual_seed`` reproduces them.

    >>> dist = gg.distributions.Normal(gg.zeros(3), gg.ones(3))
    >>> x = dist.rsample((5,))                       # (5, 3)
    >>> dist.log_prob(x).shape
    (5, 3)

Modules: ``constraints``, ``transforms``, ``kl`` (``kl_divergence``, ``register_kl``), and the families
in ``continuous``, ``discrete``, ``multivariate``, ``composite``, ``more``.
"""
from graphgrad.distributions import constraints, transforms
from graphgrad.distributions.composite import (ExpRelaxedCategorical, Gumbel, HalfCauchy, HalfNormal, Independent,
                                               LogitRelaxedBernoulli, LogNormal, MixtureSameFamily, RelaxedBernoulli,
                                               RelaxedOneHotCategorical, TransformedDistribution)
from graphgrad.distributions.constraints import Constraint
from graphgrad.distributions.continuous import (Beta, Cauchy, Chi2, Dirichlet, Exponential, Gamma, Laplace, Normal,
                                                StudentT, Uniform)
from graphgrad.distributions.discrete import (Bernoulli, Binomial, Categorical, Geometric, Multinomial,
                                              OneHotCategorical, Poisson)
from graphgrad.distributions.distribution import Distribution, ExponentialFamily
from graphgrad.distributions import kl
from graphgrad.distributions.kl import kl_divergence, register_kl
from graphgrad.distributions.more import (FisherSnedecor, InverseGamma, Kumaraswamy, LogisticNormal, NegativeBinomial,
                                          Pareto, Weibull)
from graphgrad.distributions.multivariate import LowRankMultivariateNormal, MultivariateNormal
from graphgrad.distributions.transforms import (AbsTransform, AffineTransform, ComposeTransform, ExpTransform,
                                                IndependentTransform, PowerTransform, SigmoidTransform,
                                                SoftmaxTransform, StickBreakingTransform, TanhTransform, Transform,
                                                biject_to, identity_transform, transform_to)

__all__ = ["AbsTransform", "AffineTransform", "Bernoulli", "Beta", "Binomial", "Categorical", "Cauchy", "Chi2",
           "ComposeTransform", "Constraint", "Dirichlet", "Distribution", "ExpRelaxedCategorical", "ExpTransform",
           "Exponential", "ExponentialFamily", "FisherSnedecor", "Gamma", "Geometric", "Gumbel", "HalfCauchy",
           "HalfNormal", "Independent", "IndependentTransform", "InverseGamma", "Kumaraswamy", "Laplace",
           "LogNormal", "LogisticNormal", "LogitRelaxedBernoulli", "LowRankMultivariateNormal", "MixtureSameFamily",
           "Multinomial", "MultivariateNormal", "NegativeBinomial", "Normal", "OneHotCategorical", "Pareto",
           "Poisson", "PowerTransform", "RelaxedBernoulli", "RelaxedOneHotCategorical", "SigmoidTransform",
           "SoftmaxTransform", "StickBreakingTransform", "StudentT", "TanhTransform", "Transform",
           "TransformedDistribution", "Uniform", "Weibull", "biject_to", "constraints", "identity_transform", "kl",
           "kl_divergence", "register_kl", "transform_to", "transforms"]
