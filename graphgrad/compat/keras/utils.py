"""``keras.utils``: ``to_categorical``, ``set_random_seed``, ``normalize``, ``pad_sequences`` and
``PyDataset`` / ``Sequence`` (batches by index, which ``fit``, ``evaluate`` and ``predict`` accept as ``x``)."""
from __future__ import annotations

from typing import Any, Optional

import graphgrad as gg
from graphgrad.backend import np

__all__ = ["to_categorical", "set_random_seed", "normalize", "pad_sequences", "PyDataset", "Sequence", "batches_of",
           "get_file", "plot_model", "model_to_dot", "Progbar", "get_custom_objects", "register_keras_serializable"]


def to_categorical(x: Any, num_classes: Optional[int] = None) -> Any:
    """One-hot rows (float32) for integer class labels: ``to_categorical([0, 2], 3)``."""
    labels = np.asarray(gg.tensor(x).numpy() if isinstance(x, gg.Tensor) else x)
    if labels.ndim > 1 and labels.shape[-1] == 1:
        labels = labels.reshape(labels.shape[:-1])
    labels = labels.astype(np.int64)
    if labels.size and labels.min() < 0:
        raise ValueError(f"to_categorical: labels must be non-negative, got {int(labels.min())}")
    n = int(labels.max()) + 1 if num_classes is None else int(num_classes)
    if labels.size and labels.max() >= n:
        raise ValueError(f"to_categorical: label {int(labels.max())} does not fit num_classes={n}")
    return gg.one_hot(gg.tensor(labels), n).numpy().astype(np.float32)


def set_random_seed(seed: int) -> None:
    """Seed graphgrad's generator (weights, dropout, shuffling) and NumPy's global one, as Keras does."""
    gg.manual_seed(int(seed))
    np.random.seed(int(seed))
    import random

    random.seed(int(seed))


def normalize(x: Any, axis: int = -1, order: int = 2) -> Any:
    """Rows scaled to unit ``order``-norm along ``axis``."""
    x = np.asarray(x, dtype=np.float64)
    norm = np.linalg.norm(x, ord=order, axis=axis, keepdims=True)
    return x / np.where(norm == 0, 1, norm)


def pad_sequences(sequences: Any, maxlen: Optional[int] = None, dtype: Any = "int32", padding: str = "pre",
                  truncating: str = "pre", value: float = 0.0) -> Any:
    """Keras' ``pad_sequences``: a ``(len(sequences), maxlen)`` array (``maxlen`` defaults to the longest),
    shorter sequences padded with ``value`` before (``padding="pre"``) or after (``"post"``) them, longer
    ones cut at the start (``truncating="pre"``) or the end (``"post"``)."""
    if padding not in ("pre", "post") or truncating not in ("pre", "post"):
        raise ValueError(f"pad_sequences: padding and truncating must be 'pre' or 'post', got {padding!r}, "
                         f"{truncating!r}")
    sequences = [np.asarray(s) for s in sequences]
    lengths = [len(s) for s in sequences]
    if maxlen is None:
        maxlen = max(lengths) if lengths else 0
    sample_shape = next((s.shape[1:] for s in sequences if len(s)), ())
    out = np.full((len(sequences), int(maxlen)) + tuple(sample_shape), value, dtype=dtype)
    for i, s in enumerate(sequences):
        if not len(s) or not maxlen:
            continue
        kept = s[-maxlen:] if truncating == "pre" else s[:maxlen]
        if padding == "post":
            out[i, :len(kept)] = kept
        else:
            out[i, -len(kept):] = kept
    return out


class PyDataset:
    """Keras' ``PyDataset`` (``Sequence``): subclass it with ``__len__`` (batches per epoch) and
    ``__getitem__(index)`` returning one batch ``(x, y)`` (or ``x`` for ``predict``); ``on_epoch_end`` runs
    after each epoch. The worker arguments are accepted and ignored (batches are made in order, in this
    process)."""

    def __init__(self, workers: int = 1, use_multiprocessing: bool = False, max_queue_size: int = 10) -> None:
        pass

    def __len__(self) -> int:
        raise NotImplementedError(f"{type(self).__name__}: define __len__ (the number of batches)")

    def __getitem__(self, index: int):
        raise NotImplementedError(f"{type(self).__name__}: define __getitem__(index) returning a batch (x, y)")

    def on_epoch_end(self) -> None:
        pass

    @property
    def num_batches(self) -> int:
        return len(self)


Sequence = PyDataset


