"""The data-parallel scaling plan on paper: the ring all-reduce cost model applied to W1 and W5.

    T_comm(N) = 2 (N-1)/N x bytes / bandwidth + buckets x 2 (N-1) x latency

A step computes for ``compute`` seconds; gradients become complete during the last ``window``
seconds of it (backward, from the first complete gradient to its end; both measured on one rank by
``benchmarks/distributed.py``). With ``k`` equal buckets whose gradients complete evenly over the
window, bucket ``i`` is ready at ``i/k`` of it and the transfers queue one after another, so the
communication the step still waits for after backward is

    exposed = max(T_comm / k, T_comm - window x (k-1)/k)

(``k = 1``: all of it; the last bucket never overlaps). Step time is ``compute + exposed``, the
efficiency ``compute / step`` (weak scaling: every worker keeps its batch). Parameter bytes come
from the workload models themselves.

    python benchmarks/scaling_model.py [--bench dist.json] [--markdown]
    python benchmarks/scaling_model.py --check dist.json     # the model against measured all-reduces

``--check`` fits the latency and bandwidth to the measured 2-rank mpi4py all-reduces of a
``benchmarks/distributed.py --json`` file and compares the model with every measured all-reduce
(all rank counts in the file) and with the gradient buckets of the measured training steps.
"""
from __future__ import annotations

import argparse
import json
import math
import os
from typing import Optional

#: bandwidth (bytes/s) and latency per message (s) of the links in the plan
LINKS = {"10 Gb/s TCP": (10e9 / 8, 15e-6), "25 Gb/s TCP": (25e9 / 8, 10e-6), "100 Gb/s RDMA": (100e9 / 8, 3e-6)}
WORKERS = (8, 64, 512)
#: shared memory inside one machine: bandwidth and latency fitted to this machine's 2-rank all-reduces
LOCAL = (4.2e9, 1.8e-6)
#: one-rank step and backward window (ms) measured with benchmarks/distributed.py on this machine
#: (see docs/distributed.md); --bench replaces them with those of a result file
MEASURED_MS = {"w1": (4.80, 1.96), "w5": (49.9, 25.4)}


def ring_time(nbytes: float, workers: int, bandwidth: float, latency: float, buckets: int = 1) -> float:
    """Seconds of one ring all-reduce of ``nbytes`` in ``buckets`` messages over ``workers`` ranks."""
    if workers == 1:
        return 0.0
    return 2 * (workers - 1) / workers * nbytes / bandwidth + buckets * 2 * (workers - 1) * latency


def tree_time(nbytes: float, workers: int, bandwidth: float, latency: float, buckets: int = 1) -> float:
    """A latency-optimal alternative (recursive halving/doubling or a tree): 2 log2(N) latency terms."""
    if workers == 1:
        return 0.0
    return 2 * (workers - 1) / workers * nbytes / bandwidth + buckets * 2 * math.log2(workers) * latency


def hierarchical_time(nbytes: float, machines: int, per_machine: int, bandwidth: float, latency: float,
                      local_bandwidth: float, local_latency: float, buckets: int = 1) -> float:
    """A two-level all-reduce: reduce-scatter inside each machine, a ring all-reduce of each shard
    across the machines (the ``per_machine`` rings share the machine's link, so it still carries
    ``2 (M-1)/M x bytes``), all-gather inside the machine. Latency: ``2 (M-1)`` terms per bucket
    across machines instead of ``2 (N-1)``."""
    inside = 2 * (per_machine - 1) / per_machine * nbytes / local_bandwidth + buckets * 2 * (per_machine - 1) * local_latency
    return inside + ring_time(nbytes, machines, bandwidth, latency, buckets)


def exposed(comm: float, window: float, buckets: int) -> float:
    """Seconds of ``comm`` left after backward when ``buckets`` transfers overlap a ``window``."""
    return max(comm / buckets, comm - window * (buckets - 1) / buckets)


def parameter_bytes() -> dict:
    import graphgrad as gg
    from graphgrad.backend import np
    from graphgrad.bench import workloads

    mlp = workloads.mlp(gg.nn)
    gpt = workloads.gpt(gg.nn, gg.tensor(np.zeros((64, 64), np.float32)))
    return {key: sum(p.size * p.dtype.itemsize for p in m.parameters()) for key, m in (("w1", mlp), ("w5", gpt))}


