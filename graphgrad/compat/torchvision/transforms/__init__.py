"""``torchvision.transforms``: composable image transforms on PIL images and tensors.

Random transforms draw from graphgrad's global generator, so ``torch.manual_seed`` (the facade's)
makes a pipeline reproducible, as in torchvision.
"""
from __future__ import annotations

import math
import numbers
from typing import Any, Callable, Optional, Sequence

from graphgrad.backend import np
from graphgrad.compat.torchvision.transforms import functional as F
from graphgrad.compat.torchvision.transforms.functional import InterpolationMode  # noqa: F401
import graphgrad as _gg
from graphgrad import Tensor


def _rng():
    """The global generator's NumPy stream (seeded by ``torch.manual_seed``)."""
    return _gg.default_generator.rng


def _uniform(low: float, high: float) -> float:
    return float(_rng().uniform(low, high))


def _randint(low: int, high: int) -> int:
    """An integer in ``[low, high)``."""
    return int(_rng().integers(low, high))


def _chance(p: float) -> bool:
    return float(_rng().random()) < p


class Transform(_gg.nn.Module):
    """Base of the transforms: modules, as torchvision's (they go into ``nn.Sequential`` with the model:
    DINO's and BYOL's augmentations), made ready before their ``__init__`` runs; ``__call__`` runs
    :meth:`forward`."""

    def __new__(cls, *args, **kwargs):
        transform = super().__new__(cls)
        _gg.nn.Module.__init__(transform)
        return transform

    def __call__(self, *args):
        return self.forward(*args)

    def forward(self, img):  # pragma: no cover - every transform overrides it
        raise NotImplementedError

    def __repr__(self) -> str:
        fields = ", ".join(f"{k}={v!r}" for k, v in vars(self).items() if not k.startswith("_") and k != "training")
        return f"{type(self).__name__}({fields})"


class Compose(Transform):
    """Apply ``transforms`` in order."""

    def __init__(self, transforms: Sequence[Callable]) -> None:
        self.transforms = list(transforms)

    def forward(self, img):
        for t in self.transforms:
            img = t(img)
        return img

    def __repr__(self) -> str:
        inner = "".join(f"\n    {t!r}" for t in self.transforms)
        return f"Compose({inner}\n)"


class ToTensor(Transform):
    """PIL image or ``(H, W, C)`` array -> float ``(C, H, W)`` tensor in ``[0, 1]`` (8-bit input)."""

    def forward(self, pic):
        return F.to_tensor(pic)

    def __repr__(self) -> str:
        return "ToTensor()"


class PILToTensor(Transform):
    def forward(self, pic):
        return F.pil_to_tensor(pic)


class ToPILImage(Transform):
    def __init__(self, mode: Optional[str] = None) -> None:
        self.mode = mode

    def forward(self, pic):
        return F.to_pil_image(pic, self.mode)


class ConvertImageDtype(Transform):
    def __init__(self, dtype) -> None:
        self.dtype = dtype

    def forward(self, image):
        return F.convert_image_dtype(image, self.dtype)


class Normalize(Transform):
    """``(x - mean[c]) / std[c]`` per channel of a float tensor."""

    def __init__(self, mean: Sequence[float], std: Sequence[float], inplace: bool = False) -> None:
        self.mean, self.std, self.inplace = list(np.atleast_1d(mean)), list(np.atleast_1d(std)), inplace

    def forward(self, tensor):
        return F.normalize(tensor, self.mean, self.std, self.inplace)


class Lambda(Transform):
    def __init__(self, lambd: Callable) -> None:
        if not callable(lambd):
            raise TypeError(f"Lambda expects a callable, got {type(lambd).__name__}")
        self.lambd = lambd

    def forward(self, img):
        return self.lambd(img)


