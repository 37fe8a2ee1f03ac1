"""Scaled dot-product attention as two ops forward and one op backward.

``softmax(q k^T * scale + mask) v`` written with ordinary ops is a dozen ops each way and as many
passes over the (..., L, S) scores. Here ``AttentionWeights`` computes the weights with one batched
matmul and a softmax done in place, ``ScaledDotProductAttention`` applies them to ``v`` (one batched
matmul), and ``ScaledDotProductAttentionGrad`` returns the gradients of all inputs from one op, in
one array, reusing the weights (nothing is recomputed).

The scores are computed transposed, as (..., S, L) = ``k q^T``: the softmax then reduces over axis -2,
whose rows NumPy combines whole, where a reduction over a short last axis runs 3-5x slower. The
matmuls take the transposes as strided views (no copies). The batch is split over threads. For float32
NumPy arrays with native kernels on, the passes around the matmuls (scale, mask, softmax; the softmax's
backward) are one C pass per block (backend/native/transformer.c); the matmuls stay BLAS.

Two input layouts (the ``heads`` prop):

* ``heads=None``: ``q`` (..., L, E), ``k`` (..., S, E), ``v`` (..., S, Ev) with the same batch
  dimensions; output (..., L, Ev) (PyTorch's ``F.scaled_dot_product_attention``). The gradient op
  returns (..., L*E + S*E + S*Ev): the three gradients side by side, split by views.
* ``heads=h``: one packed input ``qkv`` (N, L, 3E), the output of a self-attention input projection
  (q, k, v side by side, each ``h`` heads of ``E/h``); output (N, L, E), heads merged. Heads are
  strided views of ``qkv`` and of the output, so splitting and merging them copies nothing, and the
  gradient is one (N, L, 3E) array.

The optional ``mask`` input (``mask`` prop): ``"float"`` is added to the scaled scores, ``"bool"``
keeps the positions that are ``True``; it broadcasts to (..., L, S) ((N, h, L, S) packed). ``causal``
hides key ``j > i`` from query ``i``. A query that sees no key gets NaN, as in the composition. With
``create_graph`` the backward is the composition's formula in ordinary ops (differentiable again).
"""
from __future__ import annotations

import math
from typing import Optional

from graphgrad.backend import blas, native, np
from graphgrad.backend.parallel import parallel_for
from graphgrad.core.autograd import is_grad_enabled
from graphgrad.core.creation import ones
from graphgrad.core.op import Op, as_tensor_args
from graphgrad.core.spec import TensorSpec
from graphgrad.core.tensor import Tensor
from graphgrad.errors import DTypeError, GradError, ShapeError
from graphgrad.ops.array import reshape_like
from graphgrad.ops.elementwise import where
from graphgrad.ops.linalg import matmul
from graphgrad.ops.nn import dropout, softmax
from graphgrad.ops.reduce import sum as _sum
from graphgrad.ops.shape import repeat, reshape, stack, swapaxes, transpose, triu

_NEG_INF = float("-inf")


def _fmt(shape) -> str:
    return str(tuple(shape))


# ---- kernels on arrays ----------------------------------------------------------------------------------
def _column_max(xp, a):
    """``a.max(axis=-2, keepdims=True)`` by halving: each step is one ``maximum`` of two blocks of whole
    rows, where NumPy's own reduction over axis -2 walks row by row (3x slower for 64 rows)."""
    n = a.shape[-2]
    if n < 2:
        return a.max(axis=-2, keepdims=True, initial=_NEG_INF)
    half = n // 2
    m = xp.maximum(a[..., :half, :], a[..., half:2 * half, :])
    if n % 2:
        xp.maximum(m[..., :1, :], a[..., 2 * half:, :], out=m[..., :1, :])
    while half > 1:
        quarter = half // 2
        xp.maximum(m[..., :quarter, :], m[..., quarter:2 * quarter, :], out=m[..., :quarter, :])
        if half % 2:
            xp.maximum(m[..., :1, :], m[..., 2 * quarter:half, :], out=m[..., :1, :])
        half = quarter
    return m[..., :1, :]


