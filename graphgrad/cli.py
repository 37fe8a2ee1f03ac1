"""Command line: ``python -m graphgrad demo`` (and ``graphgrad demo`` once installed): the spiral MLP
with the Keras-like API (progress bars, decision-boundary PNG), the same model as a static graph, and
a small CNN on the bundled digits. ``python -m graphgrad bench`` runs the benchmark suite
(``graphgrad.bench.suite``); ``python -m graphgrad onnx info|run MODEL`` describes or runs an ONNX model.

Errors (a graphgrad error, a missing or corrupt file, an ONNX input of the wrong name or shape) are
printed as one line, ``graphgrad: error: ...``, on stderr with exit status 1; ``--debug`` (before the
command) shows the traceback instead. Bad arguments exit with status 2 (argparse's usage message)."""
from __future__ import annotations

import argparse
import os
import sys
import time
from typing import Optional, Sequence

import graphgrad as gg
from graphgrad.bench import suite as bench_suite
from graphgrad.data import make_spiral


def spiral_mlp(epochs: int = 60, seed: int = 0, image: Optional[str] = "spiral_decision_boundary.png",
               verbose: int = 1) -> float:
    """A 2-100-3 ReLU MLP on the 3-class spiral with the Keras-like API (``gg.Sequential``,
    ``compile``, ``fit`` with progress bars); writes the decision-boundary PNG when Pillow or
    matplotlib is installed. Returns the training accuracy."""
    gg.manual_seed(seed)
    x, y = make_spiral(100, 3, generator=gg.Generator(seed))
    model = gg.Sequential([gg.nn.Linear(2, 100), gg.nn.ReLU(), gg.nn.Linear(100, 3)])
    model.compile(optimizer=gg.optim.Adam(model.parameters(), lr=0.02), loss="cross_entropy",
                  metrics=["accuracy"])
    print(f"graphgrad {gg.__version__} demo 1/3: spiral data {tuple(x.shape)}, MLP 2-100-3, Adam, "
          f"{epochs} epochs of mini-batches")
    start = time.perf_counter()
    model.fit(x, y, epochs=epochs, batch_size=32, verbose=verbose, seed=seed)
    accuracy = model.evaluate(x, y, batch_size=300)["accuracy"]
    print(f"spiral MLP: training accuracy {accuracy:.3f} ({time.perf_counter() - start:.1f}s)")
    if image:
        try:
            path = gg.train.plot_decision_boundary(model, x.numpy(), y.numpy(), image,
                                                   title=f"spiral MLP, accuracy {accuracy:.3f}")
            print(f"decision boundary written to {path}")
        except ImportError as exc:
            print(f"(no decision-boundary image: {exc})")
    return accuracy


def digits_cnn(epochs: int = 40, seed: int = 0, verbose: int = 1) -> Optional[float]:
    """A small CNN on the 8x8 digits bundled with scikit-learn (80/20 split, seed 0) with ``fit``
    and a cosine learning-rate schedule. Returns the held-out accuracy (None without scikit-learn)."""
    from graphgrad.data import load_digits

    try:
        (x_train, y_train), (x_test, y_test) = load_digits(test_size=0.2, seed=seed)
    except ImportError as exc:
        print(f"demo 3/3 skipped: {exc}")
        return None
    gg.manual_seed(seed)
    nn = gg.nn
    model = gg.Sequential([nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                           nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                           nn.Flatten(), nn.Linear(32 * 2 * 2, 10)])
    optimizer = gg.optim.Adam(model.parameters(), lr=2e-3)
    model.compile(optimizer=optimizer, loss="cross_entropy", metrics=["accuracy"])
    schedule = gg.train.LearningRateScheduler(gg.optim.CosineAnnealingLR(optimizer, T_max=epochs))
    print(f"demo 3/3: digits {tuple(x_train.shape)} train / {tuple(x_test.shape)} test, CNN conv16-conv32-linear, "
          f"{model.num_parameters()} parameters, {epochs} epochs")
    start = time.perf_counter()
    model.fit(x_train, y_train, epochs=epochs, batch_size=32, verbose=verbose, seed=seed, callbacks=[schedule])
    accuracy = model.evaluate(x_test, y_test, batch_size=512)["accuracy"]
    print(f"digits CNN: held-out accuracy {accuracy:.4f} ({time.perf_counter() - start:.1f}s)")
    return accuracy


