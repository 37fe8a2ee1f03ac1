"""Plots for training: the decision regions of a 2-D classifier.

With matplotlib installed (the ``plots`` extra) the figure is a filled contour of the predicted
class with the data points on top, axes and a title. Without matplotlib it falls back to Pillow
(the ``images`` extra): the grid of predicted classes is colour-mapped into a PNG (light colours
per class, the y axis pointing up) with the data points drawn as dark-outlined dots; no axes or
text. With neither installed it raises ImportError naming both extras.
"""
from __future__ import annotations

import os
from typing import Any, Callable, Optional

from graphgrad.backend import np
from graphgrad.core.tensor import Tensor, host_array

__all__ = ["plot_decision_boundary"]

# tab10-like colours: (point colour, light region colour)
_COLOURS = [(31, 119, 180), (255, 127, 14), (44, 160, 44), (214, 39, 40), (148, 103, 189), (140, 86, 75),
            (227, 119, 194), (127, 127, 127), (188, 189, 34), (23, 190, 207)]


def _load_matplotlib():
    """``(FigureCanvasAgg, ListedColormap, Figure)``, or ``None`` without matplotlib (tests replace
    this function to exercise the Pillow fallback)."""
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.colors import ListedColormap
        from matplotlib.figure import Figure
    except ImportError:
        return None
    return FigureCanvasAgg, ListedColormap, Figure


_host = host_array  # a Tensor, array or list as a NumPy array


def _predictor(model_or_fn: Any) -> Callable:
    """A function from a NumPy ``(N, 2)`` array to scores or labels (NumPy)."""
    if hasattr(model_or_fn, "predict") and hasattr(model_or_fn, "compile"):
        return lambda grid: model_or_fn.predict(grid, batch_size=4096)
    from graphgrad.nn.module import Module

    if isinstance(model_or_fn, Module):
        from graphgrad.core.autograd import no_grad

        def run(grid):
            floats = [p.dtype for p in model_or_fn.parameters() if p.dtype.kind == "f"]
            was_training = model_or_fn.training
            model_or_fn.eval()
            try:
                with no_grad():
                    return _host(model_or_fn(Tensor(grid.astype(floats[0] if floats else np.float32))))
            finally:
                model_or_fn.train(was_training)

        return run
    if callable(model_or_fn):
        return lambda grid: _host(model_or_fn(grid))
    raise TypeError(f"plot_decision_boundary needs a Model, a Module or a function, got {type(model_or_fn).__name__}")


def _classes(scores, threshold: Optional[float]):
    scores = _host(scores)
    if scores.dtype.kind in "biu":
        return scores.reshape(-1).astype(np.int64)
    if scores.ndim == 2 and scores.shape[1] > 1:
        return scores.argmax(axis=1)
    flat = scores.reshape(-1)
    if threshold is None:
        threshold = 0.5 if flat.min() >= 0.0 and flat.max() <= 1.0 else 0.0
    return (flat > threshold).astype(np.int64)


def plot_decision_boundary(model_or_fn: Any, x: Any, y: Any, path: str, resolution: int = 200,
                           margin: float = 0.1, threshold: Optional[float] = None, title: Optional[str] = None) -> str:
    """Draw the class regions of a classifier of 2-D points and the points ``(x, y)``.

    Args:
        model_or_fn: a ``gg.Model``, a ``gg.nn.Module`` or a function of a NumPy ``(N, 2)`` array,
            returning class scores ``(N, C)``, binary scores ``(N,)``/``(N, 1)`` (probabilities are
            cut at 0.5, other scores at 0, unless ``threshold`` is given) or labels.
        x: points ``(N, 2)``; y: their labels ``(N,)``.
        path: the image file (``.png``; other formats with matplotlib).
        resolution: grid points per axis.
        margin: extra space around the points, as a fraction of their range.

    Returns:
        ``path``.

    Examples:
        >>> plot_decision_boundary(model, x, y, "spiral.png")
    """
    points, labels = _host(x).astype(np.float64), _host(y).reshape(-1).astype(np.int64)
    if points.ndim != 2 or points.shape[1] != 2:
        raise ValueError(f"plot_decision_boundary: x must be (N, 2), got {points.shape}")
    if labels.shape[0] != points.shape[0]:
        raise ValueError(f"plot_decision_boundary: {points.shape[0]} points but {labels.shape[0]} labels")
    lo, hi = points.min(axis=0), points.max(axis=0)
    pad = (hi - lo) * margin + 1e-6
    lo, hi = lo - pad, hi + pad
    xs = np.linspace(lo[0], hi[0], int(resolution))
    ys = np.linspace(lo[1], hi[1], int(resolution))
    gx, gy = np.meshgrid(xs, ys)  # row i has y = ys[i]
    grid = np.stack([gx.ravel(), gy.ravel()], axis=1).astype(np.float32)
    regions = _classes(_predictor(model_or_fn)(grid), threshold).reshape(gx.shape)
    directory = os.path.dirname(os.path.abspath(path))
    os.makedirs(directory, exist_ok=True)
    mpl = _load_matplotlib()
    if mpl is None:
        return _pillow(regions, points, labels, lo, hi, path)
    FigureCanvasAgg, ListedColormap, Figure = mpl
    n_classes = int(max(regions.max(), labels.max())) + 1
    colours = [tuple(c / 255 for c in _COLOURS[i % len(_COLOURS)]) for i in range(n_classes)]
    fig = Figure(figsize=(6, 5))
    FigureCanvasAgg(fig)
    ax = fig.add_subplot(1, 1, 1)
    ax.contourf(gx, gy, regions, levels=np.arange(n_classes + 1) - 0.5, cmap=ListedColormap(colours), alpha=0.3)
    ax.scatter(points[:, 0], points[:, 1], c=[colours[i] for i in labels], s=14, edgecolors="k", linewidths=0.4)
    ax.set_xlim(lo[0], hi[0])
    ax.set_ylim(lo[1], hi[1])
    ax.set_title(title or "decision boundary")
    fig.tight_layout()
    fig.savefig(path)
    return path


def _pillow_region_colour(label: int) -> tuple:
    """The light colour of class ``label``'s region in the Pillow rendering."""
    return tuple(int(c * 0.35 + 255 * 0.65) for c in _COLOURS[label % len(_COLOURS)])


def _pillow(regions, points, labels, lo, hi, path: str) -> str:
    try:
        from PIL import Image, ImageDraw
    except ImportError as exc:
        raise ImportError("plot_decision_boundary needs matplotlib ('graphgrad[plots]') or Pillow "
                          "('graphgrad[images]')") from exc
    light = np.array([_pillow_region_colour(i) for i in range(len(_COLOURS))], dtype=np.uint8)
    rgb = light[regions % len(_COLOURS)][::-1]  # image row 0 is the top: the largest y
    size = max(400, regions.shape[0])
    image = Image.fromarray(np.ascontiguousarray(rgb), "RGB").resize((size, size), Image.NEAREST)
    draw = ImageDraw.Draw(image)
    scale = (size - 1) / (hi - lo)
    for (px, py), label in zip(points, labels):
        cx, cy = (px - lo[0]) * scale[0], (size - 1) - (py - lo[1]) * scale[1]
        colour = tuple(int(c) for c in _COLOURS[label % len(_COLOURS)])
        draw.ellipse([cx - 3, cy - 3, cx + 3, cy + 3], fill=colour, outline=(0, 0, 0))
    image.save(path)
    return path
