"""Op functions take TensorFlow's ``name=``: in graph mode the result's node gets that name."""
import numpy as np

import graphgrad as gg


def test_op_functions_name_their_node_in_graph_mode():
    graph = gg.Graph()
    with graph.as_default():
        x = gg.placeholder("float32", (None, 3), name="x")
        y = gg.tanh(x, name="y")
        z = gg.reduce_sum(y, name="total") if hasattr(gg, "reduce_sum") else gg.sum(y, name="total")
        again = gg.tanh(x, name="y")
        same = gg.reshape(x, (-1, 3), name="same")  # returns its input: a named copy is made
        with graph.name_scope("block"):
            scoped = gg.relu(x, name="act")
    assert y.name == "y:0" and graph.get_tensor_by_name("y:0") is y
    assert graph.get_tensor_by_name("total:0") is z and again.name == "y_1:0"
    assert same.name == "same:0" and scoped.name == "block/act:0"
    out = gg.Session(graph=graph).run(graph.get_tensor_by_name("total:0"), {x: np.ones((2, 3), np.float32)})
    np.testing.assert_allclose(out, 6 * np.tanh(1.0), rtol=1e-6)


def test_name_is_ignored_eagerly():
    assert gg.exp(gg.zeros(2), name="e").tolist() == [1.0, 1.0]
