"""The TensorFlow-1 programming model in graphgrad, in three short programs.

1. Constants and a Session: 15 * 5 / (15 + 5) = 3.75.
2. Placeholders fed with different values on each run.
3. One model, one set of Variables, run eagerly and as a graph: the same losses and gradients.

Run ``python examples/graph_basics.py``.
"""
from __future__ import annotations

import numpy as np

import graphgrad as gg


def constants() -> float:
    with gg.Graph().as_default():
        a = gg.constant(15)
        b = gg.constant(5)
        prod = a * b
        total = a + b
        res = prod / total
        return float(gg.Session().run(res))


def placeholders() -> list:
    with gg.Graph().as_default():
        x = gg.placeholder(gg.float32)
        y = gg.placeholder(gg.float32)
        z = gg.add(x, y)
        with gg.Session() as sess:
            return [sess.run(z, feed_dict={x: 1, y: 2}), sess.run(z, feed_dict={x: [1, 2], y: [3, 4]})]


def eager_and_graph(steps: int = 5, seed: int = 0) -> list:
    """Train one tanh layer + softmax with plain SGD, updating the same Variables from eager
    gradients; at every step the graph (built once, on the same Variables) must agree."""
    rng = np.random.default_rng(seed)
    w = gg.Variable(rng.standard_normal((2, 4)), name="w")
    b = gg.Variable(np.zeros(4), name="b")
    xs, ys = rng.standard_normal((16, 2)), gg.tensor(rng.integers(0, 4, 16))

    def loss_of(x):
        return gg.cross_entropy(gg.tanh(x @ w + b), ys)

    graph = gg.Graph()
    with graph.as_default():
        x = gg.placeholder(gg.float64, (None, 2), name="x")
        loss = loss_of(x)
        grads = gg.gradients(loss, [w, b])
    sess = gg.Session(graph)
    differences = []
    for _ in range(steps):
        graph_loss, graph_gw, graph_gb = sess.run([loss, *grads], {x: xs})
        w.grad = b.grad = None
        eager_loss = loss_of(gg.tensor(xs))
        eager_loss.backward()
        differences.append(max(abs(graph_loss - eager_loss.item()),
                               np.abs(graph_gw - w.grad.numpy()).max(),
                               np.abs(graph_gb - b.grad.numpy()).max()))
        with gg.no_grad():
            w -= w.grad * 0.5
            b -= b.grad * 0.5
    return differences


def main() -> None:
    print("15 * 5 / (15 + 5) =", constants())
    print("x + y with two feed dicts:", placeholders())
    print("largest eager/graph difference per step:", [f"{d:.1e}" for d in eager_and_graph()])


if __name__ == "__main__":
    main()
