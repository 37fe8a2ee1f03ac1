"""Op-table rows for the composed elementwise functions and activations (graphgrad/ops/pointwise.py)."""
from __future__ import annotations

import numpy as np

import graphgrad as gg
from tests.ops.op_table import F, OpSpec, P

S = (3, 4)
BC = ((3, 1), (1, 4))


def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


def _logsigmoid(x):
    return -np.logaddexp(0.0, -x)


def _hardsigmoid(x):
    return np.clip(x / 6 + 0.5, 0.0, 1.0)


def _celu(x, alpha):
    return np.maximum(x, 0) + np.minimum(alpha * (np.exp(x / alpha) - 1), 0)


def _softmax(x, axis):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


ROWS = [
    OpSpec("arcsinh", gg.arcsinh, np.arcsinh, [F(S, -3, 3)]),
    OpSpec("arccosh", gg.arccosh, np.arccosh, [F(S, 1.2, 4)]),
    OpSpec("arctanh", gg.arctanh, np.arctanh, [F(S, -0.9, 0.9)]),
    OpSpec("trunc", gg.trunc, np.trunc, [F(S, -3, 3, kinks=(-2.0, -1.0, 0.0, 1.0, 2.0))]),
    OpSpec("exp2", gg.exp2, np.exp2, [F(S)]),
    OpSpec("log10", gg.log10, np.log10, [P(S)]),
    OpSpec("logaddexp", gg.logaddexp, np.logaddexp, [F(BC[0], -3, 3), F(BC[1], -3, 3)]),
    OpSpec("logaddexp[large]", gg.logaddexp, np.logaddexp, [F(S, 500, 600), F(S, 500, 600)], grad=False),
    OpSpec("logaddexp2", gg.logaddexp2, np.logaddexp2, [F(S, -3, 3), F(S, -3, 3)]),
    OpSpec("lerp", gg.lerp, lambda a, b, w: a + w * (b - a), [F(S), F(S), F(S, 0, 1)]),
    OpSpec("lerp[scalar_weight]", lambda a, b: gg.lerp(a, b, 0.25), lambda a, b: a + 0.25 * (b - a), [F(S), F(BC[1])]),
    OpSpec("softsign", gg.softsign, lambda x: x / (1 + np.abs(x)), [F(S, kinks=(0.0,))]),
    OpSpec("logsigmoid", gg.logsigmoid, _logsigmoid, [F(S, -30, 30)]),
    OpSpec("hardsigmoid", gg.hardsigmoid, _hardsigmoid, [F(S, -5, 5, kinks=(-3.0, 3.0))]),
    OpSpec("hardswish", gg.hardswish, lambda x: x * _hardsigmoid(x), [F(S, -5, 5, kinks=(-3.0, 3.0))]),
    OpSpec("softmin", lambda x: gg.softmin(x, 1), lambda x: _softmax(-x, 1), [F(S)]),
    OpSpec("celu", lambda x: gg.celu(x, 0.5), lambda x: _celu(x, 0.5), [F(S, kinks=(0.0,))]),
    OpSpec("glu", lambda x: gg.glu(x, -1), lambda x: x[:, :2] * _sigmoid(x[:, 2:]), [F(S)]),
    OpSpec("threshold", lambda x: gg.threshold(x, 0.1, -2.0), lambda x: np.where(x > 0.1, x, -2.0),
           [F(S, kinks=(0.1,))]),
    OpSpec("fmod", gg.fmod, np.fmod, [F(S, -5, 5), F(S, 0.6, 2.0)]),
    OpSpec("fmod[scalar]", lambda a: gg.fmod(a, -1.5), lambda a: np.fmod(a, -1.5), [F(S, -5, 5)]),
    OpSpec("isclose", lambda a, b: gg.isclose(a, a + b * 1e-7), lambda a, b: np.isclose(a, a + b * 1e-7),
           [F(S, diff=False), F(S, diff=False)], grad=False),
    OpSpec("nan_to_num[finite]", gg.nan_to_num, np.nan_to_num, [F(S)]),
    OpSpec("mm", gg.mm, np.matmul, [F((3, 4)), F((4, 2))], batch=False),  # the contraction is no batch dim
    OpSpec("bmm", gg.bmm, np.matmul, [F((2, 3, 4)), F((2, 4, 2))]),
    OpSpec("addmm", lambda c, a, b: gg.addmm(c, a, b, beta=0.5, alpha=2.0), lambda c, a, b: 0.5 * c + 2.0 * (a @ b),
           [F((1, 2)), F((3, 4)), F((4, 2))], batch=False),  # input broadcasts: no shared batch dim
    OpSpec("baddbmm", lambda c, a, b: gg.baddbmm(c, a, b, beta=0.5, alpha=2.0),
           lambda c, a, b: 0.5 * c + 2.0 * (a @ b), [F((2, 3, 2)), F((2, 3, 4)), F((2, 4, 2))]),
    OpSpec("rot90", gg.rot90, lambda x: np.rot90(x, 1, (0, 1)), [F(S)], batch=False),  # dims are swapped
    OpSpec("rot90[k=2]", lambda x: gg.rot90(x, 2, (1, 2)), lambda x: np.rot90(x, 2, (1, 2)), [F((2, 3, 4))]),
    OpSpec("rot90[k=-1]", lambda x: gg.rot90(x, -1, (0, 1)), lambda x: np.rot90(x, -1, (0, 1)), [F(S)], batch=False),
]
