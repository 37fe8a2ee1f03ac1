"""The PyTorch-agreement case table (importable without PyTorch).

Each :class:`Case` names its inputs (input makers below), a PyTorch callable ``torch(t, *xs)`` (given
the ``torch`` module and torch tensors; only ``generate.py`` calls it), a graphgrad callable
``gg(g, *xs)`` (given the ``graphgrad`` module and graphgrad tensors) and tolerances. Both callables
return a tensor or a tuple of tensors; outputs are compared position by position.

Inputs are made from a NumPy generator seeded by the case name, so adding or editing a case never
changes another case's data. ``generate.py`` stores the made arrays in the corpus; the tests read them
back from there (never re-make them), so the corpus is the single source of truth for values.

Non-contiguous inputs: an input with ``layout="T"`` is stored as a contiguous array of the reversed
shape and handed to both frameworks as its (non-contiguous) transpose; ``layout="step"`` stores an array
twice as long in the last axis and hands over ``base[..., ::2]``. The gradient is taken with respect to
that view (the logical input).
"""
from __future__ import annotations

import math
import zlib
from dataclasses import dataclass
from typing import Any, Callable, Optional

import numpy as np

# ----------------------------------------------------------------------------------------------------
# input makers


def _apply_layout(layout: Optional[str], arr):
    """The logical (possibly non-contiguous) view of a stored array (NumPy array or torch tensor)."""
    if layout is None:
        return arr
    if layout == "T":
        axes = tuple(range(arr.ndim))[::-1]
        return arr.permute(*axes) if hasattr(arr, "permute") else arr.transpose(axes)
    if layout == "step":
        return arr[..., ::2]
    raise ValueError(f"unknown layout {layout!r}")


def _stored_shape(layout: Optional[str], shape: tuple) -> tuple:
    if layout is None:
        return tuple(shape)
    if layout == "T":
        return tuple(shape)[::-1]
    if layout == "step":
        return tuple(shape[:-1]) + (2 * shape[-1],)
    raise ValueError(f"unknown layout {layout!r}")


@dataclass(frozen=True)
class F:
    """A float input of logical ``shape``, uniform in ``[lo, hi)``, in the case's dtype (or ``dtype``).

    ``kinks``: points the values are kept at least ``away`` from (non-differentiable spots).
    ``diff``: whether gradients are taken with respect to it. ``layout``: None, ``"T"`` or ``"step"``.
    """

    shape: tuple
    lo: float = -2.0
    hi: float = 2.0
    diff: bool = True
    kinks: tuple = ()
    away: float = 0.05
    layout: Optional[str] = None
    dtype: Optional[str] = None

    def make(self, rng, dtype):
        x = rng.uniform(self.lo, self.hi, _stored_shape(self.layout, self.shape))
        for k in self.kinks:
            close = np.abs(x - k) < self.away
            x = np.where(close, k + np.where(x >= k, 1.0, -1.0) * self.away * 2, x)
        return x.astype(self.dtype or dtype)

    def view(self, arr):
        return _apply_layout(self.layout, arr)


def P(shape, lo=0.5, hi=2.0, **kw) -> F:
    """A positive float input."""
    return F(shape, lo, hi, **kw)


@dataclass(frozen=True)
class I:
    """An int64 input of ``shape`` in ``[lo, hi)`` (labels, indices); never differentiated."""

    shape: tuple
    lo: int = 0
    hi: int = 3
    diff: bool = False
    layout: Optional[str] = None

    def make(self, rng, dtype):
        return rng.integers(self.lo, self.hi, self.shape).astype(np.int64)

    def view(self, arr):
        return arr


@dataclass(frozen=True)
class B:
    """A boolean input of ``shape`` (True with probability ``p``)."""

    shape: tuple
    p: float = 0.5
    diff: bool = False
    layout: Optional[str] = None

    def make(self, rng, dtype):
        return rng.random(self.shape) < self.p

    def view(self, arr):
        return arr


@dataclass(frozen=True)
class A:
    """A fixed array (nested tuples). Float values take the case's dtype; ints stay int64."""

    value: Any
    diff: bool = False
    layout: Optional[str] = None

    def make(self, rng, dtype):
        v = np.asarray(self.value)
        if v.dtype.kind == "f":
            return v.astype(dtype)
        if v.dtype.kind in "iu":
            return v.astype(np.int64)
        return v

    def view(self, arr):
        return arr


# ----------------------------------------------------------------------------------------------------
# joint input adjustments (``prepare``): keep values away from kinks that depend on several inputs


def _frac_away(a, b, lo=0.1, hi=0.9):
    """``a`` moved so ``a / b`` is not within ``lo`` of an integer (floor/remainder discontinuities)."""
    q = a / b
    f = q - np.floor(q)
    return np.where((f < lo) | (f > hi), b * (np.floor(q) + 0.5), a).astype(a.dtype)


def quotient_away(rng, xs):
    xs = list(xs)
    xs[0] = _frac_away(xs[0], xs[1])
    return xs


def quotient_away_scalar(b):
    def prepare(rng, xs):
        xs = list(xs)
        xs[0] = _frac_away(xs[0], np.asarray(b, xs[0].dtype))
        return xs
    return prepare


def diff_away(*points, away=0.1):
    """Move ``xs[0]`` so ``|xs[0] - xs[1]|`` stays ``away`` from each of ``points`` (|.| kinks)."""
    def prepare(rng, xs):
        xs = list(xs)
        d = xs[0] - xs[1]
        for p in points:
            close = np.abs(np.abs(d) - p) < away
            sgn = np.where(d >= 0, 1.0, -1.0)
            mag = np.where(np.abs(d) >= p, p + 2 * away, max(p - 2 * away, 0.0) if p > 0 else 2 * away)
            d = np.where(close, sgn * mag, d)
        xs[0] = (xs[1] + d).astype(xs[0].dtype)
        return xs
    return prepare


def well_conditioned(rng, xs):
    """Add ``3 I`` to the (batched) square matrix ``xs[0]``."""
    xs = list(xs)
    n = xs[0].shape[-1]
    xs[0] = (xs[0] + 3.0 * np.eye(n)).astype(xs[0].dtype)
    return xs


# ----------------------------------------------------------------------------------------------------
# the case record

TOL = {"float64": (1e-10, 1e-12), "float32": (1e-5, 1e-6)}


@dataclass
class Case:
    name: str
    inputs: tuple
    torch: Callable
    gg: Callable
    dtype: str = "float64"
    rtol: Optional[float] = None
    atol: Optional[float] = None
    prepare: Optional[Callable] = None
    note: str = ""
    nonfinite: bool = False  # the case deliberately has infinities (masked softmax...)

    @property
    def op(self) -> str:
        return self.name.split("[")[0]

    def tolerances(self) -> tuple:
        rtol, atol = TOL[self.dtype]
        return (self.rtol if self.rtol is not None else rtol, self.atol if self.atol is not None else atol)

    def seed(self) -> int:
        return zlib.crc32(self.name.encode())

    def make_inputs(self) -> list:
        """The stored (base) arrays of the inputs."""
        rng = np.random.default_rng(self.seed())
        xs = [m.make(rng, np.dtype(self.dtype)) for m in self.inputs]
        if self.prepare is not None:
            xs = self.prepare(rng, xs)
        return xs

    def signature(self) -> str:
        """A fingerprint of how the inputs are made (a changed case needs a regenerated corpus)."""
        return format(zlib.crc32(repr((self.dtype, self.inputs, self.prepare is not None)).encode()), "08x")


CASES: list = []


def C(name, inputs, torch, gg, **kw):
    CASES.append(Case(name, tuple(inputs), torch, gg, **kw))


def nnf(t):
    """``torch.nn.functional``."""
    return t.nn.functional


INF = math.inf
S = (3, 4)
S3 = (2, 3, 4)
F32 = {"dtype": "float32"}

# ====================================================================================================
# elementwise binary

C("add", [F((3, 1)), F((1, 4))], lambda t, a, b: a + b, lambda g, a, b: g.add(a, b))
C("add[3d_bcast_f32]", [F(S3), F((4,))], lambda t, a, b: a + b, lambda g, a, b: a + b, **F32)
C("add[zero_size]", [F((0, 3)), F((1, 3))], lambda t, a, b: a + b, lambda g, a, b: a + b)
C("add[noncontig]", [F(S, layout="T"), F(S, layout="step")], lambda t, a, b: a + b, lambda g, a, b: a + b)
C("add[scalar]", [F(S)], lambda t, a: a + 2.5, lambda g, a: a + 2.5)
C("add[same_input]", [F(S)], lambda t, a: a + a, lambda g, a: a + a)
C("sub", [F(S3), F((3, 1))], lambda t, a, b: a - b, lambda g, a, b: g.sub(a, b))
C("sub[rscalar]", [F(S)], lambda t, a: 1.5 - a, lambda g, a: 1.5 - a)
C("mul", [F((3, 1)), F((1, 4))], lambda t, a, b: a * b, lambda g, a, b: g.mul(a, b))
C("mul[f32_noncontig]", [F(S, layout="T"), F((4,))], lambda t, a, b: a * b, lambda g, a, b: a * b, **F32)
C("mul[zero_size_bcast]", [F((2, 0, 3)), F((3,))], lambda t, a, b: a * b, lambda g, a, b: a * b)
C("div", [F(S), P((4,))], lambda t, a, b: a / b, lambda g, a, b: g.div(a, b))
C("div[neg_denominator]", [F((3, 1)), F((1, 4), kinks=(0,), away=0.3)], lambda t, a, b: a / b,
  lambda g, a, b: a / b)
C("div[rscalar]", [P(S)], lambda t, a: 2.0 / a, lambda g, a: 2.0 / a)
C("div[f32]", [F(S), P(S)], lambda t, a, b: a / b, lambda g, a, b: a / b, **F32)
C("floor_divide", [F(S, -5, 5, diff=False), F((4,), kinks=(0,), away=0.3, diff=False)], lambda t, a, b: t.floor_divide(a, b),
  lambda g, a, b: g.floor_divide(a, b), prepare=quotient_away, note="PyTorch has no floor_divide derivative")
C("floor_divide[operator]", [F(S, -5, 5, diff=False)], lambda t, a: a // 1.5, lambda g, a: a // 1.5,
  prepare=quotient_away_scalar(1.5))
C("remainder", [F(S, -5, 5), F((4,), kinks=(0,), away=0.3)], lambda t, a, b: t.remainder(a, b),
  lambda g, a, b: g.remainder(a, b), prepare=quotient_away)
C("remainder[operator]", [F(S, -5, 5)], lambda t, a: a % 1.5, lambda g, a: a % 1.5,
  prepare=quotient_away_scalar(1.5))
C("pow", [P(S), F((4,), -1.5, 1.5)], lambda t, a, b: t.pow(a, b), lambda g, a, b: g.pow(a, b))
C("pow[int_scalar]", [F(S)], lambda t, a: a ** 3, lambda g, a: a ** 3)
C("pow[square]", [F(S)], lambda t, a: a ** 2, lambda g, a: a ** 2)
C("pow[float_scalar]", [P(S)], lambda t, a: a ** 2.5, lambda g, a: a ** 2.5)
C("pow[rscalar]", [F(S)], lambda t, a: 2.0 ** a, lambda g, a: 2.0 ** a)
C("pow[f32]", [P(S), F(S, -1.5, 1.5)], lambda t, a, b: a ** b, lambda g, a, b: a ** b, **F32)
C("arctan2", [F(S, kinks=(0,), away=0.1), F((3, 1), kinks=(0,), away=0.1)], lambda t, y, x: t.atan2(y, x),
  lambda g, y, x: g.arctan2(y, x))
C("maximum", [F((3, 1)), F((1, 4))], lambda t, a, b: t.maximum(a, b), lambda g, a, b: g.maximum(a, b))
C("maximum[f32]", [F(S), F(S)], lambda t, a, b: t.maximum(a, b), lambda g, a, b: g.maximum(a, b), **F32)
C("minimum", [F(S3), F((4,))], lambda t, a, b: t.minimum(a, b), lambda g, a, b: g.minimum(a, b))
C("where", [B(S), F((3, 1)), F((1, 4))], lambda t, c, a, b: t.where(c, a, b), lambda g, c, a, b: g.where(c, a, b))
C("where[zero_size]", [B((0, 4)), F((0, 4)), F((4,))], lambda t, c, a, b: t.where(c, a, b),
  lambda g, c, a, b: g.where(c, a, b))