class Resize(Transform):
    """Resize to ``(h, w)``, or the smaller edge to ``size`` keeping the aspect ratio."""

    def __init__(self, size, interpolation=InterpolationMode.BILINEAR, max_size: Optional[int] = None,
                 antialias: Optional[bool] = True) -> None:
        self.size, self.interpolation, self.max_size, self.antialias = size, interpolation, max_size, antialias

    def forward(self, img):
        return F.resize(img, self.size, self.interpolation, self.max_size, self.antialias)


Scale = Resize


class CenterCrop(Transform):
    def __init__(self, size) -> None:
        self.size = F._size_pair(size)

    def forward(self, img):
        return F.center_crop(img, self.size)


class Pad(Transform):
    def __init__(self, padding, fill=0, padding_mode: str = "constant") -> None:
        F._padding4(padding)  # (checked now)
        self.padding, self.fill, self.padding_mode = padding, fill, padding_mode

    def forward(self, img):
        return F.pad(img, self.padding, self.fill, self.padding_mode)


class RandomCrop(Transform):
    """A random ``size`` window, after optional ``padding`` (and padding up to ``size`` when
    ``pad_if_needed``)."""

    def __init__(self, size, padding=None, pad_if_needed: bool = False, fill=0, padding_mode: str = "constant") -> None:
        self.size = F._size_pair(size)
        self.padding, self.pad_if_needed, self.fill, self.padding_mode = padding, pad_if_needed, fill, padding_mode

    @staticmethod
    def get_params(img, output_size) -> tuple:
        w, h = F.get_image_size(img)
        th, tw = output_size
        if h < th or w < tw:
            raise ValueError(f"required crop size {(th, tw)} is larger than the input image size {(h, w)}")
        if (h, w) == (th, tw):
            return 0, 0, h, w
        return _randint(0, h - th + 1), _randint(0, w - tw + 1), th, tw

    def forward(self, img):
        if self.padding is not None:
            img = F.pad(img, self.padding, self.fill, self.padding_mode)
        w, h = F.get_image_size(img)
        th, tw = self.size
        if self.pad_if_needed and w < tw:
            img = F.pad(img, [tw - w, 0], self.fill, self.padding_mode)
        if self.pad_if_needed and h < th:
            img = F.pad(img, [0, th - h], self.fill, self.padding_mode)
        return F.crop(img, *self.get_params(img, self.size))


class RandomHorizontalFlip(Transform):
    def __init__(self, p: float = 0.5) -> None:
        self.p = p

    def forward(self, img):
        return F.hflip(img) if _chance(self.p) else img


class RandomVerticalFlip(Transform):
    def __init__(self, p: float = 0.5) -> None:
        self.p = p

    def forward(self, img):
        return F.vflip(img) if _chance(self.p) else img


class RandomResizedCrop(Transform):
    """A crop of random area (``scale`` of the image) and aspect ratio (``ratio``), resized to ``size``."""

    def __init__(self, size, scale=(0.08, 1.0), ratio=(3.0 / 4.0, 4.0 / 3.0),
                 interpolation=InterpolationMode.BILINEAR, antialias: Optional[bool] = True) -> None:
        self.size, self.scale, self.ratio, self.interpolation = F._size_pair(size), scale, ratio, interpolation

    @staticmethod
    def get_params(img, scale, ratio) -> tuple:
        width, height = F.get_image_size(img)
        area = height * width
        log_ratio = (math.log(ratio[0]), math.log(ratio[1]))
        for _ in range(10):
            target_area = area * _uniform(scale[0], scale[1])
            aspect = math.exp(_uniform(*log_ratio))
            w = int(round(math.sqrt(target_area * aspect)))
            h = int(round(math.sqrt(target_area / aspect)))
            if 0 < w <= width and 0 < h <= height:
                return _randint(0, height - h + 1), _randint(0, width - w + 1), h, w
        in_ratio = width / height  # fall back to a central crop
        if in_ratio < min(ratio):
            w, h = width, int(round(width / min(ratio)))
        elif in_ratio > max(ratio):
            h, w = height, int(round(height * max(ratio)))
        else:
            w, h = width, height
        return (height - h) // 2, (width - w) // 2, h, w

    def forward(self, img):
        top, left, h, w = self.get_params(img, self.scale, self.ratio)
        return F.resized_crop(img, top, left, h, w, self.size, self.interpolation)


