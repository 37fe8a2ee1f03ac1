"""ONNX import converters: the optimizer steps of the ``ai.onnx.preview.training`` domain.

``Adagrad``, ``Momentum`` (standard and Nesterov) and ``Adam`` each update n tensors at once: the
inputs are the learning rate ``R``, the step count ``T`` (both scalars), then the n tensors ``X``,
their n gradients ``G`` and the optimizer's state (``H`` accumulated squares, ``V`` momentum), each
group of n in order; the outputs are the new ``X`` then the new state, in the same grouping. The
updates are built from graphgrad ops, so ``R`` and ``T`` may be the model's inputs (the ``T > 0``
choices are ``where``). Attribute floats are weak Python scalars: the tensors keep their dtype.
"""
from __future__ import annotations

import graphgrad.ops as G
from graphgrad.io.onnx.importer import converter

TRAINING = "ai.onnx.preview.training"


def _groups(node, args: tuple, count: int) -> list:
    """Split ``R, T, *tensors`` into ``count`` equal groups of tensors (X, G, and the states)."""
    tensors = args[2:]
    if len(tensors) % count:
        raise node.error(f"expected R, T and {count} groups of equally many tensors, got {len(args)} inputs")
    n = len(tensors) // count
    return [tensors[i * n:(i + 1) * n] for i in range(count)]


def _real(t, like):
    """``t`` (R or T) in the dtype of the updated tensor ``like``."""
    return G.astype(t, like.dtype) if t.dtype != like.dtype else t


@converter("Adagrad", domain=TRAINING)
def adagrad(node, r, t, *args):
    decay = float(node.attr("decay_factor", 0.0))
    epsilon = float(node.attr("epsilon", 0.0))
    weight_decay = float(node.attr("norm_coefficient", 0.0))
    xs, gs, hs = _groups(node, (r, t) + args, 3)
    new_xs, new_hs = [], []
    for x, g, h in zip(xs, gs, hs):
        rate = _real(r, x) / (_real(t, x) * decay + 1.0)
        g = x * weight_decay + g
        h = h + g * g
        new_xs.append(x - rate * g / (G.sqrt(h) + epsilon))
        new_hs.append(h)
    return tuple(new_xs + new_hs)


@converter("Momentum", domain=TRAINING)
def momentum(node, r, t, *args):
    alpha = float(node.attr("alpha"))
    beta = float(node.attr("beta"))
    weight_decay = float(node.attr("norm_coefficient"))
    mode = node.attr("mode")
    if mode not in ("standard", "nesterov"):
        raise node.error(f"mode must be 'standard' or 'nesterov', got {mode!r}")
    xs, gs, vs = _groups(node, (r, t) + args, 3)
    new_xs, new_vs = [], []
    for x, g, v in zip(xs, gs, vs):
        g = x * weight_decay + g
        # the gradient's coefficient is 1 on the first step (T == 0), so V starts as the gradient
        v = v * alpha + G.where(G.greater(t, 0), g * beta, g)
        step = v if mode == "standard" else g + v * alpha
        new_xs.append(x - _real(r, x) * step)
        new_vs.append(v)
    return tuple(new_xs + new_vs)


@converter("Adam", domain=TRAINING)
def adam(node, r, t, *args):
    alpha = float(node.attr("alpha", 0.9))
    beta = float(node.attr("beta", 0.999))
    epsilon = float(node.attr("epsilon", 1e-6))
    weight_decay = float(node.attr("norm_coefficient", 0.0))
    decay_after = float(node.attr("norm_coefficient_post", 0.0))
    xs, gs, vs, hs = _groups(node, (r, t) + args, 4)
    new_xs, new_vs, new_hs = [], [], []
    for x, g, v, h in zip(xs, gs, vs, hs):
        g = x * weight_decay + g
        v = v * alpha + g * (1.0 - alpha)
        h = h * beta + g * g * (1.0 - beta)
        steps = _real(t, x)
        # bias correction from the second step on (T > 0); T == 0 would divide by zero
        corrected = _real(r, x) * G.sqrt(1.0 - G.power(beta, steps)) / (1.0 - G.power(alpha, steps))
        rate = G.where(G.greater(t, 0), corrected, _real(r, x))
        new_xs.append((x - rate * (v / (G.sqrt(h) + epsilon))) * (1.0 - decay_after))
        new_vs.append(v)
        new_hs.append(h)
    return tuple(new_xs + new_vs + new_hs)
