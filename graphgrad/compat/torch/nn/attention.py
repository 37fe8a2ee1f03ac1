"""``torch.nn.attention``: the choice of scaled-dot-product-attention kernel (``sdpa_kernel``,
``SDPBackend``). graphgrad has one attention kernel; the choice is accepted and changes nothing."""
from __future__ import annotations

import contextlib
import enum
from typing import Any


class SDPBackend(enum.IntEnum):
    ERROR = -1
    MATH = 0
    FLASH_ATTENTION = 1
    EFFICIENT_ATTENTION = 2
    CUDNN_ATTENTION = 3
    OVERRIDEABLE = 4


@contextlib.contextmanager
def sdpa_kernel(backends: Any, set_priority: bool = False):
    """Run the block with the given attention backends allowed (accepted: one kernel here)."""
    yield


__all__ = ["SDPBackend", "sdpa_kernel"]
