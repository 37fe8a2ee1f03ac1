"""Distributed training benchmark: all-reduce bandwidth and latency, and data-parallel W1/W5 steps.

Starts the ranks itself (``benchmarks/distributed_ranks.py`` under the MPI launcher) and prints:

1. all-reduce of float32 buffers from 4 KB to 64 MB on each ``--ranks`` count: time per call of
   graphgrad's ``comm.all_reduce`` (checked: with the handshake that catches mismatched
   collectives; and unchecked) against raw mpi4py ``Allreduce`` on the same buffers, interleaved;
   algorithm bandwidth (bytes / time) and bus bandwidth (x 2(N-1)/N, what each link carries);
2. W1 (MLP) and W5 (GPT) training steps on 1 rank and with ``DistributedDataParallel`` on each
   ``--ranks`` count (weak scaling: every rank trains on the workload's whole batch, so the ideal
   N-rank step equals the 1-rank step), for the default 25 MB buckets and for 0.25 MB buckets that
   start communicating during backward. Each round alternates steps without communication
   (``no_sync()``: the same computation, sharing the machine the same way), the same in lock-step
   (a barrier after each step: the ranks wait for each other as a collective makes them, without
   moving data) and ordinary steps:

   * efficiency = 1-rank step / N-rank step, split into what sharing the machine costs
     (1-rank step / free-running no-comm step), what waiting for the slowest rank costs (free /
     lock-step) and what communication costs (lock-step / N-rank step);
   * exposed communication = N-rank step - lock-step step; ``comm`` = the same buckets all-reduced
     on their own; hidden by overlap = (lock-step step + comm - step) / comm;
   * DistributedDataParallel's own ``last_stats``: the wait after backward;
   * on 1 rank, the backward window: from the first complete gradient to the end of backward,
     the time communication could overlap (``benchmarks/scaling_model.py`` uses it).

Each rank uses one BLAS thread (this machine has 2 cores, shared); timings are medians of
``--rounds`` interleaved rounds and noisy.

    python benchmarks/distributed.py [--ranks 2[,3,4]] [--repeat 3] [--quick] [--json out.json]
    python benchmarks/distributed.py --merge run1.json run2.json ...   # medians of saved runs
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
RANKS_SCRIPT = os.path.join(HERE, "distributed_ranks.py")


def run(ranks: int, *args: str) -> dict:
    """Run the rank script on ``ranks`` processes (a plain process for one) and return rank 0's result."""
    from graphgrad.distributed.run import command

    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1",
               PYTHONPATH=os.path.dirname(HERE) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    line = command(ranks, [RANKS_SCRIPT, *args]) if ranks > 1 else [sys.executable, RANKS_SCRIPT, *args]
    done = subprocess.run(line, capture_output=True, text=True, env=env, timeout=1800)
    results = [x for x in done.stdout.splitlines() if x.startswith("RESULT ")]
    if done.returncode != 0 or not results:
        raise SystemExit(f"{' '.join(line)} failed ({done.returncode}):\n{done.stdout}\n{done.stderr}")
    return json.loads(results[-1][len("RESULT "):])


def _size(nbytes: int) -> str:
    return f"{nbytes / 2 ** 20:g} MB" if nbytes >= 2 ** 20 else f"{nbytes / 2 ** 10:g} KB"


def allreduce_table(result: dict) -> str:
    lines = [f"all-reduce, {result['ranks']} ranks (float32; time per call, median)",
             f"{'size':>8} {'mpi4py':>10} {'graphgrad':>10} {'unchecked':>10} {'ratio':>6} {'algbw GB/s':>11} "
             f"{'busbw GB/s':>11} {'mpi4py busbw':>13}"]
    for row in result["rows"]:
        lines.append(f"{_size(row['bytes']):>8} {row['mpi4py_s'] * 1e6:>8.1f}us {row['graphgrad_s'] * 1e6:>8.1f}us "
                     f"{row['graphgrad_unchecked_s'] * 1e6:>8.1f}us {row['graphgrad_s'] / row['mpi4py_s']:>6.2f} "
                     f"{row['algbw_GBps']:>11.2f} {row['busbw_GBps']:>11.2f} {row['mpi4py_busbw_GBps']:>13.2f}")
    return "\n".join(lines)


