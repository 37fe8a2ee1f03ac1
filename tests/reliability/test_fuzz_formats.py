"""Fuzzing every file format graphgrad reads (issue 14): random truncations, byte flips, insertions
and deletions of valid files load or raise a graphgrad error, never another exception, never hang,
with bounded memory.

Formats: checkpoint ``.npz`` and ``.safetensors`` (``gg.load``), a saved graph's JSON and its weights
``.npz`` (``gg.load_graph``), ONNX (``gg.onnx.load``) and IDX (``read_idx``, gzip and raw).

Each format runs ``FUZZ_EXAMPLES`` examples (100 by default: the whole file takes a few seconds). Set
``GRAPHGRAD_FUZZ_LONG=1`` for long runs (3000 examples per format, or ``GRAPHGRAD_FUZZ_EXAMPLES=N``).
"""
from __future__ import annotations

import contextlib
import gzip
import hashlib
import json
import os
import struct
import tempfile
import tracemalloc
from datetime import timedelta

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import graphgrad as gg
from graphgrad import config
from graphgrad.data.datasets import read_idx
from graphgrad.errors import GraphgradError

LONG = os.environ.get("GRAPHGRAD_FUZZ_LONG", "") not in ("", "0")
FUZZ_EXAMPLES = int(os.environ.get("GRAPHGRAD_FUZZ_EXAMPLES", 3000 if LONG else 100))
#: the load limit during fuzzing: a mutated size field can never make a loader allocate more
FUZZ_LIMIT = 32 << 20
#: the most memory (traced by tracemalloc) one load may use
FUZZ_PEAK = 3 * FUZZ_LIMIT

