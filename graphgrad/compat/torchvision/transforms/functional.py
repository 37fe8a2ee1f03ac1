"""``torchvision.transforms.functional``: image operations on PIL images and on ``(..., C, H, W)``
tensors, with torchvision's names, arguments and rounding.

A PIL image stays a PIL image through the geometric and colour operations (Pillow does the work, as in
torchvision); a tensor stays a tensor (NumPy does the work). ``to_tensor`` and ``pil_to_tensor`` turn
one into the other. Pillow is needed only for PIL images (``pip install "graphgrad[images]"``).
"""
from __future__ import annotations

import math
import numbers
from typing import Any, Optional, Sequence, Union

from graphgrad.backend import np
from graphgrad import Tensor


class InterpolationMode:
    """Interpolation names (torchvision's enum values are these strings)."""

    NEAREST = "nearest"
    NEAREST_EXACT = "nearest-exact"
    BILINEAR = "bilinear"
    BICUBIC = "bicubic"
    BOX = "box"
    HAMMING = "hamming"
    LANCZOS = "lanczos"


def _pil_module():
    try:
        from PIL import Image
    except ImportError as exc:  # pragma: no cover - Pillow is in the test extras
        raise ImportError("PIL images need Pillow: pip install 'graphgrad[images]'") from exc
    return Image


def _is_pil(img: Any) -> bool:
    return hasattr(img, "getbands") and hasattr(img, "resize")


def _pil_filter(mode) -> int:
    Image = _pil_module()
    name = getattr(mode, "value", mode)
    if isinstance(name, int):  # PIL's own constants (Image.BILINEAR...) as older torchvision accepted
        return name
    table = {"nearest": Image.NEAREST, "nearest-exact": Image.NEAREST, "bilinear": Image.BILINEAR,
             "bicubic": Image.BICUBIC, "box": Image.BOX, "hamming": Image.HAMMING, "lanczos": Image.LANCZOS}
    if name not in table:
        raise ValueError(f"unknown interpolation mode {mode!r}; expected one of {sorted(table)}")
    return table[name]


def _array(img: Tensor):
    if not isinstance(img, Tensor):
        raise TypeError(f"expected a PIL image or a Tensor, got {type(img).__name__}")
    if img.ndim < 2:
        raise ValueError(f"expected an image tensor (..., C, H, W) or (H, W), got shape {tuple(img.shape)}")
    return img._value()


def get_image_size(img: Any) -> list:
    """``[width, height]`` of a PIL image or tensor."""
    if _is_pil(img):
        return list(img.size)
    shape = _array(img).shape
    return [int(shape[-1]), int(shape[-2])]


def get_dimensions(img: Any) -> list:
    """``[channels, height, width]``."""
    if _is_pil(img):
        return [len(img.getbands()), img.size[1], img.size[0]]
    shape = _array(img).shape
    return [1 if len(shape) == 2 else int(shape[-3]), int(shape[-2]), int(shape[-1])]


# ---- conversions --------------------------------------------------------------------------------------
def to_tensor(pic: Any) -> Tensor:
    """A PIL image or an ``(H, W[, C])`` NumPy array -> float ``(C, H, W)`` tensor; 8-bit values are
    scaled to ``[0, 1]``."""
    if isinstance(pic, Tensor):
        raise TypeError("to_tensor expects a PIL image or a NumPy array, got a Tensor (it is one already)")
    if _is_pil(pic):
        if pic.mode == "1":
            array = np.asarray(pic, dtype=np.uint8) * np.uint8(255)
        else:
            array = np.asarray(pic)
    else:
        array = np.asarray(pic)
        if array.ndim not in (2, 3):
            raise ValueError(f"to_tensor expects an (H, W) or (H, W, C) array, got shape {array.shape}")
    if array.ndim == 2:
        array = array[:, :, None]
    array = np.ascontiguousarray(array.transpose(2, 0, 1))
    if array.dtype == np.uint8:
        return Tensor(array.astype(np.float32) / np.float32(255.0))
    if array.dtype.kind == "f":
        return Tensor(array)
    return Tensor(array.astype(np.float32))


def pil_to_tensor(pic: Any) -> Tensor:
    """A PIL image -> a ``(C, H, W)`` tensor of its own dtype (uint8 for 8-bit images), unscaled."""
    if not _is_pil(pic):
        raise TypeError(f"pil_to_tensor expects a PIL image, got {type(pic).__name__}")
    array = np.asarray(pic)
    if array.ndim == 2:
        array = array[:, :, None]
    return Tensor(np.ascontiguousarray(array.transpose(2, 0, 1)))


