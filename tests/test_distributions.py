"""gg.distributions (torch.distributions' API): densities, entropies, CDFs and KL divergences against
closed forms evaluated by SciPy, sampling statistics and reproducibility, reparameterized gradients
(finite differences), and agreement with torch.distributions when PyTorch is installed."""
import math

import numpy as np
import pytest

import graphgrad as gg
from graphgrad import distributions as D

stats = pytest.importorskip("scipy.stats")

LOC = np.array([0.5, -1.0, 2.0])
SCALE = np.array([1.0, 0.3, 2.5])
LOGITS = np.array([[1.0, 2.0, 0.5, -1.0], [0.0, 0.0, 3.0, 0.1]])


def _t(a):
    return gg.tensor(np.asarray(a, dtype=np.float64))


def test_normal_density_cdf_entropy_and_moments():
    n = D.Normal(_t(LOC), _t(SCALE))
    x = np.array([[0.0, 0.1, -3.0], [1.0, -1.0, 2.0]])
    np.testing.assert_allclose(n.log_prob(_t(x)).numpy(), stats.norm.logpdf(x, LOC, SCALE), rtol=1e-12)
    np.testing.assert_allclose(n.cdf(_t(x)).numpy(), stats.norm.cdf(x, LOC, SCALE), rtol=1e-12)
    np.testing.assert_allclose(n.icdf(_t([0.1, 0.5, 0.9])).numpy(), stats.norm.ppf([0.1, 0.5, 0.9], LOC, SCALE),
                               rtol=1e-9)
    np.testing.assert_allclose(n.entropy().numpy(), stats.norm.entropy(LOC, SCALE), rtol=1e-12)
    np.testing.assert_allclose(n.variance.numpy(), SCALE ** 2)
    assert n.batch_shape == (3,) and n.event_shape == ()


def test_normal_broadcasts_its_parameters_and_samples_have_pytorchs_shape():
    n = D.Normal(_t(LOC), 2.0)
    assert n.batch_shape == (3,) and n.scale.shape == (3,)
    assert n.sample((4, 5)).shape == (4, 5, 3) and n.rsample().shape == (3,)
    assert not n.sample((2,)).requires_grad


def test_rsample_is_reparameterized_gradients_reach_the_parameters():
    loc, scale = gg.tensor(LOC, requires_grad=True), gg.tensor(SCALE, requires_grad=True)
    gg.manual_seed(0)
    x = D.Normal(loc, scale).rsample((7,))
    x.sum().backward()
    gg.manual_seed(0)
    eps = (D.Normal(gg.zeros(3, dtype=gg.float64), gg.ones(3, dtype=gg.float64)).sample((7,))).numpy()
    np.testing.assert_allclose(loc.grad.numpy(), [7.0, 7.0, 7.0])
    np.testing.assert_allclose(scale.grad.numpy(), eps.sum(axis=0), rtol=1e-10)


def test_log_prob_and_kl_gradients_match_finite_differences():
    x = _t([0.3, -0.2, 1.0])
    gg.check_grad(lambda m, s: D.Normal(m, s).log_prob(x), _t(LOC), _t(SCALE))
    gg.check_grad(lambda m, s: D.kl_divergence(D.Normal(m, s), D.Normal(_t([0.0, 0.0, 0.0]), _t([1.0, 2.0, 3.0]))),
                  _t(LOC), _t(SCALE))
    gg.check_grad(lambda z: D.Categorical(logits=z).log_prob(gg.tensor([2, 2])), _t(LOGITS))
    gg.check_grad(lambda z: D.Categorical(logits=z).entropy(), _t(LOGITS))


def test_categorical_probabilities_log_prob_entropy_and_sampling():
    c = D.Categorical(logits=_t(LOGITS))
    probs = np.exp(LOGITS) / np.exp(LOGITS).sum(-1, keepdims=True)
    np.testing.assert_allclose(c.probs.numpy(), probs, rtol=1e-12)
    np.testing.assert_allclose(c.log_prob(gg.tensor([1, 2])).numpy(), np.log(probs[[0, 1], [1, 2]]), rtol=1e-12)
    np.testing.assert_allclose(c.entropy().numpy(), [stats.entropy(p) for p in probs], rtol=1e-12)
    np.testing.assert_array_equal(c.mode.numpy(), [1, 2])
    gg.manual_seed(3)
    draws = c.sample((40000,)).numpy()
    assert draws.shape == (40000, 2) and draws.dtype == np.int64
    for row in range(2):
        np.testing.assert_allclose(np.bincount(draws[:, row], minlength=4) / 40000, probs[row], atol=0.01)
    # from probabilities (normalized), and log_prob of a batch of values broadcast against the batch
    c2 = D.Categorical(probs=_t([2.0, 6.0]))
    np.testing.assert_allclose(c2.probs.numpy(), [0.25, 0.75])
    assert c.log_prob(gg.tensor([[0, 1], [3, 3], [2, 0]])).shape == (3, 2)


