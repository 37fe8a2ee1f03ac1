"""PyTorch module names that are other graphgrad modules, or thin wrappers of them: LazyLinear,
RNNBase/RNNCellBase, NLLLoss2d, SyncBatchNorm (one process: batch norm; under graphgrad.distributed
the statistics are per rank), DataParallel (one device: the module itself)."""
from __future__ import annotations

from typing import Any, Optional

from graphgrad.nn.layers.linear import Linear
from graphgrad.nn.layers.norm import _BatchNorm
from graphgrad.nn.layers.recurrent import _CellBase, _RNNBase
from graphgrad.nn.losses import NLLLoss
from graphgrad.core.tensor import Tensor
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




class EmbeddingBag(Module):
    """Sums, means or maxima of bags of embeddings (PyTorch's ``nn.EmbeddingBag``); parameter
    ``weight`` (num_embeddings, embedding_dim), initialized N(0, 1) with the ``padding_idx`` row zero.
    Shapes: input (B, N), or 1-d with ``offsets`` (B,) -> (B, embedding_dim)."""

    def __init__(self, num_embeddings: int, embedding_dim: int, max_norm=None, norm_type: float = 2.0,
                 scale_grad_by_freq: bool = False, mode: str = "mean", sparse: bool = False, _weight=None,
                 include_last_offset: bool = False, padding_idx: Optional[int] = None, device=None, dtype=None) -> None:
        super().__init__()
        from graphgrad.core.creation import randn
        from graphgrad.nn.parameter import Parameter

        if scale_grad_by_freq:
            raise ValueError("EmbeddingBag: scale_grad_by_freq is not supported (sparse=True is accepted; the "
                             "gradient is dense)")
        self.max_norm, self.norm_type, self.sparse = max_norm, norm_type, sparse
        self.num_embeddings, self.embedding_dim, self.mode = num_embeddings, embedding_dim, mode
        self.include_last_offset, self.padding_idx = include_last_offset, padding_idx
        weight = _weight if _weight is not None else randn(num_embeddings, embedding_dim, dtype=dtype)
        self.weight = Parameter(weight)
        if padding_idx is not None and _weight is None:
            self.weight._data[padding_idx] = 0

    def forward(self, input, offsets=None, per_sample_weights=None):
        from graphgrad.nn.functional import _renorm_rows
        from graphgrad.ops.embedding_bag import embedding_bag

        if self.max_norm is not None:
            _renorm_rows(input if isinstance(input, Tensor) else Tensor(input), self.weight, self.max_norm,
                         self.norm_type)
        return embedding_bag(input, self.weight, offsets, self.mode, per_sample_weights, self.include_last_offset,
                             self.padding_idx)


__all__ = ["LazyLinear", "RNNBase", "RNNCellBase", "NLLLoss2d", "SyncBatchNorm", "DataParallel", "EmbeddingBag"]