def _column_sum(xp, a):
    """``a.sum(axis=-2, keepdims=True)`` as a matrix-vector product (BLAS; 4x NumPy's reduction)."""
    return blas.xp_matmul(xp, xp.ones(a.shape[-2], a.dtype), a)[..., None, :]


def _transposed_mask(xp, mask, dtype):
    """A mask broadcastable to (..., L, S) as an additive one broadcastable to (..., S, L), contiguous
    (adding a strided transpose costs twice as much)."""
    if mask.ndim < 2:
        mask = mask.reshape((1,) * (2 - mask.ndim) + mask.shape)
    mask = mask.swapaxes(-1, -2)
    if mask.dtype.kind == "b":
        return xp.where(mask, 0.0, _NEG_INF).astype(dtype)
    return xp.ascontiguousarray(mask)


def _exp_scores_t(xp, op, q, k, mask) -> tuple:
    """``E^T = exp(scale * k q^T + mask^T - max)`` (..., S, L), a new array, and its column sums
    (..., 1, L): the transposed attention weights are ``E^T / sums``. ``q`` (..., L, E), ``k`` (..., S, E)."""
    st = blas.xp_matmul(xp, k, q.swapaxes(-1, -2))
    st *= op.scale
    if op.causal:
        L, S = q.shape[-2], k.shape[-2]
        st += xp.tril(xp.full((S, L), _NEG_INF, st.dtype), -1)  # key j > query i
    if op.mask is not None:
        st += _transposed_mask(xp, mask, st.dtype)
    st -= _column_max(xp, st)
    xp.exp(st, out=st)
    return st, _column_sum(xp, st)


def _native_mask_t(mask, shape) -> tuple:
    """The mask as the native softmax takes it, for transposed weights of ``shape`` (..., S, L):
    ``(array, mode)``, mode 0 no mask, 1 one contiguous (S, L) mask for every block, 2 one per block
    (broadcast and copied to ``shape``: only for masks that vary over the batch)."""
    if mask is None:
        return None, 0
    mask_t = _transposed_mask(np, mask, np.float32)
    if mask_t.shape[-2:] == tuple(shape[-2:]) and all(n == 1 for n in mask_t.shape[:-2]):
        return np.ascontiguousarray(mask_t.reshape(shape[-2:]), np.float32), 1
    return np.ascontiguousarray(np.broadcast_to(mask_t, shape), np.float32), 2


def _native_attention(q, *arrays):
    """Whether the native softmax applies: NumPy float32 arrays (views allowed: the matmuls take them)."""
    return q.dtype == np.float32 and all(type(a) is np.ndarray for a in (q,) + arrays if a is not None)


