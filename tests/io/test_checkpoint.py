"""gg.save / gg.load (safetensors and npz), training checkpoints that resume bit-identically, atomic
writes that survive a crash mid-save, and clear errors for a checkpoint of the wrong shape."""
from __future__ import annotations

import importlib.util
import os
import random
import signal
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import graphgrad as gg
from graphgrad.io import checkpoint

HAVE_SAFETENSORS = importlib.util.find_spec("safetensors") is not None

needs_safetensors = pytest.mark.skipif(not HAVE_SAFETENSORS, reason="safetensors is not installed")
FORMATS = [pytest.param("safetensors", marks=needs_safetensors), "npz"]
SUFFIX = {"safetensors": ".safetensors", "npz": ".npz"}


def _equal(a, b) -> bool:
    """Exact structural equality: same container types, same keys, tensors bitwise equal with the same dtype."""
    if isinstance(a, gg.Tensor) or isinstance(b, gg.Tensor):
        if not (isinstance(a, gg.Tensor) and isinstance(b, gg.Tensor)):
            a_arr = a.numpy() if isinstance(a, gg.Tensor) else np.asarray(a)
            b_arr = b.numpy() if isinstance(b, gg.Tensor) else np.asarray(b)
        else:
            a_arr, b_arr = a.numpy(), b.numpy()
        return a_arr.dtype == b_arr.dtype and a_arr.shape == b_arr.shape and a_arr.tobytes() == b_arr.tobytes()
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return False
    if isinstance(a, np.generic):
        return type(a) is type(b) and a.tobytes() == b.tobytes()
    if isinstance(a, dict):
        return (isinstance(b, dict) and list(a) == list(b)
                and all(type(ka) is type(kb) for ka, kb in zip(a, b)) and all(_equal(a[k], b[k]) for k in a))
    if isinstance(a, (list, tuple)):
        return type(a) is type(b) and len(a) == len(b) and all(_equal(x, y) for x, y in zip(a, b))
    if isinstance(a, float) and a != a:
        return isinstance(b, float) and b != b
    return type(a) is type(b) and a == b


def _state_dict():
    rng = np.random.default_rng(0)
    return {
        "fc.weight": gg.tensor(rng.standard_normal((3, 4)).astype(np.float32)),
        "fc.bias": gg.tensor(rng.standard_normal(3).astype(np.float64)),
        "half": gg.tensor(rng.standard_normal((2, 2)).astype(np.float16)),
        "counts": gg.tensor(np.array([1, -2, 2**40], dtype=np.int64)),
        "small": gg.tensor(np.array([1, 2, 255], dtype=np.uint8)),
        "mask": gg.tensor(np.array([[True, False], [False, True]])),
        "scalar": gg.tensor(np.array(3.5, dtype=np.float32)),
        "scalar_int": gg.tensor(np.array(7, dtype=np.int64)),
        "empty": gg.tensor(np.zeros((0, 3), dtype=np.float32)),
    }


# ---- round trips -------------------------------------------------------------------------------------
@pytest.mark.parametrize("fmt", FORMATS)
def test_state_dict_round_trip(tmp_path, fmt):
    sd = _state_dict()
    path = tmp_path / f"model{SUFFIX[fmt]}"
    gg.save(sd, path)
    back = gg.load(path)
    assert list(back) == list(sd)  # order kept
    for key in sd:
        assert isinstance(back[key], gg.Tensor)
        assert back[key].dtype == sd[key].dtype and back[key].shape == sd[key].shape, key
        assert back[key].numpy().tobytes() == sd[key].numpy().tobytes(), key
    assert back["scalar"].shape == () and back["scalar"].item() == 3.5


