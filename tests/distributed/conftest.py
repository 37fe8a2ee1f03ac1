"""Fixtures of the distributed tests."""
from __future__ import annotations

import pytest

from graphgrad.distributed import world


@pytest.fixture
def fresh_world(monkeypatch):
    """This process as a world of one that has not called ``init()`` (no launcher variables), put
    back as it was afterwards. The world object is reset in place, so every module sees it."""
    saved = dict(world.WORLD.__dict__)
    world.WORLD.__init__()
    for name in world._LAUNCHER_SIZE_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    yield world.WORLD
    world.WORLD.__dict__.clear()
    world.WORLD.__dict__.update(saved)
