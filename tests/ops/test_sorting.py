"""Sorting, order statistics, searching and counting beyond the op table: named (values, indices) results,
the NumPy meaning of gg.sort / gg.median / gg.unique against the PyTorch meaning of the Tensor methods and
compat.torch, graph mode (Session and gg.function), gradients through ties, and ONNX export."""
from __future__ import annotations

import math

import numpy as np
import pytest

import graphgrad as gg
import graphgrad.compat.torch as torch

NAN = math.nan


def test_named_results():
    x = gg.tensor([[3.0, 1.0, 2.0], [0.0, 5.0, 4.0]])
    for result in (x.sort(), x.topk(2), x.kthvalue(1), x.median(1), x.mode(1), x.cummax(1), x.cummin(1),
                   torch.sort(x), torch.topk(x, 1), torch.median(x, 0), torch.cummax(x, 0)):
        assert isinstance(result, gg.ValuesIndices)
        values, indices = result
        assert values is result.values and indices is result.indices and indices.dtype == np.int64
    hist = x.histogram(3)
    assert type(hist).__name__ == "histogram" and hist.hist.shape == (3,) and hist.bin_edges.shape == (4,)


def test_numpy_meaning_of_gg_functions_and_pytorch_meaning_of_methods():
    x = gg.tensor([[4.0, 1.0, 3.0, 2.0]])
    assert isinstance(gg.sort(x), gg.Tensor) and gg.sort(x).tolist() == [[1.0, 2.0, 3.0, 4.0]]
    assert x.sort().indices.tolist() == [[1, 3, 2, 0]]
    assert gg.median(x).item() == 2.5  # NumPy: the mean of the two middle values
    assert x.median().item() == 2.0 and torch.median(x).item() == 2.0  # PyTorch: the lower one
    assert x.median(1).indices.tolist() == [3]
    assert gg.nanmedian(gg.tensor([1.0, NAN, 4.0])).item() == 2.5
    assert torch.nanmedian(gg.tensor([1.0, NAN, 4.0])).item() == 1.0
    # unique: NumPy merges NaNs and returns a tuple of what was asked; PyTorch keeps every NaN
    y = gg.tensor([2.0, NAN, 1.0, NAN])
    assert gg.unique(y).shape == (3,)
    assert torch.unique(y).shape == (4,) and y.unique(return_counts=True)[1].tolist() == [1, 1, 1, 1]
    values, index, counts = gg.unique(gg.tensor([3, 1, 3]), return_index=True, return_counts=True)
    assert values.tolist() == [1, 3] and index.tolist() == [1, 0] and counts.tolist() == [1, 2]
    # histogram: NumPy counts are integers, PyTorch's floats
    assert gg.histogram(gg.tensor([0.0, 1.0, 1.0]), 2)[0].dtype == np.int64
    assert torch.histogram(gg.tensor([0.0, 1.0, 1.0]), 2).hist.dtype == np.float32


def test_torch_argument_forms():
    x = gg.tensor([[1.0, 3.0, 3.0], [2.0, 0.0, 2.0]])
    assert torch.sort(x, stable=True, dim=1, descending=True).indices.tolist() == [[1, 2, 0], [0, 2, 1]]
    assert torch.topk(x, k=2, dim=0, largest=False).values.tolist() == [[1.0, 0.0, 2.0], [2.0, 3.0, 3.0]]
    assert torch.kthvalue(x, 2, dim=1, keepdim=True).values.shape == (2, 1)
    assert torch.quantile(x, torch.tensor([0.5]), dim=1, keepdim=True).shape == (1, 2, 1)
    assert torch.searchsorted(torch.tensor([1, 3, 5]), torch.tensor([3, 4]), right=True).tolist() == [2, 2]
    assert torch.bucketize(4.0, torch.tensor([1.0, 3.0, 5.0])).shape == ()
    assert torch.bincount(torch.tensor([0, 2, 2]), minlength=4).tolist() == [1, 0, 2, 0]
    assert torch.histc(torch.tensor([1.0, 2.0, 1.0, 4.0]), bins=4).tolist() == [2.0, 1.0, 0.0, 1.0]
    out, inverse, counts = torch.unique_consecutive(torch.tensor([1, 1, 2, 1]), return_inverse=True, return_counts=True)
    assert out.tolist() == [1, 2, 1] and inverse.tolist() == [0, 0, 1, 2] and counts.tolist() == [2, 1, 1]


def test_zero_d_inputs():
    s = gg.tensor(2.5)
    for values, indices in (s.sort(), s.topk(1), s.kthvalue(1), s.median(0), s.mode(), s.cummax(0), s.cummin(-1)):
        assert values.shape == indices.shape == () and values.item() == 2.5 and indices.item() == 0
    assert gg.logcumsumexp(s, 0).shape == () and gg.quantile(s, 0.5).shape == ()
    with pytest.raises(gg.ShapeError):
        s.sort(1)