@pytest.mark.parametrize("fmt", FORMATS)
def test_nested_round_trip(tmp_path, fmt):
    sd = _state_dict()
    obj = {
        "model": sd,
        "optimizer": {"state": {0: {"step": 3, "exp_avg": sd["fc.weight"] * 2},
                                1: {"step": np.int64(3), "exp_avg": np.ones(3, dtype=np.float64)}},
                      "param_groups": [{"lr": 0.1, "betas": (0.9, 0.999), "eps": 1e-8, "params": [0, 1],
                                        "amsgrad": False, "name": None}]},
        "scheduler": {"last_epoch": 4, "_last_lr": [0.025], "gamma": 0.5},
        "epoch": 3,
        "big": 2**100 + 1,
        "weird": {"__gg_tensor__": "not a tag", (1, "a"): 2.5, 1.5: [], None: ()},
        "floats": [float("inf"), -0.0, 1 / 3, float("nan")],
        "np_scalars": [np.float32(1 / 3), np.float16(0.1), np.bool_(True), np.uint8(200)],
        "text": "héllo\n\"quoted\"",
        "raw": np.arange(6, dtype=np.int32).reshape(2, 3)[:, ::2],  # a non-contiguous array
    }
    path = tmp_path / f"ckpt{SUFFIX[fmt]}"
    gg.save(obj, path)
    back = gg.load(path)
    expected = dict(obj, raw=gg.tensor(np.ascontiguousarray(obj["raw"])))
    expected["optimizer"]["state"][1]["exp_avg"] = gg.tensor(obj["optimizer"]["state"][1]["exp_avg"])
    assert _equal(back, expected)
    assert isinstance(back["optimizer"]["state"][1]["step"], np.int64)


@pytest.mark.parametrize("fmt", FORMATS)
def test_top_level_tensor_and_key_collisions(tmp_path, fmt):
    path = tmp_path / f"x{SUFFIX[fmt]}"
    t = gg.tensor([1.0, 2.0])
    gg.save(t, path)
    assert _equal(gg.load(path), t)
    # "a.b" and a -> b flatten to the same dotted key: both must survive
    obj = {"a.b": gg.tensor([1]), "a": {"b": gg.tensor([2])}, "__graphgrad__": gg.tensor([3])}
    gg.save(obj, path)
    assert _equal(gg.load(path), obj)


@needs_safetensors
def test_flat_state_dict_is_a_plain_safetensors_file(tmp_path):
    from safetensors.numpy import load_file, save_file

    sd = _state_dict()
    path = tmp_path / "m.safetensors"
    gg.save(sd, path)
    plain = load_file(str(path))  # other tools see the tensors under their own names
    assert set(plain) == set(sd)
    np.testing.assert_array_equal(plain["fc.weight"], sd["fc.weight"].numpy())
    # and a file written by another tool loads as a flat dict of Tensors
    save_file({"w": np.ones((2, 2), np.float32)}, str(tmp_path / "other.safetensors"))
    other = gg.load(tmp_path / "other.safetensors")
    assert list(other) == ["w"] and isinstance(other["w"], gg.Tensor)


def test_npz_is_a_plain_npz_file(tmp_path):
    sd = _state_dict()
    gg.save(sd, tmp_path / "m.npz")
    with np.load(tmp_path / "m.npz", allow_pickle=False) as npz:
        np.testing.assert_array_equal(npz["fc.weight"], sd["fc.weight"].numpy())
    np.savez(tmp_path / "other.npz", w=np.ones(2))
    assert _equal(gg.load(tmp_path / "other.npz"), {"w": gg.tensor(np.ones(2))})


def test_unsupported_values_are_rejected_with_their_path(tmp_path):
    with pytest.raises(TypeError, match=r"'model\.fn'"):
        gg.save({"model": {"fn": object()}}, tmp_path / "x.npz")
    with pytest.raises(TypeError, match="object"):
        gg.save({"a": np.array([object()])}, tmp_path / "x.npz")
    with pytest.raises(ValueError, match="unknown checkpoint format"):
        gg.save({}, tmp_path / "x", format="pickle")
    assert not os.listdir(tmp_path)


# ---- format selection ------------------------------------------------------------------------------------
def _is_zip(path) -> bool:
    with open(path, "rb") as f:
        return f.read(2) == b"PK"


@needs_safetensors
def test_default_format_with_safetensors(tmp_path):
    for name, zipped in (("a.safetensors", False), ("a.ckpt", False), ("noext", False), ("a.npz", True)):
        gg.save({"w": gg.tensor([1.0])}, tmp_path / name)
        assert _is_zip(tmp_path / name) == zipped, name
        assert _equal(gg.load(tmp_path / name), {"w": gg.tensor([1.0])})
    gg.save({"w": gg.tensor([1.0])}, tmp_path / "forced.safetensors", format="npz")  # explicit wins
    assert _is_zip(tmp_path / "forced.safetensors")
    assert _equal(gg.load(tmp_path / "forced.safetensors"), {"w": gg.tensor([1.0])})


