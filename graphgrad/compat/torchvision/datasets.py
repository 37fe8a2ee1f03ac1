"""``torchvision.datasets``: MNIST, FashionMNIST, CIFAR10, FakeData, ImageFolder and DatasetFolder.

Samples are what torchvision gives: ``(PIL image, int class)`` before ``transform`` /
``target_transform``, with ``.data``, ``.targets`` and ``.classes`` as torchvision names them. Files
are read by graphgrad's own loaders (:mod:`graphgrad.data.datasets`) from torchvision's folder layout
(``root/MNIST/raw``, ``root/cifar-10-batches-py``...), so data torchvision downloaded is found where it
is. ``download=True`` fetches missing files from torchvision's mirrors (written atomically).
"""
from __future__ import annotations

import os
import tempfile
import urllib.request
from typing import Any, Callable, Optional

from graphgrad.backend import np
from graphgrad import Tensor
from graphgrad.data import Dataset
from graphgrad.data import datasets as _files

#: Where MNIST-style files are downloaded from (torchvision's first mirror for each).
MIRRORS = {"MNIST": "https://ossci-datasets.s3.amazonaws.com/mnist/",
           "FashionMNIST": "http://fashion-mnist.s3-website.eu-central-1.amazonaws.com/",
           "KMNIST": "http://codh.rois.ac.jp/kmnist/dataset/kmnist/"}
CIFAR10_URL = "https://www.cs.toronto.edu/~kriz/cifar-10-python.tar.gz"


def download_url(url: str, folder: str, filename: Optional[str] = None) -> str:
    """Fetch ``url`` into ``folder`` (atomically: a partial download never takes the file's name);
    returns the path. A file already there is kept."""
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, filename or os.path.basename(url))
    if os.path.isfile(path):
        return path
    handle, partial = tempfile.mkstemp(dir=folder, prefix=".download-")
    try:
        with os.fdopen(handle, "wb") as out, urllib.request.urlopen(url, timeout=60) as response:
            while True:
                block = response.read(1 << 20)
                if not block:
                    break
                out.write(block)
        os.replace(partial, path)
    except BaseException:
        if os.path.exists(partial):
            os.remove(partial)
        raise
    return path


def _pil_image():
    try:
        from PIL import Image
    except ImportError as exc:  # pragma: no cover - Pillow is in the test extras
        raise ImportError("torchvision's datasets give PIL images, which need Pillow: "
                          "pip install 'graphgrad[images]'") from exc
    return Image


class VisionDataset(Dataset):
    """Base of the image datasets: ``root``, ``transform``, ``target_transform`` (or ``transforms`` of
    both)."""

    def __init__(self, root: Any = None, transforms: Optional[Callable] = None, transform: Optional[Callable] = None,
                 target_transform: Optional[Callable] = None) -> None:
        self.root = os.path.expanduser(os.fspath(root)) if root is not None else None
        if transforms is not None and (transform is not None or target_transform is not None):
            raise ValueError("only transforms or transform/target_transform can be passed as argument")
        self.transform, self.target_transform = transform, target_transform
        if transforms is None and (transform is not None or target_transform is not None):
            transforms = _StandardTransform(transform, target_transform)
        self.transforms = transforms

    def _finish(self, img, target):
        if self.transforms is not None:
            return self.transforms(img, target)
        return img, target

    def __repr__(self) -> str:
        lines = [f"Dataset {type(self).__name__}", f"    Number of datapoints: {len(self)}"]
        if self.root is not None:
            lines.append(f"    Root location: {self.root}")
        lines += [f"    {line}" for line in self.extra_repr().splitlines()]
        if self.transform is not None:
            lines.append(f"    Transform: {self.transform!r}")
        if self.target_transform is not None:
            lines.append(f"    Target transform: {self.target_transform!r}")
        return "\n".join(lines)

    def extra_repr(self) -> str:
        return ""


class _StandardTransform:
    def __init__(self, transform, target_transform) -> None:
        self.transform, self.target_transform = transform, target_transform

    def __call__(self, img, target):
        if self.transform is not None:
            img = self.transform(img)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return img, target


