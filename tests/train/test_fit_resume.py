"""Model.fit resumed from a checkpoint (initial_epoch=) trains exactly as the uninterrupted run, with
shuffling: with a seed (the order is a function of seed and epoch) and without one (the order comes
from graphgrad's default generator, which checkpoints save)."""
import numpy as np
import pytest

import graphgrad as gg


def _data():
    rng = np.random.default_rng(0)
    return rng.normal(size=(40, 3)).astype(np.float32), rng.integers(0, 2, size=40)


def _model():
    gg.manual_seed(1)
    model = gg.Sequential([gg.nn.Linear(3, 8), gg.nn.ReLU(), gg.nn.Dropout(0.2), gg.nn.Linear(8, 2)])
    model.compile(optimizer=gg.optim.SGD(model.parameters(), lr=0.1, momentum=0.9), loss="cross_entropy")
    return model


@pytest.mark.parametrize("seed", [7, None])
def test_resume_from_a_checkpoint_equals_the_uninterrupted_run(tmp_path, seed):
    x, y = _data()
    whole = _model()
    gg.manual_seed(5)
    whole.fit(x, y, batch_size=8, epochs=4, verbose=0, seed=seed)

    first = _model()
    gg.manual_seed(5)
    first.fit(x, y, batch_size=8, epochs=2, verbose=0, seed=seed)
    path = str(tmp_path / "ckpt")
    gg.save_checkpoint(path, first, first.optimizer)
    gg.manual_seed(123)  # anything drawn in between must not matter
    resumed = _model()
    gg.load_checkpoint(path, resumed, resumed.optimizer)
    resumed.fit(x, y, batch_size=8, epochs=4, verbose=0, seed=seed, initial_epoch=2)
    for a, b in zip(whole.parameters(), resumed.parameters()):
        np.testing.assert_array_equal(a.numpy(), b.numpy())


def test_model_checkpoint_with_training_state_resumes_exactly(tmp_path):
    x, y = _data()
    whole = _model()
    gg.manual_seed(5)
    whole.fit(x, y, batch_size=8, epochs=4, verbose=0)

    first = _model()
    gg.manual_seed(5)
    path = str(tmp_path / "epoch{epoch}.ckpt")
    saver = gg.train.callbacks.ModelCheckpoint(path, save_best_only=False, save_weights_only=False)
    first.fit(x, y, batch_size=8, epochs=2, verbose=0, callbacks=[saver])
    resumed = _model()
    info = gg.load_checkpoint(saver.last_saved, resumed, resumed.optimizer)
    assert info["epoch"] == 2
    resumed.fit(x, y, batch_size=8, epochs=4, verbose=0, initial_epoch=info["epoch"])
    for a, b in zip(whole.parameters(), resumed.parameters()):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
