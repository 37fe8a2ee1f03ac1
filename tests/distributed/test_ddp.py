"""DistributedDataParallel: N steps on 2 and 3 ranks equal one process on the whole batch; a world of
one behaves as the bare module."""
from __future__ import annotations

import os

import numpy as np
import pytest

import graphgrad as gg
import graphgrad.distributed as dist
from tests.distributed.launch import HERE, needs_mpi, run_ranks


@needs_mpi
@pytest.mark.parametrize("ranks", [2, 3])
def test_data_parallel_training_equals_one_process_on_the_whole_batch(ranks):
    out = run_ranks(ranks, os.path.join(HERE, "scripts", "ddp_training.py")).stdout
    assert f"ok {ranks} ranks" in out


@pytest.fixture
def world_of_one(fresh_world):
    dist.init()
    return fresh_world


def test_a_world_of_one_trains_like_the_bare_module(world_of_one):
    gg.manual_seed(0)
    net = gg.nn.Sequential(gg.nn.Linear(3, 4), gg.nn.Tanh(), gg.nn.Linear(4, 1))
    twin = gg.nn.Sequential(gg.nn.Linear(3, 4), gg.nn.Tanh(), gg.nn.Linear(4, 1))
    twin.load_state_dict(net.state_dict())
    model = dist.DistributedDataParallel(net)
    assert list(model.state_dict()) == ["module." + k for k in net.state_dict()]
    x, y = gg.randn(8, 3), gg.randn(8, 1)
    for m in (model, twin):
        opt = gg.optim.SGD(m.parameters(), lr=0.1)
        for _ in range(3):
            opt.zero_grad()
            ((m(x) - y) ** 2).mean().backward()
            opt.step()
    for p, q in zip(net.parameters(), twin.parameters()):
        np.testing.assert_array_equal(p.numpy(), q.numpy())
    with model.no_sync():
        ((model(x) - y) ** 2).mean().backward()


def test_wrapping_needs_init_and_a_module(fresh_world):
    with pytest.raises(dist.DistributedError, match=r"init\(\) first"):
        dist.DistributedDataParallel(gg.nn.Linear(2, 2))
    dist.init()
    with pytest.raises(TypeError, match="wraps an nn.Module"):
        dist.DistributedDataParallel(lambda x: x)
    with pytest.raises(ValueError, match="bucket_mb must be positive"):
        dist.DistributedDataParallel(gg.nn.Linear(2, 2), bucket_mb=0)


def test_the_example_trains_on_one_process(world_of_one):
    import importlib.util

    path = os.path.join(os.path.dirname(os.path.dirname(HERE)), "examples", "distributed_digits.py")
    spec = importlib.util.spec_from_file_location("distributed_digits", path)
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    assert example.main(epochs=2, verbose=False) > 0.85
