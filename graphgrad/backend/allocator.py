"""How the C allocator treats the large arrays a training step makes and frees.

A training step allocates and frees the same large temporaries (activations, gradients, im2col
buffers) every step. glibc's malloc serves blocks above its mmap threshold with a fresh ``mmap`` and
returns them to the system on ``free``, and trims the heap top above its trim threshold; the next
step then takes page faults on every page of every large array again (thousands per step: measured
here, a small CNN step spent half its time in them). Raising both thresholds keeps freed memory in
the process for reuse, as PyTorch's and TensorFlow's caching allocators do for their tensors.

This is a process-wide setting. graphgrad makes it when imported, on Linux with glibc only, unless
the environment variable ``GRAPHGRAD_MALLOC_TUNING`` is ``0`` (then glibc's own adaptive thresholds
stay untouched); :func:`tune_malloc` turns it on, or off again with glibc's initial values (fixed:
set explicitly, they no longer adapt), at any time. The cost: memory freed by a step stays mapped in the process
(up to the trim threshold) instead of going back to the system.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import os
import sys

#: glibc's mallopt parameters (malloc.h).
_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3
#: The thresholds set: blocks up to 256 MiB come from the heap, and up to 1 GiB of free heap is kept.
MMAP_THRESHOLD = 256 << 20
TRIM_THRESHOLD = 1 << 30
#: glibc's initial values (128 KiB each; glibc adapts them while they were never set explicitly).
_DEFAULT_MMAP_THRESHOLD = 128 << 10
_DEFAULT_TRIM_THRESHOLD = 128 << 10

_state = {"tuned": False}


def _libc():
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        return libc if hasattr(libc, "mallopt") else None
    except OSError:
        return None


def tune_malloc(enable: bool = True) -> bool:
    """Keep freed large blocks in the process (``enable``) or set glibc's initial thresholds again.

    Returns whether the setting could be made (False off Linux/glibc)."""
    libc = _libc()
    if libc is None:
        return False
    mmap, trim = (MMAP_THRESHOLD, TRIM_THRESHOLD) if enable else (_DEFAULT_MMAP_THRESHOLD, _DEFAULT_TRIM_THRESHOLD)
    ok = bool(libc.mallopt(_M_MMAP_THRESHOLD, mmap)) and bool(libc.mallopt(_M_TRIM_THRESHOLD, trim))
    _state["tuned"] = ok and enable
    return ok


def malloc_tuned() -> bool:
    """Whether :func:`tune_malloc` is in effect."""
    return _state["tuned"]


def tune_at_import() -> None:
    """Called once when graphgrad is imported: tune unless ``GRAPHGRAD_MALLOC_TUNING=0``."""
    if os.environ.get("GRAPHGRAD_MALLOC_TUNING", "1").strip().lower() not in ("0", "false", "no", "off"):
        tune_malloc(True)
