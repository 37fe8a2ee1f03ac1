"""The command line's reports: ``graphgrad info``, ``checkpoint inspect``, ``graph inspect|draw``.

Each function returns text (printed by :mod:`graphgrad.cli`), so the reports are easy to test and
to reuse. Errors are graphgrad errors or ``OSError`` s naming the file; the command line prints them
as one line.
"""
from __future__ import annotations

import collections
import importlib
import os
import platform
import shutil
import sys
from typing import Any, Optional

#: optional packages graphgrad uses, with the extra that installs each
EXTRAS = (("tqdm", "progress"), ("sklearn", "datasets"), ("PIL", "images"), ("safetensors", "checkpoints"),
          ("matplotlib", "plots"), ("tensorboard", "tensorboard"), ("onnx", "onnx"), ("onnxruntime", "test"),
          ("scipy", "scipy"), ("mpi4py", "mpi"), ("cupy", "cuda"), ("torch", "-"))


# ---- graphgrad info ---------------------------------------------------------------------------------------
def info() -> str:
    """Versions of graphgrad, Python, NumPy and its BLAS (with threads), the optional packages
    installed, the devices, and MPI."""
    import graphgrad as gg
    from graphgrad.backend import blas, np

    blas.available()  # (loading MKL first, so that the BLAS line shows the thread counts it sets)

    lines = [f"graphgrad {gg.__version__} ({os.path.dirname(gg.__file__)})",
             f"Python {platform.python_version()} ({sys.executable}), {platform.system()} {platform.machine()}, "
             f"{os.cpu_count()} CPUs",
             f"NumPy {np.__version__}; BLAS: {_blas()}"]
    installed, missing = [], []
    for module, extra in EXTRAS:
        version = _version(module)
        (installed if version else missing).append(f"{module} {version}" if version else
                                                   f"{module} (graphgrad[{extra}])" if extra != "-" else module)
    lines.append("optional packages: " + (", ".join(installed) or "none"))
    lines.append("not installed: " + (", ".join(missing) or "none"))
    gpus = gg.cuda.device_count()
    cupy = "CuPy installed" if _version("cupy") else "no CuPy"
    lines.append(f"devices: cpu, emulated (a strict stand-in for a GPU), cuda: {gpus} GPU(s) ({cupy})")
    from graphgrad.backend import blas, native

    lines.append(f"native kernels: {native.status()}")
    lines.append(f"matrix products: {blas.status()}")
    mpiexec = shutil.which("mpiexec")
    mpi = f"mpi4py {_version('mpi4py')}" if _version("mpi4py") else "no mpi4py (graphgrad[mpi])"
    lines.append(f"MPI: {mpi}; mpiexec: {mpiexec or 'not found'}")
    return "\n".join(lines)


def native_kernels(rebuild: bool = False) -> str:
    """Build (or with ``rebuild`` compile again) graphgrad's native kernels and say where they are,
    which compiler built them and which kernels they hold; an error names the compiler's message."""
    from graphgrad.backend import native

    path = native.build(force=rebuild)
    names = sorted(native.signatures())
    return "\n".join([f"native kernels: {path}", f"compiler: {' '.join(native.compiler() or [])} "
                      f"{' '.join(native.FLAGS)}", f"{len(names)} kernels: {', '.join(names)}",
                      f"in use: {native.status()}"])


def _version(module: str) -> Optional[str]:
    try:
        imported = importlib.import_module(module)
    except Exception:  # noqa: BLE001 - any import failure means "not usable here"
        return None
    return str(getattr(imported, "__version__", "installed"))


def _blas() -> str:
    """The BLAS library NumPy uses and its threads (through threadpoolctl when installed)."""
    try:
        from threadpoolctl import threadpool_info
    except ImportError:
        return _blas_from_config()
    pools = [p for p in threadpool_info() if p.get("user_api") == "blas"]
    if not pools:
        return _blas_from_config()
    return "; ".join(f"{p.get('internal_api')} {p.get('version') or ''} ({p.get('num_threads')} threads)".replace("  ", " ")
                     for p in pools)


def _blas_from_config() -> str:
    from graphgrad.backend import np

    try:
        config = np.show_config(mode="dicts")
        blas = config["Build Dependencies"]["blas"]
        return f"{blas.get('name')} {blas.get('version', '')}".strip() + \
            f" (threads: OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', 'unset')})"
    except Exception:  # noqa: BLE001 - older NumPy: no dict form
        return "unknown (pip install threadpoolctl for details)"


