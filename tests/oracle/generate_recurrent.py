"""Write the PyTorch-agreement corpus of the recurrent and attention layers (run by hand, with PyTorch):

    pip install torch==2.13.0
    python tests/oracle/generate_recurrent.py

For every case of ``CASES`` it builds the PyTorch module in float64 (seeded), draws the inputs (NumPy
generator seeded by the case name), runs the module, draws a random upstream gradient for every output
and takes the gradients of the inputs and of every parameter. Everything goes to
``recurrent_corpus.npz``: ``<case>/state/<param>``, ``<case>/in/<input>``, ``<case>/out<j>``,
``<case>/gout<j>``, ``<case>/grad_in/<input>``, ``<case>/grad_param/<param>``. ``CASES`` is also read
by ``tests/nn/test_recurrent_oracle.py`` (which runs graphgrad on the stored arrays, without PyTorch):
the same call works on both libraries because the layers share PyTorch's API.
"""
from __future__ import annotations

import os
import sys
import zlib

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.join(HERE, "recurrent_corpus.npz")


def _causal(L, S):
    return np.triu(np.ones((L, S), dtype=bool), 1)


def _padding(N, S):
    mask = np.zeros((N, S), dtype=bool)
    for n in range(N):
        mask[n, S - 1 - n % max(S - 1, 1):] = True  # pad the tail; never the whole row
    mask[:, 0] = False
    return mask


class Case:
    """One layer configuration: ``kind`` (the class name in both libraries), constructor ``kwargs``,
    the random inputs ``inputs`` (name -> shape; all differentiated), constant ``consts`` (name ->
    array, e.g. masks), ``call(module, arrays)`` returning the outputs (the same code runs on
    torch and graphgrad tensors) and ``torch_call`` when PyTorch needs a different call."""

    def __init__(self, name, kind, kwargs, inputs, call, consts=None, torch_call=None, eval_mode=False):
        self.name, self.kind, self.kwargs = name, kind, kwargs
        self.inputs, self.call, self.consts = inputs, call, consts or {}
        self.torch_call, self.eval_mode = torch_call or call, eval_mode

    def seed(self) -> int:
        return zlib.crc32(self.name.encode())

    def make_inputs(self) -> dict:
        rng = np.random.default_rng(self.seed())
        return {k: rng.standard_normal(shape) for k, shape in self.inputs.items()}


def flat(out):
    """Nested tuples of outputs as a flat list, ``None`` dropped."""
    if out is None:
        return []
    if isinstance(out, (tuple, list)):
        return [t for o in out for t in flat(o)]
    return [out]


