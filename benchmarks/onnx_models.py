"""Imported ONNX models: graphgrad against onnxruntime, single thread.

Small models are generated with ``onnx.helper`` (random weights, fixed seed), saved to a temporary
folder and run three ways, interleaved in one process (``time_steps``):

* ``session``: ``gg.onnx.load(path)`` then ``.run({"x": x})`` (a static graph in a Session, the
  initializers as Variables: trainable);
* ``frozen``: the same with ``load(path, trainable=False)``: initializers are constants, so what
  depends on them alone (folded BatchNormalization weights...) is computed once at import;
* ``module``: ``gg.onnx.to_module(path)`` called under ``gg.no_grad()`` (eager);
* ``onnxruntime``: an ``InferenceSession`` with ``intra_op_num_threads=1``.

Models: MobileNetV3-small style (depthwise separable convs, hard-swish, squeeze-excitation with
hard-sigmoid; BatchNormalization nodes, or folded into the convs as PyTorch's exporter does), an
EfficientNet style (MBConv blocks, swish, squeeze-excitation with sigmoid), a ResNet-style CNN, a
small transformer encoder, an LSTM (sequence 35, batch 32, hidden 128) and an MLP. NumPy's BLAS
runs on one thread as onnxruntime does
(``OMP_NUM_THREADS=1``, ``OPENBLAS_NUM_THREADS=1``, ``GRAPHGRAD_NATIVE_THREADS=1``, set before NumPy is
imported).

    python benchmarks/onnx_models.py [--models mobilenet_b1,effnet_b8] [--repeats 10] [--json out.json]
"""
from __future__ import annotations

import os

os.environ["OMP_NUM_THREADS"] = "1"
os.environ["OPENBLAS_NUM_THREADS"] = "1"
os.environ["GRAPHGRAD_NATIVE_THREADS"] = "1"  # (graphgrad's own kernels: one thread too)

import argparse  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402

from common import peak_rss_mb, save_json, time_steps  # noqa: E402


