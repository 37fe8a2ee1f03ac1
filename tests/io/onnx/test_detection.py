"""A detection model end to end: an SSD-lite-style network exported by PyTorch's dynamo exporter
(depthwise-separable backbone, SSD heads, box decoding against anchors; dynamic batch) with ONNX
NonMaxSuppression and GatherND appended (``torch_models/generate.py``, ``write_detection_model``).
The recorded outputs are onnxruntime's, cross-checked there against a NumPy greedy NMS over
PyTorch's boxes. The number of kept boxes depends on the data."""
import os

import numpy as np
import pytest

pytest.importorskip("onnx")

import graphgrad as gg  # noqa: E402
from graphgrad.io.onnx import load, to_module  # noqa: E402

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "torch_models", "detection")
PATH = os.path.join(HERE, "ssdlite_nms.onnx")


@pytest.fixture(scope="module")
def data():
    with np.load(os.path.join(HERE, "ssdlite_nms.npz")) as archive:
        return dict(archive)


def _check(outputs, data, key):
    selected, boxes, scores = (np.asarray(o.numpy() if isinstance(o, gg.Tensor) else o) for o in outputs)
    np.testing.assert_array_equal(selected, data["selected" + key])
    np.testing.assert_allclose(boxes, data["kept_boxes" + key], rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(scores, data["kept_scores" + key], rtol=1e-4, atol=1e-5)


def test_the_recorded_outputs_keep_a_data_dependent_number_of_boxes(data):
    assert 0 < len(data["selected"]) < 60 and len(data["selected2"]) != len(data["selected"])


@pytest.mark.parametrize("key", ["", "2"])
def test_module_gives_the_kept_boxes(data, key):
    net = to_module(PATH)
    _check(net(gg.tensor(data["x" + key])), data, key)


def test_static_graph_imported_once_runs_two_batch_sizes(data):
    imported = load(PATH)
    assert imported.outputs["kept_boxes"].shape == (None, 4)
    for key in ("", "2"):
        _check(imported.run({"x": data["x" + key]}), data, key)


def test_one_trace_serves_both_batch_sizes(data):
    net = to_module(PATH)
    detect = gg.function(lambda x: net(x), input_signature=[gg.TensorSpec((None, 3, 32, 32), gg.float32)])
    for key in ("", "2"):
        _check(detect(gg.tensor(data["x" + key])), data, key)
    assert detect.trace_count == 1


def test_matches_onnxruntime_on_new_images(data):
    ort = pytest.importorskip("onnxruntime")
    session = ort.InferenceSession(PATH, providers=["CPUExecutionProvider"])
    x = np.random.default_rng(5).standard_normal((4, 3, 32, 32)).astype(np.float32)
    expected = session.run(None, {"x": x})
    got = load(PATH).run({"x": x})
    np.testing.assert_array_equal(got[0], expected[0])
    np.testing.assert_allclose(got[1], expected[1], rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(got[2], expected[2], rtol=1e-4, atol=1e-5)


def test_the_kept_scores_differentiate_to_the_weights(data):
    net = to_module(PATH)
    x = gg.tensor(data["x"], requires_grad=True)
    _, boxes, scores = net(x)
    (scores.sum() + boxes.sum()).backward()
    assert x.grad is not None and np.isfinite(x.grad.numpy()).all()
    trained = dict(net.named_parameters())
    assert trained and all(p.grad is not None for p in trained.values())
    assert not any("running" in name for name in net.trained_initializers)
