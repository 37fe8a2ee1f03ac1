"""Built-in datasets: generated toys (spiral, moons, circles, blobs) and readers of standard files.

Generated toys need no files. ``load_digits`` uses the 8x8 digits bundled with scikit-learn (the
optional ``datasets`` extra). ``load_mnist`` and ``load_cifar10`` read the original files from a
folder you downloaded them to (nothing is downloaded here) and raise ``FileNotFoundError`` naming
the files, the folder and where to get them when they are missing.

Conventions of the image loaders: images are float32 in ``[0, 1]`` shaped ``(N, C, H, W)``; labels
are int64 of shape ``(N,)``.
"""
from __future__ import annotations

import gzip
import io
import os
import pickle
import struct
import tarfile
import zlib
from typing import Optional, Union

from graphgrad.backend import np
from graphgrad.errors import FileLoadError
from graphgrad.graph import files
from graphgrad.core.creation import full, linspace, randn
from graphgrad.core.random import Generator, rng_of
from graphgrad.core.tensor import Tensor
from graphgrad.ops import concatenate, cos, sin, stack

PathLike = Union[str, "os.PathLike[str]"]


def make_spiral(points_per_class: int = 100, classes: int = 3, noise: float = 0.2,
                generator: Optional[Generator] = None) -> tuple[Tensor, Tensor]:
    """The classic interleaved-spirals classification toy (as in CS231n).

    Class ``c`` has points ``r * (sin t, cos t)`` with radius ``r`` from 0 to 1 and angle ``t`` from
    ``4c`` to ``4(c + 1)`` plus Gaussian noise of std ``noise``.

    Returns:
        ``x`` of shape ``(points_per_class * classes, 2)`` float32 and int64 labels ``y`` of shape
        ``(points_per_class * classes,)``.

    Examples:
        >>> x, y = make_spiral(100, 3, generator=gg.Generator(0))
        >>> x.shape, y.shape
        ((300, 2), (300,))
    """
    generator = generator or Generator(0)
    radius = linspace(0.0, 1.0, points_per_class)
    xs, ys = [], []
    for c in range(classes):
        theta = linspace(4.0 * c, 4.0 * (c + 1), points_per_class) + randn(points_per_class, generator=generator) * noise
        xs.append(stack([radius * sin(theta), radius * cos(theta)], axis=1))
        ys.append(full((points_per_class,), c))
    return concatenate(xs, axis=0), concatenate(ys, axis=0)


# ---- 2-d toys (same definitions as scikit-learn's make_moons / make_circles / make_blobs) ----------
def _finish(x, y, noise: float, shuffle: bool, rng) -> tuple[Tensor, Tensor]:
    if noise:
        x = x + rng.normal(0.0, noise, size=x.shape)
    if shuffle:
        order = rng.permutation(len(y))
        x, y = x[order], y[order]
    return Tensor(x.astype(np.float32)), Tensor(y.astype(np.int64))


def make_moons(n_samples: int = 100, noise: float = 0.0, shuffle: bool = True,
               generator: Optional[Generator] = None) -> tuple[Tensor, Tensor]:
    """Two interleaving half circles (binary classification).

    Returns:
        ``x`` float32 ``(n_samples, 2)`` and int64 labels ``y`` ``(n_samples,)`` (0: upper moon,
        1: lower moon), shuffled unless ``shuffle=False``. ``generator`` defaults to ``gg.Generator(0)``.

    Examples:
        >>> x, y = make_moons(200, noise=0.1, generator=gg.Generator(0))
        >>> x.shape, y.dtype
        ((200, 2), dtype('int64'))
    """
    rng = rng_of(generator or Generator(0))
    n_out = n_samples // 2
    n_in = n_samples - n_out
    t_out, t_in = np.linspace(0, np.pi, n_out), np.linspace(0, np.pi, n_in)
    x = np.concatenate([np.stack([np.cos(t_out), np.sin(t_out)], 1),
                        np.stack([1 - np.cos(t_in), 1 - np.sin(t_in) - 0.5], 1)])
    y = np.concatenate([np.zeros(n_out), np.ones(n_in)])
    return _finish(x, y, noise, shuffle, rng)


