"""Learning-rate schedules (gg.optim.StepLR ... ReduceLROnPlateau): each lr sequence against its formula
computed by hand with NumPy, chaining, closed-form jumps, and state_dict round trips."""
from __future__ import annotations

import math

import numpy as np
import pytest

import graphgrad as gg

N = 30
LRS = [0.1, 0.02]


def make_opt(kind="SGD", lrs=LRS, **kw):
    groups = [{"params": [gg.nn.Parameter(gg.zeros(2))], "lr": lr} for lr in lrs]
    kw = kw or ({"momentum": 0.9} if kind == "SGD" else {})
    return getattr(gg.optim, kind)(groups, **kw)


def run(opt, sched, steps=N, metrics=None):
    """The lr of each group right after construction and after each of ``steps - 1`` steps."""
    hist = [[g["lr"] for g in opt.param_groups]]
    for t in range(1, steps):
        opt.step()
        sched.step() if metrics is None else sched.step(metrics[t - 1])
        hist.append([g["lr"] for g in opt.param_groups])
        assert sched.get_last_lr() == hist[-1]
    return np.array(hist)


def expected(fn, lrs=LRS, steps=N):
    return np.array([[fn(base, t) for base in lrs] for t in range(steps)])


def cosine(base, t, T, lo=0.0):
    return lo + (base - lo) * (1 + math.cos(math.pi * t / T)) / 2


