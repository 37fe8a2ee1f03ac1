"""Small built-in datasets, generated with graphgrad ops (no files, no downloads)."""
from __future__ import annotations

from typing import Optional

from graphgrad.core.creation import full, linspace, randn
from graphgrad.core.random import Generator
from graphgrad.core.tensor import Tensor
from graphgrad.ops import concatenate, cos, sin, stack


def make_spiral(points_per_class: int = 100, classes: int = 3, noise: float = 0.2,
                generator: Optional[Generator] = None) -> tuple[Tensor, Tensor]:
    """The classic interleaved-spirals classification toy (as in CS231n).

    Class ``c`` has points ``r * (sin t, cos t)`` with radius ``r`` from 0 to 1 and angle ``t`` from
    ``4c`` to ``4(c + 1)`` plus Gaussian noise of std ``noise``.

    Returns:
        ``x`` of shape ``(points_per_class * classes, 2)`` float32 and int64 labels ``y`` of shape
        ``(points_per_class * classes,)``.

    Example:
        >>> x, y = make_spiral(100, 3, generator=gg.Generator(0))
        >>> x.shape, y.shape
        ((300, 2), (300,))
    """
    generator = generator or Generator(0)
    radius = linspace(0.0, 1.0, points_per_class)
    xs, ys = [], []
    for c in range(classes):
        theta = linspace(4.0 * c, 4.0 * (c + 1), points_per_class) + randn(points_per_class, generator=generator) * noise
        xs.append(stack([radius * sin(theta), radius * cos(theta)], axis=1))
        ys.append(full((points_per_class,), c))
    return concatenate(xs, axis=0), concatenate(ys, axis=0)
