"""gg.Model / gg.Sequential: compile, fit (arrays, validation, loaders), evaluate, predict,
summary, progress output with and without tqdm, train/eval modes."""
from __future__ import annotations

import numpy as np
import pytest

import graphgrad as gg
from graphgrad.train import model as model_module

try:
    import tqdm  # noqa: F401
    HAVE_TQDM = True
except ImportError:  # pragma: no cover - optional
    HAVE_TQDM = False


def blobs(n=120, seed=0):
    """Three well-separated Gaussian blobs in 2-D (float64 on purpose: fit casts to the model's dtype)."""
    rng = np.random.default_rng(seed)
    centres = np.array([[2.0, 0.0], [-2.0, 1.0], [0.0, -2.5]])
    y = rng.integers(0, 3, n)
    x = centres[y] + rng.normal(scale=0.4, size=(n, 2))
    return x, y


def mlp(seed=0):
    gg.manual_seed(seed)
    return gg.Sequential([gg.nn.Linear(2, 16), gg.nn.ReLU(), gg.nn.Linear(16, 3)])


def test_top_level_exports():
    assert gg.Model is gg.train.Model and gg.Sequential is gg.train.Sequential


def test_fit_improves_loss_and_accuracy():
    x, y = blobs()
    model = mlp()
    model.compile(optimizer=(gg.optim.Adam, {"lr": 0.05}), loss="cross_entropy", metrics=["accuracy"])
    before = model.evaluate(x, y)
    history = model.fit(x, y, epochs=15, batch_size=16, verbose=0, seed=0)
    assert model.history is history
    losses = history.history["loss"]
    assert len(losses) == 15 and history.epoch == list(range(15))
    assert losses[-1] < 0.5 * losses[0]
    after = model.evaluate(x, y)
    assert after["loss"] < before["loss"] and after["accuracy"] > 0.9
    assert set(after) == {"loss", "accuracy"}


def test_fit_is_reproducible_with_seed():
    x, y = blobs()
    results = []
    for _ in range(2):
        model = mlp(seed=1)
        model.compile("sgd", "cross_entropy")
        results.append(model.fit(x, y, epochs=3, verbose=0, seed=7).history["loss"])
    assert results[0] == results[1]


def test_validation_split_and_validation_data():
    x, y = blobs(100)
    model = mlp()
    model.compile(optimizer="adam", loss="cross_entropy", metrics=["accuracy"])
    h = model.fit(x, y, epochs=2, verbose=0, validation_split=0.25)
    assert set(h.history) == {"loss", "accuracy", "val_loss", "val_accuracy"}
    # the held-out samples are the last 25% (as in Keras): val metrics equal evaluate on them
    assert h.history["val_loss"][-1] == pytest.approx(model.evaluate(x[75:], y[75:])["loss"], rel=1e-6)
    h = model.fit(x[:80], y[:80], epochs=1, verbose=0, validation_data=(x[80:], y[80:]))
    assert h.history["val_accuracy"][0] == pytest.approx(model.evaluate(x[80:], y[80:])["accuracy"])
    with pytest.raises(ValueError, match="validation_split"):
        model.fit(x, y, validation_split=1.5, verbose=0)


def test_loader_input():
    x, y = blobs(96)
    dataset = gg.data.TensorDataset(gg.tensor(x.astype(np.float32)), gg.tensor(y))
    loader = gg.data.DataLoader(dataset, batch_size=16, shuffle=True, seed=0)
    model = mlp()
    model.compile(optimizer=(gg.optim.Adam, {"lr": 0.05}), loss="cross_entropy", metrics=["accuracy"])
    h = model.fit(loader, epochs=10, verbose=0, validation_data=gg.data.DataLoader(dataset, batch_size=32))
    assert h.history["loss"][-1] < h.history["loss"][0]
    assert model.evaluate(loader)["accuracy"] == pytest.approx(model.evaluate(x, y)["accuracy"])
    assert model.predict(gg.data.DataLoader(dataset, batch_size=10)).shape == (96, 3)
    with pytest.raises(ValueError, match="y must be None"):
        model.fit(loader, y, verbose=0)
    with pytest.raises(ValueError, match="validation_data"):
        model.fit(loader, validation_split=0.2, verbose=0)


