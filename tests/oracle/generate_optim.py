"""Write the PyTorch-agreement corpus of the optimizers and schedules (run by hand, with PyTorch):

    pip install torch==2.13.0
    python tests/oracle/generate_optim.py

Optimizers: each case of :data:`OPTIMIZERS` runs ``torch.optim.<name>(**kwargs)`` for ``STEPS`` steps on
two float64 parameters (shapes :data:`SHAPES`) with fixed per-step gradients (drawn once, stored), and
stores the parameters after every step. Schedules: each case of :data:`SCHEDULES` records the learning
rate of every param group (and the momentum/beta1 where the schedule cycles it) right after the
scheduler is built and after each of ``LR_STEPS - 1`` steps.

Keys of ``optim_corpus.npz``: ``opt/<case>/init<i>``, ``opt/<case>/grads<i>`` (STEPS, *shape),
``opt/<case>/traj<i>`` (STEPS, *shape); ``sched/<case>/lr`` (LR_STEPS, groups),
``sched/<case>/momentum`` where cycled, ``sched/<case>/metrics`` for ReduceLROnPlateau.
This file imports neither graphgrad nor (at import time) torch: tests/optim/test_optim_oracle.py reads
the case tables from here and builds the same cases with graphgrad.
"""
from __future__ import annotations

import os

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.join(HERE, "optim_corpus.npz")

STEPS = 20
LR_STEPS = 30
SHAPES = [(3, 4), (5,)]

#: case -> (optimizer class name, keyword arguments); the same names in torch.optim and gg.optim.
OPTIMIZERS = {
    "sgd": ("SGD", dict(lr=0.1)),
    "sgd_momentum": ("SGD", dict(lr=0.05, momentum=0.9)),
    "sgd_dampening": ("SGD", dict(lr=0.05, momentum=0.8, dampening=0.3)),
    "sgd_nesterov": ("SGD", dict(lr=0.05, momentum=0.9, nesterov=True)),
    "sgd_weight_decay": ("SGD", dict(lr=0.05, momentum=0.9, weight_decay=0.1)),
    "sgd_maximize": ("SGD", dict(lr=0.05, momentum=0.5, weight_decay=0.01, maximize=True)),
    "adam": ("Adam", dict(lr=0.01)),
    "adam_weight_decay": ("Adam", dict(lr=0.01, betas=(0.8, 0.99), eps=1e-6, weight_decay=0.1)),
    "adam_amsgrad": ("Adam", dict(lr=0.01, amsgrad=True)),
    "adamw": ("AdamW", dict(lr=0.01, weight_decay=0.1)),
    "adamw_amsgrad": ("AdamW", dict(lr=0.01, betas=(0.85, 0.995), weight_decay=0.05, amsgrad=True)),
    "rmsprop": ("RMSprop", dict(lr=0.01)),
    "rmsprop_centered_momentum": ("RMSprop", dict(lr=0.01, alpha=0.95, momentum=0.9, centered=True,
                                                  weight_decay=0.05)),
    "adagrad": ("Adagrad", dict(lr=0.1)),
    "adagrad_decay": ("Adagrad", dict(lr=0.1, lr_decay=0.05, weight_decay=0.1, initial_accumulator_value=0.2,
                                      eps=1e-8)),
    "adadelta": ("Adadelta", dict()),
    "adadelta_options": ("Adadelta", dict(lr=0.5, rho=0.8, eps=1e-5, weight_decay=0.1)),
    "adamax": ("Adamax", dict(lr=0.01)),
    "adamax_weight_decay": ("Adamax", dict(lr=0.02, betas=(0.8, 0.99), weight_decay=0.1, maximize=True)),
    "nadam": ("NAdam", dict(lr=0.01)),
    "nadam_decoupled": ("NAdam", dict(lr=0.01, weight_decay=0.1, momentum_decay=0.01, decoupled_weight_decay=True)),
    "nadam_l2": ("NAdam", dict(lr=0.01, betas=(0.85, 0.99), weight_decay=0.05)),
    "radam": ("RAdam", dict(lr=0.01)),
    "radam_decoupled": ("RAdam", dict(lr=0.01, betas=(0.8, 0.9), weight_decay=0.1, decoupled_weight_decay=True)),
    "rprop": ("Rprop", dict(lr=0.01)),
    "rprop_options": ("Rprop", dict(lr=0.05, etas=(0.3, 1.5), step_sizes=(1e-3, 0.2), maximize=True)),
    "asgd": ("ASGD", dict(lr=0.05)),
    "asgd_averaging": ("ASGD", dict(lr=0.05, lambd=0.01, alpha=0.5, t0=5, weight_decay=0.1)),
}

