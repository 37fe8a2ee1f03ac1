"""Collectives: values and gradients on 2 and 3 ranks (eager, Session graph, gg.function), and the
world of one process in-process (no MPI)."""
from __future__ import annotations

import os

import numpy as np
import pytest

import graphgrad as gg
import graphgrad.distributed as dist
from tests.distributed.launch import HERE, needs_mpi, run_ranks

SCRIPTS = os.path.join(HERE, "scripts")


@needs_mpi
@pytest.mark.parametrize("ranks", [2, 3])
def test_collective_semantics_and_gradients(ranks):
    out = run_ranks(ranks, os.path.join(SCRIPTS, "collectives.py")).stdout
    assert f"ok {ranks} ranks" in out


def test_collectives_before_init_name_the_fix(fresh_world):
    assert not dist.is_initialized()
    with pytest.raises(dist.DistributedError, match=r"call graphgrad.distributed.init\(\) first"):
        dist.all_reduce(gg.ones(3))
    with pytest.raises(dist.DistributedError, match="init"):
        dist.rank()
    with pytest.raises(dist.DistributedError, match="init"):
        dist.barrier()


def test_world_of_one_is_the_identity(fresh_world):
    dist.init()
    assert (dist.rank(), dist.world_size(), dist.local_rank(), dist.is_initialized()) == (0, 1, 0, True)
    x = gg.tensor(np.arange(6.0).reshape(3, 2), requires_grad=True)
    for op in ("sum", "mean", "max", "min"):
        np.testing.assert_array_equal(dist.all_reduce(x, op).numpy(), x.numpy())
    np.testing.assert_array_equal(dist.broadcast(x, 0).numpy(), x.numpy())
    np.testing.assert_array_equal(dist.all_gather(x).numpy(), x.numpy())
    np.testing.assert_array_equal(dist.reduce_scatter(x).numpy(), x.numpy())
    np.testing.assert_array_equal(dist.all_reduce(x, async_op=True).wait().numpy(), x.numpy())
    (dist.all_reduce(x) * 3).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.full((3, 2), 3.0))
    dist.barrier()
    assert "mpi4py" not in dist.__dict__


def test_bad_arguments_are_clear(fresh_world):
    dist.init()
    with pytest.raises(ValueError, match="op must be one of"):
        dist.all_reduce(gg.ones(2), op="prod")
    with pytest.raises(dist.DistributedError, match="root rank 3 is not in a world of 1"):
        dist.broadcast(gg.ones(2), src=3)
    with pytest.raises(gg.DTypeError, match="mean.*floating"):
        dist.all_reduce(gg.tensor([1, 2]), op="mean")
    with pytest.raises(gg.ShapeError, match="at least one dimension"):
        dist.all_gather(gg.tensor(1.0))
    with pytest.raises(ValueError, match="timeout must be positive"):
        dist.init(timeout=0)


def test_importing_graphgrad_does_not_import_mpi4py():
    import subprocess
    import sys

    code = "import sys, graphgrad, graphgrad.distributed; print('mpi4py' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"
