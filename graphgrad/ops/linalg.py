"""Linear algebra: matmul, dot, outer, einsum, inv, det, solve.

NumPy semantics throughout (``matmul`` broadcasts batch dimensions and treats 1-D operands as
NumPy does; ``solve`` treats ``b`` as a vector only when it is 1-D, as NumPy 2 does). The
primitives are ``MatMul``, ``Einsum``, ``Inv``, ``Det`` and ``Solve``; their gradients are written
with these same ops, so second derivatives work. ``dot`` and ``outer`` are composed.
"""
from __future__ import annotations

import string
from graphgrad.backend import blas, np
from graphgrad.core.creation import eye as _eye
from graphgrad.core.op import Op, as_tensor_args, needs_grad
from graphgrad.core.spec import TensorSpec, broadcast_shapes
from graphgrad.core.tensor import Tensor
from graphgrad.dtypes import check_same_float
from graphgrad.errors import DTypeError, ShapeError
from graphgrad.ops.array import broadcast_like, reshape_like, sum_like
from graphgrad.ops.elementwise import mul
from graphgrad.ops.reduce import sum as _sum
from graphgrad.ops.shape import broadcast_to, expand_dims, reshape, squeeze, swapaxes


def _fmt(shape) -> str:
    return str(tuple(shape))


def _dims_match(a, b) -> bool:
    return a is None or b is None or a == b


def _result_dtype(op: Op, *specs):
    check_same_float(op.name.lower(), *[s.dtype for s in specs])
    try:
        return np.result_type(*[s.dtype for s in specs])
    except Exception:
        shown = ", ".join(str(s.dtype) for s in specs)
        raise DTypeError(f"{op.name}: unsupported dtypes ({shown})") from None


def _mT(x: Tensor) -> Tensor:
    """Swap the last two axes (the matrix transpose of a batch of matrices)."""
    return swapaxes(x, -1, -2)


def _mT_of(x: Tensor) -> Tensor:
    """``_mT``, taking a tensor of unknown rank (a placeholder made without a shape) as a matrix."""
    if x.shape is None:
        from graphgrad.ops.shape import Transpose

        return Transpose((1, 0)).apply(x)
    return _mT(x)


# ---- matmul ---------------------------------------------------------------------------------------
def _matmul_2d(xp, a, b):
    """``a @ b`` for 2-D operands, NumPy's in the fastest way this machine has: MKL when installed
    (backend/blas.py), else OpenBLAS in its better orientation. OpenBLAS splits a product over its
    threads better when the result has more rows than columns (0.64-0.89x the time for m < n measured
    here, 1.1-1.6x the other way round), so with m < n it computes ``(b^T @ a^T)^T``; the result is
    then a transposed (Fortran-ordered) view, which NumPy's elementwise ops and BLAS read without a
    copy."""
    if xp is not np:
        return xp.matmul(a, b)
    if a.shape[0] < b.shape[1] and not blas.available():
        return xp.matmul(b.T, a.T).T
    return blas.matmul(a, b)


