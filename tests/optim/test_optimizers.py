"""The eager optimizers (gg.optim.SGD, Adam, AdamW, RMSprop, Adagrad, Adadelta): each against a NumPy
float64 implementation of its published update rule for 20 steps, param groups with their own
hyperparameters, state_dict round trips, zero_grad, dtypes, convergence and argument checks."""
from __future__ import annotations

import numpy as np
import pytest

import graphgrad as gg
from graphgrad.optim import rules

STEPS = 20
SHAPES = [(3, 4), (5,)]


# ---- NumPy references: one update of one parameter; ``s`` is the state dict, ``t`` the update number ----
def ref_sgd(p, g, s, t, lr=1e-3, momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=False, maximize=False):
    g = -g if maximize else g
    g = g + weight_decay * p
    if momentum:
        s["buf"] = g.copy() if t == 1 else momentum * s["buf"] + (1 - dampening) * g
        g = g + momentum * s["buf"] if nesterov else s["buf"]
    return p - lr * g


def ref_adam(p, g, s, t, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0, amsgrad=False, maximize=False,
             decoupled=False):
    b1, b2 = betas
    g = -g if maximize else g
    if decoupled:
        p = p * (1 - lr * weight_decay)
    else:
        g = g + weight_decay * p
    s["m"] = b1 * s.get("m", 0.0) + (1 - b1) * g
    s["v"] = b2 * s.get("v", 0.0) + (1 - b2) * g * g
    v = s["v"]
    if amsgrad:
        v = s["vmax"] = np.maximum(s.get("vmax", 0.0), s["v"])
    m_hat = s["m"] / (1 - b1 ** t)
    v_hat = v / (1 - b2 ** t)
    return p - lr * m_hat / (np.sqrt(v_hat) + eps)


def ref_adamw(p, g, s, t, weight_decay=1e-2, **kw):
    return ref_adam(p, g, s, t, weight_decay=weight_decay, decoupled=True, **kw)


def ref_rmsprop(p, g, s, t, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0.0, momentum=0.0, centered=False,
                maximize=False):
    g = -g if maximize else g
    g = g + weight_decay * p
    s["sq"] = alpha * s.get("sq", 0.0) + (1 - alpha) * g * g
    if centered:
        s["ga"] = alpha * s.get("ga", 0.0) + (1 - alpha) * g
        avg = np.sqrt(s["sq"] - s["ga"] ** 2) + eps
    else:
        avg = np.sqrt(s["sq"]) + eps
    if momentum > 0:
        s["buf"] = momentum * s.get("buf", 0.0) + g / avg
        return p - lr * s["buf"]
    return p - lr * g / avg


def ref_adagrad(p, g, s, t, lr=1e-2, lr_decay=0.0, weight_decay=0.0, initial_accumulator_value=0.0, eps=1e-10,
                maximize=False):
    g = -g if maximize else g
    g = g + weight_decay * p
    clr = lr / (1 + (t - 1) * lr_decay)
    s["sum"] = s.get("sum", initial_accumulator_value) + g * g
    return p - clr * g / (np.sqrt(s["sum"]) + eps)


def ref_adadelta(p, g, s, t, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0.0, maximize=False):
    g = -g if maximize else g
    g = g + weight_decay * p
    s["sq"] = rho * s.get("sq", 0.0) + (1 - rho) * g * g
    delta = np.sqrt(s.get("acc", 0.0) + eps) / np.sqrt(s["sq"] + eps) * g
    s["acc"] = rho * s.get("acc", 0.0) + (1 - rho) * delta * delta
    return p - lr * delta


REFS = {"SGD": ref_sgd, "Adam": ref_adam, "AdamW": ref_adamw, "RMSprop": ref_rmsprop, "Adagrad": ref_adagrad,
        "Adadelta": ref_adadelta}

