"""load_checkpoint is all or nothing: when any part of the file cannot be applied (a bad random-number
state, an optimizer state that does not fit), the model, optimizer and random state are left as they were."""
import numpy as np
import pytest

import graphgrad as gg


def _setup():
    gg.manual_seed(0)
    model = gg.nn.Linear(3, 2)
    opt = gg.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    model(gg.ones((1, 3))).sum().backward()
    opt.step()
    return model, opt


def test_a_bad_random_state_leaves_everything_as_it_was(tmp_path):
    model, opt = _setup()
    path = str(tmp_path / "bad.ckpt")
    other = gg.nn.Linear(3, 2)
    gg.save({"model": other.state_dict(), "optimizer": None, "scheduler": None, "epoch": 3, "extra": None,
             "rng": {"graphgrad": {"bit_generator": "NoSuchGenerator"}, "generators": [], "numpy": None,
                     "python": None}}, path)
    weights = {k: v.numpy().copy() for k, v in model.state_dict().items()}
    state = gg.default_generator.get_state()
    with pytest.raises(ValueError, match="random-number state cannot be restored"):
        gg.load_checkpoint(path, model)
    for k, v in model.state_dict().items():
        np.testing.assert_array_equal(v.numpy(), weights[k])
    assert gg.default_generator.get_state() == state


def test_an_optimizer_state_that_does_not_fit_rolls_the_model_back(tmp_path):
    model, opt = _setup()
    bigger = gg.nn.Linear(3, 2)
    bigger_opt = gg.optim.SGD(list(bigger.parameters()) + [gg.nn.Parameter(gg.zeros(4))], lr=0.1, momentum=0.9)
    path = str(tmp_path / "mismatch.ckpt")
    gg.save_checkpoint(path, bigger, bigger_opt)
    weights = {k: v.numpy().copy() for k, v in model.state_dict().items()}
    with pytest.raises(Exception):
        gg.load_checkpoint(path, model, opt)
    for k, v in model.state_dict().items():
        np.testing.assert_array_equal(v.numpy(), weights[k])
    assert opt.state_dict()["param_groups"][0]["lr"] == 0.1