class MatMul(Op):
    """``a @ b`` with NumPy's rules: batch dims broadcast; a 1-D ``a`` is a row, a 1-D ``b`` a column
    (the added axis is removed from the result). Gradients: ``g @ b^T`` and ``a^T @ g``."""
    onnx = "MatMul"

    def infer(self, a, b):
        sa, sb = tuple(a.shape), tuple(b.shape)
        if not sa or not sb:
            raise ShapeError(f"matmul: {_fmt(sa)} @ {_fmt(sb)}: both operands must be at least 1-D "
                             "(use mul for scalars)")
        ka = sa[-1]
        kb = sb[0] if len(sb) == 1 else sb[-2]
        if not _dims_match(ka, kb):
            raise ShapeError(f"matmul: {_fmt(sa)} @ {_fmt(sb)}: inner dimensions do not match "
                             f"({ka} != {kb}); the last axis of a must equal the "
                             f"{'only' if len(sb) == 1 else 'second-to-last'} axis of b")
        try:
            batch = broadcast_shapes("matmul", sa[:-2], sb[:-2])
        except ShapeError:
            raise ShapeError(f"matmul: {_fmt(sa)} @ {_fmt(sb)}: batch dimensions {_fmt(sa[:-2])} and "
                             f"{_fmt(sb[:-2])} cannot be broadcast together") from None
        shape = batch + (sa[-2:-1] if len(sa) >= 2 else ()) + (sb[-1:] if len(sb) >= 2 else ())
        return TensorSpec(shape, _result_dtype(self, a, b))

    def forward(self, xp, a, b):
        if xp is not np:
            return xp.matmul(a, b)
        if b.ndim == 2 and a.ndim > 2 and a.flags.c_contiguous:  # a stack of rows times one matrix: one product
            return blas.matmul(a.reshape(-1, a.shape[-1]), b).reshape(a.shape[:-1] + b.shape[1:])
        return blas.matmul(a, b)

    def backward(self, inputs, out, g):
        a, b = inputs
        ga_needed, gb_needed = needs_grad(a), needs_grad(b)
        if a.shape is None or b.shape is None:  # a rank known only at run time: that operand is taken as a matrix
            ga = matmul(g, _mT_of(b)) if ga_needed else None
            gb = matmul(_mT_of(a), g) if gb_needed else None
            return ga, gb
        if a.ndim == 1 and b.ndim == 1:
            return (g * b if ga_needed else None), (g * a if gb_needed else None)
        # Make both operands matrices, then use the 2-D rule; autograd sums broadcast batch dims.
        a2 = expand_dims(a, 0) if a.ndim == 1 else a
        b2 = expand_dims(b, 1) if b.ndim == 1 else b
        g2 = g
        if a.ndim == 1:
            g2 = expand_dims(g2, g2.ndim - 1)
        if b.ndim == 1:
            g2 = expand_dims(g2, g2.ndim)
        ga = gb = None
        if ga_needed:
            ga = matmul(g2, _mT(b2))
            if a.ndim == 1:
                ga = reshape_like(sum_like(ga, a2), a)  # (..., 1, k) -> (k,)
        if gb_needed:
            gb = matmul(_mT(a2), g2)
            if b.ndim == 1:
                gb = reshape_like(sum_like(gb, b2), b)
        return ga, gb


_MATMUL = MatMul()


def matmul(a, b) -> Tensor:
    """Matrix product with NumPy's rules (``a @ b``).

    Shapes: (..., n, k) @ (..., k, m) -> (..., n, m), batch dims broadcast; (k,) @ (..., k, m) ->
    (..., m); (..., n, k) @ (k,) -> (..., n); (k,) @ (k,) -> ().

    Examples:
        >>> gg.matmul(gg.ones((2, 3)), gg.ones((3, 4))).shape
        (2, 4)
    """
    a, b = as_tensor_args(a, b)
    if a.dtype != b.dtype:
        check_same_float("matmul", a.dtype, b.dtype)
    return _MATMUL.apply(a, b)


def dot(a, b) -> Tensor:
    """``numpy.dot``: the inner product of 1-D vectors (a scalar), the matrix product of 2-D arrays;
    a 0-d operand multiplies; for N-D operands, the sum over the last axis of ``a`` and the
    second-to-last of ``b``.

    Shapes: (k,), (k,) -> (); (n, k), (k, m) -> (n, m); (..., k), (k,) -> (...).
    """
    a, b = as_tensor_args(a, b)
    na = a.ndim if isinstance(a, Tensor) else 0
    nb = b.ndim if isinstance(b, Tensor) else 0
    if na == 0 or nb == 0:
        return mul(a, b)
    if nb == 1 or (na <= 2 and nb <= 2):
        return matmul(a, b)
    letters = string.ascii_letters
    sa = letters[:na - 1] + "z"
    sb = letters[na - 1:na + nb - 3] + "z" + "Z"
    return einsum(f"{sa},{sb}->{sa[:-1]}{sb[:-2]}Z", a, b)


