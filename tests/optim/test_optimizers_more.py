"""Adamax, NAdam, RAdam, Rprop, ASGD beyond their PyTorch trajectories (test_optim_oracle.py):
state_dict round trips, argument errors, training a model, and the torch facade names."""
import numpy as np
import pytest

import graphgrad as gg
import graphgrad.compat.torch as torch

MAKERS = {
    "Adamax": lambda p: gg.optim.Adamax(p, lr=0.01),
    "NAdam": lambda p: gg.optim.NAdam(p, lr=0.01, weight_decay=0.01),
    "RAdam": lambda p: gg.optim.RAdam(p, lr=0.01),
    "Rprop": lambda p: gg.optim.Rprop(p, lr=0.01),
    "ASGD": lambda p: gg.optim.ASGD(p, lr=0.01, t0=2),
}


def _problem(seed=0):
    rng = np.random.default_rng(seed)
    x = gg.tensor(rng.normal(size=(32, 4)))
    y = gg.tensor(rng.normal(size=(32, 1)))
    gg.manual_seed(seed)
    return gg.nn.Linear(4, 1).to(gg.float64), x, y


@pytest.mark.parametrize("name", list(MAKERS))
def test_training_lowers_the_loss_and_state_round_trips(name):
    model, x, y = _problem()
    opt = MAKERS[name](model.parameters())

    def step(model, opt):
        opt.zero_grad()
        loss = ((model(x) - y) ** 2).mean()
        loss.backward()
        opt.step()
        return loss.item()

    first = step(model, opt)
    for _ in range(30):
        last = step(model, opt)
    assert last < first
    twin, _, _ = _problem()
    twin.load_state_dict(model.state_dict())
    twin_opt = MAKERS[name](twin.parameters())
    twin_opt.load_state_dict(opt.state_dict())
    for _ in range(3):
        step(model, opt), step(twin, twin_opt)
    for a, b in zip(model.parameters(), twin.parameters()):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-12)


def test_bad_hyperparameters_are_named():
    params = [gg.nn.Parameter(gg.zeros(2))]
    with pytest.raises(ValueError, match="Adamax: invalid beta"):
        gg.optim.Adamax(params, betas=(1.0, 0.9))
    with pytest.raises(ValueError, match="Rprop: invalid etas"):
        gg.optim.Rprop(params, etas=(1.5, 1.2))
    with pytest.raises(ValueError, match="NAdam"):
        gg.optim.NAdam(params, momentum_decay=-1.0)


def test_torch_facade_names():
    for name in ("Adamax", "NAdam", "RAdam", "Rprop", "ASGD"):
        assert getattr(torch.optim, name) is getattr(gg.optim, name)
    assert torch.optim.LBFGS is gg.optim.LBFGS


@pytest.mark.parametrize("case", ["lbfgs", "lbfgs_defaults"])
def test_lbfgs_matches_pytorch(case):
    from tests.oracle.generate_optim import CORPUS, LBFGS_CASES, lbfgs_problem

    want = np.load(CORPUS)[f"lbfgs/{case}/traj"]
    a, b, w0 = lbfgs_problem()
    w = gg.nn.Parameter(gg.tensor(w0))
    opt = gg.optim.LBFGS([w], **LBFGS_CASES[case])
    at, bt = gg.tensor(a), gg.tensor(b)
    for step in range(3):
        def closure():
            opt.zero_grad()
            loss = ((at @ w - bt) ** 2).mean() + 0.01 * (w ** 4).sum()
            loss.backward()
            return loss
        opt.step(closure)
        np.testing.assert_allclose(w.numpy(), want[step], rtol=1e-9, atol=1e-12)


def test_lbfgs_rules():
    params = [gg.nn.Parameter(gg.zeros(2))]
    with pytest.raises(ValueError, match="strong_wolfe"):
        gg.optim.LBFGS(params, line_search_fn="strong_wolfe")
    with pytest.raises(ValueError, match="closure"):
        gg.optim.LBFGS(params).step()
