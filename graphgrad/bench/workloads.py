"""The benchmark workloads W1..W6 (BENCHMARKS.md), written once for graphgrad and PyTorch.

Models are functions of a module namespace (``gg.nn`` or ``torch.nn``) and training steps are
framework-neutral closures, so the same code is timed on both; a :class:`Framework` holds what
differs (tensor constructor, loss, seeding). Hand-written NumPy versions of W1 and W4 serve as the
reference when PyTorch is not installed.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Callable

from graphgrad.backend import np

#: W4: how many elementwise ops the tiny chain has.
N_OPS = 100

TITLES = {"w1": "W1 MLP 784-512-256-10, batch 128, SGD momentum",
          "w2": "W2 CNN conv16-pool-conv32-pool-linear, batch 64, SGD momentum",
          "w3": "W3 LSTM LM vocab 65, embed 64, hidden 128, seq 35, batch 32, Adam",
          "w4": f"W4 tiny-op chain: {N_OPS} elementwise ops on (16,), forward+backward, per op",
          "w5": "W5 GPT d128, 4 heads, 2 layers, seq 64, batch 16, AdamW",
          "w6": "W6 spiral 3x100 points, MLP 2-100-3, full-batch SGD lr 0.3, to 99% training accuracy"}


# ---- frameworks --------------------------------------------------------------------------------------
@dataclass
class Framework:
    """What differs between graphgrad and PyTorch in the workloads' code."""

    name: str
    version: str
    nn: Any
    optim: Any
    tensor: Callable          # array -> tensor
    numpy: Callable           # tensor -> array
    cross_entropy: Callable   # (logits, targets) -> loss
    relu: Callable
    tanh: Callable
    manual_seed: Callable
    parameter: Callable       # array -> trainable leaf tensor


def graphgrad_framework() -> Framework:
    import graphgrad as gg

    return Framework("graphgrad", gg.__version__, gg.nn, gg.optim, gg.tensor, lambda t: t.numpy(), gg.cross_entropy,
                     gg.relu, gg.tanh, gg.manual_seed, lambda a: gg.nn.Parameter(gg.tensor(a)))


def torch_framework(torch) -> Framework:
    """The PyTorch framework (``torch`` as returned by ``timing.torch_or_none``)."""
    return Framework("pytorch", torch.__version__, torch.nn, torch.optim, torch.tensor,
                     lambda t: t.detach().numpy(), torch.nn.functional.cross_entropy, torch.relu, torch.tanh,
                     torch.manual_seed, lambda a: torch.nn.Parameter(torch.tensor(a)))


# ---- W1, W2, W3, W5: models written once against a module namespace (gg.nn or torch.nn) ------------
def mlp(nn):
    return nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 256), nn.ReLU(), nn.Linear(256, 10))


def cnn(nn):
    return nn.Sequential(nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Flatten(), nn.Linear(32 * 7 * 7, 10))


