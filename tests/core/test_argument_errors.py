"""Wrong results without an error, and bad arguments at the API edge: each gives a graphgrad error
naming the function and the argument (PyTorch's exception type where it has one)."""
import numpy as np
import pytest

import graphgrad as gg


@pytest.mark.parametrize("call, match", [
    (lambda: gg.zeros(2.5), "zeros: size\\[0\\] must be an integer"),
    (lambda: gg.randn("3"), "randn: size\\[0\\] must be an integer"),
    (lambda: gg.randn(-1), "randn: size\\[0\\] must be at least 0"),
    (lambda: gg.ones((2, -3)), "ones: size\\[1\\] must be at least 0"),
    (lambda: gg.arange(0, 10, 0), "arange: step must be nonzero"),
    (lambda: gg.arange(0, 10, -1), "arange: the range"),
    (lambda: gg.arange("a"), "arange: end must be a number"),
    (lambda: gg.linspace(0, 1, -1), "linspace: steps must be at least 0"),
    (lambda: gg.randint(5, 5, (2,)), "randint: low \\(5\\) must be less than high \\(5\\)"),
    (lambda: gg.randperm(-2), "randperm: n must be at least 0"),
    (lambda: gg.eye(2.0), "eye: n must be an integer"),
    (lambda: gg.full((2, 1.5), 0.0), "full: size\\[1\\] must be an integer"),
    (lambda: gg.softmax(gg.ones((2, 2)), 1.5), "axis \\(dim\\) must be an integer"),
    (lambda: gg.sum(gg.ones((2, 2)), axis=0.5), "axis must be an integer"),
    (lambda: gg.nn.Linear("3", 4), "Linear: in_features must be a non-negative integer"),
    (lambda: gg.nn.Linear(3, -4), "Linear: out_features must be a non-negative integer"),
    (lambda: gg.placeholder(gg.float32, (-2, 3)), "placeholder: shape\\[0\\]"),
    (lambda: gg.tensor([[1, 2], [3]]), "nested sequences differ in length"),
])
def test_bad_arguments_name_the_function(call, match):
    with pytest.raises(gg.ArgumentError, match=match):
        call()


def test_argument_errors_are_type_and_value_errors():
    assert issubclass(gg.ArgumentError, TypeError) and issubclass(gg.ArgumentError, ValueError)
    assert gg.randint(3, (2,)).shape == (2,) and gg.arange(10.0, 0.0, -2.5).tolist() == [10.0, 7.5, 5.0, 2.5]
    assert gg.zeros(np.int64(2), 3).shape == (2, 3) and gg.arange(0, 0).shape == (0,)


def test_out_of_range_indices_raise_index_errors():
    with pytest.raises(IndexError, match="embedding: index -1 is out of range for a table of 5 rows"):
        gg.nn.Embedding(5, 2)(gg.tensor([-1]))
    with pytest.raises(IndexError, match="embedding: index 5"):
        gg.embedding(gg.tensor([[0, 5]]), gg.ones((5, 2)))
    with pytest.raises(IndexError, match="one_hot: class 5 is out of range for num_classes=3"):
        gg.one_hot(gg.tensor([0, 5]), 3)
    with pytest.raises(gg.IndexRangeError):
        gg.one_hot(gg.tensor([-1]), 3)


def test_index_errors_in_graph_mode_name_the_node():
    graph = gg.Graph()
    with graph.as_default():
        ids = gg.placeholder("int64", (None,), name="ids")
        rows = gg.embedding(ids, gg.constant(np.ones((3, 2), np.float32)))
    with pytest.raises(IndexError, match="node 'Embedding'.*index 7"):
        gg.Session(graph=graph).run(rows, {ids: np.array([0, 7])})


def test_integer_division_by_zero_raises():
    with pytest.raises(ZeroDivisionError, match="floor_divide: integer division by zero"):
        gg.tensor([1, 2]) // 0
    with pytest.raises(ZeroDivisionError, match="remainder: integer division by zero"):
        gg.tensor([1, 2]) % gg.tensor([1, 0])
    with pytest.raises(gg.DivisionByZeroError):
        gg.div(gg.tensor([3]), gg.tensor([0]), rounding_mode="trunc")
    assert (gg.tensor([1.0, -1.0]) // 0).tolist() == [float("inf"), float("-inf")]  # floats: IEEE, no error
    assert (gg.tensor([4, 5]) // 2).tolist() == [2, 2]
