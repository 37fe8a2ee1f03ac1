"""The schedules of optim/schedule_more.py beyond the PyTorch-trajectory cases of test_optim_oracle.py:
state_dict round trips, fractional epochs, argument errors, and the torch facade names."""
import math

import pytest

import graphgrad as gg
import graphgrad.compat.torch as torch


def _sgd(momentum=0.9):
    return gg.optim.SGD([gg.nn.Parameter(gg.zeros(2))], lr=0.1, momentum=momentum)


MAKERS = {
    "LambdaLR": lambda o: gg.optim.LambdaLR(o, lambda e: 0.9 ** e),
    "MultiplicativeLR": lambda o: gg.optim.MultiplicativeLR(o, lambda e: 0.95),
    "ConstantLR": lambda o: gg.optim.ConstantLR(o, 0.5, 4),
    "LinearLR": lambda o: gg.optim.LinearLR(o, 0.1, 1.0, 6),
    "PolynomialLR": lambda o: gg.optim.PolynomialLR(o, 8, 1.5),
    "CosineAnnealingWarmRestarts": lambda o: gg.optim.CosineAnnealingWarmRestarts(o, 3, 2),
    "CyclicLR": lambda o: gg.optim.CyclicLR(o, 0.01, 0.1, step_size_up=3),
    "SequentialLR": lambda o: gg.optim.SequentialLR(o, [gg.optim.ConstantLR(o, 0.5, 2), gg.optim.ExponentialLR(o, 0.9)],
                                                    milestones=[3]),
    "ChainedScheduler": lambda o: gg.optim.ChainedScheduler([gg.optim.ConstantLR(o, 0.5, 2),
                                                             gg.optim.ExponentialLR(o, 0.9)]),
}


@pytest.mark.parametrize("name", list(MAKERS))
def test_state_dict_round_trip_resumes_the_same_schedule(name):
    opt, other = _sgd(), _sgd()
    first, second = MAKERS[name](opt), MAKERS[name](other)
    for _ in range(5):
        first.step()
    second.load_state_dict(first.state_dict())
    other.load_state_dict(opt.state_dict())
    for _ in range(6):
        first.step(), second.step()
        assert second.get_last_lr() == pytest.approx(first.get_last_lr())
        assert other.param_groups[0]["lr"] == pytest.approx(opt.param_groups[0]["lr"])


def test_warm_restarts_take_fractional_epochs():
    opt = _sgd()
    sched = gg.optim.CosineAnnealingWarmRestarts(opt, T_0=2, T_mult=2, eta_min=0.0)
    sched.step(0.5)
    assert opt.param_groups[0]["lr"] == pytest.approx(0.1 * (1 + math.cos(math.pi * 0.25)) / 2)
    sched.step(2.5)  # the second period, 4 long, half an epoch in
    assert sched.T_i == 4 and opt.param_groups[0]["lr"] == pytest.approx(0.1 * (1 + math.cos(math.pi * 0.5 / 4)) / 2)


def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match="ConstantLR: factor"):
        gg.optim.ConstantLR(_sgd(), factor=2.0)
    with pytest.raises(ValueError, match="CyclicLR: optimizer must support momentum"):
        gg.optim.CyclicLR(gg.optim.Adagrad([gg.nn.Parameter(gg.zeros(2))], lr=0.1), 0.01, 0.1)
    with pytest.raises(ValueError, match="SequentialLR: expects 1 milestones"):
        opt = _sgd()
        gg.optim.SequentialLR(opt, [gg.optim.ConstantLR(opt), gg.optim.StepLR(opt, 2)], milestones=[])
    with pytest.raises(TypeError, match="LambdaLR: lr_lambda must be a function"):
        gg.optim.LambdaLR(_sgd(), 0.5)


def test_torch_facade_names():
    for name in ("LambdaLR", "MultiplicativeLR", "ConstantLR", "LinearLR", "PolynomialLR", "CyclicLR",
                 "CosineAnnealingWarmRestarts", "SequentialLR", "ChainedScheduler", "_LRScheduler", "LRScheduler"):
        assert hasattr(torch.optim.lr_scheduler, name), name