def steps_table(single: dict, parallel: list) -> str:
    lines = ["data-parallel training steps (weak scaling: each rank the whole workload batch; ms, medians;",
             "efficiency = 1-rank step / step = share x sync x comm)",
             f"{'workload':>8} {'ranks':>5} {'bucket':>7} {'buckets':>7} {'step':>7} {'free':>7} {'lockstep':>8} "
             f"{'eff.':>5} {'share':>5} {'sync':>5} {'comm':>5} {'comm ms':>7} {'exposed':>7} {'hidden':>6} "
             f"{'DDP wait':>8}"]
    for key, one in single["workloads"].items():
        lines.append(f"{key:>8} {1:>5} {'-':>7} {'-':>7} {one['step_s'] * 1e3:>7.2f}   backward window "
                     f"{one['window_s'] * 1e3:.2f} ms ({one['window_s'] / one['step_s']:.0%} of the step)")
        for result in parallel:
            w = result["workloads"][key]
            lines.append(f"{key:>8} {result['ranks']:>5} {result['bucket_mb']:>5g}MB {w['buckets']:>7} "
                         f"{w['step_s'] * 1e3:>7.2f} {w['local_step_s'] * 1e3:>7.2f} {w['lockstep_step_s'] * 1e3:>8.2f} "
                         f"{one['step_s'] / w['step_s']:>5.2f} {one['step_s'] / w['local_step_s']:>5.2f} "
                         f"{w['local_step_s'] / w['lockstep_step_s']:>5.2f} {w['lockstep_step_s'] / w['step_s']:>5.2f} "
                         f"{w['comm_s'] * 1e3:>7.2f} {w['exposed_s'] * 1e3:>7.2f} {w['hidden_fraction']:>6.0%} "
                         f"{w['ddp_wait_s'] * 1e3:>8.2f}")
    return "\n".join(lines)


def median_of(results: list):
    """The median of each number across results of the same structure (several runs of this script)."""
    first = results[0]
    if isinstance(first, dict):
        return {k: median_of([r[k] for r in results]) for k in first}
    if isinstance(first, list):
        return [median_of(list(parts)) for parts in zip(*results)]
    if isinstance(first, (int, float)) and not isinstance(first, bool) and len(set(results)) > 1:
        return statistics.median(results)
    return first


def rederive(results: dict) -> dict:
    """Recompute the quantities derived from times (after taking medians of the times)."""
    for table in results["allreduce"]:
        n = table["ranks"]
        for row in table["rows"]:
            row["algbw_GBps"] = row["bytes"] / row["graphgrad_s"] / 1e9
            row["busbw_GBps"] = row["algbw_GBps"] * 2 * (n - 1) / n
            row["mpi4py_busbw_GBps"] = row["bytes"] / row["mpi4py_s"] / 1e9 * 2 * (n - 1) / n
    for result in results["parallel"]:
        for w in result["workloads"].values():
            w["exposed_s"] = w["step_s"] - w["lockstep_step_s"]
            w["hidden_fraction"] = 1.0 - w["exposed_s"] / w["comm_s"]
    return results


def measure(counts: list, quick: bool, rounds: int) -> dict:
    sizes = "4096,1048576" if quick else "4096,65536,1048576,16777216,67108864"
    steps = ["--rounds", str(rounds), "--steps", "2" if quick else "10"]
    if quick:
        steps += ["--workloads", "w1"]
    return {"allreduce": [run(n, "allreduce", "--sizes", sizes, "--rounds", str(rounds),
                              "--seconds", "0.01" if quick else "0.05") for n in counts],
            "single": run(1, "steps", *steps),
            "parallel": [run(n, "steps", *steps, "--bucket-mb", str(mb)) for n in counts for mb in (25.0, 0.25)]}


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ranks", default="2", help="rank counts, comma-separated (e.g. 2,3,4)")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="fewer sizes, steps and rounds (a smoke run)")
    parser.add_argument("--repeat", type=int, default=1, help="run everything this many times; print the medians")
    parser.add_argument("--merge", nargs="+", metavar="JSON", help="print the medians of these result files instead")
    parser.add_argument("--json", help="also write the results to this file")
    args = parser.parse_args(argv)
    if args.merge:
        runs = []
        for path in args.merge:
            with open(path) as f:
                runs.append(json.load(f))
    else:
        counts = [int(n) for n in args.ranks.split(",")]
        runs = [measure(counts, args.quick, 2 if args.quick else args.rounds) for _ in range(args.repeat)]
    results = rederive(median_of(runs))
    results["runs"] = len(runs)
    if len(runs) > 1:
        print(f"medians of {len(runs)} runs\n")
    for table in results["allreduce"]:
        print(allreduce_table(table))
        print()
    print(steps_table(results["single"], results["parallel"]))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
    return results


if __name__ == "__main__":
    main()