class batches_of:  # noqa: N801  (an iterable adapter, used as fit's loader)
    """The batches of a ``PyDataset`` (or any object with ``__len__`` and ``__getitem__``) as an iterable
    that starts again each epoch and calls ``on_epoch_end`` when one is done (batches with sample weights,
    ``(x, y, w)``, train in Keras' loop: see ``Model.fit``)."""

    def __init__(self, dataset: Any) -> None:
        self.dataset = dataset

    def __len__(self) -> int:
        return len(self.dataset)

    def __iter__(self):
        for index in range(len(self.dataset)):
            yield self.dataset[index]
        if hasattr(self.dataset, "on_epoch_end"):
            self.dataset.on_epoch_end()


class steps_of:  # noqa: N801  (an iterable adapter, used as fit's loader)
    """``steps`` batches per epoch of a Python generator (``next()`` each time; Keras' ``fit(generator,
    steps_per_epoch=...)``) or of a ``PyDataset`` (by index, going on where the last epoch stopped and
    wrapping round). ``first()`` peeks at the first batch (to build the model) without losing it."""

    def __init__(self, source: Any, steps: Optional[int]) -> None:
        self.source, self._peeked, self._index = source, [], 0
        if steps is None:
            if not is_dataset(source):
                raise ValueError("keras: data from a Python generator needs steps_per_epoch= (steps= in evaluate "
                                 "and predict): the number of batches to draw per epoch")
            steps = len(source)
        self.steps = int(steps)

    def _next(self) -> Any:
        if self._peeked:
            return self._peeked.pop()
        if is_dataset(self.source):
            n = len(self.source)
            batch = self.source[self._index % n]
            self._index += 1
            if self._index % n == 0 and hasattr(self.source, "on_epoch_end"):
                self.source.on_epoch_end()
            return batch
        return next(self.source)

    def first(self) -> Any:
        if not self._peeked:
            self._peeked.append(self._next())
        return self._peeked[0]

    def __len__(self) -> int:
        return self.steps

    def __iter__(self):
        for _ in range(self.steps):
            batch = self._next()
            yield tuple(batch) if isinstance(batch, list) and len(batch) in (2, 3) else batch


def is_generator(x: Any) -> bool:
    """Whether ``x`` is a Python generator or iterator of batches (not an array, a list or a PyDataset)."""
    return hasattr(x, "__next__") and not hasattr(x, "shape") and not is_dataset(x)


def is_dataset(x: Any) -> bool:
    """Whether ``x`` is a ``PyDataset``-like object (batches by index), not an array or a list of arrays."""
    if isinstance(x, PyDataset):
        return True
    return (hasattr(x, "__getitem__") and hasattr(x, "__len__") and not hasattr(x, "shape")
            and not isinstance(x, (list, tuple, dict)) and hasattr(x, "on_epoch_end"))


def get_file(fname: Optional[str] = None, origin: Optional[str] = None, untar: bool = False, md5_hash: Any = None,
             file_hash: Any = None, cache_subdir: str = "datasets", hash_algorithm: str = "auto",
             extract: bool = False, archive_format: str = "auto", cache_dir: Optional[str] = None, **kwargs) -> str:
    """The path of ``fname`` in Keras' cache (``~/.keras/<cache_subdir>/``, or ``cache_dir``) when the
    file is there; nothing is downloaded, so a missing file is an error naming the URL and the place to
    put it. With ``extract=True``/``untar=True`` an archive there is unpacked next to it (once)."""
    import os
    import tarfile
    import zipfile

    if fname is None:
        fname = os.path.basename(str(origin).split("?")[0])
    base = os.path.expanduser(cache_dir or "~/.keras")
    folder = os.path.join(base, cache_subdir) if not os.path.isabs(cache_subdir) else cache_subdir
    path = fname if os.path.isabs(fname) else os.path.join(folder, fname)
    candidates = [path, path + ".tar.gz"] if untar else [path]
    found = next((c for c in candidates if os.path.exists(c)), None)
    if found is None:
        raise FileNotFoundError(f"keras.utils.get_file: {path!r} is not there and graphgrad does not download: fetch "
                                f"{origin} and save it as {path!r}")
    if untar or extract:
        target = path[: -len(".tar.gz")] if path.endswith(".tar.gz") else (path if untar else os.path.splitext(path)[0])
        if not os.path.exists(target) or target == found:
            target = target if target != found else found + "_extracted"
            if tarfile.is_tarfile(found):
                with tarfile.open(found) as archive:
                    archive.extractall(os.path.dirname(target) if untar else target, filter="data")
            elif zipfile.is_zipfile(found):
                with zipfile.ZipFile(found) as archive:
                    archive.extractall(os.path.dirname(target) if untar else target)
        return target if untar or extract else found
    return found