CASES = {
    "StepLR": (lambda o: gg.optim.StepLR(o, step_size=7, gamma=0.5), lambda b, t: b * 0.5 ** (t // 7)),
    "MultiStepLR": (lambda o: gg.optim.MultiStepLR(o, [5, 12, 12, 20], gamma=0.3),
                    lambda b, t: b * 0.3 ** sum(m <= t for m in [5, 12, 12, 20])),
    "ExponentialLR": (lambda o: gg.optim.ExponentialLR(o, gamma=0.9), lambda b, t: b * 0.9 ** t),
    "CosineAnnealingLR": (lambda o: gg.optim.CosineAnnealingLR(o, T_max=10, eta_min=1e-3),
                          lambda b, t: cosine(b, t, 10, 1e-3)),  # past T_max the cosine continues
    "LinearWarmup": (lambda o: gg.optim.LinearWarmup(o, warmup_steps=8, start_factor=0.25),
                     lambda b, t: b * (0.25 + 0.75 * min(t, 8) / 8)),
    "LinearWarmup+Cosine": (lambda o: gg.optim.LinearWarmup(o, 5, 0.1, after=gg.optim.CosineAnnealingLR(o, T_max=20)),
                            lambda b, t: b * (0.1 + 0.9 * t / 5) if t < 5 else cosine(b, t - 5, 20)),
    "LinearWarmup+StepLR": (lambda o: gg.optim.LinearWarmup(o, 4, 0.5, after=gg.optim.StepLR(o, 3, 0.5)),
                            lambda b, t: b * (0.5 + 0.5 * t / 4) if t < 4 else b * 0.5 ** ((t - 4) // 3)),
}


@pytest.mark.parametrize("name", list(CASES))
def test_lr_sequence_matches_formula(name):
    build, formula = CASES[name]
    opt = make_opt()
    got = run(opt, build(opt))
    np.testing.assert_allclose(got, expected(formula), rtol=1e-10, atol=1e-14)


def onecycle_reference(max_lr, n, pct=0.3, div=25.0, final_div=1e4, lo_m=0.85, hi_m=0.95):
    """The 1cycle lr and momentum at steps 0..n-1 (cos annealing, two phases), by hand."""
    def anneal(a, b, x):
        return b + (a - b) / 2 * (1 + math.cos(math.pi * x))
    init, end1 = max_lr / div, pct * n - 1
    lrs, moms = [], []
    for t in range(n):
        if t <= end1:
            x = t / end1
            lrs.append(anneal(init, max_lr, x)); moms.append(anneal(hi_m, lo_m, x))
        else:
            x = (t - end1) / (n - 1 - end1)
            lrs.append(anneal(max_lr, init / final_div, x)); moms.append(anneal(lo_m, hi_m, x))
    return np.array(lrs), np.array(moms)


@pytest.mark.parametrize("kind", ["SGD", "Adam"])
def test_onecycle_cycles_lr_and_momentum(kind):
    opt = make_opt(kind)
    sched = gg.optim.OneCycleLR(opt, max_lr=[1.0, 0.5], total_steps=N)
    moms = []
    hist = [[g["lr"] for g in opt.param_groups]]
    moms.append([g["betas"][0] if kind == "Adam" else g["momentum"] for g in opt.param_groups])
    for _ in range(N - 1):
        opt.step(); sched.step()
        hist.append([g["lr"] for g in opt.param_groups])
        moms.append([g["betas"][0] if kind == "Adam" else g["momentum"] for g in opt.param_groups])
    for i, peak in enumerate([1.0, 0.5]):
        ref_lr, ref_m = onecycle_reference(peak, N)
        np.testing.assert_allclose(np.array(hist)[:, i], ref_lr, rtol=1e-12)
        np.testing.assert_allclose(np.array(moms)[:, i], ref_m, rtol=1e-12)
    assert hist[0][0] == pytest.approx(1.0 / 25) and hist[-1][0] == pytest.approx(1.0 / 25 / 1e4)
    opt.step(); sched.step()  # step N: still allowed (PyTorch), one more is not
    with pytest.raises(ValueError, match="total_steps"):
        sched.step()


def test_onecycle_needs_momentum_to_cycle():
    opt = make_opt("Adagrad", lrs=[0.1], lr=0.1)
    with pytest.raises(ValueError, match="momentum"):
        gg.optim.OneCycleLR(opt, max_lr=1.0, total_steps=10)
    gg.optim.OneCycleLR(opt, max_lr=1.0, total_steps=10, cycle_momentum=False)
    with pytest.raises(ValueError, match="total_steps"):
        gg.optim.OneCycleLR(make_opt(), max_lr=1.0)


def test_reduce_on_plateau_min_rel_with_cooldown_and_min_lr():
    opt = make_opt()
    sched = gg.optim.ReduceLROnPlateau(opt, factor=0.5, patience=2, cooldown=1, min_lr=[0.03, 0.0])
    metrics = [1.0, 0.9, 0.9, 0.9, 0.9, 0.9, 0.9, 0.9, 0.9, 0.9, 0.9]
    got = run(opt, sched, steps=len(metrics) + 1, metrics=metrics)
    # bad steps: 0.9 at steps 3, 4, 5 -> reduce at step 5 (patience 2), cooldown 1 swallows step 6,
    # then 7, 8, 9 are bad -> reduce at step 9 (group 0 is floored at min_lr 0.03)
    lr0 = [0.1] * 5 + [0.05] * 4 + [0.03] * 3
    lr1 = [0.02] * 5 + [0.01] * 4 + [0.005] * 3
    np.testing.assert_allclose(got, np.array([lr0, lr1]).T)


def test_reduce_on_plateau_max_abs_threshold():
    opt = make_opt(lrs=[1.0])
    sched = gg.optim.ReduceLROnPlateau(opt, mode="max", factor=0.1, patience=0, threshold=0.05, threshold_mode="abs")
    # improvements must exceed best + 0.05: 0.5 (best), 0.52 (bad -> reduce), 0.6 (better), 0.64 (bad -> reduce)
    got = run(opt, sched, steps=5, metrics=[0.5, 0.52, 0.6, 0.64])
    np.testing.assert_allclose(got[:, 0], [1.0, 1.0, 0.1, 0.1, 0.01])
    assert sched.best == 0.6
    with pytest.raises(ValueError, match="factor"):
        gg.optim.ReduceLROnPlateau(opt, factor=1.0)


def test_reduce_on_plateau_accepts_tensor_metrics_and_round_trips():
    opt = make_opt(lrs=[1.0])
    sched = gg.optim.ReduceLROnPlateau(opt, patience=1)
    for m in [1.0, 1.0]:
        sched.step(gg.tensor(m))
    saved = sched.state_dict()
    sched2 = gg.optim.ReduceLROnPlateau(opt, patience=5)
    sched2.load_state_dict(saved)
    assert sched2.patience == 1 and sched2.num_bad_epochs == 1
    sched2.step(1.0)
    assert opt.param_groups[0]["lr"] == pytest.approx(0.1)


def test_schedulers_chain():
    opt = make_opt(lrs=[1.0])
    step = gg.optim.StepLR(opt, step_size=3, gamma=0.5)
    exp = gg.optim.ExponentialLR(opt, gamma=0.9)
    lrs = [opt.param_groups[0]["lr"]]
    for _ in range(9):
        opt.step(); step.step(); exp.step()
        lrs.append(opt.param_groups[0]["lr"])
    np.testing.assert_allclose(lrs, [0.5 ** (t // 3) * 0.9 ** t for t in range(10)], rtol=1e-12)


@pytest.mark.parametrize("name", ["StepLR", "MultiStepLR", "ExponentialLR", "CosineAnnealingLR"])
def test_step_with_epoch_uses_the_closed_form(name):
    build, formula = CASES[name]
    opt = make_opt()
    sched = build(opt)
    sched.step(17)
    np.testing.assert_allclose([g["lr"] for g in opt.param_groups], [formula(b, 17) for b in LRS], rtol=1e-12)


@pytest.mark.parametrize("name", list(CASES) + ["OneCycleLR"])
def test_state_dict_round_trip_continues_identically(name):
    build = CASES[name][0] if name != "OneCycleLR" else (lambda o: gg.optim.OneCycleLR(o, 1.0, total_steps=N))
    opt = make_opt()
    full = run(opt, build(opt))
    opt1 = make_opt()
    sched1 = build(opt1)
    run(opt1, sched1, steps=11)
    opt_state, sched_state = opt1.state_dict(), sched1.state_dict()
    opt2 = make_opt()
    sched2 = build(opt2)
    opt2.load_state_dict(opt_state)
    sched2.load_state_dict(sched_state)
    assert sched2.last_epoch == 10
    rest = run(opt2, sched2, steps=N - 10)
    np.testing.assert_allclose(rest, full[10:], rtol=1e-13)


def test_resuming_needs_initial_lr():
    with pytest.raises(KeyError, match="initial_lr"):
        gg.optim.StepLR(make_opt(), step_size=2, last_epoch=5)


def test_scheduler_rejects_non_optimizers():
    with pytest.raises(TypeError, match="not a gg.optim.Optimizer"):
        gg.optim.StepLR(object(), step_size=2)
    opt = make_opt()
    with pytest.raises(ValueError, match="warmup_steps"):
        gg.optim.LinearWarmup(opt, 0)
    with pytest.raises(ValueError, match="another optimizer"):
        gg.optim.LinearWarmup(opt, 3, after=gg.optim.StepLR(make_opt(), 2))
