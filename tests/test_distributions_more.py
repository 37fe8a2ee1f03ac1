"""gg.distributions against torch.distributions: every family's log_prob / cdf / icdf / entropy / mean /
mode / variance / stddev and shapes, the registered KL divergences, the transforms and the composite
distributions, all against values computed by PyTorch 2.13 (committed below, so PyTorch is not needed);
sampling shapes and moments (seeded); reparameterized gradients (rsample) against the gradients of the
exact moments, and against PyTorch's Monte-Carlo gradients where no closed form exists."""
import math
import sys

import numpy as np
import pytest

import graphgrad as gg
from graphgrad import distributions as D
from graphgrad.distributions import constraints
from graphgrad.distributions._gamma import standard_gamma_grad

nan, inf = math.nan, math.inf

LOC, SCALE, POS, POS2, PROB = [0.5, -1.0, 2.0], [1.0, 0.3, 2.5], [0.7, 2.0, 5.5], [1.5, 0.4, 3.0], [0.2, 0.7, 0.95]
LOGITS = [[0.1, 1.2, -0.7], [0.3, 0.3, 2.4]]
COV = [[2.0, 0.3, 0.1], [0.3, 1.0, 0.2], [0.1, 0.2, 1.5]]
PREC = [[1.0, 0.5, 0.0], [0.5, 2.0, 0.3], [0.0, 0.3, 0.7]]
TRIL = [[1.4142135623730951, 0.0, 0.0], [0.21213203435596426, 0.9773944955953341, 0.0],
        [0.07071067811865475, 0.1892776607394522, 1.2078675775707507]]
