"""ONNX import converters: elementwise math, activations, comparisons and logic, casts, reductions."""
from __future__ import annotations

import graphgrad.ops as G
from graphgrad.io.onnx.importer import converter


@converter("Relu")
def relu(node, x):
    return G.relu(x)


@converter("Add")
def add(node, a, b):
    return a + b
