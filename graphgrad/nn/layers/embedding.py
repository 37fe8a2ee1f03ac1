"""Embedding layer: a lookup table of vectors."""
from __future__ import annotations

from typing import Optional

from graphgrad.core.autograd import no_grad
from graphgrad.core.creation import empty
from graphgrad.core.random import Generator
from graphgrad.core.tensor import Tensor
from graphgrad.errors import ShapeError
from graphgrad.nn import init
from graphgrad.nn.functional import embedding as embedding_with_options
from graphgrad.nn.module import Module
from graphgrad.nn.parameter import Parameter
from graphgrad.ops.nn import embedding

__all__ = ["Embedding"]


class Embedding(Module):
    """A table of ``num_embeddings`` vectors of size ``embedding_dim``, looked up by integer index.

    Args:
        num_embeddings: size of the table.
        embedding_dim: size of each vector.
        padding_idx: this row starts at zero and receives no gradient (negative counts from the end).
        max_norm: rows looked up whose ``norm_type``-norm exceeds it are scaled down to it in the
            table, in place (as PyTorch does).
        scale_grad_by_freq: divide each row's gradient by its index's count in the batch.
        sparse: accepted for PyTorch programs; the gradient is a dense tensor.
        _weight: an initial table (num_embeddings, embedding_dim) instead of N(0, 1).
        _freeze: make the weight non-trainable.
        generator: random source for the initialization.

    Shapes: input (*) integer -> (*, embedding_dim).
    Parameters: ``weight`` (num_embeddings, embedding_dim), drawn from N(0, 1), as PyTorch.

    Examples:
        >>> emb = gg.nn.Embedding(10, 3, padding_idx=0)
        >>> emb(gg.tensor([[1, 2, 4], [0, 3, 9]])).shape
        (2, 3, 3)
    """

    def __init__(self, num_embeddings: int, embedding_dim: int, padding_idx: Optional[int] = None,
                 max_norm: Optional[float] = None, norm_type: float = 2.0, scale_grad_by_freq: bool = False,
                 sparse: bool = False, _weight: Optional[Tensor] = None, _freeze: bool = False, dtype=None,
                 device: Optional[str] = None, generator: Optional[Generator] = None) -> None:
        super().__init__()
        self.num_embeddings, self.embedding_dim = int(num_embeddings), int(embedding_dim)
        if padding_idx is not None:
            if not -self.num_embeddings <= padding_idx < self.num_embeddings:
                raise ValueError(f"Embedding: padding_idx {padding_idx} must be within num_embeddings "
                                 f"({self.num_embeddings})")
            padding_idx = padding_idx % self.num_embeddings
        self.padding_idx = padding_idx
        self.max_norm, self.norm_type = max_norm, norm_type
        self.scale_grad_by_freq, self.sparse = scale_grad_by_freq, sparse
        self._generator = generator
        if _weight is None:
            self.weight = Parameter(empty(self.num_embeddings, self.embedding_dim, dtype=dtype, device=device),
                                    requires_grad=not _freeze)
            self.reset_parameters()
        else:
            if tuple(_weight.shape) != (self.num_embeddings, self.embedding_dim):
                raise ShapeError(f"Embedding: _weight must have shape ({self.num_embeddings}, "
                                 f"{self.embedding_dim}), got {tuple(_weight.shape)}")
            self.weight = Parameter(_weight, requires_grad=not _freeze)

    def reset_parameters(self) -> None:
        """Draw the table from N(0, 1) and zero the padding row."""
        init.normal_(self.weight, generator=self._generator)
        self._fill_padding_idx_with_zero()

    def _fill_padding_idx_with_zero(self) -> None:
        if self.padding_idx is not None:
            with no_grad():
                self.weight._data[self.padding_idx] = 0

    def forward(self, input: Tensor) -> Tensor:
        if self.max_norm is None and not self.scale_grad_by_freq:
            return embedding(input, self.weight, self.padding_idx)
        return embedding_with_options(input, self.weight, self.padding_idx, self.max_norm, self.norm_type,
                            self.scale_grad_by_freq)

    @classmethod
    def from_pretrained(cls, embeddings, freeze: bool = True, padding_idx: Optional[int] = None,
                        **kwargs) -> "Embedding":
        """An Embedding holding a copy of ``embeddings`` (num_embeddings, embedding_dim); ``freeze``
        makes it non-trainable (``weight.requires_grad = False``).

        Examples:
            >>> emb = gg.nn.Embedding.from_pretrained(gg.tensor([[1.0, 2.3, 3.0], [4.0, 5.1, 6.3]]))
        """
        weight = embeddings if isinstance(embeddings, Tensor) else Tensor(embeddings)
        if weight.ndim != 2:
            raise ShapeError(f"Embedding.from_pretrained: embeddings must be 2-D, got shape {tuple(weight.shape)}")
        rows, cols = weight.shape
        return cls(rows, cols, padding_idx=padding_idx, _weight=weight, _freeze=freeze, **kwargs)

    def extra_repr(self) -> str:
        s = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.padding_idx is not None:
            s += f", padding_idx={self.padding_idx}"
        return s
