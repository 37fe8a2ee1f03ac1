"""Reproducible random numbers: ``gg.manual_seed(0)`` and explicit ``gg.Generator`` objects."""
from __future__ import annotations

from typing import Optional

from graphgrad.backend import np


class Generator:
    """A seeded source of random numbers (wraps NumPy's PCG64 ``Generator``).

    Examples:
        >>> g = gg.Generator(seed=0)
        >>> gg.randn(2, 3, generator=g).shape
        (2, 3)
    """

    def __init__(self, seed: Optional[int] = None) -> None:
        self.manual_seed(seed)

    def manual_seed(self, seed: Optional[int]) -> "Generator":
        """Reset the stream to ``seed``. Returns self."""
        self.initial_seed = seed
        self.rng = np.random.default_rng(seed)
        return self

    def get_state(self) -> dict:
        return self.rng.bit_generator.state

    def set_state(self, state: dict) -> None:
        self.rng.bit_generator.state = state


default_generator = Generator(None)


def manual_seed(seed: int) -> Generator:
    """Seed the default generator, so every later random call without a ``generator`` is reproducible."""
    return default_generator.manual_seed(seed)


def rng_of(generator: Optional[Generator]):
    """The NumPy ``Generator`` to draw from."""
    return (generator or default_generator).rng
