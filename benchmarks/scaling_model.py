"""The data-parallel scaling plan on paper: the ring all-reduce cost model applied to W1 and W5.

    T_comm(N) = 2 (N-1)/N x bytes / bandwidth + buckets x 2 (N-1) x latency

Step time without overlap is ``compute + T_comm``; with overlap (buckets sent while backward still
runs) ``compute + max(0, T_comm - overlappable)``, ``overlappable`` being the part of the step that
runs after the first bucket is ready (about half of a training step: most of backward). Efficiency is
``compute / step``. ``--compute-w1/--compute-w5`` take the measured one-rank step times (ms) from
``benchmarks/distributed.py``; parameter bytes come from the workload models themselves.

    python benchmarks/scaling_model.py [--compute-w1 4.5] [--compute-w5 48.6] [--markdown]
"""
from __future__ import annotations

import argparse

LINKS = {"10 Gb/s TCP": (10e9 / 8, 15e-6), "25 Gb/s TCP": (25e9 / 8, 10e-6), "100 Gb/s RDMA": (100e9 / 8, 3e-6)}
WORKERS = (8, 64, 512)
OVERLAPPABLE = 0.5


def ring_time(nbytes: float, workers: int, bandwidth: float, latency: float, buckets: int = 1) -> float:
    """Seconds of one ring all-reduce of ``nbytes`` in ``buckets`` messages over ``workers`` ranks."""
    if workers == 1:
        return 0.0
    return 2 * (workers - 1) / workers * nbytes / bandwidth + buckets * 2 * (workers - 1) * latency


def tree_time(nbytes: float, workers: int, bandwidth: float, latency: float, buckets: int = 1) -> float:
    """A latency-optimal alternative (recursive halving/doubling or a tree): 2 log2(N) latency terms."""
    import math

    if workers == 1:
        return 0.0
    return 2 * (workers - 1) / workers * nbytes / bandwidth + buckets * 2 * math.log2(workers) * latency


def parameter_bytes() -> dict:
    import graphgrad as gg
    from graphgrad.bench import workloads
    from graphgrad.backend import np

    mlp = workloads.mlp(gg.nn)
    gpt = workloads.gpt(gg.nn, gg.tensor(np.zeros((64, 64), np.float32)))
    return {key: sum(p.size * p.dtype.itemsize for p in m.parameters()) for key, m in (("w1", mlp), ("w5", gpt))}


def rows(compute_ms: dict, sizes: dict, buckets: int = 8) -> list:
    """One row per workload, link and worker count: communication time and efficiency of

    * one bucket (no overlap: the only bucket is ready when backward ends),
    * ``buckets`` buckets overlapped with backward, in fp32 and in fp16 (half the bytes),
    * ``buckets`` overlapped buckets with a latency-optimal (tree) all-reduce instead of the ring.
    """
    out = []
    for key, nbytes in sizes.items():
        compute = compute_ms[key] / 1e3

        def overlapped(comm: float) -> float:
            return compute / (compute + max(0.0, comm - OVERLAPPABLE * compute))

        for link, (bandwidth, latency) in LINKS.items():
            for workers in WORKERS:
                one = ring_time(nbytes, workers, bandwidth, latency, 1)
                many = ring_time(nbytes, workers, bandwidth, latency, buckets)
                half = ring_time(nbytes / 2, workers, bandwidth, latency, buckets)
                tree = tree_time(nbytes, workers, bandwidth, latency, buckets)
                out.append({"workload": key, "link": link, "workers": workers,
                            "comm_1_ms": one * 1e3, "eff_1": compute / (compute + one),
                            "comm_n_ms": many * 1e3, "eff_n_overlap": overlapped(many),
                            "comm_fp16_ms": half * 1e3, "eff_fp16_overlap": overlapped(half),
                            "comm_tree_ms": tree * 1e3, "eff_tree_overlap": overlapped(tree)})
    return out


def main(argv=None) -> list:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--compute-w1", type=float, default=4.5, help="one-rank W1 step, ms")
    parser.add_argument("--compute-w5", type=float, default=48.6, help="one-rank W5 step, ms")
    parser.add_argument("--buckets", type=int, default=8)
    parser.add_argument("--markdown", action="store_true")
    args = parser.parse_args(argv)
    sizes = parameter_bytes()
    table = rows({"w1": args.compute_w1, "w5": args.compute_w5}, sizes, args.buckets)
    print("parameter bytes: " + ", ".join(f"{k} {v / 2 ** 20:.2f} MB" for k, v in sizes.items())
          + f"; compute per step: w1 {args.compute_w1} ms, w5 {args.compute_w5} ms")
    b = args.buckets
    header = ["workload", "link", "workers", "1 bucket: comm ms", "eff.", f"{b} buckets: comm ms", "eff. (overlap)",
              f"fp16, {b} buckets: comm ms", "eff. (overlap)", f"tree, {b} buckets: comm ms", "eff. (overlap)"]
    lines = [header]
    for r in table:
        lines.append([r["workload"], r["link"], str(r["workers"]), f"{r['comm_1_ms']:.2f}", f"{r['eff_1']:.0%}",
                      f"{r['comm_n_ms']:.2f}", f"{r['eff_n_overlap']:.0%}", f"{r['comm_fp16_ms']:.2f}",
                      f"{r['eff_fp16_overlap']:.0%}", f"{r['comm_tree_ms']:.2f}", f"{r['eff_tree_overlap']:.0%}"])
    for i, cells in enumerate(lines):
        print("| " + " | ".join(cells) + " |" if args.markdown else "  ".join(cells))
        if args.markdown and i == 0:
            print("|" + "---|" * len(cells))
    return table


if __name__ == "__main__":
    main()
