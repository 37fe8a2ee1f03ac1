"""The shared update rules (gg.optim.rules): each against a NumPy float64 implementation of its
published formula for 20 steps, eagerly and in a graph (same numbers), float32 kept float32, and
against torch.optim where PyTorch is installed."""
from __future__ import annotations

import numpy as np
import pytest

import graphgrad as gg
from graphgrad.optim import rules

STEPS = 20
SHAPE = (5,)


# ---- NumPy references (float64), one per published rule ---------------------------------------------
def ref_sgd(p, g, s, t, lr, weight_decay=0.0):
    g = g + weight_decay * p
    return p - lr * g, {}


def ref_momentum(p, g, s, t, lr, momentum, dampening=0.0, nesterov=False, weight_decay=0.0, first_none=False):
    g = g + weight_decay * p
    buf = g if (first_none and t == 1) else momentum * s["velocity"] + (1 - dampening) * g
    d = g + momentum * buf if nesterov else buf
    return p - lr * d, {"velocity": buf}


def ref_adam(p, g, s, t, lr, beta1=0.9, beta2=0.999, eps=1e-8, weight_decay=0.0, amsgrad=False,
             decoupled_weight_decay=False):
    if decoupled_weight_decay:
        p = p * (1 - lr * weight_decay)
    else:
        g = g + weight_decay * p
    m = beta1 * s["m"] + (1 - beta1) * g
    v = beta2 * s["v"] + (1 - beta2) * g * g
    out = {"m": m, "v": v}
    vhat = v
    if amsgrad:
        vhat = out["v_max"] = np.maximum(s["v_max"], v)
    m_hat = m / (1 - beta1 ** t)
    v_hat = vhat / (1 - beta2 ** t)
    return p - lr * m_hat / (np.sqrt(v_hat) + eps), out


def ref_rmsprop(p, g, s, t, lr, alpha=0.99, eps=1e-8, momentum=0.0, centered=False, weight_decay=0.0):
    g = g + weight_decay * p
    sq = alpha * s["square_avg"] + (1 - alpha) * g * g
    out = {"square_avg": sq}
    if centered:
        ga = out["grad_avg"] = alpha * s["grad_avg"] + (1 - alpha) * g
        avg = np.sqrt(sq - ga * ga) + eps
    else:
        avg = np.sqrt(sq) + eps
    if momentum > 0:
        buf = out["buf"] = momentum * s["buf"] + g / avg
        return p - lr * buf, out
    return p - lr * g / avg, out


REFS = {"sgd": ref_sgd, "momentum": ref_momentum, "adam": ref_adam, "rmsprop": ref_rmsprop}


# ---- calling the graphgrad rules with a state dict ------------------------------------------------------
def call_rule(rule, p, g, s, t, hyper):
    """One step of ``rules.<rule>``: (new param, new state dict)."""
    hyper = dict(hyper)
    if rule == "sgd":
        return rules.sgd(p, g, **hyper), {}
    if rule == "momentum":
        first_none = hyper.pop("first_none", False)
        velocity = None if (first_none and t == 1) else s["velocity"]
        new_p, vel = rules.momentum(p, g, velocity, **hyper)
        return new_p, {"velocity": vel}
    if rule == "adam":
        out = rules.adam(p, g, s["m"], s["v"], t, v_max=s.get("v_max"), **hyper)
        names = ["m", "v", "v_max"][:len(out) - 1]
        return out[0], dict(zip(names, out[1:]))
    if rule == "rmsprop":
        new_p, sq, buf, ga = rules.rmsprop(p, g, s["square_avg"], buf=s.get("buf"), grad_avg=s.get("grad_avg"), **hyper)
        new_s = {"square_avg": sq}
        if buf is not None:
            new_s["buf"] = buf
        if ga is not None:
            new_s["grad_avg"] = ga
        return new_p, new_s
    raise AssertionError(rule)


