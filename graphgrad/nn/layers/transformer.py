"""The transformer decoder and the whole encoder-decoder model, as PyTorch's
``nn.TransformerDecoderLayer``, ``nn.TransformerDecoder`` and ``nn.Transformer`` (same submodule
names, so PyTorch state dicts load), and ``RMSNorm``."""
from __future__ import annotations

import copy
from typing import Callable, Optional, Sequence, Union

from graphgrad.backend import np
from graphgrad.core.creation import ones
from graphgrad.core.tensor import Tensor
from graphgrad.errors import ShapeError
from graphgrad.nn.layers.attention import MultiheadAttention, TransformerEncoder, TransformerEncoderLayer, _activation
from graphgrad.nn.layers.container import ModuleList
from graphgrad.nn.layers.dropout import Dropout
from graphgrad.nn.layers.linear import Linear
from graphgrad.nn.layers.norm import LayerNorm
from graphgrad.nn.module import Module
from graphgrad.nn.parameter import Parameter
from graphgrad.ops.elementwise import astype
from graphgrad.ops.reduce import mean
from graphgrad.ops.composite import rsqrt


def _tensor(x) -> Tensor:
    return x if isinstance(x, Tensor) else Tensor(x)


class TransformerDecoderLayer(Module):
    """Self-attention, cross-attention over the encoder's output (``memory``) and a feed-forward
    block, each with a residual connection and layer norm::

        post-norm: x = norm1(x + sa(x)); x = norm2(x + mha(x, memory)); x = norm3(x + ff(x))
        pre-norm (norm_first): x = x + sa(norm1(x)); x = x + mha(norm2(x), memory); x = x + ff(norm3(x))

    Shapes: tgt (T, N, E) ((N, T, E) with ``batch_first``; unbatched (T, E)), memory (S, N, E) -> like tgt.

    Examples:
        >>> layer = gg.nn.TransformerDecoderLayer(16, 4, dim_feedforward=32, batch_first=True)
        >>> layer(gg.randn(2, 5, 16), gg.randn(2, 7, 16)).shape
        (2, 5, 16)
    """

    def __init__(self, d_model: int, nhead: int, dim_feedforward: int = 2048, dropout: float = 0.1,
                 activation: Union[str, Callable] = "relu", layer_norm_eps: float = 1e-5, batch_first: bool = False,
                 norm_first: bool = False, bias: bool = True, device=None, dtype=None) -> None:
        super().__init__()
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias, batch_first=batch_first)
        self.multihead_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias, batch_first=batch_first)
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias)
        self.norm_first = bool(norm_first)
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias)
        self.norm3 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        self.dropout3 = Dropout(dropout)
        self.activation = _activation(activation)
        self._factory(device, dtype)

    def _sa_block(self, x, attn_mask, key_padding_mask, is_causal):
        x = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask, is_causal=is_causal,
                           need_weights=False)[0]
        return self.dropout1(x)

    def _mha_block(self, x, memory, attn_mask, key_padding_mask, is_causal):
        x = self.multihead_attn(x, memory, memory, attn_mask=attn_mask, key_padding_mask=key_padding_mask,
                                is_causal=is_causal, need_weights=False)[0]
        return self.dropout2(x)

    def _ff_block(self, x):
        return self.dropout3(self.linear2(self.dropout(self.activation(self.linear1(x)))))

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, tgt_is_causal: bool = False, memory_is_causal: bool = False) -> Tensor:
        x, memory = _tensor(tgt), _tensor(memory)
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), tgt_mask, tgt_key_padding_mask, tgt_is_causal)
            x = x + self._mha_block(self.norm2(x), memory, memory_mask, memory_key_padding_mask, memory_is_causal)
            x = x + self._ff_block(self.norm3(x))
        else:
            x = self.norm1(x + self._sa_block(x, tgt_mask, tgt_key_padding_mask, tgt_is_causal))
            x = self.norm2(x + self._mha_block(x, memory, memory_mask, memory_key_padding_mask, memory_is_causal))
            x = self.norm3(x + self._ff_block(x))
        return x


class TransformerDecoder(Module):
    """A stack of ``num_layers`` copies of ``decoder_layer``, then an optional ``norm`` (submodules
    ``layers.<i>`` and ``norm``)."""

    def __init__(self, decoder_layer: Module, num_layers: int, norm: Optional[Module] = None) -> None:
        super().__init__()
        self.layers = ModuleList([copy.deepcopy(decoder_layer) for _ in range(num_layers)])
        self.num_layers = int(num_layers)
        self.norm = norm

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, tgt_is_causal: Optional[bool] = None,
                memory_is_causal: bool = False) -> Tensor:
        x = tgt
        for layer in self.layers:
            x = layer(x, memory, tgt_mask=tgt_mask, memory_mask=memory_mask, tgt_key_padding_mask=tgt_key_padding_mask,
                      memory_key_padding_mask=memory_key_padding_mask, tgt_is_causal=bool(tgt_is_causal),
                      memory_is_causal=memory_is_causal)
        return x if self.norm is None else self.norm(x)