ICDF_Q = [0.1, 0.5, 0.8]
CASES = {
    "normal": ("Normal", [LOC, SCALE], {}, [0.1, -0.5, 3.0]),
    "uniform": ("Uniform", [[0.0, -1.0, 2.0], [1.0, 3.0, 2.5]], {}, [0.5, 0.0, 2.2]),
    "exponential": ("Exponential", [POS], {}, [0.3, 1.2, 0.01]),
    "laplace": ("Laplace", [LOC, SCALE], {}, [0.1, -0.5, 3.0]),
    "cauchy": ("Cauchy", [LOC, SCALE], {}, [0.1, -0.5, 3.0]),
    "gamma": ("Gamma", [POS, POS2], {}, [0.3, 1.2, 2.0]),
    "chi2": ("Chi2", [POS], {}, [0.3, 1.2, 2.0]),
    "beta": ("Beta", [POS, POS2], {}, [0.3, 0.6, 0.9]),
    "student_t": ("StudentT", [POS, LOC, SCALE], {}, [0.1, -0.5, 3.0]),
    "log_normal": ("LogNormal", [LOC, SCALE], {}, [0.3, 1.2, 2.0]),
    "half_normal": ("HalfNormal", [SCALE], {}, [0.3, 1.2, 2.0]),
    "half_cauchy": ("HalfCauchy", [SCALE], {}, [0.3, 1.2, 2.0]),
    "gumbel": ("Gumbel", [LOC, SCALE], {}, [0.1, -0.5, 3.0]),
    "bernoulli_probs": ("Bernoulli", [], {"probs": PROB}, [1.0, 0.0, 1.0]),
    "bernoulli_logits": ("Bernoulli", [], {"logits": LOC}, [1.0, 0.0, 1.0]),
    "geometric_probs": ("Geometric", [], {"probs": PROB}, [0.0, 3.0, 1.0]),
    "geometric_logits": ("Geometric", [], {"logits": LOC}, [0.0, 3.0, 1.0]),
    "poisson": ("Poisson", [POS], {}, [0.0, 3.0, 6.0]),
    "binomial_probs": ("Binomial", [10], {"probs": PROB}, [0.0, 3.0, 10.0]),
    "binomial_logits": ("Binomial", [[5.0, 10.0, 20.0]], {"logits": LOC}, [0.0, 3.0, 10.0]),
    "categorical_probs": ("Categorical", [], {"probs": [[0.1, 0.2, 0.7], [0.3, 0.3, 0.4]]}, [2, 0]),
    "categorical_logits": ("Categorical", [], {"logits": LOGITS}, [2, 0]),
    "one_hot_categorical": ("OneHotCategorical", [], {"logits": LOGITS}, [[0, 0, 1.0], [1.0, 0, 0]]),
    "multinomial": ("Multinomial", [6], {"probs": [[0.1, 0.2, 0.7], [0.3, 0.3, 0.4]]}, [[1, 2, 3.0], [6.0, 0, 0]]),
    "dirichlet": ("Dirichlet", [[[0.5, 2.0, 3.0], [1.0, 1.0, 4.0]]], {}, [[0.2, 0.3, 0.5], [0.1, 0.1, 0.8]]),
    "relaxed_bernoulli": ("RelaxedBernoulli", [[0.5]], {"probs": PROB}, [0.3, 0.6, 0.9]),
    "relaxed_one_hot": ("RelaxedOneHotCategorical", [[0.7]], {"logits": LOGITS}, [[0.2, 0.3, 0.5], [0.1, 0.1, 0.8]]),
    "mvn_cov": ("MultivariateNormal", [LOC], {"covariance_matrix": COV}, [0.1, -0.5, 3.0]),
    "mvn_prec": ("MultivariateNormal", [[[0.0, 1.0, 2.0], [1.0, 1.0, 1.0]]], {"precision_matrix": PREC},
                 [0.1, -0.5, 3.0]),
    "mvn_tril": ("MultivariateNormal", [LOC], {"scale_tril": TRIL}, [[0.1, -0.5, 3.0], [1.0, 1.0, 1.0]]),
    "lowrank_mvn": ("LowRankMultivariateNormal", [LOC, [[1.0, 0.5], [0.2, 0.3], [-0.4, 1.0]], [0.5, 1.0, 2.0]], {},
                    [[0.1, -0.5, 3.0], [1.0, 1.0, 1.0]]),
}
KL_CASES = {
    "normal": ("Normal", ([0.0, 1.0], [1.0, 2.0]), ([0.5, -1.0], [0.3, 1.0])),
    "bernoulli": ("Bernoulli", {"probs": [0.3, 0.9]}, {"logits": [0.5, -0.2]}),
    "beta": ("Beta", ([0.5, 2.0], [1.5, 3.0]), ([2.0, 1.0], [1.0, 0.7])),
    "gamma": ("Gamma", ([0.5, 2.0], [1.5, 3.0]), ([2.0, 1.0], [1.0, 0.7])),
    "exponential": ("Exponential", ([0.5, 2.0],), ([2.0, 1.0],)),
    "laplace": ("Laplace", ([0.0, 1.0], [1.0, 2.0]), ([0.5, -1.0], [0.3, 1.0])),
    "poisson": ("Poisson", ([0.5, 2.0],), ([2.0, 1.0],)),
    "uniform": ("Uniform", ([0.0, 1.0], [1.0, 2.0]), ([-0.5, 0.0], [1.3, 2.5])),
    "gumbel": ("Gumbel", ([0.0, 1.0], [1.0, 2.0]), ([0.5, -1.0], [0.3, 1.0])),
    "cauchy": ("Cauchy", ([0.0, 1.0], [1.0, 2.0]), ([0.5, -1.0], [0.3, 1.0])),
    "geometric": ("Geometric", {"probs": [0.3, 0.9]}, {"probs": [0.5, 0.2]}),
    "half_normal": ("HalfNormal", ([0.3, 0.9],), ([0.5, 0.2],)),
    "log_normal": ("LogNormal", ([0.0, 1.0], [1.0, 2.0]), ([0.5, -1.0], [0.3, 1.0])),
    "dirichlet": ("Dirichlet", ([[0.5, 2.0, 1.0], [1.0, 1.0, 1.0]],), ([2.0, 1.0, 3.0],)),
    "categorical": ("Categorical", {"logits": [[1.0, 2.0, 0.0]]}, {"probs": [0.2, 0.3, 0.5]}),
    "one_hot_categorical": ("OneHotCategorical", {"logits": [[1.0, 2.0, 0.0]]}, {"probs": [0.2, 0.3, 0.5]}),
    "binomial": ("Binomial", {"total_count": 5, "probs": [0.3, 0.6]}, {"total_count": 5, "probs": [0.5, 0.1]}),
    "mvn": ("MultivariateNormal", {"loc": [[0.0, 1.0, 2.0], [1.0, 0.0, 0.0]], "covariance_matrix": COV},
            {"loc": [1.0, 1.0, 1.0], "precision_matrix": PREC}),
}
X = [[-1.5, 0.2, 0.9], [0.3, -0.4, 2.0]]
EXPRESSIONS = {
    "exp_ldj": "D.transforms.ExpTransform().log_abs_det_jacobian(t(X), D.transforms.ExpTransform()(t(X)))",
    "sigmoid_fwd": "D.transforms.SigmoidTransform()(t(X))",
    "sigmoid_ldj": "D.transforms.SigmoidTransform().log_abs_det_jacobian(t(X), D.transforms.SigmoidTransform()(t(X)))",
    "sigmoid_inv": "D.transforms.SigmoidTransform().inv(t([0.1, 0.5, 0.9]))",
    "tanh_ldj": "D.transforms.TanhTransform().log_abs_det_jacobian(t(X), D.transforms.TanhTransform()(t(X)))",
    "tanh_inv": "D.transforms.TanhTransform().inv(t([-0.9, 0.1, 0.5]))",
    "affine_fwd": "D.transforms.AffineTransform(t([1.0, 2.0, 3.0]), t([0.5, -2.0, 3.0]))(t(X))",
    "affine_ldj": "D.transforms.AffineTransform(1.0, -2.0).log_abs_det_jacobian(t(X), t(X))",
    "affine_event_ldj": "D.transforms.AffineTransform(t([1.0, 2.0, 3.0]), t([0.5, -2.0, 3.0]), event_dim=1)"
                        ".log_abs_det_jacobian(t(X), t(X))",
    "power_fwd": "D.transforms.PowerTransform(t([2.5]))(t([0.3, 1.2, 2.0]))",
    "power_ldj": "D.transforms.PowerTransform(t([2.5])).log_abs_det_jacobian(t([0.3, 1.2, 2.0]), "
                 "D.transforms.PowerTransform(t([2.5]))(t([0.3, 1.2, 2.0])))",
    "power_inv": "D.transforms.PowerTransform(t([2.5])).inv(t([0.3, 1.2, 2.0]))",
    "softmax_fwd": "D.transforms.SoftmaxTransform()(t(X))",
    "stick_fwd": "D.transforms.StickBreakingTransform()(t(X))",
    "stick_ldj": "D.transforms.StickBreakingTransform().log_abs_det_jacobian(t(X), "
                 "D.transforms.StickBreakingTransform()(t(X)))",
    "stick_inv": "D.transforms.StickBreakingTransform().inv(t([[0.2, 0.3, 0.1, 0.4]]))",
    "compose_ldj": "D.transforms.ComposeTransform([D.transforms.AffineTransform(t([0.0, 1.0, 2.0]), "
                   "t([1.0, 2.0, 0.5]), event_dim=1), D.transforms.ExpTransform()]).log_abs_det_jacobian(t(X), "
                   "D.transforms.ComposeTransform([D.transforms.AffineTransform(t([0.0, 1.0, 2.0]), "
                   "t([1.0, 2.0, 0.5]), event_dim=1), D.transforms.ExpTransform()])(t(X)))",
    "compose_inv": "D.transforms.ComposeTransform([D.transforms.AffineTransform(1.0, 2.0), "
                   "D.transforms.ExpTransform()]).inv(t([0.5, 2.0, 9.0]))",
    "tanh_normal_log_prob": "D.TransformedDistribution(D.Normal(t([0.0, 1.0]), t([1.0, 0.5])), "
                            "[D.transforms.TanhTransform()]).log_prob(t([0.3, -0.9]))",
    "affine_exp_cdf": "D.TransformedDistribution(D.Normal(t([0.0, 1.0]), t([1.0, 0.5])), [D.transforms.AffineTransform("
                      "1.0, -2.0), D.transforms.ExpTransform()]).cdf(t([0.3, 0.9]))",
    "affine_exp_icdf": "D.TransformedDistribution(D.Normal(t([0.0, 1.0]), t([1.0, 0.5])), "
                       "[D.transforms.AffineTransform("
                       "1.0, -2.0), D.transforms.ExpTransform()]).icdf(t([0.3, 0.9]))",
    "stick_dist_log_prob": "D.TransformedDistribution(D.Normal(t([0.0, 1.0]), t([1.0, 0.5])), "
                           "[D.transforms.StickBreakingTransform()]).log_prob(t([0.3, 0.2, 0.5]))",
    "independent_log_prob": "D.Independent(D.Normal(t([[0.0, 1.0], [2.0, 3.0]]), t([[1.0, 2.0], [0.5, 0.5]])), 1)"
                            ".log_prob(t([0.3, 0.4]))",
    "independent_entropy": "D.Independent(D.Normal(t([[0.0, 1.0], [2.0, 3.0]]), t([[1.0, 2.0], [0.5, 0.5]])), 1)"
                           ".entropy()",
    "mixture_log_prob": "D.MixtureSameFamily(D.Categorical(logits=t([[0.0, 1.0, -1.0], [1.0, 1.0, 1.0]])), D.Normal("
                        "t([-1.0, 0.0, 2.0]), t([0.5, 1.0, 2.0]))).log_prob(t([[0.3, 1.0], [1.5, 0.0], [-2.0, 2.0]]))",
    "mixture_cdf": "D.MixtureSameFamily(D.Categorical(logits=t([[0.0, 1.0, -1.0], [1.0, 1.0, 1.0]])), D.Normal("
                   "t([-1.0, 0.0, 2.0]), t([0.5, 1.0, 2.0]))).cdf(t([[0.3, 1.0], [1.5, 0.0], [-2.0, 2.0]]))",
    "mixture_mean": "D.MixtureSameFamily(D.Categorical(logits=t([[0.0, 1.0, -1.0], [1.0, 1.0, 1.0]])), D.Normal("
                    "t([-1.0, 0.0, 2.0]), t([0.5, 1.0, 2.0]))).mean",
    "mixture_variance": "D.MixtureSameFamily(D.Categorical(logits=t([[0.0, 1.0, -1.0], [1.0, 1.0, 1.0]])), D.Normal("
                        "t([-1.0, 0.0, 2.0]), t([0.5, 1.0, 2.0]))).variance",
    "mixture_mvn_log_prob": "D.MixtureSameFamily(D.Categorical(logits=t([0.0, 1.0])), D.MultivariateNormal("
                            "t([[0.0, 0.0], [3.0, 3.0]]), scale_tril=t([[1.0, 0.0], [0.5, 0.8]]))).log_prob("
                            "t([[0.3, 1.0], [2.0, 3.0]]))",
    "mvn_precision_matrix": "D.MultivariateNormal(t(LOC), covariance_matrix=t(COV)).precision_matrix",
    "mvn_scale_tril": "D.MultivariateNormal(t(LOC), precision_matrix=t(PREC)).scale_tril",
    "mvn_covariance": "D.MultivariateNormal(t(LOC), precision_matrix=t(PREC)).covariance_matrix",
    "lowrank_covariance": "D.LowRankMultivariateNormal(t(LOC), t([[1.0, 0.5], [0.2, 0.3], [-0.4, 1.0]]), "
                          "t([0.5, 1.0, 2.0])).covariance_matrix",
    "expanded_gamma_log_prob": "D.Gamma(t(POS), t(POS2)).expand((2, 3)).log_prob(t([[0.3], [1.2]]))",
    "expanded_mvn_log_prob": "D.MultivariateNormal(t(LOC), covariance_matrix=t(COV)).expand((2,)).log_prob("
                             "t([[0.1, -0.5, 3.0], [1.0, 1.0, 1.0]]))",
}
CASES_NEW = {
    "negative_binomial": ("NegativeBinomial", [[2.0, 5.0, 0.5]], {"probs": PROB}, [0.0, 3.0, 10.0]),
    "negative_binomial_logits": ("NegativeBinomial", [3.0], {"logits": LOC}, [0.0, 3.0, 10.0]),
    "pareto": ("Pareto", [SCALE, [0.7, 2.5, 5.5]], {}, [1.2, 0.5, 3.0]),
    "weibull": ("Weibull", [SCALE, POS], {}, [0.3, 1.2, 2.0]),
    "inverse_gamma": ("InverseGamma", [POS, POS2], {}, [0.3, 1.2, 2.0]),
    "fisher_snedecor": ("FisherSnedecor", [[1.5, 3.0, 7.0], [2.5, 5.0, 9.0]], {}, [0.3, 1.2, 2.0]),
}
CASES_NEW.update({
    "kumaraswamy": ("Kumaraswamy", [POS, POS2], {}, [0.3, 0.6, 0.9]),
    "logistic_normal": ("LogisticNormal", [[[0.1, -0.3], [0.5, 0.2]], [[1.0, 0.5], [0.3, 2.0]]], {},
                        [[0.2, 0.3, 0.5], [0.1, 0.1, 0.8]]),
})
CASES.update(CASES_NEW)