def outer(a, b) -> Tensor:
    """Outer product of two vectors (inputs are flattened, as in NumPy). Shapes: (n,), (m,) -> (n, m)."""
    a, b = as_tensor_args(a, b)
    return mul(reshape(a, (-1, 1)), reshape(b, (1, -1)))


# ---- linear ---------------------------------------------------------------------------------------
class Linear(Op):
    """``x @ w^T + b`` (PyTorch's ``linear``) as one op: the weight is stored (out, in), and its
    gradient ``g^T @ x`` is computed in that layout, so it is a fresh contiguous array rather than a
    transposed view of ``x^T @ g`` that the leaf would have to copy, as ``matmul(x, transpose(w))``
    gives. Gradients: ``g @ w``, ``g^T @ x`` over all leading dims, and ``g`` summed to ``b``."""
    saves_output = False

    def infer(self, x, w, b=None):
        sx, sw = tuple(x.shape), tuple(w.shape)
        if len(sw) != 2 or not sx or not _dims_match(sx[-1], sw[1]):
            raise ShapeError(f"linear: input {_fmt(sx)} and weight {_fmt(sw)}: the weight must be "
                             "(out_features, in_features) and the input must end in in_features")
        if b is not None and tuple(b.shape) not in ((sw[0],), (None,)):
            raise ShapeError(f"linear: bias {_fmt(b.shape)} must be ({sw[0]},)")
        specs = (x, w) if b is None else (x, w, b)
        return TensorSpec(sx[:-1] + sw[:1], _result_dtype(self, *specs))

    def forward(self, xp, x, w, b=None):
        if x.ndim > 2:  # one GEMM over all leading dims, not a batch of small ones
            # (not _matmul_2d: its transposed result would cost a copy in the reshape)
            y = blas.xp_matmul(xp, x.reshape(-1, x.shape[-1]), w.T).reshape(x.shape[:-1] + (w.shape[0],))
        else:
            y = _matmul_2d(xp, x, w.T)
        if b is not None:
            if b.dtype == y.dtype:
                y += b  # (y is fresh: adding in place saves an array)
            else:
                y = y + b
        return y

    def backward(self, inputs, out, g):
        x, w = inputs[0], inputs[1]
        out_features, in_features = w.shape
        g2 = g if g.ndim <= 2 else reshape(g, (-1, out_features))  # one GEMM over all leading dims
        gx = None
        if needs_grad(x):
            if g.ndim == 2:  # g @ w as linear(g, w^T): the same layout choice as the forward's output
                gx = _LINEAR.apply(g, _mT(w))
            elif g.ndim < 2:
                gx = matmul(g, w)
            else:
                gx = reshape_like(matmul(g2, w), x)
        gw = None
        if needs_grad(w):
            g2 = g2 if g2.ndim == 2 else reshape(g2, (1, out_features))
            x2 = x if x.ndim == 2 else reshape(x, (-1, in_features))
            gw = matmul(_mT(g2), x2)
        if len(inputs) == 2:
            return gx, gw
        return gx, gw, (g if needs_grad(inputs[2]) else None)  # autograd sums g to b's shape


_LINEAR = Linear()


def linear(x, w, b=None) -> Tensor:
    """``x @ w^T + b``, PyTorch's ``F.linear``.

    Shapes: x (*, in); w (out, in); b (out,) or None -> (*, out).

    Examples:
        >>> gg.ops.linalg.linear(gg.ones((8, 4)), gg.ones((3, 4)), gg.zeros(3)).shape
        (8, 3)
    """
    x, w, b = as_tensor_args(x, w, b)
    if x.dtype != w.dtype or (b is not None and b.dtype != w.dtype):
        check_same_float("linear", x.dtype, w.dtype, None if b is None else b.dtype)
    return _LINEAR.apply(x, w) if b is None else _LINEAR.apply(x, w, b)