#: case -> (optimizer class name, its kwargs, [lr of each param group])
_SGD = ("SGD", dict(momentum=0.9), [0.1, 0.02])
_ADAM = ("Adam", dict(betas=(0.9, 0.999)), [0.1, 0.02])


def _warmup_torch(torch, opt, start_factor, steps, after=None):
    warm = torch.optim.lr_scheduler.LinearLR(opt, start_factor=start_factor, end_factor=1.0, total_iters=steps)
    if after is None:
        return warm
    return torch.optim.lr_scheduler.SequentialLR(opt, [warm, after(opt)], milestones=[steps])


#: case -> dict(opt=..., torch=fn(torch, opt) -> scheduler, gg=fn(gg, opt) -> scheduler,
#: momentum=True where the schedule cycles momentum, metrics=[...] for ReduceLROnPlateau)
SCHEDULES = {
    "step": dict(opt=_SGD, torch=lambda t, o: t.optim.lr_scheduler.StepLR(o, step_size=7, gamma=0.5),
                 gg=lambda g, o: g.optim.StepLR(o, step_size=7, gamma=0.5)),
    "multistep": dict(opt=_SGD, torch=lambda t, o: t.optim.lr_scheduler.MultiStepLR(o, [5, 12, 12, 20], gamma=0.3),
                      gg=lambda g, o: g.optim.MultiStepLR(o, [5, 12, 12, 20], gamma=0.3)),
    "exponential": dict(opt=_SGD, torch=lambda t, o: t.optim.lr_scheduler.ExponentialLR(o, gamma=0.9),
                        gg=lambda g, o: g.optim.ExponentialLR(o, gamma=0.9)),
    "cosine": dict(opt=_SGD, torch=lambda t, o: t.optim.lr_scheduler.CosineAnnealingLR(o, T_max=10, eta_min=1e-3),
                   gg=lambda g, o: g.optim.CosineAnnealingLR(o, T_max=10, eta_min=1e-3)),
    "onecycle_sgd": dict(opt=_SGD, momentum=True,
                         torch=lambda t, o: t.optim.lr_scheduler.OneCycleLR(o, max_lr=[1.0, 0.5], total_steps=30),
                         gg=lambda g, o: g.optim.OneCycleLR(o, max_lr=[1.0, 0.5], total_steps=30)),
    "onecycle_adam_three_phase_linear": dict(
        opt=_ADAM, momentum=True,
        torch=lambda t, o: t.optim.lr_scheduler.OneCycleLR(o, max_lr=0.3, epochs=3, steps_per_epoch=10,
                                                           pct_start=0.25, anneal_strategy="linear",
                                                           three_phase=True, div_factor=10.0),
        gg=lambda g, o: g.optim.OneCycleLR(o, max_lr=0.3, epochs=3, steps_per_epoch=10, pct_start=0.25,
                                           anneal_strategy="linear", three_phase=True, div_factor=10.0)),
    "warmup": dict(opt=_SGD, torch=lambda t, o: _warmup_torch(t, o, 0.25, 8),
                   gg=lambda g, o: g.optim.LinearWarmup(o, warmup_steps=8, start_factor=0.25)),
    "warmup_cosine": dict(
        opt=_SGD,
        torch=lambda t, o: _warmup_torch(t, o, 0.1, 5, lambda o2: t.optim.lr_scheduler.CosineAnnealingLR(o2, 20)),
        gg=lambda g, o: g.optim.LinearWarmup(o, 5, 0.1, after=g.optim.CosineAnnealingLR(o, 20))),
    "warmup_step": dict(
        opt=_SGD,
        torch=lambda t, o: _warmup_torch(t, o, 0.5, 4, lambda o2: t.optim.lr_scheduler.StepLR(o2, 3, 0.5)),
        gg=lambda g, o: g.optim.LinearWarmup(o, 4, 0.5, after=g.optim.StepLR(o, 3, 0.5))),
    "lambda": dict(opt=_SGD, torch=lambda t, o: t.optim.lr_scheduler.LambdaLR(o, [lambda e: 0.9 ** e, lambda e: 1 / (e + 1)]),
                   gg=lambda g, o: g.optim.LambdaLR(o, [lambda e: 0.9 ** e, lambda e: 1 / (e + 1)])),
    "multiplicative": dict(opt=_SGD, torch=lambda t, o: t.optim.lr_scheduler.MultiplicativeLR(o, lambda e: 0.95),
                           gg=lambda g, o: g.optim.MultiplicativeLR(o, lambda e: 0.95)),
    "constant": dict(opt=_SGD, torch=lambda t, o: t.optim.lr_scheduler.ConstantLR(o, factor=0.25, total_iters=6),
                     gg=lambda g, o: g.optim.ConstantLR(o, factor=0.25, total_iters=6)),
    "linear": dict(opt=_SGD, torch=lambda t, o: t.optim.lr_scheduler.LinearLR(o, 0.2, 0.6, total_iters=9),
                   gg=lambda g, o: g.optim.LinearLR(o, 0.2, 0.6, total_iters=9)),
    "polynomial": dict(opt=_SGD, torch=lambda t, o: t.optim.lr_scheduler.PolynomialLR(o, total_iters=12, power=2.0),
                       gg=lambda g, o: g.optim.PolynomialLR(o, total_iters=12, power=2.0)),
    "warm_restarts": dict(opt=_SGD, torch=lambda t, o: t.optim.lr_scheduler.CosineAnnealingWarmRestarts(
        o, T_0=4, T_mult=2, eta_min=0.001), gg=lambda g, o: g.optim.CosineAnnealingWarmRestarts(o, T_0=4, T_mult=2,
                                                                                                  eta_min=0.001)),
    "cyclic_triangular2": dict(opt=_SGD, momentum=True, torch=lambda t, o: t.optim.lr_scheduler.CyclicLR(
        o, 0.01, [0.1, 0.05], step_size_up=4, step_size_down=3, mode="triangular2"),
        gg=lambda g, o: g.optim.CyclicLR(o, 0.01, [0.1, 0.05], step_size_up=4, step_size_down=3, mode="triangular2")),
    "cyclic_exp_range_adam": dict(opt=_ADAM, momentum=True, torch=lambda t, o: t.optim.lr_scheduler.CyclicLR(
        o, 0.001, 0.01, step_size_up=5, mode="exp_range", gamma=0.97),
        gg=lambda g, o: g.optim.CyclicLR(o, 0.001, 0.01, step_size_up=5, mode="exp_range", gamma=0.97)),
    "sequential": dict(opt=_SGD, torch=lambda t, o: t.optim.lr_scheduler.SequentialLR(
        o, [t.optim.lr_scheduler.ConstantLR(o, 0.5, 3), t.optim.lr_scheduler.ExponentialLR(o, 0.8),
            t.optim.lr_scheduler.StepLR(o, 4, 0.5)], milestones=[5, 15]),
        gg=lambda g, o: g.optim.SequentialLR(o, [g.optim.ConstantLR(o, 0.5, 3), g.optim.ExponentialLR(o, 0.8),
                                                 g.optim.StepLR(o, 4, 0.5)], milestones=[5, 15])),
    "chained": dict(opt=_SGD, torch=lambda t, o: t.optim.lr_scheduler.ChainedScheduler(
        [t.optim.lr_scheduler.ConstantLR(o, 0.1, 4), t.optim.lr_scheduler.ExponentialLR(o, 0.9)]),
        gg=lambda g, o: g.optim.ChainedScheduler([g.optim.ConstantLR(o, 0.1, 4), g.optim.ExponentialLR(o, 0.9)])),
    "plateau_min": dict(
        opt=_SGD, metrics=[1.0, 0.9, 0.9, 0.91, 0.95, 0.9, 0.8, 0.8, 0.8, 0.8, 0.8, 0.7, 0.7, 0.7, 0.7,
                           0.7, 0.7, 0.7, 0.7, 0.7, 0.7, 0.7, 0.7, 0.7, 0.7, 0.7, 0.7, 0.7, 0.7],
        torch=lambda t, o: t.optim.lr_scheduler.ReduceLROnPlateau(o, factor=0.5, patience=2, cooldown=1,
                                                                  min_lr=[0.01, 0.004]),
        gg=lambda g, o: g.optim.ReduceLROnPlateau(o, factor=0.5, patience=2, cooldown=1, min_lr=[0.01, 0.004])),
    "plateau_max_abs": dict(
        opt=_SGD, metrics=[0.1, 0.2, 0.25, 0.26, 0.3, 0.3, 0.35, 0.35, 0.35, 0.36, 0.5, 0.5, 0.5, 0.5, 0.5,
                           0.52, 0.52, 0.55, 0.55, 0.55, 0.55, 0.55, 0.6, 0.6, 0.6, 0.6, 0.6, 0.6, 0.6],
        torch=lambda t, o: t.optim.lr_scheduler.ReduceLROnPlateau(o, mode="max", factor=0.3, patience=1,
                                                                  threshold=0.02, threshold_mode="abs"),
        gg=lambda g, o: g.optim.ReduceLROnPlateau(o, mode="max", factor=0.3, patience=1, threshold=0.02,
                                                  threshold_mode="abs")),
}


