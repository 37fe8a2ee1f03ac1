"""Modules with several inputs against PyTorch (tests/oracle/modules_corpus.npz, written by
tests/oracle/generate_modules.py): Transformer (post-norm with padding masks, pre-norm with gelu),
TransformerDecoderLayer, Bilinear, CosineSimilarity, TripletMarginLoss. Values and every gradient, float64."""
import numpy as np
import pytest

import graphgrad as gg
from tests.oracle.generate_modules import CASES, CORPUS, PAD, causal_length

DATA = np.load(CORPUS)


@pytest.mark.parametrize("name", list(CASES))
def test_module_matches_pytorch(name):
    cls, kwargs, shapes, options = CASES[name]
    module = getattr(gg.nn, cls)(**kwargs)
    prefix = f"{name}/state/"
    state = {k[len(prefix):]: gg.tensor(DATA[k]) for k in DATA.files if k.startswith(prefix)}
    if state:
        module.load_state_dict(state)
    module = module.to(gg.float64)
    inputs = [gg.tensor(DATA[f"{name}/in{i}"], requires_grad=True) for i in range(len(shapes))]
    call = {}
    if "causal_tgt" in options:
        call[options["causal_tgt"]] = gg.nn.Transformer.generate_square_subsequent_mask(causal_length(name, shapes),
                                                                                         dtype=gg.float64)
    if options.get("pad"):
        call["src_key_padding_mask"] = call["memory_key_padding_mask"] = gg.tensor(PAD)
    if options.get("memory_pad"):
        call["memory_key_padding_mask"] = gg.tensor(PAD)
    y = module(*inputs, **call)
    np.testing.assert_allclose(y.numpy(), DATA[f"{name}/y"], rtol=1e-9, atol=1e-11)
    (y * gg.tensor(DATA[f"{name}/gy"])).sum().backward()
    for i, x in enumerate(inputs):
        np.testing.assert_allclose(x.grad.numpy(), DATA[f"{name}/grad/in{i}"], rtol=1e-8, atol=1e-10)
    for key, p in module.named_parameters():
        np.testing.assert_allclose(p.grad.numpy(), DATA[f"{name}/grad/{key}"], rtol=1e-8, atol=1e-10, err_msg=key)