def plot_model(model: Any, to_file: str = "model.png", show_shapes: bool = False, **kwargs) -> None:
    """Drawing a model needs pydot and graphviz, which graphgrad does not use: as Keras without them, a
    message is printed and nothing is drawn (``model.summary()`` prints the layers)."""
    print(f"plot_model: graphgrad.compat.keras does not draw models ({to_file} not written); "
          f"use model.summary()")


def model_to_dot(model: Any, *args, **kwargs) -> None:
    raise NotImplementedError("model_to_dot: graphgrad.compat.keras does not draw models; use model.summary()")


class Progbar:
    """Keras' progress bar, reduced to its interface: ``update(current, values)`` / ``add(n, values)``
    print one line with the running means of ``values`` when ``verbose`` is on."""

    def __init__(self, target: Optional[int], width: int = 30, verbose: int = 1, interval: float = 0.05,
                 stateful_metrics: Any = None, unit_name: str = "step") -> None:
        self.target, self.verbose, self.seen = target, verbose, 0
        self._sums: dict = {}

    def update(self, current: int, values: Any = None, finalize: Any = None) -> None:
        for name, value in values or []:
            total, count = self._sums.get(name, (0.0, 0))
            self._sums[name] = (total + float(value), count + 1)
        self.seen = current
        if self.verbose:
            shown = " - ".join(f"{k}: {t / max(c, 1):.4f}" for k, (t, c) in self._sums.items())
            print(f"{current}/{self.target if self.target is not None else '?'}" + (f" - {shown}" if shown else ""))

    def add(self, n: int, values: Any = None) -> None:
        self.update(self.seen + n, values)


_CUSTOM_OBJECTS: dict = {}


def get_custom_objects() -> dict:
    """The table ``load_model`` also looks names up in (``register_keras_serializable`` fills it)."""
    return _CUSTOM_OBJECTS


def register_keras_serializable(package: str = "Custom", name: Optional[str] = None):
    def register(obj: Any) -> Any:
        _CUSTOM_OBJECTS[f"{package}>{name or obj.__name__}"] = obj
        _CUSTOM_OBJECTS[name or obj.__name__] = obj
        return obj

    return register


def unpack_x_y_sample_weight(data: Any) -> tuple:
    """Keras' ``unpack_x_y_sample_weight``: ``(x, y, sample_weight)`` from ``x``, ``(x,)``, ``(x, y)`` or
    ``(x, y, sample_weight)`` (missing items ``None``)."""
    if isinstance(data, list):
        data = tuple(data)
    if not isinstance(data, tuple):
        return data, None, None
    if len(data) == 1:
        return data[0], None, None
    if len(data) == 2:
        return data[0], data[1], None
    if len(data) == 3:
        return data[0], data[1], data[2]
    raise ValueError(f"Data is expected to be in format `x`, `(x,)`, `(x, y)`, or `(x, y, sample_weight)`, "
                     f"found: {data}")


def pack_x_y_sample_weight(x: Any, y: Any = None, sample_weight: Any = None) -> Any:
    if y is None:
        return x if not isinstance(x, (list, tuple)) else (x,)
    if sample_weight is None:
        return (x, y)
    return (x, y, sample_weight)


def array_to_img(x: Any, data_format: Optional[str] = None, scale: bool = True, dtype: Optional[str] = None) -> Any:
    """``keras.utils.array_to_img`` (see ``keras.preprocessing.image``)."""
    from graphgrad.compat.keras.preprocessing import image

    return image.array_to_img(x, data_format=data_format, scale=scale, dtype=dtype)


def img_to_array(img: Any, data_format: Optional[str] = None, dtype: Optional[str] = None) -> Any:
    from graphgrad.compat.keras.preprocessing import image

    return image.img_to_array(img, data_format=data_format, dtype=dtype)


def load_img(path: Any, color_mode: str = "rgb", target_size: Any = None, interpolation: str = "nearest",
             keep_aspect_ratio: bool = False) -> Any:
    from graphgrad.compat.keras.preprocessing import image

    return image.load_img(path, color_mode=color_mode, target_size=target_size, interpolation=interpolation)


def save_img(path: Any, x: Any, data_format: Optional[str] = None, file_format: Optional[str] = None,
             scale: bool = True, **kwargs) -> None:
    from graphgrad.compat.keras.preprocessing import image

    image.save_img(path, x, data_format=data_format, file_format=file_format, scale=scale, **kwargs)