FUZZ = settings(max_examples=FUZZ_EXAMPLES, deadline=timedelta(seconds=5), database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@st.composite
def mutations(draw, size: int):
    """A list of edits of a ``size``-byte file: ("cut", at), ("flip", at, byte) (a random byte or a
    JSON-significant character), ("insert", at, bytes),
    ("delete", at, n), ("int", at, value): a little-endian or big-endian size field overwritten."""
    edits = []
    for _ in range(draw(st.integers(1, 4))):
        at = draw(st.integers(0, max(size - 1, 0)))
        kind = draw(st.sampled_from(["cut", "flip", "flip", "char", "insert", "delete", "int"]))
        if kind == "cut":
            edits.append(("cut", at))
        elif kind == "flip":
            edits.append(("flip", at, draw(st.integers(0, 255))))
        elif kind == "char":  # a JSON-significant character: reaches structure decoders, not just parsers
            edits.append(("flip", at, draw(st.sampled_from(b'0123456789[]{}",:-.eflnrstu '))))
        elif kind == "insert":
            edits.append(("insert", at, draw(st.binary(min_size=1, max_size=16))))
        elif kind == "delete":
            edits.append(("delete", at, draw(st.integers(1, 64))))
        else:
            value = draw(st.sampled_from([0, 1, 0x7F, 0xFF, 0xFFFF, 0x7FFFFFFF, 0xFFFFFFFF, 2 ** 40, 2 ** 63 - 1]))
            edits.append(("int", at, value, draw(st.sampled_from(["<Q", ">I", "<I", "<H"]))))
    return edits


def mutate(data: bytes, edits) -> bytes:
    out = bytearray(data)
    for edit in edits:
        at = min(edit[1], len(out))
        if edit[0] == "cut":
            del out[at:]
        elif edit[0] == "flip" and at < len(out):
            out[at] = edit[2]
        elif edit[0] == "insert":
            out[at:at] = edit[2]
        elif edit[0] == "delete":
            del out[at:at + edit[2]]
        elif edit[0] == "int":
            fmt = edit[3]
            packed = struct.pack(fmt, edit[2] & ((1 << (8 * struct.calcsize(fmt))) - 1))
            out[at:at + len(packed)] = packed
    return bytes(out)


@contextlib.contextmanager
def bounded():
    """The fuzz load limit, and a check that the load stayed within the memory bound."""
    old = config.max_load_bytes
    config.max_load_bytes = FUZZ_LIMIT
    tracemalloc.start()
    try:
        yield
    finally:
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        config.max_load_bytes = old
    assert peak < FUZZ_PEAK, f"a fuzzed load used {peak} bytes"


def loads_or_graphgrad_error(load, *args) -> None:
    """``load(*args)`` succeeds or raises a GraphgradError; any other exception fails the test."""
    with bounded():
        try:
            load(*args)
        except GraphgradError:
            pass


@pytest.fixture(scope="module")
def folder():
    with tempfile.TemporaryDirectory() as d:
        yield d


class _Net(gg.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = gg.nn.Linear(4, 3)

    def forward(self, x):
        return self.fc(x)


def _checkpoint_object():
    return {"model": {"fc.weight": gg.tensor(np.arange(12, dtype=np.float32).reshape(3, 4)),
                      "fc.bias": gg.tensor(np.zeros(3, np.float32))},
            "optimizer": {"state": {0: {"step": np.int64(3), "exp_avg": np.ones(4, np.float32)}},
                          "param_groups": [{"lr": 0.1, "betas": (0.9, 0.999), "params": [0, 1]}]},
            "epoch": 7, "extra": {"name": "run", "flags": [True, None, 1.5]}}


def _training_checkpoint(path) -> None:
    """What save_checkpoint writes for a model, an Adam optimizer after one step, a scheduler and a generator."""
    model = _Net()
    optimizer = gg.optim.Adam(model.parameters(), lr=0.01)
    model(gg.ones(2, 4)).sum().backward()
    optimizer.step()
    scheduler = gg.optim.StepLR(optimizer, step_size=2)
    gg.save_checkpoint(path, model, optimizer, scheduler, epoch=7, extra={"name": "run", "flags": (True, None, 1.5)},
                       generators=[gg.Generator(3)])


def _load_training_checkpoint(path) -> None:
    model = _Net()
    optimizer = gg.optim.Adam(model.parameters(), lr=0.01)
    scheduler = gg.optim.StepLR(optimizer, step_size=2)
    gg.load_checkpoint(path, model, optimizer, scheduler, generators=[gg.Generator(0)])


# ---- checkpoints -------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def npz_file(folder):
    path = os.path.join(folder, "good.npz")
    gg.save(_checkpoint_object(), path)
    return open(path, "rb").read()


@FUZZ
@given(data=st.data())
def test_fuzz_checkpoint_npz(folder, npz_file, data):
    path = os.path.join(folder, "fuzz.npz")
    with open(path, "wb") as f:
        f.write(mutate(npz_file, data.draw(mutations(len(npz_file)))))
    loads_or_graphgrad_error(gg.load, path)


@pytest.fixture(scope="module")
def training_members(folder):
    """{member name: bytes} of a valid training checkpoint .npz (its .npy arrays and structure JSON)."""
    import zipfile

    path = os.path.join(folder, "training.npz")
    _training_checkpoint(path)
    _load_training_checkpoint(path)  # the unmutated checkpoint loads
    with zipfile.ZipFile(path) as zf:
        return {name: zf.read(name) for name in zf.namelist()}


@FUZZ
@given(data=st.data(), deflated=st.booleans())
def test_fuzz_training_checkpoint_members(folder, training_members, data, deflated):
    """Mutations inside one member of a training checkpoint, the archive rebuilt with correct CRCs: they
    reach the .npy header parser, the structure JSON decoder and load_checkpoint's restoring of the
    model, optimizer, scheduler and random states (a CRC mismatch stops plain byte flips earlier)."""
    import zipfile

    names = sorted(training_members)
    name = data.draw(st.sampled_from(names + ["__graphgrad__.npy"] * len(names)))  # the structure half the time
    member = training_members[name]
    path = os.path.join(folder, "members.npz")
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED if deflated else zipfile.ZIP_STORED) as zf:
        for other, content in training_members.items():
            zf.writestr(other, mutate(member, data.draw(mutations(len(member)))) if other == name else content)
    loads_or_graphgrad_error(gg.load, path)
    loads_or_graphgrad_error(_load_training_checkpoint, path)


@pytest.fixture(scope="module")
def safetensors_file(folder):
    pytest.importorskip("safetensors")
    path = os.path.join(folder, "good.safetensors")
    gg.save(_checkpoint_object(), path)
    return open(path, "rb").read()


@FUZZ
@given(data=st.data())
def test_fuzz_checkpoint_safetensors(folder, safetensors_file, data):
    path = os.path.join(folder, "fuzz.safetensors")
    with open(path, "wb") as f:
        f.write(mutate(safetensors_file, data.draw(mutations(len(safetensors_file)))))
    loads_or_graphgrad_error(gg.load, path)


@pytest.fixture(scope="module")
def npy_file():
    import io

    buffer = io.BytesIO()
    np.save(buffer, np.arange(24, dtype=">f8").reshape(2, 3, 4), allow_pickle=False)
    return buffer.getvalue()


@FUZZ
@given(data=st.data())
def test_fuzz_onnx_run_npy_inputs(folder, npy_file, data):
    from graphgrad.io.onnx.tools import parse_inputs

    path = os.path.join(folder, "fuzz.npy")
    with open(path, "wb") as f:
        f.write(mutate(npy_file, data.draw(mutations(len(npy_file)))))
    loads_or_graphgrad_error(parse_inputs, [f"x={path}"])


# ---- saved graphs ------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def graph_files(folder):
    g = gg.Graph()
    with g.as_default():
        x = gg.placeholder(gg.float32, (None, 4), name="x")
        w = gg.Variable(np.arange(12, dtype=np.float32).reshape(4, 3), name="w")
        y = gg.relu(gg.matmul(x, w) + gg.constant(np.ones(3, np.float32)))
        gg.reduce_sum(y, axis=1, name="out") if hasattr(gg, "reduce_sum") else gg.sum(y, axis=1)
    path = os.path.join(folder, "good")
    gg.save_graph(g, path)
    return open(path + ".json", "rb").read(), open(path + ".npz", "rb").read()


def _write_graph(folder, document: bytes, weights: bytes, fix_sha: bool) -> str:
    path = os.path.join(folder, "fuzzgraph")
    with open(path + ".npz", "wb") as f:
        f.write(weights)
    if fix_sha:  # let a mutated weights file reach the npz reader instead of failing its checksum
        doc = json.loads(document)
        doc["weights"] = {"file": "fuzzgraph.npz", "format": "npz", "sha256": hashlib.sha256(weights).hexdigest()}
        document = json.dumps(doc).encode()
    with open(path + ".json", "wb") as f:
        f.write(document)
    return path


@FUZZ
@given(data=st.data())
def test_fuzz_saved_graph_json(folder, graph_files, data):
    document, weights = graph_files
    doc = json.loads(document)
    doc["weights"]["file"] = "fuzzgraph.npz"
    document = json.dumps(doc, indent=1).encode()
    path = _write_graph(folder, mutate(document, data.draw(mutations(len(document)))), weights, fix_sha=False)
    loads_or_graphgrad_error(gg.load_graph, path)


@FUZZ
@given(data=st.data())
def test_fuzz_saved_graph_weights(folder, graph_files, data):
    document, weights = graph_files
    path = _write_graph(folder, document, mutate(weights, data.draw(mutations(len(weights)))), fix_sha=True)
    loads_or_graphgrad_error(gg.load_graph, path)


# ---- ONNX --------------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def onnx_file(folder):
    onnx = pytest.importorskip("onnx")
    from onnx import TensorProto, helper, numpy_helper

    w = numpy_helper.from_array(np.arange(12, dtype=np.float32).reshape(4, 3), "W")
    b = numpy_helper.from_array(np.ones(3, np.float32), "B")
    shape = numpy_helper.from_array(np.array([-1, 3], np.int64), "shape")
    nodes = [helper.make_node("MatMul", ["x", "W"], ["h"]), helper.make_node("Add", ["h", "B"], ["a"]),
             helper.make_node("Relu", ["a"], ["r"]), helper.make_node("Reshape", ["r", "shape"], ["s"]),
             helper.make_node("Softmax", ["s"], ["y"], axis=-1),
             helper.make_node("ReduceSum", ["y"], ["z"], keepdims=0)]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 4])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["n", 3]),
                               helper.make_tensor_value_info("z", TensorProto.FLOAT, [])], [w, b, shape])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx.checker.check_model(model)
    data = model.SerializeToString()
    gg.onnx.load(data)  # the unmutated model imports
    return data