def make_circles(n_samples: int = 100, noise: float = 0.0, factor: float = 0.8, shuffle: bool = True,
                 generator: Optional[Generator] = None) -> tuple[Tensor, Tensor]:
    """A large circle (label 0) around a smaller one of radius ``factor`` (label 1).

    Returns ``x`` float32 ``(n_samples, 2)`` and int64 ``y`` ``(n_samples,)``.
    """
    if not 0 <= factor < 1:
        raise ValueError(f"factor must be in [0, 1), got {factor}")
    rng = rng_of(generator or Generator(0))
    n_out = n_samples // 2
    n_in = n_samples - n_out
    t_out = np.linspace(0, 2 * np.pi, n_out, endpoint=False)
    t_in = np.linspace(0, 2 * np.pi, n_in, endpoint=False)
    x = np.concatenate([np.stack([np.cos(t_out), np.sin(t_out)], 1),
                        factor * np.stack([np.cos(t_in), np.sin(t_in)], 1)])
    y = np.concatenate([np.zeros(n_out), np.ones(n_in)])
    return _finish(x, y, noise, shuffle, rng)


def make_blobs(n_samples: int = 100, centers: Union[int, list] = 3, n_features: int = 2,
               cluster_std: float = 1.0, center_box: tuple[float, float] = (-10.0, 10.0), shuffle: bool = True,
               generator: Optional[Generator] = None) -> tuple[Tensor, Tensor]:
    """Isotropic Gaussian blobs: ``centers`` clusters (an int, drawn uniformly in ``center_box``, or a
    list of coordinates) of std ``cluster_std``, samples split as evenly as possible.

    Returns ``x`` float32 ``(n_samples, n_features)`` and int64 cluster labels ``y`` ``(n_samples,)``.
    """
    rng = rng_of(generator or Generator(0))
    if isinstance(centers, int):
        centers = rng.uniform(center_box[0], center_box[1], size=(centers, n_features))
    else:
        centers = np.asarray(centers, dtype=np.float64)
        if centers.ndim != 2:
            raise ValueError(f"centers must be an int or a (k, n_features) list, got shape {centers.shape}")
    k = len(centers)
    counts = [n_samples // k + (1 if i < n_samples % k else 0) for i in range(k)]
    x = np.concatenate([c + rng.normal(0.0, cluster_std, size=(m, centers.shape[1]))
                        for c, m in zip(centers, counts)])
    y = np.repeat(np.arange(k), counts)
    return _finish(x, y, 0.0, shuffle, rng)


# ---- scikit-learn's 8x8 digits ---------------------------------------------------------------------
def load_digits(test_size: Union[float, int] = 0.2, seed: int = 0, flatten: bool = False
                ) -> tuple[tuple[Tensor, Tensor], tuple[Tensor, Tensor]]:
    """The 1797 8x8 handwritten digits bundled with scikit-learn, split into train and test.

    Needs scikit-learn: ``pip install "graphgrad[datasets]"``.

    Args:
        test_size: fraction (``0 < f < 1``) or number of samples held out for testing.
        seed: seed of the random split (the same seed gives the same split).
        flatten: return images as ``(N, 64)`` rows instead of ``(N, 1, 8, 8)``.

    Returns:
        ``(x_train, y_train), (x_test, y_test)``: float32 images in ``[0, 1]`` (the original 0..16
        ink levels divided by 16) and int64 labels 0..9.

    Examples:
        >>> (x_train, y_train), (x_test, y_test) = load_digits(test_size=0.2, seed=0)
        >>> x_train.shape, x_test.shape
        ((1438, 1, 8, 8), (359, 1, 8, 8))
    """
    try:
        from sklearn.datasets import load_digits as _sk_load_digits
    except ImportError as e:
        raise ImportError('load_digits needs scikit-learn, which bundles the digits: '
                          'pip install "graphgrad[datasets]" (or pip install scikit-learn)') from e
    bunch = _sk_load_digits()
    images = np.asarray(bunch.images, dtype=np.float32) / np.float32(16.0)
    labels = np.asarray(bunch.target, dtype=np.int64)
    n = len(labels)
    n_test = int(round(test_size * n)) if isinstance(test_size, float) else int(test_size)
    if not 0 < n_test < n:
        raise ValueError(f"test_size must leave samples in both splits, got {test_size} of {n} samples")
    images = images.reshape(n, 64) if flatten else images.reshape(n, 1, 8, 8)
    order = np.random.default_rng(seed).permutation(n)
    test, train = order[:n_test], order[n_test:]
    return ((Tensor(images[train]), Tensor(labels[train])), (Tensor(images[test]), Tensor(labels[test])))


# ---- IDX files (MNIST, Fashion-MNIST) ---------------------------------------------------------------
_IDX_DTYPES = {0x08: ">u1", 0x09: ">i1", 0x0B: ">i2", 0x0C: ">i4", 0x0D: ">f4", 0x0E: ">f8"}


def _open_maybe_gzip(path: str):
    with open(path, "rb") as f:
        gz = f.read(2) == b"\x1f\x8b"
    return gzip.open(path, "rb") if gz else open(path, "rb")


def read_idx(path: PathLike):
    """Read an IDX file (the MNIST format), gzip-compressed or raw, into a NumPy array.

    The header is two zero bytes, a type code (0x08 = uint8 ...), the number of dimensions and each
    dimension as a big-endian int32; the data follows in C order. The header is read and checked
    first: data it declares beyond ``graphgrad.config.max_load_bytes`` is refused before anything is
    decompressed (:class:`~graphgrad.errors.LoadLimitError`), and exactly the declared bytes are read
    after it. A broken file raises :class:`~graphgrad.errors.FileLoadError` (a ValueError) naming it.
    """
    path = os.fspath(path)
    try:
        with _open_maybe_gzip(path) as f:
            return _read_idx_stream(f, path, isinstance(f, gzip.GzipFile))
    except (FileLoadError, OSError) as exc:
        if isinstance(exc, (FileLoadError, FileNotFoundError, IsADirectoryError, PermissionError)):
            raise
        # gzip's BadGzipFile and other read errors of a corrupt stream
        raise FileLoadError(f"{path} is a corrupt IDX file ({type(exc).__name__}: {exc})") from None
    except (EOFError, zlib.error) as exc:
        raise FileLoadError(f"{path} is a truncated or corrupt gzip IDX file ({type(exc).__name__}: {exc})") from None


def _read_idx_stream(f, path: str, compressed: bool):
    magic = f.read(4)
    if len(magic) < 4 or magic[0] != 0 or magic[1] != 0 or magic[2] not in _IDX_DTYPES:
        raise FileLoadError(f"{path} is not an IDX file: bad magic number {magic!r}")
    ndim = magic[3]
    dims = f.read(4 * ndim)
    if len(dims) < 4 * ndim:
        raise FileLoadError(f"{path}: IDX header truncated ({ndim} dimensions declared)")
    shape = struct.unpack(f">{ndim}i", dims)
    if any(d < 0 for d in shape):
        raise FileLoadError(f"{path}: IDX header declares the negative shape {shape}")
    dtype = np.dtype(_IDX_DTYPES[magic[2]])
    expected = dtype.itemsize
    for d in shape:
        expected *= d
    files.check_load_size(expected, path, f"its IDX header (shape {shape}, {dtype})")
    if not compressed:  # a raw file's size is known: check the declaration before allocating
        present = os.fstat(f.fileno()).st_size - 4 - 4 * ndim
        if present != expected:
            raise FileLoadError(f"{path}: IDX header says shape {shape} ({expected} bytes of data) but the file "
                                f"has {present} bytes after the header")
    # a gzip stream's length is unknown until read: the buffer grows with the data actually there
    raw = files.read_exactly(f, expected, path, f"the IDX data (shape {shape}, {dtype})", grow=compressed)
    if f.read(1):
        raise FileLoadError(f"{path}: IDX header says shape {shape} ({expected} bytes of data) but the file "
                            "has more bytes after them")
    return raw.view(dtype).reshape(shape).astype(dtype.newbyteorder("="))


_MNIST = {
    "mnist": ("MNIST", "https://ossci-datasets.s3.amazonaws.com/mnist/ "
                       "(mirror of http://yann.lecun.com/exdb/mnist/)"),
    "fashion": ("FashionMNIST", "https://github.com/zalandoresearch/fashion-mnist (folder data/fashion) or "
                                "http://fashion-mnist.s3-website.eu-central-1.amazonaws.com/"),
}


def find_file(folders: list[str], name: str) -> Optional[str]:
    """The first ``folder/name`` or ``folder/name.gz`` that exists, else ``None``."""
    for folder in folders:
        for candidate in (name, name + ".gz"):
            path = os.path.join(folder, candidate)
            if os.path.isfile(path):
                return path
    return None


def load_mnist(root: PathLike, train: bool = True, kind: str = "mnist") -> tuple[Tensor, Tensor]:
    """Read MNIST or Fashion-MNIST from the original IDX files in ``root``.

    Files (each raw or ``.gz``): ``train-images-idx3-ubyte``, ``train-labels-idx1-ubyte`` (train) and
    ``t10k-images-idx3-ubyte``, ``t10k-labels-idx1-ubyte`` (test). They are looked up in ``root``,
    then in ``root/MNIST/raw`` or ``root/FashionMNIST/raw`` (torchvision's layout).

    Args:
        root: the folder holding the files.
        train: the 60000-image training split, else the 10000-image test split.
        kind: ``"mnist"`` or ``"fashion"`` (only changes the hint when files are missing).

    Returns:
        ``images`` float32 ``(N, 1, 28, 28)`` in ``[0, 1]`` and int64 ``labels`` ``(N,)``.

    Raises:
        FileNotFoundError: naming the missing files, the folder and where to download them.

    Examples:
        >>> x, y = load_mnist("~/data/mnist", train=False)
        >>> x.shape, y.dtype
        ((10000, 1, 28, 28), dtype('int64'))
    """
    if kind not in _MNIST:
        raise ValueError(f"kind must be 'mnist' or 'fashion', got {kind!r}")
    root = os.path.expanduser(os.fspath(root))
    sub, url = _MNIST[kind]
    folders = [root, os.path.join(root, sub, "raw")]
    prefix = "train" if train else "t10k"
    names = [f"{prefix}-images-idx3-ubyte", f"{prefix}-labels-idx1-ubyte"]
    paths = [find_file(folders, n) for n in names]
    missing = [n for n, p in zip(names, paths) if p is None]
    if missing:
        raise FileNotFoundError(
            f"load_mnist(kind={kind!r}, train={train}) needs {' and '.join(missing)} (raw or .gz) in "
            f"{os.path.abspath(root)} (or {os.path.join(os.path.abspath(root), sub, 'raw')}); "
            f"download them from {url}")
    images, labels = read_idx(paths[0]), read_idx(paths[1])
    if images.ndim != 3 or labels.ndim != 1 or len(images) != len(labels):
        raise ValueError(f"{paths[0]} has shape {images.shape} and {paths[1]} shape {labels.shape}; expected "
                         "(N, H, W) images and (N,) labels")
    x = (images.astype(np.float32) / np.float32(255.0))[:, None, :, :]
    return Tensor(x), Tensor(labels.astype(np.int64))


# ---- CIFAR-10 python batches ------------------------------------------------------------------------
_CIFAR_URL = "https://www.cs.toronto.edu/~kriz/cifar-10-python.tar.gz"
_CIFAR_DIR = "cifar-10-batches-py"
_SAFE_GLOBALS = {("numpy.core.multiarray", "_reconstruct"), ("numpy._core.multiarray", "_reconstruct"),
                 ("numpy", "ndarray"), ("numpy", "dtype"), ("_codecs", "encode")}


class _ArrayUnpickler(pickle.Unpickler):
    """Unpickle only plain containers and NumPy arrays: a CIFAR batch never needs more, and a file
    that asks for anything else is refused instead of running its code."""

    def find_class(self, module: str, name: str):
        if (module, name) not in _SAFE_GLOBALS:
            raise pickle.UnpicklingError(f"refusing to load {module}.{name} from a CIFAR batch file")
        return super().find_class(module, name)


class _UnreadablePickle(FileLoadError, pickle.UnpicklingError):
    """A CIFAR batch that is refused (it asks for more than arrays and containers) or broken; caught as
    FileLoadError, ValueError or pickle.UnpicklingError."""


def _read_cifar_batch(f, where: str):
    try:
        batch = _ArrayUnpickler(f, encoding="latin1").load()
    except (pickle.UnpicklingError, EOFError, ValueError, TypeError, KeyError, IndexError, AttributeError,
            UnicodeDecodeError, struct.error) as exc:
        raise _UnreadablePickle(f"{where} is not a readable CIFAR-10 batch ({type(exc).__name__}: {exc})") from None
    if not isinstance(batch, dict):
        raise FileLoadError(f"{where} is not a CIFAR-10 batch (expected a dict)")
    batch = {k.decode() if isinstance(k, bytes) else k: v for k, v in batch.items()}
    if "data" not in batch or "labels" not in batch:
        raise FileLoadError(f"{where} is not a CIFAR-10 batch: it has keys {sorted(map(repr, batch))}, expected "
                            "'data' and 'labels'")
    try:
        data = np.asarray(batch["data"], dtype=np.uint8).reshape(-1, 3, 32, 32)
        labels = np.asarray(batch["labels"], dtype=np.int64).reshape(-1)
    except (ValueError, TypeError, OverflowError) as exc:
        raise FileLoadError(f"{where}: its 'data' or 'labels' are not CIFAR-10 images and labels ({exc})") from None
    if len(data) != len(labels):
        raise FileLoadError(f"{where}: {len(data)} images but {len(labels)} labels")
    return data, labels


def load_cifar10(root: PathLike, train: bool = True) -> tuple[Tensor, Tensor]:
    """Read CIFAR-10 from its python batches.

    Looks for ``data_batch_1`` ... ``data_batch_5`` (train) or ``test_batch`` (test) in ``root``, in
    ``root/cifar-10-batches-py``, or inside ``root/cifar-10-python.tar.gz`` (read without extracting).
    Only NumPy arrays and plain containers are unpickled; anything else in a file is refused.

    Returns:
        ``images`` float32 ``(N, 3, 32, 32)`` in ``[0, 1]`` (50000 train / 10000 test) and int64
        ``labels`` ``(N,)`` in 0..9 (airplane, automobile, bird, cat, deer, dog, frog, horse, ship,
        truck).

    Raises:
        FileNotFoundError: naming the missing files, the folder and the download address.
    """
    root = os.path.expanduser(os.fspath(root))
    names = [f"data_batch_{i}" for i in range(1, 6)] if train else ["test_batch"]
    arrays = None
    for folder in (root, os.path.join(root, _CIFAR_DIR)):
        if all(os.path.isfile(os.path.join(folder, n)) for n in names):
            arrays = []
            for n in names:
                # read whole (bounded by the load limit) and unpickled from memory: a length the pickle
                # declares can then never make a read allocate more than the file holds
                path = os.path.join(folder, n)
                files.check_load_size(os.path.getsize(path), path, "the file")
                with open(path, "rb") as f:
                    arrays.append(_read_cifar_batch(io.BytesIO(f.read()), path))
            break
    tar_path = os.path.join(root, "cifar-10-python.tar.gz")
    if arrays is None and os.path.isfile(tar_path):
        with tarfile.open(tar_path, "r:gz") as tar:
            members = {os.path.basename(m.name): m for m in tar.getmembers() if m.isfile()}
            if all(n in members for n in names):
                arrays = []
                for n in names:  # a member's declared size is checked before it is decompressed
                    files.check_load_size(members[n].size, f"{tar_path}:{n}", "the archive member")
                    data = tar.extractfile(members[n]).read(members[n].size)
                    arrays.append(_read_cifar_batch(io.BytesIO(data), f"{tar_path}:{n}"))
    if arrays is None:
        folder = os.path.abspath(root)
        raise FileNotFoundError(
            f"load_cifar10(train={train}) needs {', '.join(names)} in {folder} or "
            f"{os.path.join(folder, _CIFAR_DIR)} (or {os.path.join(folder, 'cifar-10-python.tar.gz')}); "
            f"download {_CIFAR_URL} and extract it into {folder}")
    images = np.concatenate([a for a, _ in arrays]).astype(np.float32) / np.float32(255.0)
    labels = np.concatenate([b for _, b in arrays])
    return Tensor(images), Tensor(labels)
