"""Write the PyTorch-agreement corpus of the loss modules (run by hand, with PyTorch):

    python tests/oracle/generate_loss_modules.py

For every case of ``CASES``: the ``torch.nn`` loss module of that name built with the case's keyword
options (array options such as ``weight`` become float64 tensors), called on inputs drawn here (float64),
its output back-propagated with a fixed upstream gradient. ``loss_modules_corpus.npz`` holds
``<case>/in<i>``, ``<case>/opt/<key>`` (array options), ``<case>/y``, ``<case>/gy`` and
``<case>/grad/in<i>`` for the differentiable inputs. tests/nn/test_loss_modules_oracle.py replays them
with ``gg.nn`` (no PyTorch needed): the modules pass their options to the functional forms as PyTorch's
do. graphgrad is not imported here.
"""
from __future__ import annotations

import os

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.join(HERE, "loss_modules_corpus.npz")

# input kinds: ("f", shape) any float, ("p", shape) positive, ("u", shape) in (0, 1), ("logp", shape) rows of
# log-probabilities (last axis), ("softmax", shape) rows of probabilities, ("int", shape, low, high) class
# indices, ("sign", shape) +-1, ("lengths", values) int64 lengths, ("const", array) as given.
# The first three and "logp" are differentiated (``DIFF``); the others are targets.
DIFF = ("f", "p", "u", "logp")
W5 = ("array", (0.5, 1.0, 2.0, 0.25, 1.5))
W3 = ("array", (0.3, 1.0, 2.0))

#: name -> (class name in torch.nn and gg.nn, keyword options, inputs)
CASES = {
    "mse_sum": ("MSELoss", dict(reduction="sum"), [("f", (4, 5)), ("f", (4, 5))]),
    "l1_none": ("L1Loss", dict(reduction="none"), [("f", (3, 4)), ("const", np.linspace(-1, 1, 12).reshape(3, 4))]),
    "huber": ("HuberLoss", dict(delta=0.5), [("f", (4, 5)), ("f", (4, 5))]),
    "smooth_l1_none": ("SmoothL1Loss", dict(beta=0.5, reduction="none"), [("f", (4, 5)), ("f", (4, 5))]),
    "cross_entropy_weighted": ("CrossEntropyLoss", dict(weight=W5, ignore_index=1, label_smoothing=0.1),
                               [("f", (6, 5)), ("const", np.array([0, 1, 4, 2, 1, 3]))]),
    "cross_entropy_probabilities": ("CrossEntropyLoss", dict(reduction="sum"), [("f", (4, 3)), ("softmax", (4, 3))]),
    "cross_entropy_spatial": ("CrossEntropyLoss", dict(weight=W3), [("f", (2, 3, 4, 5)), ("int", (2, 4, 5), 0, 3)]),
    "nll_sum": ("NLLLoss", dict(weight=W5, reduction="sum"), [("logp", (6, 5)), ("int", (6,), 0, 5)]),
    "bce_weighted": ("BCELoss", dict(weight=("array", (1.0, 0.5, 2.0))), [("u", (4, 3)), ("u", (4, 3))]),
    "bce_logits_pos_weight": ("BCEWithLogitsLoss", dict(pos_weight=W3), [("f", (4, 3)), ("u", (4, 3))]),
    "hinge_embedding": ("HingeEmbeddingLoss", dict(margin=0.5), [("f", (4, 5)), ("sign", (4, 5))]),
    "multi_margin": ("MultiMarginLoss", dict(p=2, margin=0.7, weight=W5), [("f", (4, 5)), ("int", (4,), 0, 5)]),
    "kl_div_batchmean_log_target": ("KLDivLoss", dict(reduction="batchmean", log_target=True),
                                    [("logp", (4, 5)), ("logp", (4, 5))]),
    "kl_div_none": ("KLDivLoss", dict(reduction="none"), [("logp", (3, 4)), ("softmax", (3, 4))]),
    "margin_ranking": ("MarginRankingLoss", dict(margin=0.2), [("f", (6,)), ("f", (6,)), ("sign", (6,))]),
    "soft_margin": ("SoftMarginLoss", dict(), [("f", (4, 5)), ("sign", (4, 5))]),
    "multilabel_soft_margin": ("MultiLabelSoftMarginLoss", dict(weight=W5),
                               [("f", (4, 5)), ("const", (np.arange(20).reshape(4, 5) % 3 == 0).astype(float))]),
    "cosine_embedding": ("CosineEmbeddingLoss", dict(margin=0.1, reduction="sum"),
                         [("f", (4, 5)), ("f", (4, 5)), ("const", np.array([1.0, -1.0, -1.0, 1.0]))]),
    "triplet_margin_p1_swap": ("TripletMarginLoss", dict(margin=2.0, p=1.0, swap=True),
                               [("f", (4, 5)), ("f", (4, 5)), ("f", (4, 5))]),
    "triplet_margin_with_distance": ("TripletMarginWithDistanceLoss", dict(margin=0.5, swap=True),
                                     [("f", (4, 5)), ("f", (4, 5)), ("f", (4, 5))]),
    "multilabel_margin": ("MultiLabelMarginLoss", dict(),
                          [("f", (3, 5)), ("const", np.array([[3, 0, -1, 1, 2], [1, 2, 3, -1, 0], [4, -1, 0, 0, 0]]))]),
    "poisson_nll_full": ("PoissonNLLLoss", dict(log_input=False, full=True), [("p", (4, 5)), ("int", (4, 5), 0, 6)]),
    "poisson_nll_log_input": ("PoissonNLLLoss", dict(), [("f", (4, 5)), ("int", (4, 5), 0, 6)]),
    "gaussian_nll_full": ("GaussianNLLLoss", dict(full=True, eps=1e-6), [("f", (4, 3)), ("f", (4, 3)), ("p", (4, 3))]),
    "gaussian_nll_per_sample_var": ("GaussianNLLLoss", dict(reduction="sum"), [("f", (4, 3)), ("f", (4, 3)), ("p", (4, 1))]),
    "ctc_mean": ("CTCLoss", dict(blank=0, zero_infinity=True),
                 [("logp", (7, 2, 4)), ("const", np.array([[1, 2, 1], [3, 3, 0]])), ("lengths", (7, 6)),
                  ("lengths", (3, 2))]),
    "ctc_sum_blank_last": ("CTCLoss", dict(blank=3, reduction="sum"),
                           [("logp", (6, 2, 4)), ("const", np.array([0, 1, 2, 2])), ("lengths", (6, 5)),
                            ("lengths", (2, 2))]),
}