C("clip", [F(S, kinks=(-0.5, 0.8))], lambda t, x: t.clamp(x, -0.5, 0.8), lambda g, x: g.clip(x, -0.5, 0.8))
C("clip[min_only]", [F(S, kinks=(0.1,))], lambda t, x: t.clamp(x, min=0.1), lambda g, x: g.clip(x, min=0.1))
C("clip[max_only_f32]", [F(S, kinks=(0.3,))], lambda t, x: t.clamp(x, max=0.3), lambda g, x: g.clip(x, max=0.3),
  **F32)
C("clip[zero_size]", [F((0, 3))], lambda t, x: t.clamp(x, -0.5, 0.5), lambda g, x: g.clip(x, -0.5, 0.5))
C("hardtanh", [F(S, kinks=(-1, 1))], lambda t, x: nnf(t).hardtanh(x), lambda g, x: g.hardtanh(x))
C("hardtanh[bounds]", [F(S, kinks=(-0.5, 1.5))], lambda t, x: nnf(t).hardtanh(x, -0.5, 1.5),
  lambda g, x: g.hardtanh(x, -0.5, 1.5))

# ====================================================================================================
# elementwise unary and activations: (name, torch, graphgrad, input)

_UNARY = [
    ("neg", lambda t, x: -x, lambda g, x: g.neg(x), F(S)),
    ("abs", lambda t, x: t.abs(x), lambda g, x: g.abs(x), F(S, kinks=(0,))),
    ("sign", lambda t, x: t.sign(x), lambda g, x: g.sign(x), F(S, kinks=(0,))),
    ("exp", lambda t, x: t.exp(x), lambda g, x: g.exp(x), F(S)),
    ("expm1", lambda t, x: t.expm1(x), lambda g, x: g.expm1(x), F(S, -1e-3, 1e-3)),
    ("log", lambda t, x: t.log(x), lambda g, x: g.log(x), P(S, 0.1, 5.0)),
    ("log1p", lambda t, x: t.log1p(x), lambda g, x: g.log1p(x), F(S, -0.5, 2.0)),
    ("log2", lambda t, x: t.log2(x), lambda g, x: g.log2(x), P(S, 0.1, 5.0)),
    ("sqrt", lambda t, x: t.sqrt(x), lambda g, x: g.sqrt(x), P(S, 0.1, 5.0)),
    ("rsqrt", lambda t, x: t.rsqrt(x), lambda g, x: g.rsqrt(x), P(S, 0.1, 5.0)),
    ("square", lambda t, x: t.square(x), lambda g, x: g.square(x), F(S)),
    ("reciprocal", lambda t, x: t.reciprocal(x), lambda g, x: g.reciprocal(x), F(S, kinks=(0,), away=0.2)),
    ("sin", lambda t, x: t.sin(x), lambda g, x: g.sin(x), F(S, -4, 4)),
    ("cos", lambda t, x: t.cos(x), lambda g, x: g.cos(x), F(S, -4, 4)),
    ("tan", lambda t, x: t.tan(x), lambda g, x: g.tan(x), F(S, -1.2, 1.2)),
    ("tanh", lambda t, x: t.tanh(x), lambda g, x: g.tanh(x), F(S, -3, 3)),
    ("sinh", lambda t, x: t.sinh(x), lambda g, x: g.sinh(x), F(S, -3, 3)),
    ("cosh", lambda t, x: t.cosh(x), lambda g, x: g.cosh(x), F(S, -3, 3)),
    ("arcsin", lambda t, x: t.asin(x), lambda g, x: g.arcsin(x), F(S, -0.9, 0.9)),
    ("arccos", lambda t, x: t.acos(x), lambda g, x: g.arccos(x), F(S, -0.9, 0.9)),
    ("arctan", lambda t, x: t.atan(x), lambda g, x: g.arctan(x), F(S, -3, 3)),
    ("sigmoid", lambda t, x: t.sigmoid(x), lambda g, x: g.sigmoid(x), F(S, -6, 6)),
    ("sigmoid[saturated]", lambda t, x: t.sigmoid(x), lambda g, x: g.sigmoid(x), F(S, -40, 40)),
    ("relu", lambda t, x: t.relu(x), lambda g, x: g.relu(x), F(S, kinks=(0,))),
    ("leaky_relu", lambda t, x: nnf(t).leaky_relu(x), lambda g, x: g.leaky_relu(x), F(S, kinks=(0,))),
    ("leaky_relu[slope]", lambda t, x: nnf(t).leaky_relu(x, 0.2), lambda g, x: g.leaky_relu(x, 0.2),
     F(S, kinks=(0,))),
    ("elu", lambda t, x: nnf(t).elu(x), lambda g, x: g.elu(x), F(S, -3, 3, kinks=(0,))),
    ("elu[alpha]", lambda t, x: nnf(t).elu(x, alpha=1.3), lambda g, x: g.elu(x, alpha=1.3),
     F(S, -3, 3, kinks=(0,))),
    ("selu", lambda t, x: nnf(t).selu(x), lambda g, x: g.selu(x), F(S, -3, 3, kinks=(0,))),
    ("gelu", lambda t, x: nnf(t).gelu(x), lambda g, x: g.gelu(x), F(S, -4, 4)),
    ("gelu[tanh]", lambda t, x: nnf(t).gelu(x, approximate="tanh"), lambda g, x: g.gelu(x, approximate="tanh"),
     F(S, -4, 4)),
    ("silu", lambda t, x: nnf(t).silu(x), lambda g, x: g.silu(x), F(S, -4, 4)),
    ("softplus", lambda t, x: nnf(t).softplus(x), lambda g, x: g.softplus(x), F(S, -4, 4)),
    ("softplus[threshold]", lambda t, x: nnf(t).softplus(x), lambda g, x: g.softplus(x),
     F(S, -30, 30, kinks=(20,), away=0.5)),
    ("softplus[beta]", lambda t, x: nnf(t).softplus(x, beta=2.0, threshold=3.0),
     lambda g, x: g.softplus(x, beta=2.0, threshold=3.0), F(S, -3, 3, kinks=(1.5,), away=0.1)),
    ("mish", lambda t, x: nnf(t).mish(x), lambda g, x: g.mish(x), F(S, -4, 4)),
    ("floor", lambda t, x: t.floor(x), lambda g, x: g.floor(x), F(S, -3, 3)),
    ("ceil", lambda t, x: t.ceil(x), lambda g, x: g.ceil(x), F(S, -3, 3)),
    ("round", lambda t, x: t.round(x), lambda g, x: g.round(x), F(S, -3, 3, kinks=(-2.5, -1.5, -0.5, 0.5, 1.5, 2.5))),
    ("erf", lambda t, x: t.erf(x), lambda g, x: g.erf(x), F(S, -2.5, 2.5)),
]
for _name, _t, _g, _x in _UNARY:
    C(_name, [_x], _t, _g)

# dtype / layout / size variants of unary ops
C("exp[f32]", [F(S3)], lambda t, x: t.exp(x), lambda g, x: g.exp(x), **F32)
C("tanh[f32_noncontig]", [F(S3, -3, 3, layout="T")], lambda t, x: t.tanh(x), lambda g, x: g.tanh(x), **F32)
C("log[noncontig]", [P((3, 4), layout="step")], lambda t, x: t.log(x), lambda g, x: g.log(x))
C("sqrt[f32]", [P(S)], lambda t, x: t.sqrt(x), lambda g, x: g.sqrt(x), **F32)
C("sigmoid[zero_size]", [F((0, 3))], lambda t, x: t.sigmoid(x), lambda g, x: g.sigmoid(x))
C("relu[noncontig]", [F(S3, kinks=(0,), layout="T")], lambda t, x: t.relu(x), lambda g, x: g.relu(x))
C("gelu[f32]", [F(S, -4, 4)], lambda t, x: nnf(t).gelu(x), lambda g, x: g.gelu(x), **F32)
C("softplus[f32]", [F(S, -4, 4)], lambda t, x: nnf(t).softplus(x), lambda g, x: g.softplus(x), **F32)
C("erf[f32]", [F(S, -2.5, 2.5)], lambda t, x: t.erf(x), lambda g, x: g.erf(x), **F32)
C("silu[zero_size]", [F((2, 0))], lambda t, x: nnf(t).silu(x), lambda g, x: g.silu(x))
C("abs[operator]", [F(S, kinks=(0,))], lambda t, x: abs(x), lambda g, x: abs(x))

# deliberate tie / kink conventions (PyTorch's choices at non-differentiable points)
C("relu[at_zero]", [A((-1.0, 0.0, 2.0, 0.0), diff=True)], lambda t, x: t.relu(x), lambda g, x: g.relu(x),
  note="d relu / dx at 0 is 0")
C("abs[at_zero]", [A((-1.0, 0.0, 2.0), diff=True)], lambda t, x: t.abs(x), lambda g, x: g.abs(x),
  note="d |x| / dx at 0 is 0")
C("clip[at_bounds]", [A((-0.5, 0.8, 0.0, -1.0, 1.0), diff=True)], lambda t, x: t.clamp(x, -0.5, 0.8),
  lambda g, x: g.clip(x, -0.5, 0.8), note="gradient passes at x == min and x == max")
C("maximum[ties]", [A((1.0, 2.0, 3.0), diff=True), A((1.0, 0.0, 3.0), diff=True)],
  lambda t, a, b: t.maximum(a, b), lambda g, a, b: g.maximum(a, b), note="ties split the gradient in half")
C("minimum[ties]", [A((1.0, 2.0, -3.0), diff=True), A((1.0, 0.0, -3.0), diff=True)],
  lambda t, a, b: t.minimum(a, b), lambda g, a, b: g.minimum(a, b), note="ties split the gradient in half")
C("round[half_even]", [A((0.5, 1.5, 2.5, -0.5, -1.5, 1.2, -2.7), diff=True)], lambda t, x: t.round(x),
  lambda g, x: g.round(x), note="round half to even")

# ====================================================================================================
# reductions

C("sum[all]", [F(S3)], lambda t, x: t.sum(x), lambda g, x: g.sum(x))
C("sum[axis=-1]", [F(S3)], lambda t, x: t.sum(x, dim=-1), lambda g, x: g.sum(x, axis=-1))
C("sum[axes_keepdims]", [F(S3)], lambda t, x: t.sum(x, dim=(0, 2), keepdim=True),
  lambda g, x: g.sum(x, axis=(0, 2), keepdims=True))
C("sum[zero_size_axis0]", [F((0, 3))], lambda t, x: t.sum(x, dim=0), lambda g, x: g.sum(x, axis=0))
C("sum[zero_size_axis1]", [F((0, 3))], lambda t, x: t.sum(x, dim=1), lambda g, x: g.sum(x, axis=1))
C("sum[f32_noncontig]", [F((3, 5), layout="T")], lambda t, x: t.sum(x, dim=0), lambda g, x: g.sum(x, axis=0), **F32)
C("sum[method]", [F(S3)], lambda t, x: x.sum(dim=1), lambda g, x: x.sum(axis=1))
C("mean[all]", [F(S3)], lambda t, x: t.mean(x), lambda g, x: g.mean(x))
C("mean[axis_keepdims]", [F(S3)], lambda t, x: t.mean(x, dim=1, keepdim=True),
  lambda g, x: g.mean(x, axis=1, keepdims=True))
C("mean[neg_axes]", [F(S3)], lambda t, x: t.mean(x, dim=(-1, -3)), lambda g, x: g.mean(x, axis=(-1, -3)))
C("mean[zero_size]", [F((0, 3))], lambda t, x: t.mean(x, dim=1), lambda g, x: g.mean(x, axis=1))
C("mean[f32]", [F((4, 5))], lambda t, x: t.mean(x, dim=0), lambda g, x: g.mean(x, axis=0), **F32)
C("prod[axis]", [F(S, kinks=(0,), away=0.2)], lambda t, x: t.prod(x, dim=1), lambda g, x: g.prod(x, axis=1))
C("prod[all]", [F((2, 3), kinks=(0,), away=0.2)], lambda t, x: t.prod(x), lambda g, x: g.prod(x))
C("prod[keepdims_neg]", [F(S3, kinks=(0,), away=0.2)], lambda t, x: t.prod(x, dim=-2, keepdim=True),
  lambda g, x: g.prod(x, axis=-2, keepdims=True))