EXPECTED = {
    'normal': {
        'batch_shape': (3,),
        'event_shape': (),
        'log_prob': [-0.998938533204673, -1.10385461776763, -1.91522926507883],
        'cdf': [0.344578258389676, 0.952209647727185, 0.655421741610324],
        'icdf': [-0.781551565544601, -1.0, 4.10405308393229],
        'entropy': [1.41893853320467, 0.214965728878737, 2.33522926507883],
        'mean': [0.5, -1.0, 2.0],
        'mode': [0.5, -1.0, 2.0],
        'variance': [1.0, 0.09, 6.25],
        'stddev': [1.0, 0.3, 2.5],
    },
    'uniform': {
        'batch_shape': (3,),
        'event_shape': (),
        'log_prob': [0.0, -1.38629436111989, 0.693147180559945],
        'cdf': [0.5, 0.25, 0.4],
        'icdf': [0.1, 1.0, 2.4],
        'entropy': [0.0, 1.38629436111989, -0.693147180559945],
        'mean': [0.5, 1.0, 2.25],
        'mode': [nan, nan, nan],
        'variance': [0.0833333333333333, 1.33333333333333, 0.0208333333333333],
        'stddev': [0.288675134594813, 1.15470053837925, 0.144337567297406],
    },
    'exponential': {
        'batch_shape': (3,),
        'event_shape': (),
        'log_prob': [-0.566674943938732, -1.70685281944005, 1.64974809223843],
        'cdf': [0.189415754029813, 0.909282046710588, 0.0535148520465162],
        'icdf': [0.150515022368323, 0.346573590279973, 0.292625074988018],
        'entropy': [1.35667494393873, 0.306852819440055, -0.704748092238425],
        'mean': [1.42857142857143, 0.5, 0.181818181818182],
        'mode': [0.0, 0.0, 0.0],
        'variance': [2.04081632653061, 0.25, 0.0330578512396694],
        'stddev': [1.42857142857143, 0.5, 0.181818181818182],
    },
    'laplace': {
        'batch_shape': (3,),
        'event_shape': (),
        'log_prob': [-1.09314718055995, -1.15584104290068, -2.0094379124341],
        'cdf': [0.33516002301782, 0.905562198581219, 0.66483997698218],
        'icdf': [-1.1094379124341, -1.0, 4.29072682968539],
        'entropy': [1.69314718055995, 0.489174376234009, 2.6094379124341],
        'mean': [0.5, -1.0, 2.0],
        'mode': [0.5, -1.0, 2.0],
        'variance': [2.0, 0.18, 12.5],
        'stddev': [1.4142135623731, 0.424264068711929, 3.53553390593274],
    },
    'cauchy': {
        'batch_shape': (3,),
        'event_shape': (),
        'log_prob': [-1.29314989096767, -1.26989302880341, -2.20944062284183],
        'cdf': [0.378881058409157, 0.827979130377369, 0.621118941590843],
        'icdf': [-2.57768353717525, -1.0, 5.44095480117793],
        'entropy': [2.53102424696929, 1.32705144264335, 3.44731497884345],
        'mean': [nan, nan, nan],
        'mode': [0.5, -1.0, 2.0],
        'variance': [inf, inf, inf],
        'stddev': [inf, inf, inf],
    },
    'gamma': {
        'batch_shape': (3,),
        'event_shape': (),
        'log_prob': [-0.0658498295581706, -2.13025990695436, -0.796284067424359],
        'cdf': [0.527554070449015, 0.0842005801269115, 0.636356779483173],
        'entropy': [0.189395072314122, 2.49350639677569, 1.10928251033273],
        'mean': [0.466666666666667, 5.0, 1.83333333333333],
        'mode': [0.0, 2.5, 1.5],
        'variance': [0.311111111111111, 12.5, 0.611111111111111],
        'stddev': [0.557773351022717, 3.53553390593274, 0.781735959970572],
    },
    'chi2': {
        'batch_shape': (3,),
        'event_shape': (),
        'log_prob': [-0.544600417530355, -1.29314718055995, -2.16836184747488],
        'cdf': [0.556140752485788, 0.451188363905973, 0.110973572525651],
        'entropy': [0.0465323423193129, 1.69314718055995, 2.48528505376788],
        'mean': [0.7, 2.0, 5.5],
        'mode': [0.0, 0.0, 3.5],
        'variance': [1.4, 4.0, 11.0],
        'stddev': [1.18321595661992, 2.0, 3.3166247903554],
    },
    'beta': {
        'batch_shape': (3,),
        'event_shape': (),
        'log_prob': [0.139716827222632, -0.54086967989444, -0.180986397325975],
        'entropy': [-0.232255823644657, -1.11863609871635, -0.473203633670915],
        'mean': [0.318181818181818, 0.833333333333333, 0.647058823529412],
        'mode': [0.0, 1.0, 0.692307692307692],
        'variance': [0.0677944214876033, 0.0408496732026144, 0.0240393370970679],
        'stddev': [0.260373619031582, 0.202113020863611, 0.155046241802463],
    },
    'student_t': {
        'batch_shape': (3,),
        'event_shape': (),
        'log_prob': [-1.39698782769698, -1.14199050321008, -1.97363880664845],
        'entropy': [3.02044381208916, 0.756306424834146, 2.52423458652571],
        'mean': [nan, -1.0, 2.0],
        'mode': [0.5, -1.0, 2.0],
        'variance': [nan, inf, 9.82142857142857],
        'stddev': [nan, inf, 3.13391585264004],
    },
    'log_normal': {
        'batch_shape': (3,),
        'event_shape': (),
        'log_prob': [-1.16672738781993, -7.66331097267092, -2.66500558897305],
        'cdf': [0.0441930840533199, 0.999959440840168, 0.300577206721256],
        'icdf': [0.457695315820533, 0.367879441171442, 60.5853481374838],
        'entropy': [1.91893853320467, -0.785034271121263, 4.33522926507883],
        'mean': [2.71828182845905, 0.384812144552979, 168.174141651845],
        'mode': [0.606530659712633, 0.336216493706733, 0.0142642339089993],
        'variance': [12.696480824257, 0.0139453643384183, 14622436.8870332],
        'stddev': [3.56321214976838, 0.118090492159269, 3823.92950863809],
    },
    'half_normal': {
        'batch_shape': (3,),
        'event_shape': (),
        'log_prob': [-0.270791352644727, -7.02181854831879, -1.46208208451888],
        'cdf': [0.235822844377905, 0.999936657516334, 0.576289202833207],
        'icdf': [0.125661346855074, 0.202346925058825, 3.2038789138615],
        'entropy': [0.725791352644727, -0.478181451681209, 1.64208208451888],
        'mean': [0.797884560802865, 0.23936536824086, 1.99471140200716],
        'mode': [0.0, 0.0, 0.0],
        'variance': [0.363380227632419, 0.0327042204869177, 2.27112642270262],
        'stddev': [0.602810274989087, 0.180843082496726, 1.50702568747272],
    },
    'half_cauchy': {
        'batch_shape': (3,),
        'event_shape': (),
        'log_prob': [-0.537760401530507, -2.08082324501973, -1.86256967899972],
        'cdf': [0.185547158155485, 0.844041739245261, 0.429553425045446],
        'icdf': [0.158384440324536, 0.3, 7.69420884293813],
        'entropy': [1.83787706640935, 0.633904262083409, 2.7541677982835],
        'mean': [inf, inf, inf],
        'mode': [0.0, 0.0, 0.0],
        'variance': [inf, inf, inf],
        'stddev': [inf, inf, inf],
    },
    'gumbel': {
        'batch_shape': (3,),
        'event_shape': (),
        'log_prob': [-1.09182469764127, -0.651569465178292, -1.98661077790979],
        'cdf': [0.224961793549919, 0.827889487392392, 0.511544833689042],
        'icdf': [-0.334032445247956, -0.890046123825501, 5.74984996689879],
        'entropy': [1.57721566490153, 0.373242860575597, 2.49350639677569],
        'mean': [1.07721566490153, -0.82683530052954, 3.44303916225383],
        'mode': [0.5, -1.0, 2.0],
        'variance': [1.64493406684823, 0.14804406601634, 10.2808379178014],
        'stddev': [1.28254983016186, 0.384764949048559, 3.20637457540466],
    },
    'bernoulli_probs': {
        'batch_shape': (3,),
        'event_shape': (),
        'log_prob': [-1.6094379124341, -1.20397280432594, -0.0512932943875506],
        'entropy': [0.500402423538188, 0.610864302054894, 0.198515243345873],
        'mean': [0.2, 0.7, 0.95],
        'mode': [0.0, 1.0, 1.0],
        'variance': [0.16, 0.21, 0.0475],
        'stddev': [0.4, 0.458257569495584, 0.217944947177034],
    },
    'bernoulli_logits': {
        'batch_shape': (3,),
        'event_shape': (),
        'log_prob': [-0.474076984180107, -0.313261687518223, -0.126928011042972],
        'entropy': [0.662847318579179, 0.582203108888218, 0.365333855087208],
        'mean': [0.622459331201855, 0.268941421369995, 0.880797077977882],
        'mode': [1.0, 0.0, 1.0],
        'variance': [0.235003712201594, 0.196611933241482, 0.104993585403507],
        'stddev': [0.484771814570107, 0.443409441985037, 0.324027136831943],
    },
    'geometric_probs': {
        'batch_shape': (3,),
        'event_shape': (),
        'log_prob': [-1.6094379124341, -3.96859335691654, -3.04702556794154],
        'entropy': [2.50201211769094, 0.872663288649848, 0.208963414048287],
        'mean': [4.0, 0.428571428571429, 0.0526315789473684],
        'mode': [0.0, 0.0, 0.0],
        'variance': [20.0, 0.612244897959184, 0.0554016620498614],
        'stddev': [4.47213595499958, 0.782460796435952, 0.235375576578925],
    },
    'geometric_logits': {
        'batch_shape': (3,),
        'event_shape': (),
        'log_prob': [-0.474076984180107, -2.25304675007289, -2.25385602208594],
        'entropy': [1.06488454000576, 2.16479524025142, 0.414776415841359],
        'mean': [0.606530659712633, 2.71828182845905, 0.135335283236613],
        'mode': [0.0, 0.0, 0.0],
        'variance': [0.974410100884076, 10.1073379273897, 0.153650922125347],
        'stddev': [0.987122130682965, 3.17920397700269, 0.391983318682501],
    },
    'poisson': {
        'batch_shape': (3,),
        'event_shape': (),
        'log_prob': [-0.7, -1.71231792754822, -1.85076265857955],
        'mean': [0.7, 2.0, 5.5],
        'mode': [0.0, 2.0, 5.0],
        'variance': [0.7, 2.0, 5.5],
        'stddev': [0.836660026534076, 1.41421356237309, 2.34520787991171],
    },
    'binomial_probs': {
        'batch_shape': (3,),
        'event_shape': (),
        'log_prob': [-2.2314355131421, -4.7103427193157, -0.512932943875505],
        'entropy': [1.62192914343568, 1.77907878409006, 0.919781685673695],
        'mean': [2.0, 7.0, 9.5],
        'mode': [2.0, 7.0, 10.0],
        'variance': [1.6, 2.1, 0.475],
        'stddev': [1.26491106406735, 1.44913767461894, 0.689202437604511],
    },
    'binomial_logits': {
        'batch_shape': (3,),
        'event_shape': (),
        'log_prob': [-4.87038492090053, -1.34512513240018, -10.411768906257],
        'mean': [3.11229665600927, 2.68941421369995, 17.6159415595576],
        'mode': [3.0, 2.0, 18.0],
        'variance': [1.17501856100797, 1.96611933241482, 2.09987170807013],
        'stddev': [1.08398273095468, 1.40218377269701, 1.4490934090217],
    },
    'categorical_probs': {
        'batch_shape': (2,),
        'event_shape': (),
        'log_prob': [-0.356674943938732, -1.20397280432594],
        'entropy': [0.801818552543337, 1.08889997534522],
        'mean': [nan, nan],
        'mode': [2.0, 2.0],
        'variance': [nan, nan],
        'stddev': [nan, nan],
    },
    'categorical_logits': {
        'batch_shape': (2,),
        'event_shape': (),
        'log_prob': [-2.29368917849646, -2.3190655326926],
        'entropy': [0.832383964739433, 0.632200473001617],
        'mean': [nan, nan],
        'mode': [1.0, 2.0],
        'variance': [nan, nan],
        'stddev': [nan, nan],
    },
    'one_hot_categorical': {
        'batch_shape': (2,),
        'event_shape': (3,),
        'log_prob': [-2.29368917849646, -2.3190655326926],
        'entropy': [0.832383964739433, 0.632200473001617],
        'mean': [0.224542747365882, 0.674563692560171, 0.100893560073947, 0.0983654619783383, 0.0983654619783383,
            0.803269076043323],
        'mode': [0.0, 1.0, 0.0, 0.0, 0.0, 1.0],
        'variance': [0.174123301971264, 0.219527517239758, 0.0907140496095517, 0.0886896978681264,
            0.0886896978681264, 0.158027867515829],
        'stddev': [0.417280843043703, 0.46853763695114, 0.301187731505703, 0.297808156147756, 0.297808156147756,
            0.397527190913815],
    },
    'multinomial': {
        'batch_shape': (2,),
        'event_shape': (3,),
        'log_prob': [-2.49714118745634, -7.22383682595562],
        'entropy': [2.32948256574102, 2.90671126705514],
        'mean': [0.6, 1.2, 4.2, 1.8, 1.8, 2.4],
        'variance': [0.54, 0.96, 1.26, 1.26, 1.26, 1.44],
        'stddev': [0.734846922834954, 0.979795897113271, 1.12249721603218, 1.12249721603218, 1.12249721603218, 1.2],
    },
    'dirichlet': {
        'batch_shape': (2,),
        'event_shape': (3,),
        'log_prob': [0.906753634905295, 2.32630161961136],
        'entropy': [-1.91467699098581, -1.64573227355399],
        'mean': [0.0909090909090909, 0.363636363636364, 0.545454545454545, 0.166666666666667, 0.166666666666667,
            0.666666666666667],
        'mode': [0.0, 0.333333333333333, 0.666666666666667, 0.0, 0.0, 1.0],
        'variance': [0.0127145581691036, 0.0356007628734901, 0.0381436745073109, 0.0198412698412698,
            0.0198412698412698, 0.0317460317460317],
        'stddev': [0.112758849626553, 0.188681644241008, 0.195304056556209, 0.140859042454753, 0.140859042454753,
            0.17817416127495],
    },
    'relaxed_bernoulli': {
        'batch_shape': (3,),
        'event_shape': (),
        'log_prob': [-0.742036537958545, -0.754441548418002, -0.424235210790154],
    },
    'relaxed_one_hot': {
        'batch_shape': (2,),
        'event_shape': (3,),
        'log_prob': [-0.895813290900946, 1.3658619055113],
    },
    'mvn_cov': {
        'batch_shape': (),
        'event_shape': (3,),
        'log_prob': -3.75819334289873,
        'entropy': 4.76929847386392,
        'mean': [0.5, -1.0, 2.0],
        'mode': [0.5, -1.0, 2.0],
        'variance': [2.0, 1.0, 1.5],
        'stddev': [1.4142135623731, 1.0, 1.22474487139159],
    },
    'mvn_prec': {
        'batch_shape': (2,),
        'event_shape': (3,),
        'log_prob': [-4.77349927414733, -6.52349927414734],
        'entropy': [4.19349927414734, 4.19349927414734],
        'mean': [0.0, 1.0, 2.0, 1.0, 1.0, 1.0],
        'mode': [0.0, 1.0, 2.0, 1.0, 1.0, 1.0],
        'variance': [1.15418502202643, 0.616740088105727, 1.54185022026432, 1.15418502202643, 0.616740088105727,
            1.54185022026432],
        'stddev': [1.0743300340335, 0.785328013065704, 1.24171261581105, 1.0743300340335, 0.785328013065704,
            1.24171261581105],
    },
    'mvn_tril': {
        'batch_shape': (),
        'event_shape': (3,),
        'log_prob': [-3.75828830025865, -5.94098558315953],
        'entropy': 4.76938073633892,
        'mean': [0.5, -1.0, 2.0],
        'mode': [0.5, -1.0, 2.0],
        'variance': [2.0, 1.00030000002006, 1.49977011780163],
        'stddev': [1.4142135623731, 1.00014998876171, 1.22465101878112],
    },
    'lowrank_mvn': {
        'batch_shape': (),
        'event_shape': (3,),
        'log_prob': [-3.97237142668221, -5.71704519683373],
        'entropy': 5.13412123641029,
        'mean': [0.5, -1.0, 2.0],
        'mode': [0.5, -1.0, 2.0],
        'variance': [1.75, 1.13, 3.16],
        'stddev': [1.3228756555323, 1.06301458127346, 1.77763888346312],
    },
    'negative_binomial': {
        'batch_shape': (3,),
        'event_shape': (),
        'log_prob': [-0.44628710262842, -3.53454079195646, -3.74695137724895],
        'mean': [0.5, 11.6666666666667, 9.49999999999999],
        'mode': [0.0, 9.0, 0.0],
        'variance': [0.625, 38.8888888888889, 190.0],
        'stddev': [0.790569415042095, 6.23609564462323, 13.7840487520902],
    },
    'negative_binomial_logits': {
        'batch_shape': (3,),
        'event_shape': (),
        'log_prob': [-2.92223095254032, -2.57698503211529, -3.46040940153222],
        'mean': [4.94616381210038, 1.10363832351433, 22.1671682967919],
        'mode': [3.0, 0.0, 14.0],
        'variance': [13.1010092974775, 1.50964417322416, 185.961618396225],
        'stddev': [3.6195316406239, 1.22867578035223, 13.6367744865208],
    },
    'pareto': {
        'batch_shape': (3,),
        'event_shape': (),
        'log_prob': [-0.666621590488455, 0.332373853019124, -0.396632758796435],
        'cdf': [0.119816692967285, 0.721145199073066, 0.633137647418629],
        'icdf': [1.16243276746516, 0.395852373231868, 3.3498507977571],
        'entropy': [2.78524637251016, -0.720263536200091, 0.393360821453912],
        'mean': [inf, 0.5, 3.05555555555556],
        'mode': [1.0, 0.3, 2.5],
        'variance': [inf, 0.2, 0.485008818342152],
        'stddev': [inf, 0.447213595499958, 0.696425745031121],
    },
    'weibull': {
        'batch_shape': (3,),
        'event_shape': (),
        'log_prob': [-0.425994722890886, -12.7165856539942, -0.508774522496526],
        'cdf': [0.349823633779733, 0.999999887464825, 0.254041941304636],
        'icdf': [0.040162945282136, 0.249766383347309, 2.72594532572443],
        'entropy': [1.10929680183808, -0.608512152435115, 0.683810001827893],
        'mean': [1.26582350605728, 0.265868077635827, 2.30800356235914],
        'mode': [nan, 0.212132034355964, 2.41042999049686],
        'variance': [3.42683555365315, 0.0193141652942297, 0.234724350421998],
        'stddev': [1.85117140039845, 0.138975412552831, 0.484483591488915],
    },
    'inverse_gamma': {
        'batch_shape': (3,),
        'event_shape': (),
        'log_prob': [-2.93028790350186, -2.71287946746351, -3.92090305358376],
        'cdf': [0.00304624203112669, 0.955375080765052, 0.990725886365735],
        'entropy': [3.44037239592632, -0.184643737169556, 0.0843207905054442],
        'mean': [inf, 0.4, 0.666666666666667],
        'mode': [0.882352941176471, 0.133333333333333, 0.461538461538462],
        'variance': [inf, inf, 0.126984126984127],
        'stddev': [inf, inf, 0.356348322549899],
    },
    'fisher_snedecor': {
        'batch_shape': (3,),
        'event_shape': (),
        'log_prob': [-0.518164008707638, -1.21651598416307, -1.78243846845085],
        'mean': [5.0, 1.66666666666667, 1.28571428571429],
        'mode': [nan, 0.238095238095238, 0.584415584415584],
        'variance': [nan, 11.1111111111111, 1.32244897959184],
        'stddev': [nan, 3.33333333333333, 1.14997781699989],
    },
    'kumaraswamy': {
        'batch_shape': (3,),
        'event_shape': (),
        'log_prob': [0.128473555164726, -0.466196913503149, 0.686422225210233],
        'cdf': [0.57023870438347, 0.163488357926981, 0.914925144138959],
        'icdf': [0.0214094182305328, 0.907316540521203, 0.852298197218632],
        'entropy': [-0.264187818927574, -1.01894088852758, -0.636693714239869],
        'mean': [0.306554429993423, 0.817576440090196, 0.731318681318682],
        'variance': [0.0664734635792327, 0.0458544788951569, 0.0186033397846583],
        'stddev': [0.257824482117647, 0.21413658934231, 0.136394060664892],
    },
    'logistic_normal': {
        'batch_shape': (2,),
        'event_shape': (3,),
        'log_prob': [1.95839189918285, -19.4611428245806],
    },
}
KL_EXPECTED = {
    'normal': [5.24047164011851, 2.80685281944005],
    'bernoulli': [0.213212682125213, 0.453055895990144],
    'beta': [2.24156447527049, 0.416581593726733],
    'gamma': [3.0171636456571, 0.344738234371976],
    'exponential': [1.61370563888011, 0.193147180559945],
    'laplace': [1.48446272804951, 1.04261170178294],
    'poisson': [0.806852819440055, 0.386294361119891],
    'uniform': [0.587786664902119, 0.916290731874155],
    'gumbel': [46.5059718581315, 1.15473905081481],
    'cauchy': [0.480366416281282, 0.485507815781701],
    'geometric': [0.274276261683506, 1.27302833658963],
    'half_normal': [0.190825623765991, 8.12092260322373],
    'log_normal': [5.24047164011851, 2.80685281944005],
    'dirichlet': [3.81463640274705, 1.09880261833784],
    'categorical': [0.424816154761607],
    'one_hot_categorical': [0.424816154761607],
    'binomial': [0.411414392525259, 3.75341797525151],
    'mvn': [1.50920080028341, 2.30920080028341],
}
EXPR_EXPECTED = {
    'exp_ldj': [-1.5, 0.2, 0.9, 0.3, -0.4, 2.0],
    'sigmoid_fwd': [0.182425523806356, 0.549833997312478, 0.710949502625004, 0.574442516811659, 0.401312339887548,
        0.880797077977882],
    'sigmoid_ldj': [-1.9028265559655, -1.39627773876318, -1.58230774946418, -1.40871048893705, -1.42603050479991,
        -2.25385602208595],
    'sigmoid_inv': [-2.19722457733622, 0.0, 2.19722457733622],
    'tanh_ldj': [-1.71088034202759, -0.0397361436800147, -0.719660859932258, -0.0886815398518807,
        -0.155906970775665, -2.65000549471573],
    'tanh_inv': [-1.47221948958322, 0.100335347731076, 0.549306144334055],
    'affine_fwd': [0.25, 1.6, 5.7, 1.15, 2.8, 9.0],
    'affine_ldj': [0.693147180559945, 0.693147180559945, 0.693147180559945, 0.693147180559945, 0.693147180559945,
        0.693147180559945],
    'affine_event_ldj': [1.09861228866811, 1.09861228866811],
    'power_fwd': [0.0492950301754649, 1.57744096561488, 5.65685424949238],
    'power_ldj': [-0.889668474614749, 1.18977306706509, 1.95601150271407],
    'power_inv': [0.617800850567412, 1.07565375693257, 1.31950791077289],
    'softmax_fwd': [0.057152250450396, 0.312848412284285, 0.629999337265319, 0.143461058671012, 0.0712406534023815,
        0.785298287926607],
    'stick_fwd': [0.069227784501931, 0.35290456877782, 0.410834716018843, 0.167032930701407, 0.31032244201237,
        0.173127072579316, 0.454976158175699, 0.0615743272326142],
    'stick_ldj': [-6.39103918115436, -6.49889333911612],
    'stick_inv': [-0.287682072451781, 0.182321556793954, -1.38629436111989],
    'compose_ldj': [2.35, 3.5],
    'compose_inv': [-0.846573590279973, -0.153426409720027, 0.59861228866811],
    'tanh_normal_log_prob': [-0.872529046426457, -10.7887985551733],
    'affine_exp_cdf': [0.135233791630521, 0.814510081123616],
    'affine_exp_icdf': [0.952370608392699, 1.32518432841131],
    'stick_dist_log_prob': -4.99439354270859,
    'independent_log_prob': [-2.62102424696929, -19.7515827052895],
    'independent_entropy': [3.53102424696929, 1.45158270528945],
    'mixture_log_prob': [-1.29873544386718, -1.97023790423708, -2.26753544253644, -1.56397139930823,
        -2.73685601792086, -2.47115318826772],
    'mixture_cdf': [0.672443402769263, 0.716616871184232, 0.901655169761497, 0.545301707327759, 0.0227501319481792,
        0.825749955688411],
    'mixture_mean': [-0.0646673247140367, 0.333333333333333],
    'mixture_variance': [1.68721426707069, 3.30555555555556],
    'mixture_mvn_log_prob': [-3.44770762824696, -2.61893282064618],
    'mvn_precision_matrix': [0.523860782203086, -0.154287764621457, -0.0143523501973448, -0.154287764621457,
        1.07283817725153, -0.13275923932544, -0.0143523501973448, -0.13275923932544, 0.685324721923215],
    'mvn_scale_tril': [1.0743300340335, 0.0, 0.0, -0.287034741917349, 0.730993259228953, 0.0, 0.123014889393149,
        -0.313282825383837, 1.19522860933439],
    'mvn_covariance': [1.15418502202643, -0.308370044052863, 0.13215859030837, -0.308370044052863,
        0.616740088105727, -0.26431718061674, 0.13215859030837, -0.26431718061674, 1.54185022026432],
    'lowrank_covariance': [1.75, 0.35, 0.1, 0.35, 1.13, 0.22, 0.1, 0.22, 3.16],
    'expanded_gamma_log_prob': [-0.0658498295581706, -3.15655426807425, -4.23332399941082, -1.83173813789414,
        -2.13025990695436, -0.694999374371316],
    'expanded_mvn_log_prob': [-3.75819334289873, -5.94152667623206],
}


