"""ONNX import converters: attention.

``Attention`` (opset 23+): scaled dot-product attention with multi-head, grouped-query and
multi-query heads, an optional boolean or additive mask, causal and sliding-window masking, a KV
cache (``past_key``/``past_value`` -> ``present_key``/``present_value``) or an external padded cache
(``nonpad_kv_seqlen``), softcap and the optional ``qk_matmul_output``. Everything that depends on the
model's data is built from graphgrad ops; masks that depend only on static shapes and attributes
(causal, window) are NumPy constants computed at import time.
"""
from __future__ import annotations

import math

import graphgrad.ops as G
from graphgrad.backend import np
from graphgrad.core.tensor import Tensor
from graphgrad.io.onnx.importer import converter, np_dtype


def _const(array, dtype) -> Tensor:
    """An import-time constant of ``dtype`` (attribute floats are float64: never let them promote)."""
    return Tensor(np.asarray(array, dtype=dtype))


def _dim(node, x, axis: int, what: str) -> int:
    d = x.shape[axis]
    if d is None:
        raise node.error(f"needs a static {what} (dim {axis} of shape {tuple(x.shape)})")
    return int(d)


def _to_heads(node, x, heads, what: str):
    """(B, S, heads * size) -> (B, heads, S, size)."""
    if heads is None:
        raise node.error(f"3-D {what} needs the q_num_heads and kv_num_heads attributes")
    seq, hidden = _dim(node, x, 1, f"{what} sequence length"), _dim(node, x, 2, f"{what} hidden size")
    if hidden % heads:
        raise node.error(f"{what} hidden size {hidden} is not divisible by {heads} heads")
    return G.transpose(G.reshape(x, (-1, seq, int(heads), hidden // int(heads))), (0, 2, 1, 3))


def _is_neginf(x):
    return G.logical_and(G.isinf(x), G.less(x, _const(0, x.dtype)))


def _safe_softmax(x):
    """Softmax over the last axis; a row that is all ``-inf`` gives zeros instead of NaN."""
    dtype = x.dtype
    zero, one = _const(0, dtype), _const(1, dtype)
    x_max = G.amax(x, axis=-1, keepdims=True)
    safe_max = G.where(_is_neginf(x_max), zero, x_max)
    e = G.exp(x - safe_max)
    s = G.sum(e, axis=-1, keepdims=True)
    s = G.where(G.equal(s, zero), one, s)
    return e / s


def _position_bias(node, q_len, kv_len, dtype, offset, nonpad, causal, left, right):
    """The additive (0 / -inf) bias of the causal frontier and the sliding window, for query block
    index ``i`` at absolute position ``i + offset`` against key ``j``: shape (q, kv) for a static
    offset, (B, 1, q, kv) when the offset comes per batch from ``nonpad_kv_seqlen``."""
    i_minus_j = np.arange(q_len).reshape(q_len, 1) - np.arange(kv_len).reshape(1, kv_len)
    if nonpad is None:
        diff = i_minus_j + int(offset)  # p - j
        allowed = np.ones(diff.shape, dtype=bool)
        if causal:
            allowed &= diff >= 0
        if left >= 0:
            allowed &= diff <= left
        if right >= 0:
            allowed &= -diff <= right
        return _const(np.where(allowed, 0, -np.inf), dtype)
    offsets = G.reshape(G.astype(nonpad, np.int64), (-1, 1, 1)) - _const(q_len, np.int64)  # (B, 1, 1)
    diff = _const(i_minus_j, np.int64) + offsets  # (B, q, kv)
    conditions = []
    if causal:
        conditions.append(G.greater_equal(diff, _const(0, np.int64)))
    if left >= 0:
        conditions.append(G.less_equal(diff, _const(left, np.int64)))
    if right >= 0:
        conditions.append(G.less_equal(-diff, _const(right, np.int64)))
    allowed = conditions[0]
    for c in conditions[1:]:
        allowed = G.logical_and(allowed, c)
    bias = G.where(allowed, _const(0, dtype), _const(-np.inf, dtype))
    return G.reshape(bias, (-1, 1, q_len, kv_len))


@converter("Attention")
def attention(node, q, k, v, attn_mask=None, past_key=None, past_value=None, nonpad_kv_seqlen=None):
    is_causal = bool(node.attr("is_causal", 0))
    q_heads, kv_heads = node.attr("q_num_heads"), node.attr("kv_num_heads")
    mode = int(node.attr("qk_matmul_output_mode", 0))
    scale = node.attr("scale")
    softcap = float(node.attr("softcap", 0.0))
    softmax_precision = node.attr("softmax_precision")
    left, right = int(node.attr("left_window_size", -1)), int(node.attr("right_window_size", -1))
    if (past_key is None) != (past_value is None):
        raise node.error("past_key and past_value must be given together")
    if nonpad_kv_seqlen is not None and past_key is not None:
        raise node.error("nonpad_kv_seqlen cannot be combined with past_key/past_value")
    if not (q.ndim == k.ndim == v.ndim) or q.ndim not in (3, 4):
        raise node.error(f"Q, K and V must all be 3-D or all 4-D, got ranks {q.ndim}, {k.ndim}, {v.ndim}")
    dtype = q.dtype

    rank3 = q.ndim == 3
    if rank3:
        q = _to_heads(node, q, q_heads, "Q")
        k = _to_heads(node, k, kv_heads, "K")
        v = _to_heads(node, v, kv_heads, "V")

    head_size = _dim(node, q, 3, "head size")
    if scale is None:
        scale = 1 / np.sqrt(head_size)
    sqrt_scale = _const(np.sqrt(float(scale)), dtype)  # Q and K are each scaled by sqrt(scale)

    # KV cache
    if past_key is not None:
        k = G.concatenate([past_key, k], axis=2)
        v = G.concatenate([past_value, v], axis=2)
    present_key, present_value = k, v

    q_len = _dim(node, q, 2, "query sequence length")
    kv_len = _dim(node, k, 2, "key sequence length")

    # The additive bias: attn_mask (padded to kv_len), causal frontier, sliding window, padding.
    bias = None
    zero, neg_inf = _const(0, dtype), _const(-np.inf, dtype)
    if attn_mask is not None:
        mask_len = _dim(node, attn_mask, -1, "attn_mask length")
        if mask_len < kv_len:
            boolean = attn_mask.dtype == np.bool_
            pad_shape = tuple(_dim(node, attn_mask, a, "attn_mask shape") for a in range(attn_mask.ndim - 1))
            filler = np.full(pad_shape + (kv_len - mask_len,), False if boolean else -np.inf,
                             dtype=attn_mask.dtype)
            attn_mask = G.concatenate([attn_mask, Tensor(filler)], axis=-1)
        if attn_mask.dtype == np.bool_:
            bias = G.where(attn_mask, zero, neg_inf)
        else:
            bias = attn_mask if attn_mask.dtype == dtype else G.astype(attn_mask, dtype)
    if is_causal or left >= 0 or right >= 0:
        offset = int(past_key.shape[2]) if past_key is not None else 0
        per_batch = nonpad_kv_seqlen if past_key is None else None
        position = _position_bias(node, q_len, kv_len, dtype, offset, per_batch, is_causal, left, right)
        bias = position if bias is None else bias + position
    if nonpad_kv_seqlen is not None:
        keys = _const(np.arange(kv_len).reshape(1, kv_len), np.int64)
        valid = G.less(keys, G.reshape(G.astype(nonpad_kv_seqlen, np.int64), (-1, 1)))  # (B, kv)
        padding = G.reshape(G.where(valid, zero, neg_inf), (-1, 1, 1, kv_len))
        bias = padding if bias is None else bias + padding

    # Grouped-query attention: repeat each KV head (h0, h0, h1, h1, ...) to match the query heads.
    n_q, n_k, n_v = (_dim(node, t, 1, "number of heads") for t in (q, k, v))
    if n_q != n_k and n_k == n_v:
        if n_q % n_k:
            raise node.error(f"{n_q} query heads are not a multiple of {n_k} key/value heads")
        k = G.repeat(k, n_q // n_k, axis=1)
        v = G.repeat(v, n_q // n_k, axis=1)

    qk = G.matmul(q * sqrt_scale, G.transpose(k * sqrt_scale, (0, 1, 3, 2)))
    if softcap > 0:
        cap = _const(softcap, dtype)
        qk = G.tanh(qk / cap) * cap
    qk_out = qk  # modes 0 and 1 (as the reference, mode 0 gives the softcapped product)
    scores = qk if bias is None else qk + bias
    if mode == 2:
        qk_out = scores

    if softmax_precision is not None:
        scores = G.astype(scores, np_dtype(softmax_precision))
    probs = _safe_softmax(scores)
    if bias is not None:  # fully masked rows (decided on the bias, not the logits) give zeros
        masked_row = _is_neginf(G.amax(bias, axis=-1, keepdims=True))
        probs = G.where(masked_row, _const(0, probs.dtype), probs)
    if probs.dtype != dtype:
        probs = G.astype(probs, dtype)
    if mode == 3:
        qk_out = probs
    if qk_out.dtype != dtype:
        qk_out = G.astype(qk_out, dtype)

    y = G.matmul(probs, v)
    if rank3:
        y = G.transpose(y, (0, 2, 1, 3))
        y = G.reshape(y, (-1, q_len, math.prod(int(d) for d in y.shape[2:])))
    return (y, present_key, present_value, qk_out)[:max(1, node.num_outputs)]
