"""ONNX import: a Conv followed by an inference BatchNormalization converts as one convolution with
folded weights; values match onnxruntime and every parameter's gradient matches the unfused form."""
import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

import graphgrad as gg  # noqa: E402
from graphgrad.io.onnx import fusion, load, to_module  # noqa: E402

from tests.io.onnx.test_module import mobile_block  # noqa: E402


def conv_bn(extra_use: str = "", training: bool = False, opset: int = 17) -> onnx.ModelProto:
    """Conv(2->3, 3x3, bias) -> BatchNormalization -> y; ``extra_use`` also reads the conv's output:
    "output" makes it a graph output, "node" feeds it to a Relu."""
    rng = np.random.default_rng(0)
    inits = [numpy_helper.from_array(v.astype(np.float32), k) for k, v in {
        "w": rng.standard_normal((3, 2, 3, 3)), "b": rng.standard_normal(3), "scale": 1 + rng.random(3),
        "bias": rng.standard_normal(3), "mean": rng.standard_normal(3), "var": 0.5 + rng.random(3)}.items()]
    bn_attrs = {"epsilon": 1e-3}
    if training:
        bn_attrs["training_mode"] = 1
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], kernel_shape=[3, 3], pads=[1, 1, 1, 1], name="conv"),
             helper.make_node("BatchNormalization", ["c", "scale", "bias", "mean", "var"], ["y"], name="bn",
                              **bn_attrs)]
    outputs = [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3, 5, 5])]
    if extra_use == "output":
        outputs.append(helper.make_tensor_value_info("c", TensorProto.FLOAT, [2, 3, 5, 5]))
    elif extra_use == "node":
        nodes.append(helper.make_node("Relu", ["c"], ["r"]))
        outputs.append(helper.make_tensor_value_info("r", TensorProto.FLOAT, [2, 3, 5, 5]))
    graph = helper.make_graph(nodes, "conv_bn", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 2, 5, 5])],
                              outputs, inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    return model


def _op_types(model):
    return [n.op_type for n in fusion.fused_nodes(model.graph, 17)]


def test_a_conv_read_only_by_an_inference_batch_norm_is_merged_with_it():
    assert _op_types(conv_bn()) == ["ConvBatchNormalization"]
    assert _op_types(conv_bn("output")) == ["Conv", "BatchNormalization"]
    assert _op_types(conv_bn("node")) == ["Conv", "BatchNormalization", "Relu"]
    assert _op_types(conv_bn(training=True)) == ["Conv", "BatchNormalization"]
    assert _op_types(mobile_block()).count("ConvBatchNormalization") == 3
    model = conv_bn()
    fusion.fused_nodes(model.graph, 17)
    assert [n.op_type for n in model.graph.node] == ["Conv", "BatchNormalization"]  # the model is untouched


@pytest.mark.parametrize("make_model", [conv_bn, lambda: conv_bn("node"), mobile_block])
def test_fused_values_match_onnxruntime(make_model):
    model = make_model()
    shape = [d.dim_value or 2 for d in model.graph.input[0].type.tensor_type.shape.dim]
    x = np.random.default_rng(1).standard_normal(shape).astype(np.float32)
    expected = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, {"x": x})
    for imported in (load(model), load(model, trainable=False)):
        for got, want in zip(imported.run({"x": x}), expected):
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_every_parameter_gets_the_gradient_of_the_unfused_model(monkeypatch):
    model = mobile_block()
    x = np.random.default_rng(2).standard_normal((2, 4, 8, 8)).astype(np.float32)

    def gradients():
        net = to_module(model)
        xt = gg.tensor(x, requires_grad=True)
        y = net(xt)
        (y * y).sum().backward()
        return {"x": xt.grad.numpy(), **{k: p.grad.numpy() for k, p in net.named_parameters()}}

    fused = gradients()
    monkeypatch.setattr(fusion, "fused_nodes", lambda graph_proto, opset: list(graph_proto.node))
    unfused = gradients()
    assert fused.keys() == unfused.keys() and {"w_dw", "bn1_s", "bn1_b"} <= set(fused)
    assert not {"bn1_m", "bn1_v"} & set(fused)  # running statistics are not trained (as in PyTorch)
    for name in fused:
        np.testing.assert_allclose(fused[name], unfused[name], rtol=1e-4, atol=1e-5, err_msg=name)
