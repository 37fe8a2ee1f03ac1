"""Command line: ``python -m graphgrad demo`` (and ``graphgrad demo`` once installed): the spiral MLP
trained eagerly and as a static graph."""
from __future__ import annotations

import argparse
import time
from typing import Optional, Sequence

import graphgrad as gg
from graphgrad.data import make_spiral


def demo(steps: int = 1000, hidden: int = 100, lr: float = 1.0, seed: int = 0, log_every: int = 100) -> float:
    """Train a 2-``hidden``-3 ReLU MLP on the 3-class spiral with full-batch SGD, using only the core
    (tensors, ops, autograd). Prints progress; returns the final training accuracy."""
    gen = gg.Generator(seed)
    x, y = make_spiral(100, 3, generator=gen)
    w1 = (gg.randn(2, hidden, generator=gen) * (2.0 / 2) ** 0.5).requires_grad_()
    b1 = gg.zeros(hidden, requires_grad=True)
    w2 = (gg.randn(hidden, 3, generator=gen) * (1.0 / hidden) ** 0.5).requires_grad_()
    b2 = gg.zeros(3, requires_grad=True)
    params = [w1, b1, w2, b2]
    print(f"graphgrad {gg.__version__} demo: spiral data {tuple(x.shape)}, MLP 2-{hidden}-3, full-batch SGD lr={lr}")
    start = time.perf_counter()
    accuracy = 0.0
    for step in range(1, steps + 1):
        logits = gg.relu(x @ w1 + b1) @ w2 + b2
        loss = gg.cross_entropy(logits, y)
        for p in params:
            p.grad = None
        loss.backward()
        with gg.no_grad():
            for p in params:
                p -= p.grad * lr
        if step % log_every == 0 or step == steps:
            accuracy = (logits.argmax(axis=1) == y).astype("float32").mean().item()
            print(f"step {step:5d}  loss {loss.item():.4f}  train accuracy {accuracy:.3f}")
    print(f"done in {time.perf_counter() - start:.2f}s: final training accuracy {accuracy:.3f}")
    return accuracy


def demo_graph(steps: int = 1000, hidden: int = 100, lr: float = 1.0, seed: int = 0, log_every: int = 250) -> float:
    """The same spiral MLP as :func:`demo`, TensorFlow-1 style: placeholders, Variables,
    ``GradientDescentOptimizer.minimize`` and a Session. Returns the final training accuracy."""
    gen = gg.Generator(seed)
    xs, ys = make_spiral(100, 3, generator=gen)
    graph = gg.Graph()
    with graph.as_default():
        x = gg.placeholder(gg.float32, (None, 2), name="x")
        y = gg.placeholder(gg.int64, (None,), name="y")
        w1 = gg.Variable(gg.randn(2, hidden, generator=gen), name="w1")
        b1 = gg.Variable(gg.zeros(hidden), name="b1")
        w2 = gg.Variable(gg.randn(hidden, 3, generator=gen) * (1.0 / hidden) ** 0.5, name="w2")
        b2 = gg.Variable(gg.zeros(3), name="b2")
        logits = gg.relu(x @ w1 + b1) @ w2 + b2
        loss = gg.cross_entropy(logits, y)
        train_op = gg.train.GradientDescentOptimizer(lr).minimize(loss)
        accuracy = gg.mean(gg.astype(gg.equal(gg.argmax(logits, axis=1), y), gg.float32))
    print(f"graph mode: {len(graph)} nodes; the same MLP trained by Session.run")
    start = time.perf_counter()
    feed = {x: xs, y: ys}
    value = 0.0
    with gg.Session(graph) as sess:
        for step in range(1, steps + 1):
            _, loss_value = sess.run([train_op, loss], feed)
            if step % log_every == 0 or step == steps:
                value = float(sess.run(accuracy, feed))
                print(f"step {step:5d}  loss {loss_value:.4f}  train accuracy {value:.3f}")
    print(f"done in {time.perf_counter() - start:.2f}s: final training accuracy {value:.3f}")
    return value


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="graphgrad", description="graphgrad command line")
    sub = parser.add_subparsers(dest="command", required=True)
    p_demo = sub.add_parser("demo", help="train a small MLP on the built-in spiral data")
    p_demo.add_argument("--steps", type=int, default=1000)
    p_demo.add_argument("--hidden", type=int, default=100)
    p_demo.add_argument("--lr", type=float, default=1.0)
    p_demo.add_argument("--seed", type=int, default=0)
    p_demo.add_argument("--mode", choices=("eager", "graph", "both"), default="both",
                        help="eager autograd, a static graph, or both (default)")
    args = parser.parse_args(argv)
    if args.command == "demo":
        if args.mode in ("eager", "both"):
            demo(args.steps, args.hidden, args.lr, args.seed)
        if args.mode in ("graph", "both"):
            demo_graph(args.steps, args.hidden, args.lr, args.seed)
    return 0