def t(a):
    return gg.tensor(np.asarray(a, dtype=np.float64))


def _param(a):
    return t(a) if isinstance(a, list) else a


def _build(name, args, kwargs):
    return getattr(D, name)(*map(_param, args), **{k: _param(v) for k, v in kwargs.items()})


def _close(got, want, rtol=1e-9):
    np.testing.assert_allclose(np.ravel(np.asarray(got.numpy(), dtype=np.float64)), want, rtol=rtol, atol=1e-12,
                               equal_nan=True)


@pytest.mark.parametrize("key", list(CASES))
def test_values_match_pytorch(key):
    name, args, kwargs, value = CASES[key]
    d, want = _build(name, args, kwargs), EXPECTED[key]
    assert (d.batch_shape, d.event_shape) == (want["batch_shape"], want["event_shape"])
    value = gg.tensor(value) if name == "Categorical" else t(value)
    for method in ("log_prob", "cdf", "icdf", "entropy", "mean", "mode", "variance", "stddev"):
        if method not in want:
            continue
        attr = getattr(d, method)
        got = (attr(value) if method in ("log_prob", "cdf") else attr(t(ICDF_Q)) if method == "icdf"
               else attr() if method == "entropy" else attr)
        _close(got, want[method], rtol=1e-7 if (name in ("Gamma", "Chi2") and method == "cdf") else 1e-9)


