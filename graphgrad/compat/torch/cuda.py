"""``torch.cuda``: whether a GPU (CuPy with a CUDA device) is usable."""
from __future__ import annotations

from graphgrad import backend


def is_available() -> bool:
    return backend.gpu_count() > 0


def device_count() -> int:
    return backend.gpu_count()
