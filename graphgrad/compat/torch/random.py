"""``torch.random``: the default generator's seeding and state, and ``fork_rng``."""
from __future__ import annotations

import contextlib
import os
from typing import Any

import graphgrad as _gg


def manual_seed(seed: int):
    return _gg.manual_seed(seed)


def seed() -> int:
    """Seed the default generator from the operating system; returns the seed."""
    value = int.from_bytes(os.urandom(4), "little")
    _gg.manual_seed(value)
    return value


def initial_seed() -> int:
    """The seed the default generator was last seeded with."""
    return _gg.default_generator.initial_seed


def get_rng_state():
    """The default generator's state (restore it with :func:`set_rng_state`)."""
    return _gg.default_generator.get_state()


def set_rng_state(new_state: Any) -> None:
    _gg.default_generator.set_state(new_state)


@contextlib.contextmanager
def fork_rng(devices: Any = None, enabled: bool = True, _caller: str = "fork_rng", _devices_kw: str = "devices",
             device_type: str = "cuda"):
    """Run the block with the default generator's state restored afterwards."""
    state = get_rng_state() if enabled else None
    try:
        yield
    finally:
        if enabled:
            set_rng_state(state)


__all__ = ["manual_seed", "seed", "initial_seed", "get_rng_state", "set_rng_state", "fork_rng"]