def lstm_lm(nn):
    class LM(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = nn.Embedding(65, 64)
            self.lstm = nn.LSTM(64, 128, batch_first=True)
            self.head = nn.Linear(128, 65)

        def forward(self, tokens):
            out, _ = self.lstm(self.embed(tokens))
            return self.head(out)

    return LM()


def gpt(nn, causal_mask):
    class GPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = nn.Embedding(65, 128)
            self.pos = nn.Embedding(64, 128)
            self.blocks = nn.ModuleList([nn.TransformerEncoderLayer(128, 4, 512, dropout=0.0, activation="gelu",
                                                                    batch_first=True, norm_first=True)
                                         for _ in range(2)])
            self.norm = nn.LayerNorm(128)
            self.head = nn.Linear(128, 65)
            self.mask = causal_mask

        def forward(self, tokens, positions):
            h = self.embed(tokens) + self.pos(positions)
            for block in self.blocks:
                h = block(h, src_mask=self.mask, is_causal=True)
            return self.head(self.norm(h))

    return GPT()


def make_data(seed: int = 0) -> dict:
    """Random inputs and targets of W1, W2, W3 and W5, as NumPy arrays."""
    rng = np.random.default_rng(seed)
    return {
        "w1": (rng.standard_normal((128, 784)).astype(np.float32), rng.integers(0, 10, 128)),
        "w2": (rng.standard_normal((64, 1, 28, 28)).astype(np.float32), rng.integers(0, 10, 64)),
        "w3": (rng.integers(0, 65, (32, 35)), rng.integers(0, 65, (32, 35))),
        "w5": (rng.integers(0, 65, (16, 64)), rng.integers(0, 65, (16, 64))),
    }


def training_step(loss_fn: Callable, model, opt, flat: bool) -> Callable:
    """``step(*inputs, targets)``: forward, loss, backward, optimizer update; returns the loss. The same
    code for graphgrad and PyTorch; ``flat`` flattens (batch, time) positions for the loss."""

    def step(*batch):
        opt.zero_grad()
        logits = model(*batch[:-1])
        targets = batch[-1]
        if flat:
            logits, targets = logits.reshape(-1, logits.shape[-1]), targets.reshape(-1)
        loss = loss_fn(logits, targets)
        loss.backward()
        opt.step()
        return loss

    return step


def build_step(key: str, fw: Framework, data: dict, seed: int = 0) -> tuple:
    """The training step of workload ``key`` ("w1", "w2", "w3" or "w5") for ``fw``, on a model
    initialized from ``seed``: returns ``(step, batch)``, to be called as ``step(*batch)``."""
    fw.manual_seed(seed)
    nn, optim = fw.nn, fw.optim
    inputs, targets = data[key]
    if key in ("w1", "w2"):
        model = mlp(nn) if key == "w1" else cnn(nn)
        opt = optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
        return training_step(fw.cross_entropy, model, opt, flat=False), (fw.tensor(inputs), fw.tensor(targets))
    if key == "w3":
        model = lstm_lm(nn)
        opt = optim.Adam(model.parameters(), lr=1e-3)
        return training_step(fw.cross_entropy, model, opt, flat=True), (fw.tensor(inputs), fw.tensor(targets))
    if key == "w5":
        batch, length = inputs.shape
        model = gpt(nn, fw.tensor(np.triu(np.full((length, length), -np.inf, np.float32), 1)))
        opt = optim.AdamW(model.parameters(), lr=3e-4)
        positions = fw.tensor(np.broadcast_to(np.arange(length), (batch, length)).copy())
        return (training_step(fw.cross_entropy, model, opt, flat=True),
                (fw.tensor(inputs), positions, fw.tensor(targets)))
    raise ValueError(f"no training step for workload {key!r}")


# ---- W1 by hand in NumPy -------------------------------------------------------------------------------
def mlp_arrays(sizes, seed: int = 1) -> list:
    """Weights ``(fan_in, fan_out)`` and biases of an MLP (uniform +-1/sqrt(fan_in), zero biases), float32."""
    rng = np.random.default_rng(seed)
    params = []
    for fan_in, fan_out in zip(sizes[:-1], sizes[1:]):
        bound = 1 / np.sqrt(fan_in)
        params.append(rng.uniform(-bound, bound, (fan_in, fan_out)).astype(np.float32))
        params.append(np.zeros(fan_out, np.float32))
    return params


def mlp_numpy_step(params: list, x, y, lr: float, momentum: float = 0.0) -> Callable:
    """An MLP training step by hand in NumPy: ReLU layers, softmax cross-entropy, SGD (PyTorch's
    momentum form ``v = momentum * v + g; p -= lr * v``), updating ``params`` (from
    :func:`mlp_arrays`) in place. Returns ``step() -> loss``."""
    n, classes = x.shape[0], params[-1].shape[0]
    onehot = np.zeros((n, classes), np.float32)
    onehot[np.arange(n), y] = 1
    velocity = [np.zeros_like(p) for p in params]
    layers = len(params) // 2

    def update(i: int, g) -> None:
        if momentum:
            velocity[i] *= momentum
            velocity[i] += g
            g = velocity[i]
        params[i] -= lr * g

    def step() -> float:
        hs, h = [x], x
        for i in range(layers):
            h = h @ params[2 * i] + params[2 * i + 1]
            if i + 1 < layers:
                np.maximum(h, 0, out=h)
            hs.append(h)
        z = h - h.max(axis=1, keepdims=True)
        e = np.exp(z)
        s = e.sum(axis=1, keepdims=True)
        loss = float((np.log(s)[:, 0] - z[np.arange(n), y]).mean())
        g = e / s
        g -= onehot
        g *= 1.0 / n
        for i in reversed(range(layers)):
            gw = hs[i].T @ g
            gb = g.sum(axis=0)
            if i > 0:
                g = g @ params[2 * i].T
                g *= hs[i] > 0
            update(2 * i, gw)
            update(2 * i + 1, gb)
        return loss

    return step


def mlp_forward(fw_or_gg, params, x):
    """Logits of the MLP ``params`` (weights, biases alternating) with ReLU between layers; the first
    argument is a :class:`Framework` or the ``graphgrad`` module (anything with ``relu``)."""
    h = x
    for i in range(0, len(params), 2):
        h = h @ params[i] + params[i + 1]
        if i + 2 < len(params):
            h = fw_or_gg.relu(h)
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


# ---- W4 ------------------------------------------------------------------------------------------------
def tiny_chain(y, tanh):
    """W4 forward: alternately multiply by 1.001, add 0.001, tanh — on any framework's tensors."""
    for i in range(N_OPS):
        k = i % 3
        y = y * 1.001 if k == 0 else (y + 0.001 if k == 1 else tanh(y))
    return y


def tiny_chain_numpy(x0):
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


def tiny_chain_step(x):
    """The W4 eager step for a framework tensor ``x`` that requires grad (graphgrad or PyTorch): the
    chain, sum, ``backward()``; returns ``x.grad``."""

    def step():
        x.grad = None
        tiny_chain(x, lambda t: t.tanh()).sum().backward()
        return x.grad

    return step


# ---- W6 --------------------------------------------------------------------------------------------------
SPIRAL_SIZES = (2, 100, 3)
SPIRAL_LR = 0.3
SPIRAL_TARGET = 0.99


def spiral_data():
    """The 3-class spiral (100 points per class) as NumPy arrays ``(x (300, 2) float32, y (300,))``."""
    import graphgrad as gg
    from graphgrad.data import make_spiral

    x, y = make_spiral(100, 3, generator=gg.Generator(0))
    return x.numpy(), y.numpy()


def spiral_step(fw: Framework, x, y, seed: int = 1) -> Callable:
    """``step(x, y) -> logits`` of the W6 model (2-100-3 ReLU, full-batch SGD at ``SPIRAL_LR``) on fresh
    parameters drawn from ``seed`` (the same values for every framework)."""
    params = [fw.parameter(a) for a in mlp_arrays(SPIRAL_SIZES, seed)]
    opt = fw.optim.SGD(params, lr=SPIRAL_LR)

    def step(xb, yb):
        opt.zero_grad()
        logits = mlp_forward(fw, params, xb)
        loss = fw.cross_entropy(logits, yb)
        loss.backward()
        opt.step()
        return logits

    return step


def steps_to_accuracy(step: Callable, fw: Framework, x, y, target: float = SPIRAL_TARGET,
                      max_steps: int = 20000, max_seconds: float = 60.0) -> tuple:
    """Run ``step(xt, yt)`` (returning the logits before the update) until the training accuracy of
    those logits reaches ``target``; returns ``(seconds, steps)`` (steps is ``None`` if it did not
    within ``max_steps`` steps or ``max_seconds``)."""
    xt, yt = fw.tensor(x), fw.tensor(y)
    start = time.perf_counter()
    for n in range(1, max_steps + 1):
        logits = fw.numpy(step(xt, yt))
        if (logits.argmax(axis=1) == y).mean() >= target:
            return time.perf_counter() - start, n
        if time.perf_counter() - start > max_seconds:
            break
    return time.perf_counter() - start, None


__all__ = ["Framework", "graphgrad_framework", "torch_framework", "mlp", "cnn", "lstm_lm", "gpt", "make_data",
           "training_step", "build_step", "mlp_arrays", "mlp_numpy_step", "mlp_forward", "sgd_step", "tiny_chain",
           "tiny_chain_numpy", "tiny_chain_step", "spiral_data", "spiral_step", "steps_to_accuracy", "N_OPS",
           "TITLES"]
