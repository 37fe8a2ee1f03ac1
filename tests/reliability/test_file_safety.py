"""Crash-safe, confined and bounded graph saves and loads (issue 14, Files)."""
from __future__ import annotations

import json
import os
import time

import numpy as np
import pytest

import graphgrad as gg
from graphgrad import config
from graphgrad.graph import serialize


def _graph(value):
    g = gg.Graph()
    with g.as_default():
        x = gg.placeholder(gg.float32, (2,), name="x")
        w = gg.Variable(np.asarray(value, np.float32), name="w")
        gg.identity(x * w, name="y")
    return g


def _saved_w(path):
    g, _ = gg.load_graph(path)
    (w,) = g.variables()
    return w.numpy()


@pytest.mark.parametrize("fail_at", [1, 2, 3, 4, 5])
def test_crash_at_any_step_of_a_save_keeps_a_loadable_save(tmp_path, monkeypatch, fail_at):
    path = str(tmp_path / "model")
    old = np.array([1.5, -2.0], np.float32)
    new = np.array([7.25, 3.0], np.float32)
    gg.save_graph(_graph(old), path)
    real = os.replace
    calls = []

    def crashing(src, dst):
        calls.append(dst)
        if len(calls) == fail_at:
            raise OSError("simulated crash")
        return real(src, dst)

    monkeypatch.setattr(serialize.os, "replace", crashing)
    try:
        gg.save_graph(_graph(new), path)
        crashed = False
    except OSError:
        crashed = True
    monkeypatch.undo()
    got = _saved_w(path)
    assert got.tobytes() in (old.tobytes(), new.tobytes())
    if crashed and fail_at <= 2:  # before the JSON names the new weights: the old save, bit for bit
        assert got.tobytes() == old.tobytes()
    # the next save succeeds and leaves only the pair
    gg.save_graph(_graph(new), path)
    assert _saved_w(path).tobytes() == new.tobytes()
    assert sorted(os.listdir(tmp_path)) == ["model.json", "model.npz"]


def _rewrite_weights(path, **changes):
    doc = json.loads(open(path + ".json").read())
    doc["weights"].update(changes)
    for k, v in list(doc["weights"].items()):
        if v is None:
            del doc["weights"][k]
    open(path + ".json", "w").write(json.dumps(doc))


@pytest.mark.parametrize("target", ["abs", "dotdot", "devzero", "subdir"])
def test_weights_file_is_confined_to_the_graph_folder(tmp_path, target):
    inner = tmp_path / "inner"
    inner.mkdir()
    path = str(inner / "model")
    gg.save_graph(_graph([1.0, 2.0]), path)
    gg.save_graph(_graph([3.0, 4.0]), str(tmp_path / "outside"))
    sha = json.loads(open(str(tmp_path / "outside.json")).read())["weights"]["sha256"]
    name = {"abs": str(tmp_path / "outside.npz"), "dotdot": "../outside.npz", "devzero": "/dev/zero",
            "subdir": "sub/model.npz"}[target]
    _rewrite_weights(path, file=name, sha256=sha)
    with pytest.raises(gg.GraphError, match="own folder"):
        gg.load_graph(path)
    with pytest.raises(gg.GraphError, match="own folder"):
        gg.train.Saver().restore(gg.Session(_graph([0.0, 0.0])), path)


def test_non_regular_weights_file_is_refused(tmp_path):
    path = str(tmp_path / "model")
    gg.save_graph(_graph([1.0, 2.0]), path)
    os.unlink(path + ".npz")
    os.mkfifo(path + ".npz")
    with pytest.raises(gg.GraphError, match="not a regular file"):
        gg.load_graph(path)


def test_missing_checksum_is_an_error(tmp_path):
    path = str(tmp_path / "model")
    gg.save_graph(_graph([1.0, 2.0]), path)
    _rewrite_weights(path, sha256=None)
    with pytest.raises(gg.GraphError, match="SHA-256"):
        gg.load_graph(path)


def test_weights_over_the_load_limit_are_refused_and_the_limit_can_be_raised(tmp_path, monkeypatch):
    path = str(tmp_path / "model")
    gg.save_graph(_graph([1.0, 2.0]), path)
    monkeypatch.setattr(config, "max_load_bytes", 100)
    with pytest.raises(gg.GraphError, match="max_load_bytes"):
        gg.load_graph(path)
    monkeypatch.setattr(config, "max_load_bytes", 1 << 20)
    assert _saved_w(path).tolist() == [1.0, 2.0]


def test_stale_temp_files_of_the_target_are_removed_on_the_next_save(tmp_path):
    path = str(tmp_path / "model")
    gg.save_graph(_graph([1.0, 2.0]), path)
    old = time.time() - 3600
    stale = [".model.json.abc123xy.tmp", ".model.npz.k9_2ab3c.tmp", "model.0123456789abcdef.npz",
             ".model.0123456789abcdef.npz.zzzz1234.tmp"]
    fresh = ".model.npz.fresh123.tmp"
    foreign = [".other.npz.abc123xy.tmp", "notes.txt", ".model.v2.json.abc123xy.tmp"]
    for name in stale + [fresh] + foreign:
        (tmp_path / name).write_bytes(b"x" * 10)
        if name != fresh:
            os.utime(tmp_path / name, (old, old))
    gg.save_graph(_graph([3.0, 4.0]), path)
    assert sorted(os.listdir(tmp_path)) == sorted(["model.json", "model.npz", fresh] + foreign)


def test_fuzzed_graph_files_give_graphgrad_errors(tmp_path):
    """Random truncations and byte flips of a saved graph's JSON: a GraphError (or ValueError
    subclass), never a raw KeyError/TypeError/RecursionError."""
    path = str(tmp_path / "model")
    gg.save_graph(_graph([1.0, 2.0]), path)
    good = open(path + ".json", "rb").read()
    rng = np.random.default_rng(14)
    for case in range(50):
        data = bytearray(good)
        if case % 2:
            data = data[: int(rng.integers(0, len(data)))]
        else:
            for _ in range(int(rng.integers(1, 4))):
                data[int(rng.integers(0, len(data)))] = int(rng.integers(0, 256))
        open(path + ".json", "wb").write(bytes(data))
        try:
            gg.load_graph(path)
        except (gg.GraphError, ValueError):
            pass
    open(path + ".json", "wb").write(b"[" * 100000 + b"]" * 100000)
    with pytest.raises(gg.GraphError):
        gg.load_graph(path)
    doc = json.loads(good)
    doc["nodes"] = [{"name": ["x"]}]
    open(path + ".json", "w").write(json.dumps(doc))
    with pytest.raises(gg.GraphError, match="model.json"):
        gg.load_graph(path)