C("max[all]", [F(S3)], lambda t, x: t.max(x), lambda g, x: g.max(x))
C("max[axis]", [F(S3)], lambda t, x: t.amax(x, dim=1), lambda g, x: g.max(x, axis=1))
C("max[neg_keepdims]", [F(S3)], lambda t, x: t.amax(x, dim=-1, keepdim=True),
  lambda g, x: g.max(x, axis=-1, keepdims=True))
C("max[axes]", [F(S3)], lambda t, x: t.amax(x, dim=(0, 2)), lambda g, x: g.max(x, axis=(0, 2)))
C("max[zero_size]", [F((0, 3))], lambda t, x: t.amax(x, dim=1), lambda g, x: g.max(x, axis=1))
C("max[f32_noncontig]", [F(S, layout="T")], lambda t, x: t.amax(x, dim=0), lambda g, x: g.max(x, axis=0), **F32)
C("min[all]", [F(S3)], lambda t, x: t.min(x), lambda g, x: g.min(x))
C("min[axis0]", [F(S3)], lambda t, x: t.amin(x, dim=0), lambda g, x: g.min(x, axis=0))
C("max[ties]", [A(((1.0, 3.0, 3.0), (2.0, 2.0, 0.0)), diff=True)], lambda t, x: t.amax(x, dim=1),
  lambda g, x: g.max(x, axis=1), note="amax spreads the gradient evenly over tied maxima")
C("max[all_ties]", [A(((1.0, 3.0, 3.0), (2.0, 3.0, 0.0)), diff=True)], lambda t, x: t.max(x),
  lambda g, x: g.max(x), note="full max spreads the gradient evenly over tied maxima")
C("argmax[all]", [F(S3)], lambda t, x: t.argmax(x), lambda g, x: g.argmax(x))
C("argmax[axis]", [F(S3)], lambda t, x: t.argmax(x, dim=1), lambda g, x: g.argmax(x, axis=1))
C("argmax[neg_keepdims]", [F(S3)], lambda t, x: t.argmax(x, dim=-1, keepdim=True),
  lambda g, x: g.argmax(x, axis=-1, keepdims=True))
C("argmin[axis0]", [F(S3)], lambda t, x: t.argmin(x, dim=0), lambda g, x: g.argmin(x, axis=0))
C("argmax[ties]", [A(((1.0, 3.0, 3.0), (2.0, 2.0, 0.0)))], lambda t, x: t.argmax(x, dim=1),
  lambda g, x: g.argmax(x, axis=1), note="the first of tied maxima")
C("var[all]", [F(S3)], lambda t, x: t.var(x, correction=0), lambda g, x: g.var(x))
C("var[ddof1_axis]", [F(S3)], lambda t, x: t.var(x, dim=1), lambda g, x: g.var(x, axis=1, ddof=1))
C("var[axes_keepdims]", [F(S3)], lambda t, x: t.var(x, dim=(0, 2), keepdim=True, correction=0),
  lambda g, x: g.var(x, axis=(0, 2), keepdims=True))
C("var[f32]", [F((4, 6))], lambda t, x: t.var(x, dim=-1, correction=0), lambda g, x: g.var(x, axis=-1), **F32)
C("std[axis]", [F(S3)], lambda t, x: t.std(x, dim=-1, correction=0), lambda g, x: g.std(x, axis=-1))
C("std[ddof1_all]", [F(S3)], lambda t, x: t.std(x), lambda g, x: g.std(x, ddof=1))
C("std[f32_keepdims]", [F((4, 6))], lambda t, x: t.std(x, dim=0, keepdim=True, correction=0),
  lambda g, x: g.std(x, axis=0, keepdims=True), **F32)
C("logsumexp[axis]", [F(S3)], lambda t, x: t.logsumexp(x, dim=-1), lambda g, x: g.logsumexp(x, axis=-1))
C("logsumexp[all]", [F(S3)], lambda t, x: t.logsumexp(x, dim=(0, 1, 2)), lambda g, x: g.logsumexp(x))
C("logsumexp[large]", [F(S, 500, 900)], lambda t, x: t.logsumexp(x, dim=1), lambda g, x: g.logsumexp(x, axis=1))
C("logsumexp[axes_keepdims]", [F(S3)], lambda t, x: t.logsumexp(x, dim=(0, 2), keepdim=True),
  lambda g, x: g.logsumexp(x, axis=(0, 2), keepdims=True))
C("logsumexp[f32]", [F(S, -50, 50)], lambda t, x: t.logsumexp(x, dim=0), lambda g, x: g.logsumexp(x, axis=0),
  **F32)
C("norm[all]", [F(S3)], lambda t, x: t.linalg.vector_norm(x), lambda g, x: g.norm(x))
C("norm[axis]", [F(S3)], lambda t, x: t.linalg.vector_norm(x, dim=-1), lambda g, x: g.norm(x, axis=-1))
C("norm[ord1]", [F(S, kinks=(0,))], lambda t, x: t.linalg.vector_norm(x, ord=1, dim=1),
  lambda g, x: g.norm(x, ord=1, axis=1))
C("norm[inf]", [F(S)], lambda t, x: t.linalg.vector_norm(x, ord=INF, dim=0),
  lambda g, x: g.norm(x, ord=INF, axis=0))
C("norm[keepdims]", [F(S3)], lambda t, x: t.linalg.vector_norm(x, dim=1, keepdim=True),
  lambda g, x: g.norm(x, axis=1, keepdims=True))
C("norm[fro_axes]", [F(S3)], lambda t, x: t.linalg.norm(x, dim=(1, 2)), lambda g, x: g.norm(x, axis=(1, 2)))
C("all[axis]", [B(S, 0.8)], lambda t, x: t.all(x, dim=1), lambda g, x: g.all(x, axis=1))
C("all[all]", [B(S, 0.8)], lambda t, x: t.all(x), lambda g, x: g.all(x))
C("any[keepdims]", [B(S3, 0.2)], lambda t, x: t.any(x, dim=-1, keepdim=True),
  lambda g, x: g.any(x, axis=-1, keepdims=True))
C("any[all]", [B(S, 0.1)], lambda t, x: t.any(x), lambda g, x: g.any(x))
C("cumsum[axis0]", [F(S3)], lambda t, x: t.cumsum(x, dim=0), lambda g, x: g.cumsum(x, axis=0))
C("cumsum[neg_axis]", [F(S3)], lambda t, x: t.cumsum(x, dim=-1), lambda g, x: g.cumsum(x, axis=-1))
C("cumsum[f32_noncontig]", [F((4, 5), layout="T")], lambda t, x: t.cumsum(x, dim=1),
  lambda g, x: g.cumsum(x, axis=1), **F32)
C("cumsum[zero_size]", [F((0, 3))], lambda t, x: t.cumsum(x, dim=1), lambda g, x: g.cumsum(x, axis=1))
C("cumprod[axis1]", [F(S, kinks=(0,), away=0.2)], lambda t, x: t.cumprod(x, dim=1),
  lambda g, x: g.cumprod(x, axis=1))
C("cumprod[neg_axis]", [F(S3, kinks=(0,), away=0.2)], lambda t, x: t.cumprod(x, dim=-2),
  lambda g, x: g.cumprod(x, axis=-2))

# ====================================================================================================
# shape ops

C("reshape", [F(S3)], lambda t, x: t.reshape(x, (4, -1)), lambda g, x: g.reshape(x, (4, -1)))
C("reshape[noncontig]", [F(S, layout="T")], lambda t, x: t.reshape(x, (2, 6)), lambda g, x: g.reshape(x, (2, 6)))
C("reshape[zero_size]", [F((0, 3))], lambda t, x: t.reshape(x, (3, 0)), lambda g, x: g.reshape(x, (3, 0)))
C("reshape[method]", [F(S3)], lambda t, x: x.reshape(6, 4), lambda g, x: x.reshape(6, 4))
C("flatten", [F(S3)], lambda t, x: t.flatten(x, 1), lambda g, x: g.flatten(x, 1))
C("flatten[all]", [F(S3)], lambda t, x: t.flatten(x), lambda g, x: g.flatten(x))
C("flatten[middle]", [F((2, 3, 2, 2))], lambda t, x: t.flatten(x, 1, -2), lambda g, x: g.flatten(x, 1, -2))
C("squeeze", [F((3, 1, 4, 1))], lambda t, x: t.squeeze(x), lambda g, x: g.squeeze(x))
C("squeeze[axis]", [F((3, 1, 4, 1))], lambda t, x: t.squeeze(x, -1), lambda g, x: g.squeeze(x, -1))
C("expand_dims", [F(S)], lambda t, x: t.unsqueeze(x, 1), lambda g, x: g.expand_dims(x, 1))
C("unsqueeze[neg]", [F(S)], lambda t, x: t.unsqueeze(x, -1), lambda g, x: g.unsqueeze(x, -1))
C("transpose", [F(S3)], lambda t, x: t.permute(x, (2, 0, 1)), lambda g, x: g.transpose(x, (2, 0, 1)))
C("transpose[default]", [F(S3)], lambda t, x: t.permute(x, (2, 1, 0)), lambda g, x: g.transpose(x))
C("transpose[T]", [F(S)], lambda t, x: x.T, lambda g, x: x.T)
C("permute", [F(S3)], lambda t, x: x.permute(1, 2, 0), lambda g, x: g.permute(x, (1, 2, 0)))
C("swapaxes", [F(S3)], lambda t, x: t.swapaxes(x, 0, -1), lambda g, x: g.swapaxes(x, 0, -1))
C("moveaxis", [F(S3)], lambda t, x: t.movedim(x, 0, -1), lambda g, x: g.moveaxis(x, 0, -1))
C("broadcast_to", [F((3, 1))], lambda t, x: t.broadcast_to(x, (2, 3, 4)), lambda g, x: g.broadcast_to(x, (2, 3, 4)))
C("concatenate", [F((2, 1, 4)), F(S3), F((2, 0, 4))], lambda t, a, b, c: t.cat([a, b, c], dim=1),
  lambda g, a, b, c: g.concatenate([a, b, c], axis=1))
C("concatenate[neg_axis]", [F((3, 2)), F((3, 1), layout="T")], lambda t, a, b: t.cat([a, b], dim=-1),
  lambda g, a, b: g.concatenate([a, b], axis=-1))
C("stack", [F(S), F(S)], lambda t, a, b: t.stack([a, b], dim=1), lambda g, a, b: g.stack([a, b], axis=1))
C("stack[neg_axis]", [F(S), F(S), F(S)], lambda t, a, b, c: t.stack([a, b, c], dim=-1),
  lambda g, a, b, c: g.stack([a, b, c], axis=-1))
C("split[sections]", [F((2, 6))], lambda t, x: t.split(x, 2, dim=1), lambda g, x: g.split(x, 3, axis=1),
  note="NumPy split: 3 equal sections")
C("split[indices]", [F((5, 3))], lambda t, x: t.split(x, [1, 3, 1], dim=0), lambda g, x: g.split(x, [1, 4], axis=0),
  note="NumPy split at indices [1, 4]")
C("chunk", [F((2, 6))], lambda t, x: t.chunk(x, 3, dim=-1), lambda g, x: g.chunk(x, 3, axis=-1))
C("chunk[uneven]", [F((2, 7))], lambda t, x: t.chunk(x, 3, dim=1), lambda g, x: g.chunk(x, 3, axis=1))
C("tile", [F((2, 3))], lambda t, x: t.tile(x, (2, 1, 3)), lambda g, x: g.tile(x, (2, 1, 3)))
C("repeat", [F((2, 3))], lambda t, x: t.repeat_interleave(x, 2, dim=0), lambda g, x: g.repeat(x, 2, axis=0),
  note="NumPy repeat (PyTorch repeat_interleave)")
C("repeat[neg_axis]", [F((2, 3))], lambda t, x: t.repeat_interleave(x, 3, dim=-1),
  lambda g, x: g.repeat(x, 3, axis=-1))
C("pad", [F((2, 3))], lambda t, x: nnf(t).pad(x, (1, 2, 2, 0)), lambda g, x: g.pad(x, ((2, 0), (1, 2))),
  note="NumPy pad_width ((before, after) per axis)")
C("pad[value]", [F(S3)], lambda t, x: nnf(t).pad(x, (0, 1), value=0.5),
  lambda g, x: g.pad(x, ((0, 0), (0, 0), (0, 1)), constant_values=0.5))
