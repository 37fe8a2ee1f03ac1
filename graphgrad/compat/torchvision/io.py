"""``torchvision.io``: reading and writing image files as uint8 ``(C, H, W)`` tensors (Pillow)."""
from __future__ import annotations

import io as _io
import os
from typing import Any

from graphgrad import Tensor
from graphgrad.backend import np
from graphgrad.data import read_image as _read_image


class ImageReadMode:
    """What to convert an image to when reading it (torchvision's enum names)."""

    UNCHANGED = "UNCHANGED"
    GRAY = "GRAY"
    GRAY_ALPHA = "GRAY_ALPHA"
    RGB = "RGB"
    RGB_ALPHA = "RGB_ALPHA"


_PIL_MODES = {"UNCHANGED": None, "GRAY": "L", "GRAY_ALPHA": "LA", "RGB": "RGB", "RGB_ALPHA": "RGBA"}


def _pil_mode(mode: Any):
    name = getattr(mode, "name", mode)
    name = str(name).upper()
    if name not in _PIL_MODES:
        raise ValueError(f"unknown ImageReadMode {mode!r}; expected one of {sorted(_PIL_MODES)}")
    return _PIL_MODES[name]


def _decode(source, mode: Any) -> Tensor:
    from PIL import Image

    pil_mode = _pil_mode(mode)
    with Image.open(source) as img:
        if pil_mode in (None, "L", "RGB", "RGBA") and img.mode in ("L", "RGB", "RGBA"):
            array = np.asarray(img if pil_mode is None else img.convert(pil_mode), dtype=np.uint8)
        else:
            array = np.asarray(img.convert(pil_mode or ("RGBA" if "A" in img.mode else "RGB")), dtype=np.uint8)
    array = array[None] if array.ndim == 2 else array.transpose(2, 0, 1)
    return Tensor(np.ascontiguousarray(array))


def read_image(path: Any, mode: Any = ImageReadMode.UNCHANGED, apply_exif_orientation: bool = False) -> Tensor:
    """The image file at ``path`` as a uint8 ``(C, H, W)`` tensor (C: 1 gray, 3 RGB, 4 with alpha)."""
    if _pil_mode(mode) in (None, "L", "RGB", "RGBA") and _pil_mode(mode) is not None:
        return _read_image(path, mode=_pil_mode(mode), dtype="uint8")
    return _decode(os.fspath(path), mode)


def decode_image(input: Any, mode: Any = ImageReadMode.UNCHANGED, apply_exif_orientation: bool = False) -> Tensor:
    """An encoded image (a uint8 tensor of the file's bytes, or a path) -> uint8 ``(C, H, W)``."""
    if isinstance(input, (str, os.PathLike)):
        return read_image(input, mode)
    data = input.numpy().tobytes() if isinstance(input, Tensor) else bytes(input)
    return _decode(_io.BytesIO(data), mode)


decode_png = decode_jpeg = decode_image


def read_file(path: Any) -> Tensor:
    """The bytes of a file as a uint8 tensor."""
    with open(os.fspath(path), "rb") as f:
        return Tensor(np.frombuffer(f.read(), dtype=np.uint8).copy())


def write_file(filename: Any, data: Tensor) -> None:
    with open(os.fspath(filename), "wb") as f:
        f.write(data.numpy().tobytes())


def _encode(image: Tensor, format: str, **options) -> Tensor:
    from PIL import Image

    array = image.numpy()
    if array.dtype != np.uint8:
        raise TypeError(f"encoding an image needs a uint8 (C, H, W) tensor, got {array.dtype}")
    array = array[0] if array.shape[0] == 1 else array.transpose(1, 2, 0)
    buffer = _io.BytesIO()
    Image.fromarray(np.ascontiguousarray(array)).save(buffer, format=format, **options)
    return Tensor(np.frombuffer(buffer.getvalue(), dtype=np.uint8).copy())


def encode_png(input: Tensor, compression_level: int = 6) -> Tensor:
    return _encode(input, "PNG", compress_level=compression_level)


def encode_jpeg(input: Tensor, quality: int = 75) -> Tensor:
    return _encode(input, "JPEG", quality=quality)


def write_png(input: Tensor, filename: Any, compression_level: int = 6) -> None:
    write_file(filename, encode_png(input, compression_level))


def write_jpeg(input: Tensor, filename: Any, quality: int = 75) -> None:
    write_file(filename, encode_jpeg(input, quality))


__all__ = ["ImageReadMode", "read_image", "decode_image", "decode_png", "decode_jpeg", "read_file", "write_file",
           "encode_png", "encode_jpeg", "write_png", "write_jpeg"]