CASES = [
    ("sgd", dict(lr=0.1)),
    ("sgd", dict(lr=0.05, weight_decay=0.1)),
    ("momentum", dict(lr=0.05, momentum=0.9)),
    ("momentum", dict(lr=0.05, momentum=0.9, nesterov=True)),
    ("momentum", dict(lr=0.05, momentum=0.8, dampening=0.3, weight_decay=0.01)),
    ("adam", dict(lr=0.05)),
    ("adam", dict(lr=0.05, beta1=0.8, beta2=0.99, eps=1e-6, weight_decay=0.1)),
    ("adam", dict(lr=0.05, amsgrad=True)),
    ("adam", dict(lr=0.05, weight_decay=0.1, decoupled_weight_decay=True)),
    ("rmsprop", dict(lr=0.01)),
    ("rmsprop", dict(lr=0.01, alpha=0.9, momentum=0.5)),
    ("rmsprop", dict(lr=0.01, centered=True)),
    ("rmsprop", dict(lr=0.01, alpha=0.95, momentum=0.9, centered=True, weight_decay=0.05)),
]
IDS = [f"{r}-" + "-".join(f"{k}={v}" for k, v in h.items()) for r, h in CASES]


def switches(hyper):
    return {k: hyper[k] for k in ("momentum", "centered", "amsgrad") if k in hyper}


def gradient(p, t, noise):
    """A gradient that depends on the parameter (a quadratic bowl plus a fixed noise per step)."""
    return (2.0 * (p - 1.0) + noise[t - 1]).astype(p.dtype)


def reference_run(rule, hyper, p0, noise):
    """(params after each step, final state) with the NumPy reference, in float64."""
    p = p0.astype(np.float64)
    s = {k: np.full(SHAPE, v) for k, v in rules.state_for(rule, **switches(hyper)).items()}
    hist = []
    for t in range(1, STEPS + 1):
        p, s = REFS[rule](p, gradient(p, t, noise), s, t, **hyper)
        hist.append(p)
    return hist, s


def eager_run(rule, hyper, p0, noise, dtype):
    p = gg.tensor(p0, dtype=dtype)
    s = {k: gg.full(SHAPE, v, dtype=dtype) for k, v in rules.state_for(rule, **switches(hyper)).items()}
    hist = []
    with gg.no_grad():
        for t in range(1, STEPS + 1):
            g = gg.tensor(gradient(p.numpy(), t, noise))
            p, s = call_rule(rule, p, g, s, t, hyper)
            hist.append(p)
    return hist, s


def graph_run(rule, hyper, p0, noise, dtype):
    """The same rule built once in a graph (placeholders for param, gradient, state and step)."""
    graph = gg.Graph()
    names = list(rules.state_for(rule, **switches(hyper)))
    with graph.as_default():
        p_in = gg.placeholder(dtype, SHAPE, name="p")
        g_in = gg.placeholder(dtype, SHAPE, name="g")
        s_in = {k: gg.placeholder(dtype, SHAPE, name=k) for k in names}
        t_in = gg.placeholder(gg.float64, (), name="step")
        new_p, new_s = call_rule(rule, p_in, g_in, s_in, t_in, hyper)
    sess = gg.Session(graph)
    p = p0.astype(dtype)
    s = {k: np.full(SHAPE, v, dtype=dtype) for k, v in rules.state_for(rule, **switches(hyper)).items()}
    hist = []
    for t in range(1, STEPS + 1):
        feed = {p_in: p, g_in: gradient(p, t, noise)}
        if rule in rules.NEEDS_STEP:  # (feeding a placeholder that the fetches do not use fails)
            feed[t_in] = float(t)
        feed.update({s_in[k]: s[k] for k in names})
        p, s = sess.run((new_p, new_s), feed)
        hist.append(p)
    return hist, s


@pytest.fixture
def data():
    rng = np.random.default_rng(0)
    return rng.normal(size=SHAPE), rng.normal(size=(STEPS,) + SHAPE)


@pytest.mark.parametrize("rule,hyper", CASES, ids=IDS)
def test_eager_float64_matches_published_formula(rule, hyper, data):
    p0, noise = data
    ref, ref_s = reference_run(rule, hyper, p0, noise)
    got, got_s = eager_run(rule, hyper, p0, noise, gg.float64)
    for step, (a, b) in enumerate(zip(got, ref), 1):
        np.testing.assert_allclose(a.numpy(), b, rtol=1e-12, atol=1e-12, err_msg=f"{rule} step {step}")
    assert set(got_s) == set(ref_s)
    for k in ref_s:
        np.testing.assert_allclose(got_s[k].numpy(), ref_s[k], rtol=1e-12, atol=1e-12, err_msg=f"state {k}")


