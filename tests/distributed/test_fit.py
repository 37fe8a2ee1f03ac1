"""Keras-style fit, evaluate, predict and checkpoints under several ranks.

Two launches: fit_parallel.py on 2 ranks (its results must equal one process training on batches
twice as large, in float64, and only rank 0 may write), then fit_resume.py on 3 ranks from the
checkpoint the 2 ranks saved. The one-process references are computed here, in this process. The
rest runs in-process: a plain process never touches MPI, and the ``module.`` prefix of a wrapper.
"""
from __future__ import annotations

import csv
import os

import numpy as np
import pytest

import graphgrad as gg
import graphgrad.distributed as dist
from graphgrad.data import DataLoader, TensorDataset
from graphgrad.distributed import DistributedSampler, training
from graphgrad.train.callbacks import EarlyStopping
from tests.distributed.launch import HERE, needs_mpi, run_ranks
from tests.distributed.scripts.fit_common import BATCH, EPOCHS, SEED, blobs, make_model, weights

SCRIPTS = os.path.join(HERE, "scripts")


def in_epoch_order(batch_size: int) -> DataLoader:
    """One process reading the data in the order the ranks share it: the permutation of seed + epoch."""
    x, y, _, _ = blobs()
    dataset = TensorDataset(gg.tensor(x), gg.tensor(y))
    return DataLoader(dataset, batch_size=batch_size, sampler=DistributedSampler(dataset, 1, 0, seed=SEED))


def assert_weights_close(got: dict, expected: dict, what: str) -> None:
    assert sorted(got) == sorted(expected), what
    for name in expected:
        got_value = got[name].numpy() if hasattr(got[name], "numpy") else got[name]
        np.testing.assert_allclose(got_value, expected[name], rtol=0, atol=1e-10, err_msg=f"{what}: {name}")


@needs_mpi
def test_fit_on_two_ranks_equals_one_process_writes_once_and_resumes_on_three(tmp_path):
    out = run_ranks(2, os.path.join(SCRIPTS, "fit_parallel.py"), str(tmp_path)).stdout
    assert "ok 2 ranks" in out

    # one process, batches of 2 x BATCH in the same order
    x, y, x_val, y_val = blobs()
    reference = make_model(init_seed=0)
    expected = reference.fit(in_epoch_order(2 * BATCH), epochs=EPOCHS, validation_data=(x_val, y_val), verbose=0)
    result = gg.load(os.path.join(tmp_path, "result.safetensors"))
    assert_weights_close(result["weights"], weights(reference), "weights after the 2-rank fit")
    assert sorted(result["history"]) == sorted(expected.history)
    for key, values in expected.history.items():  # loss and every kind of metric, training and validation
        np.testing.assert_allclose(result["history"][key].numpy(), values, rtol=1e-10, atol=1e-12, err_msg=key)
    assert expected.history["val_accuracy"][-1] > 0.7  # it learned something
    for key, value in reference.evaluate(x_val, y_val).items():
        assert result["evaluate"][key] == pytest.approx(value, rel=1e-10, abs=1e-12), key
    np.testing.assert_allclose(result["predict"].numpy(), reference.predict(x_val), rtol=0, atol=1e-10)

    in_order = make_model(init_seed=0)
    in_order.fit(x, y, batch_size=2 * BATCH, epochs=5, shuffle=False, verbose=0,
                 callbacks=[EarlyStopping(monitor="loss", min_delta=1e9, patience=1)])
    assert_weights_close(result["in_order"], weights(in_order), "weights after the unshuffled fit")

    # only rank 0 wrote: files, CSV rows and progress lines appear once
    assert "files written per rank: [5, 0]" in out   # 3 ModelCheckpoint files, result, resume.ckpt
    assert "csv rows per rank: [3, 0]" in out
    progress = [line for line in out.splitlines() if line.startswith("Epoch ")]
    assert [line.split(" - ")[0] for line in progress] == [f"Epoch {e}/{EPOCHS}" for e in range(1, EPOCHS + 1)]
    with open(os.path.join(tmp_path, "log.csv"), newline="") as f:
        rows = list(csv.DictReader(f))
    assert [int(row["epoch"]) for row in rows] == list(range(EPOCHS))
    np.testing.assert_allclose([float(row["loss"]) for row in rows], expected.history["loss"], rtol=1e-10)
    assert sorted(os.listdir(tmp_path)) == sorted([f"ckpt-{e}.safetensors" for e in range(1, EPOCHS + 1)]
                                                  + ["log.csv", "result.safetensors", "resume.ckpt"])

    # the checkpoint of 2 ranks resumes on 3: the same as one process going on with batches of 3 x BATCH
    assert "ok 3 ranks" in run_ranks(3, os.path.join(SCRIPTS, "fit_resume.py"), str(tmp_path)).stdout
    reference.fit(in_epoch_order(3 * BATCH), epochs=EPOCHS + 2, initial_epoch=EPOCHS, verbose=0)
    assert_weights_close(gg.load(os.path.join(tmp_path, "resumed.safetensors")), weights(reference),
                         "weights after resuming on 3 ranks")


