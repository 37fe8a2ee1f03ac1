"""Op-table rows for elementwise ops (binary, unary, activations)."""
from __future__ import annotations

import math

import numpy as np

import graphgrad as gg
from tests.ops.op_table import A, B, F, I, OpSpec, P

S = (3, 4)
BC = ((3, 1), (1, 4))  # a broadcasting pair


def _erf(x):
    return np.vectorize(math.erf)(x)


def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


def _softplus(x, beta=1.0, threshold=20.0):
    bx = beta * x
    return np.where(bx > threshold, x, np.log1p(np.exp(np.minimum(bx, threshold))) / beta)


SELU_A, SELU_S = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946


def _same_size_int(x):
    return {4: "int32", 8: "int64"}[x.dtype.itemsize]


def _sign_bit(x):
    return int(np.iinfo(_same_size_int(x)).min)  # a Python int: it takes the tensor's dtype and device


ROWS = [
    # arithmetic, with broadcasting and Python scalars
    OpSpec("add", gg.add, np.add, [F(S), F(S)]),
    OpSpec("add[broadcast]", gg.add, np.add, [F(BC[0]), F(BC[1])]),
    OpSpec("add[scalar]", lambda a: a + 2.5, lambda a: a + 2.5, [F(S)]),
    OpSpec("sub", gg.sub, np.subtract, [F(BC[0]), F((4,))]),
    OpSpec("sub[rscalar]", lambda a: 1.5 - a, lambda a: 1.5 - a, [F(S)]),
    OpSpec("mul", gg.mul, np.multiply, [F(BC[0]), F(BC[1])]),
    OpSpec("mul[same]", lambda a: a * a, lambda a: a * a, [F(S)]),
    OpSpec("div", gg.div, np.divide, [F(BC[0]), P(BC[1])]),
    OpSpec("div[rscalar]", lambda a: 2.0 / a, lambda a: 2.0 / a, [P(S)]),
    OpSpec("floor_divide", gg.floor_divide, np.floor_divide, [F(S, -5, 5), P(S, 0.7, 2)], order=1),
    OpSpec("remainder", gg.remainder, np.remainder, [F(S, -5, 5), P(S, 0.7, 2)], order=1),
    OpSpec("pow", gg.pow, np.power, [P(BC[0]), F(BC[1])]),
    OpSpec("pow[scalar]", lambda a: a ** 3, lambda a: a ** 3, [F(S)]),
    OpSpec("pow[square]", lambda a: a ** 2, lambda a: a ** 2, [F(S)]),
    OpSpec("pow[rscalar]", lambda a: 2.0 ** a, lambda a: 2.0 ** a, [F(S)]),
    OpSpec("neg", gg.neg, np.negative, [F(S)]),
    OpSpec("abs", gg.abs, np.abs, [F(S, kinks=(0,))]),
    OpSpec("sign", gg.sign, np.sign, [F(S, kinks=(0,))], order=1),
    OpSpec("exp", gg.exp, np.exp, [F(S)]),
    OpSpec("expm1", gg.expm1, np.expm1, [F(S)]),
    OpSpec("log", gg.log, np.log, [P(S)]),
    OpSpec("log1p", gg.log1p, np.log1p, [P(S)]),
    OpSpec("log2", gg.log2, np.log2, [P(S)]),
    OpSpec("sqrt", gg.sqrt, np.sqrt, [P(S)]),
    OpSpec("rsqrt", gg.rsqrt, lambda x: 1 / np.sqrt(x), [P(S)]),
    OpSpec("square", gg.square, np.square, [F(S)]),
    OpSpec("reciprocal", gg.reciprocal, np.reciprocal, [P(S)]),
    OpSpec("sin", gg.sin, np.sin, [F(S)]),
    OpSpec("cos", gg.cos, np.cos, [F(S)]),
    OpSpec("tan", gg.tan, np.tan, [F(S, -1.2, 1.2)]),
    OpSpec("tanh", gg.tanh, np.tanh, [F(S)]),
    OpSpec("sinh", gg.sinh, np.sinh, [F(S)]),
    OpSpec("cosh", gg.cosh, np.cosh, [F(S)]),
    OpSpec("arcsin", gg.arcsin, np.arcsin, [F(S, -0.9, 0.9)]),
    OpSpec("arccos", gg.arccos, np.arccos, [F(S, -0.9, 0.9)]),
    OpSpec("arctan", gg.arctan, np.arctan, [F(S)]),
    OpSpec("arctan2", gg.arctan2, np.arctan2, [F(BC[0]), P(BC[1])]),
    OpSpec("sigmoid", gg.sigmoid, _sigmoid, [F(S, -6, 6)]),
    OpSpec("relu", gg.relu, lambda x: np.maximum(x, 0), [F(S, kinks=(0,))]),
    OpSpec("leaky_relu", lambda x: gg.leaky_relu(x, 0.2), lambda x: np.where(x > 0, x, 0.2 * x),
           [F(S, kinks=(0,))]),
    OpSpec("elu", lambda x: gg.elu(x, 1.5), lambda x: np.where(x > 0, x, 1.5 * np.expm1(x)), [F(S, kinks=(0,))]),
    OpSpec("selu", gg.selu, lambda x: SELU_S * np.where(x > 0, x, SELU_A * np.expm1(x)), [F(S, kinks=(0,))]),
    OpSpec("gelu", gg.gelu, lambda x: 0.5 * x * (1 + _erf(x / math.sqrt(2))), [F(S, -3, 3)]),
    OpSpec("gelu[tanh]", lambda x: gg.gelu(x, approximate="tanh"),
           lambda x: 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3))), [F(S, -3, 3)]),
    OpSpec("silu", gg.silu, lambda x: x * _sigmoid(x), [F(S, -4, 4)]),
    OpSpec("softplus", gg.softplus, _softplus, [F(S, -4, 4)]),
    OpSpec("softplus[beta]", lambda x: gg.softplus(x, beta=2.0, threshold=3.0),
           lambda x: _softplus(x, 2.0, 3.0), [F(S, -4, 4, kinks=(1.5,))]),
    OpSpec("mish", gg.mish, lambda x: x * np.tanh(np.log1p(np.exp(x))), [F(S, -3, 3)]),
    OpSpec("hardtanh", gg.hardtanh, lambda x: np.clip(x, -1, 1), [F(S, kinks=(-1, 1))]),
    OpSpec("clip", lambda x: gg.clip(x, -0.5, 1.0), lambda x: np.clip(x, -0.5, 1.0), [F(S, kinks=(-0.5, 1.0))]),
    OpSpec("clip[min]", lambda x: gg.clip(x, min=0.3), lambda x: np.maximum(x, 0.3), [F(S, kinks=(0.3,))]),
    OpSpec("clip[tensor]", lambda x, lo: gg.clip(x, lo, 1.0), lambda x, lo: np.clip(x, lo, 1.0),
           [F(S, kinks=(1.0,)), F((4,), -1.5, -0.5)]),
    OpSpec("maximum", gg.maximum, np.maximum, [F(BC[0]), F(BC[1])]),
    OpSpec("minimum", gg.minimum, np.minimum, [F(BC[0]), F(BC[1])]),
    OpSpec("maximum[ties]", gg.maximum, np.maximum, [A([1.0, 2.0, 3.0], diff=True), A([1.0, 0.0, 3.0], diff=True)],
           order=1),
    OpSpec("where", gg.where, np.where, [B(S), F(BC[0]), F(BC[1])]),
    OpSpec("where[scalar]", lambda c, x: gg.where(c, x, 0.0), lambda c, x: np.where(c, x, 0.0), [B(S), F(S)]),
    OpSpec("erf", gg.erf, _erf, [F(S)]),
    OpSpec("floor", gg.floor, np.floor, [F(S, -3, 3, kinks=(-2, -1, 0, 1, 2))], order=1),
    OpSpec("ceil", gg.ceil, np.ceil, [F(S, -3, 3, kinks=(-2, -1, 0, 1, 2))], order=1),
    OpSpec("round", gg.round, np.round, [F(S, -3, 3, kinks=(-2.5, -1.5, -0.5, 0.5, 1.5, 2.5))], order=1),
    OpSpec("round[decimals]", lambda x: gg.round(x, 1), lambda x: np.round(x, 1), [F(S)], grad=False),
    OpSpec("astype", lambda x: gg.astype(gg.astype(x, "float64") * 2, x.dtype), lambda x: x * 2, [F(S)]),
    # a float's bits as the same-size integer and back, and the sign bit flipped through the integer
    OpSpec("bitcast", lambda x: gg.bitcast(gg.bitcast(x, _same_size_int(x)), x.dtype) * 2, lambda x: x * 2, [F(S)],
           grad=False),
    OpSpec("bitcast[sign]", lambda x: gg.bitcast(gg.bitcast(x, _same_size_int(x)) ^ _sign_bit(x), x.dtype),
           lambda x: -x, [F(S)], grad=False),
    # predicates: boolean outputs, no gradient
    OpSpec("isnan", gg.isnan, np.isnan, [A([1.0, np.nan, np.inf, -np.inf])], grad=False),
    OpSpec("isinf", gg.isinf, np.isinf, [A([1.0, np.nan, np.inf, -np.inf])], grad=False),
    OpSpec("isfinite", gg.isfinite, np.isfinite, [A([1.0, np.nan, np.inf, -np.inf])], grad=False),
    OpSpec("logical_and", gg.logical_and, np.logical_and, [B(S), B(S)], grad=False),
    OpSpec("logical_or", gg.logical_or, np.logical_or, [B(S), B(S)], grad=False),
    OpSpec("logical_xor", gg.logical_xor, np.logical_xor, [B(S), B(S)], grad=False),
    OpSpec("logical_not", gg.logical_not, np.logical_not, [B(S)], grad=False),
    OpSpec("bitwise_and", gg.bitwise_and, np.bitwise_and, [I(S, 0, 8), I(S, 0, 8)], grad=False),
    OpSpec("bitwise_or", gg.bitwise_or, np.bitwise_or, [I(S, 0, 8), I(BC[1], 0, 8)], grad=False),
    OpSpec("bitwise_xor", gg.bitwise_xor, np.bitwise_xor, [B(S), B(S)], grad=False),
    OpSpec("invert", gg.invert, np.invert, [I(S, -4, 8, dtype="int32")], grad=False),
    OpSpec("invert[bool]", gg.invert, np.invert, [B(S)], grad=False),
    OpSpec("operators[bitwise]", lambda a, b: (a & b, a | b, a ^ b, ~a, a & 3),
           lambda a, b: (a & b, a | b, a ^ b, ~a, a & 3), [I(S, 0, 8), I(S, 0, 8)], grad=False),
    OpSpec("equal", gg.equal, np.equal, [I(S), I(S)], grad=False),
    OpSpec("not_equal", gg.not_equal, np.not_equal, [I(S), I(S)], grad=False),
    OpSpec("less", gg.less, np.less, [F(S), F(S)], grad=False),
    OpSpec("less_equal", gg.less_equal, np.less_equal, [I(S), I(S)], grad=False),
    OpSpec("greater", gg.greater, np.greater, [F(BC[0]), F(BC[1])], grad=False),
    OpSpec("greater_equal", gg.greater_equal, np.greater_equal, [I(S), I(S)], grad=False),
    OpSpec("operators[compare]", lambda a, b: (a < b, a <= b, a > b, a >= b, a == b, a != b),
           lambda a, b: (a < b, a <= b, a > b, a >= b, a == b, a != b), [F(S), F(S)], grad=False),
    OpSpec("operators[arith]", lambda a, b: (a + b, a - b, a * b, a / b, -a, abs(a), a ** 2, 3 - a, 2 / b),
           lambda a, b: (a + b, a - b, a * b, a / b, -a, abs(a), a ** 2, 3 - a, 2 / b), [F(S), P(S)], order=1),
    OpSpec("operators[int]", lambda a, b: (a + b, a * 2, a // b, a % b, a / b),
           lambda a, b: (a + b, a * 2, a // b, a % b, a / b), [I(S, -5, 5), I(S, 1, 4)], grad=False),
]
