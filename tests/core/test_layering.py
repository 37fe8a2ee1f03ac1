"""DESIGN.md principle 5: imports go one way, only graphgrad.backend imports NumPy/CuPy by name, and only
graphgrad/io/onnx imports onnx."""
from __future__ import annotations

import ast
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2] / "graphgrad"
# lower number = lower layer; a module may import only from its own layer or lower ones
LAYERS = {
    "backend": 0, "errors": 0, "dtypes": 1, "config": 1,
    "core": 2, "ops": 3, "graph": 4, "nn": 5, "optim": 5, "distributions": 5,
    "train": 6, "data": 6, "io": 6, "viz": 6, "distributed": 6, "compat": 7, "cli": 7, "cli_commands": 7, "__main__": 7, "bench": 7,
}


def _layer(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def _imports(path: pathlib.Path):
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, node.lineno
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            yield node.module, node.lineno


FILES = sorted(p for p in ROOT.rglob("*.py"))
#: The public modules the compat facades may import (besides each other).
COMPAT_MAY_IMPORT = {"graphgrad", "graphgrad.backend", "graphgrad.nn", "graphgrad.nn.functional", "graphgrad.nn.init", "graphgrad.optim",
                     "graphgrad.data", "graphgrad.distributed", "graphgrad.distributions"}


@pytest.mark.parametrize("path", FILES, ids=[str(p.relative_to(ROOT)) for p in FILES])
def test_imports_go_one_way(path):
    rel = path.relative_to(ROOT)
    own = rel.parts[0].removesuffix(".py") if rel.parts else "__init__"
    if own == "__init__":
        return  # the package root only re-exports
    for module, line in _imports(path):
        top = module.split(".")[0]
        if top in ("numpy", "cupy", "cupyx", "scipy"):
            assert own == "backend", f"{rel}:{line} imports {module}; only graphgrad.backend may"
        if top in ("onnx", "onnxruntime"):
            assert rel.parts[:2] == ("io", "onnx"), f"{rel}:{line} imports {module}; only graphgrad/io/onnx may"
        if top != "graphgrad" or module == "graphgrad":
            continue
        target = _layer(module)
        if own == "compat":  # the facades use the public API only: they never reach into internals
            assert module in COMPAT_MAY_IMPORT or module.startswith("graphgrad.compat"), (
                f"{rel}:{line} imports {module}; compat may import only {sorted(COMPAT_MAY_IMPORT)}")
        if target == "__init__":
            continue
        assert target in LAYERS and own in LAYERS, f"{rel}:{line}: unknown layer in {module}"
        assert LAYERS[target] <= LAYERS[own], f"{rel}:{line}: layer {own} imports from higher layer {module}"


#: ``x.data`` attribute reads that are not a Tensor's (a PackedSequence's field, modules named data)
_NOT_TENSOR_DATA = {("nn/rnn_utils.py", "self"), ("nn/rnn_utils.py", "sequence"),
                    ("compat/torchvision/datasets.py", "self")}  # (a dataset's images, torchvision's name)
_DATA_MODULES = {"ctypes", "graphgrad", "gg", "utils", "torch", "_gg"}


@pytest.mark.parametrize("path", FILES, ids=[str(p.relative_to(ROOT)) for p in FILES])
def test_graphgrad_reads_a_tensors_array_as_its_slot(path):
    """Inside graphgrad a tensor's array is read as ``_data``: ``.data`` is the public accessor, which
    becomes PyTorch's detached tensor once ``graphgrad.compat.torch`` is imported (docs/pytorch.md),
    so a library path that read it would break there."""
    rel = str(path.relative_to(ROOT))
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Attribute) and node.attr == "data":
            base = node.value
            name = base.id if isinstance(base, ast.Name) else None
            if name in _DATA_MODULES or (rel, name) in _NOT_TENSOR_DATA:
                continue
            if isinstance(base, ast.Attribute) and base.attr in ("ctypes", "utils"):
                continue
            raise AssertionError(f"{rel}:{node.lineno} reads .data; inside graphgrad read a tensor's array as ._data")
