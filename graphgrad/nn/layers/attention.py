"""Attention: ``scaled_dot_product_attention``, MultiheadAttention, TransformerEncoderLayer and
TransformerEncoder, with PyTorch's API, parameter names and mask conventions.

Masks follow PyTorch, and the two APIs differ on purpose (as PyTorch's do): for
``scaled_dot_product_attention`` a boolean ``attn_mask`` marks with ``True`` the positions that
*take part*; for ``MultiheadAttention`` (``attn_mask`` and ``key_padding_mask``) ``True`` marks the
positions that are *masked out*. Float masks are added to the attention scores in both.
"""
from __future__ import annotations

import copy
import math
from typing import Callable, Optional, Union

from graphgrad.core.creation import normal, uniform, zeros
from graphgrad.core.tensor import Tensor
from graphgrad.errors import ShapeError
from graphgrad.nn.init import zeros_
from graphgrad.nn.layers.container import ModuleList
from graphgrad.nn.layers.dropout import Dropout
from graphgrad.nn.layers.linear import Linear
from graphgrad.nn.layers.norm import LayerNorm
from graphgrad.nn.module import Module
from graphgrad.nn.parameter import Parameter
from graphgrad.ops.attention import _apply_attention, _causal_mask, scaled_dot_product_attention
from graphgrad.ops.elementwise import where
from graphgrad.ops.linalg import linear, matmul
from graphgrad.ops.nn import dropout as _dropout
from graphgrad.ops.nn import softmax
from graphgrad.ops.reduce import mean
from graphgrad.ops.array import zeros_like
from graphgrad.ops.shape import concatenate, expand_dims, pad, reshape, squeeze, swapaxes, transpose
from graphgrad.ops.unary import gelu, logical_not, relu

__all__ = ["scaled_dot_product_attention", "MultiheadAttention", "TransformerEncoderLayer", "TransformerEncoder"]

_NEG_INF = float("-inf")


def _tensor(x) -> Tensor:
    return x if isinstance(x, Tensor) else Tensor(x)


def _is_bool(mask: Tensor) -> bool:
    return mask.dtype.kind == "b"


def _linear(x: Tensor, weight: Tensor, bias: Optional[Tensor]) -> Tensor:
    """``x @ weight^T + bias`` over the last axis: one Linear op (one GEMM over all leading axes, the
    weight gradient in the weight's layout) when the dtypes agree, else matmul and add."""
    if x.dtype.kind == "f" and weight.dtype == x.dtype and (bias is None or bias.dtype == x.dtype):
        return linear(x, weight, bias)
    y = matmul(x, transpose(weight))
    return y if bias is None else y + bias


def _add_mask(scores: Tensor, mask: Optional[Tensor], masked_value_is_true: bool) -> Tensor:
    """Apply one mask to the scores: a float mask is added; a boolean one sets the excluded positions
    to ``-inf`` (excluded = ``True`` when ``masked_value_is_true``, else ``False``)."""
    if mask is None:
        return scores
    if _is_bool(mask):
        return where(mask, _NEG_INF, scores) if masked_value_is_true else where(mask, scores, _NEG_INF)
    return scores + mask


def _additive(mask: Tensor) -> Tensor:
    """A MultiheadAttention mask as a float one to add: ``-inf`` where a boolean mask is ``True``."""
    return where(mask, _NEG_INF, 0.0) if _is_bool(mask) else mask


def _one_more_key(mask: Optional[Tensor]) -> Optional[Tensor]:
    """A mask over S keys extended to S + 1 (the appended key is allowed: False or 0.0)."""
    return None if mask is None else pad(mask, [(0, 0)] * (mask.ndim - 1) + [(0, 1)])