CASES = [
    ("SGD", dict(lr=0.1)),
    ("SGD", dict(lr=0.05, momentum=0.9)),
    ("SGD", dict(lr=0.05, momentum=0.8, dampening=0.3, weight_decay=0.01)),
    ("SGD", dict(lr=0.05, momentum=0.9, nesterov=True, weight_decay=0.1)),
    ("SGD", dict(lr=0.05, momentum=0.5, maximize=True)),
    ("Adam", dict(lr=0.02)),
    ("Adam", dict(lr=0.02, betas=(0.8, 0.99), eps=1e-6, weight_decay=0.1)),
    ("Adam", dict(lr=0.02, amsgrad=True, maximize=True)),
    ("AdamW", dict(lr=0.02)),
    ("AdamW", dict(lr=0.02, weight_decay=0.2, amsgrad=True)),
    ("RMSprop", dict(lr=0.01)),
    ("RMSprop", dict(lr=0.01, alpha=0.9, momentum=0.5)),
    ("RMSprop", dict(lr=0.01, alpha=0.95, momentum=0.9, centered=True, weight_decay=0.05)),
    ("Adagrad", dict(lr=0.1)),
    ("Adagrad", dict(lr=0.1, lr_decay=0.1, weight_decay=0.05, initial_accumulator_value=0.5, eps=1e-6)),
    ("Adadelta", dict()),
    ("Adadelta", dict(lr=0.5, rho=0.8, eps=1e-4, weight_decay=0.1, maximize=True)),
]
IDS = [f"{n}-" + "-".join(f"{k}={v}" for k, v in h.items()) for n, h in CASES]


def gradient(p, t, noise):
    """A gradient that depends on the parameter (a quadratic bowl) plus a fixed noise per step."""
    return 2.0 * (p - 0.5) + noise[t - 1]


@pytest.fixture
def data():
    rng = np.random.default_rng(1)
    inits = [rng.normal(size=s) for s in SHAPES]
    noise = [rng.normal(size=(STEPS,) + s) for s in SHAPES]
    return inits, noise


def reference(name, hyper, inits, noise, steps=STEPS):
    params = [p.copy() for p in inits]
    states = [{} for _ in params]
    hist = []
    for t in range(1, steps + 1):
        params = [REFS[name](p, gradient(p, t, n), s, t, **hyper) for p, n, s in zip(params, noise, states)]
        hist.append(params)
    return hist


def set_grads(params, t, noise):
    for p, n in zip(params, noise):
        p.grad = gg.tensor(gradient(p.numpy().astype(np.float64), t, n).astype(p.dtype))


def graphgrad_run(name, hyper, inits, noise, dtype=gg.float64, steps=STEPS, groups=None):
    params = [gg.nn.Parameter(gg.tensor(p, dtype=dtype)) for p in inits]
    opt = getattr(gg.optim, name)(params if groups is None else groups(params), **hyper)
    hist = []
    for t in range(1, steps + 1):
        set_grads(params, t, noise)
        opt.step()
        hist.append([p.numpy().copy() for p in params])
    return hist, params, opt


@pytest.mark.parametrize("name,hyper", CASES, ids=IDS)
def test_matches_published_rule_step_by_step(name, hyper, data):
    inits, noise = data
    ref = reference(name, hyper, inits, noise)
    got, params, _ = graphgrad_run(name, hyper, inits, noise)
    for t, (a, b) in enumerate(zip(got, ref), 1):
        for i, (x, y) in enumerate(zip(a, b)):
            np.testing.assert_allclose(x, y, rtol=1e-11, atol=1e-12, err_msg=f"{name} param {i} step {t}")


@pytest.mark.parametrize("name,hyper", CASES, ids=IDS)
def test_float32_stays_float32(name, hyper, data):
    inits, noise = data
    got, params, opt = graphgrad_run(name, hyper, inits, noise, dtype=gg.float32)
    ref = reference(name, hyper, inits, noise)
    for p in params:
        assert p.dtype == gg.float32
        for name, v in opt.state[p].items():
            assert name == "step" or not isinstance(v, gg.Tensor) or v.dtype == gg.float32
    for x, y in zip(got[-1], ref[-1]):
        np.testing.assert_allclose(x, y, rtol=2e-4, atol=2e-4)


def test_float64_gradient_keeps_float32_parameter():
    p = gg.nn.Parameter(gg.ones(3))
    opt = gg.optim.Adam([p], lr=0.1)
    p.grad = gg.tensor(np.ones(3))  # float64
    opt.step()
    assert p.dtype == gg.float32 and opt.state[p]["m"].dtype == gg.float32