# ---- einsum ---------------------------------------------------------------------------------------
def _parse_einsum(subscripts: str, n_operands: int) -> tuple:
    """Split ``subscripts`` into (input terms, output term), making an implicit output explicit."""
    s = subscripts.replace(" ", "")
    if "->" in s:
        lhs, out = s.split("->")
        explicit = True
    else:
        lhs, out, explicit = s, "", False
    terms = lhs.split(",")
    if len(terms) != n_operands:
        raise ShapeError(f"einsum: subscripts {subscripts!r} name {len(terms)} operand(s) but "
                         f"{n_operands} were given")
    for term in terms + [out]:
        body = term.replace("...", "", 1)
        if "." in body or any(c not in string.ascii_letters for c in body):
            raise ShapeError(f"einsum: invalid subscript term {term!r} in {subscripts!r} (letters and at "
                             "most one '...' per term)")
    all_letters = "".join(t.replace("...", "") for t in terms)
    if not explicit:
        once = sorted(c for c in set(all_letters) if all_letters.count(c) == 1)
        out = ("..." if any("..." in t for t in terms) else "") + "".join(once)
    else:
        body = out.replace("...", "")
        if len(set(body)) != len(body):
            raise ShapeError(f"einsum: output {out!r} repeats an index")
        missing = [c for c in body if c not in all_letters]
        if missing:
            raise ShapeError(f"einsum: output index {missing[0]!r} does not appear in any input of {subscripts!r}")
        if "..." in out and not any("..." in t for t in terms):
            raise ShapeError(f"einsum: output {out!r} has '...' but no input does")
    return tuple(terms), out


def _split_term(term: str, shape: tuple, op: str, i) -> tuple:
    """(letters before '...', the '...' dims, letters after) of one operand; checks its rank."""
    if "..." in term:
        pre, post = term.split("...")
        n_ell = len(shape) - len(pre) - len(post)
        if n_ell < 0:
            raise ShapeError(f"{op}: operand {i} has shape {_fmt(shape)}, too few dims for {term!r}")
        return pre, tuple(shape[len(pre):len(pre) + n_ell]), post
    if len(term) != len(shape):
        raise ShapeError(f"{op}: operand {i} has shape {_fmt(shape)} (rank {len(shape)}) but its subscripts "
                         f"{term!r} name {len(term)} axes")
    return term, (), ""


