"""gg.onnx.to_module converts the ONNX graph once per input signature, not on every call, and computes
what interpreting the graph on each call computes: outputs, gradients, fine-tuning, sequences,
random ops, models whose shapes depend on their data."""
import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

import graphgrad as gg  # noqa: E402
from graphgrad.io.onnx import importer, to_module  # noqa: E402
from graphgrad.io.onnx.importer import flatten, structure_of  # noqa: E402

from tests.io.onnx.test_import import _sequence_model, small_cnn  # noqa: E402


def mobile_block(seed: int = 0) -> onnx.ModelProto:
    """A MobileNetV3-style block on (N, 4, 8, 8): 1x1 expand + BN + HardSwish, depthwise 3x3 + BN,
    squeeze-excitation with HardSigmoid, 1x1 project + BN, residual add, Clip with bounds that are
    float initializers (so Parameters)."""
    rng = np.random.default_rng(seed)

    def normal(*shape, scale=0.5):
        return (rng.standard_normal(shape) * scale).astype(np.float32)

    inits = {"w_expand": normal(8, 4, 1, 1), "w_dw": normal(8, 1, 3, 3), "w_se1": normal(2, 8, 1, 1),
             "b_se1": normal(2), "w_se2": normal(8, 2, 1, 1), "b_se2": normal(8), "w_proj": normal(4, 8, 1, 1),
             "lo": np.array(-2.0, np.float32), "hi": np.array(2.5, np.float32)}
    nodes = []
    for i, c in enumerate((8, 8, 4)):
        inits.update({f"bn{i}_s": 1 + normal(c, scale=0.1), f"bn{i}_b": normal(c, scale=0.1),
                      f"bn{i}_m": normal(c, scale=0.1), f"bn{i}_v": 1 + np.abs(normal(c, scale=0.1))})

    def bn(x, i, out):
        nodes.append(helper.make_node("BatchNormalization", [x, f"bn{i}_s", f"bn{i}_b", f"bn{i}_m", f"bn{i}_v"], [out]))
        return out

    nodes += [helper.make_node("Conv", ["x", "w_expand"], ["e"], kernel_shape=[1, 1])]
    nodes += [helper.make_node("HardSwish", [bn("e", 0, "e_bn")], ["e_act"])]
    nodes += [helper.make_node("Conv", ["e_act", "w_dw"], ["d"], kernel_shape=[3, 3], pads=[1, 1, 1, 1], group=8)]
    bn("d", 1, "d_bn")
    nodes += [helper.make_node("GlobalAveragePool", ["d_bn"], ["s"]),
              helper.make_node("Conv", ["s", "w_se1", "b_se1"], ["s1"], kernel_shape=[1, 1]),
              helper.make_node("Relu", ["s1"], ["s1r"]),
              helper.make_node("Conv", ["s1r", "w_se2", "b_se2"], ["s2"], kernel_shape=[1, 1]),
              helper.make_node("HardSigmoid", ["s2"], ["gate"], alpha=1.0 / 6.0),
              helper.make_node("Mul", ["d_bn", "gate"], ["scaled"]),
              helper.make_node("Conv", ["scaled", "w_proj"], ["p"], kernel_shape=[1, 1])]
    bn("p", 2, "p_bn")
    nodes += [helper.make_node("Add", ["x", "p_bn"], ["sum"]), helper.make_node("Clip", ["sum", "lo", "hi"], ["y"])]
    graph = helper.make_graph(nodes, "mobile_block",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 4, 8, 8])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 4, 8, 8])],
                              [numpy_helper.from_array(v, k) for k, v in inits.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model, full_check=True)
    return model


def interpreted(net, *inputs):
    """The outputs of interpreting the ONNX graph on these inputs now (the reference)."""
    leaves = [t for x in inputs for t in flatten(x)]
    outputs = net._interpret(leaves, [structure_of(x) for x in inputs])
    return outputs[0] if len(outputs) == 1 else tuple(outputs)


@pytest.fixture
def converter_calls(monkeypatch):
    """The ONNX op types of every converter call, in order."""
    importer.load_converters()
    calls = []

    def counting(op_type, fn):
        def wrapper(node, *args):
            calls.append(op_type)
            return fn(node, *args)
        return wrapper

    for key, fn in list(importer.CONVERTERS.items()):
        monkeypatch.setitem(importer.CONVERTERS, key, counting(key, fn))
    return calls


