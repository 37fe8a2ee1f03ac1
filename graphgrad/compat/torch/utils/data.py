"""``torch.utils.data``: graphgrad's datasets, samplers and DataLoader."""
from graphgrad.data import (BatchSampler, ConcatDataset, DataLoader, Dataset, RandomSampler, Sampler,  # noqa: F401
                            SequentialSampler, Subset, SubsetRandomSampler, TensorDataset, WeightedRandomSampler,
                            random_split, IterableDataset, ChainDataset, StackDataset, get_worker_info, default_collate,
                            default_convert)
from graphgrad.distributed import DistributedSampler  # noqa: F401,E402