class MNIST(VisionDataset):
    """MNIST digits: ``(PIL image 28x28 'L', class)``; ``.data`` uint8 (N, 28, 28), ``.targets`` int64 (N,)."""

    classes = ["0 - zero", "1 - one", "2 - two", "3 - three", "4 - four", "5 - five", "6 - six", "7 - seven",
               "8 - eight", "9 - nine"]
    _kind = "mnist"

    def __init__(self, root: Any, train: bool = True, transform: Optional[Callable] = None,
                 target_transform: Optional[Callable] = None, download: bool = False) -> None:
        super().__init__(root, transform=transform, target_transform=target_transform)
        self.train = train
        prefix = "train" if train else "t10k"
        names = [f"{prefix}-images-idx3-ubyte", f"{prefix}-labels-idx1-ubyte"]
        raw = self.raw_folder
        found = [_files.find_file([self.root, raw], n) for n in names]
        if download and None in found:
            for name, path in zip(names, found):
                if path is None:
                    download_url(MIRRORS[type(self).__name__] + name + ".gz", raw)
            found = [_files.find_file([self.root, raw], n) for n in names]
        if None in found:
            missing = [n for n, p in zip(names, found) if p is None]
            raise RuntimeError(f"{type(self).__name__}: {' and '.join(missing)} (raw or .gz) not found in {raw} "
                               f"or {self.root}. You can use download=True to download it")
        images, labels = _files.read_idx(found[0]), _files.read_idx(found[1])
        if images.ndim != 3 or labels.ndim != 1 or len(images) != len(labels):
            raise RuntimeError(f"{found[0]} holds shape {images.shape} and {found[1]} shape {labels.shape}; "
                               "expected (N, H, W) images and (N,) labels")
        self.data = Tensor(np.ascontiguousarray(images.astype(np.uint8)))
        self.targets = Tensor(labels.astype(np.int64))

    @property
    def raw_folder(self) -> str:
        return os.path.join(self.root, type(self).__name__, "raw")

    @property
    def class_to_idx(self) -> dict:
        return {c: i for i, c in enumerate(self.classes)}

    # torchvision's deprecated names of the same tensors
    train_data = test_data = property(lambda self: self.data)
    train_labels = test_labels = property(lambda self: self.targets)

    def __len__(self) -> int:
        return len(self.data)

    def __getitem__(self, index: int):
        array = self.data._value()[int(index)]
        img = _pil_image().fromarray(np.asarray(array), mode="L")
        return self._finish(img, int(self.targets._value()[int(index)]))

    def extra_repr(self) -> str:
        return f"Split: {'Train' if self.train else 'Test'}"


class FashionMNIST(MNIST):
    classes = ["T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt", "Sneaker", "Bag", "Ankle boot"]


class KMNIST(MNIST):
    classes = ["o", "ki", "su", "tsu", "na", "ha", "ma", "ya", "re", "wo"]


class CIFAR10(VisionDataset):
    """CIFAR-10: ``(PIL image 32x32 RGB, class)``; ``.data`` uint8 NumPy (N, 32, 32, 3), ``.targets`` a list."""

    classes = ["airplane", "automobile", "bird", "cat", "deer", "dog", "frog", "horse", "ship", "truck"]

    def __init__(self, root: Any, train: bool = True, transform: Optional[Callable] = None,
                 target_transform: Optional[Callable] = None, download: bool = False) -> None:
        super().__init__(root, transform=transform, target_transform=target_transform)
        self.train = train
        try:
            images, labels = _files.load_cifar10(self.root, train)
        except FileNotFoundError:
            if not download:
                raise RuntimeError(f"CIFAR10: the python batches were not found in {self.root} (or "
                                   f"{os.path.join(self.root, 'cifar-10-batches-py')}). "
                                   "You can use download=True to download it") from None
            download_url(CIFAR10_URL, self.root)
            images, labels = _files.load_cifar10(self.root, train)
        # back to the bytes of the files: x / 255 in float32 times 255 rounds to the byte exactly
        pixels = np.rint(images._value() * np.float32(255.0)).astype(np.uint8)
        self.data = np.ascontiguousarray(pixels.transpose(0, 2, 3, 1))
        self.targets = [int(v) for v in labels._value()]

    @property
    def class_to_idx(self) -> dict:
        return {c: i for i, c in enumerate(self.classes)}

    def __len__(self) -> int:
        return len(self.data)

    def __getitem__(self, index: int):
        img = _pil_image().fromarray(self.data[int(index)])
        return self._finish(img, self.targets[int(index)])

    def extra_repr(self) -> str:
        return f"Split: {'Train' if self.train else 'Test'}"