def rows(measured_ms: dict, sizes: dict, buckets: int = 8) -> list:
    """One row per workload, link and worker count: communication time, step time and efficiency of

    * one bucket (no overlap: the only bucket is ready when backward ends),
    * ``buckets`` buckets overlapped with backward, in fp32 and in fp16 (half the bytes),
    * ``buckets`` overlapped buckets with a latency-optimal (tree) all-reduce instead of the ring.
    """
    out = []
    for key, nbytes in sizes.items():
        compute, window = (ms / 1e3 for ms in measured_ms[key])
        for link, (bandwidth, latency) in LINKS.items():
            for workers in WORKERS:
                one = ring_time(nbytes, workers, bandwidth, latency, 1)
                many = ring_time(nbytes, workers, bandwidth, latency, buckets)
                half = ring_time(nbytes / 2, workers, bandwidth, latency, buckets)
                tree = tree_time(nbytes, workers, bandwidth, latency, buckets)
                row = {"workload": key, "link": link, "workers": workers}
                for name, comm, k in (("1", one, 1), ("n", many, buckets), ("fp16", half, buckets),
                                      ("tree", tree, buckets)):
                    step = compute + exposed(comm, window, k)
                    row.update({f"comm_{name}_ms": comm * 1e3, f"step_{name}_ms": step * 1e3,
                                f"eff_{name}": compute / step})
                out.append(row)
    return out


# ---- checking the model against measured all-reduces ---------------------------------------------------
def fit(points: list) -> tuple:
    """Least-squares (relative error) ``bandwidth, latency`` of the ring model through
    ``(workers, nbytes, seconds)`` points."""
    from graphgrad.backend import np

    design = np.array([[2 * (n - 1) / n * b, 2 * (n - 1)] for n, b, _ in points]) / np.array([[t] for *_, t in points])
    (inverse_bandwidth, latency), *_ = np.linalg.lstsq(design, np.ones(len(points)), rcond=None)
    return 1 / inverse_bandwidth, latency


def check(result: dict, cores: Optional[int] = None) -> list:
    """Print the model's all-reduce and bucket times next to the measured ones; return the rows.

    The model is fitted to the 2-rank mpi4py all-reduces; graphgrad's handshake is taken as the
    median over sizes of (checked - unchecked). With more ranks than ``cores`` the ranks share the
    cores, and shared-memory transfers are copies made by the ranks themselves, so a second model
    column scales the time by ``ranks / cores``.
    """
    import statistics

    cores = cores or os.cpu_count() or 1
    tables = result["allreduce"] if isinstance(result["allreduce"], list) else [result["allreduce"]]
    two = next(t for t in tables if t["ranks"] == 2)
    bandwidth, latency = fit([(2, r["bytes"], r["mpi4py_s"]) for r in two["rows"]])
    handshake = {t["ranks"]: statistics.median(max(0.0, r["graphgrad_s"] - r["graphgrad_unchecked_s"]) for r in t["rows"])
                 for t in tables}
    print(f"fitted to the 2-rank mpi4py all-reduces: bandwidth {bandwidth / 1e9:.2f} GB/s, latency "
          f"{latency * 1e6:.1f} us per message; graphgrad's handshake (checked - unchecked, median over sizes): "
          + ", ".join(f"{n} ranks {h * 1e6:.0f} us" for n, h in handshake.items()) + f"; {cores} cores")
    out = []
    print(f"{'ranks':>5} {'size':>9} {'model':>9} {'x ranks/cores':>13} {'mpi4py':>9} {'ratio':>6} "
          f"{'model+hs':>9} {'graphgrad':>9} {'ratio':>6}")
    for table in tables:
        n = table["ranks"]
        share = max(1.0, n / cores)
        for r in table["rows"]:
            model = ring_time(r["bytes"], n, bandwidth, latency)
            row = {"ranks": n, "bytes": r["bytes"], "model_s": model, "model_shared_s": model * share,
                   "mpi4py_s": r["mpi4py_s"], "model_checked_s": (model + handshake[n]) * share,
                   "graphgrad_s": r["graphgrad_s"]}
            out.append(row)
            print(f"{n:>5} {r['bytes'] / 2 ** 20:>7.3g}MB {model * 1e6:>7.0f}us {model * share * 1e6:>11.0f}us "
                  f"{r['mpi4py_s'] * 1e6:>7.0f}us {r['mpi4py_s'] / row['model_shared_s']:>6.2f} "
                  f"{row['model_checked_s'] * 1e6:>7.0f}us {r['graphgrad_s'] * 1e6:>7.0f}us "
                  f"{r['graphgrad_s'] / row['model_checked_s']:>6.2f}")
    print(f"\ngradient buckets all-reduced alone (model: ring + handshake per bucket, x ranks/cores)\n"
          f"{'ranks':>5} {'workload':>8} {'buckets':>7} {'bytes':>9} {'model':>8} {'measured':>9} {'ratio':>6}")
    for run in result.get("parallel", []):
        n = run["ranks"]
        for key, w in run["workloads"].items():
            k = w["buckets"]
            model = (ring_time(w["bucket_bytes"], n, bandwidth, latency, k) + k * handshake.get(n, 0.0)) * max(1.0, n / cores)
            out.append({"ranks": n, "workload": key, "buckets": k, "model_s": model, "measured_s": w["comm_s"]})
            print(f"{n:>5} {key:>8} {k:>7} {w['bucket_bytes'] / 2 ** 20:>7.2f}MB {model * 1e3:>6.2f}ms "
                  f"{w['comm_s'] * 1e3:>7.2f}ms {w['comm_s'] / model:>6.2f}")
    return out