def test_predict_matches_forward_and_uses_eval_mode_without_grad():
    x, _ = blobs(50)
    gg.manual_seed(0)
    model = gg.Sequential([gg.nn.Linear(2, 8), gg.nn.Dropout(0.5), gg.nn.Linear(8, 3)])
    out = model.predict(x, batch_size=7)
    assert isinstance(out, np.ndarray) and out.shape == (50, 3) and out.dtype == np.float32
    model.eval()
    expected = model(gg.tensor(x.astype(np.float32))).numpy()
    model.train()
    np.testing.assert_allclose(out, expected, rtol=1e-6)  # dropout off: deterministic
    assert model.training  # the mode is restored
    np.testing.assert_array_equal(model.predict_classes(x), out.argmax(1))

    seen = []

    class Probe(gg.nn.Module):
        def forward(self, t):
            seen.append((self.training, gg.is_grad_enabled()))
            return t

    model = gg.Model(gg.nn.Sequential(gg.nn.Linear(2, 3), Probe()))
    model.compile("sgd", "cross_entropy")
    model.fit(x[:8], np.zeros(8, int), epochs=1, batch_size=8, verbose=0)
    model.evaluate(x[:8], np.zeros(8, int), batch_size=8)
    model.predict(x[:8], batch_size=8)
    assert seen == [(True, True), (False, False), (False, False)]


def test_regression_mse_with_column_outputs():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(128, 3))
    y = x @ np.array([1.0, -2.0, 0.5]) + 0.3  # (N,) targets, (N, 1) outputs
    gg.manual_seed(0)
    model = gg.Sequential([gg.nn.Linear(3, 1)])
    model.compile(optimizer=(gg.optim.SGD, {"lr": 0.1}), loss="mse", metrics=["mae"])
    h = model.fit(x, y, epochs=30, batch_size=32, verbose=0)
    assert h.history["loss"][-1] < 1e-3
    assert model.evaluate(x, y)["mae"] < 0.05


def test_compile_options():
    model = mlp()
    model.compile(optimizer="sgd", loss="cross_entropy")
    assert isinstance(model.optimizer, gg.optim.SGD) and model.optimizer.param_groups[0]["lr"] == 0.01
    opt = gg.optim.Adam(model.parameters(), lr=0.02)
    model.compile(optimizer=opt, loss=gg.nn.CrossEntropyLoss(), metrics=[gg.train.metrics.Accuracy(), "f1"])
    assert model.optimizer is opt
    x, y = blobs(32)
    logs = model.evaluate(x, y)
    assert set(logs) == {"loss", "accuracy", "f1"}
    model.compile(optimizer="adam", loss=lambda out, t: gg.cross_entropy(out, t))
    model.fit(x, y, epochs=1, verbose=0)
    with pytest.raises(ValueError, match="unknown optimizer"):
        model.compile(optimizer="nope", loss="mse")
    with pytest.raises(ValueError, match="unknown loss"):
        model.compile(loss="nope")
    with pytest.raises(RuntimeError, match="compile"):
        mlp().fit(x, y, verbose=0)


def test_model_is_its_module():
    net = gg.nn.Sequential(gg.nn.Linear(2, 4), gg.nn.ReLU(), gg.nn.Linear(4, 3))
    model = gg.Model(net)
    assert list(model.state_dict()) == list(net.state_dict()) == ["0.weight", "0.bias", "2.weight", "2.bias"]
    assert [id(p) for p in model.parameters()] == [id(p) for p in net.parameters()]
    model.eval()
    assert not net.training and not net[0].training and not model.training
    model.train()
    assert net.training
    copy = gg.Model(gg.nn.Sequential(gg.nn.Linear(2, 4), gg.nn.ReLU(), gg.nn.Linear(4, 3)))
    copy.load_state_dict(net.state_dict())
    np.testing.assert_array_equal(copy.module[0].weight.numpy(), net[0].weight.numpy())


def test_subclassed_model():
    class Net(gg.Model):
        def __init__(self):
            super().__init__()
            self.fc1 = gg.nn.Linear(2, 8)
            self.fc2 = gg.nn.Linear(8, 3)

        def forward(self, x):
            return self.fc2(gg.relu(self.fc1(x)))

    gg.manual_seed(0)
    net = Net()
    net.compile(optimizer=(gg.optim.Adam, {"lr": 0.05}), loss="cross_entropy", metrics=["accuracy"])
    x, y = blobs()
    h = net.fit(x, y, epochs=5, verbose=0)
    assert h.history["loss"][-1] < h.history["loss"][0]
    text = net.summary(print_fn=None)
    assert "fc1 (Linear)" in text and "(None, 8)" in text and "Total params: 51" in text