C("flip", [F(S3)], lambda t, x: t.flip(x, dims=(0, 2)), lambda g, x: g.flip(x, axis=(0, 2)))
C("flip[neg]", [F(S)], lambda t, x: t.flip(x, dims=(-1,)), lambda g, x: g.flip(x, axis=-1))
C("roll", [F(S)], lambda t, x: t.roll(x, 2, dims=1), lambda g, x: g.roll(x, 2, axis=1))
C("roll[multi]", [F(S)], lambda t, x: t.roll(x, (1, -2), dims=(0, 1)), lambda g, x: g.roll(x, (1, -2), axis=(0, 1)))
C("roll[flat]", [F(S)], lambda t, x: t.roll(x, 5), lambda g, x: g.roll(x, 5))
C("take", [F(S), I((5,), 0, 12)], lambda t, x, i: t.take(x, i), lambda g, x, i: g.take(x, i))
C("take[dup]", [F((5,)), A((0, 4, 4, 1, 0, 0))], lambda t, x, i: t.take(x, i), lambda g, x, i: g.take(x, i))
C("take_along_axis", [F((3, 5)), I((3, 4), 0, 5)], lambda t, x, i: t.take_along_dim(x, i, dim=1),
  lambda g, x, i: g.take_along_axis(x, i, axis=1))
C("take_along_axis[axis0]", [F(S3), I((1, 3, 4), 0, 2)], lambda t, x, i: t.take_along_dim(x, i, dim=0),
  lambda g, x, i: g.take_along_axis(x, i, axis=0))
C("gather", [F((3, 4)), I((3, 5), 0, 4)], lambda t, x, i: t.gather(x, 1, i), lambda g, x, i: g.gather(x, 1, i))
C("gather[axis0_small_index]", [F((4, 3)), I((2, 2), 0, 4)], lambda t, x, i: t.gather(x, 0, i),
  lambda g, x, i: g.gather(x, 0, i))
C("gather[neg_axis]", [F(S3), I((2, 3, 2), 0, 4)], lambda t, x, i: t.gather(x, -1, i),
  lambda g, x, i: g.gather(x, -1, i))
C("scatter_add", [F((3, 4)), I((3, 3), 0, 4), F((3, 3))], lambda t, x, i, s: t.scatter_add(x, 1, i, s),
  lambda g, x, i, s: g.scatter_add(x, 1, i, s))
C("scatter_add[axis0]", [F((3, 2)), I((4, 2), 0, 3), F((4, 2))], lambda t, x, i, s: t.scatter_add(x, 0, i, s),
  lambda g, x, i, s: g.scatter_add(x, 0, i, s))
C("one_hot", [I((2, 3), 0, 5)], lambda t, i: nnf(t).one_hot(i, 5), lambda g, i: g.one_hot(i, 5))
C("tril", [F((4, 4))], lambda t, x: t.tril(x), lambda g, x: g.tril(x))
C("tril[k-1_batched]", [F(S3)], lambda t, x: t.tril(x, -1), lambda g, x: g.tril(x, -1))
C("triu", [F((3, 5))], lambda t, x: t.triu(x, 1), lambda g, x: g.triu(x, 1))
C("diag[vector]", [F((3,))], lambda t, x: t.diag(x), lambda g, x: g.diag(x))
C("diag[vector_k]", [F((3,))], lambda t, x: t.diag(x, -1), lambda g, x: g.diag(x, -1))
C("diag[matrix]", [F((3, 4))], lambda t, x: t.diag(x), lambda g, x: g.diag(x))
C("diag[matrix_k]", [F((4, 4))], lambda t, x: t.diag(x, 1), lambda g, x: g.diag(x, 1))

# indexing x[key]
C("getitem[slices]", [F((4, 6))], lambda t, x: x[1:, ::2], lambda g, x: x[1:, ::2])
C("getitem[int_newaxis]", [F(S3)], lambda t, x: x[:, None, -1], lambda g, x: x[:, None, -1])
C("getitem[ellipsis]", [F(S3)], lambda t, x: x[..., 1], lambda g, x: x[..., 1])
C("getitem[neg_slice]", [F(S3)], lambda t, x: x[-2:, 1:-1], lambda g, x: x[-2:, 1:-1])
C("getitem[list_dup]", [F(S)], lambda t, x: x[[0, 2, 2]], lambda g, x: x[[0, 2, 2]])
C("getitem[int_tensor]", [F((5, 3)), I((2, 2), 0, 5)], lambda t, x, i: x[i], lambda g, x, i: x[i])
C("getitem[bool_mask]", [F(S), B(S)], lambda t, x, m: x[m], lambda g, x, m: x[m])
C("getitem[two_index_arrays]", [F(S), I((4,), 0, 3), I((4,), 0, 4)], lambda t, x, i, j: x[i, j],
  lambda g, x, i, j: x[i, j])
C("getitem[slice_and_list]", [F(S3)], lambda t, x: x[:, [0, 2], 1:], lambda g, x: x[:, [0, 2], 1:])
C("getitem[noncontig]", [F((4, 5), layout="T")], lambda t, x: x[1:3, ::2], lambda g, x: x[1:3, ::2])
C("getitem[zero_size]", [F((0, 3))], lambda t, x: x[:, 1:], lambda g, x: x[:, 1:])

# ====================================================================================================
# linear algebra

C("matmul", [F((3, 4)), F((4, 5))], lambda t, a, b: a @ b, lambda g, a, b: g.matmul(a, b))
C("matmul[batched_bcast]", [F((2, 1, 3, 4)), F((3, 4, 2))], lambda t, a, b: t.matmul(a, b),
  lambda g, a, b: g.matmul(a, b))
C("matmul[vec_mat]", [F((4,)), F((4, 5))], lambda t, a, b: a @ b, lambda g, a, b: a @ b)
C("matmul[mat_vec]", [F((2, 3, 4)), F((4,))], lambda t, a, b: a @ b, lambda g, a, b: a @ b)
C("matmul[vec_vec]", [F((4,)), F((4,))], lambda t, a, b: a @ b, lambda g, a, b: a @ b)
C("matmul[f32]", [F((5, 6)), F((6, 3))], lambda t, a, b: a @ b, lambda g, a, b: a @ b, **F32)
C("matmul[noncontig]", [F((4, 3), layout="T"), F((3, 2), layout="step")], lambda t, a, b: a @ b,
  lambda g, a, b: a @ b)
C("matmul[zero_rows]", [F((0, 3)), F((3, 4))], lambda t, a, b: a @ b, lambda g, a, b: a @ b)
C("matmul[zero_inner]", [F((3, 0)), F((0, 4))], lambda t, a, b: a @ b, lambda g, a, b: a @ b)
C("linear", [F((5, 4)), F((3, 4)), F((3,))], lambda t, x, w, b: nnf(t).linear(x, w, b),
  lambda g, x, w, b: g.nn.functional.linear(x, w, b))
C("linear[3d_f32]", [F((2, 5, 4)), F((3, 4)), F((3,))], lambda t, x, w, b: nnf(t).linear(x, w, b),
  lambda g, x, w, b: g.nn.functional.linear(x, w, b), **F32)
C("linear[vector_nobias]", [F((4,)), F((3, 4))], lambda t, x, w: nnf(t).linear(x, w),
  lambda g, x, w: g.nn.functional.linear(x, w))
C("linear[noncontig]", [F((4, 5), layout="T"), F((3, 5), layout="T")], lambda t, x, w: nnf(t).linear(x, w),
  lambda g, x, w: g.nn.functional.linear(x, w))
C("dot", [F((5,)), F((5,))], lambda t, a, b: t.dot(a, b), lambda g, a, b: g.dot(a, b))
C("outer", [F((3,)), F((4,))], lambda t, a, b: t.outer(a, b), lambda g, a, b: g.outer(a, b))
C("einsum[matmul]", [F((3, 4)), F((4, 5))], lambda t, a, b: t.einsum("ij,jk->ik", a, b),
  lambda g, a, b: g.einsum("ij,jk->ik", a, b))
C("einsum[batched_bt]", [F((2, 3, 4)), F((2, 5, 4))], lambda t, a, b: t.einsum("bij,bkj->bik", a, b),
  lambda g, a, b: g.einsum("bij,bkj->bik", a, b))
C("einsum[diag]", [F((4, 4))], lambda t, a: t.einsum("ii->i", a), lambda g, a: g.einsum("ii->i", a))
C("einsum[trace]", [F((4, 4))], lambda t, a: t.einsum("ii", a), lambda g, a: g.einsum("ii", a))
C("einsum[outer]", [F((3,)), F((4,))], lambda t, a, b: t.einsum("i,j->ij", a, b),
  lambda g, a, b: g.einsum("i,j->ij", a, b))
C("einsum[sum_all]", [F(S3)], lambda t, a: t.einsum("ijk->", a), lambda g, a: g.einsum("ijk->", a))
C("einsum[transpose]", [F(S3)], lambda t, a: t.einsum("ijk->kij", a), lambda g, a: g.einsum("ijk->kij", a))
C("einsum[three_operands]", [F((2, 3)), F((3, 4)), F((4,))], lambda t, a, b, c: t.einsum("ij,jk,k->i", a, b, c),
  lambda g, a, b, c: g.einsum("ij,jk,k->i", a, b, c))
C("einsum[ellipsis]", [F((2, 3, 4)), F((4, 5))], lambda t, a, b: t.einsum("...ij,jk->...ik", a, b),
  lambda g, a, b: g.einsum("...ij,jk->...ik", a, b))
C("inv", [F((3, 3))], lambda t, a: t.linalg.inv(a), lambda g, a: g.inv(a), prepare=well_conditioned)
C("inv[batched]", [F((2, 4, 4))], lambda t, a: t.linalg.inv(a), lambda g, a: g.inv(a), prepare=well_conditioned)
C("det", [F((3, 3))], lambda t, a: t.linalg.det(a), lambda g, a: g.det(a), prepare=well_conditioned)
C("det[batched]", [F((2, 3, 3))], lambda t, a: t.linalg.det(a), lambda g, a: g.det(a), prepare=well_conditioned)
C("det[negative]", [A(((0.0, 2.0, 0.5), (1.5, 0.3, 0.0), (0.2, 0.1, 1.0)), diff=True)], lambda t, a: t.linalg.det(a),
  lambda g, a: g.det(a))
C("solve[matrix_rhs]", [F((3, 3)), F((3, 2))], lambda t, a, b: t.linalg.solve(a, b), lambda g, a, b: g.solve(a, b),
  prepare=well_conditioned)
C("solve[vector_rhs]", [F((4, 4)), F((4,))], lambda t, a, b: t.linalg.solve(a, b), lambda g, a, b: g.solve(a, b),
  prepare=well_conditioned)
C("solve[batched]", [F((2, 3, 3)), F((2, 3, 2))], lambda t, a, b: t.linalg.solve(a, b),
  lambda g, a, b: g.solve(a, b), prepare=well_conditioned)
C("inv[f32]", [F((3, 3))], lambda t, a: t.linalg.inv(a), lambda g, a: g.inv(a), prepare=well_conditioned,
  rtol=1e-4, atol=1e-6, **F32)

# ====================================================================================================
# neural-network functions

C("softmax", [F((3, 5))], lambda t, x: t.softmax(x, dim=-1), lambda g, x: g.softmax(x, axis=-1))
C("softmax[axis0_noncontig]", [F((3, 5), layout="T")], lambda t, x: t.softmax(x, dim=0),
  lambda g, x: g.softmax(x, axis=0))
C("softmax[3d_axis1]", [F(S3)], lambda t, x: t.softmax(x, dim=1), lambda g, x: g.softmax(x, axis=1))
C("softmax[large]", [F((3, 5), 500, 1000)], lambda t, x: t.softmax(x, dim=-1), lambda g, x: g.softmax(x, axis=-1))
C("softmax[f32]", [F((3, 5), -5, 5)], lambda t, x: t.softmax(x, dim=-1), lambda g, x: g.softmax(x, axis=-1), **F32)
C("softmax[zero_size]", [F((0, 5))], lambda t, x: t.softmax(x, dim=-1), lambda g, x: g.softmax(x, axis=-1))
C("softmax[default_axis]", [F(S3)], lambda t, x: t.softmax(x, dim=-1), lambda g, x: g.softmax(x))
C("log_softmax", [F((3, 5))], lambda t, x: t.log_softmax(x, dim=-1), lambda g, x: g.log_softmax(x, axis=-1))
C("log_softmax[3d_axis1]", [F(S3)], lambda t, x: t.log_softmax(x, dim=1), lambda g, x: g.log_softmax(x, axis=1))
C("log_softmax[large]", [F((3, 5), -1000, 1000)], lambda t, x: t.log_softmax(x, dim=-1),
  lambda g, x: g.log_softmax(x, axis=-1))
