"""``torch.nn.functional``: graphgrad's functional forms, with PyTorch's ``dim=`` arguments."""
from __future__ import annotations

from typing import Any

import graphgrad.nn.functional as _F


def softmax(input, dim: Any = None, _stacklevel: int = 3, dtype=None):
    out = _F.softmax(input, -1 if dim is None else dim)
    return out if dtype is None else out.astype(dtype)


def log_softmax(input, dim: Any = None, _stacklevel: int = 3, dtype=None):
    out = _F.log_softmax(input, -1 if dim is None else dim)
    return out if dtype is None else out.astype(dtype)


def __getattr__(name: str) -> Any:
    try:
        return getattr(_F, name)
    except AttributeError:
        raise AttributeError(f"torch.nn.functional.{name} is not mapped onto graphgrad yet (see docs/pytorch.md)") from None