def case_data(case: str):
    """(initial parameters, per-step gradients) of an optimizer case, float64, seeded by its name."""
    rng = np.random.default_rng([ord(c) for c in case])  # stable across runs (unlike hash())
    inits = [rng.normal(size=s) for s in SHAPES]
    grads = [rng.normal(size=(STEPS,) + s) for s in SHAPES]
    return inits, grads


def momentum_of(group: dict):
    return group["betas"][0] if "betas" in group else group.get("momentum")


def run_optimizer(torch, case: str) -> dict:
    name, kwargs = OPTIMIZERS[case]
    inits, grads = case_data(case)
    params = [torch.nn.Parameter(torch.tensor(p, dtype=torch.float64)) for p in inits]
    opt = getattr(torch.optim, name)(params, **kwargs)
    traj = [[] for _ in params]
    for t in range(STEPS):
        for p, g in zip(params, grads):
            p.grad = torch.tensor(g[t])
        opt.step()
        for i, p in enumerate(params):
            traj[i].append(p.detach().numpy().copy())
    out = {}
    for i in range(len(params)):
        out[f"opt/{case}/init{i}"] = inits[i]
        out[f"opt/{case}/grads{i}"] = grads[i]
        out[f"opt/{case}/traj{i}"] = np.stack(traj[i])
    return out