@pytest.fixture
def no_safetensors(monkeypatch):
    """Make `import safetensors` fail as if the package were not installed."""
    for name in list(sys.modules):
        if name == "safetensors" or name.startswith("safetensors."):
            monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "safetensors", None)
    monkeypatch.setitem(sys.modules, "safetensors.numpy", None)


def test_default_format_without_safetensors(tmp_path, no_safetensors):
    obj = {"model": {"w": gg.tensor([1.0, 2.0])}, "epoch": 2}
    for name in ("a.ckpt", "noext", "a.npz"):
        gg.save(obj, tmp_path / name)
        assert _is_zip(tmp_path / name), name
        assert _equal(gg.load(tmp_path / name), obj)
    with pytest.raises(ImportError, match="pip install"):
        gg.save(obj, tmp_path / "a.safetensors")
    with pytest.raises(ImportError, match="pip install"):
        gg.save(obj, tmp_path / "b", format="safetensors")
    assert not (tmp_path / "a.safetensors").exists()


@needs_safetensors
def test_loading_safetensors_without_the_package_says_how_to_fix(tmp_path, monkeypatch):
    gg.save({"w": gg.tensor([1.0])}, tmp_path / "a.safetensors")
    monkeypatch.setattr(checkpoint, "_safetensors", lambda: None)
    with pytest.raises(ImportError, match="pip install"):
        gg.load(tmp_path / "a.safetensors")


# ---- atomic writes ---------------------------------------------------------------------------------------
class SimulatedCrash(Exception):
    pass


class _CrashingFile:
    """A file that accepts ``budget`` bytes, then dies mid-write (after writing part of the chunk)."""

    def __init__(self, f, budget: int):
        self._f, self._budget = f, budget

    def write(self, data):
        data = bytes(data)
        if len(data) > self._budget:
            self._f.write(data[:self._budget])
            self._f.flush()
            raise SimulatedCrash("killed mid-save")
        self._budget -= len(data)
        return self._f.write(data)

    def __getattr__(self, name):
        return getattr(self._f, name)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return self._f.__exit__(*exc)


def _old_and_new():
    old = {"model": {"w": gg.tensor(np.arange(1000, dtype=np.float32))}, "epoch": 1}
    new = {"model": {"w": gg.tensor(-np.arange(1000, dtype=np.float32))}, "epoch": 2}
    return old, new


@pytest.mark.parametrize("fmt", FORMATS)
def test_crash_mid_write_keeps_the_old_checkpoint(tmp_path, monkeypatch, fmt):
    path = tmp_path / f"ckpt{SUFFIX[fmt]}"
    old, new = _old_and_new()
    gg.save(old, path)
    before = path.read_bytes()
    real_open_temp = checkpoint._open_temp
    temps = []

    def crashing_open_temp(directory, name):
        f, tmp = real_open_temp(directory, name)
        temps.append(tmp)
        return _CrashingFile(f, budget=1500), tmp

    monkeypatch.setattr(checkpoint, "_open_temp", crashing_open_temp)
    with pytest.raises(SimulatedCrash):
        gg.save(new, path)
    assert temps and os.path.dirname(temps[0]) == str(tmp_path)  # the temp file was beside the target
    assert path.read_bytes() == before
    assert _equal(gg.load(path), old)
    assert os.listdir(tmp_path) == [path.name]  # the partial temp file was removed


