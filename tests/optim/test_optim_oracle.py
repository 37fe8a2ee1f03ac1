"""gg.optim against torch.optim, without torch: the parameter trajectories and learning-rate sequences
that tests/oracle/generate_optim.py recorded from PyTorch, replayed with graphgrad."""
from __future__ import annotations

import os

import numpy as np
import pytest

import graphgrad as gg
from tests.oracle.generate_optim import (CORPUS, LR_STEPS, OPTIMIZERS, SCHEDULES, STEPS, momentum_of)

if not os.path.exists(CORPUS):
    pytest.skip("tests/oracle/optim_corpus.npz is missing: run `python tests/oracle/generate_optim.py` with "
                "PyTorch installed", allow_module_level=True)

DATA = np.load(CORPUS)


def test_corpus_has_every_case():
    for case in OPTIMIZERS:
        assert f"opt/{case}/traj0" in DATA.files, f"{case}: regenerate the corpus"
    for case in SCHEDULES:
        assert f"sched/{case}/lr" in DATA.files, f"{case}: regenerate the corpus"


@pytest.mark.parametrize("case", list(OPTIMIZERS))
def test_optimizer_trajectory_matches_torch(case):
    name, kwargs = OPTIMIZERS[case]
    n = sum(1 for k in DATA.files if k.startswith(f"opt/{case}/init"))
    params = [gg.nn.Parameter(DATA[f"opt/{case}/init{i}"]) for i in range(n)]
    grads = [DATA[f"opt/{case}/grads{i}"] for i in range(n)]
    opt = getattr(gg.optim, name)(params, **kwargs)
    for t in range(STEPS):
        for p, g in zip(params, grads):
            p.grad = gg.tensor(g[t])
        opt.step()
        for i, p in enumerate(params):
            assert p.dtype == gg.float64
            np.testing.assert_allclose(p.numpy(), DATA[f"opt/{case}/traj{i}"][t], rtol=1e-10, atol=1e-12,
                                       err_msg=f"{case}: parameter {i} after step {t + 1}")


@pytest.mark.parametrize("case", list(SCHEDULES))
def test_schedule_matches_torch(case):
    spec = SCHEDULES[case]
    opt_name, opt_kwargs, lrs = spec["opt"]
    groups = [{"params": [gg.nn.Parameter(gg.zeros(2, dtype=gg.float64))], "lr": lr} for lr in lrs]
    opt = getattr(gg.optim, opt_name)(groups, **opt_kwargs)
    sched = spec["gg"](gg, opt)
    metrics = spec.get("metrics")
    lr_hist, mom_hist = [], []
    for step in range(LR_STEPS):
        if step:
            opt.step()
            sched.step(metrics[step - 1]) if metrics is not None else sched.step()
        lr_hist.append([g["lr"] for g in opt.param_groups])
        assert sched.get_last_lr() == lr_hist[-1]
        mom_hist.append([momentum_of(g) for g in opt.param_groups])
    np.testing.assert_allclose(np.array(lr_hist), DATA[f"sched/{case}/lr"], rtol=1e-12, atol=1e-15, err_msg=case)
    if spec.get("momentum"):
        np.testing.assert_allclose(np.array(mom_hist), DATA[f"sched/{case}/momentum"], rtol=1e-12, err_msg=case)