def demo_graph(steps: int = 1000, hidden: int = 100, lr: float = 1.0, seed: int = 0, log_every: int = 250) -> float:
    """The spiral MLP of :func:`spiral_mlp`, TensorFlow-1 style: placeholders, Variables,
    ``GradientDescentOptimizer.minimize`` and a Session. Returns the final training accuracy."""
    gen = gg.Generator(seed)
    xs, ys = make_spiral(100, 3, generator=gen)
    graph = gg.Graph()
    with graph.as_default():
        x = gg.placeholder(gg.float32, (None, 2), name="x")
        y = gg.placeholder(gg.int64, (None,), name="y")
        w1 = gg.Variable(gg.randn(2, hidden, generator=gen), name="w1")
        b1 = gg.Variable(gg.zeros(hidden), name="b1")
        w2 = gg.Variable(gg.randn(hidden, 3, generator=gen) * (1.0 / hidden) ** 0.5, name="w2")
        b2 = gg.Variable(gg.zeros(3), name="b2")
        logits = gg.relu(x @ w1 + b1) @ w2 + b2
        loss = gg.cross_entropy(logits, y)
        train_op = gg.train.GradientDescentOptimizer(lr).minimize(loss)
        accuracy = gg.mean(gg.astype(gg.equal(gg.argmax(logits, axis=1), y), gg.float32))
    print(f"demo 2/3: the spiral MLP as a TensorFlow-1-style static graph ({len(graph)} nodes), "
          "full-batch gradient descent by Session.run")
    start = time.perf_counter()
    feed = {x: xs, y: ys}
    value = 0.0
    with gg.Session(graph) as sess:
        for step in range(1, steps + 1):
            _, loss_value = sess.run([train_op, loss], feed)
            if step % log_every == 0 or step == steps:
                value = float(sess.run(accuracy, feed))
                print(f"step {step:5d}  loss {loss_value:.4f}  train accuracy {value:.3f}")
    print(f"done in {time.perf_counter() - start:.2f}s: final training accuracy {value:.3f}")
    return value


def _command(sub, name: str, help: str, example: str):
    """A sub-command whose ``--help`` ends with an example."""
    return sub.add_parser(name, help=help, description=help, epilog=f"example:\n  {example}",
                          formatter_class=argparse.RawDescriptionHelpFormatter)


