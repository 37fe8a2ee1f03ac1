"""Bounded and confined ONNX import: a budget on unrolled control flow, external data confined to
the model's folder (and refused for a model given as bytes), corrupt files as OnnxImportError."""
from __future__ import annotations

import os
import time

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

import graphgrad as gg  # noqa: E402
from graphgrad.io.onnx import OnnxImportError  # noqa: E402
from graphgrad.io.onnx import importer  # noqa: E402


def _loop_model(trip_count: int, with_cond: bool = False):
    body = helper.make_graph(
        [helper.make_node("Identity", ["cond_in"], ["cond_out"]),
         helper.make_node("Add", ["x_in", "one"], ["x_out"])],
        "body",
        [helper.make_tensor_value_info("i", TensorProto.INT64, []),
         helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
         helper.make_tensor_value_info("x_in", TensorProto.FLOAT, [1])],
        [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
         helper.make_tensor_value_info("x_out", TensorProto.FLOAT, [1])],
        [numpy_helper.from_array(np.ones(1, np.float32), "one")])
    inits = [numpy_helper.from_array(np.array(trip_count, np.int64), "M")]
    cond_name = ""
    if with_cond:
        inits.append(numpy_helper.from_array(np.array(True), "C"))
        cond_name = "C"
    graph = helper.make_graph(
        [helper.make_node("Loop", ["M", cond_name, "x"], ["y"], body=body, name="big_loop")],
        "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def test_a_loop_of_10_12_iterations_is_refused_at_once_naming_the_node_and_limit():
    start = time.perf_counter()
    with pytest.raises(OnnxImportError, match=r"big_loop.*100,000"):
        gg.onnx.load(_loop_model(10 ** 12))
    assert time.perf_counter() - start < 5


def test_a_loop_with_a_condition_that_never_stops_hits_the_budget():
    with pytest.raises(OnnxImportError, match=r"big_loop.*budget|big_loop.*1,000"):
        gg.onnx.load(_loop_model(10 ** 12, with_cond=True), max_unrolled_nodes=1000)


def test_the_budget_is_configurable_and_small_loops_still_import():
    model = _loop_model(50)
    out = gg.onnx.load(model).run({"x": np.zeros(1, np.float32)})[0]
    np.testing.assert_allclose(out, [50.0])
    with pytest.raises(OnnxImportError, match="big_loop"):
        gg.onnx.load(model, max_unrolled_nodes=60)  # 50 runs x 2 nodes
    old = importer.MAX_UNROLLED_NODES
    importer.MAX_UNROLLED_NODES = 10
    try:
        with pytest.raises(OnnxImportError, match="max_unrolled_nodes"):
            gg.onnx.load(model)
        np.testing.assert_allclose(gg.onnx.load(model, max_unrolled_nodes=100).run(
            {"x": np.zeros(1, np.float32)})[0], [50.0])
    finally:
        importer.MAX_UNROLLED_NODES = old


def test_to_module_has_the_same_budget():
    with pytest.raises(OnnxImportError, match="big_loop"):
        gg.onnx.to_module(_loop_model(10 ** 12))(gg.zeros(1))


def _external_model(tmp_path, location: str):
    """A model whose initializer W lives in the external file ``location`` (relative to tmp_path/model)."""
    folder = tmp_path / "model"
    folder.mkdir(exist_ok=True)
    w = numpy_helper.from_array(np.full(3, 7.0, np.float32), "W")
    w.ClearField("raw_data")
    w.data_location = TensorProto.EXTERNAL
    w.external_data.add(key="location", value=location)
    graph = helper.make_graph([helper.make_node("Add", ["x", "W"], ["y"])], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3])], [w])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    path = folder / "m.onnx"
    path.write_bytes(model.SerializeToString())
    return path, model