@pytest.mark.parametrize("make_model, channels", [(mobile_block, 4), (small_cnn, 1)])
def test_outputs_and_gradients_equal_per_call_interpretation(make_model, channels):
    net = to_module(make_model())
    x = np.random.default_rng(2).standard_normal((3, channels) + ((8, 8) if channels == 4 else (6, 6)))
    x = x.astype(np.float32)
    with gg.no_grad():
        fast = net(gg.tensor(x))
        reference = interpreted(net, gg.tensor(x))
    np.testing.assert_allclose(fast.numpy(), reference.numpy(), rtol=1e-5, atol=1e-6)
    assert fast.dtype == gg.float32 and not fast.requires_grad

    def gradients(run):
        net.zero_grad()
        xt = gg.tensor(x, requires_grad=True)
        y = run(xt)
        (y * y).sum().backward()
        return [y.numpy(), xt.grad.numpy()] + [p.grad.numpy() for p in net.parameters()]

    for got, want in zip(gradients(net), gradients(lambda t: interpreted(net, t))):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_the_graph_is_converted_once_per_input_signature(converter_calls):
    net = to_module(mobile_block())
    x = gg.tensor(np.ones((2, 4, 8, 8), np.float32))
    net(x)
    once = len(converter_calls)
    assert once >= len(net.model.graph.node) - 3  # (a Conv and its BatchNormalization convert as one)
    with gg.no_grad():
        net(x)
        net(x)
    net(gg.tensor(np.zeros((2, 4, 8, 8), np.float32), requires_grad=True)).sum().backward()
    assert net.conversions == 1 and len(converter_calls) == once
    net(gg.tensor(np.ones((5, 4, 8, 8), np.float32)))  # another batch size: converted for it once
    net(gg.tensor(np.ones((5, 4, 8, 8), np.float32)))
    assert net.conversions == 2 and len(converter_calls) == 2 * once


def test_optimizer_updates_are_seen_by_the_next_call():
    net = to_module(mobile_block())
    x = gg.tensor(np.random.default_rng(0).standard_normal((2, 4, 8, 8)).astype(np.float32))
    opt = gg.optim.SGD(net.parameters(), lr=0.1)
    with gg.no_grad():
        before = net(x).numpy()
    losses = []
    for _ in range(3):
        opt.zero_grad()
        loss = (net(x) ** 2).mean()
        loss.backward()
        opt.step()
        losses.append(float(loss.item()))
    assert losses[-1] < losses[0]
    with gg.no_grad():
        after = net(x).numpy()
        assert net.conversions == 1
        np.testing.assert_allclose(after, interpreted(net, x).numpy(), rtol=1e-5, atol=1e-6)
    assert not np.allclose(before, after)


def test_a_parameter_taken_as_a_constant_converts_again_when_it_changes():
    scales = numpy_helper.from_array(np.array([1, 1, 2, 2], np.float32), "scales")  # a Parameter when asked
    graph = helper.make_graph([helper.make_node("Resize", ["x", "", "scales"], ["y"], mode="nearest")], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 2, 2])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], [scales])
    net = to_module(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), trainable=True)
    x = gg.tensor(np.arange(4, dtype=np.float32).reshape(1, 1, 2, 2))
    assert net(x).shape == (1, 1, 4, 4) and net(x).shape == (1, 1, 4, 4)
    assert net.conversions == 1
    net.scales.data[...] = [1, 1, 3, 3]
    with gg.no_grad():
        assert net(x).shape == (1, 1, 6, 6)
    assert net.conversions == 2