C("log_softmax[f32]", [F((4, 6), -5, 5)], lambda t, x: t.log_softmax(x, dim=-1),
  lambda g, x: g.log_softmax(x, axis=-1), **F32)

_T6 = A((0, -100, 3, 1, -100, 2))  # targets with ignored entries
_W4 = A((0.5, 1.0, 2.0, 1.5))      # class weights


def _ce(**kw):
    return (lambda t, x, y: nnf(t).cross_entropy(x, y, **kw)), (lambda g, x, y: g.cross_entropy(x, y, **kw))


def _cew(**kw):
    return ((lambda t, x, y, w: nnf(t).cross_entropy(x, y, weight=w, **kw)),
            (lambda g, x, y, w: g.cross_entropy(x, y, weight=w, **kw)))


C("cross_entropy", [F((6, 4)), I((6,), 0, 4)], *_ce())
C("cross_entropy[sum]", [F((6, 4)), I((6,), 0, 4)], *_ce(reduction="sum"))
C("cross_entropy[none]", [F((6, 4)), I((6,), 0, 4)], *_ce(reduction="none"))
C("cross_entropy[weight]", [F((6, 4)), I((6,), 0, 4), _W4], *_cew())
C("cross_entropy[weight_sum]", [F((6, 4)), I((6,), 0, 4), _W4], *_cew(reduction="sum"))
C("cross_entropy[weight_none]", [F((6, 4)), I((6,), 0, 4), _W4], *_cew(reduction="none"))
C("cross_entropy[ignore_index]", [F((6, 4)), _T6], *_ce())
C("cross_entropy[ignore_index_none]", [F((6, 4)), _T6], *_ce(reduction="none"))
C("cross_entropy[ignore_index_custom]", [F((6, 4)), A((0, 1, 3, 1, 2, 2))], *_ce(ignore_index=1))
C("cross_entropy[weight_ignore]", [F((6, 4)), _T6, _W4], *_cew())
C("cross_entropy[label_smoothing]", [F((6, 4)), I((6,), 0, 4)], *_ce(label_smoothing=0.1))
C("cross_entropy[label_smoothing_sum]", [F((6, 4)), I((6,), 0, 4)], *_ce(label_smoothing=0.25, reduction="sum"))
C("cross_entropy[label_smoothing_none]", [F((6, 4)), I((6,), 0, 4)], *_ce(label_smoothing=0.2, reduction="none"))
C("cross_entropy[weight_label_smoothing]", [F((6, 4)), I((6,), 0, 4), _W4], *_cew(label_smoothing=0.1))
C("cross_entropy[ignore_label_smoothing]", [F((6, 4)), _T6], *_ce(label_smoothing=0.1))
C("cross_entropy[weight_ignore_label_smoothing]", [F((6, 4)), _T6, _W4], *_cew(label_smoothing=0.1))
C("cross_entropy[spatial]", [F((2, 4, 3)), I((2, 3), 0, 4)], *_ce())
C("cross_entropy[large_logits]", [F((4, 3), -500, 500), I((4,), 0, 3)], *_ce())
C("cross_entropy[f32]", [F((6, 4), -3, 3), I((6,), 0, 4)], *_ce(), **F32)


def _nll(**kw):
    return (lambda t, x, y: nnf(t).nll_loss(x, y, **kw)), (lambda g, x, y: g.nll_loss(x, y, **kw))


def _nllw(**kw):
    return ((lambda t, x, y, w: nnf(t).nll_loss(x, y, weight=w, **kw)),
            (lambda g, x, y, w: g.nll_loss(x, y, weight=w, **kw)))


C("nll_loss", [F((5, 3), -3, 0), I((5,), 0, 3)], *_nll())
C("nll_loss[sum]", [F((5, 3), -3, 0), I((5,), 0, 3)], *_nll(reduction="sum"))
C("nll_loss[none]", [F((5, 3), -3, 0), I((5,), 0, 3)], *_nll(reduction="none"))
C("nll_loss[weight]", [F((5, 3), -3, 0), I((5,), 0, 3), A((0.2, 1.0, 3.0))], *_nllw())
C("nll_loss[weight_sum]", [F((5, 3), -3, 0), I((5,), 0, 3), A((0.2, 1.0, 3.0))], *_nllw(reduction="sum"))
C("nll_loss[ignore_index]", [F((5, 3), -3, 0), A((2, -100, 0, 1, -100))], *_nll())
C("nll_loss[weight_ignore]", [F((5, 3), -3, 0), A((2, 1, 0, 1, 1)), A((0.2, 1.0, 3.0))], *_nllw(ignore_index=1))


def _bce(**kw):
    return ((lambda t, x, y: nnf(t).binary_cross_entropy(x, y, **kw)),
            (lambda g, x, y: g.binary_cross_entropy(x, y, **kw)))


C("binary_cross_entropy", [F(S, 0.05, 0.95), F(S, 0, 1, diff=False)], *_bce())
C("binary_cross_entropy[sum]", [F(S, 0.05, 0.95), F(S, 0, 1, diff=False)], *_bce(reduction="sum"))
C("binary_cross_entropy[none]", [F(S, 0.05, 0.95), F(S, 0, 1, diff=False)],
  *_bce(reduction="none"))
C("binary_cross_entropy[weight]", [F(S, 0.05, 0.95), F(S, 0, 1, diff=False), P((4,), diff=False)],
  lambda t, x, y, w: nnf(t).binary_cross_entropy(x, y, weight=w),
  lambda g, x, y, w: g.binary_cross_entropy(x, y, weight=w))
C("binary_cross_entropy[hard_targets]", [F((8,), 0.05, 0.95), A((0.0, 1.0, 1.0, 0.0, 1.0, 0.0, 0.0, 1.0))], *_bce())
C("binary_cross_entropy[f32]", [F(S, 0.05, 0.95), F(S, 0, 1, diff=False)], *_bce(), **F32)


def _bcel(**kw):
    return ((lambda t, x, y: nnf(t).binary_cross_entropy_with_logits(x, y, **kw)),
            (lambda g, x, y: g.binary_cross_entropy_with_logits(x, y, **kw)))


C("binary_cross_entropy_with_logits", [F(S, -4, 4), F(S, 0, 1, diff=False)], *_bcel())
C("binary_cross_entropy_with_logits[sum]", [F(S, -4, 4), F(S, 0, 1, diff=False)], *_bcel(reduction="sum"))
C("binary_cross_entropy_with_logits[none]", [F(S, -4, 4), F(S, 0, 1, diff=False)], *_bcel(reduction="none"))
C("binary_cross_entropy_with_logits[large]", [F(S, -60, 60), F(S, 0, 1, diff=False)], *_bcel())
C("binary_cross_entropy_with_logits[pos_weight]", [F(S, -4, 4), F(S, 0, 1, diff=False), P((4,), diff=False)],
  lambda t, x, y, p: nnf(t).binary_cross_entropy_with_logits(x, y, pos_weight=p),
  lambda g, x, y, p: g.binary_cross_entropy_with_logits(x, y, pos_weight=p))
C("binary_cross_entropy_with_logits[weight_pos_weight]",
  [F(S, -4, 4), F(S, 0, 1, diff=False), P((3, 1), diff=False), P((4,), diff=False)],
  lambda t, x, y, w, p: nnf(t).binary_cross_entropy_with_logits(x, y, weight=w, pos_weight=p, reduction="sum"),
  lambda g, x, y, w, p: g.binary_cross_entropy_with_logits(x, y, weight=w, pos_weight=p, reduction="sum"))
C("binary_cross_entropy_with_logits[pos_weight_large]", [F(S, -60, 60), F(S, 0, 1, diff=False), P((4,), diff=False)],
  lambda t, x, y, p: nnf(t).binary_cross_entropy_with_logits(x, y, pos_weight=p),
  lambda g, x, y, p: g.binary_cross_entropy_with_logits(x, y, pos_weight=p))
C("binary_cross_entropy_with_logits[f32]", [F(S, -4, 4), F(S, 0, 1, diff=False)], *_bcel(), **F32)


def _loss(name, **kw):
    return ((lambda t, x, y: getattr(nnf(t), name)(x, y, **kw)), (lambda g, x, y: getattr(g, name)(x, y, **kw)))


C("mse_loss", [F(S), F(S)], *_loss("mse_loss"))
C("mse_loss[sum]", [F(S3), F(S3)], *_loss("mse_loss", reduction="sum"))
C("mse_loss[none]", [F(S), F(S, diff=False)], *_loss("mse_loss", reduction="none"))
C("mse_loss[f32]", [F(S), F(S)], *_loss("mse_loss"), **F32)
C("huber_loss", [F(S, -3, 3), F(S, -3, 3)], *_loss("huber_loss"), prepare=diff_away(1.0))
C("huber_loss[delta_sum]", [F(S, -3, 3), F(S, -3, 3)], *_loss("huber_loss", delta=0.5, reduction="sum"),
  prepare=diff_away(0.5))
C("huber_loss[none]", [F(S, -3, 3), F(S, -3, 3)], *_loss("huber_loss", reduction="none", delta=1.5),
  prepare=diff_away(1.5))
C("l1_loss", [F(S), F(S)], *_loss("l1_loss"), prepare=diff_away(0.0))
C("l1_loss[sum]", [F(S3), F(S3)], *_loss("l1_loss", reduction="sum"), prepare=diff_away(0.0))
C("l1_loss[none]", [F(S), F(S, diff=False)], *_loss("l1_loss", reduction="none"), prepare=diff_away(0.0))


def _conv(name, **kw):
    return ((lambda t, x, w, b: getattr(nnf(t), name)(x, w, b, **kw)),
            (lambda g, x, w, b: getattr(g, name)(x, w, b, **kw)))


def _conv_nb(name, **kw):
    return ((lambda t, x, w: getattr(nnf(t), name)(x, w, **kw)), (lambda g, x, w: getattr(g, name)(x, w, **kw)))


C("conv1d", [F((2, 3, 8)), F((4, 3, 3)), F((4,))], *_conv("conv1d"))
C("conv1d[stride_pad]", [F((2, 3, 8)), F((4, 3, 3)), F((4,))], *_conv("conv1d", stride=2, padding=1))
C("conv1d[dilation]", [F((2, 3, 9)), F((4, 3, 3)), F((4,))], *_conv("conv1d", dilation=2, padding=1))
C("conv1d[groups]", [F((2, 4, 7)), F((6, 2, 3)), F((6,))], *_conv("conv1d", groups=2))
C("conv1d[same]", [F((1, 2, 7)), F((3, 2, 4)), F((3,))], *_conv("conv1d", padding="same"))
C("conv2d", [F((2, 3, 6, 6)), F((4, 3, 3, 3)), F((4,))], *_conv("conv2d"))
C("conv2d[stride_pad]", [F((2, 3, 6, 6)), F((4, 3, 3, 3)), F((4,))], *_conv("conv2d", stride=2, padding=1))
C("conv2d[rect]", [F((1, 2, 5, 7)), F((3, 2, 2, 3)), F((3,))], *_conv("conv2d", stride=(2, 1), padding=(0, 1)))
C("conv2d[same]", [F((1, 3, 5, 5)), F((2, 3, 3, 3)), F((2,))], *_conv("conv2d", padding="same"))
C("conv2d[same_even_dilated]", [F((1, 2, 6, 5)), F((2, 2, 2, 4)), F((2,))],
  *_conv("conv2d", padding="same", dilation=(2, 1)))
C("conv2d[dilation]", [F((1, 2, 7, 7)), F((3, 2, 3, 3)), F((3,))], *_conv("conv2d", dilation=2))
C("conv2d[groups]", [F((1, 4, 5, 5)), F((6, 2, 3, 3)), F((6,))], *_conv("conv2d", groups=2, padding=1))
C("conv2d[depthwise]", [F((2, 3, 5, 5)), F((3, 1, 3, 3)), F((3,))], *_conv("conv2d", groups=3))
C("conv2d[nobias]", [F((2, 3, 5, 5)), F((2, 3, 2, 2))], *_conv_nb("conv2d", stride=2))
C("conv2d[f32]", [F((2, 3, 6, 6)), F((4, 3, 3, 3)), F((4,))], *_conv("conv2d", padding=1), **F32)
C("conv2d[noncontig]", [F((2, 3, 5, 5), layout="T"), F((2, 3, 3, 3)), F((2,))], *_conv("conv2d"))
C("conv2d[1x1]", [F((2, 3, 4, 4)), F((5, 3, 1, 1)), F((5,))], *_conv("conv2d"))
C("conv_transpose2d", [F((2, 3, 4, 4)), F((3, 2, 3, 3)), F((2,))], *_conv("conv_transpose2d"))
C("conv_transpose2d[stride_pad_outpad]", [F((1, 3, 4, 4)), F((3, 2, 3, 3)), F((2,))],
  *_conv("conv_transpose2d", stride=2, padding=1, output_padding=1))
