"""Datasets and data loading: ``Dataset``/``DataLoader`` (PyTorch's protocol), built-in datasets,
image files and transforms.

Examples:
    >>> x, y = gg.data.make_spiral(100, 3)
    >>> loader = gg.data.DataLoader(gg.data.TensorDataset(x, y), batch_size=32, shuffle=True, seed=0)
    >>> for xb, yb in loader:
    ...     pass
"""
from graphgrad.data import transforms
from graphgrad.data.dataset import (ConcatDataset, Dataset, Subset, TensorDataset, TransformDataset,
                                    random_split)
from graphgrad.data.datasets import (load_cifar10, load_digits, load_mnist, make_blobs, make_circles,
                                     make_moons, make_spiral, read_idx)
from graphgrad.data.images import read_image, write_image
from graphgrad.data.iterable import ChainDataset, IterableDataset, StackDataset, WorkerInfo, get_worker_info
from graphgrad.data.text import load_text, random_windows
from graphgrad.data.loader import (BatchSampler, DataLoader, RandomSampler, Sampler, SequentialSampler,
                                   SubsetRandomSampler, WeightedRandomSampler, default_collate, default_convert)

__all__ = [
    "Dataset", "TensorDataset", "Subset", "ConcatDataset", "TransformDataset", "random_split",
    "IterableDataset", "ChainDataset", "StackDataset", "WorkerInfo", "get_worker_info",
    "DataLoader", "Sampler", "SequentialSampler", "RandomSampler", "SubsetRandomSampler",
    "WeightedRandomSampler", "BatchSampler", "default_collate", "default_convert",
    "make_spiral", "make_moons", "make_circles", "make_blobs", "load_digits", "load_mnist", "load_cifar10",
    "read_idx", "read_image", "write_image", "transforms", "load_text", "random_windows",
]