@pytest.mark.parametrize("name", ["SGD", "Adam", "RMSprop", "Adagrad", "Adadelta"])
def test_param_groups_use_their_own_hyperparameters(name, data):
    inits, noise = data
    base = {"SGD": dict(lr=0.1, momentum=0.9), "Adam": dict(lr=0.02), "RMSprop": dict(lr=0.01),
            "Adagrad": dict(lr=0.1), "Adadelta": dict(lr=1.0)}[name]
    override = {"SGD": dict(lr=0.01, nesterov=True), "Adam": dict(lr=0.05, betas=(0.5, 0.9), amsgrad=True),
                "RMSprop": dict(momentum=0.5, centered=True), "Adagrad": dict(lr_decay=0.2),
                "Adadelta": dict(rho=0.5, weight_decay=0.1)}[name]
    got, _, opt = graphgrad_run(name, base, inits, noise, groups=lambda ps: [{"params": [ps[0]]},
                                                                            dict(params=[ps[1]], **override)])
    assert len(opt.param_groups) == 2 and opt.param_groups[1]["params"][0].shape == SHAPES[1]
    ref0 = reference(name, base, inits[:1], noise[:1])
    ref1 = reference(name, dict(base, **override), inits[1:], noise[1:])
    np.testing.assert_allclose(got[-1][0], ref0[-1][0], rtol=1e-11, atol=1e-12)
    np.testing.assert_allclose(got[-1][1], ref1[-1][0], rtol=1e-11, atol=1e-12)


def test_add_param_group_and_group_defaults(data):
    a, b = gg.nn.Parameter(gg.ones(2)), gg.nn.Parameter(gg.ones(3))
    opt = gg.optim.SGD([a], lr=0.1, momentum=0.9)
    opt.add_param_group({"params": b, "lr": 0.01})
    assert opt.param_groups[1]["momentum"] == 0.9 and opt.param_groups[1]["lr"] == 0.01
    a.grad, b.grad = gg.ones(2), gg.ones(3)
    opt.step()
    np.testing.assert_allclose(a.numpy(), 0.9, rtol=1e-6)
    np.testing.assert_allclose(b.numpy(), 0.99, rtol=1e-6)
    with pytest.raises(ValueError, match="more than one param group"):
        opt.add_param_group({"params": [a]})


