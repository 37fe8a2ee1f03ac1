"""Where the time of a W2 training step goes: ``gg.profile()`` of a few eager steps of the CNN
(conv16-pool-conv32-pool-linear, batch 64, SGD momentum), printed as the table in docs/performance.md.

    python benchmarks/profile_w2.py [--steps 5] [--top 25] [--compiled] [--trace w2.json]
"""
from __future__ import annotations

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import common  # noqa: E402,F401  (2 BLAS threads, set before NumPy loads)

import graphgrad as gg  # noqa: E402
from graphgrad.bench import workloads  # noqa: E402


def main(argv=None) -> gg.Profile:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=5, help="profiled steps (after 3 warm-up steps)")
    parser.add_argument("--top", type=int, default=25, help="rows of the table")
    parser.add_argument("--compiled", action="store_true", help="profile gg.function of the step instead")
    parser.add_argument("--trace", default=None, help="also write a Chrome trace to this file")
    args = parser.parse_args(argv)

    step, batch = workloads.build_step("w2", workloads.graphgrad_framework(), workloads.make_data())
    if args.compiled:
        step = gg.function(step)
    for _ in range(3):
        step(*batch)
    with gg.profile() as prof:
        for _ in range(args.steps):
            step(*batch)
    mode = "compiled (gg.function)" if args.compiled else "eager"
    print(f"W2 CNN training step, {mode}, {args.steps} steps: {prof.wall / 1e6 / args.steps:.2f} ms per step")
    print(prof.table(sort_by="self", top=args.top))
    if args.trace:
        prof.export_chrome_trace(args.trace)
        print(f"Chrome trace written to {args.trace}")
    return prof


if __name__ == "__main__":
    main()