def main(argv: Optional[Sequence[str]] = None) -> int:
    from graphgrad import __version__

    parser = argparse.ArgumentParser(prog="graphgrad", description="graphgrad command line",
                                     epilog="examples:\n  graphgrad demo --quick\n  graphgrad info\n"
                                            "  graphgrad checkpoint inspect checkpoint.npz",
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"graphgrad {__version__}")
    parser.add_argument("--debug", action="store_true", help="show the traceback of an error")
    sub = parser.add_subparsers(dest="command", required=True)
    _command(sub, "info", "versions (graphgrad, Python, NumPy, BLAS and its threads), optional packages, "
             "devices, MPI", "graphgrad info")
    p_native = _command(sub, "native", "build graphgrad's optional native (C) kernels now and list them "
                        "(otherwise they are built on first use; GRAPHGRAD_NATIVE=0 turns them off)",
                        "graphgrad native --rebuild")
    p_native.add_argument("--rebuild", action="store_true", help="compile again even if a cached build matches")
    p_ckpt = _command(sub, "checkpoint", "look inside a checkpoint file", "graphgrad checkpoint inspect ckpt.npz")
    ckpt_sub = p_ckpt.add_subparsers(dest="checkpoint_command", required=True)
    _command(ckpt_sub, "inspect", "tensors (names, shapes, dtypes), optimizer state, scheduler, epoch, metadata",
             "graphgrad checkpoint inspect ckpt.npz").add_argument("file")
    p_graph = _command(sub, "graph", "look at a graph saved by gg.save_graph", "graphgrad graph inspect model.json")
    graph_sub = p_graph.add_subparsers(dest="graph_command", required=True)
    _command(graph_sub, "inspect", "nodes by op, inputs, variables, and the nodes nothing reads",
             "graphgrad graph inspect model.json").add_argument("file")
    p_draw = _command(graph_sub, "draw", "draw the graph: .dot (always), .svg or .png (with Graphviz)",
                      "graphgrad graph draw model.json -o model.svg")
    p_draw.add_argument("file")
    p_draw.add_argument("--output", "-o", default=None, help="the drawing's path (default: FILE with .dot)")
    p_demo = sub.add_parser("demo", help="train the spiral MLP (eager and graph) and a digits CNN",
                            epilog="example:\n  graphgrad demo --quick", formatter_class=argparse.RawDescriptionHelpFormatter)
    p_demo.add_argument("--seed", type=int, default=0)
    p_demo.add_argument("--quick", action="store_true", help="a few epochs only (a smoke test)")
    p_demo.add_argument("--image", default="spiral_decision_boundary.png", help="decision-boundary PNG path")
    p_bench = sub.add_parser("bench", help="time the workloads W1..W6 against PyTorch (see docs/performance.md)",
                             epilog="example:\n  graphgrad bench --only w1,w2 --json bench.json",
                             formatter_class=argparse.RawDescriptionHelpFormatter)
    bench_suite.add_arguments(p_bench)
    p_onnx = _command(sub, "onnx", "describe or run an ONNX model", "graphgrad onnx info model.onnx")
    onnx_sub = p_onnx.add_subparsers(dest="onnx_command", required=True)
    p_info = _command(onnx_sub, "info", "inputs, outputs, ops used, parameters (and which are trained when "
                      "fine-tuning), ops graphgrad lacks", "graphgrad onnx info model.onnx")
    p_info.add_argument("model")
    p_run = _command(onnx_sub, "run", "run a model on .npy inputs with graphgrad",
                     "graphgrad onnx run model.onnx -i x=images.npy -o outputs.npz")
    p_export = _command(onnx_sub, "export", "export a graph saved by gg.save_graph to ONNX",
                        "graphgrad onnx export model.json -o model.onnx --fetch y")
    p_export.add_argument("graph")
    p_export.add_argument("--output", "-o", required=True, help="the .onnx file to write")
    p_export.add_argument("--fetch", action="append", default=[], metavar="NODE",
                          help="a node to compute (repeat for several; default: the nodes nothing reads)")
    p_export.add_argument("--opset", type=int, default=None)
    p_run.add_argument("model")
    p_run.add_argument("--input", "-i", action="append", default=[], metavar="NAME=FILE.npy",
                       help="an input (repeat for several; a .npz file gives named arrays)")
    p_run.add_argument("--output", "-o", default=None, help="write the outputs to this .npz file")
    args = parser.parse_args(argv)
    try:
        return _dispatch(args)
    except KeyboardInterrupt:
        if args.debug:
            raise
        print("graphgrad: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # noqa: BLE001 - one line for the user; the traceback with --debug
        if args.debug:
            raise
        print(f"graphgrad: error: {_one_line(exc)}", file=sys.stderr)
        return 1


def _one_line(exc: BaseException) -> str:
    """The error as one line: graphgrad's own errors by their message, others with their type."""
    from graphgrad.errors import GraphgradError

    text = " ".join(str(exc).split())
    if isinstance(exc, OSError) and exc.filename is not None and exc.strerror:
        text = f"{exc.strerror}: {exc.filename}"
    if not isinstance(exc, (GraphgradError, OSError)) or not text:
        text = f"{type(exc).__name__}: {text}" if text else type(exc).__name__
        text += " (run with --debug for the traceback)"
    return text


def _dispatch(args) -> int:
    if args.command in ("info", "native", "checkpoint", "graph"):
        from graphgrad import cli_commands

        if args.command == "info":
            print(cli_commands.info())
        elif args.command == "native":
            print(cli_commands.native_kernels(args.rebuild))
        elif args.command == "checkpoint":
            print(cli_commands.inspect_checkpoint(args.file))
        elif args.graph_command == "inspect":
            print(cli_commands.inspect_graph(args.file))
        else:
            output = args.output or os.path.splitext(args.file)[0] + ".dot"
            print(cli_commands.draw_graph(args.file, output))
        return 0
    if args.command == "bench":
        return bench_suite.run_from_args(args)
    if args.command == "onnx":
        from graphgrad.io.onnx import tools

        if args.onnx_command == "info":
            print(tools.format_info(tools.info(args.model)))
        elif args.onnx_command == "export":
            from graphgrad import cli_commands

            print(cli_commands.export_graph(args.graph, args.fetch, args.output, args.opset))
        else:
            results = tools.run(args.model, tools.parse_inputs(args.input), args.output)
            print(tools.format_run(results))
            if args.output:
                print(f"outputs written to {args.output}")
        return 0
    if args.command == "demo":
        start = time.perf_counter()
        # small models: one BLAS thread (a second one only spins, and on a busy machine that made
        # the demo three times slower: docs/performance.md)
        with gg.backend.blas_threads(1):
            spiral_mlp(epochs=3 if args.quick else 60, seed=args.seed, image=args.image)
            demo_graph(steps=20 if args.quick else 1000, seed=args.seed)
            digits_cnn(epochs=1 if args.quick else 40, seed=args.seed)
        print(f"demo finished in {time.perf_counter() - start:.1f}s")
    return 0