class Transformer(Module):
    """The encoder-decoder transformer (Vaswani et al., 2017), as PyTorch's ``nn.Transformer``:
    ``encoder`` (``num_encoder_layers`` layers and a final LayerNorm) and ``decoder`` (likewise), or
    your own ``custom_encoder`` / ``custom_decoder``. Parameters are initialized Xavier-uniform.

    Shapes: src (S, N, E), tgt (T, N, E) ((N, *, E) with ``batch_first``) -> (T, N, E).

    Examples:
        >>> model = gg.nn.Transformer(d_model=16, nhead=4, num_encoder_layers=2, num_decoder_layers=2,
        ...                           dim_feedforward=32, batch_first=True)
        >>> mask = gg.nn.Transformer.generate_square_subsequent_mask(5)
        >>> model(gg.randn(2, 7, 16), gg.randn(2, 5, 16), tgt_mask=mask).shape
        (2, 5, 16)
    """

    def __init__(self, d_model: int = 512, nhead: int = 8, num_encoder_layers: int = 6, num_decoder_layers: int = 6,
                 dim_feedforward: int = 2048, dropout: float = 0.1, activation: Union[str, Callable] = "relu",
                 custom_encoder: Optional[Module] = None, custom_decoder: Optional[Module] = None,
                 layer_norm_eps: float = 1e-5, batch_first: bool = False, norm_first: bool = False,
                 bias: bool = True, device=None, dtype=None) -> None:
        super().__init__()
        if custom_encoder is not None:
            self.encoder = custom_encoder
        else:
            layer = TransformerEncoderLayer(d_model, nhead, dim_feedforward, dropout, activation, layer_norm_eps,
                                            batch_first, norm_first, bias)
            self.encoder = TransformerEncoder(layer, num_encoder_layers, LayerNorm(d_model, eps=layer_norm_eps,
                                                                                     bias=bias))
        if custom_decoder is not None:
            self.decoder = custom_decoder
        else:
            layer = TransformerDecoderLayer(d_model, nhead, dim_feedforward, dropout, activation, layer_norm_eps,
                                            batch_first, norm_first, bias)
            self.decoder = TransformerDecoder(layer, num_decoder_layers, LayerNorm(d_model, eps=layer_norm_eps,
                                                                                     bias=bias))
        self.d_model, self.nhead, self.batch_first = d_model, nhead, batch_first
        self._reset_parameters()
        self._factory(device, dtype)

    def _reset_parameters(self) -> None:
        from graphgrad.nn import init

        for p in self.parameters():
            if p.ndim > 1:
                init.xavier_uniform_(p)

    def forward(self, src, tgt, src_mask=None, tgt_mask=None, memory_mask=None, src_key_padding_mask=None,
                tgt_key_padding_mask=None, memory_key_padding_mask=None, src_is_causal: Optional[bool] = None,
                tgt_is_causal: Optional[bool] = None, memory_is_causal: bool = False) -> Tensor:
        src, tgt = _tensor(src), _tensor(tgt)
        batch_axis = 0 if self.batch_first else 1
        if src.ndim == 3 and tgt.ndim == 3 and src.shape[batch_axis] != tgt.shape[batch_axis]:
            raise ShapeError(f"Transformer: src and tgt must have the same batch size, got {src.shape} and {tgt.shape}")
        if src.shape[-1] != self.d_model or tgt.shape[-1] != self.d_model:
            raise ShapeError(f"Transformer: the feature size of src and tgt must be d_model={self.d_model}, got "
                             f"{src.shape} and {tgt.shape}")
        memory = self.encoder(src, mask=src_mask, src_key_padding_mask=src_key_padding_mask, is_causal=src_is_causal)
        return self.decoder(tgt, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                            tgt_key_padding_mask=tgt_key_padding_mask, memory_key_padding_mask=memory_key_padding_mask,
                            tgt_is_causal=tgt_is_causal, memory_is_causal=memory_is_causal)

    @staticmethod
    def generate_square_subsequent_mask(sz: int, device=None, dtype=None) -> Tensor:
        """The (sz, sz) causal mask: 0 on and below the diagonal, ``-inf`` above (float)."""
        mask = np.triu(np.full((sz, sz), -np.inf), 1)
        return astype(Tensor(mask), dtype or "float32")


class RMSNorm(Module):
    """Root-mean-square layer normalization (Zhang & Sennrich, 2019), PyTorch's ``nn.RMSNorm``:
    ``x / sqrt(mean(x^2 over normalized_shape) + eps) * weight``; ``eps`` defaults to the dtype's
    machine epsilon. Parameter ``weight`` (normalized_shape) with ``elementwise_affine``."""

    def __init__(self, normalized_shape: Union[int, Sequence[int]], eps: Optional[float] = None,
                 elementwise_affine: bool = True, device=None, dtype=None) -> None:
        super().__init__()
        self.normalized_shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
        self.eps, self.elementwise_affine = eps, elementwise_affine
        self.weight = Parameter(ones(self.normalized_shape, dtype=dtype)) if elementwise_affine else None

    def forward(self, input: Tensor) -> Tensor:
        return rms_norm(input, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self) -> str:
        return f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}"


def rms_norm(input, normalized_shape: Sequence[int], weight: Optional[Tensor] = None,
             eps: Optional[float] = None) -> Tensor:
    """``input / sqrt(mean(input^2 over the last len(normalized_shape) dims) + eps) * weight``.
    Shapes: (*, normalized_shape) -> same."""
    input = _tensor(input)
    normalized_shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    if tuple(input.shape[input.ndim - len(normalized_shape):]) != normalized_shape:
        raise ShapeError(f"rms_norm: input of shape {input.shape} does not end in normalized_shape {normalized_shape}")
    if eps is None:
        eps = float(np.finfo(input.dtype).eps)
    axes = tuple(range(input.ndim - len(normalized_shape), input.ndim))
    out = input * rsqrt(mean(input * input, axes, keepdims=True) + eps)
    return out if weight is None else out * weight


__all__ = ["TransformerDecoderLayer", "TransformerDecoder", "Transformer", "RMSNorm"]