def test_a_parameter_read_as_a_constant_inside_a_subgraph_is_watched_too():
    then_branch = helper.make_graph([helper.make_node("Resize", ["x", "", "scales"], ["up"], mode="nearest")],
                                    "then", [], [helper.make_tensor_value_info("up", TensorProto.FLOAT, None)])
    else_branch = helper.make_graph([helper.make_node("Identity", ["x"], ["same"])], "else", [],
                                    [helper.make_tensor_value_info("same", TensorProto.FLOAT, None)])
    graph = helper.make_graph([helper.make_node("If", ["cond"], ["y"], then_branch=then_branch,
                                                else_branch=else_branch)], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 2, 2])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                              [numpy_helper.from_array(np.array(True), "cond"),
                               numpy_helper.from_array(np.array([1, 1, 2, 2], np.float32), "scales")])
    net = to_module(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]))
    x = gg.tensor(np.ones((1, 1, 2, 2), np.float32))
    assert net(x).shape == (1, 1, 4, 4)
    net.scales.data[...] = [1, 1, 3, 3]
    assert net(x).shape == (1, 1, 6, 6) and net.conversions == 2


def test_a_shape_read_from_the_data_is_read_when_the_graph_runs():
    graph = helper.make_graph([helper.make_node("Reshape", ["x", "s"], ["y"])], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3]),
                               helper.make_tensor_value_info("s", TensorProto.INT64, [2])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    net = to_module(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]))
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    assert net(x, np.array([3, 2])).shape == (3, 2)
    assert net(x, np.array([1, 6])).shape == (1, 6)
    with gg.no_grad():
        np.testing.assert_array_equal(net(x, np.array([6, 1])).numpy(), x.reshape(6, 1))
    assert net.conversions == 1  # converted once: the shape is an input of the graph


def test_sequences_run_without_grad_too():
    net = to_module(_sequence_model())
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    s = [gg.tensor(np.ones(2, np.float32)), gg.tensor(np.zeros((1, 3), np.float32))]
    with gg.no_grad():
        y, n, s_plus = net(gg.tensor(x), s)
        net(gg.tensor(x), s)
        assert net.conversions == 1
        ref_y, ref_n, ref_s = interpreted(net, gg.tensor(x), s)
    np.testing.assert_allclose(y.numpy(), ref_y.numpy())
    assert int(n.item()) == 2 and isinstance(s_plus, list) and len(s_plus) == 3
    for a, b in zip(s_plus, ref_s):
        np.testing.assert_array_equal(a.numpy(), b.numpy())


def test_random_ops_draw_anew_on_every_call():
    graph = helper.make_graph([helper.make_node("RandomNormalLike", ["x"], ["noise"]),
                               helper.make_node("RandomUniform", [], ["u"], shape=[100])], "random",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [100])],
                              [helper.make_tensor_value_info("noise", TensorProto.FLOAT, [100]),
                               helper.make_tensor_value_info("u", TensorProto.FLOAT, [100])])
    net = to_module(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]))
    x = gg.tensor(np.zeros(100, np.float32))
    with gg.no_grad():
        first, second = net(x), net(x)
    assert not np.array_equal(first[0].numpy(), second[0].numpy())
    assert not np.array_equal(first[1].numpy(), second[1].numpy())


def test_gg_function_and_graphs_still_trace_the_module():
    net = to_module(mobile_block())
    x = np.random.default_rng(1).standard_normal((2, 4, 8, 8)).astype(np.float32)
    compiled = gg.function(lambda t: net(t))
    with gg.no_grad():
        np.testing.assert_allclose(compiled(gg.tensor(x)).numpy(), net(gg.tensor(x)).numpy(), rtol=1e-5, atol=1e-6)
    graph = gg.Graph()
    with graph.as_default():
        ph = gg.placeholder(gg.float32, (None, 4, 8, 8))
        y = net(ph)
    np.testing.assert_allclose(gg.Session(graph).run(y, {ph: x}), net(gg.tensor(x)).numpy(), rtol=1e-5, atol=1e-6)


def test_copies_and_pickles_convert_for_their_own_parameters():
    import copy
    import pickle

    net = to_module(mobile_block())
    x = gg.tensor(np.random.default_rng(3).standard_normal((2, 4, 8, 8)).astype(np.float32))
    with gg.no_grad():
        y = net(x).numpy()
        for other in (copy.deepcopy(net), pickle.loads(pickle.dumps(net))):
            np.testing.assert_allclose(other(x).numpy(), y, rtol=1e-6)
            other.w_dw.data[...] = 0.0  # changing the copy changes the copy alone
            assert not np.allclose(other(x).numpy(), y)
            np.testing.assert_array_equal(net(x).numpy(), y)