def test_errors_name_the_op():
    x = gg.tensor([[1.0, 2.0]])
    with pytest.raises(gg.ShapeError, match="topk"):
        x.topk(3)
    with pytest.raises(gg.ShapeError, match="kthvalue"):
        x.kthvalue(0)
    with pytest.raises(ValueError, match="quantile"):
        gg.quantile(x, 1.5)
    with pytest.raises(ValueError, match="interpolation"):
        gg.quantile(x, 0.5, interpolation="cubic")
    with pytest.raises(gg.ShapeError, match="bucketize"):
        gg.bucketize(x, gg.tensor([[1.0]]))


def test_sort_and_topk_gradients_follow_the_indices():
    x = gg.tensor([[3.0, 1.0, 2.0, 1.0]], requires_grad=True)
    values, indices = x.topk(2, largest=False)  # the two 1.0s, lower index first
    assert indices.tolist() == [[1, 3]]
    (values * gg.tensor([[10.0, 20.0]])).sum().backward()
    assert x.grad.tolist() == [[0.0, 10.0, 0.0, 20.0]]
    x.grad = None
    x.median().backward()  # PyTorch shares the gradient of a median of all elements among its ties
    assert x.grad.tolist() == [[0.0, 0.5, 0.0, 0.5]]
    x.grad = None
    x.cummax(1).values.sum().backward()
    assert x.grad.tolist() == [[4.0, 0.0, 0.0, 0.0]]


def test_logcumsumexp_is_stable_with_a_finite_gradient():
    x = gg.tensor([[-1000.0, 0.0, 1000.0, 999.0]], dtype="float64", requires_grad=True)
    y = gg.logcumsumexp(x, 1)
    np.testing.assert_allclose(y.numpy(), [[-1000.0, 0.0, 1000.0, 1000.0 + math.log1p(math.exp(-1.0))]])
    (g,) = gg.grad(y.sum(), [x])
    expected = [sum(math.exp(x.numpy()[0, j] - y.numpy()[0, i]) for i in range(j, 4)) for j in range(4)]
    np.testing.assert_allclose(g.numpy()[0], expected, rtol=1e-12)


def test_graph_mode_session_and_function():
    data = np.array([[3.0, 1.0, 2.0, 1.0], [0.0, 5.0, 5.0, 4.0]], np.float32)
    graph = gg.Graph()
    with graph.as_default():
        x = gg.placeholder("float32", (None, 4))
        outs = [x.sort(1, descending=True).values, x.topk(2).indices, x.median(1).values, x.mode(1).indices,
                x.cummin(1).indices, gg.logcumsumexp(x, 1), gg.quantile(x, [0.25, 0.75], 1), x.kthvalue(2).values,
                gg.searchsorted(gg.tensor([1.0, 3.0]), x), x.histc(4, 0, 5)]
        uniq = x.unique(return_counts=True)
    got = gg.Session(graph).run(outs + list(uniq), {x: data})
    eager_x = gg.tensor(data)
    expected = [eager_x.sort(1, descending=True).values, eager_x.topk(2).indices, eager_x.median(1).values,
                eager_x.mode(1).indices, eager_x.cummin(1).indices, gg.logcumsumexp(eager_x, 1),
                gg.quantile(eager_x, [0.25, 0.75], 1), eager_x.kthvalue(2).values,
                gg.searchsorted(gg.tensor([1.0, 3.0]), eager_x), eager_x.histc(4, 0, 5)] + list(eager_x.unique(return_counts=True))
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g, e.numpy(), rtol=1e-6)

    @gg.function
    def stats(t):
        top = t.topk(2)
        return top.values * 2, top.indices, t.cummax(1).values, gg.median(t, 1), gg.logcumsumexp(t, 1)

    for g, e in zip(stats(gg.tensor(data)), [eager_x.topk(2).values * 2, eager_x.topk(2).indices,
                                               eager_x.cummax(1).values, gg.median(eager_x, 1),
                                               gg.logcumsumexp(eager_x, 1)]):
        np.testing.assert_allclose(g.numpy(), e.numpy(), rtol=1e-6)


def test_gradients_inside_gg_function_match_eager():
    from graphgrad import nn

    p = nn.Parameter(gg.tensor(np.array([3.0, 1.0, 2.0, 2.5])))

    def step():
        x = p * 1.0
        loss = (x.median() + gg.nanquantile(x, 0.3) + x.cummin(0).values.sum() + gg.logcumsumexp(x, 0).sum()
                + x.sort(descending=True).values[0] + x.topk(2).values.sum() + x.kthvalue(2).values + x.mode().values)
        loss.backward()
        return loss

    eager_loss = step().item()
    eager_grad = p.grad.numpy().copy()
    p.grad = None
    traced = gg.function(step)
    np.testing.assert_allclose(traced().item(), eager_loss, rtol=1e-12)
    np.testing.assert_allclose(p.grad.numpy(), eager_grad, rtol=1e-12)


