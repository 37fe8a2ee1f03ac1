"""``graphgrad.compat.torchvision``: torchvision's datasets, transforms, models, utils and ops for
programs run on :mod:`graphgrad.compat.torch`.

``graphgrad.compat.torch.install()`` also makes ``import torchvision`` resolve here (see
:func:`install`), so a PyTorch program that builds its data pipeline with torchvision runs with its
one changed import. Images come and go as PIL images (Pillow: ``pip install "graphgrad[images]"``) and
as the facade's tensors.

Examples:
    >>> from graphgrad.compat.torchvision import datasets, transforms
    >>> data = datasets.FakeData(8, (1, 28, 28), transform=transforms.ToTensor())
    >>> data[0][0].shape
    (1, 28, 28)
"""
from __future__ import annotations

import sys

from graphgrad.compat.torchvision import datasets, io, models, ops, transforms, utils  # noqa: F401
from graphgrad.compat.torchvision.transforms import functional as _functional

__version__ = "0.28.0+graphgrad"


def install() -> None:
    """Make ``import torchvision`` (and its submodules) resolve to this package in this process."""
    me = sys.modules[__name__]
    for name, module in {"torchvision": me, "torchvision.datasets": datasets, "torchvision.transforms": transforms,
                         "torchvision.transforms.functional": _functional, "torchvision.models": models,
                         "torchvision.utils": utils, "torchvision.ops": ops, "torchvision.io": io,
                         "torchvision.transforms.v2": transforms.v2,
                         "torchvision.transforms.v2.functional": _functional}.items():
        sys.modules[name] = module


__all__ = ["datasets", "io", "models", "ops", "transforms", "utils", "install"]