def test_summary_shapes_and_counts(capsys):
    model = gg.Sequential([gg.nn.Linear(4, 8), gg.nn.ReLU(), gg.nn.Linear(8, 3, bias=False)])
    model.module[2].weight.requires_grad = False  # frozen: counted as non-trainable
    text = model.summary(input_shape=(4,))
    assert capsys.readouterr().out.strip() == text.strip()
    lines = text.splitlines()
    row = {line.split()[0]: line for line in lines if line[:1].isdigit()}
    assert "(Linear)" in row["0"] and "(None, 8)" in row["0"] and row["0"].rstrip().endswith("40")
    assert "(ReLU)" in row["1"] and "(None, 8)" in row["1"] and row["1"].rstrip().endswith("0")
    assert "(None, 3)" in row["2"] and row["2"].rstrip().endswith("24")
    assert "Total params: 64" in text and "Trainable params: 40" in text and "Non-trainable params: 24" in text
    # without an input shape or data seen: counts only
    fresh = gg.Sequential([gg.nn.Linear(4, 8)])
    assert "?" in fresh.summary(print_fn=None)
    # after fit, the input shape is known
    x, y = blobs(16)
    model = mlp()
    model.compile("sgd", "cross_entropy")
    model.fit(x, y, epochs=1, verbose=0)
    assert "Input shape: (None, 2)" in model.summary(print_fn=None)


def test_summary_depth_and_conv():
    gg.manual_seed(0)
    block = gg.nn.Sequential(gg.nn.Conv2d(1, 4, 3, padding=1), gg.nn.ReLU())
    model = gg.Sequential([block, gg.nn.Flatten(), gg.nn.Linear(4 * 6 * 6, 2)])
    text = model.summary(input_shape=(1, 6, 6), depth=2, print_fn=None)
    assert "0 (Sequential)" in text and "(None, 4, 6, 6)" in text and "(None, 144)" in text
    assert "  0 (Conv2d)" in text  # nested rows are indented
    assert f"Total params: {4 * 9 + 4 + 144 * 2 + 2}" in text


def test_verbose_with_tqdm(capsys):
    if not HAVE_TQDM:
        pytest.skip("tqdm is not installed")
    x, y = blobs(40)
    model = mlp()
    model.compile("adam", "cross_entropy", metrics=["accuracy"])
    model.fit(x, y, epochs=2, batch_size=10, verbose=1, validation_split=0.25)
    out = capsys.readouterr().out
    assert "Epoch 1/2" in out and "Epoch 2/2" in out
    assert "loss=" in out and "accuracy=" in out and "val_loss=" in out and "3/3" in out


def test_verbose_without_tqdm(capsys, monkeypatch):
    monkeypatch.setattr(model_module, "_load_tqdm", lambda: None)
    x, y = blobs(40)
    model = mlp()
    model.compile("adam", "cross_entropy", metrics=["accuracy"])
    model.fit(x, y, epochs=3, batch_size=10, verbose=1)
    lines = [line for line in capsys.readouterr().out.splitlines() if line]
    assert len(lines) == 3 and lines[0].startswith("Epoch 1/3") and "loss: " in lines[0] and "accuracy: " in lines[0]


def test_verbose_levels(capsys):
    x, y = blobs(40)
    model = mlp()
    model.compile("adam", "cross_entropy")
    model.fit(x, y, epochs=2, verbose=0)
    assert capsys.readouterr().out == ""
    model.fit(x, y, epochs=2, verbose=2)
    lines = [line for line in capsys.readouterr().out.splitlines() if line]
    assert [line.split(" - ")[0] for line in lines] == ["Epoch 1/2", "Epoch 2/2"]
    model.evaluate(x, y, verbose=1)
    assert capsys.readouterr().out.startswith("loss: ")


def test_stop_training_flag():
    class StopAfterTwo(gg.train.Callback):
        def on_train_batch_end(self, batch, logs=None):
            if batch == 1:
                self.model.stop_training = True

    x, y = blobs(64)
    model = mlp()
    model.compile("sgd", "cross_entropy")
    h = model.fit(x, y, epochs=5, batch_size=8, verbose=0, callbacks=[StopAfterTwo()])
    assert len(h.history["loss"]) == 1


def test_sequential_add_and_indexing():
    model = gg.Sequential()
    model.add(gg.nn.Linear(2, 3)).add(gg.nn.ReLU())
    assert len(model) == 2 and isinstance(model[0], gg.nn.Linear) and len(model.layers) == 2
    with pytest.raises(TypeError):
        model.add("relu")