@FUZZ
@given(data=st.data())
def test_fuzz_onnx(folder, onnx_file, data):
    path = os.path.join(folder, "fuzz.onnx")
    with open(path, "wb") as f:
        f.write(mutate(onnx_file, data.draw(mutations(len(onnx_file)))))
    loads_or_graphgrad_error(gg.onnx.load, path)


# ---- IDX ---------------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def idx_raw():
    images = np.arange(2 * 5 * 6, dtype=np.uint8).reshape(2, 5, 6)
    return b"\x00\x00\x08\x03" + struct.pack(">3i", *images.shape) + images.tobytes()


@FUZZ
@given(data=st.data(), compressed=st.booleans())
def test_fuzz_idx(folder, idx_raw, data, compressed):
    raw = mutate(idx_raw, data.draw(mutations(len(idx_raw))))  # a mutated header or data, then compressed
    if compressed:
        raw = gzip.compress(raw)
        if data.draw(st.booleans()):  # or the compressed stream itself mutated
            raw = mutate(raw, data.draw(mutations(len(raw))))
    path = os.path.join(folder, "fuzz-idx3-ubyte" + (".gz" if compressed else ""))
    with open(path, "wb") as f:
        f.write(raw)
    loads_or_graphgrad_error(read_idx, path)


def test_the_fuzz_flag_raises_the_example_count():
    assert FUZZ_EXAMPLES >= (3000 if LONG else 1)
