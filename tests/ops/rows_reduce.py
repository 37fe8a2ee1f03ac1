"""Op-table rows for reductions (sum, mean, prod, max/min, arg*, var/std, logsumexp, norm, all/any, scans)."""
from __future__ import annotations

import numpy as np

import graphgrad as gg
from tests.ops.op_table import A, B, F, I, OpSpec

S = (3, 4)
S3 = (2, 3, 4)
WITH_ZEROS = [[1.5, 0.0, -2.0, 0.7], [0.0, 1.2, 0.0, -0.8], [0.9, -1.1, 1.3, 2.0]]
ZEROS_3D = np.array([[[0.0, 1.5], [2.0, -1.0]], [[0.5, 0.0], [0.0, 0.0]]])


def _lse(x, axis=None, keepdims=False):
    m = np.max(x, axis=axis, keepdims=True)
    s = np.log(np.sum(np.exp(x - m), axis=axis, keepdims=True)) + m
    return s if keepdims else np.squeeze(s, axis=axis)


ROWS = [
    # sum
    OpSpec("sum", gg.sum, np.sum, [F(S3)]),
    OpSpec("sum[axis=1]", lambda x: gg.sum(x, axis=1), lambda x: np.sum(x, axis=1), [F(S3)]),
    OpSpec("sum[axes,neg,keepdims]", lambda x: x.sum(axis=(0, -1), keepdims=True),
           lambda x: np.sum(x, axis=(0, -1), keepdims=True), [F(S3)]),
    OpSpec("sum[int]", lambda x: gg.sum(x, axis=0), lambda x: np.sum(x, axis=0), [I(S, -5, 5, "int32")],
           grad=False),
    # mean
    OpSpec("mean", gg.mean, np.mean, [F(S3)]),
    OpSpec("mean[axis=-1,keepdims]", lambda x: gg.mean(x, axis=-1, keepdims=True),
           lambda x: np.mean(x, axis=-1, keepdims=True), [F(S3)]),
    OpSpec("mean[axes]", lambda x: x.mean(axis=(0, 2)), lambda x: np.mean(x, axis=(0, 2)), [F(S3)]),
    OpSpec("mean[int]", lambda x: gg.mean(x, axis=1), lambda x: np.mean(x, axis=1), [I(S, -5, 5)], grad=False),
    # prod
    OpSpec("prod", gg.prod, np.prod, [F(S, 0.5, 1.5)]),
    OpSpec("prod[axis=1]", lambda x: gg.prod(x, axis=1), lambda x: np.prod(x, axis=1), [F(S3)]),
    OpSpec("prod[axes,keepdims]", lambda x: x.prod(axis=(0, 2), keepdims=True),
           lambda x: np.prod(x, axis=(0, 2), keepdims=True), [F(S3)]),
    OpSpec("prod[zeros]", lambda x: gg.prod(x, axis=1), lambda x: np.prod(x, axis=1), [A(WITH_ZEROS, diff=True)]),
    OpSpec("prod[zeros,all]", gg.prod, np.prod, [A(ZEROS_3D[0], diff=True)]),
    OpSpec("prod[zeros,axes]", lambda x: gg.prod(x, axis=(0, 2)), lambda x: np.prod(x, axis=(0, 2)),
           [A(ZEROS_3D, diff=True)]),
    # max / min
    OpSpec("max", gg.max, np.max, [F(S3)]),
    OpSpec("max[axis=1]", lambda x: gg.max(x, axis=1), lambda x: np.max(x, axis=1), [F(S3)]),
    OpSpec("max[axes,keepdims]", lambda x: x.max(axis=(0, -1), keepdims=True),
           lambda x: np.max(x, axis=(0, -1), keepdims=True), [F(S3)]),
    OpSpec("max[method]", lambda x: x.max(), np.max, [F(S)]),
    OpSpec("min", gg.min, np.min, [F(S3)]),
    OpSpec("min[axis=-1]", lambda x: gg.min(x, axis=-1), lambda x: np.min(x, axis=-1), [F(S3)]),
    OpSpec("min[keepdims]", lambda x: x.min(axis=0, keepdims=True), lambda x: np.min(x, axis=0, keepdims=True),
           [F(S)]),
    # argmax / argmin
    OpSpec("argmax", gg.argmax, np.argmax, [F(S3)], grad=False),
    OpSpec("argmax[axis=1]", lambda x: gg.argmax(x, axis=1), lambda x: np.argmax(x, axis=1), [F(S3)], grad=False),
    OpSpec("argmax[keepdims]", lambda x: x.argmax(axis=-1, keepdims=True),
           lambda x: np.argmax(x, axis=-1, keepdims=True), [F(S3)], grad=False),
    OpSpec("argmin", gg.argmin, np.argmin, [F(S3)], grad=False),
    OpSpec("argmin[axis=0]", lambda x: gg.argmin(x, axis=0), lambda x: np.argmin(x, axis=0), [F(S3)], grad=False),
    # var / std
    OpSpec("var", gg.var, np.var, [F(S3)]),
    OpSpec("var[axis=1,ddof=1]", lambda x: gg.var(x, axis=1, ddof=1), lambda x: np.var(x, axis=1, ddof=1), [F(S3)]),
    OpSpec("var[axes,keepdims]", lambda x: x.var(axis=(0, 2), keepdims=True),
           lambda x: np.var(x, axis=(0, 2), keepdims=True), [F(S3)]),
    OpSpec("std", gg.std, np.std, [F(S3)]),
    OpSpec("std[axis=-1,ddof=1]", lambda x: gg.std(x, axis=-1, ddof=1), lambda x: np.std(x, axis=-1, ddof=1),
           [F(S3)]),
    # logsumexp
    OpSpec("logsumexp", gg.logsumexp, _lse, [F(S3)]),
    OpSpec("logsumexp[axis=1]", lambda x: gg.logsumexp(x, axis=1), lambda x: _lse(x, axis=1), [F(S3)]),
    OpSpec("logsumexp[axes,keepdims]", lambda x: x.logsumexp(axis=(0, -1), keepdims=True),
           lambda x: _lse(x, axis=(0, -1), keepdims=True), [F(S3)]),
    OpSpec("logsumexp[large]", lambda x: gg.logsumexp(x, axis=1), lambda x: _lse(x, axis=1),
           [F(S, 500.0, 510.0)], rtol32=1e-6),
    # norm
    OpSpec("norm", gg.norm, np.linalg.norm, [F(S3)]),
    OpSpec("norm[vector]", gg.norm, np.linalg.norm, [F((5,))]),
    OpSpec("norm[axis=1]", lambda x: gg.norm(x, axis=1), lambda x: np.linalg.norm(x, axis=1), [F(S3)]),
    OpSpec("norm[ord=1]", lambda x: gg.norm(x, 1, axis=-1), lambda x: np.linalg.norm(x, 1, axis=-1),
           [F(S3, kinks=(0,))]),
    OpSpec("norm[ord=inf]", lambda x: gg.norm(x, np.inf, axis=1, keepdims=True),
           lambda x: np.linalg.norm(x, np.inf, axis=1, keepdims=True), [F(S3)]),
    OpSpec("norm[ord=-inf]", lambda x: gg.norm(x, -np.inf, axis=0), lambda x: np.linalg.norm(x, -np.inf, axis=0),
           [F(S3)]),
    OpSpec("norm[ord=3]", lambda x: gg.norm(x, 3, axis=1), lambda x: np.linalg.norm(x, 3, axis=1),
           [F(S3, kinks=(0,))]),
    OpSpec("norm[fro]", lambda x: gg.norm(x, "fro", axis=(1, 2)), lambda x: np.linalg.norm(x, "fro", axis=(1, 2)),
           [F(S3)]),
    OpSpec("norm[matrix,ord=1]", lambda x: gg.norm(x, 1), lambda x: np.linalg.norm(x, 1), [F(S, kinks=(0,))]),
    OpSpec("norm[matrix,ord=inf]", lambda x: gg.norm(x, np.inf, axis=(2, 0), keepdims=True),
           lambda x: np.linalg.norm(x, np.inf, axis=(2, 0), keepdims=True), [F(S3, kinks=(0,))]),
    OpSpec("norm[zero]", lambda x: gg.norm(x, axis=1), lambda x: np.linalg.norm(x, axis=1),
           [A(np.zeros((2, 3)), diff=True)], order=1),
    # all / any
    OpSpec("all", gg.all, np.all, [B(S3, 0.9)], grad=False),
    OpSpec("all[axis=1]", lambda x: gg.all(x, axis=1), lambda x: np.all(x, axis=1), [B(S3, 0.7)], grad=False),
    OpSpec("any", gg.any, np.any, [B(S3, 0.1)], grad=False),
    OpSpec("any[axes,keepdims]", lambda x: x.any(axis=(0, 2), keepdims=True),
           lambda x: np.any(x, axis=(0, 2), keepdims=True), [B(S3, 0.2)], grad=False),
    OpSpec("any[float]", lambda x: gg.any(x > 1.5, axis=0), lambda x: np.any(x > 1.5, axis=0), [F(S)], grad=False),
    # cumsum / cumprod
    OpSpec("cumsum", gg.cumsum, np.cumsum, [F(S3)]),
    OpSpec("cumsum[axis=1]", lambda x: gg.cumsum(x, axis=1), lambda x: np.cumsum(x, axis=1), [F(S3)]),
    OpSpec("cumsum[axis=-1]", lambda x: x.cumsum(-1), lambda x: np.cumsum(x, axis=-1), [F(S3)]),
    OpSpec("cumsum[int]", lambda x: gg.cumsum(x, 0), lambda x: np.cumsum(x, 0), [I(S, -3, 3, "int32")], grad=False),
    OpSpec("cumprod", gg.cumprod, np.cumprod, [F((6,), 0.5, 1.5)]),
    OpSpec("cumprod[axis=1]", lambda x: gg.cumprod(x, axis=1), lambda x: np.cumprod(x, axis=1), [F(S3)]),
    OpSpec("cumprod[zeros]", lambda x: gg.cumprod(x, axis=1), lambda x: np.cumprod(x, axis=1),
           [A(WITH_ZEROS, diff=True)]),
    OpSpec("cumprod[zeros,axis=0]", lambda x: x.cumprod(0), lambda x: np.cumprod(x, 0), [A(WITH_ZEROS, diff=True)]),
    OpSpec("cumprod[zeros,3d]", lambda x: gg.cumprod(x, axis=-1), lambda x: np.cumprod(x, axis=-1),
           [A(ZEROS_3D, diff=True)]),
    # sum_to: the reduction autograd uses to undo broadcasting
    OpSpec("sum_to", lambda x: gg.sum_to(x, (1, 4)), lambda x: x.sum(axis=0, keepdims=True), [F((3, 4))]),
    OpSpec("sum_to[lead]", lambda x: gg.sum_to(x, (3, 1)), lambda x: x.sum(axis=(0, 2), keepdims=True).reshape(3, 1),
           [F((2, 3, 4))]),
    # leading axes only (bias gradients): float32/float64 run as ones @ x on BLAS
    OpSpec("sum_to[bias]", lambda x: gg.sum_to(x, (4,)), lambda x: x.sum(axis=0), [F((5, 4))]),
    OpSpec("sum_to[bias,3d]", lambda x: gg.sum_to(x, (3, 4)), lambda x: x.sum(axis=0), [F((2, 3, 4))]),
    OpSpec("sum_to[bias,2 lead]", lambda x: gg.sum_to(x, (4,)), lambda x: x.sum(axis=(0, 1)), [F((2, 3, 4))]),
    OpSpec("sum_to[bias,transposed]", lambda x: gg.sum_to(x.T, (3,)), lambda x: x.T.sum(axis=0), [F((3, 5))]),
    OpSpec("sum_to[bias,int]", lambda x: gg.sum_to(x, (4,)), lambda x: x.sum(axis=0), [I((5, 4), -3, 3, "int32")],
           grad=False),
]
