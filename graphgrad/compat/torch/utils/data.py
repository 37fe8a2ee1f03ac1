"""``torch.utils.data``: graphgrad's datasets, samplers and DataLoader."""
from graphgrad.data import (BatchSampler, ConcatDataset, DataLoader, Dataset, Sampler,  # noqa: F401
                            SequentialSampler, Subset, SubsetRandomSampler, TensorDataset, WeightedRandomSampler,
                            random_split, IterableDataset, ChainDataset, StackDataset, get_worker_info, default_collate,
                            default_convert)
from graphgrad.data import RandomSampler as _RandomSampler
from graphgrad.distributed import DistributedSampler  # noqa: F401,E402
from graphgrad.backend import np
import graphgrad as _gg

#: above this many indices an epoch's indices are drawn as they are read rather than all at once
_LAZY_ABOVE = 1 << 22


class _DrawnIndices:
    """An epoch's indices drawn with replacement as they are read: ``len()`` and consecutive slices (what
    ``BatchSampler`` reads), each slice a fresh draw of its length."""

    def __init__(self, rng, n: int, k: int) -> None:
        self.rng, self.n, self.k = rng, n, k

    def __len__(self) -> int:
        return self.k

    def __getitem__(self, where):
        if not isinstance(where, slice):
            raise TypeError("indices drawn as they are read are read in slices")
        start, stop, step = where.indices(self.k)
        return self.rng.integers(0, self.n, size=len(range(start, stop, step)), dtype=np.int64)

    def __iter__(self):
        while True:
            yield from self.rng.integers(0, self.n, size=4096, dtype=np.int64).tolist()


class RandomSampler(_RandomSampler):
    """``torch.utils.data.RandomSampler``: graphgrad's, and with ``replacement=True`` an epoch of any
    length (makemore's ``num_samples=int(1e10)``, an endless stream of batches) is drawn as it is read
    instead of all at once."""

    def index_array(self):
        n, k = len(self.data_source), self.num_samples
        if self.replacement and k > _LAZY_ABOVE and n > 0:
            return _DrawnIndices((self.generator or _gg.default_generator).rng, n, k)
        return super().index_array()

    def __iter__(self):
        indices = self.index_array()
        if isinstance(indices, _DrawnIndices):
            import itertools

            return itertools.islice(iter(indices), indices.k)
        return iter(indices.tolist())