def test_sampling_is_reproducible_with_manual_seed():
    gg.manual_seed(11)
    a = D.Categorical(logits=_t(LOGITS)).sample((5,)).numpy()
    b = D.Normal(_t(LOC), _t(SCALE)).sample((5,)).numpy()
    gg.manual_seed(11)
    np.testing.assert_array_equal(D.Categorical(logits=_t(LOGITS)).sample((5,)).numpy(), a)
    np.testing.assert_array_equal(D.Normal(_t(LOC), _t(SCALE)).sample((5,)).numpy(), b)


def test_bernoulli_and_uniform():
    p = np.array([0.2, 0.7, 0.99])
    b = D.Bernoulli(probs=_t(p))
    v = np.array([1.0, 0.0, 1.0])
    np.testing.assert_allclose(b.log_prob(_t(v)).numpy(), stats.bernoulli.logpmf(v, p), rtol=1e-6)
    np.testing.assert_allclose(b.entropy().numpy(), stats.bernoulli.entropy(p), rtol=1e-6)
    b2 = D.Bernoulli(logits=_t(np.log(p / (1 - p))))
    np.testing.assert_allclose(b2.probs.numpy(), p, rtol=1e-12)
    gg.manual_seed(0)
    np.testing.assert_allclose(b.sample((20000,)).numpy().mean(axis=0), p, atol=0.02)
    u = D.Uniform(_t([0.0, -1.0]), _t([2.0, 3.0]))
    np.testing.assert_allclose(u.log_prob(_t([1.0, 0.0])).numpy(), stats.uniform.logpdf([1.0, 0.0], [0, -1], [2, 4]))
    assert u.log_prob(_t([5.0, 0.0])).numpy()[0] == -math.inf
    np.testing.assert_allclose(u.entropy().numpy(), np.log([2.0, 4.0]))
    samples = u.sample((10000,)).numpy()
    assert (samples >= [0.0, -1.0]).all() and (samples < [2.0, 3.0]).all()


def test_kl_divergences_match_their_closed_forms():
    p, q = D.Normal(_t(LOC), _t(SCALE)), D.Normal(_t([0.0, 1.0, 1.0]), _t([2.0, 1.0, 0.5]))
    want = np.log(np.array([2.0, 1.0, 0.5]) / SCALE) + (SCALE ** 2 + (LOC - [0.0, 1.0, 1.0]) ** 2) / (
        2 * np.array([2.0, 1.0, 0.5]) ** 2) - 0.5
    np.testing.assert_allclose(D.kl_divergence(p, q).numpy(), want, rtol=1e-12)
    cp, cq = D.Categorical(logits=_t(LOGITS)), D.Categorical(probs=_t([0.1, 0.2, 0.3, 0.4]))
    pp = cp.probs.numpy()
    np.testing.assert_allclose(D.kl_divergence(cp, cq).numpy(), [stats.entropy(r, [0.1, 0.2, 0.3, 0.4]) for r in pp],
                               rtol=1e-12)
    bp, bq = D.Bernoulli(probs=_t([0.3])), D.Bernoulli(probs=_t([0.6]))
    np.testing.assert_allclose(D.kl_divergence(bp, bq).numpy(),
                               [0.3 * np.log(0.3 / 0.6) + 0.7 * np.log(0.7 / 0.4)], rtol=1e-6)
    with pytest.raises(NotImplementedError, match="Normal and q type Categorical"):
        D.kl_divergence(p, cp)


def test_one_hot_categorical_samples_one_hot_vectors():
    o = D.OneHotCategorical(probs=_t([0.2, 0.8]))
    s = o.sample((6,))
    assert s.shape == (6, 2) and (s.numpy().sum(axis=1) == 1).all()
    np.testing.assert_allclose(o.log_prob(s).numpy(), np.log(np.where(s.numpy()[:, 1] == 1, 0.8, 0.2)))


def test_agrees_with_torch_distributions_when_installed():
    torch = pytest.importorskip("torch")
    td = torch.distributions
    x = np.array([[0.0, 0.1, -3.0]])
    pairs = [
        (D.Normal(_t(LOC), _t(SCALE)).log_prob(_t(x)), td.Normal(torch.tensor(LOC), torch.tensor(SCALE)).log_prob(torch.tensor(x))),
        (D.Categorical(logits=_t(LOGITS)).entropy(), td.Categorical(logits=torch.tensor(LOGITS)).entropy()),
        (D.Categorical(logits=_t(LOGITS)).log_prob(gg.tensor([3, 0])),
         td.Categorical(logits=torch.tensor(LOGITS)).log_prob(torch.tensor([3, 0]))),
        (D.Bernoulli(logits=_t([0.3, -2.0])).log_prob(_t([1.0, 0.0])),
         td.Bernoulli(logits=torch.tensor([0.3, -2.0], dtype=torch.float64)).log_prob(
             torch.tensor([1.0, 0.0], dtype=torch.float64))),
        (D.kl_divergence(D.Normal(_t(LOC), _t(SCALE)), D.Normal(_t([0.0, 1.0, 1.0]), _t([2.0, 1.0, 0.5]))),
         td.kl_divergence(td.Normal(torch.tensor(LOC), torch.tensor(SCALE)),
                          td.Normal(torch.tensor([0.0, 1.0, 1.0], dtype=torch.float64),
                                    torch.tensor([2.0, 1.0, 0.5], dtype=torch.float64)))),
    ]
    for got, want in pairs:
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-10, atol=1e-12)