# ---- multi-head attention -------------------------------------------------------------------------
class MultiheadAttention(Module):
    """Multi-head attention (PyTorch's ``nn.MultiheadAttention``)::

        head_i = softmax(Q W_q^i (K W_k^i)^T / sqrt(d) + masks) V W_v^i,   out = concat(heads) W_o^T + b_o

    Args:
        embed_dim: model width E (= num_heads * head dim).
        num_heads: number of heads.
        dropout: dropout on the attention weights, in training only.
        bias: whether the input and output projections have biases.
        batch_first: (N, L, E) tensors instead of (L, N, E).
        kdim, vdim: feature sizes of key and value (default E); when they differ from E the
            projections are ``q_proj_weight``, ``k_proj_weight``, ``v_proj_weight`` instead of the
            packed ``in_proj_weight`` (3E, E), as PyTorch.
        add_bias_kv: append a learned key and value (``bias_k``, ``bias_v``, (1, 1, E)) to the
            projected keys and values.
        add_zero_attn: append a zero key and value to each head's keys and values.

    Parameters: ``in_proj_weight`` (3E, E), ``in_proj_bias`` (3E,), ``out_proj.weight`` (E, E),
    ``out_proj.bias`` (E,) (PyTorch's ``state_dict`` keys).

    Examples:
        >>> mha = gg.nn.MultiheadAttention(16, 4, batch_first=True)
        >>> x = gg.randn(2, 5, 16)
        >>> out, weights = mha(x, x, x)
        >>> out.shape, weights.shape
        ((2, 5, 16), (2, 5, 5))
    """

    def __init__(self, embed_dim: int, num_heads: int, dropout: float = 0.0, bias: bool = True,
                 add_bias_kv: bool = False, add_zero_attn: bool = False, kdim: Optional[int] = None,
                 vdim: Optional[int] = None, batch_first: bool = False, device=None, dtype=None) -> None:
        super().__init__()
        if embed_dim <= 0 or num_heads <= 0 or embed_dim % num_heads:
            raise ValueError(f"MultiheadAttention: embed_dim ({embed_dim}) must be divisible by num_heads "
                             f"({num_heads}), both positive")
        self.embed_dim, self.num_heads = int(embed_dim), int(num_heads)
        self.head_dim = embed_dim // num_heads
        self.kdim = embed_dim if kdim is None else int(kdim)
        self.vdim = embed_dim if vdim is None else int(vdim)
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.dropout, self.batch_first = float(dropout), bool(batch_first)
        E = embed_dim

        def xavier(shape):  # xavier_uniform_ on (fan_out, fan_in), as PyTorch's _reset_parameters
            bound = math.sqrt(6.0 / (shape[0] + shape[1]))
            return Parameter(uniform(-bound, bound, shape))

        if self._qkv_same_embed_dim:
            self.in_proj_weight = xavier((3 * E, E))
            self.register_parameter("q_proj_weight", None)
            self.register_parameter("k_proj_weight", None)
            self.register_parameter("v_proj_weight", None)
        else:
            self.q_proj_weight = xavier((E, E))
            self.k_proj_weight = xavier((E, self.kdim))
            self.v_proj_weight = xavier((E, self.vdim))
            self.register_parameter("in_proj_weight", None)
        if bias:
            self.in_proj_bias = Parameter(zeros((3 * E,)))
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = Linear(E, E, bias=bias)
        if bias:
            zeros_(self.out_proj.bias)
        if add_bias_kv:  # one more key and value position, learned (PyTorch: xavier_normal_ of (1, 1, E))
            std = math.sqrt(2.0 / (1 + E))
            self.bias_k, self.bias_v = Parameter(normal(0.0, std, (1, 1, E))), Parameter(normal(0.0, std, (1, 1, E)))
        else:
            self.bias_k = self.bias_v = None
        self.add_zero_attn = bool(add_zero_attn)
        self._factory(device, dtype)

    def extra_repr(self) -> str:
        return f"embed_dim={self.embed_dim}, num_heads={self.num_heads}" + \
            (f", dropout={self.dropout}" if self.dropout else "") + (", batch_first=True" if self.batch_first else "")

    def _projections(self, query: Tensor, key: Tensor, value: Tensor) -> tuple:
        E, b = self.embed_dim, self.in_proj_bias
        bq, bk, bv = (None, None, None) if b is None else (b[0:E], b[E:2 * E], b[2 * E:3 * E])
        if self._qkv_same_embed_dim:
            w = self.in_proj_weight
            if query is key and key is value:  # self-attention: one packed projection
                qkv = _linear(query, w, b)
                return qkv[..., 0:E], qkv[..., E:2 * E], qkv[..., 2 * E:3 * E]
            wq, wk, wv = w[0:E], w[E:2 * E], w[2 * E:3 * E]
        else:
            wq, wk, wv = self.q_proj_weight, self.k_proj_weight, self.v_proj_weight
        return _linear(query, wq, bq), _linear(key, wk, bk), _linear(value, wv, bv)

    def _heads(self, x: Tensor) -> Tensor:
        """(N, L, E) -> (N, h, L, d)."""
        N, L, _ = x.shape
        if N is None and L is None:
            raise ShapeError("MultiheadAttention: the batch size or the sequence length must be known when the "
                             "graph is built")
        shape = (-1 if N is None else N, -1 if L is None else L, self.num_heads, self.head_dim)
        return transpose(reshape(x, shape), (0, 2, 1, 3))

    def _check_attn_mask(self, attn_mask: Tensor, N) -> Tensor:
        """An attention mask as (L, S) or (N, h, L, S) (from PyTorch's (N * num_heads, L, S))."""
        if attn_mask.ndim == 3:
            return reshape(attn_mask, (-1 if N is None else N, self.num_heads) + tuple(attn_mask.shape[1:]))
        if attn_mask.ndim != 2:
            raise ShapeError(f"MultiheadAttention: attn_mask must be (L, S) or (N * num_heads, L, S), got "
                             f"{attn_mask.shape}")
        return attn_mask

    def _fused_self_attention(self, x: Tensor, attn_mask: Optional[Tensor], padding: Optional[Tensor],
                              causal: bool) -> Tensor:
        """Self-attention of (N, L, E) ``x`` as one packed projection and one attention op over all heads
        (no copies to split or merge heads), with the masks made into one. Returns (N, L, E)."""
        qkv = _linear(x, self.in_proj_weight, self.in_proj_bias)  # (N, L, 3E)
        masks = [m for m in (attn_mask, padding) if m is not None]
        kind, mask = None, None
        if len(masks) == 1 and _is_bool(masks[0]):
            kind, mask = "bool", logical_not(masks[0])  # the op keeps True positions
        elif masks:
            kind, mask = "float", _additive(masks[0])
            for m in masks[1:]:
                mask = mask + _additive(m)
        props = (1.0 / math.sqrt(self.head_dim), causal, kind, self.num_heads)
        return _apply_attention(props, (qkv,) if mask is None else (qkv, mask))

    def forward(self, query, key, value, key_padding_mask=None, need_weights: bool = True, attn_mask=None,
                average_attn_weights: bool = True, is_causal: bool = False) -> tuple:
        """Attend from ``query`` to ``key``/``value``.

        Shapes: query (L, N, E) ((N, L, E) with ``batch_first``; unbatched (L, E)); key (S, N, kdim);
        value (S, N, vdim); key_padding_mask (N, S) (``True`` = padding, ignored); attn_mask (L, S) or
        (N * num_heads, L, S) (bool ``True`` = not allowed, or float added). ``is_causal`` with no
        ``attn_mask`` masks the future (with one, it is only a hint, as PyTorch).

        Returns: ``(attn_output, attn_weights)``: (L, N, E) (layout as query) and, when
        ``need_weights``, (N, L, S) averaged over heads or (N, num_heads, L, S); else ``None``.
        """
        query, key, value = _tensor(query), _tensor(key), _tensor(value)
        batched = query.ndim == 3
        if query.ndim not in (2, 3) or key.ndim != query.ndim or value.ndim != query.ndim:
            raise ShapeError(f"MultiheadAttention: query, key and value must all be 3-D (batched) or 2-D "
                             f"(unbatched), got {query.shape}, {key.shape}, {value.shape}")
        if query.shape[-1] not in (None, self.embed_dim):
            raise ShapeError(f"MultiheadAttention: query's last dimension must be embed_dim={self.embed_dim}, "
                             f"got {query.shape}")
        same = (query is key, key is value)
        if not batched:
            query, key, value = expand_dims(query, 0), expand_dims(key, 0), expand_dims(value, 0)
            if key_padding_mask is not None:
                key_padding_mask = expand_dims(_tensor(key_padding_mask), 0)
        elif not self.batch_first:
            query, key, value = swapaxes(query, 0, 1), swapaxes(key, 0, 1), swapaxes(value, 0, 1)
        if same[0]:
            key = query
        if same[1]:
            value = key
        # now (N, L, E), (N, S, kdim), (N, S, vdim)
        N, L, S = query.shape[0], query.shape[1], key.shape[1]
        causal = attn_mask is None and is_causal
        attn_mask = None if attn_mask is None else self._check_attn_mask(_tensor(attn_mask), N)
        if key_padding_mask is not None:
            key_padding_mask = _tensor(key_padding_mask)
            if key_padding_mask.ndim != 2:
                raise ShapeError(f"MultiheadAttention: key_padding_mask must be (N, S) (or (S,) unbatched), got "
                                 f"{key_padding_mask.shape}")
            key_padding_mask = expand_dims(key_padding_mask, (1, 2))  # (N, 1, 1, S)
        dropping = self.training and self.dropout > 0.0
        extra_keys = self.bias_k is not None or self.add_zero_attn
        if same[0] and same[1] and self._qkv_same_embed_dim and not need_weights and not dropping and not extra_keys:
            out = self._fused_self_attention(query, attn_mask, key_padding_mask, causal)
        else:
            if causal:
                attn_mask = _causal_mask(L, S)
            q, k, v = self._projections(query, key, value)
            if self.bias_k is not None:  # a learned key and value appended to the sequence
                k = concatenate([k, zeros_like(k[:, :1]) + self.bias_k], axis=1)
                v = concatenate([v, zeros_like(v[:, :1]) + self.bias_v], axis=1)
                attn_mask, key_padding_mask = _one_more_key(attn_mask), _one_more_key(key_padding_mask)
            q, k, v = self._heads(q), self._heads(k), self._heads(v)
            if self.add_zero_attn:  # a zero key and value appended (per head)
                k = concatenate([k, zeros_like(k[:, :, :1])], axis=2)
                v = concatenate([v, zeros_like(v[:, :, :1])], axis=2)
                attn_mask, key_padding_mask = _one_more_key(attn_mask), _one_more_key(key_padding_mask)
            scores = matmul(q * (1.0 / math.sqrt(self.head_dim)), swapaxes(k, -1, -2))  # (N, h, L, S)
            scores = _add_mask(_add_mask(scores, attn_mask, True), key_padding_mask, True)
            weights = softmax(scores, axis=-1)
            if dropping:
                weights = _dropout(weights, self.dropout, training=True)
            out = transpose(matmul(weights, v), (0, 2, 1, 3))  # (N, L, h, d)
            out = reshape(out, (-1 if N is None else N, -1 if L is None else L, self.embed_dim))
        out = _linear(out, self.out_proj.weight, self.out_proj.bias)
        if not batched:
            out = squeeze(out, 0)
        elif not self.batch_first:
            out = swapaxes(out, 0, 1)
        if not need_weights:
            return out, None
        if average_attn_weights:
            weights = mean(weights, axis=1)
        if not batched:
            weights = squeeze(weights, 0)
        return out, weights


