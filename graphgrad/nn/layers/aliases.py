"""PyTorch module names that are other graphgrad modules, or thin wrappers of them: LazyLinear,
RNNBase/RNNCellBase, NLLLoss2d, SyncBatchNorm (one process: batch norm; under graphgrad.distributed
the statistics are per rank), DataParallel (one device: the module itself)."""
from __future__ import annotations

from typing import Any, Optional

from graphgrad.nn.layers.linear import Linear
from graphgrad.nn.layers.norm import _BatchNorm
from graphgrad.nn.layers.recurrent import _CellBase, _RNNBase
from graphgrad.nn.losses import NLLLoss
from graphgrad.nn.module import Module

RNNBase = _RNNBase
RNNCellBase = _CellBase
NLLLoss2d = NLLLoss


class LazyLinear(Linear):
    """``Linear`` whose ``in_features`` is read from the first input (PyTorch's ``LazyLinear``)."""

    def __init__(self, out_features: int, bias: bool = True, device=None, dtype=None) -> None:
        super().__init__(None, out_features, bias, dtype=dtype, device=device)


class SyncBatchNorm(_BatchNorm):
    """Batch norm over any number of spatial dims (input (N, C, *)); the statistics are those of this
    process's batch (PyTorch synchronizes them across processes)."""

    _expected_ndim = None

    def _check_input(self, input) -> None:
        if input.ndim < 2:
            raise ValueError(f"SyncBatchNorm: expected at least 2-D input (N, C, ...), got shape {input.shape}")

    @classmethod
    def convert_sync_batchnorm(cls, module: Module, process_group: Any = None) -> Module:
        """PyTorch's conversion helper: the module as it is (its batch norms already work here)."""
        return module


class DataParallel(Module):
    """``DataParallel(module)``: runs ``module`` (one device here; for several processes use
    ``graphgrad.distributed.DistributedDataParallel``). Its state dict keys start with ``module.``."""

    def __init__(self, module: Module, device_ids: Optional[list] = None, output_device: Any = None,
                 dim: int = 0) -> None:
        super().__init__()
        self.module = module

    def forward(self, *args, **kwargs):
        return self.module(*args, **kwargs)


__all__ = ["LazyLinear", "RNNBase", "RNNCellBase", "NLLLoss2d", "SyncBatchNorm", "DataParallel"]
