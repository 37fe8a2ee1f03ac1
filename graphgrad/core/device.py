"""Devices: ``gg.device("cpu")``, ``gg.device("cuda:0")``, and ``gg.cuda`` (is a GPU usable?).

A :class:`device` is a ``str`` ("cpu" or "cuda:N"), so it compares equal to the plain string and
works wherever a device name does, with PyTorch's ``.type`` and ``.index`` on top. The arrays behind
tensors live on NumPy (cpu) or CuPy (cuda); ``"cuda"`` needs CuPy and a GPU, and says so otherwise.
"""
from __future__ import annotations

from typing import Any, Optional

from graphgrad import backend


class device(str):  # noqa: N801  (PyTorch's name)
    """A device name with PyTorch's interface: ``device("cuda", 1) == "cuda:1"``, ``.type == "cuda"``,
    ``.index == 1``. ``"cuda"`` alone means ``"cuda:0"``."""

    type: str
    index: Optional[int]

    def __new__(cls, kind: Any, index: Optional[int] = None) -> "device":
        if isinstance(kind, device) and index is None:
            return kind
        text = str(kind)
        kind_name, _, number = text.partition(":")
        if kind_name not in ("cpu", "cuda", "emulated"):
            raise ValueError(f"unknown device {text!r}: expected 'cpu', 'cuda', 'cuda:N' or 'emulated'")
        if number:
            if index is not None:
                raise ValueError(f"device {text!r} already has an index; do not pass index={index}")
            index = int(number)
        if kind_name in ("cpu", "emulated"):  # (emulated: a strict stand-in for a GPU, see backend/emulated.py)
            if index not in (None, 0):
                raise ValueError(f"device {kind_name!r} has no index {index}")
            self = super().__new__(cls, kind_name)
            self.type, self.index = kind_name, None
            return self
        index = 0 if index is None else int(index)
        self = super().__new__(cls, f"cuda:{index}")
        self.type, self.index = "cuda", index
        return self

    def __repr__(self) -> str:
        return f"device(type={self.type!r})" if self.index is None else f"device(type={self.type!r}, index={self.index})"

    def __enter__(self) -> "device":
        """``with gg.device("cuda"):``: factories put new tensors on this device inside the block
        (PyTorch's form of :func:`set_default_device`)."""
        from graphgrad import config

        _DEFAULT_STACK.append(config.default_device)
        set_default_device(self)
        return self

    def __exit__(self, *exc) -> None:
        from graphgrad import config

        config.default_device = _DEFAULT_STACK.pop()

    def __reduce__(self):
        return (device, (str(self),))


CPU = device("cpu")
_DEFAULT_STACK: list = []


def set_default_device(name: Any) -> None:
    """Make factories (``gg.tensor``, ``gg.zeros``, ``gg.randn``...) create tensors on ``name`` when
    they are given no ``device=`` (``None`` or ``"cpu"``: the CPU again), as ``torch.set_default_device``."""
    from graphgrad import config

    config.default_device = None if name is None or str(name) == "cpu" else check_available(name)


def get_default_device() -> device:
    """Where factories create tensors when given no ``device=``."""
    from graphgrad import config

    return CPU if config.default_device is None else device(config.default_device)


def of_array(array: Any) -> device:
    """The device an array lives on."""
    name = backend.device_of(array)
    return CPU if name == "cpu" else device(name)


def check_available(name: Any) -> device:
    """``name`` as a :class:`device`, after checking that it can hold arrays here: a clear error for
    ``"cuda"`` without CuPy or without a GPU."""
    dev = device(name)
    if dev.type == "cuda":
        count = backend.gpu_count()
        if dev.index >= count:
            why = f"CuPy sees {count} GPU(s)" if backend.cupy_installed() else \
                "CuPy is not installed (pip install 'graphgrad[cuda]')"
            raise RuntimeError(f"device {str(dev)!r} is not available: {why}; use 'cpu', or check "
                               "gg.cuda.is_available() first")
    return dev


class cuda:  # noqa: N801  (a namespace, as torch.cuda)
    """``gg.cuda``: whether CUDA GPUs are usable (through CuPy)."""

    @staticmethod
    def is_available() -> bool:
        return backend.gpu_count() > 0

    @staticmethod
    def device_count() -> int:
        return backend.gpu_count()

    @staticmethod
    def current_device() -> int:
        check_available("cuda:0")
        return backend.gpu_call("current_device")

    @staticmethod
    def synchronize(device: Any = None) -> None:
        """Wait for the GPU's queued work (nothing to do without a GPU)."""
        backend.gpu_call("synchronize")

    @staticmethod
    def manual_seed(seed: int) -> None:
        """Seeds graphgrad's one generator (the same for every device)."""
        from graphgrad.core.random import manual_seed

        manual_seed(seed)

    manual_seed_all = manual_seed

    @staticmethod
    def empty_cache() -> None:
        """Return CuPy's cached GPU memory (nothing to do without a GPU)."""
        backend.gpu_call("empty_cache")