@pytest.mark.parametrize("fmt", FORMATS)
def test_crash_before_rename_keeps_the_old_checkpoint(tmp_path, monkeypatch, fmt):
    path = tmp_path / f"ckpt{SUFFIX[fmt]}"
    old, new = _old_and_new()
    gg.save(old, path)

    def crash(src, dst):
        assert os.path.getsize(src) > 0  # the new file was fully written, just not yet renamed
        raise SimulatedCrash("power lost before rename")

    monkeypatch.setattr(checkpoint.os, "replace", crash)
    with pytest.raises(SimulatedCrash):
        gg.save(new, path)
    monkeypatch.undo()
    assert _equal(gg.load(path), old)
    assert os.listdir(tmp_path) == [path.name]
    gg.save(new, path)  # and the next save works
    assert _equal(gg.load(path), new)
    assert os.listdir(tmp_path) == [path.name]


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs SIGKILL")
def test_process_killed_mid_save_keeps_the_old_checkpoint(tmp_path):
    path = tmp_path / "ckpt.npz"
    old, _ = _old_and_new()
    gg.save(old, path)
    script = textwrap.dedent(f"""
        import os, signal
        import numpy as np
        import graphgrad as gg
        from graphgrad.io import checkpoint
        real = checkpoint._open_temp
        class Dying:
            def __init__(self, f): self.f, self.n = f, 0
            def write(self, data):
                self.n += len(data)
                if self.n > 1500:
                    self.f.write(bytes(data)[:100]); self.f.flush()
                    os.kill(os.getpid(), signal.SIGKILL)
                return self.f.write(data)
            def __getattr__(self, name): return getattr(self.f, name)
            def __enter__(self): return self
            def __exit__(self, *exc): return self.f.__exit__(*exc)
        def open_temp(directory, name):
            f, tmp = real(directory, name)
            return Dying(f), tmp
        checkpoint._open_temp = open_temp
        gg.save({{"model": {{"w": gg.tensor(np.zeros(1000, np.float32))}}}}, {str(path)!r})
    """)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([os.path.dirname(os.path.dirname(gg.__file__))] + sys.path))
    result = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True)
    assert result.returncode == -signal.SIGKILL, result.stderr
    assert _equal(gg.load(path), old)
    leftovers = [n for n in os.listdir(tmp_path) if n != path.name]
    assert all(n.startswith(".ckpt.npz.") and n.endswith(".tmp") for n in leftovers)  # never read


# ---- shape mismatch --------------------------------------------------------------------------------------
class Tiny(gg.nn.Module):
    def __init__(self, n_in: int, n_out: int):
        super().__init__()
        self.weight = gg.nn.Parameter(gg.randn(n_out, n_in))
        self.bias = gg.nn.Parameter(gg.zeros(n_out))

    def forward(self, x):
        return x @ self.weight.T + self.bias


@pytest.mark.parametrize("fmt", FORMATS)
def test_loading_into_a_model_of_another_shape_is_a_clear_error(tmp_path, fmt):
    path = tmp_path / f"run{SUFFIX[fmt]}"
    gg.save_checkpoint(path, Tiny(4, 3), epoch=1)
    other = Tiny(4, 5)
    before = {k: v.numpy().copy() for k, v in other.state_dict().items()}
    with pytest.raises(gg.ShapeError) as info:
        gg.load_checkpoint(path, other)
    message = str(info.value)
    assert str(path) in message
    assert "weight" in message and "(3, 4)" in message and "(5, 4)" in message
    assert "bias" in message and "(3,)" in message and "(5,)" in message
    for k, v in other.state_dict().items():  # nothing was changed
        np.testing.assert_array_equal(v.numpy(), before[k])
    # plain state dicts: the same error from load_state_dict
    gg.save(Tiny(4, 3).state_dict(), tmp_path / f"sd{SUFFIX[fmt]}")
    with pytest.raises(gg.ShapeError, match=r"weight: checkpoint \(3, 4\) vs model \(5, 4\)"):
        other.load_state_dict(gg.load(tmp_path / f"sd{SUFFIX[fmt]}"))


def test_load_checkpoint_checks_what_it_is_given(tmp_path):
    gg.save({"w": gg.tensor([1.0])}, tmp_path / "sd.npz")
    with pytest.raises(ValueError, match="not a training checkpoint"):
        gg.load_checkpoint(tmp_path / "sd.npz", Tiny(1, 1))
    gg.save_checkpoint(tmp_path / "c.npz", Tiny(2, 2), generators=[gg.Generator(0)])
    with pytest.raises(ValueError, match="1 generator"):
        gg.load_checkpoint(tmp_path / "c.npz", Tiny(2, 2))

    class FakeOptimizer:
        def state_dict(self):
            return {}

        def load_state_dict(self, state):
            pass

    with pytest.raises(ValueError, match="no optimizer state"):
        gg.load_checkpoint(tmp_path / "c.npz", Tiny(2, 2), optimizer=FakeOptimizer(), generators=[gg.Generator(0)])