def to_pil_image(pic: Any, mode: Optional[str] = None):
    """A ``(C, H, W)`` tensor (floats in ``[0, 1]`` are scaled by 255) or an ``(H, W[, C])`` array -> PIL."""
    Image = _pil_module()
    if isinstance(pic, Tensor):
        array = np.asarray(_array(pic))
        if array.ndim == 3:
            array = array.transpose(1, 2, 0)
        if array.dtype.kind == "f":
            array = (array * 255).astype(np.uint8)  # (truncates, as torchvision's mul(255).byte())
    else:
        array = np.asarray(pic)
    if array.ndim == 3 and array.shape[2] == 1:
        array = array[:, :, 0]
    if array.dtype == np.bool_:
        array = array.astype(np.uint8) * np.uint8(255)
    return Image.fromarray(array, mode=mode) if mode else Image.fromarray(array)


def convert_image_dtype(image: Tensor, dtype: Any = None) -> Tensor:
    """Convert between float (``[0, 1]``) and integer (``0..max``) image dtypes, scaling the values."""
    from graphgrad import dtypes

    target = np.dtype(dtypes.as_dtype(dtype if dtype is not None else "float32").name)
    array = _array(image)
    if array.dtype == target:
        return image
    if array.dtype.kind == "f" and target.kind == "f":
        return Tensor(array.astype(target))
    if array.dtype.kind == "f":  # float -> int: scale by max + 1 - eps, as torchvision
        top = np.iinfo(target).max
        return Tensor(np.clip(array * (top + 1.0 - 1e-3), 0, top).astype(target))
    if target.kind == "f":
        return Tensor((array.astype(target) / target.type(np.iinfo(array.dtype).max)).astype(target))
    src, dst = np.iinfo(array.dtype).max, np.iinfo(target).max
    if dst > src:
        return Tensor(array.astype(target) * target.type((dst + 1) // (src + 1)))
    return Tensor((array // ((src + 1) // (dst + 1))).astype(target))


# ---- normalization and colour -------------------------------------------------------------------------
def normalize(tensor: Tensor, mean: Sequence[float], std: Sequence[float], inplace: bool = False) -> Tensor:
    """``(x - mean[c]) / std[c]`` over the channel axis of a float ``(..., C, H, W)`` tensor."""
    array = _array(tensor)
    if array.dtype.kind != "f":
        raise TypeError(f"normalize expects a float tensor, got {array.dtype}; convert it first (ToTensor)")
    if array.ndim < 3:
        raise ValueError(f"normalize expects (C, H, W) or (N, C, H, W), got shape {tuple(array.shape)}")
    m = np.asarray(mean, dtype=array.dtype).reshape(-1, 1, 1)
    s = np.asarray(std, dtype=array.dtype).reshape(-1, 1, 1)
    if (s == 0).any():
        raise ValueError(f"std evaluated to zero after conversion to {array.dtype}, leading to division by zero")
    if m.shape[0] not in (1, array.shape[-3]) or s.shape[0] not in (1, array.shape[-3]):
        raise ValueError(f"normalize: mean ({m.shape[0]}) and std ({s.shape[0]}) must have one value or one per "
                         f"channel ({array.shape[-3]})")
    result = (array - m) / s
    if inplace:
        tensor._value()[...] = result
        return tensor
    return Tensor(result.astype(array.dtype, copy=False))


def rgb_to_grayscale(img: Any, num_output_channels: int = 1) -> Any:
    """Luma ``0.2989 R + 0.587 G + 0.114 B`` (ITU-R 601-2), repeated to ``num_output_channels``."""
    if num_output_channels not in (1, 3):
        raise ValueError(f"num_output_channels must be 1 or 3, got {num_output_channels}")
    if _is_pil(img):
        gray = img.convert("L")
        return gray if num_output_channels == 1 else _pil_module().merge("RGB", (gray, gray, gray))
    array = _array(img)
    if array.shape[-3] == 1:
        gray = array
    else:
        r, g, b = array[..., 0, :, :], array[..., 1, :, :], array[..., 2, :, :]
        gray = (0.2989 * r + 0.587 * g + 0.114 * b).astype(np.float32 if array.dtype.kind != "f" else array.dtype)
        if array.dtype.kind != "f":
            gray = np.clip(np.floor(gray + 0.5), 0, np.iinfo(array.dtype).max).astype(array.dtype)
        gray = gray[..., None, :, :]
    return Tensor(np.ascontiguousarray(np.repeat(gray, num_output_channels, axis=-3)))


def to_grayscale(img: Any, num_output_channels: int = 1) -> Any:
    return rgb_to_grayscale(img, num_output_channels)


def _blend(img1, img2, ratio: float):
    top = 1.0 if img1.dtype.kind == "f" else float(np.iinfo(img1.dtype).max)
    out = np.clip(ratio * img1 + (1.0 - ratio) * img2, 0, top)
    return out.astype(img1.dtype)


def _adjust(img: Any, factor: float, what: str, enhancer: str, toward) -> Any:
    """Blend ``img`` with ``toward(array)`` by ``factor`` (1 keeps the image); Pillow's ``enhancer``
    does it for a PIL image."""
    if factor < 0:
        raise ValueError(f"{what}_factor must be non-negative, got {factor}")
    if _is_pil(img):
        from PIL import ImageEnhance

        return getattr(ImageEnhance, enhancer)(img).enhance(factor)
    array = _array(img)
    return Tensor(_blend(array, toward(img, array), factor))


def _gray_of(img, array):
    return _array(rgb_to_grayscale(img)) if array.shape[-3] == 3 else array


def adjust_brightness(img: Any, brightness_factor: float) -> Any:
    return _adjust(img, brightness_factor, "brightness", "Brightness", lambda img, a: np.zeros_like(a))


def adjust_contrast(img: Any, contrast_factor: float) -> Any:
    return _adjust(img, contrast_factor, "contrast", "Contrast",
                   lambda img, a: _gray_of(img, a).astype(np.float32).mean(axis=(-3, -2, -1), keepdims=True))


def adjust_saturation(img: Any, saturation_factor: float) -> Any:
    return _adjust(img, saturation_factor, "saturation", "Color", _gray_of)


def _adjust_hue_array(img: Any, hue_factor: float) -> Tensor:
    """Hue shift of a (..., 3, H, W) tensor: RGB -> HSV, hue + factor (mod 1), back to RGB."""
    array = np.asarray(_array(img))
    if array.shape[-3] == 1:
        return img
    integer = array.dtype.kind != "f"
    top = float(np.iinfo(array.dtype).max) if integer else 1.0
    rgb = array.astype(np.float32) / top if integer else array
    r, g, b = rgb[..., 0, :, :], rgb[..., 1, :, :], rgb[..., 2, :, :]
    high, low = np.maximum(np.maximum(r, g), b), np.minimum(np.minimum(r, g), b)
    chroma = high - low
    safe = np.where(chroma == 0, 1.0, chroma)
    hue = np.where(high == r, ((g - b) / safe) % 6.0, np.where(high == g, (b - r) / safe + 2.0, (r - g) / safe + 4.0))
    hue = np.where(chroma == 0, 0.0, hue) / 6.0
    saturation = np.where(high == 0, 0.0, chroma / np.where(high == 0, 1.0, high))
    hue = (hue + hue_factor) % 1.0
    sector = hue * 6.0
    f = sector - np.floor(sector)
    i = np.floor(sector).astype(np.int64) % 6
    p, q, t = high * (1 - saturation), high * (1 - saturation * f), high * (1 - saturation * (1 - f))
    choices = [(high, t, p), (q, high, p), (p, high, t), (p, q, high), (t, p, high), (high, p, q)]
    out = np.stack([np.choose(i, [c[k] for c in choices]) for k in range(3)], axis=-3)
    out = out.astype(rgb.dtype)
    if integer:
        out = np.clip(np.round(out * top), 0, top).astype(array.dtype)
    return Tensor(np.ascontiguousarray(out))


def adjust_hue(img: Any, hue_factor: float) -> Any:
    """Shift the hue by ``hue_factor`` (in ``[-0.5, 0.5]``, a fraction of the colour wheel)."""
    if not -0.5 <= hue_factor <= 0.5:
        raise ValueError(f"hue_factor must be in [-0.5, 0.5], got {hue_factor}")
    if not _is_pil(img):  # tensors, batched or not: in HSV, as torchvision's tensor path
        return _adjust_hue_array(img, hue_factor)
    Image = _pil_module()
    was_tensor = False
    pil = img
    if pil.mode in ("L", "1", "I", "F"):
        return img
    h, s, v = pil.convert("HSV").split()
    shifted = (np.asarray(h, dtype=np.int16) + int(round(hue_factor * 255))) % 256
    out = Image.merge("HSV", (Image.fromarray(shifted.astype(np.uint8), "L"), s, v)).convert(pil.mode)
    if not was_tensor:
        return out
    result = to_tensor(out)
    return result if _array(img).dtype.kind == "f" else pil_to_tensor(out)


# ---- geometry -----------------------------------------------------------------------------------------
def _size_pair(size) -> tuple:
    if isinstance(size, numbers.Number):
        return int(size), int(size)
    size = list(size)
    if len(size) == 1:
        return int(size[0]), int(size[0])
    if len(size) != 2:
        raise ValueError(f"size must be an int or a sequence of one or two ints, got {size}")
    return int(size[0]), int(size[1])


def _resized_shape(h: int, w: int, size, max_size: Optional[int]) -> tuple:
    if isinstance(size, numbers.Number) or (isinstance(size, (list, tuple)) and len(size) == 1):
        requested = int(size if isinstance(size, numbers.Number) else size[0])
        short, long = (w, h) if w <= h else (h, w)
        new_short, new_long = requested, int(requested * long / short)
        if max_size is not None:
            if max_size <= requested:
                raise ValueError(f"max_size ({max_size}) must be larger than the requested size ({requested})")
            if new_long > max_size:
                new_short, new_long = int(max_size * new_short / new_long), max_size
        return (new_long, new_short) if w <= h else (new_short, new_long)
    if max_size is not None:
        raise ValueError("max_size is only supported when size is one number")
    return _size_pair(size)


def resize(img: Any, size, interpolation=InterpolationMode.BILINEAR, max_size: Optional[int] = None,
           antialias: Optional[bool] = True) -> Any:
    """Resize to ``size`` ``(h, w)``, or match the smaller edge to ``size`` (an int), keeping the aspect."""
    w, h = get_image_size(img)
    new_h, new_w = _resized_shape(h, w, size, max_size)
    if _is_pil(img):
        if (new_h, new_w) == (h, w):
            return img
        return img.resize((new_w, new_h), _pil_filter(interpolation))
    from graphgrad.nn import functional as F

    array = _array(img)
    if (new_h, new_w) == (h, w):
        return img
    lead = array.shape[:-2]
    flat = array.reshape((-1, 1) + array.shape[-2:])
    mode = getattr(interpolation, "value", interpolation)
    mode = {"nearest-exact": "nearest", "box": "bilinear", "hamming": "bilinear", "lanczos": "bicubic"}.get(mode, mode)
    source = Tensor(flat.astype(np.float32) if flat.dtype.kind != "f" else flat)
    kwargs = {} if mode == "nearest" else {"align_corners": False}
    out = F.interpolate(source, size=(new_h, new_w), mode=mode, **kwargs)._value()
    if array.dtype.kind != "f":
        out = np.clip(np.round(out), 0, np.iinfo(array.dtype).max).astype(array.dtype)
    return Tensor(np.ascontiguousarray(out.reshape(lead + (new_h, new_w))))


def crop(img: Any, top: int, left: int, height: int, width: int) -> Any:
    """The ``height x width`` window at ``(top, left)``; parts outside the image are zeros."""
    top, left, height, width = int(top), int(left), int(height), int(width)
    if _is_pil(img):
        return img.crop((left, top, left + width, top + height))
    array = _array(img)
    h, w = array.shape[-2:]
    if top >= 0 and left >= 0 and top + height <= h and left + width <= w:
        return Tensor(np.ascontiguousarray(array[..., top:top + height, left:left + width]))
    out = np.zeros(array.shape[:-2] + (height, width), dtype=array.dtype)
    y0, x0 = max(top, 0), max(left, 0)
    y1, x1 = min(top + height, h), min(left + width, w)
    if y1 > y0 and x1 > x0:
        out[..., y0 - top:y1 - top, x0 - left:x1 - left] = array[..., y0:y1, x0:x1]
    return Tensor(out)


def center_crop(img: Any, output_size) -> Any:
    """The central ``output_size`` window (zero padded where the image is smaller)."""
    th, tw = _size_pair(output_size)
    w, h = get_image_size(img)
    if _is_pil(img) and (th > h or tw > w):
        img = pad(img, [max(0, (tw - w) // 2), max(0, (th - h) // 2), max(0, (tw - w + 1) // 2),
                        max(0, (th - h + 1) // 2)])
        w, h = get_image_size(img)
    top, left = int(round((h - th) / 2.0)), int(round((w - tw) / 2.0))
    return crop(img, top, left, th, tw)


def resized_crop(img: Any, top: int, left: int, height: int, width: int, size,
                 interpolation=InterpolationMode.BILINEAR, antialias: Optional[bool] = True) -> Any:
    return resize(crop(img, top, left, height, width), size, interpolation)


def hflip(img: Any) -> Any:
    if _is_pil(img):
        return img.transpose(_pil_module().FLIP_LEFT_RIGHT)
    return Tensor(np.ascontiguousarray(_array(img)[..., ::-1]))


def vflip(img: Any) -> Any:
    if _is_pil(img):
        return img.transpose(_pil_module().FLIP_TOP_BOTTOM)
    return Tensor(np.ascontiguousarray(_array(img)[..., ::-1, :]))


def _padding4(padding) -> tuple:
    """(left, top, right, bottom) from an int, (lr, tb) or (l, t, r, b)."""
    if isinstance(padding, numbers.Number):
        p = int(padding)
        return p, p, p, p
    padding = [int(p) for p in padding]
    if len(padding) == 1:
        return padding[0], padding[0], padding[0], padding[0]
    if len(padding) == 2:
        return padding[0], padding[1], padding[0], padding[1]
    if len(padding) == 4:
        return tuple(padding)
    raise ValueError(f"padding must be an int or a sequence of 1, 2 or 4 ints, got {padding}")


def pad(img: Any, padding, fill: Union[int, float, Sequence] = 0, padding_mode: str = "constant") -> Any:
    """Pad the borders (``padding``: all sides, ``(left/right, top/bottom)`` or ``(left, top, right,
    bottom)``) with ``fill`` (``constant``) or by ``edge``, ``reflect`` or ``symmetric`` copies."""
    if padding_mode not in ("constant", "edge", "reflect", "symmetric"):
        raise ValueError(f"padding_mode must be constant, edge, reflect or symmetric, got {padding_mode!r}")
    left, top, right, bottom = _padding4(padding)
    was_pil = _is_pil(img)
    if was_pil:
        mode = img.mode
        array = np.asarray(img)
        array = array[None] if array.ndim == 2 else array.transpose(2, 0, 1)
    else:
        array = _array(img)
    widths = [(0, 0)] * (array.ndim - 2) + [(top, bottom), (left, right)]
    if padding_mode == "constant":
        if isinstance(fill, (list, tuple)) and array.ndim >= 3:
            out = np.stack([np.pad(array[..., c, :, :], widths[:-3] + widths[-2:], mode="constant",
                                   constant_values=fill[c % len(fill)]) for c in range(array.shape[-3])], axis=-3)
        else:
            out = np.pad(array, widths, mode="constant", constant_values=fill)
    else:
        out = np.pad(array, widths, mode=padding_mode)
    if was_pil:
        out = out[0] if out.shape[0] == 1 else out.transpose(1, 2, 0)
        return _pil_module().fromarray(np.ascontiguousarray(out), mode=mode if mode in ("L", "RGB", "RGBA") else None)
    return Tensor(np.ascontiguousarray(out))


def rotate(img: Any, angle: float, interpolation=InterpolationMode.NEAREST, expand: bool = False,
           center: Optional[Sequence[int]] = None, fill: Optional[Sequence[float]] = None) -> Any:
    """Rotate by ``angle`` degrees counter-clockwise about the centre (or ``center``)."""
    if _is_pil(img):
        fillcolor = None if fill is None else (tuple(int(f) for f in fill) if isinstance(fill, (list, tuple))
                                               else int(fill))
        return img.rotate(angle, resample=_pil_filter(interpolation), expand=expand,
                          center=None if center is None else tuple(center), fillcolor=fillcolor)
    array = _array(img)
    h, w = array.shape[-2:]
    cx, cy = ((w - 1) * 0.5, (h - 1) * 0.5) if center is None else (float(center[0]), float(center[1]))
    theta = math.radians(angle)
    cos, sin = math.cos(theta), math.sin(theta)
    ys, xs = np.meshgrid(np.arange(h, dtype=np.float64), np.arange(w, dtype=np.float64), indexing="ij")
    # each output pixel reads the input at the inverse rotation of its position (nearest neighbour)
    src_x = cos * (xs - cx) - sin * (ys - cy) + cx
    src_y = sin * (xs - cx) + cos * (ys - cy) + cy
    ix, iy = np.floor(src_x + 0.5).astype(np.int64), np.floor(src_y + 0.5).astype(np.int64)
    inside = (ix >= 0) & (ix < w) & (iy >= 0) & (iy < h)
    out = np.zeros_like(array)
    if fill is not None:
        values = np.asarray(fill, dtype=array.dtype).reshape(-1, 1, 1) if array.ndim >= 3 else fill
        out[...] = values
    out[..., inside] = array[..., iy[inside], ix[inside]]
    return Tensor(out)