def run_schedule(torch, case: str) -> dict:
    spec = SCHEDULES[case]
    opt_name, opt_kwargs, lrs = spec["opt"]
    groups = [{"params": [torch.nn.Parameter(torch.zeros(2, dtype=torch.float64))], "lr": lr} for lr in lrs]
    opt = getattr(torch.optim, opt_name)(groups, **opt_kwargs)
    sched = spec["torch"](torch, opt)
    lr_hist, mom_hist = [], []
    metrics = spec.get("metrics")
    for step in range(LR_STEPS):
        if step:
            opt.step()
            sched.step(metrics[step - 1]) if metrics is not None else sched.step()
        lr_hist.append([g["lr"] for g in opt.param_groups])
        mom_hist.append([momentum_of(g) for g in opt.param_groups])
    out = {f"sched/{case}/lr": np.array(lr_hist, dtype=np.float64)}
    if spec.get("momentum"):
        out[f"sched/{case}/momentum"] = np.array(mom_hist, dtype=np.float64)
    if metrics is not None:
        out[f"sched/{case}/metrics"] = np.array(metrics, dtype=np.float64)
    return out


#: LBFGS cases: keyword arguments; each runs 3 steps (closures) on a fixed least-squares problem with a
#: quartic penalty, recording the parameters after each step (``lbfgs/<case>/traj``).
LBFGS_CASES = {
    "lbfgs": dict(lr=0.8, max_iter=7, history_size=3),
    "lbfgs_defaults": dict(),
    "lbfgs_strong_wolfe": dict(line_search_fn="strong_wolfe", max_iter=5, history_size=3),
    "lbfgs_strong_wolfe_defaults": dict(line_search_fn="strong_wolfe"),
}


def lbfgs_problem():
    rng = np.random.default_rng(7)
    return rng.normal(size=(20, 5)), rng.normal(size=20), rng.normal(size=5)


def run_lbfgs(torch, case: str) -> dict:
    a, b, w0 = lbfgs_problem()
    w = torch.nn.Parameter(torch.tensor(w0))
    opt = torch.optim.LBFGS([w], **LBFGS_CASES[case])
    at, bt = torch.tensor(a), torch.tensor(b)
    traj = []
    for _ in range(3):
        def closure():
            opt.zero_grad()
            loss = ((at @ w - bt) ** 2).mean() + 0.01 * (w ** 4).sum()
            loss.backward()
            return loss
        opt.step(closure)
        traj.append(w.detach().numpy().copy())
    return {f"lbfgs/{case}/traj": np.stack(traj)}


def main() -> None:
    import warnings

    import torch

    warnings.simplefilter("ignore")  # (schedulers stepped without a real training step warn)
    arrays = {"torch_version": np.array(torch.__version__)}
    for case in OPTIMIZERS:
        arrays.update(run_optimizer(torch, case))
    for case in SCHEDULES:
        arrays.update(run_schedule(torch, case))
    for case in LBFGS_CASES:
        arrays.update(run_lbfgs(torch, case))
    np.savez_compressed(CORPUS, **arrays)
    print(f"wrote {CORPUS}: {len(OPTIMIZERS)} optimizer cases, {len(SCHEDULES)} schedule cases "
          f"(torch {torch.__version__})")


if __name__ == "__main__":
    main()