class RandomRotation(Transform):
    def __init__(self, degrees, interpolation=InterpolationMode.NEAREST, expand: bool = False, center=None,
                 fill=0) -> None:
        if isinstance(degrees, numbers.Number):
            if degrees < 0:
                raise ValueError(f"degrees must be non-negative when a single number, got {degrees}")
            degrees = (-degrees, degrees)
        self.degrees, self.interpolation, self.expand, self.center, self.fill = \
            tuple(degrees), interpolation, expand, center, fill

    def forward(self, img):
        angle = _uniform(*self.degrees)
        fill = self.fill
        if not isinstance(fill, (list, tuple)):
            fill = [fill] * F.get_dimensions(img)[0]
        return F.rotate(img, angle, self.interpolation, self.expand, self.center, fill)


class ColorJitter(Transform):
    """Random brightness, contrast, saturation and hue changes, in random order."""

    def __init__(self, brightness=0, contrast=0, saturation=0, hue=0) -> None:
        self.brightness = self._range(brightness, "brightness")
        self.contrast = self._range(contrast, "contrast")
        self.saturation = self._range(saturation, "saturation")
        self.hue = self._range(hue, "hue", center=0.0, bound=(-0.5, 0.5))

    @staticmethod
    def _range(value, name, center=1.0, bound=(0.0, float("inf"))):
        if isinstance(value, numbers.Number):
            if value < 0:
                raise ValueError(f"If {name} is a single number, it must be non negative, got {value}")
            value = (center - value, center + value)
            if center == 1.0:
                value = (max(value[0], 0.0), value[1])
        value = (float(value[0]), float(value[1]))
        if not bound[0] <= value[0] <= value[1] <= bound[1]:
            raise ValueError(f"{name} values should be between {bound}, got {value}")
        return None if value[0] == value[1] == center else value

    def forward(self, img):
        order = _rng().permutation(4)
        for i in order:
            if i == 0 and self.brightness is not None:
                img = F.adjust_brightness(img, _uniform(*self.brightness))
            elif i == 1 and self.contrast is not None:
                img = F.adjust_contrast(img, _uniform(*self.contrast))
            elif i == 2 and self.saturation is not None:
                img = F.adjust_saturation(img, _uniform(*self.saturation))
            elif i == 3 and self.hue is not None:
                img = F.adjust_hue(img, _uniform(*self.hue))
        return img


class Grayscale(Transform):
    def __init__(self, num_output_channels: int = 1) -> None:
        self.num_output_channels = num_output_channels

    def forward(self, img):
        return F.rgb_to_grayscale(img, self.num_output_channels)


class RandomGrayscale(Transform):
    def __init__(self, p: float = 0.1) -> None:
        self.p = p

    def forward(self, img):
        if not _chance(self.p):
            return img
        return F.rgb_to_grayscale(img, F.get_dimensions(img)[0])


class RandomApply(Transform):
    def __init__(self, transforms: Sequence[Callable], p: float = 0.5) -> None:
        self.transforms, self.p = list(transforms), p

    def forward(self, img):
        if _chance(self.p):
            for t in self.transforms:
                img = t(img)
        return img


class RandomChoice(Transform):
    def __init__(self, transforms: Sequence[Callable], p: Optional[Sequence[float]] = None) -> None:
        self.transforms, self.p = list(transforms), p

    def forward(self, img):
        p = None if self.p is None else np.asarray(self.p, dtype=np.float64) / np.sum(self.p)
        return self.transforms[int(_rng().choice(len(self.transforms), p=p))](img)


