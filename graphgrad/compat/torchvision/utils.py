"""``torchvision.utils``: ``make_grid`` and ``save_image``."""
from __future__ import annotations

import math
from typing import Any, Optional, Union

from graphgrad.backend import np
from graphgrad import Tensor


def _images(tensor: Any):
    if isinstance(tensor, (list, tuple)):
        return np.stack([np.asarray(t._value() if isinstance(t, Tensor) else t) for t in tensor])
    array = np.asarray(tensor._value() if isinstance(tensor, Tensor) else tensor)
    if array.ndim == 2:
        array = array[None]
    if array.ndim == 3:
        array = array[None] if array.shape[0] in (1, 3) else array[:, None]
    if array.ndim != 4:
        raise ValueError(f"make_grid expects (B, C, H, W), (C, H, W) or (H, W) images, got shape {array.shape}")
    return array


def make_grid(tensor: Any, nrow: int = 8, padding: int = 2, normalize: bool = False,
              value_range: Optional[tuple] = None, scale_each: bool = False, pad_value: float = 0.0,
              **kwargs) -> Tensor:
    """Tile a batch ``(B, C, H, W)`` into one ``(3, rows * (H + padding) + padding, ...)`` image, ``nrow``
    images per row (one-channel images are repeated to three channels, as torchvision)."""
    value_range = kwargs.pop("range", value_range)  # (the old argument name)
    if kwargs:
        raise TypeError(f"make_grid got unexpected arguments {sorted(kwargs)}")
    images = _images(tensor).astype(np.float32, copy=True)
    if images.shape[1] == 1:
        images = np.repeat(images, 3, axis=1)
    if normalize:
        def scaled(x, low_high):
            low, high = low_high if low_high is not None else (float(x.min()), float(x.max()))
            x = np.clip(x, low, high)
            return (x - low) / max(high - low, 1e-5)

        if scale_each:
            images = np.stack([scaled(img, value_range) for img in images])
        else:
            images = scaled(images, value_range)
    count = images.shape[0]
    if count == 1:
        return Tensor(images[0])
    columns = min(nrow, count)
    rows = int(math.ceil(count / columns))
    height, width = images.shape[2] + padding, images.shape[3] + padding
    grid = np.full((images.shape[1], rows * height + padding, columns * width + padding), pad_value, np.float32)
    for k in range(count):
        y, x = divmod(k, columns)
        grid[:, y * height + padding:(y + 1) * height, x * width + padding:(x + 1) * width] = images[k]
    return Tensor(grid)


def save_image(tensor: Any, fp: Union[str, Any], format: Optional[str] = None, **kwargs) -> None:
    """Write ``make_grid(tensor, **kwargs)`` as an 8-bit image file (values in ``[0, 1]``)."""
    from PIL import Image

    grid = make_grid(tensor, **kwargs)._value()
    pixels = np.clip(grid * 255 + 0.5, 0, 255).astype(np.uint8).transpose(1, 2, 0)
    if pixels.shape[2] == 1:
        pixels = pixels[:, :, 0]
    Image.fromarray(np.ascontiguousarray(pixels)).save(fp, format=format)


__all__ = ["make_grid", "save_image"]