# ---- graphgrad checkpoint inspect -------------------------------------------------------------------------
def inspect_checkpoint(path: str) -> str:
    """What a file written by ``gg.save`` or ``save_checkpoint`` holds: its tensors (name, shape,
    dtype), the optimizer's groups and state, the scheduler, the epoch and other metadata."""
    import graphgrad as gg

    content = gg.load(path)
    size = os.path.getsize(path)
    lines = [f"{path}: {size:,} bytes"]
    if isinstance(content, dict) and "model" in content and "rng" in content:
        lines[0] += ", a training checkpoint (save_checkpoint)"
        lines.append(f"epoch: {content.get('epoch')}")
        lines += _tensor_table("model", content["model"])
        lines += _optimizer_lines(content.get("optimizer"))
        scheduler = content.get("scheduler")
        lines.append("scheduler: " + ("none" if scheduler is None else _short(scheduler)))
        extra = content.get("extra")
        if extra:
            lines.append("extra: " + _short(extra))
        rng = content.get("rng") or {}
        lines.append("random states: " + ", ".join(k for k, v in rng.items() if v is not None))
    elif isinstance(content, dict) and all(isinstance(v, gg.Tensor) for v in content.values()):
        lines[0] += ", a state dict"
        lines += _tensor_table("tensors", content)
    else:
        lines[0] += f", a saved {type(content).__name__}"
        tensors = dict(_tensors_in(content))
        lines += _tensor_table("tensors", tensors)
    return "\n".join(lines)


def _tensor_table(title: str, tensors: dict) -> list:
    import graphgrad as gg

    tensors = {k: v for k, v in tensors.items() if isinstance(v, gg.Tensor)}
    total = sum(int(t.size) for t in tensors.values())
    lines = [f"{title}: {len(tensors)} tensors, {total:,} values"]
    width = max((len(k) for k in tensors), default=0)
    for name, t in tensors.items():
        shape = "(" + ", ".join(str(d) for d in t.shape) + ("," if len(t.shape) == 1 else "") + ")"
        lines.append(f"  {name:<{width}}  {shape:<18} {t.dtype}")
    return lines


def _optimizer_lines(state: Any) -> list:
    if not state:
        return ["optimizer: none"]
    groups = state.get("param_groups", [])
    per_param = state.get("state", {})
    lines = [f"optimizer: {len(groups)} parameter group(s), state for {len(per_param)} parameter(s)"]
    for i, group in enumerate(groups):
        settings = {k: v for k, v in group.items() if k != "params"}
        lines.append(f"  group {i}: {len(group.get('params', []))} parameters, " + _short(settings))
    kinds = collections.Counter(name for entry in per_param.values() if isinstance(entry, dict) for name in entry)
    if kinds:
        lines.append("  state per parameter: " + ", ".join(sorted(kinds)))
    return lines


def _tensors_in(value: Any, prefix: str = ""):
    import graphgrad as gg

    if isinstance(value, gg.Tensor):
        yield prefix or "value", value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from _tensors_in(v, f"{prefix}.{k}" if prefix else str(k))
    elif isinstance(value, (list, tuple)):
        for i, v in enumerate(value):
            yield from _tensors_in(v, f"{prefix}[{i}]")


def _short(value: Any, limit: int = 160) -> str:
    import graphgrad as gg

    def plain(v):
        if isinstance(v, gg.Tensor):
            return f"tensor{tuple(v.shape)}"
        if isinstance(v, dict):
            return {k: plain(x) for k, x in v.items()}
        if isinstance(v, (list, tuple)):
            return type(v)(plain(x) for x in v)
        return v

    text = repr(plain(value))
    return text if len(text) <= limit else text[:limit - 3] + "..."


