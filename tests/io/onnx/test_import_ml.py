"""ONNX import of ai.onnx.ml trees and of Unique: a TreeEnsembleRegressor written with onnx.helper equals a
hand computation, through load(...).run, to_module and gg.function; Unique on an input fed at run time
(its length unknown at import) equals numpy.unique."""
import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper  # noqa: E402

import graphgrad as gg  # noqa: E402
from graphgrad.io.onnx import load, to_module  # noqa: E402


def two_trees(aggregate: str = "SUM") -> onnx.ModelProto:
    """Two depth-2 trees on x (N, 2), one target, base value 0.5:
    tree 0: x0 <= 1 ? (x1 <= 0 ? 1 : 2) : 3;   tree 1: x1 < 2 ? 10 : (x0 > -1 ? 20 : 30)."""
    nodes = [  # (tree, node, feature, mode, threshold, true node, false node)
        (0, 0, 0, "BRANCH_LEQ", 1.0, 1, 2), (0, 1, 1, "BRANCH_LEQ", 0.0, 3, 4), (0, 2, 0, "LEAF", 0, 0, 0),
        (0, 3, 0, "LEAF", 0, 0, 0), (0, 4, 0, "LEAF", 0, 0, 0),
        (1, 0, 1, "BRANCH_LT", 2.0, 1, 2), (1, 1, 0, "LEAF", 0, 0, 0), (1, 2, 0, "BRANCH_GT", -1.0, 3, 4),
        (1, 3, 0, "LEAF", 0, 0, 0), (1, 4, 0, "LEAF", 0, 0, 0)]
    leaves = [(0, 3, 1.0), (0, 4, 2.0), (0, 2, 3.0), (1, 1, 10.0), (1, 3, 20.0), (1, 4, 30.0)]  # (tree, node, value)
    tree, node_id, feature, mode, value, true_id, false_id = zip(*nodes)
    node = helper.make_node(
        "TreeEnsembleRegressor", ["x"], ["y"], domain="ai.onnx.ml", n_targets=1, aggregate_function=aggregate,
        base_values=[0.5], nodes_treeids=tree, nodes_nodeids=node_id, nodes_featureids=feature, nodes_modes=mode,
        nodes_values=value, nodes_truenodeids=true_id, nodes_falsenodeids=false_id,
        target_treeids=[t for t, _, _ in leaves], target_nodeids=[n for _, n, _ in leaves],
        target_ids=[0] * len(leaves), target_weights=[w for _, _, w in leaves])
    graph = helper.make_graph([node], "trees", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 2])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 1])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("ai.onnx.ml", 3)])


def by_hand(x: np.ndarray, aggregate: str) -> np.ndarray:
    out = []
    for x0, x1 in x:
        first = (1.0 if x1 <= 0 else 2.0) if x0 <= 1 else 3.0
        second = 10.0 if x1 < 2 else (20.0 if x0 > -1 else 30.0)
        out.append((first + second) / (2 if aggregate == "AVERAGE" else 1) + 0.5)
    return np.asarray(out, np.float32).reshape(-1, 1)


X = np.array([[0.0, -1.0], [0.5, 0.5], [2.0, 5.0], [-3.0, 2.0], [1.0, 2.0], [-1.0, 3.0]], np.float32)


@pytest.mark.parametrize("aggregate", ["SUM", "AVERAGE"])
def test_tree_ensemble_regressor_equals_hand_computation(aggregate):
    model = two_trees(aggregate)
    expected = by_hand(X, aggregate)
    y = load(model).run({"x": X})[0]
    assert y.dtype == np.float32 and y.shape == (len(X), 1)
    np.testing.assert_allclose(y, expected, rtol=1e-6)
    net = to_module(model)
    np.testing.assert_allclose(net(gg.tensor(X)).numpy(), expected, rtol=1e-6)
    np.testing.assert_allclose(gg.function(lambda t: net(t))(gg.tensor(X)).numpy(), expected, rtol=1e-6)


def unique_model(axis=None, sorted_=1) -> onnx.ModelProto:
    attrs = {"sorted": sorted_} if axis is None else {"sorted": sorted_, "axis": axis}
    node = helper.make_node("Unique", ["x"], ["y", "indices", "inverse", "counts"], **attrs)
    shape = ["N"] if axis is None else ["N", 3]
    graph = helper.make_graph([node], "unique", [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
                              [helper.make_tensor_value_info(n, TensorProto.UNDEFINED, None) for n in node.output])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 11)])


def test_unique_of_an_input_known_at_run_time_equals_numpy():
    imported = load(unique_model())  # one graph, fed inputs of several lengths
    for x in (np.array([2.0, 1.0, 1.0, 3.0, 4.0, 3.0], np.float32), np.array([5.0], np.float32),
              np.random.default_rng(0).integers(0, 7, 40).astype(np.float32)):
        y, indices, inverse, counts = imported.run({"x": x})
        expected = np.unique(x, return_index=True, return_inverse=True, return_counts=True)
        for got, want in zip((y, indices, inverse, counts), expected):
            np.testing.assert_array_equal(got, want)
        assert y.dtype == np.float32 and indices.dtype == inverse.dtype == counts.dtype == np.int64


def test_unique_in_order_of_first_occurrence_and_along_an_axis():
    x = np.array([3.0, 1.0, 3.0, 2.0, 1.0], np.float32)
    y, indices, inverse, counts = load(unique_model(sorted_=0)).run({"x": x})
    np.testing.assert_array_equal(y, [3.0, 1.0, 2.0])
    np.testing.assert_array_equal(indices, [0, 1, 3])
    np.testing.assert_array_equal(inverse, [0, 1, 0, 2, 1])
    np.testing.assert_array_equal(counts, [2, 2, 1])
    rows = np.array([[1, 2, 3], [0, 5, 5], [1, 2, 3], [0, 5, 4]], np.float32)
    got = load(unique_model(axis=0)).run({"x": rows})
    expected = np.unique(rows, axis=0, return_index=True, return_inverse=True, return_counts=True)
    for g, want in zip(got, expected):
        np.testing.assert_array_equal(g, want.reshape(g.shape))