# ---- ONNX export ----------------------------------------------------------------------------------------------
def _flat(out) -> list:
    return [t for o in out for t in _flat(o)] if isinstance(out, (tuple, list)) else [out]


def _export_and_run(fn, inputs, tmp_path):
    onnx = pytest.importorskip("onnx")
    ort = pytest.importorskip("onnxruntime")
    path = tmp_path / "model.onnx"
    model = gg.onnx.export(gg.function(fn), path, inputs)
    onnx.checker.check_model(onnx.load(str(path)), full_check=True)
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    names = [i.name for i in session.get_inputs()]
    got = session.run(None, dict(zip(names, inputs)))
    expected = [t.numpy() for t in _flat(fn(*[gg.tensor(v) for v in inputs]))]
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        assert g.dtype == e.dtype and g.shape == e.shape, f"{g.dtype}{g.shape} != {e.dtype}{e.shape}"
        np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-6)
    return model


def test_onnx_export_of_sorting_ops(tmp_path):
    ties = np.array([[1.0, 3.0, 3.0, 2.0, 3.0, 1.0], [2.0, 0.5, 2.0, 0.5, 0.5, 4.0]], np.float32)

    def model(x):
        top = x.topk(3)
        low = x.topk(2, largest=False)
        ordered = x.sort(1, descending=True)
        return (top.values, top.indices, low.indices, ordered.values, ordered.indices, x.kthvalue(2).values,
                x.median(1).values, gg.quantile(x, [0.3, 0.5], 1), gg.logcumsumexp(x, 1), gg.sort(x, 0))

    exported = _export_and_run(model, [ties], tmp_path)
    assert "TopK" in {n.op_type for n in exported.graph.node}


def test_onnx_export_of_logcumsumexp_over_a_wide_range(tmp_path):
    wide = np.array([[-900.0, 0.0, 80.0, -200.0, 81.0], [60.0, -60.0, 59.0, 61.0, -np.inf]], np.float32)
    _export_and_run(lambda x: gg.logcumsumexp(x, 1), [wide], tmp_path)


def test_onnx_export_of_cummax_and_cummin(tmp_path):
    data = np.array([[1.0, NAN, 3.0, NAN, 2.0, 0.0], [2.0, 0.5, 2.0, 0.5, 3.0, 0.5]], np.float32)
    _export_and_run(lambda x: (x.cummax(1), x.cummin(1), gg.cummax(x, 0).indices), [data], tmp_path)
    ints = np.array([[3, 1, 3, 0, 5, 5, 1]], np.int64)
    _export_and_run(lambda x: (x.cummax(-1).indices, x.cummin(-1)), [ints], tmp_path)


def test_onnx_export_of_searchsorted_and_bucketize(tmp_path):
    rows = np.array([[1.0, 2.0, 2.0, 4.0], [0.0, 5.0, 6.0, 6.0]], np.float32)
    values = np.array([[2.0, 5.0, 0.0], [6.0, -1.0, 5.5]], np.float32)
    _export_and_run(lambda s, v: (gg.searchsorted(s, v), gg.searchsorted(s, v, right=True, out_int32=True),
                                  gg.bucketize(v, s[0])), [rows, values], tmp_path)


def test_onnx_export_of_histograms(tmp_path):
    data = np.array([[0.1, 0.9, 1.5, 1.5], [2.0, -0.5, 0.5, 3.7]], np.float32)
    weights = np.array([[1.0, 0.5, 2.0, 1.0], [0.25, 1.0, 1.0, 3.0]], np.float32)
    _export_and_run(lambda x, w: (gg.histc(x, 4), x.histc(3, 0, 2), gg.histogram(x, 3, range=(0, 3)),
                                  x.histogram(gg.tensor([0.0, 0.5, 2.0]), weight=w, density=True)),
                    [data, weights], tmp_path)


def test_onnx_export_of_unique(tmp_path):
    data = np.array([3, 1, 2, 3, 1, 5], np.int64)
    _export_and_run(lambda x: gg.unique(x, return_inverse=True, return_counts=True), [data], tmp_path)
    slices = np.array([[1, 2, 1, 0], [3, 4, 3, 0], [1, 2, 1, 0]], np.int64)
    _export_and_run(lambda x: x.unique(dim=1, return_inverse=True, return_counts=True), [slices], tmp_path)
    _export_and_run(lambda x: gg.unique_consecutive(x, return_counts=True, dim=0), [slices], tmp_path)