def test_one_process_without_a_launcher_never_joins_a_world(fresh_world):
    x, y, x_val, y_val = blobs()
    model = make_model()
    model.fit(x, y, batch_size=16, epochs=1, verbose=0, validation_data=(x_val, y_val))
    model.evaluate(x_val, y_val)
    assert model.predict(x_val).shape == (len(x_val), 3)
    assert training.data_parallel_world() is None and training.is_writer()
    assert not dist.is_initialized()


class Wrapper(gg.nn.Module):
    """Holds its network as ``module``, as a data-parallel wrapper does: state names get ``module.``."""

    def __init__(self, module):
        super().__init__()
        self.module = module


def test_checkpoints_match_names_across_a_wrappers_module_prefix(tmp_path):
    bare, other = make_model(init_seed=1), make_model(init_seed=2)
    wrapped = Wrapper(make_model(init_seed=3).module)
    assert all(name.startswith("module.") for name in wrapped.state_dict())

    gg.save_checkpoint(tmp_path / "wrapped.ckpt", wrapped, epoch=1)   # prefixed names ...
    gg.load_checkpoint(tmp_path / "wrapped.ckpt", bare)               # ... into the bare module
    assert_weights_close(weights(bare), {k[len("module."):]: v for k, v in weights(wrapped).items()}, "stripped")

    gg.save_checkpoint(tmp_path / "bare.ckpt", other, epoch=1)        # bare names into the wrapper
    gg.load_checkpoint(tmp_path / "bare.ckpt", wrapped)
    assert_weights_close(weights(wrapped), {"module." + k: v for k, v in weights(other).items()}, "prefixed")

    gg.save(make_model(init_seed=4).module.state_dict(), tmp_path / "w.safetensors")
    gg.save(Wrapper(make_model(init_seed=4).module).state_dict(), tmp_path / "w_prefixed.safetensors")
    bare.load_weights(str(tmp_path / "w_prefixed.safetensors"))
    assert_weights_close(weights(bare), {k: v.numpy() for k, v in gg.load(tmp_path / "w.safetensors").items()},
                         "load_weights")
    with pytest.raises(Exception, match="missing|unexpected"):       # other names still fail, as before
        gg.load_checkpoint(tmp_path / "wrapped.ckpt", gg.nn.Linear(4, 3).double())


def test_a_data_parallel_wrapper_saves_the_bare_module_and_loads_either_form(tmp_path, fresh_world):
    dist.init()
    wrapped = dist.DistributedDataParallel(make_model(init_seed=1).module)
    gg.save_checkpoint(tmp_path / "ddp.ckpt", wrapped, epoch=0)
    assert sorted(gg.load(tmp_path / "ddp.ckpt")["model"]) == sorted(make_model().state_dict())  # no prefix
    bare = make_model(init_seed=2)
    gg.load_checkpoint(tmp_path / "ddp.ckpt", bare)
    assert_weights_close(weights(bare), weights(wrapped.module), "wrapper saved, bare loaded")
    gg.save_checkpoint(tmp_path / "bare.ckpt", make_model(init_seed=3), epoch=0)
    gg.load_checkpoint(tmp_path / "bare.ckpt", wrapped)
    assert_weights_close(weights(wrapped.module), weights(make_model(init_seed=3)), "bare saved, wrapper loaded")