CASES = [
    # ---- LSTM ----
    Case("lstm_basic", "LSTM", dict(input_size=3, hidden_size=4), {"x": (5, 2, 3)},
         lambda m, a: m(a["x"])),
    Case("lstm_2layer_bidir_batch_first_init", "LSTM",
         dict(input_size=3, hidden_size=4, num_layers=2, bidirectional=True, batch_first=True),
         {"x": (2, 5, 3), "h0": (4, 2, 4), "c0": (4, 2, 4)},
         lambda m, a: m(a["x"], (a["h0"], a["c0"]))),
    Case("lstm_nobias_unbatched_init", "LSTM", dict(input_size=3, hidden_size=4, bias=False),
         {"x": (4, 3), "h0": (1, 4), "c0": (1, 4)},
         lambda m, a: m(a["x"], (a["h0"], a["c0"]))),
    Case("lstm_3layer", "LSTM", dict(input_size=2, hidden_size=3, num_layers=3), {"x": (4, 3, 2)},
         lambda m, a: m(a["x"])),
    Case("lstm_long_2layer_bidir_batch_first_init", "LSTM",
         dict(input_size=5, hidden_size=7, num_layers=2, bidirectional=True, batch_first=True),
         {"x": (3, 9, 5), "h0": (4, 3, 7), "c0": (4, 3, 7)}, lambda m, a: m(a["x"], (a["h0"], a["c0"]))),
    Case("lstm_unbatched_bidir", "LSTM", dict(input_size=3, hidden_size=4, bidirectional=True), {"x": (6, 3)},
         lambda m, a: m(a["x"])),
    Case("lstm_proj_2layer_bidir_batch_first_init", "LSTM",
         dict(input_size=3, hidden_size=5, num_layers=2, bidirectional=True, batch_first=True, proj_size=2),
         {"x": (2, 4, 3), "h0": (4, 2, 2), "c0": (4, 2, 5)}, lambda m, a: m(a["x"], (a["h0"], a["c0"]))),
    Case("lstm_proj_unbatched", "LSTM", dict(input_size=3, hidden_size=4, proj_size=3), {"x": (5, 3)},
         lambda m, a: m(a["x"])),
    # ---- GRU ----
    Case("gru_long_3layer_bidir", "GRU", dict(input_size=4, hidden_size=6, num_layers=3, bidirectional=True),
         {"x": (8, 3, 4)}, lambda m, a: m(a["x"])),
    Case("gru_nobias_reverse_init", "GRU", dict(input_size=3, hidden_size=5, bias=False, bidirectional=True),
         {"x": (7, 2, 3), "h0": (2, 2, 5)}, lambda m, a: m(a["x"], a["h0"])),
    Case("gru_basic", "GRU", dict(input_size=3, hidden_size=4), {"x": (5, 2, 3)},
         lambda m, a: m(a["x"])),
    Case("gru_2layer_bidir_init", "GRU", dict(input_size=3, hidden_size=4, num_layers=2, bidirectional=True),
         {"x": (5, 2, 3), "h0": (4, 2, 4)}, lambda m, a: m(a["x"], a["h0"])),
    Case("gru_batch_first_nobias", "GRU", dict(input_size=3, hidden_size=4, batch_first=True, bias=False),
         {"x": (2, 4, 3), "h0": (1, 2, 4)}, lambda m, a: m(a["x"], a["h0"])),
    Case("gru_unbatched_bidir", "GRU", dict(input_size=3, hidden_size=2, bidirectional=True),
         {"x": (4, 3)}, lambda m, a: m(a["x"])),
    # ---- RNN ----
    Case("rnn_relu_2layer_bidir_init", "RNN",
         dict(input_size=3, hidden_size=4, num_layers=2, nonlinearity="relu", bidirectional=True),
         {"x": (4, 2, 3), "h0": (4, 2, 4)}, lambda m, a: m(a["x"], a["h0"])),
    # ---- cells ----
    Case("rnn_cell_no_state_relu", "RNNCell", dict(input_size=3, hidden_size=4, nonlinearity="relu"), {"x": (2, 3)},
         lambda m, a: m(a["x"])),
    Case("lstm_cell", "LSTMCell", dict(input_size=3, hidden_size=4), {"x": (2, 3), "h0": (2, 4), "c0": (2, 4)},
         lambda m, a: m(a["x"], (a["h0"], a["c0"]))),
    Case("gru_cell", "GRUCell", dict(input_size=3, hidden_size=4), {"x": (2, 3), "h0": (2, 4)},
         lambda m, a: m(a["x"], a["h0"])),
    Case("lstm_cell_unbatched", "LSTMCell", dict(input_size=3, hidden_size=4), {"x": (3,), "h0": (4,), "c0": (4,)},
         lambda m, a: m(a["x"], (a["h0"], a["c0"]))),
    Case("gru_cell_no_state_nobias", "GRUCell", dict(input_size=3, hidden_size=4, bias=False), {"x": (2, 3)},
         lambda m, a: m(a["x"])),
    # ---- MultiheadAttention ----
    Case("mha_self", "MultiheadAttention", dict(embed_dim=8, num_heads=2), {"x": (5, 3, 8)},
         lambda m, a: m(a["x"], a["x"], a["x"])),
    Case("mha_cross_kdim_vdim_batch_first_padding", "MultiheadAttention",
         dict(embed_dim=8, num_heads=2, kdim=6, vdim=5, batch_first=True),
         {"q": (3, 4, 8), "k": (3, 6, 6), "v": (3, 6, 5)},
         lambda m, a: m(a["q"], a["k"], a["v"], key_padding_mask=a["kpm"], average_attn_weights=False),
         consts={"kpm": _padding(3, 6)}),
    Case("mha_bool_masks", "MultiheadAttention", dict(embed_dim=8, num_heads=4),
         {"q": (5, 2, 8), "k": (5, 2, 8), "v": (5, 2, 8)},
         lambda m, a: m(a["q"], a["k"], a["v"], attn_mask=a["causal"], key_padding_mask=a["kpm"]),
         consts={"causal": _causal(5, 5), "kpm": _padding(2, 5)}),
    Case("mha_float_mask_3d_nobias", "MultiheadAttention", dict(embed_dim=6, num_heads=3, bias=False),
         {"q": (4, 2, 6), "k": (3, 2, 6), "v": (3, 2, 6), "mask": (6, 4, 3)},
         lambda m, a: m(a["q"], a["k"], a["v"], attn_mask=a["mask"])),
    Case("mha_is_causal", "MultiheadAttention", dict(embed_dim=8, num_heads=2, batch_first=True), {"x": (2, 5, 8)},
         lambda m, a: m(a["x"], a["x"], a["x"], is_causal=True),
         consts={"causal": _causal(5, 5)},
         torch_call=lambda m, a: m(a["x"], a["x"], a["x"], attn_mask=a["causal"], is_causal=True)),
    Case("mha_unbatched", "MultiheadAttention", dict(embed_dim=4, num_heads=2), {"q": (3, 4), "kv": (5, 4)},
         lambda m, a: m(a["q"], a["kv"], a["kv"], key_padding_mask=a["kpm"]),
         consts={"kpm": np.array([False, False, True, False, True])}),
    Case("mha_bias_kv_zero_attn_masks", "MultiheadAttention",
         dict(embed_dim=8, num_heads=2, add_bias_kv=True, add_zero_attn=True),
         {"q": (5, 2, 8), "k": (5, 2, 8), "v": (5, 2, 8)},
         lambda m, a: m(a["q"], a["k"], a["v"], attn_mask=a["causal"], key_padding_mask=a["kpm"]),
         consts={"causal": _causal(5, 5), "kpm": _padding(2, 5)}),
    Case("mha_bias_kv_self_batch_first", "MultiheadAttention",
         dict(embed_dim=6, num_heads=3, add_bias_kv=True, batch_first=True), {"x": (2, 4, 6)},
         lambda m, a: m(a["x"], a["x"], a["x"], need_weights=False)),
    # ---- TransformerEncoderLayer (eval: no dropout) ----
    Case("encoder_layer_post_norm_relu", "TransformerEncoderLayer",
         dict(d_model=8, nhead=2, dim_feedforward=12), {"x": (5, 2, 8)},
         lambda m, a: m(a["x"], src_mask=a["causal"]), consts={"causal": _causal(5, 5)}, eval_mode=True),
    Case("encoder_layer_pre_norm_gelu_batch_first_padding", "TransformerEncoderLayer",
         dict(d_model=8, nhead=4, dim_feedforward=16, activation="gelu", norm_first=True, batch_first=True),
         {"x": (3, 4, 8)}, lambda m, a: m(a["x"], src_key_padding_mask=a["kpm"]),
         consts={"kpm": _padding(3, 4)}, eval_mode=True),
]