def main(argv=None) -> list:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bench", help="take the one-rank step and backward window from this distributed.py result")
    parser.add_argument("--check", help="compare the model with the all-reduces measured in this result file")
    parser.add_argument("--buckets", type=int, default=8)
    parser.add_argument("--markdown", action="store_true")
    args = parser.parse_args(argv)
    if args.check:
        with open(args.check) as f:
            return check(json.load(f))
    measured = dict(MEASURED_MS)
    if args.bench:
        with open(args.bench) as f:
            single = json.load(f)["single"]["workloads"]
        measured.update({k: (w["step_s"] * 1e3, w["window_s"] * 1e3) for k, w in single.items()})
    sizes = parameter_bytes()
    table = rows(measured, sizes, args.buckets)
    print("parameter bytes: " + ", ".join(f"{k} {v / 2 ** 20:.2f} MB ({v:,} bytes)" for k, v in sizes.items()) + "; one-rank step "
          "(backward window): " + ", ".join(f"{k} {s:.2f} ms ({w:.2f} ms)" for k, (s, w) in measured.items()))
    b = args.buckets
    header = ["workload", "link", "workers", "1 bucket: comm ms", "step ms", "eff.", f"{b} buckets: comm ms",
              "step ms", "eff.", f"fp16: comm ms", "eff.", f"tree: comm ms", "eff."]
    lines = [header]
    for r in table:
        lines.append([r["workload"], r["link"], str(r["workers"]),
                      f"{r['comm_1_ms']:.2f}", f"{r['step_1_ms']:.1f}", f"{r['eff_1']:.0%}",
                      f"{r['comm_n_ms']:.2f}", f"{r['step_n_ms']:.1f}", f"{r['eff_n']:.0%}",
                      f"{r['comm_fp16_ms']:.2f}", f"{r['eff_fp16']:.0%}", f"{r['comm_tree_ms']:.2f}", f"{r['eff_tree']:.0%}"])
    print_table(lines, args.markdown)
    print(f"\n512 workers as 64 machines x 8 ranks, hierarchical (inside a machine: shared memory, "
          f"{LOCAL[0] / 1e9:g} GB/s and {LOCAL[1] * 1e6:g} us, as measured here), against the flat ring:")
    lines = [["workload", "link", "buckets", "flat ring: comm ms", "eff.", "hierarchical: comm ms", "eff."]]
    for key, nbytes in sizes.items():
        compute, window = (ms / 1e3 for ms in measured[key])
        for link, (bandwidth, latency) in LINKS.items():
            for k in (1, b):
                flat = ring_time(nbytes, 512, bandwidth, latency, k)
                tiered = hierarchical_time(nbytes, 64, 8, bandwidth, latency, *LOCAL, buckets=k)
                lines.append([key, link, str(k), f"{flat * 1e3:.2f}", f"{compute / (compute + exposed(flat, window, k)):.0%}",
                              f"{tiered * 1e3:.2f}", f"{compute / (compute + exposed(tiered, window, k)):.0%}"])
    print_table(lines, args.markdown)
    return table


def print_table(lines: list, markdown: bool) -> None:
    for i, cells in enumerate(lines):
        print("| " + " | ".join(cells) + " |" if markdown else "  ".join(cells))
        if markdown and i == 0:
            print("|" + "---|" * len(cells))


if __name__ == "__main__":
    main()
