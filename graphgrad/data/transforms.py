"""Image transforms on ``(C, H, W)`` arrays or tensors (torchvision names), for data augmentation.

Every transform accepts a NumPy array or a graphgrad Tensor and returns the same kind (``ToTensor``
always returns a Tensor). They work on the last two axes, so a batch ``(N, C, H, W)`` is transformed
as a whole (one crop/flip for all its images). Random transforms draw from ``generator`` (a
``gg.Generator``; default: the global generator, seeded by ``gg.manual_seed``), so a seeded pipeline
is reproducible. Transforms are preprocessing: they do not record gradients.

Examples:
    >>> augment = Compose([RandomCrop(32, padding=4, generator=g), RandomHorizontalFlip(generator=g),
    ...                    Normalize(mean=[0.49, 0.48, 0.45], std=[0.25, 0.24, 0.26])])
    >>> augment(image).shape
    (3, 32, 32)
"""
from __future__ import annotations

from typing import Any, Callable, Optional, Sequence, Union

from graphgrad import backend
from graphgrad.backend import np
from graphgrad.core.random import Generator, rng_of
from graphgrad.core.tensor import Tensor


def _unwrap(x: Any):
    if isinstance(x, Tensor):
        return x._value(), True
    if backend.is_array(x):
        return x, False
    return np.asarray(x), False


def _rewrap(array, was_tensor: bool):
    return Tensor._wrap(array) if was_tensor else array


def _check_image(array, name: str) -> None:
    if array.ndim < 2:
        raise ValueError(f"{name} expects an image (C, H, W) or (H, W), got shape {tuple(array.shape)}")


class Compose:
    """Apply transforms one after another.

    Examples:
        >>> Compose([ToTensor(), Normalize([0.5], [0.5])])(np.zeros((1, 8, 8), np.uint8)).shape
        (1, 8, 8)
    """

    def __init__(self, transforms: Sequence[Callable]) -> None:
        self.transforms = list(transforms)

    def __call__(self, x: Any) -> Any:
        for t in self.transforms:
            x = t(x)
        return x

    def __repr__(self) -> str:
        inner = "".join(f"\n    {t!r}," for t in self.transforms)
        return f"Compose([{inner}\n])"


class ToTensor:
    """Convert an image (NumPy array, Tensor or PIL image) to a ``(C, H, W)`` Tensor.

    uint8 values 0..255 become float32 in ``[0, 1]``; other integer or bool images become float32
    unscaled; float images keep their dtype. ``(H, W)`` gets a channel axis ``(1, H, W)``.

    Args:
        layout: ``"chw"`` (default) if arrays are already channels-first, ``"hwc"`` to transpose
            ``(H, W, C)`` arrays (as from Pillow or matplotlib). PIL images are always ``hwc``.
    """

    def __init__(self, layout: str = "chw") -> None:
        if layout not in ("chw", "hwc"):
            raise ValueError(f"layout must be 'chw' or 'hwc', got {layout!r}")
        self.layout = layout

    def __call__(self, image: Any) -> Tensor:
        layout = self.layout
        if hasattr(image, "getbands") and not backend.is_array(image):  # a PIL image
            image, layout = np.asarray(image), "hwc"
        array, _ = _unwrap(image)
        _check_image(array, "ToTensor")
        xp = backend.namespace_of(array)
        if array.ndim == 2:
            array = array[None]
        elif layout == "hwc":
            array = xp.moveaxis(array, -1, -3)
        if array.dtype == np.uint8:
            array = array.astype(np.float32) / np.float32(255.0)
        elif array.dtype.kind != "f":
            array = array.astype(np.float32)
        return Tensor._wrap(xp.ascontiguousarray(array))

    def __repr__(self) -> str:
        return f"ToTensor(layout={self.layout!r})"


class Normalize:
    """``(x - mean[c]) / std[c]`` per channel (axis -3); float dtypes are kept, integers become float32.

    Examples:
        >>> Normalize(mean=[0.5, 0.5, 0.5], std=[0.25, 0.25, 0.25])(np.ones((3, 2, 2), np.float32))[0, 0, 0]
        2.0
    """

    def __init__(self, mean: Union[float, Sequence[float]], std: Union[float, Sequence[float]]) -> None:
        self.mean = np.atleast_1d(np.asarray(mean, dtype=np.float64))
        self.std = np.atleast_1d(np.asarray(std, dtype=np.float64))
        if self.mean.ndim != 1 or self.std.ndim != 1:
            raise ValueError("Normalize mean and std must be numbers or 1-d sequences (one per channel)")
        if (self.std == 0).any():
            raise ValueError(f"Normalize std must not contain zeros, got {self.std.tolist()}")

    def __call__(self, image: Any) -> Any:
        array, was_tensor = _unwrap(image)
        if array.ndim < 3:
            raise ValueError(f"Normalize expects (C, H, W) or (N, C, H, W), got shape {tuple(array.shape)}")
        channels = array.shape[-3]
        for name, v in (("mean", self.mean), ("std", self.std)):
            if len(v) not in (1, channels):
                raise ValueError(f"Normalize {name} has {len(v)} values but the image has {channels} channels")
        xp = backend.namespace_of(array)
        dtype = array.dtype if array.dtype.kind == "f" else np.dtype(np.float32)
        mean = xp.asarray(self.mean.astype(dtype).reshape(-1, 1, 1))
        std = xp.asarray(self.std.astype(dtype).reshape(-1, 1, 1))
        return _rewrap((array.astype(dtype, copy=False) - mean) / std, was_tensor)

    def __repr__(self) -> str:
        return f"Normalize(mean={self.mean.tolist()}, std={self.std.tolist()})"


