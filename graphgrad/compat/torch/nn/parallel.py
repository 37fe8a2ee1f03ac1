"""``torch.nn.parallel``: ``DataParallel`` (one device here: the module itself, its state dict keys
prefixed ``module.``) and ``DistributedDataParallel`` (graphgrad's, over MPI ranks: gradients
averaged during ``backward()``; see docs/distributed.md)."""
from graphgrad.distributed import DistributedDataParallel  # noqa: F401
from graphgrad.nn import DataParallel  # noqa: F401

__all__ = ["DataParallel", "DistributedDataParallel"]
