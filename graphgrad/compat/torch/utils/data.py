"""``torch.utils.data``: graphgrad's datasets, samplers and DataLoader."""
from graphgrad.data import (BatchSampler, ConcatDataset, DataLoader, Dataset, Sampler,  # noqa: F401
                            SequentialSampler, Subset, SubsetRandomSampler, TensorDataset, WeightedRandomSampler,
                            random_split, IterableDataset, ChainDataset, StackDataset, get_worker_info, default_collate,
                            default_convert)
from graphgrad.data import RandomSampler  # noqa: F401  (epochs of any length drawn as read)
from graphgrad.distributed import DistributedSampler  # noqa: F401,E402

import sys as _sys  # noqa: E402

# PyTorch's submodules reached as attributes (``torch.utils.data.distributed.DistributedSampler``,
# ``torch.utils.data.dataloader.default_collate``): all of them are this module
distributed = dataloader = dataset = sampler = _sys.modules[__name__]
