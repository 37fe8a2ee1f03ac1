"""torch.load reads checkpoints written by PyTorch's own torch.save (weights only): the committed file
comes from tests/compat/data/make_pytorch_checkpoint.py, run once with real PyTorch."""
from __future__ import annotations

import io
import os
import pickle
import zipfile

import numpy as np
import pytest

import graphgrad as gg
import graphgrad.compat.torch as torch

HERE = os.path.dirname(os.path.abspath(__file__))
CHECKPOINT = os.path.join(HERE, "data", "pytorch_checkpoint.pt")


def test_a_pytorch_checkpoint_loads_with_its_values_views_and_dtypes():
    d = torch.load(CHECKPOINT)
    assert d["epoch"] == 7 and d["name"] == "run-1" and d["losses"] == [1.5, 0.75]
    assert d["nested"] == {"lr": 0.01, "betas": (0.9, 0.999)}
    assert list(d["model"]) == ["weight", "bias"]
    np.testing.assert_array_equal(d["model"]["weight"].numpy(), [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    assert isinstance(d["param"], gg.nn.Parameter) and d["param"].requires_grad
    base = np.arange(24, dtype=np.float32).reshape(4, 6)
    np.testing.assert_array_equal(d["view"].numpy(), base[1:3, ::2])
    np.testing.assert_array_equal(d["transposed"].numpy(), base.T)
    assert d["scalar"].shape == () and d["scalar"].dtype == gg.float64 and float(d["scalar"]) == 3.25
    assert d["half"].dtype == gg.float16 and d["half"].tolist() == [0.5, 2.0]
    assert d["bf16"].tolist() == [1.5, -2.0]  # (bfloat16 widened to float32)
    assert d["ints"].dtype == gg.int64 and d["mask"].tolist() == [True, False]
    assert d["bytes"].dtype == gg.uint8 and d["bytes"].tolist() == [0, 255]
    assert list(d["ordered"]) == ["b", "a"]


def test_a_pytorch_state_dict_loads_into_the_facade_model_and_from_a_buffer():
    model = torch.nn.Linear(3, 2)
    model.load_state_dict(torch.load(CHECKPOINT)["model"])
    np.testing.assert_allclose(model(torch.ones(1, 3)).detach().numpy(), [[6.5, 14.5]])
    with open(CHECKPOINT, "rb") as f:
        assert torch.load(io.BytesIO(f.read()))["epoch"] == 7


def test_a_pytorch_file_naming_other_globals_is_refused_before_importing_them(tmp_path):
    path = tmp_path / "model.pt"
    with zipfile.ZipFile(path, "w") as z:  # a pickle that would call os.system
        z.writestr("model/data.pkl", b"cos\nsystem\n(S'echo hi'\ntR.")
    with pytest.raises(pickle.UnpicklingError, match="os.system"):
        torch.load(str(path))