C("conv_transpose2d[groups]", [F((1, 4, 3, 3)), F((4, 3, 3, 3)), F((6,))], *_conv("conv_transpose2d", groups=2))
C("conv_transpose2d[dilation]", [F((1, 2, 4, 4)), F((2, 3, 2, 2)), F((3,))],
  *_conv("conv_transpose2d", dilation=2, stride=2))
C("conv_transpose2d[nobias_rect]", [F((2, 2, 3, 4)), F((2, 3, 2, 3))],
  *_conv_nb("conv_transpose2d", stride=(1, 2), padding=(0, 1)))
C("conv2d[depthwise_mult2_stride2]", [F((2, 3, 7, 6)), F((6, 1, 3, 3)), F((6,))],
  *_conv("conv2d", groups=3, stride=2, padding=1))
C("conv2d[depthwise_dilation_pad]", [F((1, 4, 7, 7)), F((4, 1, 3, 3))],
  *_conv_nb("conv2d", groups=4, dilation=2, padding=(2, 1)))
C("conv2d[depthwise_f32]", [F((2, 8, 6, 6)), F((8, 1, 3, 3)), F((8,))], *_conv("conv2d", groups=8, padding=1), **F32)
C("conv2d[groups_stride_dilation]", [F((2, 6, 8, 8)), F((9, 2, 3, 3)), F((9,))],
  *_conv("conv2d", groups=3, stride=2, dilation=2, padding=2))
C("conv1d[depthwise_stride2]", [F((2, 4, 9)), F((4, 1, 3)), F((4,))], *_conv("conv1d", groups=4, stride=2, padding=1))
C("conv_transpose2d[depthwise_stride2]", [F((1, 3, 4, 4)), F((3, 1, 3, 3)), F((3,))],
  *_conv("conv_transpose2d", groups=3, stride=2, padding=1, output_padding=1))


def _pool(name, **kw):
    return (lambda t, x: getattr(nnf(t), name)(x, **kw)), (lambda g, x: getattr(g, name)(x, **kw))


C("max_pool2d", [F((2, 3, 6, 6))], *_pool("max_pool2d", kernel_size=2))
C("max_pool2d[k3s2p1]", [F((2, 2, 7, 7))], *_pool("max_pool2d", kernel_size=3, stride=2, padding=1))
C("max_pool2d[ceil_mode]", [F((1, 2, 5, 5))], *_pool("max_pool2d", kernel_size=2, stride=2, ceil_mode=True))
C("max_pool2d[ceil_mode_pad]", [F((1, 2, 6, 6))], *_pool("max_pool2d", kernel_size=3, stride=2, padding=1,
                                                          ceil_mode=True))
C("max_pool2d[dilation]", [F((1, 2, 7, 7))], *_pool("max_pool2d", kernel_size=2, stride=1, dilation=2))
C("max_pool2d[rect]", [F((1, 2, 6, 7))], *_pool("max_pool2d", kernel_size=(2, 3), stride=(1, 2)))
C("max_pool2d[overlap]", [F((1, 1, 5, 5))], *_pool("max_pool2d", kernel_size=3, stride=1))
C("max_pool2d[f32]", [F((2, 3, 6, 6))], *_pool("max_pool2d", kernel_size=2), **F32)
C("avg_pool2d", [F((2, 3, 6, 6))], *_pool("avg_pool2d", kernel_size=2))
C("avg_pool2d[k3s2p1]", [F((1, 2, 7, 7))], *_pool("avg_pool2d", kernel_size=3, stride=2, padding=1))
C("avg_pool2d[exclude_pad]", [F((1, 2, 7, 7))], *_pool("avg_pool2d", kernel_size=3, stride=2, padding=1,
                                                       count_include_pad=False))
C("avg_pool2d[ceil_mode]", [F((1, 2, 5, 5))], *_pool("avg_pool2d", kernel_size=2, stride=2, ceil_mode=True))
C("avg_pool2d[ceil_mode_pad]", [F((1, 2, 6, 6))], *_pool("avg_pool2d", kernel_size=3, stride=2, padding=1,
                                                          ceil_mode=True))
C("avg_pool2d[ceil_mode_exclude_pad]", [F((1, 2, 6, 6))],
  *_pool("avg_pool2d", kernel_size=3, stride=2, padding=1, ceil_mode=True, count_include_pad=False))
C("avg_pool2d[rect]", [F((1, 2, 6, 7))], *_pool("avg_pool2d", kernel_size=(3, 2), stride=(2, 3)))
C("avg_pool2d[f32]", [F((2, 3, 6, 6))], *_pool("avg_pool2d", kernel_size=2), **F32)
C("adaptive_avg_pool2d", [F((2, 3, 5, 7))], *_pool("adaptive_avg_pool2d", output_size=(2, 3)))
C("adaptive_avg_pool2d[global]", [F((2, 3, 4, 5))], *_pool("adaptive_avg_pool2d", output_size=1))
C("adaptive_avg_pool2d[upsample]", [F((1, 2, 3, 3))], *_pool("adaptive_avg_pool2d", output_size=(4, 5)))
C("adaptive_avg_pool2d[divisible]", [F((1, 2, 6, 6))], *_pool("adaptive_avg_pool2d", output_size=3))


def _bn(training, momentum=0.1, eps=1e-5, affine=True):
    if affine:
        def tfn(t, x, rm, rv, w, b):
            y = nnf(t).batch_norm(x, rm, rv, w, b, training=training, momentum=momentum, eps=eps)
            return y, rm, rv

        def gfn(g, x, rm, rv, w, b):
            y = g.batch_norm(x, rm, rv, w, b, training=training, momentum=momentum, eps=eps)
            return y, rm, rv
    else:
        def tfn(t, x, rm, rv):
            y = nnf(t).batch_norm(x, rm, rv, None, None, training=training, momentum=momentum, eps=eps)
            return y, rm, rv

        def gfn(g, x, rm, rv):
            y = g.batch_norm(x, rm, rv, None, None, training=training, momentum=momentum, eps=eps)
            return y, rm, rv
    return tfn, gfn


_RM3, _RV3 = F((3,), -0.5, 0.5, diff=False), P((3,), diff=False)
C("batch_norm[train_4d]", [F((4, 3, 2, 2)), _RM3, _RV3, P((3,)), F((3,))], *_bn(True),
  note="outputs: y, updated running_mean, updated running_var")
C("batch_norm[eval_4d]", [F((4, 3, 2, 2)), _RM3, _RV3, P((3,)), F((3,))], *_bn(False))
C("batch_norm[train_2d]", [F((5, 3)), _RM3, _RV3, P((3,)), F((3,))], *_bn(True, momentum=0.3, eps=1e-3))
C("batch_norm[eval_2d]", [F((5, 3)), _RM3, _RV3, P((3,)), F((3,))], *_bn(False, eps=1e-3))
C("batch_norm[train_3d_noaffine]", [F((2, 3, 4)), _RM3, _RV3], *_bn(True, affine=False))
C("batch_norm[train_f32]", [F((4, 3, 2, 2)), _RM3, _RV3, P((3,)), F((3,))], *_bn(True), **F32)
C("batch_norm[train_no_running]", [F((4, 3, 3)), P((3,)), F((3,))],
  lambda t, x, w, b: nnf(t).batch_norm(x, None, None, w, b, training=True),
  lambda g, x, w, b: g.batch_norm(x, None, None, w, b, training=True))


def _ln(shape, affine=True, eps=1e-5):
    if affine:
        return ((lambda t, x, w, b: nnf(t).layer_norm(x, shape, w, b, eps)),
                (lambda g, x, w, b: g.layer_norm(x, shape, w, b, eps)))
    return (lambda t, x: nnf(t).layer_norm(x, shape, eps=eps)), (lambda g, x: g.layer_norm(x, shape, eps=eps))


C("layer_norm", [F(S3), P((4,)), F((4,))], *_ln((4,)))
C("layer_norm[last2]", [F(S3), P(S), F(S)], *_ln((3, 4)))
C("layer_norm[noaffine_eps]", [F(S3)], *_ln((4,), affine=False, eps=1e-3))
C("layer_norm[f32]", [F((4, 6)), P((6,)), F((6,))], *_ln((6,)), **F32)
C("layer_norm[noncontig]", [F((5, 2), layout="T"), P((2,)), F((2,))], *_ln((2,)))


def _gn(groups, affine=True, eps=1e-5):
    if affine:
        return ((lambda t, x, w, b: nnf(t).group_norm(x, groups, w, b, eps)),
                (lambda g, x, w, b: g.group_norm(x, groups, w, b, eps)))
    return (lambda t, x: nnf(t).group_norm(x, groups, eps=eps)), (lambda g, x: g.group_norm(x, groups, eps=eps))


C("group_norm", [F((2, 6, 3, 3)), P((6,)), F((6,))], *_gn(3))
C("group_norm[one_group]", [F((2, 4, 3)), P((4,)), F((4,))], *_gn(1))
C("group_norm[per_channel]", [F((2, 4, 5)), P((4,)), F((4,))], *_gn(4))
C("group_norm[noaffine]", [F((3, 6, 2, 2))], *_gn(2, affine=False, eps=1e-3))
C("group_norm[f32]", [F((2, 6, 3, 3)), P((6,)), F((6,))], *_gn(3), **F32)

C("embedding", [I((2, 3), 0, 5), F((5, 4))], lambda t, i, w: nnf(t).embedding(i, w),
  lambda g, i, w: g.embedding(i, w))
C("embedding[padding_idx]", [A(((0, 2, 0), (4, 1, 3))), F((5, 4))], lambda t, i, w: nnf(t).embedding(i, w, padding_idx=0),
  lambda g, i, w: g.embedding(i, w, padding_idx=0), note="no gradient flows to the padding row")
C("embedding[dup_1d]", [A((1, 1, 3, 1)), F((4, 3))], lambda t, i, w: nnf(t).embedding(i, w),
  lambda g, i, w: g.embedding(i, w))


def _interp(**kw):
    return (lambda t, x: nnf(t).interpolate(x, **kw)), (lambda g, x: g.interpolate(x, **kw))


C("interpolate[nearest_size]", [F((1, 2, 3, 4))], *_interp(size=(5, 7), mode="nearest"))
C("interpolate[nearest_scale]", [F((1, 2, 3, 4))], *_interp(scale_factor=2, mode="nearest"))
C("interpolate[nearest_down]", [F((1, 1, 5, 7))], *_interp(size=(2, 3), mode="nearest"))
C("interpolate[bilinear]", [F((1, 2, 3, 4))], *_interp(size=(5, 6), mode="bilinear", align_corners=False))
C("interpolate[bilinear_align]", [F((1, 2, 3, 4))], *_interp(size=(5, 6), mode="bilinear", align_corners=True))
C("interpolate[bilinear_scale2]", [F((2, 1, 3, 3))], *_interp(scale_factor=2, mode="bilinear", align_corners=False))
C("interpolate[bilinear_scale2_align]", [F((2, 1, 3, 3))],
  *_interp(scale_factor=2, mode="bilinear", align_corners=True))
C("interpolate[bilinear_scale1.5]", [F((1, 1, 3, 4))], *_interp(scale_factor=1.5, mode="bilinear",
                                                                  align_corners=False))
C("interpolate[bilinear_down]", [F((1, 2, 6, 5))], *_interp(size=(4, 3), mode="bilinear", align_corners=False))
C("interpolate[bilinear_f32]", [F((1, 2, 3, 4))], *_interp(size=(5, 6), mode="bilinear", align_corners=False),
  **F32)
C("interpolate[linear]", [F((1, 2, 5))], *_interp(size=8, mode="linear", align_corners=False))
C("interpolate[linear_align]", [F((1, 2, 5))], *_interp(size=8, mode="linear", align_corners=True))

