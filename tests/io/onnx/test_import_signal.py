"""ONNX import of signal ops: a DFT written with onnx.helper equals numpy.fft, eagerly, in a static graph
and in a gg.function trace, keeps float32, and differentiates (checked against finite differences)."""
import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

import graphgrad as gg  # noqa: E402
from graphgrad.io.onnx import load, to_module  # noqa: E402


def dft_model(parts: int, length: int, dft_length: int, inverse: int = 0, onesided: int = 0,
              dtype: int = TensorProto.FLOAT) -> onnx.ModelProto:
    """One opset-20 DFT over axis 1 of x (N, length, 3, parts), dft_length and axis as initializers."""
    inits = [numpy_helper.from_array(np.array(dft_length, np.int64), "n"),
             numpy_helper.from_array(np.array(1, np.int64), "axis")]
    node = helper.make_node("DFT", ["x", "n", "axis"], ["y"], inverse=inverse, onesided=onesided)
    graph = helper.make_graph([node], "dft", [helper.make_tensor_value_info("x", dtype, ["N", length, 3, parts])],
                              [helper.make_tensor_value_info("y", dtype, None)], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)])


def numpy_dft(x, dft_length, inverse, onesided):
    """What the model computes, with numpy.fft (x: (N, length, 3, 1 or 2))."""
    z = x[..., 0] + 1j * x[..., 1] if x.shape[-1] == 2 else x[..., 0]
    if inverse and onesided:
        return np.fft.irfft(z, n=dft_length, axis=1)[..., None]
    y = (np.fft.ifft if inverse else np.fft.fft)(z, n=dft_length, axis=1)
    if onesided:
        y = y[:, :dft_length // 2 + 1]
    return np.stack([y.real, y.imag], axis=-1)


CASES = {  # (parts, length, dft_length, inverse, onesided)
    "complex, zero-padded": (2, 5, 8, 0, 0),
    "real, truncated": (1, 7, 6, 0, 0),
    "rfft, odd length": (1, 7, 7, 0, 1),
    "inverse": (2, 6, 6, 1, 0),
    "irfft, even length": (2, 5, 8, 1, 1),
    "irfft, odd length": (2, 4, 7, 1, 1),
}


@pytest.mark.parametrize("case", CASES.values(), ids=CASES.keys())
def test_dft_equals_numpy_fft_eagerly_in_a_graph_and_traced(case):
    parts, length, dft_length, inverse, onesided = case
    model = dft_model(parts, length, dft_length, inverse, onesided)
    x = np.random.default_rng(0).standard_normal((2, length, 3, parts)).astype(np.float32)
    expected = numpy_dft(x.astype(np.float64), dft_length, inverse, onesided)

    net = to_module(model)
    eager = net(gg.tensor(x))
    assert eager.dtype == gg.float32
    np.testing.assert_allclose(eager.numpy(), expected, rtol=1e-4, atol=1e-5)
    (static,) = load(model).run({"x": x})
    np.testing.assert_allclose(static, expected, rtol=1e-4, atol=1e-5)
    traced = gg.function(lambda t: net(t))(gg.tensor(x))
    np.testing.assert_allclose(traced.numpy(), expected, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("case", [CASES["complex, zero-padded"], CASES["irfft, odd length"]], ids=["dft", "irfft"])
def test_dft_gradient_matches_finite_differences(case):
    parts, length, dft_length, inverse, onesided = case
    net = to_module(dft_model(parts, length, dft_length, inverse, onesided, dtype=TensorProto.DOUBLE))
    x = np.random.default_rng(1).standard_normal((1, length, 3, parts))
    gg.check_grad(lambda t: net(t), gg.tensor(x))


def test_stft_with_a_hann_window_equals_numpy():
    signal_length, frame_length, step = 20, 8, 3
    nodes = [helper.make_node("HannWindow", ["size"], ["window"], periodic=0),
             helper.make_node("STFT", ["signal", "step", "window"], ["y"])]
    inits = [numpy_helper.from_array(np.array(frame_length, np.int64), "size"),
             numpy_helper.from_array(np.array(step, np.int64), "step")]
    graph = helper.make_graph(nodes, "stft",
                              [helper.make_tensor_value_info("signal", TensorProto.FLOAT, [2, signal_length, 1])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    x = np.random.default_rng(2).standard_normal((2, signal_length, 1)).astype(np.float32)

    starts = range(0, signal_length - frame_length + 1, step)
    frames = np.stack([x[:, s:s + frame_length, 0] for s in starts], axis=1) * np.hanning(frame_length)
    spectrum = np.fft.rfft(frames, axis=-1)
    out = to_module(model)(gg.tensor(x))
    assert out.dtype == gg.float32 and out.shape == (2, len(starts), frame_length // 2 + 1, 2)
    np.testing.assert_allclose(out.numpy(), np.stack([spectrum.real, spectrum.imag], -1), rtol=1e-4, atol=1e-5)