class Einsum(Op):
    """Einstein summation over explicit subscripts (``"ij,jk->ik"``; ``...`` broadcasts).

    Gradient of operand i: einsum of the other operands and ``g``, with operand i's subscripts as the
    output; indices summed only inside operand i are broadcast back; for a repeated index the
    gradient goes back onto the diagonal."""

    props = ("subscripts",)

    def __init__(self, subscripts: str, n_operands: int):
        self.terms, self.output = _parse_einsum(subscripts, n_operands)
        self.subscripts = ",".join(self.terms) + "->" + self.output

    def infer(self, *specs):
        sizes: dict = {}
        ells = []
        for i, (term, spec) in enumerate(zip(self.terms, specs)):
            pre, ell, post = _split_term(term, spec.shape, "einsum", i)
            ells.append(ell)
            named = tuple(spec.shape[:len(pre)]) + tuple(spec.shape[len(spec.shape) - len(post):])
            for c, d in zip(pre + post, named):
                if c not in sizes:
                    sizes[c] = d
                elif sizes[c] is None:
                    sizes[c] = None if d in (None, 1) else d
                elif d is None:
                    sizes[c] = None if sizes[c] == 1 else sizes[c]
                elif sizes[c] == 1:
                    sizes[c] = d
                elif d != 1 and d != sizes[c]:
                    shown = ", ".join(_fmt(s.shape) for s in specs)
                    raise ShapeError(f"einsum: {self.subscripts!r} on shapes {shown}: index {c!r} has sizes "
                                     f"{sizes[c]} and {d}")
        try:
            ell = broadcast_shapes("einsum", *ells) if ells else ()
        except ShapeError:
            shown = ", ".join(_fmt(s.shape) for s in specs)
            raise ShapeError(f"einsum: {self.subscripts!r} on shapes {shown}: the '...' dimensions "
                             "cannot be broadcast together") from None
        if ell and "..." not in self.output:
            shown = ", ".join(_fmt(s.shape) for s in specs)
            raise ShapeError(f"einsum: {self.subscripts!r} on shapes {shown}: the output must name '...' "
                             f"to keep the broadcast dimensions {_fmt(ell)} (as in NumPy)")
        pre, _, post = self.output.partition("...")
        shape = tuple(sizes[c] for c in pre) + (ell if "..." in self.output else ()) + tuple(sizes[c] for c in post)
        return TensorSpec(shape, _result_dtype(self, *specs))

    def forward(self, xp, *arrays):
        return xp.einsum(self.subscripts, *arrays, optimize=len(arrays) > 2)

    def backward(self, inputs, out, g):
        return tuple(self._grad(i, inputs, g) if needs_grad(x) else None for i, x in enumerate(inputs))

    def _grad(self, i: int, inputs, g: Tensor) -> Tensor:
        x, term = inputs[i], self.terms[i]
        letters = term.replace("...", "")
        if len(set(letters)) == len(letters):
            return self._grad_distinct(i, term, tuple(x.shape), inputs, g, like=x)
        # Repeated indices (diagonal, trace): the gradient of the diagonal, placed back on the
        # diagonal by an einsum with identity matrices (each repeat gets a fresh index).
        pre, ell, post = _split_term(term, x.shape, "einsum", i)
        named = pre + post
        dims = tuple(x.shape[:len(pre)]) + tuple(x.shape[len(x.shape) - len(post):])
        if any(d is None for c, d in zip(named, dims) if named.count(c) > 1):
            raise ShapeError(f"einsum: the gradient through the repeated index of operand {i} ({term!r}) needs "
                             f"its size, unknown in shape {_fmt(x.shape)}; give the graph placeholder that size")
        first = {}
        for c, d in zip(named, dims):
            first.setdefault(c, d)
        fresh = iter(c for c in string.ascii_letters if c not in self.subscripts)
        renamed, deltas, seen = [], [], set()
        for c in named:
            if c in seen:
                f = next(fresh)
                renamed.append(f)
                deltas.append((c + f, first[c]))
            else:
                seen.add(c)
                renamed.append(c)
        dedup = "".join(dict.fromkeys(pre))
        dedup_post = "".join(c for c in dict.fromkeys(post) if c not in dedup)
        unique = dedup + ("..." if "..." in term else "") + dedup_post
        shape_u = tuple(first[c] for c in dedup) + tuple(ell) + tuple(first[c] for c in dedup_post)
        r = self._grad_distinct(i, unique, shape_u, inputs, g)
        renamed_term = "".join(renamed[:len(pre)]) + ("..." if "..." in term else "") + "".join(renamed[len(pre):])
        eyes = [_eye(n, dtype=x.dtype, device=None if x.is_symbolic else x.device) for _, n in deltas]
        return einsum(",".join([unique] + [d for d, _ in deltas]) + "->" + renamed_term, r, *eyes)

    def _grad_distinct(self, i: int, term: str, shape: tuple, inputs, g: Tensor, like=None) -> Tensor:
        """The gradient for operand ``i`` seen as having subscripts ``term`` (no repeated index) and ``shape``."""
        others = [t for j, t in enumerate(self.terms) if j != i] + [self.output]
        operands = [v for j, v in enumerate(inputs) if j != i] + [g]
        available = set("".join(others))
        pre, ell, post = _split_term(term, shape, "einsum", i)
        keep_ell = any("..." in t for t in others)  # numpy needs '...' in the output then
        if keep_ell and "..." not in term:
            pre, post = "", pre  # x has no '...': put it first in the target and sum it away below
        kept_pre = "".join(c for c in pre if c in available)
        kept_post = "".join(c for c in post if c in available)
        target = kept_pre + ("..." if keep_ell else "") + kept_post
        r = einsum(",".join(others) + "->" + target, *operands)
        # Ellipsis dims of r beyond x's (broadcast from other operands) are summed away.
        r_ell: tuple = ()
        n_ell_r = 0
        if keep_ell:
            n_ell_r = r.ndim - len(kept_pre) - len(kept_post)
            if n_ell_r > len(ell):
                r = _sum(r, axis=tuple(range(len(kept_pre), len(kept_pre) + n_ell_r - len(ell))))
                n_ell_r = len(ell)
            r_ell = tuple(r.shape[len(kept_pre):len(kept_pre) + n_ell_r])
        r_ell = (1,) * (len(ell) - len(r_ell)) + r_ell
        # Re-insert the summed-out indices as size-1 axes, in x's layout.
        rs = dict(zip(kept_pre, r.shape[:len(kept_pre)]))
        rs.update(zip(kept_post, r.shape[r.ndim - len(kept_post):] if kept_post else ()))
        layout = tuple(rs.get(c, 1) for c in pre) + tuple(r_ell) + tuple(rs.get(c, 1) for c in post)
        if layout != r.shape:
            if None in layout:  # insert the size-1 axes (a reshape would need the unknown sizes)
                inserted = [a for a, c in enumerate(pre) if c not in rs]
                inserted += range(len(pre), len(pre) + len(ell) - n_ell_r)
                inserted += [len(pre) + len(ell) + a for a, c in enumerate(post) if c not in rs]
                r = expand_dims(r, inserted) if inserted else r
            else:
                r = reshape(r, layout)
        # Size-1 axes of x that were broadcast against larger ones are summed back.
        axes = tuple(a for a, (dx, dr) in enumerate(zip(shape, layout)) if dx == 1 and dr != 1)
        if axes:
            r = _sum(r, axis=axes, keepdims=True)
        if r.shape != shape:
            if None not in shape:
                r = broadcast_to(r, shape)
            elif like is not None:
                r = broadcast_like(r, like)
        return r


