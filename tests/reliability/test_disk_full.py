"""Disk full (issue 14): a save that cannot write (here a small RLIMIT_FSIZE, the file-size limit,
with SIGXFSZ ignored so the write fails with EFBIG like ENOSPC would) raises an OSError naming the
file and saying the previous save is unchanged; the previous save still loads, bit for bit, and no
temporary file is left behind.

The save runs in a forked child, so the limit never applies to the test process itself.
"""
from __future__ import annotations

import errno
import json
import os
import signal

import numpy as np
import pytest

import graphgrad as gg

resource = pytest.importorskip("resource")
pytestmark = pytest.mark.skipif(not hasattr(os, "fork") or not hasattr(signal, "SIGXFSZ"),
                                reason="needs fork and RLIMIT_FSIZE")

LIMIT = 64 << 10  # bytes: any file the child writes stops growing here


def _save_with_file_size_limit(save) -> dict:
    """Run ``save()`` in a forked child under RLIMIT_FSIZE = LIMIT; what it raised, as a dict."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:
        report = {"raised": None}
        try:
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
            resource.setrlimit(resource.RLIMIT_FSIZE, (LIMIT, LIMIT))
            save()
        except BaseException as exc:  # noqa: BLE001 - reported to the parent
            report = {"raised": type(exc).__name__, "errno": getattr(exc, "errno", None), "message": str(exc),
                      "is_oserror": isinstance(exc, OSError)}
        finally:
            os.write(write_end, json.dumps(report).encode())
            os._exit(0)
    os.close(write_end)
    chunks = []
    while True:
        chunk = os.read(read_end, 65536)
        if not chunk:
            break
        chunks.append(chunk)
    os.close(read_end)
    os.waitpid(pid, 0)
    return json.loads(b"".join(chunks))


def _check_clear_error(report: dict, path) -> None:
    assert report["raised"] is not None, "the save should have failed"
    assert report["is_oserror"] and report["errno"] == errno.EFBIG, report
    assert str(path) in report["message"] and "previous file" in report["message"], report


@pytest.mark.parametrize("fmt", ["npz", "safetensors"])
def test_a_checkpoint_save_that_hits_the_size_limit_keeps_the_previous_save(tmp_path, fmt):
    if fmt == "safetensors":
        pytest.importorskip("safetensors")
    path = tmp_path / f"run.{fmt}"
    model = gg.nn.Linear(4, 2)
    gg.save_checkpoint(path, model, epoch=1, extra={"w": np.arange(1000, dtype=np.float32)})
    before = path.read_bytes()
    report = _save_with_file_size_limit(
        lambda: gg.save_checkpoint(path, model, epoch=2, extra={"w": np.ones(1 << 20, np.float32)}))
    _check_clear_error(report, path)
    assert path.read_bytes() == before
    assert gg.load(path)["epoch"] == 1
    assert os.listdir(tmp_path) == [path.name]  # the partial temporary file was removed
    report = _save_with_file_size_limit(lambda: gg.save({"w": np.ones(1 << 20, np.float32)}, path))
    _check_clear_error(report, path)
    assert path.read_bytes() == before


def test_a_graph_save_that_hits_the_size_limit_keeps_the_previous_save(tmp_path):
    path = str(tmp_path / "model")

    def graph(values):
        g = gg.Graph()
        with g.as_default():
            w = gg.Variable(values, name="w")
            gg.identity(w * 2.0, name="y")
        return g

    gg.save_graph(graph(np.arange(10, dtype=np.float32)), path)
    before = {name: (tmp_path / name).read_bytes() for name in ("model.json", "model.npz")}
    big = graph(np.ones(1 << 20, np.float32))
    report = _save_with_file_size_limit(lambda: gg.train.Saver().save(gg.Session(big), path))
    _check_clear_error(report, tmp_path / "model")
    assert {name: (tmp_path / name).read_bytes() for name in before} == before
    (w,) = gg.load_graph(path)[0].variables()
    assert w.numpy().tolist() == list(range(10))
    assert sorted(os.listdir(tmp_path)) == ["model.json", "model.npz"]
    # and with room again, the next save works
    gg.save_graph(big, path)
    assert gg.load_graph(path)[0].variables()[0].numpy().shape == (1 << 20,)
