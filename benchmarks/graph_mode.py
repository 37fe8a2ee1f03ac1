"""Graph mode vs eager mode: one training step (forward, backward, SGD update) of

* the spiral MLP (W6 model: 2-100-3 ReLU, full batch of 300 points), and
* the MNIST-size MLP (W1 model: 784-512-256-10 ReLU, batch 128, softmax cross-entropy),

built once with the same Variables and run eagerly (autograd + in-place update) and as a static
graph (``gg.gradients`` + ``assign`` nodes, run by ``Session.run``). Prints ms per step and the
ratio graph/eager (below 1 means graph mode is faster).

    python benchmarks/graph_mode.py [--json out.json] [--repeats 30]
"""
from __future__ import annotations

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from common import report, save_json, time_steps  # noqa: E402  (first: sets the BLAS threads)

import numpy as np  # noqa: E402


from graphgrad.bench.workloads import mlp_arrays, mlp_forward, sgd_step  # noqa: E402

LR = 0.05


def make_mlp(gg, sizes, seed):
    """Variables of an MLP (see ``graphgrad.bench.workloads.mlp_arrays``)."""
    return [gg.Variable(p) for p in mlp_arrays(sizes, seed)]


def eager_step(gg, params, x, y):
    xt, yt = gg.tensor(x), gg.tensor(y)

    def step():
        return sgd_step(gg, params, xt, yt, LR)

    return step


def graph_step(gg, params, x, y, batch_dim):
    graph = gg.Graph()
    with graph.as_default():
        xp = gg.placeholder(gg.float32, (batch_dim, x.shape[1]), name="x")
        yp = gg.placeholder(gg.int64, (batch_dim,), name="y")
        loss = gg.cross_entropy(mlp_forward(gg, params, xp), yp)
        grads = gg.gradients(loss, params)
        train = gg.group(*[p.assign(p.value() - g * LR) for p, g in zip(params, grads)])
    sess = gg.Session(graph)
    feed = {xp: x, yp: y}

    def step():
        return sess.run([loss, train], feed)[0]

    return step


def workload(gg, name, sizes, batch, rng, repeats):
    x = rng.standard_normal((batch, sizes[0])).astype(np.float32)
    y = rng.integers(0, sizes[-1], batch)
    eager_params = make_mlp(gg, sizes, 1)
    graph_params = make_mlp(gg, sizes, 1)
    eager, graph = eager_step(gg, eager_params, x, y), graph_step(gg, graph_params, x, y, None)
    for _ in range(3):  # same start, same steps: the two modes must agree
        np.testing.assert_allclose(float(graph()), float(eager().item()), rtol=1e-4)
    return time_steps({f"{name} graph": graph, f"{name} eager": eager}, repeats=repeats)


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", default=None)
    parser.add_argument("--repeats", type=int, default=30)
    args = parser.parse_args(argv)
    import graphgrad as gg

    rng = np.random.default_rng(0)
    results = {}
    for name, sizes, batch in (("spiral MLP 2-100-3", (2, 100, 3), 300),
                               ("MNIST MLP 784-512-256-10", (784, 512, 256, 10), 128)):
        rows = workload(gg, name, sizes, batch, rng, args.repeats)
        report(f"{name}, batch {batch}: training step (forward, backward, SGD update)", "ms", 1e3, rows,
               f"{name} graph", None)
        results.update(rows)
    save_json(args.json, results)
    return results


if __name__ == "__main__":
    main()