def einsum(subscripts: str, *operands) -> Tensor:
    """Einstein summation, as ``numpy.einsum``: explicit (``"ij,jk->ik"``) or implicit (``"ij,jk"``,
    output = indices appearing once, sorted) subscripts, ``...`` for broadcast dimensions; an index
    repeated within one operand takes its diagonal (``"ii->i"``, trace ``"ii"``).

    Examples:
        >>> gg.einsum("bhqd,bhkd->bhqk", q, k)   # attention scores
        >>> gg.einsum("bi,oij,bj->bo", x1, w, x2)   # bilinear layer
    """
    operands = as_tensor_args(*operands)
    return Einsum(subscripts, len(operands)).apply(*operands)


# ---- inverse, determinant, solve ---------------------------------------------------------------
def _square_spec(op: Op, a: TensorSpec) -> None:
    if len(a.shape) < 2 or not _dims_match(a.shape[-1], a.shape[-2]):
        raise ShapeError(f"{op.name.lower()}: expected a square matrix or a batch of them (..., n, n), "
                         f"got shape {_fmt(a.shape)}")


def _linalg_dtype(op: Op, *specs):
    """float32/float64 stay; integers and bools give float64 (as numpy.linalg does)."""
    dtype = _result_dtype(op, *specs)
    if dtype.kind in "biu":
        return np.dtype("float64")
    if dtype not in (np.dtype("float32"), np.dtype("float64")):
        raise DTypeError(f"{op.name.lower()}: supports float32 and float64, got {dtype}")
    return dtype