# ====================================================================================================
# more edge cases: promotion, broadcasting, zeros in products, masked (-inf) inputs, clamps, semantics

NEG_INF = -math.inf
C("add[4d_two_way_bcast]", [F((2, 1, 3, 1)), F((1, 4, 1, 5))], lambda t, a, b: a + b, lambda g, a, b: a + b)
C("mul[f32_scalar]", [F(S)], lambda t, a: a * 2.5, lambda g, a: a * 2.5, **F32, note="a Python float stays weak")
C("add[f32_f64_promote]", [F(S, dtype="float32"), F((4,))], lambda t, a, b: a + b, lambda g, a, b: a + b)
C("where[scalar_branch]", [B(S), F(S)], lambda t, c, x: t.where(c, x, 0.0), lambda g, c, x: g.where(c, x, 0.0))
C("sign[at_zero]", [A((-1.5, 0.0, 2.0), diff=True)], lambda t, x: t.sign(x), lambda g, x: g.sign(x))
C("pow[zero_base]", [A((0.0, 0.0, 1.5, 2.0), diff=True), A((2.0, 3.0, 1.5, 0.5), diff=True)],
  lambda t, a, b: a ** b, lambda g, a, b: a ** b, note="d(a^b)/db at a == 0 is 0")
C("pow[zero_exponent]", [A((0.0, -1.0, 2.0), diff=True)], lambda t, a: a ** 0, lambda g, a: a ** 0)
C("prod[with_zeros]", [A(((1.5, 0.0, 2.0, -1.0), (0.0, 3.0, 0.0, 2.0), (1.0, 2.0, -0.5, 3.0)), diff=True)],
  lambda t, x: t.prod(x, dim=1), lambda g, x: g.prod(x, axis=1),
  note="one zero: the gradient there is the product of the others; two zeros: all zero")
C("prod[all_with_zero]", [A(((1.5, 0.0), (2.0, -1.0)), diff=True)], lambda t, x: t.prod(x), lambda g, x: g.prod(x))
C("cumprod[with_zeros]", [A(((1.5, 0.0, 2.0, -1.0), (2.0, 3.0, 0.0, 2.0), (0.5, 2.0, -0.5, 0.0)), diff=True)],
  lambda t, x: t.cumprod(x, dim=1), lambda g, x: g.cumprod(x, axis=1))
C("norm[zero_vector]", [A(((0.0, 0.0, 0.0), (3.0, -4.0, 0.0)), diff=True)],
  lambda t, x: t.linalg.vector_norm(x, dim=1), lambda g, x: g.norm(x, axis=1), note="subgradient 0 at 0")
C("norm[neg_inf]", [F(S, kinks=(0,))], lambda t, x: t.linalg.vector_norm(x, ord=-INF, dim=1),
  lambda g, x: g.norm(x, ord=-INF, axis=1))
C("norm[p3]", [F(S, kinks=(0,))], lambda t, x: t.linalg.vector_norm(x, ord=3, dim=-1),
  lambda g, x: g.norm(x, ord=3, axis=-1))
C("var[ddof2]", [F((3, 6))], lambda t, x: t.var(x, dim=1, correction=2), lambda g, x: g.var(x, axis=1, ddof=2))
C("var[zero_size]", [F((0, 3))], lambda t, x: t.var(x, dim=1, correction=0), lambda g, x: g.var(x, axis=1))
C("sum[bool]", [B(S)], lambda t, x: t.sum(x, dim=1), lambda g, x: g.sum(x, axis=1))
C("argmax[zero_size]", [F((0, 3))], lambda t, x: t.argmax(x, dim=1), lambda g, x: g.argmax(x, axis=1))
C("any[float]", [A(((0.0, 0.0), (0.0, 2.5)))], lambda t, x: t.any(x, dim=1), lambda g, x: g.any(x, axis=1))
C("softmax[masked]", [A(((1.0, NEG_INF, 0.5, -2.0), (NEG_INF, 0.3, NEG_INF, 1.2)), diff=True)],
  lambda t, x: t.softmax(x, dim=-1), lambda g, x: g.softmax(x, axis=-1), nonfinite=True,
  note="-inf entries get probability 0 and gradient 0")
C("log_softmax[masked]", [A(((1.0, NEG_INF, 0.5, -2.0), (NEG_INF, 0.3, NEG_INF, 1.2)), diff=True)],
  lambda t, x: t.log_softmax(x, dim=-1), lambda g, x: g.log_softmax(x, axis=-1), nonfinite=True)
C("logsumexp[masked]", [A(((1.0, NEG_INF, 0.5), (NEG_INF, 0.3, NEG_INF)), diff=True)],
  lambda t, x: t.logsumexp(x, dim=-1), lambda g, x: g.logsumexp(x, axis=-1), nonfinite=True)
C("getitem[neg_list]", [F(S)], lambda t, x: x[[-1, 0, -1]], lambda g, x: x[[-1, 0, -1]])
C("getitem[empty_mask]", [F(S)], lambda t, x: x[x > 100.0], lambda g, x: x[x > 100.0])
C("getitem[row_mask]", [F((4, 3)), A((True, False, True, True))], lambda t, x, m: x[m], lambda g, x, m: x[m])
C("take[neg]", [F(S), A((-1, 0, -12, 5))], lambda t, x, i: t.take(x, i), lambda g, x, i: g.take(x, i))
C("take_along_axis[bcast_index]", [F((3, 5)), I((1, 2), 0, 5)], lambda t, x, i: t.take_along_dim(x, i, dim=1),
  lambda g, x, i: g.take_along_axis(x, i, axis=1))
C("moveaxis[multi]", [F(S3)], lambda t, x: t.movedim(x, (0, 1), (-1, 0)), lambda g, x: g.moveaxis(x, (0, 1), (-1, 0)))
C("repeat[per_element]", [F((3, 2))], lambda t, x: t.repeat_interleave(x, t.tensor([1, 0, 2]), dim=0),
  lambda g, x: g.repeat(x, [1, 0, 2], axis=0))
C("repeat[flat]", [F((2, 2))], lambda t, x: t.repeat_interleave(x, 2), lambda g, x: g.repeat(x, 2))
C("tile[short_reps]", [F((2, 3))], lambda t, x: t.tile(x, (2,)), lambda g, x: g.tile(x, (2,)))
C("stack[zero_size]", [F((0, 3)), F((0, 3))], lambda t, a, b: t.stack([a, b]), lambda g, a, b: g.stack([a, b]))
C("split[zero_piece]", [F((2, 4))], lambda t, x: t.split(x, [0, 3, 1], dim=1), lambda g, x: g.split(x, [0, 3], axis=1))
C("diag[matrix_neg_k]", [F((3, 4))], lambda t, x: t.diag(x, -1), lambda g, x: g.diag(x, -1))
C("triu[batched_neg_k]", [F((2, 4, 3))], lambda t, x: t.triu(x, -1), lambda g, x: g.triu(x, -1))
C("pad[reflect]", [F((1, 2, 3, 4))], lambda t, x: nnf(t).pad(x, (1, 2, 2, 1), mode="reflect"),
  lambda g, x: g.pad(x, ((0, 0), (0, 0), (2, 1), (1, 2)), mode="reflect"))
C("pad[replicate]", [F((1, 2, 3, 4))], lambda t, x: nnf(t).pad(x, (2, 0, 1, 3), mode="replicate"),
  lambda g, x: g.pad(x, ((0, 0), (0, 0), (1, 3), (2, 0)), mode="edge"))
C("pad[circular]", [F((1, 2, 3, 4))], lambda t, x: nnf(t).pad(x, (1, 2, 2, 1), mode="circular"),
  lambda g, x: g.pad(x, ((0, 0), (0, 0), (2, 1), (1, 2)), mode="wrap"))
C("matmul[vec_batched]", [F((4,)), F((2, 4, 3))], lambda t, a, b: a @ b, lambda g, a, b: a @ b)
C("solve[broadcast_a]", [F((3, 3)), F((2, 3, 2))], lambda t, a, b: t.linalg.solve(a, b),
  lambda g, a, b: g.solve(a, b), prepare=well_conditioned)
C("cross_entropy[prob_target]", [F((5, 4)), F((5, 4), 0.1, 1.0, diff=False)], *_ce(),
  prepare=lambda rng, xs: [xs[0], xs[1] / xs[1].sum(axis=1, keepdims=True)])
C("cross_entropy[prob_target_weight_smoothing]", [F((5, 4)), F((5, 4), 0.1, 1.0, diff=False), _W4],
  *_cew(label_smoothing=0.2), prepare=lambda rng, xs: [xs[0], xs[1] / xs[1].sum(axis=1, keepdims=True), xs[2]])
C("cross_entropy[prob_target_none]", [F((5, 4)), F((5, 4), 0.1, 1.0, diff=True)], *_ce(reduction="none"),
  prepare=lambda rng, xs: [xs[0], xs[1] / xs[1].sum(axis=1, keepdims=True)])
C("cross_entropy[spatial_weight_ignore]", [F((2, 3, 2, 2)), A((((0, 2), (-100, 1)), ((2, 2), (1, -100)))),
                                            A((1.0, 0.5, 2.0))], *_cew())
C("cross_entropy[unbatched]", [F((4,)), A(2)], *_ce())
C("nll_loss[spatial]", [F((2, 3, 2, 2), -3, 0), I((2, 2, 2), 0, 3)], *_nll())
C("binary_cross_entropy[exact_targets]", [A((0.0, 1.0, 0.3, 1.0, 0.0)), A((0.0, 1.0, 1.0, 1.0, 0.0))],
  *_bce(reduction="none"), note="inputs exactly 0/1 with matching targets: loss 0 (forward only: at the "
  "boundary PyTorch's gradient formula (x - y) / max(x (1 - x), 1e-12) gives 0, not the one-sided derivative)")
C("binary_cross_entropy[log_clamp]", [A((0.0, 1.0, 0.3, 1e-60)), A((1.0, 0.0, 1.0, 1.0))], *_bce(reduction="none"),
  note="PyTorch clamps the logs at -100")
C("interpolate[nearest_scale1.7]", [F((1, 1, 5, 5))], *_interp(scale_factor=1.7, mode="nearest"),
  note="PyTorch maps with 1/scale_factor, not in/out")
C("interpolate[nearest_1d]", [F((2, 3, 4))], *_interp(size=7, mode="nearest"))
C("interpolate[nearest_recompute]", [F((1, 1, 5, 5))],
  *_interp(scale_factor=1.7, mode="nearest", recompute_scale_factor=True))
C("conv2d[valid]", [F((1, 2, 5, 6)), F((3, 2, 3, 2)), F((3,))], *_conv("conv2d", padding="valid"))
C("conv1d[same_even_dilated]", [F((2, 2, 9)), F((3, 2, 4)), F((3,))], *_conv("conv1d", padding="same", dilation=2))
C("conv1d[f32_nobias_stride]", [F((2, 3, 10)), F((4, 3, 3))], *_conv_nb("conv1d", stride=3, padding=2), **F32)
C("conv_transpose2d[stride3_outpad2]", [F((1, 2, 3, 3)), F((2, 2, 3, 3)), F((2,))],
  *_conv("conv_transpose2d", stride=3, padding=2, output_padding=2))
C("conv_transpose2d[f32]", [F((2, 3, 4, 4)), F((3, 2, 3, 3)), F((2,))], *_conv("conv_transpose2d", stride=2), **F32)
C("max_pool2d[negative_pad]", [F((1, 2, 5, 5), -3, -1)], *_pool("max_pool2d", kernel_size=3, stride=2, padding=1),
  note="padding acts as -inf, not 0")
C("max_pool2d[ties]", [A(((((1.0, 1.0, 2.0, 2.0), (1.0, 1.0, 2.0, 2.0), (0.0, 3.0, 3.0, 0.5),
                            (3.0, 0.0, 3.0, 0.5)),),), diff=True)],
  *_pool("max_pool2d", kernel_size=2, stride=2), note="the gradient goes to the first maximum of a window")
C("max_pool2d[overlap_ties]", [A(((((1.0, 2.0, 2.0), (0.0, 2.0, 1.0), (2.0, 0.0, 2.0)),),), diff=True)],
  *_pool("max_pool2d", kernel_size=2, stride=1))