@pytest.mark.parametrize("key", list(KL_CASES))
def test_kl_divergences_match_pytorch(key):
    name, p_args, q_args = KL_CASES[key]

    def build(args):
        if isinstance(args, dict):
            return getattr(D, name)(**{k: _param(v) for k, v in args.items()})
        return getattr(D, name)(*map(_param, args))
    _close(D.kl_divergence(build(p_args), build(q_args)), KL_EXPECTED[key])


@pytest.mark.parametrize("key", list(EXPRESSIONS))
def test_transforms_and_composite_distributions_match_pytorch(key):
    # the same expression PyTorch evaluated, with D = graphgrad.distributions
    _close(eval(EXPRESSIONS[key]), EXPR_EXPECTED[key])


HEAVY_TAILED = {"log_normal", "cauchy", "half_cauchy", "pareto", "inverse_gamma", "fisher_snedecor", "weibull"}


@pytest.mark.parametrize("key", list(CASES))
def test_sample_shapes_support_and_moments(key):
    name, args, kwargs, _ = CASES[key]
    d, want = _build(name, args, kwargs), EXPECTED[key]
    gg.manual_seed(0)
    assert tuple(d.sample().shape) == d.batch_shape + d.event_shape
    assert tuple(d.sample((2, 3)).shape) == (2, 3) + d.batch_shape + d.event_shape
    n = 20000
    s = d.sample((n,))
    assert not s.requires_grad
    assert bool(gg.all(d.support.check(s)).numpy()), f"{name} samples outside {d.support}"
    if "mean" not in want or key in HEAVY_TAILED:
        return
    x = np.asarray(s.numpy(), dtype=np.float64)
    mean, var = np.reshape(want["mean"], x.shape[1:]), np.reshape(want["variance"], x.shape[1:])
    ok = np.isfinite(mean) & np.isfinite(var)
    assert (np.abs(x.mean(0) - mean) <= 6 * np.sqrt(np.where(ok, var, 0) / n) + 1e-9)[ok].all()
    assert (np.abs(x.var(0) - var) <= 0.1 * np.abs(var) + 1e-9)[ok].all()


