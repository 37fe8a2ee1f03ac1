"""ONNX import of vision ops: an imported GridSample is differentiable w.r.t. the image and the grid
(checked against finite differences), and attribute values it cannot honour are clear errors."""
import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper  # noqa: E402

import graphgrad as gg  # noqa: E402
from graphgrad.io.onnx import OnnxImportError, to_module  # noqa: E402


def grid_sample_model(opset: int = 22, **attrs) -> onnx.ModelProto:
    """GridSample of a float64 image (1, 2, 4, 5) at a grid (1, 3, 2, 2)."""
    node = helper.make_node("GridSample", ["x", "grid"], ["y"], name="sample", **attrs)
    graph = helper.make_graph(
        [node], "grid_sample",
        [helper.make_tensor_value_info("x", TensorProto.DOUBLE, [1, 2, 4, 5]),
         helper.make_tensor_value_info("grid", TensorProto.DOUBLE, [1, 3, 2, 2])],
        [helper.make_tensor_value_info("y", TensorProto.DOUBLE, [1, 2, 3, 2])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


@pytest.mark.parametrize("mode, padding_mode, align_corners", [
    ("linear", "zeros", 0), ("linear", "reflection", 1), ("cubic", "border", 0), ("cubic", "zeros", 1)])
def test_grid_sample_gradients_match_finite_differences(mode, padding_mode, align_corners):
    net = to_module(grid_sample_model(mode=mode, padding_mode=padding_mode, align_corners=align_corners))
    rng = np.random.default_rng(0)
    image = rng.standard_normal((1, 2, 4, 5))
    grid = rng.uniform(-1.1, 1.1, (1, 3, 2, 2))  # a little outside the image too, where padding decides
    gg.check_grad(lambda x, g: net(x, g), image, grid)


def test_grid_sample_mode_names_follow_the_opset():
    image, grid = np.zeros((1, 2, 4, 5)), np.zeros((1, 3, 2, 2))
    assert to_module(grid_sample_model(opset=16, mode="bicubic"))(image, grid).shape == (1, 2, 3, 2)
    wrong_name = r"'sample'.*mode='bicubic'.*opset 22 GridSample takes linear, nearest, cubic"
    with pytest.raises(OnnxImportError, match=wrong_name):
        to_module(grid_sample_model(opset=22, mode="bicubic"))(image, grid)
    with pytest.raises(OnnxImportError, match=r"padding_mode='wrap'"):
        to_module(grid_sample_model(padding_mode="wrap"))(image, grid)
