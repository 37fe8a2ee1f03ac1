"""torch.multiprocessing: spawn runs fn(rank, *args) in processes of their own and reports a failing one."""
from __future__ import annotations

import os

import pytest

import graphgrad.compat.torch as torch
from graphgrad.compat.torch import multiprocessing as mp


def _write_rank(rank, folder):
    x = torch.ones(2) * rank
    with open(os.path.join(folder, f"{rank}.txt"), "w") as f:
        f.write(str(float(x.sum())))


def _fail_on_one(rank):
    if rank == 1:
        raise ValueError("rank one fails")


def test_spawn_runs_each_rank(tmp_path):
    mp.spawn(_write_rank, args=(str(tmp_path),), nprocs=2)
    assert sorted(os.listdir(tmp_path)) == ["0.txt", "1.txt"]
    assert (tmp_path / "1.txt").read_text() == "2.0"


def test_spawn_names_the_failing_rank_and_its_error():
    with pytest.raises(mp.ProcessRaisedException, match="rank one fails") as caught:
        mp.spawn(_fail_on_one, nprocs=2)
    assert caught.value.error_index == 1


def test_sharing_strategy_and_the_standard_api():
    assert mp.get_sharing_strategy() in mp.get_all_sharing_strategies()
    mp.set_sharing_strategy("file_system")
    assert mp.get_sharing_strategy() == "file_system"
    with pytest.raises(ValueError, match="unknown sharing strategy"):
        mp.set_sharing_strategy("nope")
    assert mp.cpu_count() >= 1 and callable(mp.Process) and callable(mp.get_context)


def _hogwild_step(rank, model):
    opt = torch.optim.SGD(model.parameters(), lr=0.5)
    model(torch.ones(1, 2)).sum().backward()
    opt.step()


def test_hogwild_workers_update_a_shared_model():
    model = torch.nn.Linear(2, 1)
    model.share_memory()
    before = float(model.bias.detach().numpy()[0])
    ctx = mp.get_context("spawn")  # (runs forked where the platform can fork: see the module's docstring)
    workers = [ctx.Process(target=_hogwild_step, args=(rank, model)) for rank in range(2)]
    for w in workers:  # one after the other: two racing read-modify-writes could lose one
        w.start()
        w.join()
    assert all(w.exitcode == 0 for w in workers)
    assert abs(float(model.bias.detach().numpy()[0]) - (before - 1.0)) < 1e-6  # two steps of 0.5, both seen
