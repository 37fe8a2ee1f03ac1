"""``keras.random``: random tensors drawn from graphgrad's generator (``keras.utils.set_random_seed``
seeds it). ``SeedGenerator(seed)`` is accepted where Keras takes a ``seed=`` and gives draws of its own
generator, so two layers seeded alike draw alike."""
from __future__ import annotations

from typing import Any, Optional, Sequence

import graphgrad as gg

__all__ = ["SeedGenerator", "normal", "uniform", "truncated_normal", "randint", "dropout", "shuffle",
           "categorical"]


class SeedGenerator:
    """A generator of its own, seeded with ``seed`` (an int; ``None``: graphgrad's global generator)."""

    def __init__(self, seed: Optional[int] = None, **kwargs) -> None:
        self.seed = seed
        self.generator = None if seed is None else gg.Generator().manual_seed(int(seed))

    def next(self, ordered: bool = True):
        return self.generator


def _generator(seed: Any):
    if isinstance(seed, SeedGenerator):
        return seed.generator
    if seed is None:
        return None
    return gg.Generator().manual_seed(int(seed))


def _shape(shape: Any) -> tuple:
    return (int(shape),) if isinstance(shape, int) else tuple(int(d) for d in shape)


def normal(shape: Sequence[int], mean: float = 0.0, stddev: float = 1.0, dtype: Any = None, seed: Any = None):
    return gg.normal(float(mean), float(stddev), size=_shape(shape), generator=_generator(seed),
                     dtype=dtype or gg.get_default_dtype())


def uniform(shape: Sequence[int], minval: float = 0.0, maxval: float = 1.0, dtype: Any = None, seed: Any = None):
    u = gg.rand(*_shape(shape), generator=_generator(seed), dtype=dtype or gg.get_default_dtype())
    return u * (float(maxval) - float(minval)) + float(minval)


def truncated_normal(shape: Sequence[int], mean: float = 0.0, stddev: float = 1.0, dtype: Any = None,
                     seed: Any = None):
    """Normal draws with those farther than two standard deviations drawn again, as Keras."""
    z = gg.randn(*_shape(shape), generator=_generator(seed)).numpy()
    while True:
        bad = abs(z) > 2
        if not bad.any():
            break
        z[bad] = gg.randn(int(bad.sum()), generator=_generator(seed)).numpy()
    return gg.tensor(z * float(stddev) + float(mean)).astype(dtype or gg.get_default_dtype())


def randint(shape: Sequence[int], minval: int, maxval: int, dtype: Any = "int32", seed: Any = None):
    u = gg.rand(*_shape(shape), generator=_generator(seed)).numpy()
    return gg.tensor((minval + u * (maxval - minval)).astype("int64").clip(minval, maxval - 1)).astype(dtype)


def dropout(inputs: Any, rate: float, noise_shape: Any = None, seed: Any = None):
    """Zero each value with probability ``rate`` and scale the kept ones by ``1 / (1 - rate)``."""
    from graphgrad.compat.keras.engine import as_tensor

    x = as_tensor(inputs)
    shape = tuple(x.shape) if noise_shape is None else tuple(x.shape[i] if d is None else int(d)
                                                             for i, d in enumerate(noise_shape))
    keep = (gg.rand(*shape, generator=_generator(seed)) >= float(rate)).astype(x.dtype)
    return x * keep / (1.0 - float(rate))


def shuffle(x: Any, axis: int = 0, seed: Any = None):
    from graphgrad.compat.keras.engine import as_tensor

    x = as_tensor(x)
    order = gg.argsort(gg.rand(x.shape[axis], generator=_generator(seed)))
    return gg.take(x, order, axis=axis)


def categorical(logits: Any, num_samples: int, dtype: Any = "int32", seed: Any = None):
    """``num_samples`` class indices per row of ``logits`` (unnormalized log-probabilities)."""
    from graphgrad.backend import np

    from graphgrad.compat.keras.engine import as_tensor

    p = gg.softmax(as_tensor(logits), axis=-1).numpy().astype("float64")
    u = gg.rand(p.shape[0], int(num_samples), generator=_generator(seed)).numpy()
    idx = (u[:, :, None] > np.cumsum(p, axis=-1)[:, None, :]).sum(-1).clip(0, p.shape[-1] - 1)
    return gg.tensor(idx.astype("int64")).astype(dtype)
