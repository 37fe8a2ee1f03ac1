"""W4 (BENCHMARKS.md): eager per-op overhead.

x of shape (16,), a chain of 100 elementwise ops (alternating multiply by 1.001, add 0.001, tanh),
sum, backward. Reports microseconds per op (forward + backward) for graphgrad eager, hand-written
NumPy doing the same arithmetic (forward and backward by hand), and PyTorch eager when installed.

    python benchmarks/overhead.py [--json out.json] [--repeats 30]
"""
from __future__ import annotations

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402

from common import report, time_steps, torch_or_none  # noqa: E402
from workloads import N_OPS, tiny_chain, tiny_chain_numpy  # noqa: E402



def autograd_step(x):
    """The W4 step for a framework tensor ``x`` (graphgrad or PyTorch: the code is the same)."""

    def step():
        x.grad = None
        tiny_chain(x, lambda t: t.tanh()).sum().backward()
        return x.grad

    return step


def check_same_gradient(gg_step, np_step) -> None:
    np.testing.assert_allclose(gg_step().numpy(), np_step()[1], rtol=1e-4)


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", default=None)
    parser.add_argument("--repeats", type=int, default=30)
    args = parser.parse_args(argv)
    import graphgrad as gg

    x0 = np.random.default_rng(0).standard_normal(16).astype(np.float32)
    ours, reference = autograd_step(gg.tensor(x0, requires_grad=True)), tiny_chain_numpy(x0)
    check_same_gradient(ours, reference)
    steps = {"graphgrad eager": ours, "numpy by hand": reference}
    torch = torch_or_none()
    if torch is not None:
        steps[f"pytorch {torch.__version__} eager"] = autograd_step(torch.tensor(x0, requires_grad=True))
    rows = time_steps(steps, repeats=args.repeats)
    report(f"W4 tiny-op chain: {N_OPS} elementwise ops on (16,), forward+backward, per op",
           "us", 1e6 / N_OPS, rows, "graphgrad eager", args.json)
    return rows


if __name__ == "__main__":
    main()
