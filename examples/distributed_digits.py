"""Data-parallel training, PyTorch style: ``DistributedDataParallel`` + ``DistributedSampler``.

Every rank builds the same model; ``DistributedDataParallel`` gives all of them rank 0's initial
weights and averages the gradients over the ranks while ``backward()`` runs, and
``DistributedSampler`` gives each rank its own share of every epoch (``set_epoch`` reshuffles). The
global batch is ``batch_size x ranks``. Only rank 0 prints.

    python examples/distributed_digits.py                                   # one process
    python -m graphgrad.distributed.run -n 2 examples/distributed_digits.py # two ranks
"""
from __future__ import annotations

import argparse

import graphgrad as gg
import graphgrad.distributed as dist
from graphgrad import nn
from graphgrad.data import DataLoader, TensorDataset, load_digits


def main(epochs: int = 5, batch_size: int = 32, lr: float = 2e-3, seed: int = 0, verbose: bool = True) -> float:
    """Train an MLP on the bundled digits; return the held-out accuracy (the same on every rank)."""
    dist.init()
    rank, size = dist.rank(), dist.world_size()
    (x_train, y_train), (x_test, y_test) = load_digits(flatten=True)
    gg.manual_seed(seed + rank)  # different initial weights per rank: DDP broadcasts rank 0's
    model = dist.DistributedDataParallel(nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 10)))
    optimizer = gg.optim.Adam(model.parameters(), lr=lr)
    train_set = TensorDataset(x_train, y_train)
    sampler = dist.DistributedSampler(train_set, shuffle=True, seed=seed)
    loader = DataLoader(train_set, batch_size=batch_size, sampler=sampler)
    for epoch in range(epochs):
        sampler.set_epoch(epoch)
        total = 0.0
        for xb, yb in loader:
            optimizer.zero_grad()
            loss = gg.cross_entropy(model(xb), yb)
            loss.backward()  # gradients are averaged over the ranks here
            optimizer.step()
            total += loss.item()
        mean_loss = dist.all_reduce(gg.tensor(total / len(loader)), "mean").item()
        if verbose and rank == 0:
            print(f"epoch {epoch + 1}/{epochs}  loss {mean_loss:.4f}  ({size} rank{'s' if size > 1 else ''})")
    model.eval()
    with gg.no_grad():
        accuracy = float((model(x_test).argmax(axis=1) == y_test).astype("float32").mean().item())
    if verbose and rank == 0:
        print(f"held-out accuracy {accuracy:.3f}")
    return accuracy


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--lr", type=float, default=2e-3)
    args = parser.parse_args()
    main(args.epochs, args.batch_size, args.lr)
