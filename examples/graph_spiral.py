"""TensorFlow-1-style training on the spiral data set: placeholders, Variables, ``minimize``, Session.

Two models are trained entirely in graph mode, full batch, on three interleaved spirals
(``gg.data.make_spiral``):

* a perceptron (a linear softmax classifier), which cannot separate spirals (about half right);
* a two-layer perceptron (2-100-3, ReLU), which fits them (>= 99% training accuracy).

Run ``python examples/graph_spiral.py`` (``--steps N`` to change the number of training steps).
"""
from __future__ import annotations

import argparse
import math

import graphgrad as gg
from graphgrad.data import make_spiral


def build(graph: gg.Graph, n: int, hidden: int, learning_rate: float, seed: int) -> dict:
    """The graph of one classifier: placeholders x (n, 2) and y (n,), logits, loss, train op, accuracy.

    ``hidden = 0`` makes a linear (perceptron) classifier; otherwise one ReLU layer of ``hidden``
    units.
    """
    rng = gg.Generator(seed)
    with graph.as_default():
        x = gg.placeholder(gg.float32, (n, 2), name="x")
        y = gg.placeholder(gg.int64, (n,), name="y")
        if hidden:
            with gg.name_scope("hidden"):
                w1 = gg.Variable(gg.randn(2, hidden, generator=rng) * math.sqrt(2.0 / 2), name="w1")
                b1 = gg.Variable(gg.zeros(hidden), name="b1")
                h = gg.relu(x @ w1 + b1)
            fan_in = hidden
        else:
            h, fan_in = x, 2
        with gg.name_scope("output"):
            w2 = gg.Variable(gg.randn(fan_in, 3, generator=rng) * math.sqrt(1.0 / fan_in), name="w2")
            b2 = gg.Variable(gg.zeros(3), name="b2")
            logits = h @ w2 + b2
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
    """Train the perceptron and the MLP; return ``{"perceptron": accuracy, "mlp": accuracy}``."""
    xs, ys = make_spiral(100, 3, generator=gg.Generator(seed))
    xs, ys = xs.numpy(), ys.numpy()
    n = xs.shape[0]
    results = {}
    for name, hidden, lr in (("perceptron", 0, 0.05), ("mlp", 100, 0.02)):
        graph = gg.Graph()
        model = build(graph, n, hidden, lr, seed)
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
    main(args.steps, args.seed, verbose=True)