def test_sampling_is_reproducible_with_manual_seed():
    for name, args, kwargs, _ in CASES.values():
        d = _build(name, args, kwargs)
        gg.manual_seed(5)
        a = d.sample((3,)).numpy()
        gg.manual_seed(5)
        np.testing.assert_array_equal(d.sample((3,)).numpy(), a)


RSAMPLE_CASES = {
    "Normal": [[0.3, -1.0], [0.5, 2.0]], "Uniform": [[0.0, 1.0], [2.0, 1.5]], "Exponential": [[0.5, 2.0]],
    "Laplace": [[0.3, -1.0], [0.5, 2.0]], "Gumbel": [[0.3, -1.0], [0.5, 2.0]], "LogNormal": [[0.1, -0.3], [0.4, 0.2]],
    "HalfNormal": [[0.4, 1.3]], "Gamma": [[0.5, 3.0], [1.5, 0.7]], "Chi2": [[3.0, 7.0]],
    "Beta": [[0.5, 3.0], [1.5, 0.7]], "StudentT": [[5.0, 9.0], [0.3, -1.0], [1.0, 2.0]],
    "Dirichlet": [[0.5, 3.0, 1.2]], "Pareto": [[1.0, 2.0], [5.0, 6.5]], "Weibull": [[1.0, 2.0], [1.5, 3.0]],
    "InverseGamma": [[6.0, 9.0], [1.0, 2.0]], "FisherSnedecor": [[5.0, 8.0], [11.0, 14.0]],
    "Kumaraswamy": [[0.7, 2.0], [1.5, 3.0]],
}


