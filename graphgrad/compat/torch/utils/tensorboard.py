"""``torch.utils.tensorboard.SummaryWriter``: graphgrad's TensorBoard event writer (needs the
``tensorboard`` package, as PyTorch's does): ``add_scalar``, ``add_scalars``, ``add_histogram``,
``add_text``, ``add_graph``, ``flush``, ``close`` (see graphgrad/train/tensorboard.py), and here PyTorch's
image summaries: ``add_image``, ``add_images`` and ``add_figure`` (a matplotlib figure), ``add_pr_curve``
and ``add_embedding`` (the projector's files)."""
from __future__ import annotations

import io
from typing import Any, Optional

import graphgrad as _gg
from graphgrad.backend import np


def host_array(value: Any):
    """``value`` (a tensor, an array, a number or a nested list) as a NumPy array on the host."""
    if isinstance(value, _gg.Tensor):
        return value.numpy()
    return _gg.backend.to_numpy(value) if _gg.backend.is_array(value) else np.asarray(value)


def _to_hwc(array, dataformats: str):
    """``array`` laid out as ``dataformats`` ("CHW", "HWC", "HW", "NCHW", "NHWC") as one (H, W, 3 or 4)
    image; a batch becomes a grid of 8 columns, one channel is repeated to three (PyTorch's layout)."""
    dataformats = dataformats.upper()
    if len(dataformats) != array.ndim:
        raise ValueError(f"dataformats {dataformats!r} does not match an image of shape {array.shape}")
    if dataformats[0] == "N":  # (N, C, H, W) -> a grid
        batch = array.transpose([dataformats.index(c) for c in "NCHW"])
        if batch.shape[1] == 1:
            batch = np.concatenate([batch] * 3, axis=1)
        n, c, h, w = batch.shape
        cols = min(n, 8)
        rows = -(-n // cols)
        canvas = np.zeros((c, h * rows, w * cols), dtype=batch.dtype)
        for i in range(n):
            r, k = divmod(i, cols)
            canvas[:, r * h:(r + 1) * h, k * w:(k + 1) * w] = batch[i]
        return canvas.transpose(1, 2, 0)
    if dataformats == "HW":
        return np.stack([array] * 3, axis=2)
    hwc = array.transpose([dataformats.index(c) for c in "HWC"])
    return np.concatenate([hwc] * 3, axis=2) if hwc.shape[2] == 1 else hwc


class SummaryWriter(_gg.train.SummaryWriter):
    __doc__ = _gg.train.SummaryWriter.__doc__

    def add_image(self, tag: str, img_tensor: Any, global_step: Optional[int] = None,
                  walltime: Optional[float] = None, dataformats: str = "CHW") -> None:
        """Record an image: a float tensor in [0, 1] (scaled by 255) or a uint8 one, laid out as
        ``dataformats`` (default ``"CHW"``; one channel shows as gray)."""
        from PIL import Image

        array = host_array(img_tensor)
        scale = 1 if array.dtype == np.uint8 else 255
        hwc = np.clip(_to_hwc(array.astype(np.float32), dataformats) * scale, 0, 255).astype(np.uint8)
        height, width, channels = hwc.shape
        buffer = io.BytesIO()
        Image.fromarray(hwc).save(buffer, format="PNG")
        summary_pb2 = self._pb["summary_pb2"]
        image = summary_pb2.Summary.Image(height=height, width=width, colorspace=channels,
                                          encoded_image_string=buffer.getvalue())
        self._summary(summary_pb2.Summary.Value(tag=tag, image=image), global_step, walltime)

    def add_images(self, tag: str, img_tensor: Any, global_step: Optional[int] = None,
                   walltime: Optional[float] = None, dataformats: str = "NCHW") -> None:
        """Record a batch of images as one grid image (8 per row)."""
        self.add_image(tag, img_tensor, global_step, walltime, dataformats=dataformats)

    def add_figure(self, tag: str, figure: Any, global_step: Optional[int] = None, close: bool = True,
                   walltime: Optional[float] = None) -> None:
        """Record a matplotlib figure (or a list of them, as a grid) as an image; ``close`` closes it."""
        figures = figure if isinstance(figure, (list, tuple)) else [figure]
        images = []
        for fig in figures:
            from matplotlib.backends.backend_agg import FigureCanvasAgg

            canvas = FigureCanvasAgg(fig)
            canvas.draw()
            images.append(np.asarray(canvas.buffer_rgba())[:, :, :3].copy())
            if close:
                import matplotlib.pyplot as plt

                plt.close(fig)
        if isinstance(figure, (list, tuple)):
            self.add_images(tag, np.stack(images), global_step, walltime, dataformats="NHWC")
        else:
            self.add_image(tag, images[0], global_step, walltime, dataformats="HWC")

    def add_pr_curve(self, tag: str, labels: Any, predictions: Any, global_step: Optional[int] = None,
                     num_thresholds: int = 127, weights: Any = None, walltime: Optional[float] = None) -> None:
        """Record a precision-recall curve of ``predictions`` (probabilities in [0, 1]) against the 0/1
        ``labels``, at ``num_thresholds`` thresholds (TensorBoard's PR-curve plugin)."""
        from tensorboard.compat.proto import tensor_pb2, tensor_shape_pb2
        from tensorboard.plugins.pr_curve import plugin_data_pb2

        labels = host_array(labels).reshape(-1).astype(np.float64)
        predictions = host_array(predictions).reshape(-1).astype(np.float64)
        num_thresholds = min(num_thresholds, 127)
        weight = 1.0 if weights is None else host_array(weights).reshape(-1).astype(np.float64)
        buckets = np.floor(predictions * (num_thresholds - 1)).astype(np.int32)
        span = (0, num_thresholds - 1)
        tp_buckets, _ = np.histogram(buckets, bins=num_thresholds, range=span, weights=labels * weight)
        fp_buckets, _ = np.histogram(buckets, bins=num_thresholds, range=span, weights=(1.0 - labels) * weight)
        tp = np.cumsum(tp_buckets[::-1])[::-1]
        fp = np.cumsum(fp_buckets[::-1])[::-1]
        tn, fn = fp[0] - fp, tp[0] - tp
        precision = tp / np.maximum(1e-7, tp + fp)
        recall = tp / np.maximum(1e-7, tp + fn)
        data = np.stack((tp, fp, tn, fn, precision, recall))
        summary_pb2 = self._pb["summary_pb2"]
        content = plugin_data_pb2.PrCurvePluginData(version=0, num_thresholds=num_thresholds).SerializeToString()
        metadata = summary_pb2.SummaryMetadata(
            plugin_data=summary_pb2.SummaryMetadata.PluginData(plugin_name="pr_curves", content=content))
        shape = tensor_shape_pb2.TensorShapeProto(dim=[tensor_shape_pb2.TensorShapeProto.Dim(size=d)
                                                       for d in data.shape])
        tensor = tensor_pb2.TensorProto(dtype="DT_FLOAT", float_val=data.reshape(-1).tolist(), tensor_shape=shape)
        self._summary(summary_pb2.Summary.Value(tag=tag, metadata=metadata, tensor=tensor), global_step, walltime)

    def add_embedding(self, mat: Any, metadata: Any = None, label_img: Any = None, global_step: Optional[int] = None,
                      tag: str = "default", metadata_header: Any = None) -> None:
        """Record an embedding for TensorBoard's projector, laid out as PyTorch writes it: under
        ``<log_dir>/<global_step as 5 digits>/<tag>/`` the vectors (``tensors.tsv``), the labels
        (``metadata.tsv``, one per row, or a header row and columns with ``metadata_header``) and the
        images (``sprite.png``, a square grid), listed in ``<log_dir>/projector_config.pbtxt``."""
        import os
        from urllib.parse import quote

        matrix = host_array(mat)
        if matrix.ndim != 2:
            raise ValueError(f"add_embedding: mat must be 2-D (N, D), got shape {matrix.shape}")
        subdir = f"{str(global_step or 0).zfill(5)}/{quote(tag, safe='')}"
        folder = os.path.join(self.log_dir, subdir)
        os.makedirs(folder, exist_ok=True)
        if metadata is not None:
            if len(metadata) != matrix.shape[0]:
                raise ValueError("add_embedding: #labels should equal #data points")
            with open(os.path.join(folder, "metadata.tsv"), "w", encoding="utf8") as out:
                if metadata_header is not None:
                    out.write("\t".join(str(h) for h in metadata_header) + "\n")
                    for row in metadata:
                        out.write("\t".join(str(x) for x in row) + "\n")
                else:
                    for label in metadata:
                        out.write(f"{label}\n")
        if label_img is not None:
            from PIL import Image

            images = host_array(label_img).astype(np.float32)
            if images.shape[0] != matrix.shape[0]:
                raise ValueError("add_embedding: #images should equal #data points")
            n, c, h, w = images.shape
            if c == 1:
                images = np.concatenate([images] * 3, axis=1)
            cols = min(n, int(np.ceil(np.sqrt(n))))
            square = np.zeros((w * cols, w * cols, 3), np.float32)  # PyTorch's sprite: a square as wide as the grid
            for i in range(n):
                r, k = divmod(i, cols)
                square[r * h:(r + 1) * h, k * w:(k + 1) * w] = images[i, :3].transpose(1, 2, 0)
            Image.fromarray(np.uint8(np.clip(square * 255, 0, 255))).save(os.path.join(folder, "sprite.png"))
        with open(os.path.join(folder, "tensors.tsv"), "w", encoding="utf8") as out:
            for row in matrix:
                out.write("\t".join(str(x.item()) for x in row) + "\n")
        lines = ["embeddings {", f'  tensor_name: "{tag}:{str(global_step or 0).zfill(5)}"']
        if metadata is not None:
            lines.append(f'  metadata_path: "{subdir}/metadata.tsv"')
        if label_img is not None:
            lines += ["  sprite {", f'    image_path: "{subdir}/sprite.png"', f"    single_image_dim: {w}",
                      f"    single_image_dim: {h}", "  }"]
        lines += [f'  tensor_path: "{subdir}/tensors.tsv"', "}"]
        with open(os.path.join(self.log_dir, "projector_config.pbtxt"), "a", encoding="utf8") as out:
            out.write("\n".join(lines) + "\n")


__all__ = ["SummaryWriter"]
