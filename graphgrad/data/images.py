"""Read and write image files as ``(C, H, W)`` tensors, with Pillow (the optional ``images`` extra:
``pip install "graphgrad[images]"``).
"""
from __future__ import annotations

import os
from typing import Any, Optional, Union

from graphgrad import backend
from graphgrad.backend import np
from graphgrad.core.tensor import Tensor

PathLike = Union[str, "os.PathLike[str]"]
_CHANNEL_MODES = {1: "L", 3: "RGB", 4: "RGBA"}


def _pil(what: str):
    try:
        from PIL import Image
    except ImportError as e:
        raise ImportError(f'{what} needs Pillow: pip install "graphgrad[images]" (or pip install Pillow)') from e
    return Image


def read_image(path: PathLike, mode: Optional[str] = None, dtype: str = "float32") -> Tensor:
    """Read an image file (PNG, JPEG, BMP... anything Pillow opens) as a ``(C, H, W)`` tensor.

    Args:
        path: the file.
        mode: ``"L"`` (grayscale, C=1), ``"RGB"`` (C=3) or ``"RGBA"`` (C=4) to convert to; by default
            grayscale stays ``L``, images with transparency become ``RGBA`` and the rest ``RGB``.
        dtype: ``"float32"`` for values in ``[0, 1]`` or ``"uint8"`` for the raw 0..255 values.

    Examples:
        >>> img = read_image("cat.png")
        >>> img.shape, img.dtype
        ((3, 240, 320), dtype('float32'))
    """
    Image = _pil("read_image")
    if dtype not in ("float32", "uint8"):
        raise ValueError(f"dtype must be 'float32' or 'uint8', got {dtype!r}")
    if mode is not None and mode not in ("L", "RGB", "RGBA"):
        raise ValueError(f"mode must be None, 'L', 'RGB' or 'RGBA', got {mode!r}")
    with Image.open(os.fspath(path)) as img:
        if mode is None:
            if img.mode in ("L", "RGB", "RGBA"):
                mode = img.mode
            elif img.mode in ("1", "I", "I;16", "F"):
                mode = "L"
            else:
                mode = "RGBA" if ("A" in img.mode or "transparency" in img.info) else "RGB"
        array = np.asarray(img.convert(mode), dtype=np.uint8)
    array = array[None] if array.ndim == 2 else array.transpose(2, 0, 1)
    array = np.ascontiguousarray(array)
    if dtype == "float32":
        array = array.astype(np.float32) / np.float32(255.0)
    return Tensor(array)


def _to_uint8_hwc(image: Any):
    array = backend.to_numpy(image.numpy() if isinstance(image, Tensor) else np.asarray(image))
    if array.ndim == 3:
        if array.shape[0] not in _CHANNEL_MODES:
            raise ValueError(f"write_image expects (H, W) or (C, H, W) with C in 1, 3, 4; got shape {array.shape}")
        array = array.transpose(1, 2, 0)
        if array.shape[2] == 1:
            array = array[:, :, 0]
    elif array.ndim != 2:
        raise ValueError(f"write_image expects (H, W) or (C, H, W) with C in 1, 3, 4; got shape {array.shape}")
    if array.dtype == np.uint8:
        return np.ascontiguousarray(array)
    if array.dtype.kind == "b":
        return np.ascontiguousarray(array.astype(np.uint8) * 255)
    if array.dtype.kind not in "fiu":
        raise TypeError(f"write_image cannot write dtype {array.dtype}")
    # floats (and other ints) are taken as [0, 1] intensities; values outside are clipped
    return np.ascontiguousarray(np.round(np.clip(array.astype(np.float64), 0.0, 1.0) * 255.0).astype(np.uint8))


def write_image(image: Any, path: PathLike, format: Optional[str] = None) -> None:
    """Write a tensor or array as an image file (format from the extension, or ``format``).

    Accepts ``(H, W)`` (grayscale) or ``(C, H, W)`` with C = 1, 3 or 4 (L, RGB, RGBA). uint8 values
    are written as they are; floats are taken as intensities in ``[0, 1]`` (clipped, then scaled to
    0..255 and rounded). Use a lossless format (PNG) for an exact round trip.

    Examples:
        >>> write_image(gg.rand(3, 32, 32), "noise.png")
    """
    Image = _pil("write_image")
    array = _to_uint8_hwc(image)
    # uint8 (H, W) / (H, W, 3) / (H, W, 4) arrays map to Pillow modes L / RGB / RGBA
    Image.fromarray(array).save(os.fspath(path), format=format)