@pytest.mark.parametrize("name", list(RSAMPLE_CASES))
def test_rsample_gradients_are_the_gradients_of_the_moments(name):
    """d/dtheta of the sample mean of rsample(n) (and of its second moment) converges to d/dtheta of the
    exact mean (and of variance + mean^2): the reparameterized gradient is unbiased."""
    n = 20000
    for moment in (1, 2):
        params = [gg.tensor(np.asarray(a, dtype=np.float64), requires_grad=True) for a in RSAMPLE_CASES[name]]
        gg.manual_seed(0)
        x = getattr(D, name)(*params).rsample((n,))
        gg.sum(gg.mean(x ** moment, axis=0)).backward()
        got = [p.grad.numpy().copy() for p in params]
        exact = [gg.tensor(np.asarray(a, dtype=np.float64), requires_grad=True) for a in RSAMPLE_CASES[name]]
        d = getattr(D, name)(*exact)
        target = d.mean if moment == 1 else d.variance + d.mean ** 2
        gg.sum(target).backward()
        for g, p in zip(got, exact):
            want = np.zeros_like(g) if p.grad is None else p.grad.numpy()
            np.testing.assert_allclose(g, want, rtol=0.06, atol=0.02 * moment, err_msg=f"{name} moment {moment}")


def test_multivariate_normal_rsample_gradient_reaches_loc_and_covariance():
    cov = np.array([[2.0, 0.3], [0.3, 1.0]])
    loc, c = gg.tensor([0.2, -0.1], dtype=gg.float64, requires_grad=True), gg.tensor(cov, requires_grad=True)
    gg.manual_seed(0)
    x = D.MultivariateNormal(loc, covariance_matrix=c).rsample((40000,))
    # E[x0^2 + x0 x1] = cov00 + cov01 + mu0^2 + mu0 mu1
    gg.mean(x[:, 0] ** 2 + x[:, 0] * x[:, 1]).backward()
    np.testing.assert_allclose(loc.grad.numpy(), [2 * 0.2 - 0.1, 0.2], atol=0.03)
    # the symmetric gradient PyTorch gives (Cholesky's backward symmetrizes): d/dcov01 is shared
    np.testing.assert_allclose(c.grad.numpy(), [[1.0, 0.5], [0.5, 0.0]], atol=0.05)


def test_relaxed_distributions_rsample_gradients_match_pytorch():
    """Monte-Carlo gradients (no closed form) against PyTorch's with 4e6 draws."""
    c = t([1.0, 2.0, 3.0])
    logits, temp = gg.tensor([0.3, -0.5, 1.0], dtype=gg.float64, requires_grad=True), gg.tensor(
        [0.5], dtype=gg.float64, requires_grad=True)
    gg.manual_seed(1)
    x = D.RelaxedOneHotCategorical(temp, logits=logits).rsample((50000,))
    gg.mean(gg.sum(x * c, axis=-1) ** 2).backward()
    np.testing.assert_allclose(logits.grad.numpy(), [-1.35609187, -0.19948235, 1.55557422], atol=0.04)
    np.testing.assert_allclose(temp.grad.numpy(), [-1.09978100], atol=0.04)
    logits, temp = gg.tensor([0.3, -0.5], dtype=gg.float64, requires_grad=True), gg.tensor(
        [0.5], dtype=gg.float64, requires_grad=True)
    x = D.RelaxedBernoulli(temp, logits=logits).rsample((50000,))
    gg.mean(gg.sum(x * x * t([1.0, 2.0]), axis=-1)).backward()
    np.testing.assert_allclose(logits.grad.numpy(), [0.22214763, 0.37688017], atol=0.02)
    np.testing.assert_allclose(temp.grad.numpy(), [-0.41610538], atol=0.02)


def test_implicit_gamma_gradient_matches_pytorchs_standard_gamma_grad():
    alpha = np.array([0.3, 1.0, 2.5, 10.0, 100.0, 0.05])
    x = np.array([0.1, 1.5, 2.0, 12.0, 95.0, 1e-8])
    want = [0.7894044031, 1.431010898, 0.9534439668, 1.112308752, 0.9762076987, 3.584567186e-06]
    np.testing.assert_allclose(standard_gamma_grad(alpha, x), want, rtol=1e-3)


def test_reparameterized_samples_are_deterministic_functions_of_the_noise():
    loc, scale = t([0.5, -1.0]), t([2.0, 0.5])
    gg.manual_seed(3)
    eps = gg.randn(4, 2, dtype=gg.float64).numpy()
    gg.manual_seed(3)
    np.testing.assert_allclose(D.Normal(loc, scale).rsample((4,)).numpy(), loc.numpy() + scale.numpy() * eps)
    gg.manual_seed(3)
    tanh = D.TransformedDistribution(D.Normal(loc, scale), [D.transforms.TanhTransform()])
    np.testing.assert_allclose(tanh.rsample((4,)).numpy(), np.tanh(loc.numpy() + scale.numpy() * eps))


def test_transform_cache_returns_the_input_of_a_squashed_sample():
    """TanhTransform(cache_size=1), as SAC writes it: log_prob of a sample whose tanh rounded to 1 is the
    density at the pre-tanh value (atanh would overflow), as PyTorch's cached transform gives."""
    mu, sigma = gg.tensor([8.0, 0.1]), gg.tensor([0.1, 1.0])
    d = D.TransformedDistribution(D.Normal(mu, sigma), D.TanhTransform(cache_size=1))
    gg.manual_seed(0)
    a = d.rsample()
    gg.manual_seed(0)
    x = D.Normal(mu, sigma).rsample()
    want = D.Normal(mu, sigma).log_prob(x) - D.TanhTransform().log_abs_det_jacobian(x, a)
    np.testing.assert_allclose(d.log_prob(a).numpy(), want.numpy(), rtol=1e-6)
    assert np.isfinite(d.log_prob(a).numpy()).all()
    t2 = D.ComposeTransform([D.AffineTransform(1.0, 2.0), D.TanhTransform(cache_size=1)])
    assert t2.inv(t2(gg.tensor([20.0]))).numpy().tolist() == [20.0]