@pytest.mark.parametrize("name,hyper", CASES, ids=IDS)
def test_state_dict_round_trip_continues_identically(name, hyper, data):
    inits, noise = data
    full, _, _ = graphgrad_run(name, hyper, inits, noise)
    half, params, opt = graphgrad_run(name, hyper, inits, noise, steps=STEPS // 2)
    saved = opt.state_dict()
    # a new optimizer on new parameters with the saved values, restored from the state dict
    params2 = [gg.nn.Parameter(p.numpy().copy()) for p in params]
    opt2 = getattr(gg.optim, name)(params2, lr=123.0)  # the saved hyperparameters replace these
    opt2.load_state_dict(saved)
    assert opt2.param_groups[0]["lr"] == opt.param_groups[0]["lr"]
    for t in range(STEPS // 2 + 1, STEPS + 1):
        set_grads(params2, t, noise)
        opt2.step()
    for x, p in zip(full[-1], params2):
        np.testing.assert_array_equal(p.numpy(), x)


def test_state_dict_layout_and_copies():
    a, b = gg.nn.Parameter(gg.ones(2)), gg.nn.Parameter(gg.ones(3))
    opt = gg.optim.Adam([{"params": [a]}, {"params": [b], "lr": 0.5}], lr=0.1)
    a.grad = gg.ones(2)
    opt.step()
    sd = opt.state_dict()
    assert sd["param_groups"][0]["params"] == [0] and sd["param_groups"][1]["params"] == [1]
    assert sd["param_groups"][1]["lr"] == 0.5 and sd["param_groups"][0]["betas"] == (0.9, 0.999)
    assert list(sd["state"]) == [0] and sd["state"][0]["step"] == 1  # b has no gradient yet: no state
    sd["state"][0]["exp_avg"][...] = 99.0  # (PyTorch's name of graphgrad's "m")
    assert float(opt.state[a]["m"].numpy()[0]) != 99.0
    opt2 = gg.optim.Adam([{"params": [a]}, {"params": [b]}])
    opt2.load_state_dict(sd)
    sd["state"][0]["exp_avg"][...] = 7.0
    assert float(opt2.state[a]["m"].numpy()[0]) == 99.0
    with pytest.raises(ValueError, match="param groups"):
        gg.optim.Adam([a, b]).load_state_dict(sd)


def test_zero_grad():
    p = gg.nn.Parameter(gg.ones(3))
    opt = gg.optim.SGD([p], lr=0.1)
    (p * p).sum().backward()
    g = p.grad
    opt.zero_grad(set_to_none=False)
    assert p.grad is g and np.all(p.grad.numpy() == 0)
    opt.zero_grad()
    assert p.grad is None
    opt.step()  # no gradient: nothing changes
    np.testing.assert_array_equal(p.numpy(), 1.0)


def test_step_updates_in_place_and_skips_parameters_without_grad():
    a, b = gg.nn.Parameter(gg.ones(2)), gg.nn.Parameter(gg.ones(2))
    array = a.data
    opt = gg.optim.SGD([a, b], lr=0.5, momentum=0.9)
    a.grad = gg.ones(2)
    opt.step()
    assert a.data is array and np.allclose(array, 0.5)
    np.testing.assert_array_equal(b.numpy(), 1.0)
    assert b not in opt.state


def test_closure_is_called_with_grad_enabled():
    p = gg.nn.Parameter(gg.tensor([3.0]))
    opt = gg.optim.SGD([p], lr=0.25)

    def closure():
        opt.zero_grad()
        loss = (p * p).sum()
        loss.backward()
        return loss

    with gg.no_grad():
        loss = opt.step(closure)
    assert float(loss.item()) == 9.0
    np.testing.assert_allclose(p.numpy(), [1.5])


@pytest.mark.parametrize("name,hyper", [("SGD", dict(lr=0.1)), ("SGD", dict(lr=0.05, momentum=0.9, nesterov=True)),
                                        ("Adam", dict(lr=0.1)), ("AdamW", dict(lr=0.1, weight_decay=1e-4)),
                                        ("RMSprop", dict(lr=0.02)), ("Adagrad", dict(lr=0.5)),
                                        ("Adadelta", dict(lr=1.0, rho=0.5))])
def test_converges_on_a_quadratic(name, hyper):
    target = gg.tensor([1.0, -2.0, 3.0])
    scale = gg.tensor([1.0, 3.0, 0.5])
    p = gg.nn.Parameter(gg.zeros(3))
    opt = getattr(gg.optim, name)([p], **hyper)
    for _ in range(600):
        opt.zero_grad()
        loss = (scale * (p - target) ** 2).sum()
        loss.backward()
        opt.step()
    np.testing.assert_allclose(p.numpy(), target.numpy(), atol=5e-2)


def test_repr_lists_the_groups():
    opt = gg.optim.Adam([gg.nn.Parameter(gg.ones(1))], lr=0.01)
    text = repr(opt)
    assert text.startswith("Adam (") and "Parameter Group 0" in text and "lr: 0.01" in text


def test_invalid_arguments():
    p = gg.nn.Parameter(gg.ones(2))
    with pytest.raises(ValueError, match="learning rate"):
        gg.optim.SGD([p], lr=-1.0)
    with pytest.raises(ValueError, match="Nesterov"):
        gg.optim.SGD([p], lr=0.1, nesterov=True)
    with pytest.raises(ValueError, match="beta"):
        gg.optim.Adam([p], betas=(1.0, 0.999))
    with pytest.raises(ValueError, match="empty"):
        gg.optim.Adam([])
    with pytest.raises(TypeError, match="set"):
        gg.optim.SGD({p}, lr=0.1)
    with pytest.raises(TypeError, match="single Tensor"):
        gg.optim.SGD(p, lr=0.1)
    with pytest.raises(ValueError, match="more than once"):
        gg.optim.SGD([p, p], lr=0.1)
    with pytest.raises(ValueError, match="rho"):
        gg.optim.Adadelta([p], rho=1.5)
    with pytest.raises(ValueError, match="momentum"):
        gg.optim.RMSprop([p], momentum=-0.1)
    q = gg.nn.Parameter(gg.ones(2))
    q.grad = gg.ones(3)
    with pytest.raises(gg.ShapeError, match="gradient of shape"):
        gg.optim.SGD([q], lr=0.1).step()


def test_adagrad_state_exists_from_construction():
    p = gg.nn.Parameter(gg.ones(2))
    opt = gg.optim.Adagrad([p], initial_accumulator_value=0.3)
    assert opt.state[p]["step"] == 0
    np.testing.assert_allclose(opt.state[p]["state_sum"].numpy(), 0.3, rtol=1e-6)


# ---- the new shared rules in graph mode (the same numbers as eagerly) --------------------------------------
@pytest.mark.parametrize("rule", ["adagrad", "adadelta"])
def test_new_rules_give_the_same_numbers_in_a_graph(rule):
    rng = np.random.default_rng(3)
    p0, g0 = rng.normal(size=4), rng.normal(size=4)
    s0 = np.abs(rng.normal(size=4))
    graph = gg.Graph()
    with graph.as_default():
        p, g, s = (gg.placeholder(gg.float64, (4,)) for _ in range(3))
        if rule == "adagrad":
            t = gg.placeholder(gg.float64, ())
            out = rules.adagrad(p, g, s, t, lr=0.1, lr_decay=0.5, weight_decay=0.1)
            feed = {p: p0, g: g0, s: s0, t: 3.0}
        else:
            out = rules.adadelta(p, g, s, s * 0.5, lr=0.7, rho=0.8)
            feed = {p: p0, g: g0, s: s0}
    got = gg.Session(graph).run(list(out), feed)
    with gg.no_grad():
        if rule == "adagrad":
            eager = rules.adagrad(gg.tensor(p0), gg.tensor(g0), gg.tensor(s0), 3, lr=0.1, lr_decay=0.5,
                                  weight_decay=0.1)
        else:
            eager = rules.adadelta(gg.tensor(p0), gg.tensor(g0), gg.tensor(s0), gg.tensor(s0 * 0.5), lr=0.7, rho=0.8)
    for a, b in zip(got, eager):
        np.testing.assert_allclose(a, b.numpy(), rtol=1e-13)


def test_state_table_of_new_rules():
    assert rules.state_for("adagrad") == {"state_sum": 0.0}
    assert rules.state_for("adagrad", initial_accumulator_value=0.1) == {"state_sum": 0.1}
    assert rules.state_for("adadelta") == {"square_avg": 0.0, "acc_delta": 0.0}
    assert "adagrad" in rules.NEEDS_STEP


# ---- the compiled (fused) eager step ------------------------------------------------------------------
@pytest.mark.parametrize("name,hyper", CASES, ids=IDS)
def test_fused_step_equals_op_by_op_and_updates_in_place(name, hyper, data):
    inits, noise = data
    runs = []
    for fused in (True, False):
        params = [gg.nn.Parameter(gg.tensor(p)) for p in inits]
        opt = getattr(gg.optim, name)(params, **hyper)
        opt.fused = fused
        arrays = [p.data for p in params]
        hist = []
        for t in range(1, STEPS + 1):
            set_grads(params, t, noise)
            opt.step()
            hist.append([p.numpy().copy() for p in params])
        assert all(p.data is a for p, a in zip(params, arrays))  # the parameters' arrays keep their identity
        runs.append((hist, opt))
    (fused_hist, fused_opt), (plain_hist, _) = runs
    for a, b in zip(fused_hist, plain_hist):
        for x, y in zip(a, b):
            np.testing.assert_allclose(x, y, rtol=1e-12, atol=1e-14)
    assert fused_opt.fused and fused_opt._compiled_step.trace_count == 1


def test_fused_step_follows_a_learning_rate_schedule_without_retracing(data):
    inits, noise = data
    runs = []
    for fused in (True, False):
        params = [gg.nn.Parameter(gg.tensor(p)) for p in inits]
        opt = gg.optim.SGD(params, lr=0.1, momentum=0.9)
        opt.fused = fused
        sched = gg.optim.StepLR(opt, step_size=2, gamma=0.5)
        for t in range(1, STEPS + 1):
            set_grads(params, t, noise)
            opt.step()
            sched.step()
        runs.append([p.numpy() for p in params])
        if fused:
            assert opt._compiled_step.trace_count == 1
    for x, y in zip(*runs):
        np.testing.assert_allclose(x, y, rtol=1e-12)


def test_fused_step_gives_up_when_hyperparameters_change_every_step(data):
    inits, noise = data
    params = [gg.nn.Parameter(gg.tensor(p)) for p in inits]
    opt = gg.optim.SGD(params, lr=0.1, momentum=0.9)
    ref_params = [gg.nn.Parameter(gg.tensor(p)) for p in inits]
    ref = gg.optim.SGD(ref_params, lr=0.1, momentum=0.9)
    ref.fused = False
    for t in range(1, STEPS + 1):
        for o in (opt, ref):
            o.param_groups[0]["momentum"] = 0.5 + 0.04 * t
        set_grads(params, t, noise)
        set_grads(ref_params, t, noise)
        opt.step()
        ref.step()
    assert not opt.fused  # fell back to op-by-op steps after a few compiles
    for p, r in zip(params, ref_params):
        np.testing.assert_allclose(p.numpy(), r.numpy(), rtol=1e-12)


def test_fused_step_skips_parameters_without_gradients(data):
    inits, noise = data
    params = [gg.nn.Parameter(gg.tensor(p)) for p in inits]
    opt = gg.optim.Adam(params, lr=0.05)
    frozen = params[0].numpy().copy()
    for t in range(1, 4):
        set_grads(params, t, noise)
        params[0].grad = None
        opt.step()
    np.testing.assert_array_equal(params[0].numpy(), frozen)
    assert params[0] not in opt.state and int(opt.state_dict()["state"][1]["step"]) == 3
