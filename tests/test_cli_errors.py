"""``python -m graphgrad`` errors: one line on stderr and a non-zero exit (the traceback only with
``--debug``); ``onnx run`` checks input names, shapes and dtypes against the model."""
from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402


def _cli(*args, cwd=None):
    proc = subprocess.run([sys.executable, "-m", "graphgrad", *map(str, args)], capture_output=True, text=True,
                          cwd=cwd, timeout=120)
    return proc.returncode, proc.stdout, proc.stderr


def _assert_one_line_error(rc, err, *words):
    assert rc == 1, err
    assert "Traceback" not in err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("graphgrad: error: "), err
    for word in words:
        assert word in lines[0], (word, err)


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    folder = tmp_path_factory.mktemp("cli")
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 3])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 3])])
    path = folder / "relu.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), str(path))
    np.save(folder / "good.npy", np.array([[-1.0, 2.0, -3.0]], np.float32))
    np.save(folder / "wide.npy", np.zeros((2, 4), np.float32))
    np.save(folder / "flat.npy", np.zeros(3, np.float32))
    np.save(folder / "ints.npy", np.zeros((2, 3), np.int64))
    (folder / "corrupt.npy").write_bytes(b"\x93NUMPY garbage")
    (folder / "random.onnx").write_bytes(np.random.default_rng(1).bytes(300))
    (folder / "truncated.onnx").write_bytes(path.read_bytes()[:40])
    return folder


def test_a_good_run_still_works(model):
    rc, out, err = _cli("onnx", "run", model / "relu.onnx", "-i", f"x={model / 'good.npy'}")
    assert rc == 0, err
    assert "y (1, 3) float32" in out and err == ""


def test_a_missing_model_file_is_one_line(model):
    rc, _, err = _cli("onnx", "info", model / "absent.onnx")
    _assert_one_line_error(rc, err, "absent.onnx")
    rc, _, err = _cli("onnx", "run", model / "absent.onnx", "-i", f"x={model / 'good.npy'}")
    _assert_one_line_error(rc, err, "absent.onnx")


@pytest.mark.parametrize("name", ["random.onnx", "truncated.onnx"])
def test_a_corrupt_model_is_one_line_naming_the_file(model, name):
    for command in ("info", "run"):
        rc, _, err = _cli("onnx", command, model / name, *(["-i", f"x={model / 'good.npy'}"] if command == "run"
                                                           else []))
        _assert_one_line_error(rc, err, name, "not a valid ONNX model")


def test_a_wrongly_shaped_input_is_refused(model):
    rc, _, err = _cli("onnx", "run", model / "relu.onnx", "-i", f"x={model / 'wide.npy'}")
    _assert_one_line_error(rc, err, "'x'", "(2, 4)", "(?, 3)")
    rc, _, err = _cli("onnx", "run", model / "relu.onnx", "-i", f"x={model / 'flat.npy'}")
    _assert_one_line_error(rc, err, "'x'", "(3,)")


def test_an_input_of_another_kind_of_dtype_is_refused(model):
    rc, _, err = _cli("onnx", "run", model / "relu.onnx", "-i", f"x={model / 'ints.npy'}")
    _assert_one_line_error(rc, err, "'x'", "int64", "float32")


def test_missing_and_unused_inputs_are_named(model):
    rc, _, err = _cli("onnx", "run", model / "relu.onnx", "-i", f"typo={model / 'good.npy'}")
    assert rc == 1 and "Traceback" not in err
    assert "'typo'" in err and "missing input(s) ['x']" in err
    rc, out, err = _cli("onnx", "run", model / "relu.onnx", "-i", f"x={model / 'good.npy'}",
                        "-i", f"extra={model / 'good.npy'}")
    assert rc == 0 and "y (1, 3)" in out
    assert "does not use the given input(s) ['extra']" in err


def test_missing_and_corrupt_input_files_are_one_line(model):
    rc, _, err = _cli("onnx", "run", model / "relu.onnx", "-i", f"x={model / 'absent.npy'}")
    _assert_one_line_error(rc, err, "absent.npy")
    rc, _, err = _cli("onnx", "run", model / "relu.onnx", "-i", f"x={model / 'corrupt.npy'}")
    _assert_one_line_error(rc, err)
    rc, _, err = _cli("onnx", "run", model / "relu.onnx", "-i", "no_name.npy")
    _assert_one_line_error(rc, err, "NAME=FILE.npy")


def test_debug_shows_the_traceback(model):
    rc, _, err = _cli("--debug", "onnx", "run", model / "relu.onnx", "-i", f"x={model / 'wide.npy'}")
    assert rc != 0 and "Traceback" in err and "OnnxImportError" in err


def test_bad_arguments_exit_2_without_a_traceback():
    rc, _, err = _cli("onnx", "frobnicate", "m.onnx")
    assert rc == 2 and "Traceback" not in err and "invalid choice" in err
    rc, _, err = _cli("demo", "--seed", "abc")
    assert rc == 2 and "Traceback" not in err


def test_a_huge_loop_is_refused_quickly_naming_the_node(model):
    body = helper.make_graph(
        [helper.make_node("Identity", ["c"], ["c_out"]), helper.make_node("Identity", ["v"], ["v_out"])], "body",
        [helper.make_tensor_value_info("i", TensorProto.INT64, []),
         helper.make_tensor_value_info("c", TensorProto.BOOL, []),
         helper.make_tensor_value_info("v", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("c_out", TensorProto.BOOL, []),
         helper.make_tensor_value_info("v_out", TensorProto.FLOAT, [2, 3])])
    graph = helper.make_graph([helper.make_node("Loop", ["M", "", "x"], ["y"], body=body, name="forever")], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])],
                              [numpy_helper.from_array(np.array(10 ** 12, np.int64), "M")])
    path = model / "loop.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), str(path))
    np.save(model / "x23.npy", np.zeros((2, 3), np.float32))
    rc, _, err = _cli("onnx", "run", path, "-i", f"x={model / 'x23.npy'}")
    _assert_one_line_error(rc, err, "'forever'", "max_unrolled_nodes")
