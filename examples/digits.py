"""Handwritten digits (the 8x8 images bundled with scikit-learn): an MLP and a small CNN, trained
PyTorch-style with ``gg.nn``, ``gg.optim`` and ``gg.data.DataLoader``; held-out accuracy on a fixed
split (20% of the 1,797 images, seed 0).

    pip install "graphgrad[datasets]" && python examples/digits.py
"""
from __future__ import annotations

import argparse
import time

import graphgrad as gg
from graphgrad import nn
from graphgrad.data import DataLoader, TensorDataset, load_digits


def mlp() -> nn.Module:
    """64 -> 128 -> 10 with ReLU."""
    return nn.Sequential(nn.Flatten(), nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 10))


def cnn() -> nn.Module:
    """conv(1->16, 3x3, pad 1) + ReLU + maxpool 2 -> conv(16->32) + ReLU + maxpool 2 -> linear(128->10)."""
    return nn.Sequential(nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Flatten(), nn.Linear(32 * 2 * 2, 10))


def accuracy(model: nn.Module, x: gg.Tensor, y: gg.Tensor) -> float:
    model.eval()
    with gg.no_grad():
        predicted = model(x).argmax(axis=1)
    model.train()
    return float((predicted == y).astype("float32").mean().item())


def train(model: nn.Module, data, epochs: int, lr: float, seed: int = 0, verbose: bool = False) -> float:
    """Adam with a cosine learning-rate schedule on mini-batches of 32; returns the held-out accuracy."""
    (x_train, y_train), (x_test, y_test) = data
    loader = DataLoader(TensorDataset(x_train, y_train), batch_size=32, shuffle=True, generator=gg.Generator(seed))
    optimizer = gg.optim.Adam(model.parameters(), lr=lr)
    schedule = gg.optim.CosineAnnealingLR(optimizer, T_max=epochs)
    loss_fn = nn.CrossEntropyLoss()
    for epoch in range(1, epochs + 1):
        for xb, yb in loader:
            optimizer.zero_grad()
            loss = loss_fn(model(xb), yb)
            loss.backward()
            optimizer.step()
        schedule.step()
        if verbose:
            print(f"  epoch {epoch:3d}  loss {loss.item():.4f}  test accuracy {accuracy(model, x_test, y_test):.4f}")
    return accuracy(model, x_test, y_test)


def main(epochs: int = 30, seed: int = 0, verbose: bool = False) -> dict:
    """Train both models; return ``{"mlp": accuracy, "cnn": accuracy}`` on the held-out 20%."""
    data = load_digits(test_size=0.2, seed=seed)
    results = {}
    for name, build, lr in (("mlp", mlp, 1e-3), ("cnn", cnn, 2e-3)):
        gg.manual_seed(seed)
        start = time.perf_counter()
        results[name] = train(build(), data, epochs, lr, seed, verbose)
        if verbose:
            print(f"{name}: held-out accuracy {results[name]:.4f} ({time.perf_counter() - start:.1f}s)")
    return results


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=30)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    # a small model: one BLAS thread (a second only spins, and slows it 2-4x on a busy machine)
    with gg.backend.blas_threads(1):
        main(args.epochs, args.seed, verbose=True)
