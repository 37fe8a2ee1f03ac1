"""SummaryWriter and the TensorBoard callback: event files read back with TensorBoard's own
EventAccumulator (skipped when the tensorboard package is not installed)."""
from __future__ import annotations

import numpy as np
import pytest

import graphgrad as gg

pytest.importorskip("tensorboard")
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator  # noqa: E402

from graphgrad.train.tensorboard import SummaryWriter, graph_def  # noqa: E402


def _read(path):
    acc = EventAccumulator(str(path), size_guidance={"scalars": 0, "histograms": 0})
    acc.Reload()
    return acc


def mlp():
    gg.manual_seed(0)
    return gg.Sequential([gg.nn.Linear(2, 8), gg.nn.ReLU(), gg.nn.Linear(8, 3)])


def test_scalars_histogram_graph_roundtrip(tmp_path):
    values = np.random.default_rng(0).normal(size=1000)
    model = mlp()
    with SummaryWriter(str(tmp_path)) as writer:
        for step in range(5):
            writer.add_scalar("loss", 1.0 / (step + 1), step)
        writer.add_scalar("tensor_value", gg.tensor(2.5), 0)
        writer.add_scalars("lr", {"a": 0.1, "b": 0.2}, 3)
        writer.add_histogram("weights", values, global_step=7, bins=20)
        writer.add_graph(model, input_shape=(2,))
    acc = _read(tmp_path)
    tags = acc.Tags()
    assert {"loss", "tensor_value", "lr/a", "lr/b"} <= set(tags["scalars"])
    loss = acc.Scalars("loss")
    assert [e.step for e in loss] == list(range(5))
    np.testing.assert_allclose([e.value for e in loss], [1 / (s + 1) for s in range(5)], rtol=1e-6)
    assert acc.Scalars("tensor_value")[0].value == 2.5 and acc.Scalars("lr/b")[0].step == 3

    histo = acc.Histograms("weights")[0]
    assert histo.step == 7
    h = histo.histogram_value
    counts, edges = np.histogram(values, bins=20)
    assert h.num == 1000 and h.min == pytest.approx(values.min()) and h.max == pytest.approx(values.max())
    assert h.sum == pytest.approx(values.sum()) and h.sum_squares == pytest.approx((values ** 2).sum())
    np.testing.assert_allclose(h.bucket, counts)
    np.testing.assert_allclose(h.bucket_limit, edges[1:])

    graph = acc.Graph()
    by_name = {n.name: n for n in graph.node}
    assert by_name["input"].op == "Placeholder"
    assert by_name["0/weight"].op == "ReadVariable"
    matmuls = [n for n in graph.node if n.op == "Linear"]  # the two Linear layers
    assert len(matmuls) == 2 and "input" in matmuls[0].input
    relu = [n for n in graph.node if n.op == "Relu"][0]
    assert relu.name.startswith("1/")  # nodes are grouped by submodule
    dims = [d.size for d in by_name["input"].attr["_output_shapes"].list.shape[0].dim]
    assert dims == [-1, 2]
    last = [n for n in graph.node if n.name.startswith("2/")][-1]
    assert [d.size for d in last.attr["_output_shapes"].list.shape[0].dim] == [-1, 3]


def test_graph_def_from_example_input_and_parameter_names_restored():
    model = mlp()
    gd = graph_def(model, input_to_model=np.zeros((4, 2), np.float32))
    assert any(n.op == "Placeholder" for n in gd.node)
    assert all(p.base_name == "Parameter" for p in model.parameters())
    assert model.training and "forward" not in model.module[0].__dict__
    # the model still works eagerly afterwards
    assert model(gg.tensor(np.zeros((3, 2), np.float32))).shape == (3, 3)
    with pytest.raises(ValueError, match="input_shape"):
        graph_def(model)


def test_tensorboard_callback(tmp_path):
    rng = np.random.default_rng(0)
    x, y = rng.normal(size=(40, 2)).astype(np.float32), rng.integers(0, 3, 40)
    model = mlp()
    model.compile("adam", "cross_entropy", metrics=["accuracy"])
    model.fit(x, y, epochs=3, verbose=0, validation_split=0.25,
              callbacks=[gg.train.TensorBoard(str(tmp_path), histogram_freq=1)])
    train, val = _read(tmp_path / "train"), _read(tmp_path / "validation")
    assert {"epoch_loss", "epoch_accuracy"} <= set(train.Tags()["scalars"])
    assert [e.step for e in train.Scalars("epoch_loss")] == [0, 1, 2]
    np.testing.assert_allclose([e.value for e in train.Scalars("epoch_loss")], model.history.history["loss"],
                               rtol=1e-6)
    assert {"epoch_loss", "epoch_accuracy"} <= set(val.Tags()["scalars"])
    assert {"0/weight", "2/bias"} <= set(train.Tags()["histograms"])
    assert train.Tags()["graph"] and any(n.op == "Linear" for n in train.Graph().node)


def test_closed_writer_raises(tmp_path):
    writer = SummaryWriter(str(tmp_path))
    writer.close()
    with pytest.raises(RuntimeError, match="closed"):
        writer.add_scalar("x", 1.0, 0)