def _packed_kernel(op, name: str, qkv, *arrays):
    """The native whole-head kernel ``name`` (backend/native/transformer.c) for packed heads: float32
    NumPy arrays, qkv C-contiguous, self-attention with head widths of whole vectors (16 floats), native
    kernels on; else ``None`` (the per-block path)."""
    if not op.heads or type(qkv) is not np.ndarray or qkv.dtype != np.float32 or not qkv.flags.c_contiguous \
            or any(type(a) is not np.ndarray for a in arrays if a is not None):
        return None
    if (qkv.shape[2] // (3 * op.heads)) % 16 or 0 in qkv.shape:
        return None
    return native.kernel(name)


def _batch_slice(arrays, rank: int, start: int, stop: int) -> tuple:
    """Items ``start:stop`` of the leading batch axis of each array of rank ``rank`` (the others, e.g.
    broadcast masks, and everything when there is no batch axis, are passed whole)."""
    if rank < 3:
        return tuple(arrays)
    return tuple(a[start:stop] if a is not None and a.ndim == rank and a.shape[0] != 1 else a for a in arrays)


# the scores of a batch item must reach this many elements before the batch is split over threads
_MIN_SPLIT_SCORES = 1 << 15


def _split_batch(xp, part, q, k) -> None:
    """Run ``part(start, stop)`` over the leading batch axis of ``q`` in parallel threads (the batch
    items are independent: the matmuls and the softmax of each half run on their own core)."""
    if q.ndim < 3:
        part(0, 1)
        return
    per_item = math.prod(q.shape[1:-1]) * k.shape[-2]
    parallel_for(xp, part, q.shape[0], min_part=-(-_MIN_SPLIT_SCORES // max(per_item, 1)))


# ---- the ops ---------------------------------------------------------------------------------------------
class _Attention(Op):
    """Props and input layout shared by the attention ops (see the module docstring). Inputs:
    ``q, k, v`` (or ``qkv`` when ``heads``), then the mask when ``mask``, then the op's own extras."""

    props = ("scale", "causal", "mask", "heads")
    saves_output = False
    n_extra = 0  # inputs after q, k, v and the mask

    def __init__(self, scale: float, causal: bool = False, mask: Optional[str] = None, heads: Optional[int] = None):
        if mask not in (None, "float", "bool"):
            raise ValueError(f"{self.name}: mask must be None, 'float' or 'bool', got {mask!r}")
        self.scale, self.causal, self.mask = float(scale), bool(causal), mask
        self.heads = None if heads is None else int(heads)

    def _split(self, items) -> tuple:
        n = 1 if self.heads else 3
        has_mask = self.mask is not None
        return tuple(items[:n]), items[n] if has_mask else None, tuple(items[n + has_mask:])

    def _qkv(self, arrays) -> tuple:
        """q (..., L, E), k (..., S, E), v (..., S, Ev) arrays (views of a packed input)."""
        if not self.heads:
            return tuple(arrays)
        x = arrays[0]
        N, L, width = x.shape
        heads = x.reshape(N, L, 3, self.heads, width // (3 * self.heads))
        return tuple(heads[:, :, i].transpose(0, 2, 1, 3) for i in range(3))

    def _merged(self, out):
        """A (N, L, E) array as its (N, h, L, E/h) heads (a view)."""
        N, L, E = out.shape
        return out.reshape(N, L, self.heads, E // self.heads).transpose(0, 2, 1, 3)

    def _check(self, specs) -> TensorSpec:
        """The attention output's spec (the shape rule shared by the ops)."""
        arrays, mask, extras = self._split(specs)
        expected = (1 if self.heads else 3) + (self.mask is not None) + self.n_extra
        if len(specs) != expected:
            raise ShapeError(f"{self.name}: expected {expected} inputs for its props {self!r}, got {len(specs)}")
        dtype = arrays[0].dtype
        if dtype.kind != "f" or any(s.dtype != dtype for s in arrays + extras):
            raise DTypeError(f"{self.name}: q, k and v must be float tensors of one dtype, got "
                             f"{[str(s.dtype) for s in arrays + extras]}")
        if mask is not None and (mask.dtype.kind == "b") != (self.mask == "bool"):
            raise DTypeError(f"{self.name}: a {self.mask} mask was declared, got one of dtype {mask.dtype}")
        if self.heads:
            x = arrays[0]
            if len(x.shape) != 3 or (x.shape[2] is not None and x.shape[2] % (3 * self.heads)):
                raise ShapeError(f"{self.name}: expected packed qkv of shape (N, L, 3E) with E divisible by "
                                 f"{self.heads} heads, got {_fmt(x.shape)}")
            return TensorSpec(x.shape[:2] + (None if x.shape[2] is None else x.shape[2] // 3,), dtype)
        q, k, v = arrays
        if not (len(q.shape) == len(k.shape) == len(v.shape) >= 2):
            raise ShapeError(f"{self.name}: q, k and v must have one rank >= 2, got {_fmt(q.shape)}, "
                             f"{_fmt(k.shape)}, {_fmt(v.shape)}")
        pairs = list(zip(q.shape[:-2] + (q.shape[-1], k.shape[-2]), k.shape[:-2] + (k.shape[-1], v.shape[-2])))
        pairs += list(zip(q.shape[:-2], v.shape[:-2]))
        if any(a is not None and b is not None and a != b for a, b in pairs):
            raise ShapeError(f"{self.name}: expected q (..., L, E), k (..., S, E), v (..., S, Ev) with the same "
                             f"batch dimensions, got {_fmt(q.shape)}, {_fmt(k.shape)}, {_fmt(v.shape)}")
        return TensorSpec(q.shape[:-1] + v.shape[-1:], dtype)

    def _weights_spec(self, specs) -> TensorSpec:
        """The spec of the transposed weights (..., S, L) ((N, h, L, L) packed)."""
        out = self._check(specs)
        arrays, _, _ = self._split(specs)
        if self.heads:
            N, L = arrays[0].shape[:2]
            return TensorSpec((N, self.heads, L, L), out.dtype)
        return TensorSpec(arrays[1].shape[:-1] + arrays[0].shape[-2:-1], out.dtype)


class AttentionWeights(_Attention):
    """The attention weights, transposed: ``softmax(q k^T * scale + mask)^T`` (..., S, L) ((N, h, L, L)
    packed). They are what ``ScaledDotProductAttention`` multiplies ``v`` by (its last input) and what
    its gradient reuses, so the backward recomputes nothing. No gradient of its own: q and k get theirs
    through ``ScaledDotProductAttention``."""

    def infer(self, *specs):
        return self._weights_spec(specs)

    def forward(self, xp, *arrays):
        arrays, mask, _ = self._split(arrays)
        q, k, v = self._qkv(arrays)
        weights = xp.empty(q.shape[:-2] + (k.shape[-2], q.shape[-2]), q.dtype)
        whole = _packed_kernel(self, "attention_weights_packed_f32", arrays[0], mask)
        if whole is not None:
            mask_t, mode = _native_mask_t(mask, weights.shape)
            N, L, width = arrays[0].shape
            ok = np.zeros(1, np.int64)
            whole(arrays[0], weights if mode == 0 else mask_t, weights, N, L, self.heads, width // (3 * self.heads),
                  self.scale, mode, int(self.causal), ok)
            if ok[0]:
                return weights
        fn = native.kernel("attention_softmax_t_f32")
        if fn is not None and _native_attention(q, k, mask):
            mask_t, mode = _native_mask_t(mask, weights.shape)
            S, L = weights.shape[-2:]

            def native_part(start: int, stop: int) -> None:
                # k q^T straight into the weights, then scale, mask, softmax over keys in one C pass per block
                q_, k_, mask_, weights_ = _batch_slice((q, k, mask_t if mode == 2 else None, weights),
                                                       q.ndim, start, stop)
                blas.xp_matmul(xp, k_, q_.swapaxes(-1, -2), out=weights_)
                fn(weights_, weights_ if mode == 0 else mask_t if mode == 1 else mask_, weights_.size // max(S * L, 1),
                   S, L, self.scale, mode, int(self.causal))

            _split_batch(xp, native_part, q, k)
            return weights

        def part(start: int, stop: int) -> None:
            q_, k_, mask_, weights_ = _batch_slice((q, k, mask, weights), q.ndim, start, stop)
            exp_t, sums = _exp_scores_t(xp, self, q_, k_, mask_)
            xp.divide(exp_t, sums, out=weights_)

        _split_batch(xp, part, q, k)
        return weights

    def backward(self, inputs, out, g):
        return (None,) * len(inputs)


class ScaledDotProductAttention(_Attention):
    """``softmax(q k^T * scale + mask) v`` from the weights of ``AttentionWeights`` (the last input):
    one batched matmul, written straight into the (merged-heads) output. Its gradient is one op,
    ``ScaledDotProductAttentionGrad``; with ``create_graph``, the composition's formula in ordinary ops."""

    n_extra = 1

    def infer(self, *specs):
        return self._check(specs)

    def forward(self, xp, *arrays):
        arrays, mask, (weights,) = self._split(arrays)
        q, k, v = self._qkv(arrays)
        if self.heads:
            out = xp.empty(arrays[0].shape[:2] + (arrays[0].shape[2] // 3,), q.dtype)
            target = self._merged(out)
            whole = _packed_kernel(self, "attention_apply_packed_f32", arrays[0], weights)
            if whole is not None and weights.flags.c_contiguous and weights.dtype == np.float32:
                N, L, width = arrays[0].shape
                ok = np.zeros(1, np.int64)
                whole(arrays[0], weights, out, N, L, self.heads, width // (3 * self.heads), ok)
                if ok[0]:
                    return out
        else:
            out = target = xp.empty(q.shape[:-1] + v.shape[-1:], q.dtype)

        def part(start: int, stop: int) -> None:
            weights_, v_, target_ = _batch_slice((weights, v, target), q.ndim, start, stop)
            blas.xp_matmul(xp, weights_.swapaxes(-1, -2), v_, out=target_)

        _split_batch(xp, part, q, k)
        return out

    def backward(self, inputs, out, g):
        arrays, mask, _ = self._split(inputs)
        tail = ((None,) if self.mask else ()) + (None,)  # the mask (unless differentiated), the weights
        if is_grad_enabled() or (isinstance(mask, Tensor) and mask.requires_grad):
            return self._composed_backward(arrays, mask, g)
        packed = ScaledDotProductAttentionGrad(self.scale, self.causal, self.mask, self.heads).apply(*inputs, g)
        if self.heads:
            return (packed,) + tail
        q, k, v = arrays
        (L, E), (S, Ev) = q.shape[-2:], v.shape[-2:]
        cuts = (0, L * E, L * E + S * E, L * E + S * E + S * Ev)
        grads = tuple(reshape_like(packed[..., cuts[i]:cuts[i + 1]], x) for i, x in enumerate(arrays))
        return grads + tail

    def _composed_backward(self, arrays, mask, g) -> tuple:
        """The gradients in ordinary ops: differentiable again, and the float mask's gradient."""
        if self.heads:
            (x,) = arrays
            N, L, width = x.shape
            split = reshape(x, (-1 if N is None else N, -1 if L is None else L, 3, self.heads,
                                width // (3 * self.heads)))
            q, k, v = (transpose(split[:, :, i], (0, 2, 1, 3)) for i in range(3))
            N, L, E = g.shape
            g = transpose(reshape(g, (-1 if N is None else N, -1 if L is None else L, self.heads, E // self.heads)),
                          (0, 2, 1, 3))
        else:
            q, k, v = arrays
        weights = softmax(_scores(self, q, k, mask), axis=-1)
        gv = matmul(swapaxes(weights, -1, -2), g)
        gw = matmul(g, swapaxes(v, -1, -2))
        gs = weights * (gw - _sum(gw * weights, axis=-1, keepdims=True))
        gq, gk = matmul(gs * self.scale, k), matmul(swapaxes(gs, -1, -2) * self.scale, q)
        tail = ((gs if self.mask == "float" else None,) if self.mask else ()) + (None,)
        if not self.heads:
            return (gq, gk, gv) + tail
        heads = stack([transpose(t, (0, 2, 1, 3)) for t in (gq, gk, gv)], axis=2)  # (N, L, 3, h, E/h)
        return (reshape_like(heads, arrays[0]),) + tail


def _causal_mask(L: Optional[int], S: Optional[int]) -> Tensor:
    """(L, S) boolean, ``True`` above the diagonal: the keys each query must not see."""
    if L is None or S is None:
        raise ShapeError(f"is_causal: the query and key lengths must be known to build the causal mask, "
                         f"got {L} and {S}")
    return triu(ones((L, S), dtype="bool"), 1)


def _scores(op: _Attention, q: Tensor, k: Tensor, mask: Optional[Tensor]) -> Tensor:
    """``q k^T * scale`` with the masks applied, in ordinary ops."""
    scores = matmul(q, swapaxes(k, -1, -2)) * op.scale
    if op.causal:
        scores = where(_causal_mask(q.shape[-2], k.shape[-2]), _NEG_INF, scores)
    if op.mask == "float":
        scores = scores + mask
    elif op.mask == "bool":
        scores = where(mask, scores, _NEG_INF)
    return scores


class ScaledDotProductAttentionGrad(_Attention):
    """The gradients of :class:`ScaledDotProductAttention` with respect to ``q, k, v`` (or ``qkv``),
    in one array: (N, L, 3E) packed, else (..., L*E + S*E + S*Ev). Inputs: the op's inputs (the
    weights last), then the upstream gradient. Made only when no graph is recorded."""

    n_extra = 2

    def infer(self, *specs):
        out = self._check(specs)
        if self.heads:
            return specs[0]
        q, k, v = specs[:3]
        (L, E), (S, Ev) = q.shape[-2:], v.shape[-2:]
        width = None if None in (L, E, S, Ev) else L * E + S * E + S * Ev
        return TensorSpec(out.shape[:-2] + (width,), out.dtype)

    def forward(self, xp, *arrays):
        arrays, _, (weights, g) = self._split(arrays)
        q, k, v = self._qkv(arrays)
        if self.heads:
            grad = xp.empty(arrays[0].shape, q.dtype)
            whole = _packed_kernel(self, "attention_grad_packed_f32", arrays[0], weights, g)
            if whole is not None and weights.flags.c_contiguous and weights.dtype == np.float32 \
                    and g.dtype == np.float32:
                N, L, width = arrays[0].shape
                ok = np.zeros(1, np.int64)
                whole(arrays[0], weights, np.ascontiguousarray(g), grad, N, L, self.heads,
                      width // (3 * self.heads), self.scale, ok)
                if ok[0]:
                    return grad
            gq, gk, gv = self._qkv((grad,))
            g = self._merged(g)
        else:
            (L, E), (S, Ev) = q.shape[-2:], v.shape[-2:]
            cut1, cut2 = L * E, L * E + S * E
            grad = xp.empty(q.shape[:-2] + (cut2 + S * Ev,), q.dtype)
            # the three gradients are written straight into their parts of the packed result (views)
            gq = grad[..., :cut1].reshape(q.shape)
            gk = grad[..., cut1:cut2].reshape(k.shape)
            gv = grad[..., cut2:].reshape(v.shape)

        def part(start: int, stop: int) -> None:
            self._gradients(xp, *_batch_slice((q, k, v, weights, g, gq, gk, gv), q.ndim, start, stop))

        _split_batch(xp, part, q, k)
        return grad

    def _gradients(self, xp, q, k, v, weights_t, g, gq, gk, gv) -> None:
        """Write the gradients of q, k, v into ``gq, gk, gv`` (``weights_t``: P^T, (..., S, L))."""
        blas.xp_matmul(xp, weights_t, g, out=gv)                            # dV = P^T g
        gs_t = blas.xp_matmul(xp, v, g.swapaxes(-1, -2))                    # dP^T = v g^T
        fn = native.kernel("attention_softmax_grad_t_f32")
        if fn is not None and native.usable(weights_t, gs_t):     # the three passes below in one (C)
            S, L = gs_t.shape[-2:]
            fn(weights_t, gs_t, gs_t.size // max(S * L, 1), S, L, self.scale)
            blas.xp_matmul(xp, gs_t.swapaxes(-1, -2), k, out=gq)
            blas.xp_matmul(xp, gs_t, q, out=gk)
            return
        gs_t *= weights_t
        gs_t -= weights_t * _column_sum(xp, gs_t)                  # dS^T = P^T * (dP^T - colsum(P^T * dP^T))
        gs_t *= self.scale
        blas.xp_matmul(xp, gs_t.swapaxes(-1, -2), k, out=gq)                # dQ = scale dS k
        blas.xp_matmul(xp, gs_t, q, out=gk)                                 # dK = scale dS^T q

    def backward(self, inputs, out, g):
        raise GradError("ScaledDotProductAttentionGrad is made only when no gradient graph is recorded: "
                        "differentiate with create_graph=True instead")


def _apply_attention(props: tuple, inputs: tuple) -> Tensor:
    """The attention output of ``inputs`` (``q, k, v`` or ``qkv``, then the mask if any) for the op
    props ``(scale, causal, mask, heads)``: the weights op, then the op that applies them."""
    weights = AttentionWeights(*props).apply(*inputs)
    return ScaledDotProductAttention(*props).apply(*inputs, weights)


# ---- the public function -------------------------------------------------------------------------------
def _fusable(q: Tensor, k: Tensor, v: Tensor, mask: Optional[Tensor]) -> bool:
    """Whether the fused op applies: one float dtype, one batch shape, known L, S, E, Ev, and a mask
    that does not widen the batch (the composition handles everything else)."""
    if q.dtype.kind != "f" or k.dtype != q.dtype or v.dtype != q.dtype or not q.ndim == k.ndim == v.ndim >= 2:
        return False
    if q.shape[:-2] != k.shape[:-2] or q.shape[:-2] != v.shape[:-2] or None in q.shape[-2:] + v.shape[-2:]:
        return False
    if mask is None:
        return True
    if mask.ndim > q.ndim or (mask.dtype.kind not in "fb"):
        return False
    out = q.shape[:-1] + (k.shape[-2],)
    return all(m in (1, o) for m, o in zip(mask.shape[::-1], out[::-1]))


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p: float = 0.0,
                                 is_causal: bool = False, scale: Optional[float] = None,
                                 enable_gqa: bool = False) -> Tensor:
    """``softmax(q k^T * scale + mask) v`` (PyTorch's ``F.scaled_dot_product_attention``).

    Args:
        query, key, value: (..., L, E), (..., S, E), (..., S, Ev).
        attn_mask: broadcastable to (..., L, S); boolean ``True`` = take part in attention, float = added.
        dropout_p: dropout on the attention weights (applied whenever > 0, as PyTorch).
        is_causal: mask out the future (query ``i`` sees keys ``j <= i``); not with ``attn_mask``.
        scale: defaults to ``1 / sqrt(E)``.
        enable_gqa: grouped-query attention: key and value may have fewer heads (dimension -3) than
            the query, a divisor of its count; each key/value head serves that many query heads.

    Returns: (..., L, Ev). One fused op (forward and backward) when the inputs share a float dtype and
    batch shape and ``dropout_p`` is 0; the composition of ordinary ops otherwise.

    Examples:
        >>> q = gg.randn(2, 4, 5, 8)
        >>> gg.scaled_dot_product_attention(q, q, q, is_causal=True).shape
        (2, 4, 5, 8)
    """
    query, key, value, attn_mask = as_tensor_args(query, key, value, attn_mask)
    if enable_gqa and query.ndim >= 3 and key.shape[-3] != query.shape[-3]:
        heads, kv_heads = query.shape[-3], key.shape[-3]
        if kv_heads is None or heads is None or heads % kv_heads or value.shape[-3] != kv_heads:
            raise ShapeError(f"scaled_dot_product_attention: with enable_gqa the query's heads ({heads}) must be a "
                             f"multiple of the key's and value's ({kv_heads}, {value.shape[-3]})")
        key = repeat(key, heads // kv_heads, axis=key.ndim - 3)
        value = repeat(value, heads // kv_heads, axis=value.ndim - 3)
    if query.shape[-1] is not None and key.shape[-1] is not None and query.shape[-1] != key.shape[-1]:
        raise ShapeError(f"scaled_dot_product_attention: query and key must have the same last dimension, got "
                         f"{_fmt(query.shape)} and {_fmt(key.shape)}")
    if is_causal and attn_mask is not None:
        raise ValueError("scaled_dot_product_attention: give either attn_mask or is_causal=True, not both")
    if scale is None:
        if query.shape[-1] is None:
            raise ShapeError("scaled_dot_product_attention: the default scale needs the query's last dimension, "
                             f"unknown in {_fmt(query.shape)}")
        scale = 1.0 / math.sqrt(query.shape[-1])
    kind = None if attn_mask is None else ("bool" if attn_mask.dtype.kind == "b" else "float")
    props = (scale, is_causal, kind, None)
    inputs = (query, key, value) + ((attn_mask,) if attn_mask is not None else ())
    if dropout_p == 0.0 and _fusable(query, key, value, attn_mask):
        return _apply_attention(props, inputs)
    weights = softmax(_scores(AttentionWeights(*props), query, key, attn_mask), axis=-1)
    if dropout_p > 0.0:
        weights = dropout(weights, dropout_p, training=True)
    return matmul(weights, value)


__all__ = ["AttentionWeights", "ScaledDotProductAttention", "ScaledDotProductAttentionGrad",
           "scaled_dot_product_attention"]