# ---- an onnx.helper model builder ---------------------------------------------------------------------
class Builder:
    """Appends ONNX nodes and random initializers; each method returns the name of its output.
    Activations are (N, C, H, W) for the CNNs, (N, T, D) for the transformer."""

    def __init__(self, seed: int = 0, fold_bn: bool = False):
        import onnx

        self.onnx = onnx
        self.rng = np.random.default_rng(seed)
        self.fold_bn = fold_bn
        self.nodes, self.inits, self.count = [], [], 0

    def name(self, prefix: str) -> str:
        self.count += 1
        return f"{prefix}_{self.count}"

    def init(self, prefix: str, array) -> str:
        name = self.name(prefix)
        self.inits.append(self.onnx.numpy_helper.from_array(np.asarray(array), name))
        return name

    def node(self, op_type: str, inputs: list, **attrs) -> str:
        out = self.name(op_type.lower())
        self.nodes.append(self.onnx.helper.make_node(op_type, inputs, [out], **attrs))
        return out

    def conv(self, x: str, cin: int, cout: int, k: int, stride: int = 1, groups: int = 1) -> str:
        """Conv (no bias) + BatchNormalization, or one Conv with a bias when BN is folded."""
        fan_in = cin // groups * k * k
        w = (self.rng.standard_normal((cout, cin // groups, k, k)) * np.sqrt(2.0 / fan_in)).astype(np.float32)
        attrs = dict(kernel_shape=[k, k], strides=[stride, stride], pads=[k // 2] * 4, group=groups)
        if self.fold_bn:
            bias = (self.rng.standard_normal(cout) * 0.1).astype(np.float32)
            return self.node("Conv", [x, self.init("w", w), self.init("b", bias)], **attrs)
        y = self.node("Conv", [x, self.init("w", w)], **attrs)
        return self.batch_norm(y, cout)

    def batch_norm(self, x: str, c: int) -> str:
        scale = (1.0 + 0.1 * self.rng.standard_normal(c)).astype(np.float32)
        bias = (0.1 * self.rng.standard_normal(c)).astype(np.float32)
        mean = (0.1 * self.rng.standard_normal(c)).astype(np.float32)
        var = (1.0 + 0.1 * self.rng.random(c)).astype(np.float32)
        return self.node("BatchNormalization", [x] + [self.init(p, v) for p, v in
                                                      (("scale", scale), ("beta", bias), ("mean", mean), ("var", var))])

    def linear(self, x: str, fan_in: int, fan_out: int) -> str:
        w = (self.rng.standard_normal((fan_in, fan_out)) * np.sqrt(1.0 / fan_in)).astype(np.float32)
        b = (0.1 * self.rng.standard_normal(fan_out)).astype(np.float32)
        return self.node("Add", [self.node("MatMul", [x, self.init("w", w)]), self.init("b", b)])

    def act(self, x: str, kind: str) -> str:
        if kind == "relu":
            return self.node("Relu", [x])
        if kind == "hswish":
            return self.node("HardSwish", [x])
        if kind == "swish":  # x * sigmoid(x), as PyTorch exports SiLU
            return self.node("Mul", [x, self.node("Sigmoid", [x])])
        if kind == "gelu":  # 0.5 x (1 + erf(x / sqrt 2)), as PyTorch exports GELU
            inner = self.node("Erf", [self.node("Div", [x, self.init("c", np.float32(np.sqrt(2.0)))])])
            half = self.node("Mul", [x, self.node("Add", [inner, self.init("c", np.float32(1.0))])])
            return self.node("Mul", [half, self.init("c", np.float32(0.5))])
        return x

    def squeeze_excite(self, x: str, c: int, hidden: int, gate: str) -> str:
        s = self.node("GlobalAveragePool", [x])
        w1 = (self.rng.standard_normal((hidden, c, 1, 1)) * np.sqrt(2.0 / c)).astype(np.float32)
        w2 = (self.rng.standard_normal((c, hidden, 1, 1)) * np.sqrt(1.0 / hidden)).astype(np.float32)
        s = self.node("Conv", [s, self.init("w", w1), self.init("b", np.zeros(hidden, np.float32))])
        s = self.act(s, "relu" if gate == "hsigmoid" else "swish")
        s = self.node("Conv", [s, self.init("w", w2), self.init("b", np.zeros(c, np.float32))])
        s = self.node("HardSigmoid", [s], alpha=1.0 / 6.0) if gate == "hsigmoid" else self.node("Sigmoid", [s])
        return self.node("Mul", [x, s])

    def head(self, x: str, c: int, classes: int = 1000) -> str:
        pooled = self.node("Flatten", [self.node("GlobalAveragePool", [x])])
        w = (self.rng.standard_normal((classes, c)) * np.sqrt(1.0 / c)).astype(np.float32)
        return self.node("Gemm", [pooled, self.init("w", w), self.init("b", np.zeros(classes, np.float32))],
                         transB=1)

    def model(self, x_shape: tuple, out: str, opset: int = 17):
        helper, tp = self.onnx.helper, self.onnx.TensorProto
        self.nodes.append(helper.make_node("Identity", [out], ["y"]))
        inputs = [helper.make_tensor_value_info("x", tp.FLOAT, list(x_shape))]
        graph = helper.make_graph(self.nodes, "bench", inputs, [], self.inits)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
        inferred = self.onnx.shape_inference.infer_shapes(model)  # to declare the output's shape
        model.graph.output.extend(v for v in inferred.graph.value_info if v.name == "y")
        self.onnx.checker.check_model(model, full_check=True)
        return model


# ---- the models ---------------------------------------------------------------------------------------------
#: MobileNetV3-small: (kernel, expanded, out, squeeze-excitation, activation, stride)
MOBILENET_V3_SMALL = [(3, 16, 16, True, "relu", 2), (3, 72, 24, False, "relu", 2), (3, 88, 24, False, "relu", 1),
                      (5, 96, 40, True, "hswish", 2), (5, 240, 40, True, "hswish", 1), (5, 240, 40, True, "hswish", 1),
                      (5, 120, 48, True, "hswish", 1), (5, 144, 48, True, "hswish", 1),
                      (5, 288, 96, True, "hswish", 2), (5, 576, 96, True, "hswish", 1),
                      (5, 576, 96, True, "hswish", 1)]


def mobilenet_v3(x_shape: tuple, fold_bn: bool = False):
    b = Builder(fold_bn=fold_bn)
    x = b.act(b.conv("x", 3, 16, 3, stride=2), "hswish")
    cin = 16
    for k, expanded, cout, se, act, stride in MOBILENET_V3_SMALL:
        h = b.act(b.conv(x, cin, expanded, 1), act) if expanded != cin else x
        h = b.act(b.conv(h, expanded, expanded, k, stride=stride, groups=expanded), act)
        if se:
            h = b.squeeze_excite(h, expanded, _divisible(expanded // 4), "hsigmoid")
        h = b.conv(h, expanded, cout, 1)
        x = b.node("Add", [x, h]) if stride == 1 and cin == cout else h
        cin = cout
    x = b.act(b.conv(x, cin, 576, 1), "hswish")
    return b.model(x_shape, b.head(x, 576))


#: EfficientNet-B0 stages, one block each: (expansion, kernel, stride, out)
EFFICIENTNET_B0 = [(1, 3, 1, 16), (6, 3, 2, 24), (6, 5, 2, 40), (6, 3, 2, 80), (6, 5, 1, 112), (6, 5, 2, 192),
                   (6, 3, 1, 320)]


def efficientnet(x_shape: tuple, fold_bn: bool = False):
    b = Builder(seed=1, fold_bn=fold_bn)
    x = b.act(b.conv("x", 3, 32, 3, stride=2), "swish")
    cin = 32
    for expansion, k, stride, cout in EFFICIENTNET_B0:
        expanded = cin * expansion
        h = b.act(b.conv(x, cin, expanded, 1), "swish") if expansion != 1 else x
        h = b.act(b.conv(h, expanded, expanded, k, stride=stride, groups=expanded), "swish")
        h = b.squeeze_excite(h, expanded, max(1, cin // 4), "sigmoid")
        h = b.conv(h, expanded, cout, 1)
        x = b.node("Add", [x, h]) if stride == 1 and cin == cout else h
        cin = cout
    x = b.act(b.conv(x, cin, 1280, 1), "swish")
    return b.model(x_shape, b.head(x, 1280))


def resnet(x_shape: tuple):
    """ResNet-18 layout at a quarter of the width (16-32-64-128 channels), one block per stage."""
    b = Builder(seed=2)
    x = b.act(b.conv("x", 3, 16, 7, stride=2), "relu")
    x = b.node("MaxPool", [x], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    cin = 16
    for cout, stride in ((16, 1), (32, 2), (64, 2), (128, 2)):
        h = b.act(b.conv(x, cin, cout, 3, stride=stride), "relu")
        h = b.conv(h, cout, cout, 3)
        shortcut = b.conv(x, cin, cout, 1, stride=stride) if stride != 1 or cin != cout else x
        x = b.act(b.node("Add", [h, shortcut]), "relu")
        cin = cout
    return b.model(x_shape, b.head(x, cin))


def transformer(x_shape: tuple, heads: int = 4, layers: int = 2):
    """Pre-norm encoder: LayerNormalization, multi-head self-attention (MatMul/Reshape/Transpose/
    Softmax), a GELU MLP of 4x width; x is (batch, time, d_model)."""
    batch, time_, d = x_shape
    b = Builder(seed=3)
    x = "x"

    def heads_first(t):  # (N, T, D) -> (N, H, T, D/H)
        t = b.node("Reshape", [t, b.init("shape", np.array([batch, time_, heads, d // heads], np.int64))])
        return b.node("Transpose", [t], perm=[0, 2, 1, 3])

    for _ in range(layers):
        ones, zeros = np.ones(d, np.float32), np.zeros(d, np.float32)
        h = b.node("LayerNormalization", [x, b.init("g", ones), b.init("b", zeros)], axis=-1)
        q, k, v = (heads_first(b.linear(h, d, d)) for _ in range(3))
        scores = b.node("MatMul", [q, b.node("Transpose", [k], perm=[0, 1, 3, 2])])
        scores = b.node("Mul", [scores, b.init("c", np.float32(1.0 / np.sqrt(d // heads)))])
        att = b.node("MatMul", [b.node("Softmax", [scores], axis=-1), v])
        att = b.node("Transpose", [att], perm=[0, 2, 1, 3])
        att = b.node("Reshape", [att, b.init("shape", np.array([batch, time_, d], np.int64))])
        x = b.node("Add", [x, b.linear(att, d, d)])
        h = b.node("LayerNormalization", [x, b.init("g", ones), b.init("b", zeros)], axis=-1)
        x = b.node("Add", [x, b.linear(b.act(b.linear(h, d, 4 * d), "gelu"), 4 * d, d)])
    return b.model(x_shape, x)


def lstm(x_shape: tuple, hidden: int = 128, vocab: int = 65):
    """One LSTM layer (ONNX LSTM, as PyTorch exports it) and a linear head; x is (time, batch, features)."""
    steps, batch, features = x_shape
    b = Builder(seed=5)
    scale = 1.0 / np.sqrt(hidden)
    w, r, bias = (b.init(p, (b.rng.uniform(-scale, scale, shape)).astype(np.float32)) for p, shape in
                  (("w", (1, 4 * hidden, features)), ("r", (1, 4 * hidden, hidden)), ("b", (1, 8 * hidden))))
    y = b.node("LSTM", ["x", w, r, bias], hidden_size=hidden)  # (T, 1, B, H)
    y = b.node("Squeeze", [y, b.init("axes", np.array([1], np.int64))])
    return b.model(x_shape, b.linear(y, hidden, vocab))


def mlp(x_shape: tuple):
    b = Builder(seed=4)
    x = b.act(b.linear("x", x_shape[1], 512), "relu")
    x = b.act(b.linear(x, 512, 256), "relu")
    return b.model(x_shape, b.linear(x, 256, 10))


def _divisible(v: int, by: int = 8) -> int:
    return max(by, int(v + by / 2) // by * by)


#: name -> (builder, input shape)
MODELS = {
    "mobilenet_b1": (mobilenet_v3, (1, 3, 224, 224)),
    "mobilenet_b8": (mobilenet_v3, (8, 3, 112, 112)),
    "mobilenet_folded_b1": (lambda s: mobilenet_v3(s, fold_bn=True), (1, 3, 224, 224)),
    "effnet_b1": (efficientnet, (1, 3, 224, 224)),
    "effnet_b8": (efficientnet, (8, 3, 112, 112)),
    "resnet_b1": (resnet, (1, 3, 224, 224)),
    "transformer_b8": (transformer, (8, 64, 128)),
    "lstm_b32": (lstm, (35, 32, 64)),
    "mlp_b128": (mlp, (128, 784)),
}


# ---- timing -----------------------------------------------------------------------------------------------
def runners(gg, ort, path: str, x: np.ndarray) -> dict:
    """{name: step()} for the three ways of running one model file on ``x``."""
    imported = gg.onnx.load(path)
    frozen = gg.onnx.load(path, trainable=False)
    module = gg.onnx.to_module(path)
    xt = gg.tensor(x)
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    sess = ort.InferenceSession(path, options, providers=["CPUExecutionProvider"])

    def module_step():
        with gg.no_grad():
            return module(xt).numpy()

    return {"session": lambda: imported.run({"x": x})[0], "frozen": lambda: frozen.run({"x": x})[0],
            "module": module_step,
            "onnxruntime": lambda: sess.run(None, {"x": x})[0]}


def check(steps: dict) -> float:
    """Largest relative difference of graphgrad's outputs from onnxruntime's."""
    ref = steps["onnxruntime"]()
    scale = float(np.abs(ref).max()) or 1.0
    return max(float(np.abs(steps[name]() - ref).max()) / scale for name in ("session", "frozen", "module"))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default=",".join(MODELS), help="comma-separated subset of " + ", ".join(MODELS))
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("--json", default=None)
    args = parser.parse_args(argv)
    try:
        import onnx
        import onnxruntime as ort
    except ImportError:
        print("this benchmark needs onnx and onnxruntime: pip install onnx onnxruntime")
        return 1
    import graphgrad as gg

    rng = np.random.default_rng(0)
    results = {}
    ratios = ("session/ort", "frozen/ort", "module/ort", "module/session")
    print(f"{'model':<22}{'session':>10}{'frozen':>10}{'module':>10}{'ort':>10}"
          + "".join(f"{r:>16}" for r in ratios) + f"{'max rel err':>13}{'import s':>10}")
    with tempfile.TemporaryDirectory() as folder:
        for name in args.models.split(","):
            build, shape = MODELS[name]
            path = os.path.join(folder, f"{name}.onnx")
            onnx.save(build(shape), path)
            x = rng.standard_normal(shape).astype(np.float32)
            start = time.perf_counter()
            steps = runners(gg, ort, path, x)
            steps["module"](), steps["session"]()
            imported_s = time.perf_counter() - start
            error = check(steps)
            rows = time_steps(steps, warmup=2, repeats=args.repeats, inner=1)
            ms = {k: v["median"] * 1e3 for k, v in rows.items()}
            r = results[name] = {"ms": ms, "max_rel_err": error, "import_s": imported_s, "rows": rows}
            for ratio in ratios:
                a, b = ratio.split("/")
                r[ratio] = ms[a] / ms["onnxruntime" if b == "ort" else b]
            print(f"{name:<22}" + "".join(f"{ms[k]:>8.2f}ms" for k in ("session", "frozen", "module", "onnxruntime"))
                  + "".join(f"{r[ratio]:>15.2f}x" for ratio in ratios) + f"{error:>13.1e}{imported_s:>10.2f}")
    for key in ratios:
        print(f"median {key}: {statistics.median(r[key] for r in results.values()):.2f}x")
    print(f"peak RSS {peak_rss_mb():.0f} MB")
    save_json(args.json, results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