class FakeData(VisionDataset):
    """Random images (PIL) and classes, the same for the same index: a stand-in for a real dataset."""

    def __init__(self, size: int = 1000, image_size: tuple = (3, 224, 224), num_classes: int = 10,
                 transform: Optional[Callable] = None, target_transform: Optional[Callable] = None,
                 random_offset: int = 0) -> None:
        super().__init__(None, transform=transform, target_transform=target_transform)
        self.size, self.image_size, self.num_classes, self.random_offset = size, tuple(image_size), num_classes, random_offset

    def __len__(self) -> int:
        return self.size

    def __getitem__(self, index: int):
        if not 0 <= index < len(self):
            raise IndexError(f"{type(self).__name__} index out of range: {index} (size {len(self)})")
        rng = np.random.default_rng(int(index) + self.random_offset)
        pixels = rng.integers(0, 256, self.image_size, dtype=np.uint8)
        target = int(rng.integers(0, self.num_classes))
        c = self.image_size[0]
        array = pixels[0] if c == 1 else pixels.transpose(1, 2, 0)
        return self._finish(_pil_image().fromarray(np.ascontiguousarray(array)), target)


IMG_EXTENSIONS = (".jpg", ".jpeg", ".png", ".ppm", ".bmp", ".pgm", ".tif", ".tiff", ".webp")


def pil_loader(path: str):
    Image = _pil_image()
    with open(path, "rb") as f:
        img = Image.open(f)
        return img.convert("RGB")


default_loader = pil_loader


def find_classes(directory: str) -> tuple:
    """``(classes, class_to_idx)``: the sorted sub-folder names of ``directory``."""
    classes = sorted(entry.name for entry in os.scandir(directory) if entry.is_dir())
    if not classes:
        raise FileNotFoundError(f"Couldn't find any class folder in {directory}.")
    return classes, {name: i for i, name in enumerate(classes)}


def make_dataset(directory: str, class_to_idx: dict, extensions=None, is_valid_file=None) -> list:
    if (extensions is None) == (is_valid_file is None):
        raise ValueError("Both extensions and is_valid_file cannot be None or not None at the same time")
    if is_valid_file is None:
        ext = tuple(e.lower() for e in (extensions if isinstance(extensions, (tuple, list)) else (extensions,)))

        def is_valid_file(path: str) -> bool:
            return path.lower().endswith(ext)

    samples = []
    for name in sorted(class_to_idx):
        folder = os.path.join(directory, name)
        for base, _, names in sorted(os.walk(folder, followlinks=True)):
            for filename in sorted(names):
                path = os.path.join(base, filename)
                if is_valid_file(path):
                    samples.append((path, class_to_idx[name]))
    return samples


class DatasetFolder(VisionDataset):
    """Samples in ``root/<class>/**/<file>``: ``(loader(path), class index)``."""

    def __init__(self, root: Any, loader: Callable, extensions=None, transform: Optional[Callable] = None,
                 target_transform: Optional[Callable] = None, is_valid_file: Optional[Callable] = None,
                 allow_empty: bool = False) -> None:
        super().__init__(root, transform=transform, target_transform=target_transform)
        classes, class_to_idx = self.find_classes(self.root)
        samples = make_dataset(self.root, class_to_idx, extensions, is_valid_file)
        if not samples and not allow_empty:
            raise FileNotFoundError(f"Found no valid file for the classes {', '.join(classes)} in {self.root}"
                                    + (f". Supported extensions are: {', '.join(extensions)}" if extensions else ""))
        self.loader, self.extensions = loader, extensions
        self.classes, self.class_to_idx = classes, class_to_idx
        self.samples = samples
        self.targets = [s[1] for s in samples]

    @staticmethod
    def find_classes(directory: str) -> tuple:
        return find_classes(directory)

    def __len__(self) -> int:
        return len(self.samples)

    def __getitem__(self, index: int):
        path, target = self.samples[int(index)]
        return self._finish(self.loader(path), target)


class ImageFolder(DatasetFolder):
    """Images in ``root/<class>/<file>`` (the extensions Pillow reads), loaded as RGB PIL images."""

    def __init__(self, root: Any, transform: Optional[Callable] = None, target_transform: Optional[Callable] = None,
                 loader: Callable = default_loader, is_valid_file: Optional[Callable] = None,
                 allow_empty: bool = False) -> None:
        super().__init__(root, loader, IMG_EXTENSIONS if is_valid_file is None else None, transform=transform,
                         target_transform=target_transform, is_valid_file=is_valid_file, allow_empty=allow_empty)
        self.imgs = self.samples


__all__ = ["VisionDataset", "MNIST", "FashionMNIST", "KMNIST", "CIFAR10", "FakeData", "DatasetFolder", "ImageFolder",
           "download_url", "default_loader", "pil_loader", "find_classes", "make_dataset", "IMG_EXTENSIONS"]
