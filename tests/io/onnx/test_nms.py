"""Non-maximum suppression through ONNX: gg.nms exported as NonMaxSuppression and run in onnxruntime,
and an ONNX NonMaxSuppression model (batches, classes, thresholds, center boxes) imported and
compared with onnxruntime."""
import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")
from onnx import TensorProto, helper  # noqa: E402

import graphgrad as gg  # noqa: E402
from graphgrad.io.onnx import to_module  # noqa: E402


def _boxes(n, seed):
    rng = np.random.default_rng(seed)
    xy = rng.uniform(0, 50, size=(n, 2))
    wh = rng.uniform(5, 30, size=(n, 2))
    return np.concatenate([xy, xy + wh], 1).astype(np.float32), rng.random(n).astype(np.float32)


def _ort(model, feeds):
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return session.run(None, feeds)


def test_exported_nms_runs_in_onnxruntime(tmp_path):
    boxes, scores = _boxes(30, 0)

    class Detect(gg.nn.Module):
        def forward(self, b, s):
            return gg.nms(b, s, 0.4)

    detect = Detect()
    model = gg.onnx.export(detect, str(tmp_path / "nms.onnx"), [gg.tensor(boxes), gg.tensor(scores)])
    names = [i.name for i in model.graph.input]
    (got,) = _ort(model, dict(zip(names, [boxes, scores])))
    assert got.tolist() == detect(gg.tensor(boxes), gg.tensor(scores)).tolist()


def nms_model(center_point_box=0, score_threshold=None):
    inputs = ["boxes", "scores", "limit", "iou"] + (["score"] if score_threshold is not None else [])
    node = helper.make_node("NonMaxSuppression", inputs, ["selected"], center_point_box=center_point_box)
    inits = [helper.make_tensor("limit", TensorProto.INT64, [1], [3]),
             helper.make_tensor("iou", TensorProto.FLOAT, [1], [0.3])]
    if score_threshold is not None:
        inits.append(helper.make_tensor("score", TensorProto.FLOAT, [1], [score_threshold]))
    graph = helper.make_graph([node], "nms", [helper.make_tensor_value_info("boxes", TensorProto.FLOAT, [2, 20, 4]),
                                              helper.make_tensor_value_info("scores", TensorProto.FLOAT, [2, 3, 20])],
                              [helper.make_tensor_value_info("selected", TensorProto.INT64, [None, 3])], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


@pytest.mark.parametrize("center_point_box, score_threshold", [(0, None), (1, 0.4)])
def test_imported_nms_matches_onnxruntime(center_point_box, score_threshold):
    rng = np.random.default_rng(1)
    boxes = np.stack([_boxes(20, 2)[0], _boxes(20, 3)[0]])
    scores = rng.random((2, 3, 20)).astype(np.float32)
    model = nms_model(center_point_box, score_threshold)
    (want,) = _ort(model, {"boxes": boxes, "scores": scores})
    got = to_module(model)(gg.tensor(boxes), gg.tensor(scores))
    assert got.numpy().tolist() == want.tolist()
