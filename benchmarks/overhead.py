"""W4 (BENCHMARKS.md): eager per-op overhead.

x of shape (16,), a chain of 100 elementwise ops (alternating multiply by 1.001, add 0.001, tanh),
sum, backward. Reports microseconds per op (forward + backward) for graphgrad eager, graphgrad
compiled (``gg.function`` of the chain and ``gg.grad``), hand-written NumPy doing the same arithmetic
(forward and backward by hand), and PyTorch eager when installed. The W4 part of
``python -m graphgrad bench`` (``graphgrad.bench.suite``).

    python benchmarks/overhead.py [--json out.json] [--repeats 30]
"""
from __future__ import annotations

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import common  # noqa: E402,F401  (2 BLAS threads, set before NumPy loads)

from graphgrad.bench import suite  # noqa: E402


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", default=None)
    parser.add_argument("--repeats", type=int, default=30)
    args = parser.parse_args(argv)
    return suite.run(["w4"], repeats=args.repeats, json_path=args.json)["w4"]


if __name__ == "__main__":
    main()
