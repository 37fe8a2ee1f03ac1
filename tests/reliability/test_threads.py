"""Modes are per thread, as PyTorch's grad mode and TensorFlow's default graph: one thread running
inference under no_grad, building a graph, tracing a gg.function or detecting anomalies leaves the
other threads' eager training untouched."""
import sys
import threading

import numpy as np

import graphgrad as gg


def _run_all(*targets, repeats: int = 1):
    errors = []

    def wrap(fn):
        def run():
            try:
                for _ in range(repeats):
                    fn()
            except BaseException as exc:  # noqa: BLE001  (reported below)
                errors.append(exc)
        return run

    threads = [threading.Thread(target=wrap(t)) for t in targets]
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads often, so their modes really interleave
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=120)
    finally:
        sys.setswitchinterval(interval)
    assert not errors, errors


def _train_steps(n: int = 200):
    def train():
        model = gg.nn.Linear(4, 1)
        opt = gg.optim.SGD(model.parameters(), lr=0.01)
        x, y = gg.randn(16, 4), gg.randn(16, 1)
        for _ in range(n):
            opt.zero_grad()
            loss = ((model(x) - y) ** 2).mean()
            assert loss.requires_grad, "grad mode leaked from another thread"
            loss.backward()
            assert model.weight.grad is not None
            opt.step()
    return train


def _inference(n: int = 400):
    def infer():
        model = gg.nn.Linear(4, 1)
        for _ in range(n):
            with gg.no_grad():
                out = model(gg.randn(8, 4))
            assert not out.requires_grad
    return infer


def _graph_building(n: int = 100):
    def build():
        for _ in range(n):
            graph = gg.Graph()
            with graph.as_default():
                x = gg.placeholder("float32", (None, 3), name="x")
                y = gg.tanh(x) * 2
            assert y.data is None and gg.get_default_graph() is not graph
            out = gg.Session(graph=graph).run(y, {x: np.ones((2, 3), np.float32)})
            np.testing.assert_allclose(out, 2 * np.tanh(1.0), rtol=1e-6)
    return build


def _eager_never_symbolic(n: int = 500):
    def eager():
        for _ in range(n):
            t = gg.ones(3) * 2 + 1
            assert t.data is not None, "an eager op became a node of another thread's graph"
    return eager


def _tracing(n: int = 30):
    def trace():
        for i in range(n):
            f = gg.function(lambda a: gg.exp(a) + 1)
            np.testing.assert_allclose(f(gg.zeros(i % 3 + 1)).numpy(), 2.0)
    return trace


def test_inference_under_no_grad_does_not_stop_training_in_another_thread():
    _run_all(_train_steps(), _inference())


def test_graph_building_and_tracing_stay_in_their_threads():
    _run_all(_graph_building(300), _eager_never_symbolic(5000), _tracing(), _train_steps(100))


def test_anomaly_detection_is_per_thread():
    def detect():
        with gg.detect_anomaly():
            try:
                gg.log(gg.tensor([-1.0]))
            except gg.NonFiniteError:
                return
            raise AssertionError("anomaly mode did not catch the NaN")

    def lenient():
        for _ in range(3000):
            assert np.isnan(gg.log(gg.tensor([-1.0])).item())  # no anomaly mode here: NaN, no error

    with np.errstate(invalid="ignore"):
        _run_all(lenient, lambda: [detect() for _ in range(500)])
