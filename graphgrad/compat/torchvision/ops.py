"""``torchvision.ops``: box utilities (graphgrad's detection ops, torchvision's semantics)."""
from __future__ import annotations

from graphgrad import batched_nms, box_area, box_iou, nms  # noqa: F401
from graphgrad import Tensor
from graphgrad import concatenate


def box_convert(boxes: Tensor, in_fmt: str, out_fmt: str) -> Tensor:
    """Convert ``(N, 4)`` boxes between ``xyxy``, ``xywh`` (corner, size) and ``cxcywh`` (centre,
    size); differentiable."""
    formats = ("xyxy", "xywh", "cxcywh")
    if in_fmt not in formats or out_fmt not in formats:
        raise ValueError(f"box_convert: formats must be among {formats}, got {in_fmt!r} -> {out_fmt!r}")
    if in_fmt == out_fmt:
        return boxes
    first, second = boxes[..., :2], boxes[..., 2:]
    if in_fmt == "xywh":
        first, second = first, first + second
    elif in_fmt == "cxcywh":
        first, second = first - second / 2, first + second / 2
    if out_fmt == "xywh":
        first, second = first, second - first
    elif out_fmt == "cxcywh":
        first, second = (first + second) / 2, second - first
    return concatenate([first, second], axis=-1)


__all__ = ["nms", "batched_nms", "box_iou", "box_area", "box_convert"]
