"""graphgrad's recurrent and attention layers against PyTorch, without PyTorch: each case of
``tests/oracle/generate_recurrent.py`` loads PyTorch's weights into the graphgrad layer
(``load_state_dict``), runs it on the stored inputs, and compares the outputs and the gradients of the
inputs and of every parameter (for the stored upstream gradients) with PyTorch's."""
from __future__ import annotations

import os

import numpy as np
import pytest

import graphgrad as gg
from tests.oracle.generate_recurrent import CASES, CORPUS, flat

if not os.path.exists(CORPUS):
    pytest.skip("tests/oracle/recurrent_corpus.npz is missing: run `python tests/oracle/generate_recurrent.py` "
                "with PyTorch installed", allow_module_level=True)

DATA = np.load(CORPUS)
TOL = dict(rtol=1e-7, atol=1e-9)


def _arrays(case, group):
    prefix = f"{case.name}/{group}/"
    return {k[len(prefix):]: DATA[k] for k in DATA.files if k.startswith(prefix)}


def test_corpus_covers_every_case():
    names = {k.split("/")[0] for k in DATA.files if "/" in k}
    assert names == {c.name for c in CASES}


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_agrees_with_torch(case):
    module = getattr(gg.nn, case.kind)(**case.kwargs).double()
    module.load_state_dict(_arrays(case, "state"))
    if case.eval_mode:
        module.eval()
    inputs = {k: gg.tensor(v, requires_grad=True) for k, v in _arrays(case, "in").items()}
    args = dict(inputs)
    args.update({k: gg.tensor(v) for k, v in case.consts.items()})
    outs = flat(case.call(module, args))
    n_out = len([k for k in DATA.files if k.startswith(f"{case.name}/out")])
    assert len(outs) == n_out
    for j, o in enumerate(outs):
        np.testing.assert_allclose(o.numpy(), DATA[f"{case.name}/out{j}"], **TOL, err_msg=f"output {j}")
    params = dict(module.named_parameters())
    targets = list(inputs.values()) + list(params.values())
    grads = gg.grad(outs, targets, grad_outputs=[gg.tensor(DATA[f"{case.name}/gout{j}"]) for j in range(n_out)],
                    allow_unused=True)
    expected_in, expected_param = _arrays(case, "grad_in"), _arrays(case, "grad_param")
    for name, g in zip(list(inputs) + [f"param:{p}" for p in params], grads):
        key = name[6:] if name.startswith("param:") else name
        expected = (expected_param if name.startswith("param:") else expected_in).get(key)
        if expected is None:
            assert g is None or not np.any(g.numpy()), name
            continue
        assert g is not None, f"no gradient for {name}"
        np.testing.assert_allclose(g.numpy(), expected, **TOL, err_msg=f"gradient of {name}")
