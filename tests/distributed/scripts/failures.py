"""Rank script for failure handling. Argument: the scenario.

* mismatch: ranks submit different collectives; every rank must get a DistributedError naming the
  ranks and tensors (and the job goes on afterwards); rank 0 prints "ok".
* raise: rank 1 raises mid-training while rank 0 waits in a collective; the job must end quickly.
* exit: rank 1 finishes early while rank 0 waits in a collective; rank 0 must fail at once.
* timeout: rank 1 never reaches a collective; rank 0 must raise CollectiveTimeout after the timeout.
"""
import sys
import time

import numpy as np

import graphgrad as gg
import graphgrad.distributed as dist
from graphgrad.distributed import comm

scenario = sys.argv[1]
dist.init(timeout=float(sys.argv[2]) if len(sys.argv) > 2 else None)
r = dist.rank()


def expect_mismatch(fn, *needles):
    try:
        fn()
    except dist.DistributedError as error:
        text = str(error)
        for needle in needles:
            assert needle in text, f"{needle!r} not in {text}"
        return text
    raise AssertionError("no error for mismatched collectives")


if scenario == "mismatch":
    a = gg.tensor(np.ones(3), dtype=gg.float64)
    b = gg.tensor(np.ones(4 if r == 1 else 3), dtype=gg.float64)
    text = expect_mismatch(lambda: dist.all_reduce(b, name="bias.grad"), "rank 0", "rank 1", "'bias.grad'", "(4,)", "(3,)")
    if r == 0:
        print(text, flush=True)
    first, second = (a, gg.tensor(np.ones((2, 2)))) if r == 0 else (gg.tensor(np.ones((2, 2))), a)
    expect_mismatch(lambda: dist.all_reduce(first, name="w" if r == 0 else "v"), "'w'", "'v'")
    expect_mismatch(lambda: dist.all_reduce(a) if r == 0 else dist.broadcast(a, src=0), "all_reduce(sum)", "broadcast(root=0)")
    expect_mismatch(lambda: dist.all_reduce(a.astype(gg.float32 if r == 0 else gg.float64)), "float32", "float64")
    expect_mismatch(lambda: dist.all_reduce(a) if r == 0 else dist.barrier(), "barrier()")
    # a tensor on another device on one rank (a GPU array, simulated by the device name)
    real_device_of = comm.backend.device_of
    if r == 1:
        comm.backend.device_of = lambda array: "cuda:0"
    expect_mismatch(lambda: dist.all_reduce(a, name="x"), "'x' (3,) float64 on cpu", "'x' (3,) float64 on cuda:0")
    comm.backend.device_of = real_device_of
    # after the errors the ranks are in step again
    np.testing.assert_allclose(dist.all_reduce(a).numpy(), np.full(3, dist.world_size()))
    if r == 0:
        print("ok", flush=True)
elif scenario == "raise":
    w = gg.tensor(np.ones(3))
    for step in range(5):
        if r == 1 and step == 2:
            raise ValueError("boom: a bad batch on this rank")
        dist.all_reduce(w)
    time.sleep(60)  # never reached on rank 0: it is aborted while waiting in step 2's collective
elif scenario == "exit":
    if r == 1:
        sys.exit(0)  # leaves early, without an error
    dist.all_reduce(gg.tensor(np.ones(3)), name="w.grad")
elif scenario == "timeout":
    if r == 0:
        dist.all_reduce(gg.tensor(np.ones(3)), name="lonely")
    else:
        time.sleep(30)
