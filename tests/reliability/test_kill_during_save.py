"""Kill during save (issue 14): a process saving a checkpoint or a graph is killed with SIGKILL at
random instants, many times; after each kill the file loads and holds either the previous save or the
new one, never a mix or a torn file, and leftover temporary files do not accumulate (the next save of
the same target removes those a minute old).

A forked child does the save (no interpreter start-up per trial, so 25 trials take about a second);
the parent kills it after a random delay spread over the save's duration.
"""
from __future__ import annotations

import os
import random
import signal
import time

import numpy as np
import pytest

import graphgrad as gg

pytestmark = pytest.mark.skipif(not hasattr(os, "fork") or not hasattr(signal, "SIGKILL"),
                                reason="needs fork and SIGKILL")

TRIALS = 25
N = 1 << 20  # 4 MB of float32: a save takes a few milliseconds, so kills land inside it


def _kill_during(save, seconds: float) -> bool:
    """Fork, run ``save()`` in the child, SIGKILL it after ``seconds``; whether the save had finished."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: save, report, wait to be killed
        try:
            os.close(read_end)
            save()
            os.write(write_end, b"done")
            time.sleep(60)
        finally:
            os._exit(0)
    os.close(write_end)
    time.sleep(seconds)
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    finished = os.read(read_end, 4) == b"done"
    os.close(read_end)
    return finished


def _save_duration(save) -> float:
    """Seconds from fork to the end of ``save()`` in a forked child (what the kill delays spread over):
    the fastest of three, so that a slow outlier cannot push every kill past the end of the saves."""
    return min(_one_save_duration(save) for _ in range(3))


def _delay(rng: random.Random, k: int, duration: float) -> float:
    """Half the kills early in the save (most land before its rename), half anywhere up to past its end."""
    return rng.uniform(0, (0.5 if k % 2 == 0 else 1.5) * duration)


def _one_save_duration(save) -> float:
    read_end, write_end = os.pipe()
    t0 = time.perf_counter()
    pid = os.fork()
    if pid == 0:
        try:
            save()
            os.write(write_end, b"done")
        finally:
            os._exit(0)
    os.close(write_end)
    os.read(read_end, 4)
    seconds = time.perf_counter() - t0
    os.close(read_end)
    os.waitpid(pid, 0)
    return seconds


def _age_leftovers(folder, keep) -> list:
    """Make every file but ``keep`` two minutes old (as if left by a save killed long ago)."""
    old = time.time() - 120
    leftovers = [n for n in os.listdir(folder) if n not in keep]
    for name in leftovers:
        os.utime(os.path.join(folder, name), (old, old))
    return leftovers


@pytest.mark.parametrize("fmt", ["npz", "safetensors"])
def test_checkpoint_saves_killed_at_random_keep_the_old_or_the_new(tmp_path, fmt):
    if fmt == "safetensors":
        pytest.importorskip("safetensors")
    path = tmp_path / f"run.{fmt}"
    model = gg.nn.Linear(4, 2)

    def save(k: int):
        def run():
            model.weight.data[...] = k
            gg.save_checkpoint(path, model, epoch=k, extra={"w": np.full(N, k, np.float32)})
        return run

    save(0)()
    duration = _save_duration(save(0))
    rng = random.Random(14)
    outcomes = {"old": 0, "new": 0}
    for k in range(1, TRIALS + 1):
        previous = gg.load(path)["epoch"]
        _kill_during(save(k), _delay(rng, k, duration))
        state = gg.load(path)
        epoch = state["epoch"]
        assert epoch in (previous, k), (previous, k, epoch)
        # the whole file is that one save: every array agrees with its epoch
        assert (state["extra"]["w"].numpy() == epoch).all() and (state["model"]["weight"].numpy() == epoch).all()
        outcomes["new" if epoch == k else "old"] += 1
    assert outcomes["old"] >= 1, outcomes  # some kills landed inside a save
    fresh = gg.nn.Linear(4, 2)
    info = gg.load_checkpoint(path, fresh)
    assert (fresh.weight.numpy() == info["epoch"]).all()
    # killed saves may leave temp files; once they are old, the next save removes them all
    leftovers = _age_leftovers(tmp_path, {path.name})
    assert all(n.startswith(f".{path.name}.") and n.endswith(".tmp") for n in leftovers), leftovers
    save(TRIALS + 1)()
    assert os.listdir(tmp_path) == [path.name]


def _graph(k: int):
    g = gg.Graph()
    with g.as_default():
        x = gg.placeholder(gg.float32, (N,), name="x")
        w = gg.Variable(np.full(N, k, np.float32), name="w")
        gg.identity(x * w, name="y")
    return g


def test_graph_saves_killed_at_random_keep_the_old_or_the_new(tmp_path):
    path = str(tmp_path / "model")
    graphs = [_graph(k) for k in range(TRIALS + 2)]

    def save(k: int):
        return lambda: gg.train.Saver().save(gg.Session(graphs[k]), path)

    save(0)()
    duration = _save_duration(save(0))
    rng = random.Random(15)
    outcomes = {"old": 0, "new": 0}
    for k in range(1, TRIALS + 1):
        (w,) = gg.load_graph(path)[0].variables()
        previous = float(w.numpy()[0])
        _kill_during(save(k), _delay(rng, k, duration))
        g, _ = gg.load_graph(path)
        (w,) = g.variables()
        value = float(w.numpy()[0])
        assert value in (previous, k), (previous, k, value)
        assert (w.numpy() == value).all() and (w.initial_value == value).all()  # one save, whole
        outcomes["new" if value == k else "old"] += 1
        # Saver.restore reads the same pair
        target = _graph(-1)
        gg.train.Saver().restore(gg.Session(target), path)
        assert (target.variables()[0].numpy() == value).all()
    assert outcomes["old"] >= 1, outcomes
    leftovers = _age_leftovers(tmp_path, {"model.json", "model.npz"})
    assert all(n.startswith((".model.", "model.")) for n in leftovers), leftovers
    save(TRIALS + 1)()
    assert sorted(os.listdir(tmp_path)) == ["model.json", "model.npz"]


def test_a_young_temp_file_of_another_save_in_progress_is_kept(tmp_path):
    path = tmp_path / "run.npz"
    gg.save({"w": np.zeros(3, np.float32)}, path)
    other = tmp_path / ".run.npz.abcd1234.tmp"  # another process's save, still being written
    other.write_bytes(b"partial")
    stale = tmp_path / ".run.npz.zzzz9999.tmp"
    stale.write_bytes(b"partial")
    os.utime(stale, (time.time() - 120, time.time() - 120))
    foreign = tmp_path / ".other.npz.abcd1234.tmp"
    foreign.write_bytes(b"x")
    os.utime(foreign, (time.time() - 120, time.time() - 120))
    gg.save({"w": np.ones(3, np.float32)}, path)
    assert sorted(os.listdir(tmp_path)) == sorted([path.name, other.name, foreign.name])
