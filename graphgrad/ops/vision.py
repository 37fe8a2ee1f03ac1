"""Detection helpers: non-maximum suppression (``nms``, ``batched_nms``, torchvision's semantics; the
ONNX ``NonMaxSuppression`` op) and box geometry (``box_area``, ``box_iou``).

Boxes are ``(x1, y1, x2, y2)`` corners. Suppression keeps the highest-scoring box, drops every box
whose IoU with it exceeds ``iou_threshold``, and repeats; the kept indices come out by decreasing
score (ties keep the lower index first).
"""
from __future__ import annotations

from graphgrad.core.op import Op
from graphgrad.core.spec import TensorSpec
from graphgrad.core.tensor import Tensor
from graphgrad.backend import np
from graphgrad.errors import ShapeError
from graphgrad.ops import elementwise as ew, shape


def _greedy(xp, boxes, scores, iou_threshold: float, score_threshold=None, limit=None) -> list:
    """Kept indices into ``boxes`` (K, 4 corners, any diagonal), by decreasing score."""
    x1 = xp.minimum(boxes[:, 0], boxes[:, 2])
    x2 = xp.maximum(boxes[:, 0], boxes[:, 2])
    y1 = xp.minimum(boxes[:, 1], boxes[:, 3])
    y2 = xp.maximum(boxes[:, 1], boxes[:, 3])
    areas = (x2 - x1) * (y2 - y1)
    order = xp.argsort(-scores, kind="stable")
    if score_threshold is not None:
        order = order[scores[order] > score_threshold]
    kept = []
    while order.size and (limit is None or len(kept) < limit):
        i = int(order[0])
        kept.append(i)
        rest = order[1:]
        w = xp.clip(xp.minimum(x2[i], x2[rest]) - xp.maximum(x1[i], x1[rest]), 0, None)
        h = xp.clip(xp.minimum(y2[i], y2[rest]) - xp.maximum(y1[i], y1[rest]), 0, None)
        inter = w * h
        union = areas[i] + areas[rest] - inter
        iou = xp.where(union > 0, inter / xp.where(union > 0, union, 1), 0)
        order = rest[iou <= iou_threshold]
    return kept


class NonMaxSuppression(Op):
    """ONNX's ``NonMaxSuppression``: for every batch ``b`` and class ``c``, the boxes kept by greedy
    suppression of ``boxes[b]`` scored ``scores[b, c]``, as rows ``(b, c, box)``; at most
    ``max_output_boxes_per_class`` per class, only scores above ``score_threshold`` (when given).
    ``center_point_box`` 1 reads boxes as ``(x_center, y_center, width, height)``. No gradient.

    Shapes: boxes (B, N, 4), scores (B, C, N) -> (K, 3) int64, K known when it runs."""

    props = ("center_point_box", "max_output_boxes_per_class", "iou_threshold", "score_threshold")

    def __init__(self, iou_threshold: float, max_output_boxes_per_class=None, score_threshold=None,
                 center_point_box: int = 0):
        self.iou_threshold = float(iou_threshold)
        self.max_output_boxes_per_class = None if max_output_boxes_per_class is None else int(max_output_boxes_per_class)
        self.score_threshold = None if score_threshold is None else float(score_threshold)
        self.center_point_box = int(center_point_box)

    def infer(self, boxes, scores):
        if len(boxes.shape) != 3 or boxes.shape[-1] not in (None, 4) or len(scores.shape) != 3:
            raise ShapeError(f"NonMaxSuppression: expects boxes (B, N, 4) and scores (B, C, N), got {boxes.shape} "
                             f"and {scores.shape}")
        return TensorSpec((None, 3), np.dtype("int64"))

    def forward(self, xp, boxes, scores):
        if self.center_point_box:
            cx, cy, w, h = (boxes[..., i] for i in range(4))
            boxes = xp.stack([cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2], axis=-1)
        rows = []
        limit = self.max_output_boxes_per_class
        if limit == 0:
            return xp.zeros((0, 3), dtype=xp.int64)
        for b in range(scores.shape[0]):
            for c in range(scores.shape[1]):
                for i in _greedy(xp, boxes[b], scores[b, c], self.iou_threshold, self.score_threshold, limit):
                    rows.append((b, c, i))
        return xp.asarray(rows, dtype=xp.int64).reshape(-1, 3)


def nms(boxes, scores, iou_threshold: float) -> Tensor:
    """Indices of the boxes kept by non-maximum suppression, by decreasing score (torchvision's
    ``nms``). Shapes: boxes (N, 4) ``(x1, y1, x2, y2)``, scores (N,) -> (K,) int64."""
    boxes, scores = _tensor(boxes), _tensor(scores)
    if boxes.ndim != 2 or boxes.shape[-1] != 4 or scores.ndim != 1:
        raise ShapeError(f"nms: expects boxes (N, 4) and scores (N,), got {boxes.shape} and {scores.shape}")
    rows = NonMaxSuppression(iou_threshold).apply(shape.expand_dims(boxes, 0), shape.reshape(scores, (1, 1, -1)))
    return rows[:, 2]


def batched_nms(boxes, scores, idxs, iou_threshold: float) -> Tensor:
    """:func:`nms` within each category ``idxs`` (boxes of different categories never suppress each
    other), the kept indices by decreasing score. Shapes: (N, 4), (N,), (N,) int -> (K,) int64."""
    boxes, scores, idxs = _tensor(boxes), _tensor(scores), _tensor(idxs)
    if boxes.shape[0] == 0:
        return Tensor(np.zeros((0,), np.int64))
    # shift each category's boxes past every other category's: they can no longer overlap
    span = ew.astype(ew.astype(idxs, boxes.dtype) * (_max_coordinate(boxes) + 1), boxes.dtype)
    return nms(boxes + shape.expand_dims(span, 1), scores, iou_threshold)


def _max_coordinate(boxes: Tensor) -> Tensor:
    from graphgrad.ops.reduce import max as _max

    return _max(boxes)


def box_area(boxes) -> Tensor:
    """``(x2 - x1) * (y2 - y1)``. Shapes: (N, 4) -> (N,)."""
    boxes = _tensor(boxes)
    return (boxes[:, 2] - boxes[:, 0]) * (boxes[:, 3] - boxes[:, 1])


def box_iou(boxes1, boxes2) -> Tensor:
    """Intersection over union of every pair. Shapes: (N, 4), (M, 4) -> (N, M). Differentiable."""
    boxes1, boxes2 = _tensor(boxes1), _tensor(boxes2)
    a = shape.expand_dims(boxes1, 1)  # (N, 1, 4)
    b = shape.expand_dims(boxes2, 0)  # (1, M, 4)
    w = ew.clip(ew.minimum(a[..., 2], b[..., 2]) - ew.maximum(a[..., 0], b[..., 0]), 0, None)
    h = ew.clip(ew.minimum(a[..., 3], b[..., 3]) - ew.maximum(a[..., 1], b[..., 1]), 0, None)
    inter = w * h
    union = shape.expand_dims(box_area(boxes1), 1) + shape.expand_dims(box_area(boxes2), 0) - inter
    return inter / union


def _tensor(x) -> Tensor:
    return x if isinstance(x, Tensor) else Tensor(x)
