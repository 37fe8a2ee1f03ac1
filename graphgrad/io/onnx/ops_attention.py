"""ONNX import converters: attention and the transformer-family ops around it.

* ``Attention`` (opset 23+): scaled dot-product attention with multi-head, grouped-query and
  multi-query heads, an optional boolean or additive mask, causal and sliding-window masking, a KV
  cache (``past_key``/``past_value`` -> ``present_key``/``present_value``) or an external padded
  cache (``nonpad_kv_seqlen``), softcap and the optional ``qk_matmul_output``.
* ``FlexAttention`` (``ai.onnx.preview``): attention over 4-D Q, K, V whose scores and
  probabilities may be rewritten by the ``score_mod`` and ``prob_mod`` subgraphs (interpreted with
  graphgrad ops, as control-flow bodies are: see ops_control.py), with grouped-query heads.
* ``RotaryEmbedding`` (opset 23): rotary position embeddings (RoPE) on 4-D ``(B, H, S, D)`` or 3-D
  ``(B, S, H * D)`` inputs, halves or interleaved pairs rotated, a partial ``rotary_embedding_dim``,
  cos/sin caches indexed by ``position_ids`` or given per token.
* ``SwiGLU`` (opset 28): ``Swish_alpha(A) * B``.
* ``LinearAttention`` (opset 27): the recurrent linear-attention family (``linear``, ``gated``,
  ``delta``, ``gated_delta`` update rules) with grouped-query heads and a recurrent state
  (``past_state`` -> ``present_state``); the recurrence is unrolled over the (static) sequence length.
* ``CausalConvWithState`` (opset 27): a causal depthwise 1-D convolution whose left context comes
  from ``past_state`` (or zeros), with an optional fused SiLU; returns the new carry state.

Everything that depends on the model's data is built from graphgrad ops, so an imported model runs
eagerly, in a graph or in a trace and stays differentiable; what depends only on static shapes and
attributes (causal and window masks, lane permutations) is a NumPy constant computed at import time.
Half-precision inputs keep their dtype on the way out; where the ONNX reference accumulates in
float32 (softmax of FlexAttention, the LinearAttention state, the SiLU of CausalConvWithState), so
do these converters.
"""
from __future__ import annotations

import math

import graphgrad.ops as G
from graphgrad.backend import np
from graphgrad.core.tensor import Tensor
from graphgrad.io.onnx.importer import const_tensor, converter, np_dtype
from graphgrad.io.onnx.ops_control import run_subgraph


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
    return G.logical_and(G.isinf(x), G.less(x, const_tensor(0, x.dtype)))


def _safe_softmax(x):
    """Softmax over the last axis; a row that is all ``-inf`` gives zeros instead of NaN."""
    dtype = x.dtype
    zero, one = const_tensor(0, dtype), const_tensor(1, dtype)
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
        return const_tensor(np.where(allowed, 0, -np.inf), dtype)
    offsets = G.reshape(G.astype(nonpad, np.int64), (-1, 1, 1)) - const_tensor(q_len, np.int64)  # (B, 1, 1)
    diff = const_tensor(i_minus_j, np.int64) + offsets  # (B, q, kv)
    conditions = []
    if causal:
        conditions.append(G.greater_equal(diff, const_tensor(0, np.int64)))
    if left >= 0:
        conditions.append(G.less_equal(diff, const_tensor(left, np.int64)))
    if right >= 0:
        conditions.append(G.less_equal(-diff, const_tensor(right, np.int64)))
    allowed = conditions[0]
    for c in conditions[1:]:
        allowed = G.logical_and(allowed, c)
    bias = G.where(allowed, const_tensor(0, dtype), const_tensor(-np.inf, dtype))
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
    sqrt_scale = const_tensor(np.sqrt(float(scale)), dtype)  # Q and K are each scaled by sqrt(scale)

    # KV cache
    if past_key is not None:
        k = G.concatenate([past_key, k], axis=2)
        v = G.concatenate([past_value, v], axis=2)
    present_key, present_value = k, v

    q_len = _dim(node, q, 2, "query sequence length")
    kv_len = _dim(node, k, 2, "key sequence length")

    # The additive bias: attn_mask (padded to kv_len), causal frontier, sliding window, padding.
    bias = None
    zero, neg_inf = const_tensor(0, dtype), const_tensor(-np.inf, dtype)
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
        keys = const_tensor(np.arange(kv_len).reshape(1, kv_len), np.int64)
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
        cap = const_tensor(softcap, dtype)
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
        probs = G.where(masked_row, const_tensor(0, probs.dtype), probs)
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