class Inv(Op):
    """Matrix inverse, batched over leading dims. Gradient: ``-A^-T g A^-T``."""

    def infer(self, a):
        _square_spec(self, a)
        return TensorSpec(a.shape, _linalg_dtype(self, a))

    def forward(self, xp, a):
        return xp.linalg.inv(a)

    def backward(self, inputs, out, g):
        inv_t = _mT(out)
        return (-matmul(matmul(inv_t, g), inv_t),)


class Det(Op):
    """Determinant, batched over leading dims. Gradient: ``g * det(A) * A^-T``."""
    onnx = "Det"

    def infer(self, a):
        _square_spec(self, a)
        return TensorSpec(a.shape[:-2], _linalg_dtype(self, a))

    def forward(self, xp, a):
        return xp.linalg.det(a)

    def backward(self, inputs, out, g):
        a = inputs[0]
        scale = expand_dims(g * out, (-2, -1))
        return (scale * _mT(inv(a)),)


class Solve(Op):
    """``x`` with ``a @ x = b``. ``b`` is a vector when 1-D, else a (batch of) matrix (..., n, k).
    Gradients: ``gb = solve(a^T, g)``, ``ga = -gb @ x^T``."""

    def infer(self, a, b):
        _square_spec(self, a)
        n = a.shape[-1]
        if len(b.shape) == 0 or not _dims_match(n, b.shape[0] if len(b.shape) == 1 else b.shape[-2]):
            raise ShapeError(f"solve: a {_fmt(a.shape)} and b {_fmt(b.shape)} do not match: b must be "
                             f"({n},) or (..., {n}, k)")
        dtype = _linalg_dtype(self, a, b)
        if len(b.shape) == 1:
            return TensorSpec(tuple(a.shape[:-1]), dtype)
        try:
            batch = broadcast_shapes("solve", a.shape[:-2], b.shape[:-2])
        except ShapeError:
            raise ShapeError(f"solve: batch dimensions of a {_fmt(a.shape)} and b {_fmt(b.shape)} "
                             "cannot be broadcast together") from None
        return TensorSpec(batch + tuple(b.shape[-2:]), dtype)

    def forward(self, xp, a, b):
        return xp.linalg.solve(a, b)

    def backward(self, inputs, out, g):
        a, b = inputs
        vector = b.ndim == 1
        if vector:  # work with columns so batched a with a 1-D b stays a matrix problem
            g, out = expand_dims(g, g.ndim), expand_dims(out, out.ndim)
        gb = solve(_mT(a), g)
        ga = -matmul(gb, _mT(out)) if needs_grad(a) else None
        if vector and needs_grad(b):
            gb = sum_like(squeeze(gb, -1), b)
        return ga, (gb if needs_grad(b) else None)


_INV, _DET, _SOLVE = Inv(), Det(), Solve()


def inv(a) -> Tensor:
    """Inverse of a square matrix or a batch of them. Shapes: (..., n, n) -> (..., n, n)."""
    return _INV.apply(*as_tensor_args(a))


def det(a) -> Tensor:
    """Determinant of a square matrix or a batch of them. Shapes: (..., n, n) -> (...)."""
    return _DET.apply(*as_tensor_args(a))


def solve(a, b) -> Tensor:
    """Solve ``a @ x = b`` for ``x``.

    Shapes: (..., n, n), (n,) -> (..., n); (..., n, n), (..., n, k) -> (..., n, k) (batch dims broadcast).
    """
    return _SOLVE.apply(*as_tensor_args(a, b))


__all__ = ["MatMul", "Linear", "Einsum", "Inv", "Det", "Solve", "matmul", "linear", "dot", "outer", "einsum", "inv",
           "det", "solve"]
