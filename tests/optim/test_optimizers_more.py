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


@pytest.mark.parametrize("case", ["lbfgs", "lbfgs_defaults", "lbfgs_strong_wolfe", "lbfgs_strong_wolfe_defaults"])
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


def test_lbfgs_strong_wolfe_on_rosenbrock_matches_pytorch():
    """PyTorch 2.13's losses and point after three steps (18 evaluations) from (-1.2, 1, 0.5, -0.3)."""
    x = gg.tensor([-1.2, 1.0, 0.5, -0.3], dtype="float64", requires_grad=True)
    opt = gg.optim.LBFGS([x], line_search_fn="strong_wolfe", max_iter=5, history_size=3)

    def closure():
        opt.zero_grad()
        loss = (100 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2).sum()
        loss.backward()
        return loss

    losses = [float(opt.step(closure)) for _ in range(3)]
    np.testing.assert_allclose(losses, [79.7, 3.702317960602306, 3.7017418457958513], rtol=1e-12)
    np.testing.assert_allclose(x.detach().numpy(), [-0.775913495881178, 0.6135470101654614, 0.38245988962655475,
                                                    0.1467952619039764], rtol=1e-10)
    assert opt._lbfgs["func_evals"] == 18


def test_lbfgs_rules():
    params = [gg.nn.Parameter(gg.zeros(2))]
    with pytest.raises(ValueError, match="strong_wolfe"):
        gg.optim.LBFGS(params, line_search_fn="backtracking")
    with pytest.raises(ValueError, match="closure"):
        gg.optim.LBFGS(params).step()


def test_sgd_dampening_on_plain_tensors_starts_its_velocity_at_the_gradient():
    """A plain tensor can't be assigned in the compiled step, so the step falls back to op by op; the
    failed trace had left a zero velocity behind, and dampening then scaled the first gradient."""
    for make in (lambda: gg.tensor([1.0, 2.0], requires_grad=True), lambda: gg.nn.Parameter(gg.tensor([1.0, 2.0]))):
        w = make()
        opt = gg.optim.SGD([w], lr=0.1, momentum=0.9, dampening=0.5)
        seen = []
        for _ in range(3):
            opt.zero_grad()
            (w ** 2).sum().backward()
            opt.step()
            seen.append(w.detach().numpy().copy())
        # PyTorch: v1 = g, later v = 0.9 v + 0.5 g
        np.testing.assert_allclose(seen, [[0.8, 1.6], [0.54, 1.08], [0.252, 0.504]], rtol=1e-6)


@pytest.mark.parametrize("name,kwargs,keys", [
    ("Adam", {"amsgrad": True}, ["exp_avg", "exp_avg_sq", "max_exp_avg_sq", "step"]),
    ("SGD", {"lr": 0.1, "momentum": 0.9}, ["momentum_buffer"]),
    ("RMSprop", {"momentum": 0.9, "centered": True}, ["grad_avg", "momentum_buffer", "square_avg"]),
    ("Adagrad", {}, ["step", "sum"]),
])
def test_optimizer_state_dict_carries_pytorch_state_names(name, kwargs, keys):
    """PyTorch's names in the state dict (PyTorch's keys are what checkpoints written by PyTorch carry);
    a state dict loads into a fresh optimizer, which then continues as the first would have."""
    def make():
        gg.manual_seed(0)
        net = gg.nn.Linear(2, 2)
        return net, getattr(gg.optim, name)(net.parameters(), **kwargs)

    def train(net, opt, steps):
        for _ in range(steps):
            opt.zero_grad()
            (net(gg.ones(1, 2)) ** 2).sum().backward()
            opt.step()

    net, opt = make()
    train(net, opt, 2)
    state = opt.state_dict()
    assert sorted(state["state"][0]) == keys
    net2, opt2 = make()
    net2.load_state_dict(net.state_dict())
    opt2.load_state_dict(state)
    train(net, opt, 1)
    train(net2, opt2, 1)
    np.testing.assert_allclose(net2.weight.detach().numpy(), net.weight.detach().numpy(), rtol=1e-6)


def test_sparse_adam_updates_only_the_rows_looked_up_as_pytorch():
    """PyTorch 2.13's table after three steps with Embedding(sparse=True) and SparseAdam(lr=0.1)."""
    emb = gg.nn.Embedding(5, 3, sparse=True, _weight=gg.tensor(np.arange(15.0).reshape(5, 3) / 10, dtype="float32"))
    opt = gg.optim.SparseAdam(emb.parameters(), lr=0.1)
    for rows in ([0, 2], [2, 3], [0]):
        opt.zero_grad()
        (emb(gg.tensor(rows)) ** 2).sum().backward()
        opt.step()
    np.testing.assert_allclose(emb.weight.detach().numpy(), [
        [0.0, -0.05752185, 0.019976], [0.3, 0.4, 0.5], [0.4008828, 0.50069445, 0.60056835],
        [0.8255863, 0.92558634, 1.0255864], [1.2, 1.3, 1.4]], atol=1e-6)
