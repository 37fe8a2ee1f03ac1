"""THE op table: one ``OpSpec`` row per public op (or per interesting variant of one).

Each row drives ``test_ops.py``: forward against a NumPy float64 reference, ``check_grad`` (second
order where it applies), the shape/dtype rule (``infer``, run on symbolic inputs) against the actual
output, float32/float64 dtype behaviour, and graph mode: the row built on placeholders in a
``gg.Graph`` and run by a ``gg.Session`` (forward and ``gg.gradients``) against eager mode, once with
the placeholders' static shapes and once with their first dimension unknown (``None``, see
``OpSpec.batch``). Rows live in ``rows_<family>.py``; this module collects
them and defines the input makers.
"""
from __future__ import annotations

import importlib
import zlib
from dataclasses import dataclass, field
from typing import Any, Callable, Optional, Sequence

import numpy as np


@dataclass(frozen=True)
class F:
    """A float input of ``shape`` drawn uniformly from ``[lo, hi)``; differentiated by default.
    ``away`` keeps values at least that far from each point in ``kinks`` (non-differentiable spots)."""

    shape: tuple
    lo: float = -2.0
    hi: float = 2.0
    diff: bool = True
    kinks: tuple = ()
    away: float = 0.05

    def make(self, rng, dtype):
        x = rng.uniform(self.lo, self.hi, self.shape)
        for k in self.kinks:
            close = np.abs(x - k) < self.away
            x = np.where(close, k + np.sign(x - k + 1e-12) * self.away * 2, x)
        return x.astype(dtype)


@dataclass(frozen=True)
class I:
    """An integer (int64) input of ``shape`` in ``[lo, hi)``; never differentiated."""

    shape: tuple
    lo: int = 0
    hi: int = 3
    dtype: str = "int64"

    def make(self, rng, dtype):
        return rng.integers(self.lo, self.hi, self.shape).astype(self.dtype)


@dataclass(frozen=True)
class B:
    """A boolean input of ``shape``."""

    shape: tuple
    p: float = 0.5

    def make(self, rng, dtype):
        return rng.random(self.shape) < self.p


@dataclass(frozen=True)
class A:
    """A fixed array input (used as given; float ones are cast to the row's dtype and differentiated
    when ``diff``)."""

    value: Any
    diff: bool = False

    def make(self, rng, dtype):
        v = np.asarray(self.value)
        return v.astype(dtype) if v.dtype.kind == "f" else v


def P(shape, lo=0.5, hi=2.0) -> F:
    """A positive float input."""
    return F(shape, lo, hi)


@dataclass
class OpSpec:
    """One row of the op table.

    Attributes:
        name: row id; the part before ``[`` is the op it covers (``"sum[axis=1]"`` covers ``sum``).
        fn: the graphgrad call, ``fn(*inputs)`` on Tensors (non-input arguments bound in a lambda).
        ref: the NumPy reference on float64 arrays, or ``None`` when ``fn``'s output is checked otherwise.
        inputs: input makers (``F``, ``I``, ``B``, ``A``) or plain Python values (passed as is).
        grad: check gradients; ``order`` 1 or 2.
        dtypes: dtypes to run (float inputs are made in each).
        atol/rtol: forward tolerances in float64; float32 uses ``rtol32``/``atol32``.
        infer: check the shape rule on symbolic inputs.
        grad_tol: (atol, rtol) for check_grad.
        batch: run the unknown-batch-dimension graph test (first dimension of every array input's
            placeholder declared ``None``). ``None`` (default) picks automatically: yes when the row
            has array inputs, all of ndim >= 1 and with the same leading size (a batch dimension
            they share), and ``infer`` is on. Set ``False`` for a row whose leading dimension is not
            a batch dimension (e.g. it is a contraction or a size an argument depends on), with a
            comment saying why; ``True`` forces it.
        batch_error: for a row that cannot work with an unknown first dimension (its output shape or
            its gradient needs that size when the graph is built), the graphgrad error users get; the
            unknown-batch test then checks that building the row (or its gradients) raises it.
        graph_error: likewise for a row that cannot be built on placeholders at all (its output
            shape depends on the input values, e.g. ``one_hot`` without ``num_classes``).
    """

    name: str
    fn: Callable
    ref: Optional[Callable]
    inputs: Sequence[Any]
    grad: bool = True
    order: int = 2
    dtypes: tuple = ("float32", "float64")
    rtol: float = 1e-7
    atol: float = 1e-9
    rtol32: float = 2e-5
    atol32: float = 2e-6
    infer: bool = True
    grad_tol: tuple = (1e-5, 1e-3)
    eps: float = 1e-6
    tags: tuple = field(default_factory=tuple)
    batch: Optional[bool] = None
    batch_error: Optional[type] = None
    graph_error: Optional[type] = None

    @property
    def op(self) -> str:
        return self.name.split("[")[0]

    def make_inputs(self, dtype: str, seed: int = 0) -> list:
        rng = np.random.default_rng(zlib.crc32(self.name.encode()) + seed)
        return [x.make(rng, np.dtype(dtype)) if hasattr(x, "make") else x for x in self.inputs]

    def batched(self) -> bool:
        """Whether the unknown-batch-dimension graph test runs on this row (see ``batch``)."""
        if self.batch is not None:
            return self.batch
        if self.graph_error is not None:
            return False
        shapes = [np.shape(v) for v in self.make_inputs("float64") if isinstance(v, np.ndarray)]
        return bool(shapes) and all(len(s) >= 1 for s in shapes) and len({s[0] for s in shapes}) == 1

    def differentiable(self) -> list:
        return [i for i, x in enumerate(self.inputs) if isinstance(x, (F, A)) and getattr(x, "diff", False)]


ROW_MODULES = ("rows_elementwise", "rows_reduce", "rows_shape", "rows_array", "rows_linalg", "rows_nn", "rows_conv",
               "rows_recurrent", "rows_pointwise", "rows_indexing_more", "rows_math_more", "rows_shape_more",
               "rows_sorting", "rows_spatial", "rows_linalg_more", "rows_activations_losses", "rows_shape_dynamic")


def all_rows() -> list:
    rows = []
    for name in ROW_MODULES:
        try:
            module = importlib.import_module(f"tests.ops.{name}")
        except ModuleNotFoundError as exc:
            if exc.name != f"tests.ops.{name}":
                raise
            continue
        rows.extend(module.ROWS)
    return rows


ROWS = all_rows()

#: Every op the core issue names; each must have at least one row.
REQUIRED_OPS = """
add sub mul div floor_divide remainder pow neg abs sign exp expm1 log log1p log2 sqrt rsqrt square sin cos tan
tanh sinh cosh arcsin arccos arctan arctan2 sigmoid relu leaky_relu elu selu gelu silu softplus mish hardtanh clip
maximum minimum where reciprocal floor ceil round isnan isinf isfinite logical_and logical_or logical_not equal
not_equal less less_equal greater greater_equal
sum mean prod max min argmax argmin var std logsumexp norm all any cumsum cumprod
reshape flatten squeeze expand_dims transpose permute swapaxes moveaxis broadcast_to concatenate stack split chunk
tile repeat pad flip roll take take_along_axis scatter_add one_hot tril triu diag getitem
matmul dot outer einsum inv det solve
softmax log_softmax cross_entropy nll_loss binary_cross_entropy binary_cross_entropy_with_logits mse_loss huber_loss
conv1d conv2d conv_transpose2d max_pool2d avg_pool2d adaptive_avg_pool2d batch_norm layer_norm group_norm dropout
embedding interpolate
""".split()