def run_case(torch, case) -> dict:
    torch.manual_seed(case.seed())
    module = getattr(torch.nn, case.kind)(**case.kwargs).double()
    if case.eval_mode:
        module.eval()
    arrays = {f"state/{k}": v.detach().numpy().copy() for k, v in module.state_dict().items()}
    xs = case.make_inputs()
    tin = {k: torch.tensor(v, requires_grad=True) for k, v in xs.items()}
    targs = dict(tin)
    targs.update({k: torch.tensor(v) for k, v in case.consts.items()})
    outs = flat(case.torch_call(module, targs))
    rng = np.random.default_rng(case.seed() + 1)
    gouts = [rng.standard_normal(tuple(o.shape)) for o in outs]
    params = dict(module.named_parameters())
    grads = torch.autograd.grad(outs, list(tin.values()) + list(params.values()),
                                grad_outputs=[torch.tensor(g) for g in gouts], allow_unused=True)
    for k, v in xs.items():
        arrays[f"in/{k}"] = v
    for j, (o, g) in enumerate(zip(outs, gouts)):
        arrays[f"out{j}"] = o.detach().numpy().copy()
        arrays[f"gout{j}"] = g
    for k, g in zip(list(tin) + [f"param:{p}" for p in params], grads):
        if g is None:
            continue
        if k.startswith("param:"):
            arrays[f"grad_param/{k[6:]}"] = g.numpy().copy()
        else:
            arrays[f"grad_in/{k}"] = g.numpy().copy()
    return {f"{case.name}/{k}": v for k, v in arrays.items()}


def main() -> None:
    import torch

    torch.set_grad_enabled(True)
    corpus = {"torch_version": np.array(torch.__version__)}
    for case in CASES:
        corpus.update(run_case(torch, case))
    np.savez_compressed(CORPUS, **corpus)
    print(f"wrote {len(CASES)} cases, {os.path.getsize(CORPUS) / 1024:.0f} KB to {CORPUS}")


if __name__ == "__main__":
    sys.exit(main())
