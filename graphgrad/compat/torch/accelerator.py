"""``torch.accelerator``: the device-agnostic accelerator API of recent PyTorch examples
(``torch.accelerator.is_available()``, ``current_accelerator()``). graphgrad's one accelerator is a
CUDA GPU through CuPy (``gg.cuda``); without one there is none, as on a CPU-only PyTorch build."""
from __future__ import annotations

import contextlib
from typing import Any, Iterator, Optional

import graphgrad as _gg

_cuda, _device = _gg.cuda, _gg.device


def is_available() -> bool:
    """Whether an accelerator (a CUDA GPU through CuPy) is usable."""
    return _cuda.is_available()


def device_count() -> int:
    """How many accelerator devices are visible (0 without one)."""
    return _cuda.device_count() if is_available() else 0


def current_accelerator(check_available: bool = False) -> Optional[_device]:
    """The accelerator's device type as a ``torch.device`` (``device('cuda')``), or ``None`` when there
    is none (PyTorch's answer on a CPU-only build)."""
    return _device("cuda") if is_available() else None


def current_device_index() -> int:
    """The index of the current accelerator device (-1 without one)."""
    return _cuda.current_device() if is_available() else -1


def set_device_index(device: Any) -> None:
    """Select the current accelerator device (an index, ``'cuda:0'`` or a ``torch.device``): graphgrad
    computes on one device, the current one, so only its index is accepted."""
    if not is_available():
        raise RuntimeError("torch.accelerator.set_device_index: no accelerator is available")
    index = device if isinstance(device, int) else (_device(device).index or 0)
    if index != current_device_index():
        raise RuntimeError(f"torch.accelerator.set_device_index({index}): graphgrad computes on one device, "
                           f"the current one ({current_device_index()}); select another with CUDA_VISIBLE_DEVICES")


@contextlib.contextmanager
def device_index(device: Any) -> Iterator[None]:
    """Within the block, the current accelerator device is ``device`` (nothing without one)."""
    if device is None or not is_available():
        yield
        return
    set_device_index(device)
    yield


def synchronize(device: Any = None) -> None:
    """Wait for the accelerator's queued work to finish (nothing to wait for without one)."""
    if is_available():
        _cuda.synchronize()


current_device_idx, set_device_idx = current_device_index, set_device_index  # (PyTorch's older names)