C("avg_pool2d[pad_no_ceil]", [F((1, 1, 5, 5))], *_pool("avg_pool2d", kernel_size=2, stride=2, padding=1))
C("adaptive_avg_pool2d[3d_input]", [F((3, 5, 4))], *_pool("adaptive_avg_pool2d", output_size=(3, 2)))
C("layer_norm[weight_only]", [F(S3), P((4,))], lambda t, x, w: nnf(t).layer_norm(x, (4,), w),
  lambda g, x, w: g.layer_norm(x, (4,), w))
C("layer_norm[int_shape]", [F(S3), P((4,)), F((4,))], lambda t, x, w, b: nnf(t).layer_norm(x, (4,), w, b),
  lambda g, x, w, b: g.layer_norm(x, 4, w, b))
C("group_norm[zero_size_batch]", [F((0, 4, 3)), P((4,)), F((4,))], *_gn(2))
C("batch_norm[eval_noaffine_3d]", [F((2, 3, 4)), _RM3, _RV3], *_bn(False, affine=False))
C("embedding[f32]", [I((4,), 0, 6), F((6, 3))], lambda t, i, w: nnf(t).embedding(i, w),
  lambda g, i, w: g.embedding(i, w), **F32)
C("one_hot[infer_classes]", [A((0, 3, 1))], lambda t, i: nnf(t).one_hot(i), lambda g, i: g.one_hot(i))
C("mse_loss[noncontig]", [F(S, layout="T"), F(S, layout="step")], *_loss("mse_loss"))
C("huber_loss[f32]", [F(S, -3, 3), F(S, -3, 3)], *_loss("huber_loss"), prepare=diff_away(1.0), **F32)
C("l1_loss[f32]", [F(S), F(S)], *_loss("l1_loss"), prepare=diff_away(0.0), **F32)

# activation conventions at their kinks (PyTorch's choices)
_K0 = A((-1.0, 0.0, 1.0, -0.5, 2.0), diff=True)
C("hardtanh[at_bounds]", [_K0], lambda t, x: nnf(t).hardtanh(x), lambda g, x: g.hardtanh(x),
  note="PyTorch's hardtanh passes no gradient at x == min_val or max_val (unlike clamp)")
C("elu[at_zero]", [_K0], lambda t, x: nnf(t).elu(x, alpha=1.3), lambda g, x: g.elu(x, alpha=1.3),
  note="at 0 the negative branch: alpha")
C("selu[at_zero]", [_K0], lambda t, x: nnf(t).selu(x), lambda g, x: g.selu(x))
C("leaky_relu[at_zero]", [_K0], lambda t, x: nnf(t).leaky_relu(x, 0.1), lambda g, x: g.leaky_relu(x, 0.1))
C("softplus[at_zero]", [A((0.0, -1.0, 1.0, 0.0), diff=True)], lambda t, x: nnf(t).softplus(x),
  lambda g, x: g.softplus(x), note="smooth at 0: gradient sigmoid(0) = 0.5")
C("softplus[at_threshold]", [A((-1.0, 0.25, 1.0, 0.5), diff=True)],
  lambda t, x: nnf(t).softplus(x, beta=2.0, threshold=1.0), lambda g, x: g.softplus(x, beta=2.0, threshold=1.0),
  note="beta * x == threshold takes the smooth branch")
C("clip[tensor_bounds]", [F((3, 4), -3, 3), F((3, 1), -2, -0.5), F((4,), 0.5, 2)],
  lambda t, x, lo, hi: t.clamp(x, lo, hi), lambda g, x, lo, hi: g.clip(x, lo, hi),
  prepare=lambda rng, xs: [np.where(np.minimum(np.abs(xs[0] - xs[1]), np.abs(xs[0] - xs[2])) < 0.05,
                                    xs[0] + 0.2, xs[0]), xs[1], xs[2]])
C("clip[tensor_bounds_ties]", [A((1.0, 2.0, 3.0, 4.0, 5.0), diff=True), A((1.5, 2.0, 0.0, 4.5, 1.0), diff=True),
                               A((3.0, 3.0, 2.5, 5.0, 5.0), diff=True)],
  lambda t, x, lo, hi: t.clamp(x, lo, hi), lambda g, x, lo, hi: g.clip(x, lo, hi),
  note="x == bound: the gradient goes to x")

# pooling windows that would start in the padding (dropped by ceil_mode's rule)
C("max_pool2d[ceil_mode_drop_last]", [F((1, 2, 5, 5))],
  *_pool("max_pool2d", kernel_size=2, stride=2, padding=1, ceil_mode=True))
C("avg_pool2d[ceil_mode_drop_last]", [F((1, 2, 5, 5))],
  *_pool("avg_pool2d", kernel_size=2, stride=2, padding=1, ceil_mode=True))
C("avg_pool2d[ceil_mode_partial_window]", [F((1, 1, 6, 6))],
  *_pool("avg_pool2d", kernel_size=3, stride=2, ceil_mode=True),
  note="the last window hangs over the edge: divided by the part inside")
C("embedding[neg_padding_idx]", [A(((0, 4, 2), (4, 1, 4))), F((5, 3))],
  lambda t, i, w: nnf(t).embedding(i, w, padding_idx=-1), lambda g, i, w: g.embedding(i, w, padding_idx=-1))
C("cross_entropy[ignore_smoothing_sum]", [F((6, 4)), _T6, _W4], *_cew(label_smoothing=0.3, reduction="sum"))
C("binary_cross_entropy_with_logits[pos_weight_none]", [F(S, -4, 4), F(S, 0, 1, diff=False), P((4,), diff=False)],
  lambda t, x, y, p: nnf(t).binary_cross_entropy_with_logits(x, y, pos_weight=p, reduction="none"),
  lambda g, x, y, p: g.binary_cross_entropy_with_logits(x, y, pos_weight=p, reduction="none"))
C("softmax[size1_axis]", [F((3, 1))], lambda t, x: t.softmax(x, dim=1), lambda g, x: g.softmax(x, axis=1))
C("one_hot[zero_size]", [A(np.zeros((0,), np.int64))], lambda t, i: nnf(t).one_hot(i, 3), lambda g, i: g.one_hot(i, 3))
C("gather[zero_size_index]", [F(S), A(np.zeros((3, 0), np.int64))], lambda t, x, i: t.gather(x, 1, i),
  lambda g, x, i: g.gather(x, 1, i))
C("matmul[zero_size_vec]", [F((0,)), F((0,))], lambda t, a, b: a @ b, lambda g, a, b: a @ b)
C("mean[all_keepdims]", [F(S3)], lambda t, x: t.mean(x, dim=(0, 1, 2), keepdim=True),
  lambda g, x: g.mean(x, axis=None, keepdims=True))
C("where[bcast_cond]", [B((3, 1)), F(S), F(S)], lambda t, c, a, b: t.where(c, a, b), lambda g, c, a, b: g.where(c, a, b))
C("leaky_relu[f32]", [F(S, kinks=(0,))], lambda t, x: nnf(t).leaky_relu(x, 0.05), lambda g, x: g.leaky_relu(x, 0.05),
  **F32)
C("sigmoid[f32_saturated]", [F(S, -30, 30)], lambda t, x: t.sigmoid(x), lambda g, x: g.sigmoid(x), **F32)
C("tanh[large]", [F(S, -30, 30)], lambda t, x: t.tanh(x), lambda g, x: g.tanh(x))

# more subgradient conventions and empty batches
C("norm[ord1_at_zero]", [A(((0.0, 1.5, -2.0), (0.5, 0.0, 0.0)), diff=True)],
  lambda t, x: t.linalg.vector_norm(x, ord=1, dim=1), lambda g, x: g.norm(x, ord=1, axis=1))
C("norm[inf_ties]", [A(((2.0, -2.0, 1.0), (0.5, 3.0, -3.0)), diff=True)],
  lambda t, x: t.linalg.vector_norm(x, ord=INF, dim=1), lambda g, x: g.norm(x, ord=INF, axis=1),
  note="the gradient is spread evenly over tied maxima of |x|")
C("pow[neg_base_int_exponent]", [F(S, -2, -0.5), A((2.0, 3.0, 1.0, 4.0))], lambda t, a, b: a ** b,
  lambda g, a, b: a ** b)
C("cross_entropy[empty_batch_sum]", [F((0, 4)), I((0,), 0, 4)], *_ce(reduction="sum"))
C("mse_loss[empty_sum]", [F((0, 3)), F((0, 3))], *_loss("mse_loss", reduction="sum"))
C("layer_norm[empty_batch]", [F((0, 4)), P((4,)), F((4,))], *_ln((4,)))

# ====================================================================================================

#: Every op that must have at least one case (the graphgrad ops PyTorch also has).
# ====================================================================================================
# fused transformer ops: scaled dot-product attention (one op), gelu/erf over wide float32 ranges (the
# rational erf kernel), layer norm on transformer-like shapes


def _sdpa(**kw):
    return (lambda t, q, k, v, *m: nnf(t).scaled_dot_product_attention(q, k, v, *m, **kw),
            lambda g, q, k, v, *m: g.scaled_dot_product_attention(q, k, v, *m, **kw))


def _keep_first_key(rng, xs):
    """A boolean attention mask where every query keeps key 0 (no query sees nothing)."""
    xs[3][..., 0] = True
    return xs


C("scaled_dot_product_attention", [F((2, 3, 4, 5)), F((2, 3, 6, 5)), F((2, 3, 6, 7))], *_sdpa())
C("scaled_dot_product_attention[causal_f32]", [F((2, 4, 8, 8)), F((2, 4, 8, 8)), F((2, 4, 8, 8))],
  *_sdpa(is_causal=True), **F32)
C("scaled_dot_product_attention[scale_unbatched]", [F((5, 4)), F((6, 4)), F((6, 3))], *_sdpa(scale=0.3))
C("scaled_dot_product_attention[bool_mask]", [F((2, 4, 5)), F((2, 6, 5)), F((2, 6, 3)), B((4, 6), p=0.6)],
  *_sdpa(), prepare=_keep_first_key)
C("scaled_dot_product_attention[float_mask_f32]", [F((2, 2, 4, 5)), F((2, 2, 6, 5)), F((2, 2, 6, 5)),
                                                   F((2, 1, 4, 6), diff=False)], *_sdpa(), **F32)
C("gelu[f32_wide]", [F((64, 32), -7, 7)], lambda t, x: nnf(t).gelu(x), lambda g, x: g.gelu(x), **F32)
C("gelu[tanh_f32_wide]", [F((64, 32), -7, 7)], lambda t, x: nnf(t).gelu(x, approximate="tanh"),
  lambda g, x: g.gelu(x, approximate="tanh"), **F32)
C("erf[f32_wide]", [F((64, 32), -5, 5)], lambda t, x: t.erf(x), lambda g, x: g.erf(x), **F32)
C("layer_norm[f32_transformer]", [F((4, 16, 32), -3, 3), P((32,)), F((32,))], *_ln((32,)), **F32)

# More families live in their own files, tests/oracle/cases_<family>.py: each imports C and the input
# makers from here and appends its cases (loaded in name order, so the corpus does not depend on it).
def _load_families() -> None:
    import glob
    import importlib
    import os

    here = os.path.dirname(os.path.abspath(__file__))
    for path in sorted(glob.glob(os.path.join(here, "cases_*.py"))):
        importlib.import_module(f"tests.oracle.{os.path.basename(path)[:-3]}")


_load_families()

REQUIRED_OPS = """
add sub mul div floor_divide remainder pow neg abs sign exp expm1 log log1p log2 sqrt rsqrt square reciprocal sin
cos tan tanh sinh cosh arcsin arccos arctan arctan2 sigmoid relu leaky_relu elu selu gelu silu softplus mish
hardtanh clip maximum minimum where floor ceil round erf
sum mean prod max min argmax argmin var std logsumexp norm all any cumsum cumprod
reshape flatten squeeze expand_dims unsqueeze transpose permute swapaxes moveaxis broadcast_to concatenate stack
split chunk tile repeat pad flip roll take take_along_axis gather scatter_add one_hot tril triu diag getitem
matmul dot outer einsum inv det solve
softmax log_softmax cross_entropy nll_loss binary_cross_entropy binary_cross_entropy_with_logits mse_loss
huber_loss l1_loss conv1d conv2d conv_transpose2d max_pool2d avg_pool2d adaptive_avg_pool2d batch_norm layer_norm
group_norm embedding interpolate
""".split()

BY_NAME = {c.name: c for c in CASES}
assert len(BY_NAME) == len(CASES), "duplicate case names"