def _pair(size: Union[int, Sequence[int]], name: str) -> tuple[int, int]:
    if isinstance(size, int):
        return size, size
    size = tuple(int(s) for s in size)
    if len(size) != 2:
        raise ValueError(f"{name} must be an int or (height, width), got {size}")
    return size


class RandomCrop:
    """Crop a random ``size`` window (after optional padding) from the last two axes.

    Args:
        size: output ``(height, width)``, or an int for a square.
        padding: added before cropping: an int (all sides), ``(left/right, top/bottom)`` or
            ``(left, top, right, bottom)``, as in torchvision.
        pad_if_needed: pad images smaller than ``size`` up to it instead of raising.
        fill: the value of constant padding.
        padding_mode: ``"constant"``, ``"edge"``, ``"reflect"`` or ``"symmetric"`` (NumPy's ``pad`` modes).
        generator: a ``gg.Generator`` for reproducible crops.
    """

    def __init__(self, size: Union[int, Sequence[int]], padding: Union[None, int, Sequence[int]] = None,
                 pad_if_needed: bool = False, fill: float = 0, padding_mode: str = "constant",
                 generator: Optional[Generator] = None) -> None:
        self.size = _pair(size, "RandomCrop size")
        if padding is None:
            padding = 0
        if isinstance(padding, int):
            padding = (padding,) * 4
        padding = tuple(int(p) for p in padding)
        if len(padding) == 2:
            padding = (padding[0], padding[1], padding[0], padding[1])
        if len(padding) != 4 or min(padding) < 0:
            raise ValueError(f"padding must be a non-negative int or a sequence of 2 or 4 ints, got {padding}")
        if padding_mode not in ("constant", "edge", "reflect", "symmetric"):
            raise ValueError(f"padding_mode must be constant, edge, reflect or symmetric, got {padding_mode!r}")
        self.padding = padding  # left, top, right, bottom
        self.pad_if_needed, self.fill, self.padding_mode = pad_if_needed, fill, padding_mode
        self.generator = generator

    def _pad(self, array, left: int, top: int, right: int, bottom: int):
        if not (left or top or right or bottom):
            return array
        xp = backend.namespace_of(array)
        widths = [(0, 0)] * (array.ndim - 2) + [(top, bottom), (left, right)]
        if self.padding_mode == "constant":
            return xp.pad(array, widths, mode="constant", constant_values=self.fill)
        return xp.pad(array, widths, mode=self.padding_mode)

    def __call__(self, image: Any) -> Any:
        array, was_tensor = _unwrap(image)
        _check_image(array, "RandomCrop")
        array = self._pad(array, *self.padding)
        th, tw = self.size
        h, w = array.shape[-2:]
        if self.pad_if_needed and (h < th or w < tw):
            dh, dw = max(th - h, 0), max(tw - w, 0)
            array = self._pad(array, dw // 2, dh // 2, dw - dw // 2, dh - dh // 2)
            h, w = array.shape[-2:]
        if h < th or w < tw:
            raise ValueError(f"RandomCrop size {self.size} is larger than the (padded) image {(h, w)}; "
                             "use padding or pad_if_needed=True")
        rng = rng_of(self.generator)
        top = int(rng.integers(0, h - th + 1))
        left = int(rng.integers(0, w - tw + 1))
        return _rewrap(array[..., top:top + th, left:left + tw].copy(), was_tensor)

    def __repr__(self) -> str:
        return f"RandomCrop(size={self.size}, padding={self.padding}, padding_mode={self.padding_mode!r})"


class RandomHorizontalFlip:
    """Mirror the image left-right (last axis) with probability ``p``."""

    axis = -1

    def __init__(self, p: float = 0.5, generator: Optional[Generator] = None) -> None:
        if not 0 <= p <= 1:
            raise ValueError(f"p must be in [0, 1], got {p}")
        self.p, self.generator = p, generator

    def __call__(self, image: Any) -> Any:
        array, was_tensor = _unwrap(image)
        _check_image(array, type(self).__name__)
        if rng_of(self.generator).random() < self.p:
            xp = backend.namespace_of(array)
            array = xp.ascontiguousarray(xp.flip(array, axis=self.axis))
        return _rewrap(array, was_tensor)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(p={self.p})"


class RandomVerticalFlip(RandomHorizontalFlip):
    """Flip the image upside down (axis -2) with probability ``p``."""

    axis = -2


class Lambda:
    """Wrap a function as a transform: ``Lambda(lambda x: x * 2)``."""

    def __init__(self, fn: Callable[[Any], Any]) -> None:
        if not callable(fn):
            raise TypeError(f"Lambda needs a callable, got {type(fn).__name__}")
        self.fn = fn

    def __call__(self, x: Any) -> Any:
        return self.fn(x)

    def __repr__(self) -> str:
        return f"Lambda({getattr(self.fn, '__name__', repr(self.fn))})"
