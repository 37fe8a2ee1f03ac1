"""Write the PyTorch-agreement corpus of modules that take several inputs (run by hand, with PyTorch):

    python tests/oracle/generate_modules.py

For every case of ``CASES``: the ``torch.nn`` module of that name (float64, weights from a fixed seed,
dropout 0), called on fixed inputs with keyword options (masks), a fixed upstream gradient
back-propagated. ``modules_corpus.npz`` holds ``<case>/state/<key>``, ``<case>/in<i>``, ``<case>/y``,
``<case>/gy``, ``<case>/grad/in<i>`` and ``<case>/grad/<param>``. tests/nn/test_modules_oracle.py replays
them with graphgrad (no PyTorch needed). graphgrad is not imported here.
"""
from __future__ import annotations

import os

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.join(HERE, "modules_corpus.npz")

PAD = np.array([[False] * 6 + [True], [False] * 7])

#: name -> (class name in torch.nn and gg.nn, constructor kwargs, input shapes, call options). Options
#: name masks: "causal_tgt" (the square subsequent mask over the second input's length) and "pad"
#: (PAD as the source / memory key padding mask).
CASES = {
    "transformer_post_norm": ("Transformer", dict(d_model=8, nhead=2, num_encoder_layers=2, num_decoder_layers=2,
                                                  dim_feedforward=16, dropout=0.0, batch_first=True),
                              [(2, 7, 8), (2, 5, 8)], {"causal_tgt": "tgt_mask", "pad": True}),
    "transformer_norm_first_gelu": ("Transformer", dict(d_model=8, nhead=4, num_encoder_layers=1, num_decoder_layers=2,
                                                        dim_feedforward=12, dropout=0.0, activation="gelu",
                                                        norm_first=True),
                                    [(7, 2, 8), (5, 2, 8)], {"causal_tgt": "tgt_mask"}),
    "decoder_layer": ("TransformerDecoderLayer", dict(d_model=8, nhead=2, dim_feedforward=16, dropout=0.0,
                                                      batch_first=True),
                      [(2, 5, 8), (2, 7, 8)], {"causal_tgt": "tgt_mask", "memory_pad": True, "tgt_input": 0}),
    "bilinear": ("Bilinear", dict(in1_features=3, in2_features=4, out_features=2), [(5, 3), (5, 4)], {}),
    "cosine_similarity": ("CosineSimilarity", dict(dim=1), [(4, 6), (4, 6)], {}),
    "triplet_margin_loss": ("TripletMarginLoss", dict(margin=0.5, swap=True), [(4, 6), (4, 6), (4, 6)], {}),
}


def causal_length(name: str, shapes: list) -> int:
    """The target length of a case's causal mask (its module's batch_first decides the axis)."""
    kwargs, options = CASES[name][1], CASES[name][3]
    tgt = shapes[options.get("tgt_input", 1)]
    return tgt[1] if kwargs.get("batch_first") else tgt[0]


def run(torch, name: str) -> dict:
    cls, kwargs, shapes, options = CASES[name]
    torch.manual_seed(0)
    module = getattr(torch.nn, cls)(**kwargs).double()
    rng = np.random.default_rng([ord(c) for c in name])
    inputs = [rng.normal(size=s) for s in shapes]
    state = {k: v.detach().numpy().copy() for k, v in module.state_dict().items()}
    tins = [torch.tensor(x, requires_grad=True) for x in inputs]
    call = {}
    if "causal_tgt" in options:
        call[options["causal_tgt"]] = torch.nn.Transformer.generate_square_subsequent_mask(
            causal_length(name, shapes), dtype=torch.float64)
    if options.get("pad"):
        call["src_key_padding_mask"] = torch.tensor(PAD)
        call["memory_key_padding_mask"] = torch.tensor(PAD)
    if options.get("memory_pad"):
        call["memory_key_padding_mask"] = torch.tensor(PAD)
    y = module(*tins, **call)
    gy = rng.uniform(-1, 1, size=tuple(y.shape))
    y.backward(torch.tensor(gy))
    out = {f"{name}/y": y.detach().numpy(), f"{name}/gy": gy}
    for i, (x, t) in enumerate(zip(inputs, tins)):
        out[f"{name}/in{i}"] = x
        out[f"{name}/grad/in{i}"] = t.grad.numpy()
    for key, value in state.items():
        out[f"{name}/state/{key}"] = value
    for key, p in module.named_parameters():
        out[f"{name}/grad/{key}"] = p.grad.numpy()
    return out


def main() -> None:
    import torch

    arrays = {"torch_version": np.array(torch.__version__)}
    for name in CASES:
        arrays.update(run(torch, name))
    np.savez_compressed(CORPUS, **arrays)
    print(f"wrote {CORPUS}: {len(CASES)} cases (torch {torch.__version__})")


if __name__ == "__main__":
    main()
