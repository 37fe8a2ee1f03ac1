"""Data-parallel training of a TensorFlow-1-style graph on several processes (Horovod's API).

Every rank builds the same graph (placeholders, Variables, a loss) and feeds it its own shard of the
spiral data set. ``gg.train.DistributedOptimizer`` averages the gradients over the ranks inside
``minimize``, and ``gg.train.broadcast_global_variables(0)`` gives every rank rank 0's initial
weights, so all ranks hold the same model at every step. Only rank 0 prints.

Run it on one process (``python examples/distributed_tf1.py``) or on several:

    python -m graphgrad.distributed.run -n 2 examples/distributed_tf1.py --steps 300
"""
from __future__ import annotations

import argparse
import math

import graphgrad as gg
import graphgrad.distributed as dist
from graphgrad.data import make_spiral


def build(hidden: int, learning_rate: float) -> dict:
    """A 2-``hidden``-3 perceptron in the default graph: placeholders, loss, distributed train op."""
    rng = gg.Generator(1000 + dist.rank())  # different on each rank: the broadcast makes them equal
    x = gg.placeholder(gg.float32, (None, 2), name="x")
    y = gg.placeholder(gg.int64, (None,), name="y")
    w1 = gg.Variable(gg.randn(2, hidden, generator=rng) * math.sqrt(2.0 / 2), name="w1")
    b1 = gg.Variable(gg.zeros(hidden), name="b1")
    w2 = gg.Variable(gg.randn(hidden, 3, generator=rng) * math.sqrt(1.0 / hidden), name="w2")
    b2 = gg.Variable(gg.zeros(3), name="b2")
    logits = gg.relu(x @ w1 + b1) @ w2 + b2
    loss = gg.cross_entropy(logits, y)
    optimizer = gg.train.DistributedOptimizer(gg.train.AdamOptimizer(learning_rate))
    train_op = optimizer.minimize(loss)
    accuracy = gg.mean(gg.astype(gg.equal(gg.argmax(logits, axis=1), y), gg.float32))
    return {"x": x, "y": y, "loss": loss, "train_op": train_op, "accuracy": accuracy,
            "init": gg.global_variables_initializer(), "sync": gg.train.broadcast_global_variables(0)}


def main(steps: int = 300, hidden: int = 64, learning_rate: float = 0.02, seed: int = 0,
         verbose: bool = True) -> dict:
    """Train on this rank's shard; return ``{"loss": ..., "accuracy": ...}`` on the whole data set
    (the same on every rank)."""
    dist.init()
    rank, size = dist.rank(), dist.world_size()
    xs, ys = make_spiral(100, 3, generator=gg.Generator(seed))
    xs, ys = xs.numpy(), ys.numpy()
    shard = slice(rank, None, size)  # every size-th point: disjoint shards of (nearly) equal size
    with gg.Graph().as_default() as graph:
        model = build(hidden, learning_rate)
    with gg.Session(graph) as sess:
        sess.run(model["init"])
        sess.run(model["sync"])  # after the initializer: everyone starts from rank 0's weights
        feed = {model["x"]: xs[shard], model["y"]: ys[shard]}
        for step in range(1, steps + 1):
            _, loss = sess.run((model["train_op"], model["loss"]), feed)
            if verbose and rank == 0 and (step % max(steps // 5, 1) == 0 or step == 1):
                print(f"step {step:4d}  loss on rank 0's shard {loss:.4f}  ({size} rank{'s' if size > 1 else ''})")
        loss, accuracy = sess.run((model["loss"], model["accuracy"]), {model["x"]: xs, model["y"]: ys})
    if verbose and rank == 0:
        print(f"whole data set: loss {loss:.4f}  accuracy {accuracy:.3f}")
    return {"loss": float(loss), "accuracy": float(accuracy)}


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    main(args.steps, seed=args.seed)
