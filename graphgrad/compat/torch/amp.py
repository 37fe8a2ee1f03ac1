"""``torch.amp`` (and ``torch.autocast``, ``torch.cuda.amp``): mixed precision.

graphgrad computes every op in its inputs' dtypes, so ``autocast`` is a context manager (and
decorator) that changes nothing, and ``GradScaler`` passes the loss and the optimizer step through
unscaled: a program written for mixed precision runs in full precision, with the same code."""
from __future__ import annotations

import functools
from typing import Any


class autocast:  # noqa: N801  (PyTorch's name)
    """``with torch.autocast("cuda", dtype=torch.float16):``: ops keep their inputs' dtypes here."""

    def __init__(self, device_type: str = "cuda", dtype: Any = None, enabled: bool = True,
                 cache_enabled: Any = None) -> None:
        self.device_type, self.dtype, self.enabled = device_type, dtype, enabled

    def __enter__(self) -> "autocast":
        return self

    def __exit__(self, *exc) -> None:
        return None

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapped(*args, **kwargs):
            with self:
                return fn(*args, **kwargs)

        return wrapped


class GradScaler:
    """PyTorch's loss scaler: with full-precision gradients there is nothing to scale, so ``scale``
    returns the loss, ``step`` steps the optimizer, and ``unscale_``/``update`` do nothing."""

    def __init__(self, device: str = "cuda", init_scale: float = 2.0 ** 16, growth_factor: float = 2.0,
                 backoff_factor: float = 0.5, growth_interval: int = 2000, enabled: bool = True) -> None:
        self._enabled = enabled

    def scale(self, outputs):
        return outputs

    def unscale_(self, optimizer) -> None:
        return None

    def step(self, optimizer, *args, **kwargs):
        return optimizer.step(*args, **kwargs)

    def update(self, new_scale=None) -> None:
        return None

    def get_scale(self) -> float:
        return 1.0

    def is_enabled(self) -> bool:
        return self._enabled

    def state_dict(self) -> dict:
        return {}

    def load_state_dict(self, state_dict: dict) -> None:
        return None
