"""MNIST (or Fashion-MNIST) with a small CNN: conv(1->16, 3x3, pad 1) + ReLU + maxpool 2 ->
conv(16->32) + ReLU + maxpool 2 -> flatten -> linear(1568->10), trained with Adam on mini-batches,
with a checkpoint after every epoch that ``--resume`` continues from.

The data are the original IDX files (raw or .gz) in a local folder; nothing is downloaded. Put
``train-images-idx3-ubyte``, ``train-labels-idx1-ubyte``, ``t10k-images-idx3-ubyte`` and
``t10k-labels-idx1-ubyte`` in ``~/data/mnist`` (or torchvision's ``MNIST/raw`` under it), then:

    python examples/mnist_cnn.py --epochs 2                    # full MNIST, about a minute an epoch
    python examples/mnist_cnn.py --limit 2000 --epochs 1       # a quick run on 2000 images
    python examples/mnist_cnn.py --fashion --root ~/data/fashion-mnist
    python examples/mnist_cnn.py --epochs 4 --resume           # continue the last run up to epoch 4

Missing files: the script prints which ones, where it looked and where to download them, and exits
with status 2.
"""
from __future__ import annotations

import argparse
import os
import sys
import time

import graphgrad as gg
from graphgrad import nn
from graphgrad.data import DataLoader, TensorDataset, load_mnist


def cnn() -> nn.Module:
    """Two conv blocks halve 28x28 twice, to 32 channels of 7x7 = 1568 features."""
    return nn.Sequential(nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Flatten(), nn.Linear(32 * 7 * 7, 10))


def accuracy(model: nn.Module, x: gg.Tensor, y: gg.Tensor, batch_size: int = 1000) -> float:
    """Accuracy in chunks, so 10,000 test images never sit in memory as one activation tensor."""
    model.eval()
    correct = 0
    with gg.no_grad():
        for i in range(0, len(y), batch_size):
            predicted = model(x[i:i + batch_size]).argmax(axis=1)
            correct += int((predicted == y[i:i + batch_size]).astype("int64").sum().item())
    model.train()
    return correct / max(1, len(y))


def load_data(root: str, fashion: bool = False, limit: int | None = None) -> tuple:
    """``((x_train, y_train), (x_test, y_test))``; ``limit`` keeps the first ``limit`` images of each.

    Raises:
        FileNotFoundError: from ``load_mnist``, naming the missing files and the download address.
    """
    kind = "fashion" if fashion else "mnist"
    splits = [load_mnist(root, train=train, kind=kind) for train in (True, False)]
    return tuple((x[:limit], y[:limit]) if limit else (x, y) for x, y in splits)


def main(root: str = "~/data/mnist", epochs: int = 2, limit: int | None = None, fashion: bool = False,
         batch_size: int = 64, lr: float = 1e-3, checkpoint: str = "mnist_cnn.ckpt", resume: bool = False,
         seed: int = 0, verbose: bool = False, data: tuple | None = None) -> dict:
    """Train up to ``epochs`` (counting those already in the checkpoint when ``resume``).

    ``limit`` keeps the first ``limit`` training images and as many test images; ``data`` is what
    :func:`load_data` returns, if already loaded. Returns ``{"losses": mean training loss per epoch
    (all epochs, resumed ones included), "test_accuracy", "start_epoch": the first epoch trained in
    this call, "epochs"}``.
    """
    (x_train, y_train), (x_test, y_test) = data or load_data(root, fashion, limit)

    gg.manual_seed(seed)
    model = cnn()
    optimizer = gg.optim.Adam(model.parameters(), lr=lr)
    # Our own generator for the shuffling: the checkpoint saves its state, so a resumed run sees the
    # same batch order as one that never stopped.
    shuffle = gg.Generator(seed)
    loader = DataLoader(TensorDataset(x_train, y_train), batch_size=batch_size, shuffle=True, generator=shuffle)
    loss_fn = nn.CrossEntropyLoss()

    losses, start_epoch = [], 1
    if resume and checkpoint and os.path.exists(checkpoint):
        info = gg.load_checkpoint(checkpoint, model, optimizer, generators=[shuffle])
        start_epoch, losses = info["epoch"] + 1, list(info["extra"]["losses"])
        if verbose:
            print(f"resumed from {checkpoint} after epoch {info['epoch']}")
    elif resume and verbose:
        print(f"no checkpoint at {checkpoint}: starting from scratch")

    for epoch in range(start_epoch, epochs + 1):
        start, total, batches = time.perf_counter(), 0.0, 0
        for xb, yb in loader:
            optimizer.zero_grad()
            loss = loss_fn(model(xb), yb)
            loss.backward()
            optimizer.step()
            total, batches = total + loss.item(), batches + 1
        losses.append(total / batches)
        if checkpoint:
            gg.save_checkpoint(checkpoint, model, optimizer, epoch=epoch, extra={"losses": losses},
                               generators=[shuffle])
        if verbose:
            print(f"epoch {epoch:2d}  loss {losses[-1]:.4f}  test accuracy {accuracy(model, x_test, y_test):.4f}  "
                  f"({time.perf_counter() - start:.1f}s)")
    result = {"losses": losses, "test_accuracy": accuracy(model, x_test, y_test), "start_epoch": start_epoch,
              "epochs": epochs}
    if verbose:
        print(f"{'Fashion-MNIST' if fashion else 'MNIST'}: test accuracy {result['test_accuracy']:.4f} "
              f"on {len(y_test)} images")
    return result


def cli(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", default="~/data/mnist", help="folder with the IDX files")
    parser.add_argument("--fashion", action="store_true", help="Fashion-MNIST instead of MNIST")
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--limit", type=int, default=None, help="use only the first N training (and test) images")
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--checkpoint", default="mnist_cnn.ckpt", help="written after every epoch")
    parser.add_argument("--resume", action="store_true", help="continue from --checkpoint if it exists")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    try:
        data = load_data(args.root, args.fashion, args.limit)
    except FileNotFoundError as exc:
        # The loader's message already says which files, where it looked and the download address.
        print(f"error: {exc}", file=sys.stderr)
        sys.exit(2)
    return main(args.root, args.epochs, args.limit, args.fashion, args.batch_size, args.lr, args.checkpoint,
                args.resume, args.seed, verbose=True, data=data)


if __name__ == "__main__":
    cli()