def test_checkpoint_restores_every_random_state(tmp_path):
    g = gg.Generator(7)
    gg.manual_seed(3)
    np.random.seed(4)
    random.seed(5)
    model = Tiny(2, 2)
    gg.save_checkpoint(tmp_path / "c.ckpt", model, epoch=9, extra={"best": 0.5, "history": [1, 2]},
                       generators=[g])
    expected = (gg.rand(3).numpy(), gg.rand(3, generator=g).numpy(), np.random.rand(3), random.random())
    gg.manual_seed(100)
    g.manual_seed(100)
    np.random.seed(100)
    random.seed(100)
    info = gg.load_checkpoint(tmp_path / "c.ckpt", model, generators=[g])
    assert info == {"epoch": 9, "extra": {"best": 0.5, "history": [1, 2]}}
    got = (gg.rand(3).numpy(), gg.rand(3, generator=g).numpy(), np.random.rand(3), random.random())
    for a, b in zip(expected, got):
        np.testing.assert_array_equal(a, b)


# ---- resume: bit-identical trajectory -----------------------------------------------------------------------
def _training_api():
    missing = [name for name, ns in (("Linear", gg.nn), ("Adam", gg.optim), ("StepLR", gg.optim))
               if not hasattr(ns, name)]
    if missing:
        pytest.skip(f"not written yet: {missing}")


class Net(gg.nn.Module):
    def __init__(self, generator):
        super().__init__()
        self.fc1 = gg.nn.Linear(4, 16)
        self.fc2 = gg.nn.Linear(16, 1)
        self.generator = generator

    def forward(self, x):
        h = gg.relu(self.fc1(x))
        h = gg.dropout(h, 0.3, training=self.training, generator=self.generator)
        return self.fc2(h)


X = np.random.default_rng(0).standard_normal((24, 4)).astype(np.float32)
Y = (X @ np.array([[1.0], [-2.0], [0.5], [3.0]], dtype=np.float32)).astype(np.float32)


def _setup(seed: int):
    gg.manual_seed(seed)
    dropout_rng = gg.Generator(seed + 1)
    model = Net(dropout_rng)
    opt = gg.optim.Adam(model.parameters(), lr=0.01)
    sched = gg.optim.StepLR(opt, step_size=2, gamma=0.5)
    return model, opt, sched, dropout_rng


def _train(model, opt, sched, epochs, losses):
    for _ in epochs:
        order = gg.rand(len(X)).numpy().argsort()  # shuffled with the default generator
        for start in range(0, len(X), 8):
            idx = order[start:start + 8]
            loss = ((model(gg.tensor(X[idx])) - gg.tensor(Y[idx])) ** 2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses.append(loss.numpy().tobytes())
        sched.step()


@pytest.mark.parametrize("fmt", FORMATS)
def test_resume_matches_the_uninterrupted_run_bitwise(tmp_path, fmt):
    _training_api()
    n = 3
    # uninterrupted: 2n epochs
    model, opt, sched, _ = _setup(0)
    straight = []
    _train(model, opt, sched, range(2 * n), straight)
    final = {k: v.numpy().copy() for k, v in model.state_dict().items()}

    # interrupted: n epochs, checkpoint, then a fresh process-like start from different seeds
    model, opt, sched, g = _setup(0)
    resumed = []
    _train(model, opt, sched, range(n), resumed)
    path = tmp_path / f"run{SUFFIX[fmt]}"
    gg.save_checkpoint(path, model, opt, sched, epoch=n, generators=[g])
    del model, opt, sched, g

    model, opt, sched, g = _setup(12345)  # different init, optimizer state and random streams
    gg.rand(5)  # and advance the streams a bit more
    info = gg.load_checkpoint(path, model, opt, sched, generators=[g])
    assert info["epoch"] == n
    _train(model, opt, sched, range(info["epoch"], 2 * n), resumed)

    assert resumed == straight  # every loss, bit for bit
    for k, v in model.state_dict().items():
        assert v.numpy().tobytes() == final[k].tobytes(), k
