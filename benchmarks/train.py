"""Training-step benchmarks W1 (MLP), W2 (CNN), W3 (LSTM LM) and W5 (small GPT) of
../shared/BENCHMARKS.md: graphgrad eager and compiled (``gg.function`` of the step) next to PyTorch
eager (when installed), ms per step (forward, backward, optimizer update), with the ratio
graphgrad/PyTorch. The training part of ``python -m graphgrad bench`` (``graphgrad.bench.suite``);
the models are ``graphgrad.bench.workloads``' (re-exported here).

    python benchmarks/train.py [--json out.json] [--repeats 30] [--only mlp,cnn,lstm,gpt]
"""
from __future__ import annotations

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import common  # noqa: E402,F401  (2 BLAS threads, set before NumPy loads)

from graphgrad.bench import suite  # noqa: E402
from graphgrad.bench.workloads import cnn, gpt, lstm_lm, mlp  # noqa: E402,F401

#: the names this script has always taken, and the workloads they are
WORKLOADS = {"mlp": "w1", "cnn": "w2", "lstm": "w3", "gpt": "w5"}


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", default=None)
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--only", default="mlp,cnn,lstm,gpt")
    args = parser.parse_args(argv)
    keys = [WORKLOADS.get(name, name) for name in args.only.split(",")]
    results = suite.run(keys, repeats=args.repeats, json_path=args.json)
    return {name: results[key] for name, key in WORKLOADS.items() if key in results}


if __name__ == "__main__":
    main()