def _compute_dtype(dtype):
    """float32 for half-precision inputs (as the ONNX reference accumulates), else the input's dtype."""
    return np.dtype(np.float32) if np.dtype(dtype).itemsize < 4 else np.dtype(dtype)


# ---- FlexAttention ---------------------------------------------------------------------------------------
def _run_modifier(node, name: str, x):
    """Apply the ``score_mod``/``prob_mod`` subgraph ``name`` (one rank-4 input, one output) to ``x``."""
    graph = node.attr(name)
    if graph is None:
        return x
    if len(graph.input) != 1 or len(graph.output) != 1:
        raise node.error(f"{name} must take one input and give one output, it has {len(graph.input)} "
                         f"and {len(graph.output)}")
    (out,), _ = run_subgraph(node, graph, {graph.input[0].name: x})
    if tuple(out.shape) != tuple(x.shape):
        raise node.error(f"{name} must keep the shape {tuple(x.shape)}, it gives {tuple(out.shape)}")
    return out if out.dtype == x.dtype else G.astype(out, x.dtype)


@converter("FlexAttention", domain="ai.onnx.preview")
def flex_attention(node, q, k, v):
    """Q (B, Hq, L, E), K (B, Hkv, S, E), V (B, Hkv, S, Ev) -> Y (B, Hq, L, Ev)."""
    if not q.ndim == k.ndim == v.ndim == 4:
        raise node.error(f"Q, K and V must be 4-D, got ranks {q.ndim}, {k.ndim}, {v.ndim}")
    dtype = q.dtype
    scale = node.attr("scale")
    if scale is None:
        scale = 1 / np.sqrt(_dim(node, q, 3, "head size"))
    precision = node.attr("softmax_precision")
    compute = np_dtype(precision) if precision is not None else _compute_dtype(dtype)

    n_q, n_kv = _dim(node, q, 1, "number of query heads"), _dim(node, k, 1, "number of key/value heads")
    if n_q != n_kv:
        if n_q % n_kv:
            raise node.error(f"{n_q} query heads are not a multiple of {n_kv} key/value heads")
        k = G.repeat(k, n_q // n_kv, axis=1)
        v = G.repeat(v, n_q // n_kv, axis=1)

    sqrt_scale = const_tensor(np.sqrt(np.float32(scale)), dtype)  # Q and K are each scaled by sqrt(scale)
    scores = G.matmul(q * sqrt_scale, G.transpose(k * sqrt_scale, (0, 1, 3, 2)))
    scores = _run_modifier(node, "score_mod", G.astype(scores, compute))
    probs = _run_modifier(node, "prob_mod", G.softmax(scores, axis=-1))
    return G.astype(G.matmul(probs, G.astype(v, compute)), v.dtype)


# ---- RotaryEmbedding -------------------------------------------------------------------------------------
@converter("RotaryEmbedding")
def rotary_embedding(node, x, cos_cache, sin_cache, position_ids=None):
    """x (B, H, S, D) or (B, S, H * D) with ``num_heads``; the caches are (max_position, R / 2) with
    ``position_ids`` (B, S), else (B, S, R / 2), where R is ``rotary_embedding_dim`` (default D).
    Returns x's shape, with the first R lanes of each head rotated by position."""
    if x.ndim not in (3, 4):
        raise node.error(f"the input must be 3-D or 4-D, got shape {tuple(x.shape)}")
    rank3 = x.ndim == 3
    shape_in = x.shape
    if rank3:
        heads = int(node.attr("num_heads", 0))
        if heads <= 0:
            raise node.error("a 3-D input needs the num_heads attribute")
        seq, hidden = _dim(node, x, 1, "sequence length"), _dim(node, x, 2, "hidden size")
        if hidden % heads:
            raise node.error(f"hidden size {hidden} is not divisible by {heads} heads")
        x = G.reshape(x, (-1, seq, heads, hidden // heads))  # (B, S, H, D)
    head_size = _dim(node, x, 3, "head size")
    rotary = int(node.attr("rotary_embedding_dim", 0)) or head_size
    if rotary % 2 or rotary > head_size:
        raise node.error(f"rotary_embedding_dim {rotary} must be even and at most the head size {head_size}")
    half = rotary // 2

    if position_ids is not None:
        cos_cache = G.take(cos_cache, position_ids, axis=0)
        sin_cache = G.take(sin_cache, position_ids, axis=0)
    indexed = " after indexing by position_ids" if position_ids is not None else ""
    for name, cache in (("cos_cache", cos_cache), ("sin_cache", sin_cache)):
        if cache.ndim != 3 or cache.shape[-1] not in (None, half):
            raise node.error(f"{name} must give (batch, sequence, {half}) values per token, got shape "
                             f"{tuple(cache.shape)}{indexed}")
    head_axis = 2 if rank3 else 1
    cos = G.expand_dims(G.astype(cos_cache, x.dtype), head_axis)  # broadcast over the heads
    sin = G.expand_dims(G.astype(sin_cache, x.dtype), head_axis)

    # Each rotated lane i pairs with a partner lane: out_i = x_i cos_p - x_partner sin_p for the
    # pair's first lane, x_i cos_p + x_partner sin_p for its second. Pairs are (2p, 2p + 1) when
    # interleaved, else (p, p + half).
    lanes = np.arange(rotary)
    if node.attr("interleaved", 0):
        pair, partner, first = lanes // 2, lanes ^ 1, lanes % 2 == 0
    else:
        pair, partner, first = lanes % half, (lanes + half) % rotary, lanes < half
    sign = const_tensor(np.where(first, -1, 1), x.dtype)
    x_rot = x[..., :rotary]
    out = x_rot * G.take(cos, pair, axis=-1) + G.take(x_rot, partner, axis=-1) * (G.take(sin, pair, axis=-1) * sign)
    if rotary < head_size:
        out = G.concatenate([out, x[..., rotary:]], axis=-1)
    if rank3:
        out = G.reshape(out, (-1,) + tuple(shape_in[1:]))
    return out


# ---- SwiGLU ----------------------------------------------------------------------------------------------
@converter("SwiGLU")
def swiglu(node, a, b):
    """``A * sigmoid(alpha * A) * B`` for A and B of one shape (no broadcasting)."""
    if tuple(a.shape) != tuple(b.shape) or a.dtype != b.dtype:
        raise node.error(f"A and B must have the same shape and dtype, got {tuple(a.shape)} {a.dtype} and "
                         f"{tuple(b.shape)} {b.dtype}")
    alpha = float(node.attr("alpha", 1.0))
    gate = G.sigmoid(a * const_tensor(alpha, a.dtype) if alpha != 1.0 else a)
    return a * gate * b


# ---- LinearAttention -------------------------------------------------------------------------------------
_UPDATE_RULES = {"linear": (False, False), "gated": (True, False), "delta": (False, True),
                 "gated_delta": (True, True)}  # rule -> (decays the state, delta correction)


def _split_heads(node, x, heads: int, what: str, time_axis: int = 2):
    """(B, T, heads * size) -> (B, heads, T, size), or (B, heads, size, T) with ``time_axis=3``."""
    seq, packed = _dim(node, x, 1, f"{what} sequence length"), _dim(node, x, 2, f"{what} last dim")
    if packed % heads:
        raise node.error(f"{what} last dim {packed} is not divisible by {heads} heads")
    x = G.reshape(x, (-1, seq, heads, packed // heads))
    return G.transpose(x, (0, 2, 1, 3) if time_axis == 2 else (0, 2, 3, 1))


@converter("LinearAttention")
def linear_attention(node, query, key, value, past_state=None, decay=None, beta=None):
    """query (B, T, Hq * dk), key (B, T, Hkv * dk), value (B, T, Hkv * dv), past_state (B, Hkv, dk, dv),
    decay (B, T, Hkv * dk) or (B, T, Hkv), beta (B, T, Hkv) or (B, T, 1)
    -> output (B, T, Hq * dv), present_state (B, Hkv, dk, dv)."""
    rule = node.attr("update_rule", "gated_delta")
    if rule not in _UPDATE_RULES:
        raise node.error(f"update_rule {rule!r} is not one of {sorted(_UPDATE_RULES)}")
    gated, delta = _UPDATE_RULES[rule]
    if gated != (decay is not None):
        raise node.error(f"update_rule {rule!r} {'needs' if gated else 'takes no'} decay input")
    if delta != (beta is not None):
        raise node.error(f"update_rule {rule!r} {'needs' if delta else 'takes no'} beta input")
    q_heads, kv_heads = node.attr("q_num_heads"), node.attr("kv_num_heads")
    if q_heads is None or kv_heads is None:
        raise node.error("needs the q_num_heads and kv_num_heads attributes")
    q_heads, kv_heads = int(q_heads), int(kv_heads)
    if q_heads <= 0 or kv_heads <= 0 or q_heads % kv_heads:
        raise node.error(f"q_num_heads {q_heads} must be a positive multiple of kv_num_heads {kv_heads}")
    for what, t in (("query", query), ("key", key), ("value", value), ("decay", decay), ("beta", beta)):
        if t is not None and t.ndim != 3:
            raise node.error(f"{what} must be 3-D (B, T, heads * size), got shape {tuple(t.shape)}")
    group = q_heads // kv_heads
    steps = _dim(node, query, 1, "sequence length")
    if steps == 0:
        raise node.error("needs at least one token (the sequence length is 0)")
    q_size, k_size = _dim(node, query, 2, "query last dim"), _dim(node, key, 2, "key last dim")
    if q_size % q_heads or k_size * q_heads != q_size * kv_heads:
        raise node.error(f"query (last dim {q_size}, {q_heads} heads) and key (last dim {k_size}, {kv_heads} "
                         "heads) must have one head size")
    d_k = q_size // q_heads
    d_v = _dim(node, value, 2, "value last dim") // kv_heads
    out_dtype = query.dtype
    # the state accumulates in float32 at least, as in the reference (which also narrows float64 to float32)
    compute = np.dtype(np.float64) if out_dtype == np.float64 else np.dtype(np.float32)
    scale = float(node.attr("scale", 0.0)) or 1 / math.sqrt(d_k)

    def in_compute(x):
        return G.astype(x, compute)

    # Query heads h = kv * group + j all read the state of KV head kv: (B, Hkv, T, group, dk).
    q = G.reshape(in_compute(query), (-1, steps, kv_heads, group, d_k))
    q = G.transpose(q, (0, 2, 1, 3, 4)) * const_tensor(scale, compute)
    k_rows = _split_heads(node, in_compute(key), kv_heads, "key")  # (B, Hkv, T, dk)
    k_cols = _split_heads(node, in_compute(key), kv_heads, "key", time_axis=3)  # (B, Hkv, dk, T)
    v = _split_heads(node, in_compute(value), kv_heads, "value")  # (B, Hkv, T, dv)
    if gated:
        decay_size = _dim(node, decay, 2, "decay last dim")
        if decay_size not in (kv_heads, kv_heads * d_k):
            raise node.error(f"decay last dim {decay_size} must be kv_num_heads ({kv_heads}) or "
                             f"kv_num_heads * d_k ({kv_heads * d_k})")
        gate = G.exp(_split_heads(node, in_compute(decay), kv_heads, "decay", time_axis=3))  # (B, Hkv, dk or 1, T)
    if delta:
        beta_size = _dim(node, beta, 2, "beta last dim")
        if beta_size not in (kv_heads, 1):
            raise node.error(f"beta last dim {beta_size} must be kv_num_heads ({kv_heads}) or 1")
        beta = _split_heads(node, in_compute(beta), beta_size, "beta")  # (B, Hkv or 1, T, 1)

    if past_state is not None and (past_state.ndim != 4 or tuple(past_state.shape[1:]) != (kv_heads, d_k, d_v)):
        raise node.error(f"past_state must have shape (B, {kv_heads}, {d_k}, {d_v}), got {tuple(past_state.shape)}")
    state_dtype = out_dtype if past_state is None else past_state.dtype
    state = None if past_state is None else in_compute(past_state)  # None: zeros, without a static batch size
    outputs = []
    for t in range(steps):  # the recurrence S_t = f(S_{t-1}), one token at a time
        k_col, v_t = k_cols[:, :, :, t:t + 1], v[:, :, t:t + 1, :]  # (B, Hkv, dk, 1), (B, Hkv, 1, dv)
        if gated and state is not None:
            state = state * gate[:, :, :, t:t + 1]
        if delta:  # write beta * (v - what the state already recalls for k)
            if state is not None:
                v_t = v_t - G.matmul(k_rows[:, :, t:t + 1, :], state)  # (B, Hkv, 1, dv)
            v_t = beta[:, :, t:t + 1, :] * v_t
        state = k_col * v_t if state is None else state + k_col * v_t
        outputs.append(G.matmul(q[:, :, t], state))  # (B, Hkv, group, dv)
    output = G.reshape(G.stack(outputs, axis=1), (-1, steps, q_heads * d_v))  # (B, T, Hkv, group, dv) packed
    return G.astype(output, out_dtype), G.astype(state, state_dtype)


# ---- CausalConvWithState ---------------------------------------------------------------------------------
@converter("CausalConvWithState")
def causal_conv_with_state(node, x, weight, bias=None, past_state=None):
    """x (B, C, L), weight (C, 1, k), bias (C,), past_state (B, C, k - 1) -> output (B, C, L),
    present_state (B, C, k - 1): a depthwise convolution of ``[past_state, x]`` that sees no future."""
    activation = node.attr("activation", "none")
    if activation not in ("none", "silu", "swish"):
        raise node.error(f"activation {activation!r} is not one of 'none', 'silu', 'swish'")
    if x.ndim != 3 or weight.ndim != 3:
        raise node.error(f"input and weight must be 3-D, got shapes {tuple(x.shape)} and {tuple(weight.shape)}")
    channels = _dim(node, x, 1, "number of channels")
    kernel = _dim(node, weight, 2, "kernel size")
    length = _dim(node, x, 2, "length")
    if past_state is None:
        padded = G.pad(x, ((0, 0), (0, 0), (kernel - 1, 0)))
    else:
        if past_state.ndim != 3 or tuple(past_state.shape[1:]) != (channels, kernel - 1):
            raise node.error(f"past_state must have shape (B, {channels}, {kernel - 1}), got {tuple(past_state.shape)}")
        padded = G.concatenate([past_state, x], axis=2)
    y = G.conv1d(padded, weight, bias, groups=channels)
    if activation != "none":  # silu, computed in float32 at least, as the reference does
        y32 = G.astype(y, _compute_dtype(y.dtype))
        y = G.astype(y32 * G.sigmoid(y32), x.dtype)
    return y, padded[:, :, length:]
