"""ONNX import converters: random numbers (RandomUniform, RandomNormal, their ``Like`` forms, Bernoulli).

Each is graphgrad's ``RandomLike`` op (``gg.rand_like``/``gg.randn_like``/``gg.bernoulli``), which
draws anew on every run of the imported graph; the interpreter never evaluates these nodes at
import time. A ``seed`` attribute gives the node its own ``gg.Generator``, so an imported model
with seeds is reproducible from run to run of the import (the numbers differ from onnxruntime's,
whose generators are its own); without one the node draws from graphgrad's default generator
(``gg.manual_seed``).
"""
from __future__ import annotations

import graphgrad.ops as G
from graphgrad.backend import np
from graphgrad.core.random import Generator
from graphgrad.core.tensor import Tensor
from graphgrad.io.onnx.importer import converter, np_dtype


def _generator(node):
    seed = node.attr("seed")
    # ONNX seeds are floats; NumPy wants a non-negative integer (keep the float's bits apart)
    return None if seed is None else Generator(int(np.float32(seed).view(np.uint32)))


def _dtype(node, like=None):
    """The ``dtype`` attribute's NumPy dtype; ``like``'s dtype (or float32) when it is absent."""
    if node.has("dtype"):
        return np_dtype(node.attr("dtype"))
    return like.dtype if like is not None else np.dtype(np.float32)


def _draw(node, like, dtype):
    generator = _generator(node)
    if node.op_type.startswith("RandomUniform"):
        return G.rand_like(like, float(node.attr("low", 0.0)), float(node.attr("high", 1.0)), dtype, generator)
    return G.randn_like(like, float(node.attr("mean", 0.0)), float(node.attr("scale", 1.0)), dtype, generator)


@converter("RandomUniform", "RandomNormal")
def random(node):
    shape = tuple(int(d) for d in node.attr("shape"))
    dtype = _dtype(node)
    return _draw(node, Tensor(np.zeros(shape, dtype)), dtype)


@converter("RandomUniformLike", "RandomNormalLike")
def random_like(node, x):
    return _draw(node, x, _dtype(node, x))


@converter("Bernoulli")
def bernoulli(node, p):
    return G.bernoulli(p, _dtype(node, p), _generator(node))
