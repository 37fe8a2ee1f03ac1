"""TensorFlow-1-style training: placeholders, Variables, ``minimize`` and a Session, nothing eager.

Models, each trained in graph mode with placeholders of shape (None, 2) / (None,) for the batch:

* ``perceptron``: a linear softmax classifier on two linearly separable Gaussian blobs (100%);
* ``perceptron_on_spiral``: the same linear model on three interleaved spirals, which it cannot
  separate (about half right) — the reason for hidden layers;
* ``mlp``: a one-hidden-layer perceptron (2-100-3, ReLU) on the spirals (>= 99%);
* ``mlp2``: a two-hidden-layer perceptron (2-64-64-3, ReLU) on the spirals (>= 99%).

Run ``python examples/graph_spiral.py`` (``--steps N`` to change the number of training steps).
"""
from __future__ import annotations

import argparse
import math

import graphgrad as gg
from graphgrad.data import make_spiral


def make_blobs(n_per_class: int, seed: int):
    """Two Gaussian blobs, centred at (-2, -2) and (2, 2): linearly separable."""
    gen = gg.Generator(seed)
    xs = gg.concatenate([gg.randn(n_per_class, 2, generator=gen) * 0.7 - 2,
                         gg.randn(n_per_class, 2, generator=gen) * 0.7 + 2])
    ys = gg.concatenate([gg.zeros(n_per_class, dtype="int64"), gg.ones(n_per_class, dtype="int64")])
    return xs.numpy(), ys.numpy()


def build(graph: gg.Graph, hidden: tuple, classes: int, learning_rate: float, seed: int) -> dict:
    """The graph of one classifier: placeholders x (None, 2) and y (None,), logits, loss, train op,
    accuracy. ``hidden`` lists the hidden layer widths (empty: a linear perceptron)."""
    rng = gg.Generator(seed)
    with graph.as_default():
        x = gg.placeholder(gg.float32, (None, 2), name="x")
        y = gg.placeholder(gg.int64, (None,), name="y")
        h, fan_in = x, 2
        for i, width in enumerate(hidden):
            with gg.name_scope(f"hidden{i + 1}"):
                w = gg.Variable(gg.randn(fan_in, width, generator=rng) * math.sqrt(2.0 / fan_in), name="w")
                b = gg.Variable(gg.zeros(width), name="b")
                h = gg.relu(h @ w + b)
            fan_in = width
        with gg.name_scope("output"):
            w = gg.Variable(gg.randn(fan_in, classes, generator=rng) * math.sqrt(1.0 / fan_in), name="w")
            b = gg.Variable(gg.zeros(classes), name="b")
            logits = h @ w + b
        loss = gg.cross_entropy(logits, y)
        train_op = gg.train.AdamOptimizer(learning_rate).minimize(loss)
        accuracy = gg.mean(gg.astype(gg.equal(gg.argmax(logits, axis=1), y), gg.float32))
        init = gg.global_variables_initializer()
    return {"x": x, "y": y, "loss": loss, "train_op": train_op, "accuracy": accuracy, "init": init}


def train(model: dict, graph: gg.Graph, xs, ys, steps: int, log_every: int = 0) -> float:
    """Run ``steps`` full-batch train steps; return the final training accuracy."""
    feed = {model["x"]: xs, model["y"]: ys}
    with gg.Session(graph) as sess:
        sess.run(model["init"])
        for step in range(1, steps + 1):
            sess.run(model["train_op"], feed)
            if log_every and step % log_every == 0:
                loss, acc = sess.run((model["loss"], model["accuracy"]), feed)
                print(f"  step {step:5d}  loss {loss:.4f}  accuracy {acc:.3f}")
        return float(sess.run(model["accuracy"], feed))


def main(steps: int = 1500, seed: int = 0, verbose: bool = False) -> dict:
    """Train every model; return ``{name: training accuracy}``."""
    spiral = make_spiral(100, 3, generator=gg.Generator(seed))
    spiral = (spiral[0].numpy(), spiral[1].numpy())
    blobs = make_blobs(100, seed)
    runs = (("perceptron", blobs, (), 2, 0.05), ("perceptron_on_spiral", spiral, (), 3, 0.05),
            ("mlp", spiral, (100,), 3, 0.02), ("mlp2", spiral, (64, 64), 3, 0.01))
    results = {}
    for name, (xs, ys), hidden, classes, lr in runs:
        graph = gg.Graph()
        model = build(graph, hidden, classes, lr, seed)
        if verbose:
            print(f"{name}: {len(graph)} graph nodes")
        results[name] = train(model, graph, xs, ys, steps, log_every=(steps // 5 if verbose else 0))
        if verbose:
            print(f"{name}: training accuracy {results[name]:.3f}")
    return results


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=1500)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    # a small model: one BLAS thread (a second only spins, and slows it 2-4x on a busy machine)
    with gg.backend.blas_threads(1):
        main(args.steps, args.seed, verbose=True)
