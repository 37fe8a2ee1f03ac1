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

N_OPS = 100


def autograd_step(x):
    """The W4 step for a framework tensor ``x`` (graphgrad or PyTorch: the code is the same)."""

    def step():
        x.grad = None
        y = x
        for i in range(N_OPS):
            k = i % 3
            y = y * 1.001 if k == 0 else (y + 0.001 if k == 1 else y.tanh())
        y.sum().backward()
        return x.grad

    return step


def numpy_step(x0):
    a, b = np.float32(1.001), np.float32(0.001)

    def step():
        saved = []
        y = x0
        for i in range(N_OPS):
            k = i % 3
            if k == 0:
                y = y * a
            elif k == 1:
                y = y + b
            else:
                y = np.tanh(y)
                saved.append(y)
        g = np.ones_like(y)
        for i in reversed(range(N_OPS)):
            k = i % 3
            if k == 0:
                g = g * a
            elif k == 2:
                t = saved.pop()
                g = g * (1 - t * t)
        return g

    return step


def check_same_gradient(gg_step, np_step) -> None:
    np.testing.assert_allclose(gg_step().numpy(), np_step(), rtol=1e-4)


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", default=None)
    parser.add_argument("--repeats", type=int, default=30)
    args = parser.parse_args(argv)
    import graphgrad as gg

    x0 = np.random.default_rng(0).standard_normal(16).astype(np.float32)
    ours, reference = autograd_step(gg.tensor(x0, requires_grad=True)), numpy_step(x0)
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