# ---- graphgrad graph inspect | draw -----------------------------------------------------------------------
def inspect_graph(path: str) -> str:
    """A saved graph's summary: nodes by op, placeholders, Variables, and the nodes nothing reads."""
    import graphgrad as gg

    graph, named = gg.load_graph(path)
    nodes = list(graph.get_operations())
    kinds = collections.Counter(type(n.op).__name__ for n in nodes)
    lines = [f"{path}: {len(nodes)} nodes"]
    placeholders = [n for n in nodes if type(n.op).__name__ in ("Placeholder", "PlaceholderWithDefault")]
    lines.append(f"inputs ({len(placeholders)}):")
    lines += [f"  {n.name} {_shape(n.out.shape)} {n.out.dtype}" for n in placeholders]
    variables = list(graph.variables())
    total = sum(int(v.size) for v in variables)
    lines.append(f"variables ({len(variables)}, {total:,} values):")
    lines += [f"  {v.base_name} {_shape(v.shape)} {v.dtype}{'' if v.trainable else ' (not trainable)'}"
              for v in variables]
    read = {id(x._node) for n in nodes for x in n.inputs if isinstance(x, gg.Tensor) and x._node is not None}
    read |= {id(c) for n in nodes for c in getattr(n, "control_inputs", ())}
    ends = [n for n in nodes if id(n) not in read and type(n.op).__name__ not in ("Placeholder", "Const")]
    lines.append(f"ends (nodes nothing reads, {len(ends)}): " + ", ".join(n.name for n in ends[:12])
                 + (" ..." if len(ends) > 12 else ""))
    lines.append("ops: " + ", ".join(f"{k} x{v}" for k, v in sorted(kinds.items())))
    return "\n".join(lines)


def _shape(shape) -> str:
    if shape is None:
        return "(any shape)"
    return "(" + ", ".join("?" if d is None else str(d) for d in shape) + ("," if len(shape) == 1 else "") + ")"


def draw_graph(path: str, output: str) -> str:
    """Draw a saved graph to ``output``: ``.dot`` (Graphviz source, always possible), ``.svg`` or
    ``.png`` (with Graphviz's ``dot`` program)."""
    import subprocess

    import graphgrad as gg
    from graphgrad.viz import dot as viz

    graph, _ = gg.load_graph(path)
    kind = os.path.splitext(output)[1].lower()
    if kind == ".dot":
        _write(output, viz.to_dot(graph).encode("utf-8"))
    elif kind == ".svg":
        viz.to_svg(graph, output)
    elif kind == ".png":
        program = shutil.which("dot")
        if program is None:
            raise viz.GraphvizNotFoundError("drawing a PNG needs the Graphviz `dot` program, which was not found "
                                            "on PATH (write a .dot file instead, or install Graphviz)")
        done = subprocess.run([program, "-Tpng"], input=viz.to_dot(graph).encode("utf-8"), capture_output=True,
                              timeout=120)
        if done.returncode != 0:
            raise gg.GraphgradError(f"Graphviz `dot` failed: {done.stderr.decode('utf-8', 'replace').strip()}")
        _write(output, done.stdout)
    else:
        raise gg.errors.ArgumentError(f"graph draw: cannot tell the format of {output!r}: name it .dot, .svg or .png")
    return f"drew {len(list(graph.get_operations()))} nodes of {path} to {output}"


def _write(path: str, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically (a temporary file beside it, then a rename)."""
    folder = os.path.dirname(os.path.abspath(path))
    tmp = os.path.join(folder, f".{os.path.basename(path)}.{os.getpid()}.tmp")
    try:
        with open(tmp, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


# ---- graphgrad onnx export ---------------------------------------------------------------------------------
def export_graph(path: str, outputs: list, output: str, opset: Optional[int] = None) -> str:
    """Export a saved graph to ONNX: the nodes named ``outputs`` (default: the nodes nothing reads)
    computed from its placeholders; dimensions the placeholders leave unknown stay dynamic."""
    import graphgrad as gg
    from graphgrad.backend import np

    graph, named = gg.load_graph(path)
    nodes = list(graph.get_operations())
    if outputs:
        unknown = [name for name in outputs if name not in named]
        if unknown:
            raise gg.errors.ArgumentError(f"onnx export: {path} has no node named {unknown[0]!r} "
                                          f"(its nodes: {', '.join(sorted(named)[:10])} ...)")
        fetches = [named[name] for name in outputs]
    else:
        read = {id(x._node) for n in nodes for x in n.inputs if isinstance(x, gg.Tensor) and x._node is not None}
        fetches = [n.out for n in nodes if id(n) not in read and n.out is not None
                   and type(n.op).__name__ not in ("Placeholder", "Const", "Assign", "NoOp")]
    placeholders = [n for n in nodes if type(n.op).__name__ == "Placeholder"]
    examples = {n.out: np.zeros(tuple(1 if d is None else d for d in n.out.shape), n.out.dtype) for n in placeholders}
    dynamic = {n.name: [i for i, d in enumerate(n.out.shape) if d is None] for n in placeholders
               if None in n.out.shape}
    names = [t._node.name for t in fetches]
    gg.onnx.export(fetches, output, examples, output_names=names, dynamic_axes=dynamic or None, opset=opset)
    return f"exported {', '.join(names)} of {path} to {output}"
