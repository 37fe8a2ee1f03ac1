"""The rank side of ``benchmarks/distributed.py`` (run under mpiexec, or alone as a world of one).

``allreduce``: time per all-reduce of float32 buffers of several sizes, graphgrad's
``comm.all_reduce`` (with and without the handshake check) against raw mpi4py ``Allreduce`` on the
same buffers, interleaved round by round. ``steps``: W1 and W5 training steps (weak scaling: every
rank trains on the workload's whole batch); on one rank the step time and the backward window in
which communication could overlap; on several, with ``DistributedDataParallel``, rounds alternating
steps without communication (``no_sync()``) and ordinary steps, and the time the same gradient
buckets take to all-reduce on their own. Rank 0 prints one JSON line with the results.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import time

for _name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_name, "1")

import graphgrad as gg  # noqa: E402
import graphgrad.distributed as dist  # noqa: E402
from graphgrad.backend import np  # noqa: E402
from graphgrad.core import autograd  # noqa: E402
from graphgrad.bench import workloads  # noqa: E402
from graphgrad.distributed import comm  # noqa: E402


def per_call(fn, seconds: float) -> float:
    """Seconds per call of ``fn``, over about ``seconds`` (the count agreed by all ranks)."""
    fn()
    start = time.perf_counter()
    fn()
    once = max(time.perf_counter() - start, 1e-6)
    calls = int(comm.all_reduce(np.array([max(1, min(2000, int(seconds / once)))], np.int64), "max")[0])
    comm.barrier()
    start = time.perf_counter()
    for _ in range(calls):
        fn()
    return (time.perf_counter() - start) / calls


def allreduce(sizes: list, rounds: int, seconds: float) -> list:
    world = dist.world_size()
    raw_comm = comm.require_init("benchmark").comm
    rows = []
    for nbytes in sizes:
        buf = np.ones(nbytes // 4, np.float32)
        out = np.empty_like(buf)
        ways = {"mpi4py": (lambda: raw_comm.Allreduce(buf, out)) if raw_comm is not None else (lambda: out.__setitem__(..., buf)),
                "graphgrad": lambda: comm.all_reduce(buf),
                "graphgrad_unchecked": lambda: comm.start_all_reduce(buf, check=False).wait()}
        times = {name: [] for name in ways}
        for _ in range(rounds):
            for name, fn in ways.items():
                times[name].append(per_call(fn, seconds))
        row = {"bytes": nbytes}
        for name, values in times.items():
            row[name + "_s"] = statistics.median(values)
        row["algbw_GBps"] = nbytes / row["graphgrad_s"] / 1e9
        row["busbw_GBps"] = row["algbw_GBps"] * 2 * (world - 1) / world
        row["mpi4py_busbw_GBps"] = nbytes / row["mpi4py_s"] / 1e9 * 2 * (world - 1) / world
        rows.append(row)
    return rows


def build(key: str) -> tuple:
    """The workload's model, its step's inputs, and whether the loss flattens (batch, time)."""
    fw = workloads.graphgrad_framework()
    fw.manual_seed(0)
    inputs, targets = workloads.make_data()[key]
    if key == "w1":
        return workloads.mlp(gg.nn), (gg.tensor(inputs), gg.tensor(targets)), False
    length = inputs.shape[1]
    model = workloads.gpt(gg.nn, gg.tensor(np.triu(np.full((length, length), -np.inf, np.float32), 1)))
    positions = gg.tensor(np.broadcast_to(np.arange(length), inputs.shape).copy())
    return model, (gg.tensor(inputs), positions, gg.tensor(targets)), True


def backward_window(model, step, batch, steps: int) -> float:
    """Median seconds from the first parameter gradient being complete to the end of backward: the
    part of a step during which bucketed all-reduces can overlap computation."""
    marks: dict = {}

    def ready(_param) -> None:
        if "first" not in marks:
            marks["first"] = time.perf_counter()
            autograd.queue_callback(lambda: marks.__setitem__("end", time.perf_counter()))

    removers = [p.register_post_accumulate_grad_hook(ready) for p in model.parameters() if p.requires_grad]
    windows = []
    for _ in range(steps):
        marks.clear()
        step(*batch)
        windows.append(marks["end"] - marks["first"])
    for remove in removers:
        remove()
    return statistics.median(windows)


def bucket_all_reduce(buckets: list) -> None:
    """The gradient buckets' all-reduces as DistributedDataParallel issues them: all started
    (checked, nonblocking) in bucket order, then all waited for."""
    handles = [comm.start_all_reduce(b.flat, "sum", name=f"gradient bucket {b.index}") for b in buckets]
    for handle in handles:
        handle.wait()


def timed(step, batch, steps: int, lockstep: bool = False) -> float:
    """Seconds per step; ``lockstep`` adds a barrier after each step (the ranks wait for each other
    as a collective makes them, without moving data)."""
    comm.barrier()
    start = time.perf_counter()
    for _ in range(steps):
        step(*batch)
        if lockstep:
            comm.barrier()
    return (time.perf_counter() - start) / steps


def training(key: str, steps: int, rounds: int, bucket_mb: float) -> dict:
    """Step times of workload ``key`` on this world (weak scaling: each rank the whole batch).

    On one rank: the step and its backward window. On several, with ``DistributedDataParallel``,
    rounds that alternate steps without communication (``no_sync()``: the same computation, sharing
    the machine the same way), the same in lock-step (a barrier after each step), and ordinary
    steps. Lock-step minus free-running is what waiting for the slowest rank costs; ordinary minus
    lock-step is the communication the step exposes, compared with the time the same buckets take
    to all-reduce on their own.
    """
    model, batch, flat = build(key)
    parallel = dist.world_size() > 1
    net = dist.DistributedDataParallel(model, bucket_mb=bucket_mb) if parallel else model
    opt = gg.optim.SGD(net.parameters(), lr=0.01, momentum=0.9) if key == "w1" else gg.optim.AdamW(net.parameters(), lr=3e-4)
    step = workloads.training_step(gg.cross_entropy, net, opt, flat)
    for _ in range(3):
        step(*batch)
    result = {"params_bytes": sum(p.size * p.dtype.itemsize for p in model.parameters())}
    if not parallel:
        result["step_s"] = statistics.median(timed(step, batch, steps) for _ in range(rounds))
        result["window_s"] = backward_window(model, step, batch, max(steps, 5))
        return result
    alone, local, lockstep, synced, waits, windows = [], [], [], [], [], []
    for _ in range(rounds):
        with net.no_sync():
            local.append(timed(step, batch, steps))
            lockstep.append(timed(step, batch, steps, lockstep=True))
        comm.barrier()
        start = time.perf_counter()
        for _ in range(steps):
            step(*batch)
            waits.append(net.last_stats["wait_s"])
            windows.append(net.last_stats["backward_s"])
        synced.append((time.perf_counter() - start) / steps)
        alone.append(per_call(lambda: bucket_all_reduce(net._buckets), 0.1))
    buckets = net._buckets
    result.update(step_s=statistics.median(synced), local_step_s=statistics.median(local),
                  lockstep_step_s=statistics.median(lockstep),
                  comm_s=statistics.median(alone), ddp_wait_s=statistics.median(waits),
                  ddp_window_s=statistics.median(windows), buckets=len(buckets),
                  bucket_bytes=sum(b.nbytes for b in buckets),
                  started_during_backward=net.last_stats["started_during_backward"])
    result["exposed_s"] = result["step_s"] - result["lockstep_step_s"]
    result["hidden_fraction"] = 1.0 - result["exposed_s"] / result["comm_s"]
    return result


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("part", choices=["allreduce", "steps"])
    parser.add_argument("--sizes", default="4096,65536,1048576,16777216,67108864")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=0.05)
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--workloads", default="w1,w5")
    parser.add_argument("--bucket-mb", type=float, default=25.0)
    args = parser.parse_args()
    dist.init()
    if args.part == "allreduce":
        result = {"ranks": dist.world_size(),
                  "rows": allreduce([int(s) for s in args.sizes.split(",")], args.rounds, args.seconds)}
    else:
        result = {"ranks": dist.world_size(),
                  "bucket_mb": args.bucket_mb,
                  "workloads": {key: training(key, args.steps, args.rounds, args.bucket_mb)
                                for key in args.workloads.split(",")}}
    if dist.rank() == 0:
        print("RESULT " + json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
