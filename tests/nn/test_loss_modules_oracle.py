"""Every loss module of gg.nn against PyTorch's module of the same name, built with the same options
(tests/oracle/loss_modules_corpus.npz, written by tests/oracle/generate_loss_modules.py): values and the
gradients of the differentiable inputs, float64. The functional forms have their own oracle cases;
these check that each module passes its options (weights, margins, reductions, ignore_index, label
smoothing, log_target, full, blank...) through as PyTorch's modules do."""
import numpy as np
import pytest

import graphgrad as gg
from tests.oracle.generate_loss_modules import CASES, CORPUS, DIFF, options

DATA = np.load(CORPUS)


def test_every_loss_module_has_a_case():
    covered = {cls for cls, _, _ in CASES.values()}
    modules = {name for name in dir(gg.nn)
               if name.endswith("Loss") and not name.startswith("_") and isinstance(getattr(gg.nn, name), type)}
    modules.discard("AdaptiveLogSoftmaxWithLoss")  # a layer with parameters: its PyTorch check is in test_layers
    assert modules - covered == set(), f"loss modules without a PyTorch case: {sorted(modules - covered)}"


@pytest.mark.parametrize("name", list(CASES))
def test_loss_module_matches_pytorch(name):
    cls, kwargs, specs = CASES[name]
    opts = {k: gg.tensor(DATA[f"{name}/opt/{k}"]) if isinstance(v, np.ndarray) else v
            for k, v in options(kwargs).items()}
    module = getattr(gg.nn, cls)(**opts)
    inputs = [gg.tensor(DATA[f"{name}/in{i}"], requires_grad=spec[0] in DIFF) for i, spec in enumerate(specs)]
    y = module(*inputs)
    np.testing.assert_allclose(y.numpy(), DATA[f"{name}/y"], rtol=1e-9, atol=1e-11)
    (y * gg.tensor(DATA[f"{name}/gy"])).sum().backward()
    for i, x in enumerate(inputs):
        if x.requires_grad:
            np.testing.assert_allclose(x.grad.numpy(), DATA[f"{name}/grad/in{i}"], rtol=1e-8, atol=1e-10,
                                       err_msg=f"{name}: gradient of input {i}")