@pytest.mark.parametrize("rule,hyper", CASES, ids=IDS)
def test_float32_stays_float32_and_close(rule, hyper, data):
    p0, noise = data
    ref, _ = reference_run(rule, hyper, p0, noise)
    got, got_s = eager_run(rule, hyper, p0, noise, gg.float32)
    assert all(p.dtype == gg.float32 for p in got)
    assert all(v.dtype == gg.float32 for v in got_s.values())
    np.testing.assert_allclose(got[-1].numpy(), ref[-1], rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("dtype", [gg.float32, gg.float64], ids=["float32", "float64"])
@pytest.mark.parametrize("rule,hyper", CASES, ids=IDS)
def test_graph_mode_gives_the_eager_numbers(rule, hyper, data, dtype):
    p0, noise = data
    eager, eager_s = eager_run(rule, hyper, p0, noise, dtype)
    graph, graph_s = graph_run(rule, hyper, p0, noise, dtype)
    tol = 1e-6 if dtype == gg.float32 else 1e-13
    for step, (a, b) in enumerate(zip(graph, eager), 1):
        assert a.dtype == dtype
        np.testing.assert_allclose(a, b.numpy(), rtol=tol, atol=tol, err_msg=f"{rule} step {step}")
    for k in eager_s:
        assert graph_s[k].dtype == dtype
        np.testing.assert_allclose(graph_s[k], eager_s[k].numpy(), rtol=tol, atol=tol)


def test_momentum_first_step_without_velocity_is_pytorch_style(data):
    """velocity=None on the first step starts the buffer at the gradient (differs from 0 with dampening)."""
    p0, noise = data
    hyper = dict(lr=0.05, momentum=0.9, dampening=0.5, first_none=True)
    ref, _ = reference_run("momentum", hyper, p0, noise)
    got, _ = eager_run("momentum", hyper, p0, noise, gg.float64)
    np.testing.assert_allclose(got[-1].numpy(), ref[-1], rtol=1e-12)
    zero_start, _ = eager_run("momentum", dict(hyper, first_none=False), p0, noise, gg.float64)
    assert not np.allclose(zero_start[0].numpy(), got[0].numpy())


def test_tensor_hyperparameters_keep_the_parameter_dtype():
    p, g = gg.ones(3), gg.full((3,), 0.5)
    lr = gg.tensor(0.1, dtype=gg.float64)
    out = rules.sgd(p, g, lr)
    assert out.dtype == gg.float32
    np.testing.assert_allclose(out.numpy(), 0.95, rtol=1e-6)
    new_p, m, v = rules.adam(p, g, gg.zeros(3), gg.zeros(3), gg.tensor(1.0, dtype=gg.float64), lr)
    assert new_p.dtype == m.dtype == v.dtype == gg.float32
    np.testing.assert_allclose(new_p.numpy(), 0.9, rtol=1e-5)  # first Adam step moves by ~lr


def test_graph_learning_rate_placeholder():
    graph = gg.Graph()
    with graph.as_default():
        p = gg.placeholder(gg.float32, (3,))
        lr = gg.placeholder(gg.float32, ())
        new_p, _ = rules.momentum(p, p, gg.zeros(3), lr, 0.9)
    out = gg.Session(graph).run(new_p, {p: np.ones(3), lr: 0.25})
    np.testing.assert_allclose(out, 0.75)


def test_state_table():
    assert rules.state_for("sgd") == {}
    assert rules.state_for("momentum") == {"velocity": 0.0}
    assert rules.state_for("adam") == {"m": 0.0, "v": 0.0}
    assert rules.state_for("adam", amsgrad=True) == {"m": 0.0, "v": 0.0, "v_max": 0.0}
    assert rules.state_for("rmsprop") == {"square_avg": 0.0}
    assert rules.state_for("rmsprop", momentum=0.9, centered=True) == {"square_avg": 0.0, "buf": 0.0, "grad_avg": 0.0}
    assert set(rules.STATE) == set(rules.RULES) and rules.NEEDS_STEP <= set(rules.RULES)
    with pytest.raises(ValueError, match="unknown update rule"):
        rules.state_for("lion")


def test_invalid_arguments():
    p = gg.ones(2)
    with pytest.raises(ValueError, match="learning rate"):
        rules.sgd(p, p, -1.0)
    with pytest.raises(ValueError, match="Nesterov"):
        rules.momentum(p, p, gg.zeros(2), 0.1, 0.9, dampening=0.1, nesterov=True)
    with pytest.raises(ValueError, match="v_max"):
        rules.adam(p, p, gg.zeros(2), gg.zeros(2), 1, 0.1, amsgrad=True)
    with pytest.raises(ValueError, match="buf"):
        rules.rmsprop(p, p, gg.zeros(2), 0.1, momentum=0.9)


# ---- against torch.optim ------------------------------------------------------------------------------
TORCH_CASES = [
    ("sgd", dict(lr=0.05, weight_decay=0.1), "SGD", dict(lr=0.05, weight_decay=0.1)),
    ("momentum", dict(lr=0.05, momentum=0.8, dampening=0.3, first_none=True), "SGD",
     dict(lr=0.05, momentum=0.8, dampening=0.3)),
    ("momentum", dict(lr=0.05, momentum=0.9, nesterov=True, weight_decay=0.01), "SGD",
     dict(lr=0.05, momentum=0.9, nesterov=True, weight_decay=0.01)),
    ("adam", dict(lr=0.05, beta1=0.8, beta2=0.99, eps=1e-6, weight_decay=0.1, amsgrad=True), "Adam",
     dict(lr=0.05, betas=(0.8, 0.99), eps=1e-6, weight_decay=0.1, amsgrad=True)),
    ("adam", dict(lr=0.05, weight_decay=0.1, decoupled_weight_decay=True), "AdamW", dict(lr=0.05, weight_decay=0.1)),
    ("rmsprop", dict(lr=0.01, alpha=0.95, momentum=0.9, centered=True, weight_decay=0.05), "RMSprop",
     dict(lr=0.01, alpha=0.95, momentum=0.9, centered=True, weight_decay=0.05)),
]


@pytest.mark.parametrize("rule,hyper,torch_name,torch_hyper", TORCH_CASES, ids=[c[2] + "-" + c[0] for c in TORCH_CASES])
def test_matches_torch_optim(rule, hyper, torch_name, torch_hyper, data):
    torch = pytest.importorskip("torch")
    p0, noise = data
    param = torch.nn.Parameter(torch.tensor(p0, dtype=torch.float64))
    opt = getattr(torch.optim, torch_name)([param], **torch_hyper)
    for t in range(1, STEPS + 1):
        param.grad = torch.tensor(gradient(param.detach().numpy(), t, noise))
        opt.step()
    got, _ = eager_run(rule, hyper, p0, noise, gg.float64)
    np.testing.assert_allclose(got[-1].numpy(), param.detach().numpy(), rtol=1e-10, atol=1e-12)


def test_adam_epsilon_hat_is_tf1_and_keras_placement():
    import numpy as np

    p, g = gg.tensor([1.0, -2.0], dtype=gg.float64), gg.tensor([1e-6, 0.5], dtype=gg.float64)
    m = v = gg.zeros(2, dtype=gg.float64)
    lr, b1, b2, eps = 0.01, 0.9, 0.999, 1e-7
    new_p, new_m, new_v = rules.adam(p, g, m, v, 1, lr, b1, b2, eps, epsilon_hat=True)
    m1, v1 = (1 - b1) * g.numpy(), (1 - b2) * g.numpy() ** 2
    lr_t = lr * np.sqrt(1 - b2) / (1 - b1)  # TF1/Keras: lr_t * m / (sqrt(v) + eps)
    np.testing.assert_allclose(new_p.numpy(), p.numpy() - lr_t * m1 / (np.sqrt(v1) + eps), rtol=1e-12)
    opt = gg.optim.Adam([gg.nn.Parameter(gg.tensor([1.0]))], epsilon_hat=True)
    assert opt.param_groups[0]["epsilon_hat"] is True