class RandomOrder(Transform):
    def __init__(self, transforms: Sequence[Callable]) -> None:
        self.transforms = list(transforms)

    def forward(self, img):
        for i in _rng().permutation(len(self.transforms)):
            img = self.transforms[int(i)](img)
        return img


class RandomErasing(Transform):
    """Erase a random rectangle of a tensor image with ``value`` (a number, per-channel values, or
    ``"random"`` for normal noise), with probability ``p``."""

    def __init__(self, p: float = 0.5, scale=(0.02, 0.33), ratio=(0.3, 3.3), value=0, inplace: bool = False) -> None:
        self.p, self.scale, self.ratio, self.value, self.inplace = p, scale, ratio, value, inplace

    def forward(self, img):
        if not _chance(self.p):
            return img
        array = F._array(img)
        c, h, w = array.shape[-3], array.shape[-2], array.shape[-1]
        area = h * w
        log_ratio = (math.log(self.ratio[0]), math.log(self.ratio[1]))
        for _ in range(10):
            erase_area = area * _uniform(*self.scale)
            aspect = math.exp(_uniform(*log_ratio))
            eh, ew = int(round(math.sqrt(erase_area * aspect))), int(round(math.sqrt(erase_area / aspect)))
            if eh < h and ew < w:
                top, left = _randint(0, h - eh + 1), _randint(0, w - ew + 1)
                out = array if self.inplace else array.copy()
                if self.value == "random":
                    fill = _rng().standard_normal((c, eh, ew)).astype(array.dtype)
                else:
                    fill = np.asarray(self.value, dtype=array.dtype).reshape(-1, 1, 1)
                out[..., top:top + eh, left:left + ew] = fill
                return img if self.inplace else Tensor(out)
        return img


class GaussianBlur(Transform):
    """Blur with a Gaussian kernel of ``kernel_size`` and a sigma drawn from ``sigma`` (tensor images)."""

    def __init__(self, kernel_size, sigma=(0.1, 2.0)) -> None:
        self.kernel_size = F._size_pair(kernel_size)
        if any(k <= 0 or k % 2 == 0 for k in self.kernel_size):
            raise ValueError(f"kernel_size must be odd and positive, got {kernel_size}")
        self.sigma = (float(sigma), float(sigma)) if isinstance(sigma, numbers.Number) else tuple(sigma)

    def forward(self, img):
        s = _uniform(*self.sigma)
        was_pil = F._is_pil(img)
        if was_pil:
            from PIL import ImageFilter

            return img.filter(ImageFilter.GaussianBlur(radius=s))
        array = F._array(img).astype(np.float32)
        out = array
        for axis, k in ((-1, self.kernel_size[1]), (-2, self.kernel_size[0])):
            half = k // 2
            x = np.arange(-half, half + 1, dtype=np.float32)
            kernel = np.exp(-0.5 * (x / s) ** 2)
            kernel /= kernel.sum()
            widths = [(0, 0)] * out.ndim
            widths[axis] = (half, half)
            padded = np.pad(out, widths, mode="reflect")
            moved = np.moveaxis(padded, axis, -1)
            length = moved.shape[-1] - 2 * half
            acc = sum(kernel[i] * moved[..., i:i + length] for i in range(k))
            out = np.moveaxis(acc, -1, axis)
        return Tensor(np.ascontiguousarray(out.astype(F._array(img).dtype)))


__all__ = ["Compose", "ToTensor", "PILToTensor", "ToPILImage", "ConvertImageDtype", "Normalize", "Lambda", "Resize",
           "Scale", "CenterCrop", "Pad", "RandomCrop", "RandomHorizontalFlip", "RandomVerticalFlip",
           "RandomResizedCrop", "RandomRotation", "ColorJitter", "Grayscale", "RandomGrayscale", "RandomApply",
           "RandomChoice", "RandomOrder", "RandomErasing", "GaussianBlur", "InterpolationMode", "functional"]


from graphgrad.compat.torchvision.transforms import v2  # noqa: E402,F401  (torchvision.transforms.v2)
