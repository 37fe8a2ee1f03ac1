"""``torchvision.transforms.v2``: the transforms of :mod:`torchvision.transforms` (they take PIL images and
tensors alike), plus v2's ``ToImage``, ``ToDtype``, ``ToPureTensor`` and ``Identity``.

``v2.Compose([v2.ToImage(), v2.ToDtype(torch.float32, scale=True), v2.Normalize(mean, std)])`` is the
current tutorials' pipeline. The transforms take one image (not v2's nested samples of images, boxes
and labels)."""
from __future__ import annotations

from graphgrad.backend import np
from graphgrad import Tensor
from graphgrad.compat.torchvision.transforms import *  # noqa: F401,F403
from graphgrad.compat.torchvision.transforms import Transform, functional as F
from graphgrad.compat.torchvision.transforms import functional  # noqa: F401


class ToImage(Transform):
    """A PIL image or an ``(H, W, C)`` array as a ``(C, H, W)`` tensor of the same dtype (``uint8`` for
    8-bit images); a tensor passes unchanged."""

    def forward(self, inpt):
        if isinstance(inpt, Tensor):
            return inpt
        if isinstance(inpt, np.ndarray):
            array = inpt[:, :, None] if inpt.ndim == 2 else inpt
            return Tensor(np.ascontiguousarray(array.transpose(2, 0, 1)))
        return F.pil_to_tensor(inpt)

    def __repr__(self) -> str:
        return "ToImage()"


class ToDtype(Transform):
    """Convert to ``dtype``; with ``scale=True`` the values are rescaled between the dtypes' ranges
    (``uint8`` 0..255 to float 0..1 and back), as ``ConvertImageDtype``. ``dtype`` may be a dict from
    input kinds to dtypes (its first dtype is used: the input is one image)."""

    def __init__(self, dtype, scale: bool = False) -> None:
        self.dtype, self.scale = dtype, scale

    def forward(self, inpt):
        dtype = self.dtype
        if isinstance(dtype, dict):
            dtype = next((d for d in dtype.values() if d is not None), None)
            if dtype is None:
                return inpt
        if self.scale:
            return F.convert_image_dtype(inpt, dtype)
        return inpt.to(dtype)


class ToPureTensor(Transform):
    """The input as a plain tensor (graphgrad has no tensor subclasses: unchanged)."""

    def forward(self, inpt):
        return inpt


class Identity(Transform):
    def forward(self, inpt):
        return inpt