# ---- transformer encoder --------------------------------------------------------------------------
def _activation(activation: Union[str, Callable]) -> Callable:
    if callable(activation):
        return activation
    if activation == "relu":
        return relu
    if activation == "gelu":
        return gelu
    raise ValueError(f"TransformerEncoderLayer: activation must be 'relu', 'gelu' or a callable, got {activation!r}")


class TransformerEncoderLayer(Module):
    """Self-attention and a feed-forward block, each with a residual connection and layer norm
    (PyTorch's ``nn.TransformerEncoderLayer``; same submodule names, so state dicts load)::

        post-norm: x = norm1(x + sa(x));  x = norm2(x + ff(x))
        pre-norm (norm_first): x = x + sa(norm1(x));  x = x + ff(norm2(x))

    Shapes: src (S, N, E) ((N, S, E) with ``batch_first``; unbatched (S, E)) -> same.

    Examples:
        >>> layer = gg.nn.TransformerEncoderLayer(16, 4, dim_feedforward=32, batch_first=True)
        >>> layer(gg.randn(2, 5, 16)).shape
        (2, 5, 16)
    """

    def __init__(self, d_model: int, nhead: int, dim_feedforward: int = 2048, dropout: float = 0.1,
                 activation: Union[str, Callable] = "relu", layer_norm_eps: float = 1e-5, batch_first: bool = False,
                 norm_first: bool = False, bias: bool = True, device=None, dtype=None) -> None:
        super().__init__()
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias, batch_first=batch_first)
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias)
        self.norm_first = bool(norm_first)
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        self.activation = _activation(activation)
        self._factory(device, dtype)

    def _sa_block(self, x, attn_mask, key_padding_mask, is_causal):
        x = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask, need_weights=False,
                           is_causal=is_causal)[0]
        return self.dropout1(x)

    def _ff_block(self, x):
        return self.dropout2(self.linear2(self.dropout(self.activation(self.linear1(x)))))

    def forward(self, src, src_mask=None, src_key_padding_mask=None, is_causal: bool = False) -> Tensor:
        x = _tensor(src)
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), src_mask, src_key_padding_mask, is_causal)
            x = x + self._ff_block(self.norm2(x))
        else:
            x = self.norm1(x + self._sa_block(x, src_mask, src_key_padding_mask, is_causal))
            x = self.norm2(x + self._ff_block(x))
        return x


class TransformerEncoder(Module):
    """A stack of ``num_layers`` copies of ``encoder_layer`` (each with its own parameters), then an
    optional ``norm`` (PyTorch's ``nn.TransformerEncoder``; submodules ``layers.<i>`` and ``norm``).

    Examples:
        >>> enc = gg.nn.TransformerEncoder(gg.nn.TransformerEncoderLayer(16, 4, 32), num_layers=2)
        >>> enc(gg.randn(5, 2, 16)).shape
        (5, 2, 16)
    """

    def __init__(self, encoder_layer: Module, num_layers: int, norm: Optional[Module] = None,
                 enable_nested_tensor: bool = True, mask_check: bool = True) -> None:
        super().__init__()
        self.layers = ModuleList([copy.deepcopy(encoder_layer) for _ in range(num_layers)])
        self.num_layers = int(num_layers)
        self.norm = norm

    def forward(self, src, mask=None, src_key_padding_mask=None, is_causal: Optional[bool] = None) -> Tensor:
        x = src
        for layer in self.layers:
            x = layer(x, src_mask=mask, src_key_padding_mask=src_key_padding_mask, is_causal=bool(is_causal))
        if self.norm is not None:
            x = self.norm(x)
        return x

