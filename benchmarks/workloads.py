"""The benchmark workloads of ../shared/BENCHMARKS.md, defined once for every script that times them."""
from __future__ import annotations

import numpy as np

#: W4: how many elementwise ops the tiny chain has.
N_OPS = 100


def tiny_chain(y, tanh):
    """W4 forward: alternately multiply by 1.001, add 0.001, tanh — on any framework's tensors."""
    for i in range(N_OPS):
        k = i % 3
        y = y * 1.001 if k == 0 else (y + 0.001 if k == 1 else tanh(y))
    return y


def tiny_chain_numpy(x0: np.ndarray):
    """W4 by hand in NumPy: ``step() -> (loss, gradient)``, forward and backward written out."""
    a, b = np.float32(1.001), np.float32(0.001)

    def step():
        saved, y = [], x0
        for i in range(N_OPS):
            k = i % 3
            if k == 0:
                y = y * a
            elif k == 1:
                y = y + b
            else:
                y = np.tanh(y)
                saved.append(y)
        g = np.ones_like(y)
        for i in reversed(range(N_OPS)):
            k = i % 3
            if k == 0:
                g = g * a
            elif k == 2:
                t = saved.pop()
                g = g * (1 - t * t)
        return float(y.sum()), g

    return step


def mlp_arrays(sizes, seed: int = 1) -> list:
    """Weights and biases of an MLP (uniform +-1/sqrt(fan_in), zero biases), float32 arrays."""
    rng = np.random.default_rng(seed)
    params = []
    for fan_in, fan_out in zip(sizes[:-1], sizes[1:]):
        bound = 1 / np.sqrt(fan_in)
        params.append(rng.uniform(-bound, bound, (fan_in, fan_out)).astype(np.float32))
        params.append(np.zeros(fan_out, np.float32))
    return params


def mlp_forward(gg, params, x):
    """Logits of the MLP ``params`` (weights, biases alternating) with ReLU between layers."""
    h = x
    for i in range(0, len(params), 2):
        h = h @ params[i] + params[i + 1]
        if i + 2 < len(params):
            h = gg.relu(h)
    return h


def sgd_step(gg, params, x, y, lr: float):
    """One training step of the MLP ``params`` on ``(x, y)``, written as an eager PyTorch-style loop
    (backward, then in-place SGD updates under ``no_grad``); returns the loss tensor."""
    for p in params:
        p.grad = None
    loss = gg.cross_entropy(mlp_forward(gg, params, x), y)
    loss.backward()
    with gg.no_grad():
        for p in params:
            p -= p.grad * lr
    return loss