def test_external_data_inside_the_folder_loads(tmp_path):
    path, model = _external_model(tmp_path, "w.bin")
    (path.parent / "w.bin").write_bytes(np.full(3, 7.0, np.float32).tobytes())
    np.testing.assert_allclose(gg.onnx.load(str(path)).run({"x": np.zeros(3, np.float32)})[0], [7, 7, 7])
    # bytes or a ModelProto read it only from a base_dir given
    out = gg.onnx.load(path.read_bytes(), base_dir=str(path.parent)).run({"x": np.zeros(3, np.float32)})[0]
    np.testing.assert_allclose(out, [7, 7, 7])


def test_a_model_given_as_bytes_never_reads_external_data_from_the_current_directory(tmp_path, monkeypatch):
    path, model = _external_model(tmp_path, "w.bin")
    (tmp_path / "w.bin").write_bytes(np.full(3, 9.0, np.float32).tobytes())
    monkeypatch.chdir(tmp_path)  # a w.bin in the current directory must not be read
    with pytest.raises(OnnxImportError, match="external data.*base_dir"):
        gg.onnx.load(path.read_bytes())
    with pytest.raises(OnnxImportError, match="external data.*base_dir"):
        gg.onnx.load(model)
    with pytest.raises(OnnxImportError, match="external data"):
        gg.onnx.to_module(path.read_bytes())


@pytest.mark.parametrize("location", ["../secret.bin", "sub/../../secret.bin", "ABS", "link.bin"])
def test_external_data_outside_the_models_folder_is_refused(tmp_path, location):
    secret = tmp_path / "secret.bin"
    secret.write_bytes(np.full(3, 5.0, np.float32).tobytes())
    if location == "ABS":
        location = str(secret)
    path, _ = _external_model(tmp_path, location)
    if location == "link.bin":
        os.symlink(secret, path.parent / "link.bin")
    with pytest.raises(OnnxImportError, match="inside the model's folder"):
        gg.onnx.load(str(path))


@pytest.mark.parametrize("kind", ["random", "truncated"])
def test_a_corrupt_onnx_file_raises_onnx_import_error_naming_it(tmp_path, kind):
    path, _ = _external_model(tmp_path, "w.bin")
    data = path.read_bytes()
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(np.random.default_rng(0).bytes(500) if kind == "random" else data[:len(data) // 2])
    with pytest.raises(OnnxImportError, match="bad.onnx"):
        gg.onnx.load(str(bad))
    with pytest.raises(OnnxImportError, match="not an ONNX model"):
        gg.onnx.load(bad.read_bytes())


def test_model_file_and_external_data_over_the_load_limit_are_refused(tmp_path, monkeypatch):
    from graphgrad import config
    from graphgrad.errors import LoadLimitError

    path, _ = _external_model(tmp_path, "w.bin")
    (path.parent / "w.bin").write_bytes(np.full(3, 7.0, np.float32).tobytes())
    size = path.stat().st_size
    monkeypatch.setattr(config, "max_load_bytes", size - 1)  # the model file itself is over the limit
    with pytest.raises(LoadLimitError, match=r"m\.onnx.*max_load_bytes") as info:
        gg.onnx.load(str(path))
    assert isinstance(info.value, OnnxImportError)
    (path.parent / "w.bin").write_bytes(np.full(3, 7.0, np.float32).tobytes() + bytes(size))
    monkeypatch.setattr(config, "max_load_bytes", size)  # the model file fits, its external data does not
    with pytest.raises(OnnxImportError, match="external data.*max_load_bytes") as info:
        gg.onnx.load(str(path))
    assert isinstance(info.value, LoadLimitError)
    monkeypatch.setattr(config, "max_load_bytes", 1 << 20)  # loads, but the data does not fit W's dims
    with pytest.raises(OnnxImportError, match="initializer 'W'"):
        gg.onnx.load(str(path))
    (path.parent / "w.bin").write_bytes(np.full(3, 7.0, np.float32).tobytes())
    assert gg.onnx.load(str(path)).run({"x": np.zeros(3, np.float32)})[0].tolist() == [7, 7, 7]
