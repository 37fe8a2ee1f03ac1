"""The rank side of ``benchmarks/distributed.py`` (run under mpiexec, or alone as a world of one).

``allreduce``: time per all-reduce of float32 buffers of several sizes, graphgrad's
``comm.all_reduce`` (with and without the handshake check) against raw mpi4py ``Allreduce`` on the
same buffers, interleaved round by round. ``steps``: W1 and W5 training steps with
``DistributedDataParallel`` (weak scaling: every rank trains on the workload's whole batch), the
time each step waits for communication after backward, and the time the same gradient buckets take
to all-reduce on their own. Rank 0 prints one JSON line with the results.
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


def training(key: str, steps: int, rounds: int, bucket_mb: float) -> dict:
    fw = workloads.graphgrad_framework()
    fw.manual_seed(0)
    data = workloads.make_data()
    inputs, targets = data[key]
    if key == "w1":
        model, flat = workloads.mlp(gg.nn), False
        batch = (gg.tensor(inputs), gg.tensor(targets))
    else:
        length = inputs.shape[1]
        model, flat = workloads.gpt(gg.nn, gg.tensor(np.triu(np.full((length, length), -np.inf, np.float32), 1))), True
        positions = gg.tensor(np.broadcast_to(np.arange(length), inputs.shape).copy())
        batch = (gg.tensor(inputs), positions, gg.tensor(targets))
    parallel = dist.world_size() > 1
    net = dist.DistributedDataParallel(model, bucket_mb=bucket_mb) if parallel else model
    opt = gg.optim.SGD(net.parameters(), lr=0.01, momentum=0.9) if key == "w1" else gg.optim.AdamW(net.parameters(), lr=3e-4)
    step = workloads.training_step(gg.cross_entropy, net, opt, flat)
    for _ in range(3):
        step(*batch)
    step_times, waits = [], []
    for _ in range(rounds):
        comm.barrier()
        start = time.perf_counter()
        for _ in range(steps):
            step(*batch)
            if parallel:
                waits.append(net.last_stats["wait_s"])
        step_times.append((time.perf_counter() - start) / steps)
    result = {"step_s": statistics.median(step_times),
              "params_bytes": sum(p.size * p.dtype.itemsize for p in model.parameters())}
    if parallel:
        buckets = net._buckets
        result.update(buckets=len(buckets), bucket_bytes=sum(b.nbytes for b in buckets),
                      started_during_backward=net.last_stats["started_during_backward"],
                      wait_s=statistics.median(waits),
                      comm_s=statistics.median(
                          per_call(lambda: [comm.all_reduce(b.flat) for b in buckets], 0.2) for _ in range(3)))
        result["hidden_fraction"] = max(0.0, 1.0 - result["wait_s"] / result["comm_s"])
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