def test_kumaraswamy_mode_is_the_density_maximum():
    d = D.Kumaraswamy(t([2.0, 3.0]), t([3.0, 1.5]))
    grid = np.linspace(0.001, 0.999, 9999)
    dens = D.Kumaraswamy(t([[2.0, 3.0]]), t([[3.0, 1.5]])).log_prob(t(grid[:, None])).numpy()
    np.testing.assert_allclose(d.mode.numpy(), grid[dens.argmax(0)], atol=2e-4)


def test_has_rsample_and_supports_are_pytorchs():
    assert D.Gamma(1.0, 1.0).has_rsample and D.Dirichlet(t([1.0, 2.0])).has_rsample
    assert not D.Poisson(1.0).has_rsample and not D.Categorical(logits=t([0.0, 1.0])).has_rsample
    assert D.Independent(D.Normal(t([0.0]), t([1.0])), 1).has_rsample
    assert D.Normal(0.0, 1.0).support is constraints.real and D.Beta(1.0, 2.0).support is constraints.unit_interval
    assert D.Dirichlet(t([1.0, 2.0])).support is constraints.simplex
    assert D.Poisson(1.0).support is constraints.nonnegative_integer
    assert D.Normal.arg_constraints == {"loc": constraints.real, "scale": constraints.positive}
    assert D.MultivariateNormal.arg_constraints["scale_tril"] is constraints.lower_cholesky
    assert D.Categorical(logits=t([0.0, 1.0, 2.0])).support.upper_bound == 2


def test_constraints_check_values():
    v = t([-1.0, 0.0, 0.5, 1.0, 2.0])
    assert constraints.real.check(t([1.0, nan])).numpy().tolist() == [True, False]
    assert constraints.positive.check(v).numpy().tolist() == [False, False, True, True, True]
    assert constraints.nonnegative.check(v).numpy().tolist() == [False, True, True, True, True]
    assert constraints.unit_interval.check(v).numpy().tolist() == [False, True, True, True, False]
    assert constraints.interval(0.0, 2.0).check(v).numpy().tolist() == [False, True, True, True, True]
    assert constraints.greater_than(0.5).check(v).numpy().tolist() == [False, False, False, True, True]
    assert constraints.boolean.check(v).numpy().tolist() == [False, True, False, True, False]
    assert constraints.nonnegative_integer.check(v).numpy().tolist() == [False, True, False, True, True]
    assert constraints.integer_interval(0, 1).check(v).numpy().tolist() == [False, True, False, True, False]
    assert constraints.simplex.check(t([[0.2, 0.8], [0.5, 0.6]])).numpy().tolist() == [True, False]
    chol = t([[[1.0, 0.0], [0.5, 2.0]], [[1.0, 0.3], [0.5, 2.0]], [[-1.0, 0.0], [0.5, 2.0]]])
    assert constraints.lower_cholesky.check(chol).numpy().tolist() == [True, False, False]
    pd = t([[[2.0, 0.5], [0.5, 1.0]], [[1.0, 2.0], [2.0, 1.0]]])
    assert constraints.positive_definite.check(pd).numpy().tolist() == [True, False]
    assert constraints.independent(constraints.positive, 1).check(t([[1.0, 2.0], [1.0, -1.0]])).numpy().tolist() \
        == [True, False]
    assert constraints.real_vector.event_dim == 1 and constraints.lower_cholesky.event_dim == 2


def test_validate_args_rejects_invalid_parameters_and_values():
    with pytest.raises(ValueError, match="scale"):
        D.Normal(t([0.0]), t([-1.0]), validate_args=True)
    with pytest.raises(ValueError, match="concentration"):
        D.Gamma(t([-1.0]), t([1.0]), validate_args=True)
    with pytest.raises(ValueError, match="support"):
        D.Poisson(t([1.0]), validate_args=True).log_prob(t([0.5]))
    D.Normal(t([0.0]), t([-1.0]))  # not validated unless asked
    with pytest.raises(ValueError, match="either `probs` or `logits`"):
        D.Bernoulli(probs=t([0.5]), logits=t([0.0]))


def test_expand_broadcasts_the_batch_shape():
    for name, args, kwargs, _ in CASES.values():
        d = _build(name, args, kwargs)
        e = d.expand((4,) + d.batch_shape)
        assert e.batch_shape == (4,) + d.batch_shape and e.event_shape == d.event_shape, name
        assert tuple(e.sample((2,)).shape) == (2, 4) + d.batch_shape + d.event_shape, name


def test_independent_and_mixture_shapes():
    base = D.Normal(gg.zeros((5, 3, 2), dtype=gg.float64), gg.ones((5, 3, 2), dtype=gg.float64))
    ind = D.Independent(base, 2)
    assert ind.batch_shape == (5,) and ind.event_shape == (3, 2)
    assert ind.log_prob(gg.zeros((5, 3, 2), dtype=gg.float64)).shape == (5,)
    mix = D.MixtureSameFamily(D.Categorical(logits=gg.zeros((4, 3), dtype=gg.float64)),
                              D.Independent(D.Normal(gg.zeros((4, 3, 2), dtype=gg.float64),
                                                     gg.ones((4, 3, 2), dtype=gg.float64)), 1))
    assert mix.batch_shape == (4,) and mix.event_shape == (2,)
    assert mix.sample((7,)).shape == (7, 4, 2) and mix.log_prob(mix.sample((7,))).shape == (7, 4)


def test_register_kl_dispatches_to_the_most_specific_pair():
    class MyNormal(D.Normal):
        pass

    p, q = MyNormal(t([0.0]), t([1.0])), D.Normal(t([1.0]), t([2.0]))
    want = D.kl_divergence(D.Normal(t([0.0]), t([1.0])), q).numpy()
    np.testing.assert_allclose(D.kl_divergence(p, q).numpy(), want)  # inherited from (Normal, Normal)

    @D.register_kl(MyNormal, D.Normal)
    def _kl(p, q):
        return gg.zeros_like(p.loc)

    assert D.kl_divergence(p, q).numpy().tolist() == [0.0]
    with pytest.raises(NotImplementedError, match="Poisson"):
        D.kl_divergence(D.Poisson(1.0), D.Normal(0.0, 1.0))


def test_log_prob_and_entropy_gradients_match_finite_differences():
    v = t([0.3, 0.6])
    gg.check_grad(lambda a, b: D.Beta(a, b).log_prob(v), t([0.7, 2.0]), t([1.5, 0.4]))
    gg.check_grad(lambda a, b: D.Gamma(a, b).entropy(), t([0.7, 2.0]), t([1.5, 0.4]))
    gg.check_grad(lambda a: D.Dirichlet(a).log_prob(t([0.2, 0.3, 0.5])), t([0.5, 2.0, 3.0]))
    gg.check_grad(lambda df, s: D.StudentT(df, 0.0, s).log_prob(v), t([3.0, 5.0]), t([1.0, 2.0]))
    cov = t([[2.0, 0.3], [0.3, 1.0]])
    gg.check_grad(lambda m, c: D.MultivariateNormal(m, covariance_matrix=(c + gg.swapaxes(c, -1, -2)) / 2)
                  .log_prob(t([0.5, -0.2])), t([0.1, 0.2]), cov)


def test_torch_facade_maps_the_distribution_submodules():
    import graphgrad.compat.torch as facade
    saved = dict(sys.modules)
    try:
        facade.install()
        from torch.distributions import Normal, constraints as C  # noqa: F401 (the facade's)
        from torch.distributions.kl import register_kl
        from torch.distributions.multivariate_normal import MultivariateNormal
        from torch.distributions.transforms import TanhTransform
        from torch.distributions.utils import probs_to_logits
        assert Normal is D.Normal and MultivariateNormal is D.MultivariateNormal and C is constraints
        assert register_kl is D.register_kl and TanhTransform is D.TanhTransform and callable(probs_to_logits)
    finally:
        for name in set(sys.modules) - set(saved):
            del sys.modules[name]
        sys.modules.update(saved)