def draw(rng, spec):
    """A case input, as a NumPy array (float64 for float kinds)."""
    kind = spec[0]
    if kind == "f":
        return rng.normal(size=spec[1])
    if kind == "p":
        return rng.uniform(0.2, 2.0, size=spec[1])
    if kind == "u":
        return rng.uniform(0.05, 0.95, size=spec[1])
    if kind in ("logp", "softmax"):
        z = rng.normal(size=spec[1])
        logp = z - np.log(np.exp(z).sum(axis=-1, keepdims=True))
        return logp if kind == "logp" else np.exp(logp)
    if kind == "int":
        return rng.integers(spec[2], spec[3], size=spec[1])
    if kind == "sign":
        return np.where(rng.uniform(size=spec[1]) < 0.5, -1.0, 1.0)
    if kind == "lengths":
        return np.array(spec[1], dtype=np.int64)
    if kind == "const":
        return np.asarray(spec[1])
    raise ValueError(f"unknown input kind {kind!r}")


def options(kwargs: dict) -> dict:
    """The keyword options with array options as float64 NumPy arrays."""
    return {k: np.array(v[1], dtype=np.float64) if isinstance(v, tuple) and v[0] == "array" else v
            for k, v in kwargs.items()}


def run(torch, name: str) -> dict:
    cls, kwargs, specs = CASES[name]
    rng = np.random.default_rng([ord(c) for c in name])
    inputs = [draw(rng, s) for s in specs]
    opts = options(kwargs)
    module = getattr(torch.nn, cls)(**{k: torch.tensor(v) if isinstance(v, np.ndarray) else v
                                       for k, v in opts.items()})
    tins = [torch.tensor(x, requires_grad=s[0] in DIFF) for x, s in zip(inputs, specs)]
    y = module(*tins)
    gy = rng.uniform(-1, 1, size=tuple(y.shape))
    y.backward(torch.tensor(gy))
    out = {f"{name}/y": y.detach().numpy(), f"{name}/gy": gy}
    for i, (x, t) in enumerate(zip(inputs, tins)):
        out[f"{name}/in{i}"] = x
        if t.requires_grad:
            out[f"{name}/grad/in{i}"] = t.grad.numpy()
    for key, value in opts.items():
        if isinstance(value, np.ndarray):
            out[f"{name}/opt/{key}"] = value
    return out


def main() -> None:
    import torch

    torch.set_default_dtype(torch.float64)
    arrays = {"torch_version": np.array(torch.__version__)}
    for name in CASES:
        arrays.update(run(torch, name))
    np.savez_compressed(CORPUS, **arrays)
    print(f"wrote {CORPUS}: {len(CASES)} cases (torch {torch.__version__})")


if __name__ == "__main__":
    main()
