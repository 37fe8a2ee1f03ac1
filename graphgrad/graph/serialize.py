"""Save a graph to a JSON file (structure) plus an ``.npz`` file (values), and load it back.

``save_graph(graph, "model")`` writes ``model.json`` and ``model.npz``; ``load_graph("model")``
returns a new :class:`Graph`, with new Variables holding the saved values, whose nodes are rebuilt
through the op classes themselves, so the restored graph runs (in another process too) with the
same results. The format is documented field by field in ``docs/graph-format.md``.

Encoding of op attributes ("props") and literal inputs, so that they come back with their types:

* ``null``, booleans, integers, finite floats and strings are themselves;
* a JSON array is a Python **tuple** (shapes, axes, keys...); ``{"$list": [...]}`` a list;
* ``{"$dtype": "float32"}`` a NumPy dtype; ``{"$float": "nan" | "inf" | "-inf"}`` a non-finite float;
* ``{"$scalar": 2.5, "dtype": "float32"}`` a NumPy scalar; ``{"$complex": [re, im]}`` a complex;
* ``{"$slice": [start, stop, step]}``, ``{"$ellipsis": true}``;
* ``{"$array": "array_3"}`` an array stored in the weights file under that key;
* ``{"$variable": "w"}`` the Variable of that name (see ``"variables"``);
* ``{"$generator": 0}`` the random generator at that index of ``"generators"`` (seed and state).

Files are written atomically (a temporary file in the same folder, then ``os.replace``); the JSON
file records the SHA-256 of the weights file, so a JSON file paired with another save's weights is
detected on load.
"""
from __future__ import annotations

import hashlib
import io
import json
import math
import os
import tempfile
from typing import Any, Optional

from graphgrad import backend
from graphgrad.backend import np
from graphgrad.core.random import Generator
from graphgrad.core.spec import TensorSpec, spec_of
from graphgrad.core.tensor import Tensor
from graphgrad.errors import GraphError
from graphgrad.graph import files
from graphgrad.graph.graph import Graph, GraphNode, _unknown_rank_spec
from graphgrad.graph.variables import Variable, _VariableOp

#: The version written in (and required of) the ``"format_version"`` field.
FORMAT_VERSION = 1
FORMAT_NAME = "graphgrad.graph"

__all__ = ["save_graph", "load_graph", "graph_paths", "variable_names", "read_saved_variables", "FORMAT_VERSION"]


# ---- paths and atomic files ----------------------------------------------------------------------------
def graph_paths(path: str) -> tuple:
    """``(json_path, weights_path)`` for ``path``: ``"m"`` and ``"m.json"`` both give
    ``("m.json", "m.npz")``."""
    path = os.fspath(path)
    base = path[:-5] if path.endswith(".json") else path
    return base + ".json", base + ".npz"


def atomic_write(path: str, data: bytes) -> None:
    """Write ``data`` to ``path`` so that readers see the old file or the whole new one, never a part."""
    folder = os.path.dirname(os.path.abspath(path))
    os.makedirs(folder, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(path) + ".", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException as exc:
        if os.path.exists(tmp):
            os.unlink(tmp)
        if isinstance(exc, OSError) and exc.errno is not None:  # disk full, file size limit, I/O error...
            raise type(exc)(exc.errno, f"could not save {path!r}: {exc.strerror or exc}; the previous file "
                                       "(if any) is unchanged") from exc
        raise


# ---- names of variables ------------------------------------------------------------------------------------
def _graph_variables(graph: Graph) -> list:
    """The graph's Variables, then any other Variable its nodes read or assign, in order."""
    found = list(graph.variables())
    ids = {id(v) for v in found}
    for node in graph.get_operations():
        if isinstance(node.op, _VariableOp) and id(node.op.variable) not in ids:
            ids.add(id(node.op.variable))
            found.append(node.op.variable)
    return found


def variable_names(graph: Graph, variables: Optional[list] = None) -> dict:
    """``{id(variable): name}``: a variable's name in ``graph`` is the name of its read node (unique in
    the graph); a variable without one is named by its ``base_name`` (suffixed ``_1``... if taken)."""
    variables = _graph_variables(graph) if variables is None else variables
    names, taken = {}, set(graph._by_name)
    for v in variables:
        read = graph._reads.get(id(v))
        if read is not None:
            names[id(v)] = read._node.name
    for v in variables:
        if id(v) in names:
            continue
        name, i = v.base_name, 0
        while name in taken or name in names.values():
            i += 1
            name = f"{v.base_name}_{i}"
        names[id(v)] = name
    return names


# ---- values: encode / decode -----------------------------------------------------------------------------
class _Encoder:
    """Turns props and literals into JSON values, collecting arrays and generators on the way."""

    def __init__(self, var_names: dict) -> None:
        self.arrays: dict = {}
        self.generators: list = []
        self._generator_ids: dict = {}
        self.var_names = var_names

    def array(self, value) -> str:
        key = f"array_{len(self.arrays)}"
        self.arrays[key] = backend.to_numpy(value)
        return key

    def __call__(self, value: Any, where: str) -> Any:
        if value is None or isinstance(value, (bool, str)):
            return value
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        if isinstance(value, float):
            return value if math.isfinite(value) else {"$float": repr(value)}
        if isinstance(value, complex):
            return {"$complex": [self(value.real, where), self(value.imag, where)]}
        if isinstance(value, np.dtype):
            return {"$dtype": value.str if value.byteorder not in "=|" else value.name}
        if isinstance(value, type) and issubclass(value, np.generic):
            return {"$dtype": np.dtype(value).name}
        if isinstance(value, np.generic):
            item = value.item()
            return {"$scalar": self(item, where), "dtype": value.dtype.name}
        if backend.is_array(value):
            return {"$array": self.array(value)}
        if isinstance(value, tuple):
            return [self(v, where) for v in value]
        if isinstance(value, list):
            return {"$list": [self(v, where) for v in value]}
        if isinstance(value, slice):
            return {"$slice": [self(value.start, where), self(value.stop, where), self(value.step, where)]}
        if value is Ellipsis:
            return {"$ellipsis": True}
        if getattr(value, "is_variable", False):
            return {"$variable": self.var_names[id(value)]}
        if isinstance(value, Generator):
            index = self._generator_ids.get(id(value))
            if index is None:
                index = self._generator_ids[id(value)] = len(self.generators)
                self.generators.append({"initial_seed": value.initial_seed, "state": _jsonable(value.get_state())})
            return {"$generator": index}
        if isinstance(value, Tensor) and value._data is not None:
            return {"$array": self.array(value._data), "tensor": True}
        raise GraphError(f"save_graph: cannot serialize {where} = {value!r} ({type(value).__name__}); supported: "
                         "None, bool, int, float, complex, str, tuples, lists, slices, Ellipsis, dtypes, NumPy "
                         "scalars and arrays, Variables and Generators")


def _jsonable(value: Any) -> Any:
    """A generator's state (nested dicts of ints and strings) as plain JSON."""
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, np.generic):
        return value.item()
    return value


class _Decoder:
    """The inverse of :class:`_Encoder`, given the weights, variables and generators of the file."""

    def __init__(self, arrays, variables: dict, generators: list) -> None:
        self.arrays, self.variables, self.generators = arrays, variables, generators

    def __call__(self, value: Any) -> Any:
        if isinstance(value, list):
            return tuple(self(v) for v in value)
        if not isinstance(value, dict):
            return value
        if "$list" in value:
            return [self(v) for v in value["$list"]]
        if "$dtype" in value:
            return np.dtype(value["$dtype"])
        if "$float" in value:
            return float(value["$float"])
        if "$scalar" in value:
            return np.dtype(value["dtype"]).type(self(value["$scalar"]))
        if "$complex" in value:
            return complex(self(value["$complex"][0]), self(value["$complex"][1]))
        if "$array" in value:
            array = self.arrays[value["$array"]]
            return Tensor(array) if value.get("tensor") else array
        if "$slice" in value:
            return slice(*[self(v) for v in value["$slice"]])
        if "$ellipsis" in value:
            return Ellipsis
        if "$variable" in value:
            return self.variables[value["$variable"]]
        if "$generator" in value:
            return self.generators[value["$generator"]]
        raise GraphError(f"load_graph: unknown encoded value {value!r}")


def _same(a: Any, b: Any) -> bool:
    """Equality for decoded props (arrays by value, containers item by item, types kept)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, (tuple, list)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if backend.is_array(a):
        return a.shape == b.shape and a.dtype == b.dtype and bool(np.array_equal(a, b, equal_nan=a.dtype.kind in "fc"))
    if isinstance(a, float) and math.isnan(a):
        return math.isnan(b)
    try:
        return bool(a == b)
    except Exception:
        return a is b


def _op_classes() -> dict:
    from graphgrad import ops
    from graphgrad.core.op import Op
    from graphgrad.graph import variables

    classes = {name: cls for name, cls in ops.OP_CLASSES.items() if isinstance(cls, type) and issubclass(cls, Op)}
    for name in ("Placeholder", "PlaceholderWithDefault", "Const", "ReadVariable", "Assign", "NoOp"):
        classes[name] = getattr(variables, name)
    return classes


def _op_state(op) -> dict:
    """Instance attributes of ``op`` that are not props (set by some constructors, e.g. Einsum's terms)."""
    state = dict(getattr(op, "__dict__", {}))
    for cls in type(op).__mro__:
        for slot in getattr(cls, "__slots__", ()):
            if hasattr(op, slot):
                state[slot] = getattr(op, slot)
    return {k: v for k, v in state.items() if k not in type(op).props and not k.startswith("__")}


def _make_op(cls, props: dict, state: dict):
    """``cls(*props)`` when that rebuilds the same attributes, else a bare instance with them set."""
    try:
        op = cls(*[props[p] for p in cls.props])
        ok = all(_same(getattr(op, k), v) for k, v in {**state, **props}.items())
    except Exception:
        ok = False
    if not ok:
        op = cls.__new__(cls)
        for k, v in {**state, **props}.items():
            object.__setattr__(op, k, v)
    return op


# ---- save --------------------------------------------------------------------------------------------------
def _shape_json(shape) -> Optional[list]:
    return None if shape is None else [None if d is None else int(d) for d in shape]


def graph_to_dict(graph: Graph) -> tuple:
    """``(document, arrays)``: the JSON document describing ``graph`` and the arrays it refers to."""
    variables = _graph_variables(graph)
    names = variable_names(graph, variables)
    enc = _Encoder(names)
    classes = _op_classes()
    var_entries = []
    for v in variables:
        read = graph._reads.get(id(v))
        var_entries.append({
            "name": names[id(v)], "base_name": v.base_name, "trainable": bool(v.trainable),
            "requires_grad": bool(v.requires_grad), "dtype": v.dtype.name, "shape": _shape_json(v.shape),
            "read_node": None if read is None else read._node.name,
            "value": enc.array(v._data), "initial_value": enc.array(v._data if v.initial_value is None else v.initial_value),
        })
    nodes = []
    for node in graph.get_operations():
        op = node.op
        if classes.get(op.name) is not type(op):
            raise GraphError(f"save_graph: node {node.name!r} uses op class {type(op).__module__}.{op.name}, which is "
                             "not a graphgrad op class (gg.ops.OP_CLASSES or the graph ops); it cannot be rebuilt")
        where = f"node {node.name!r} ({op.name})"
        entry = {"name": node.name, "op": op.name,
                 "props": {p: enc(getattr(op, p), f"{where} prop {p!r}") for p in op.props}}
        state = _op_state(op)
        if state:
            entry["state"] = {k: enc(v, f"{where} attribute {k!r}") for k, v in state.items()}
        entry["inputs"] = [x._node.name if isinstance(x, Tensor) and isinstance(x._node, GraphNode)
                           else _literal(enc(x, f"{where} input {i}")) for i, x in enumerate(node.inputs)]
        entry["control_inputs"] = [c.name for c in node.control_inputs]
        out = node.out
        entry["output"] = None if out is None else {"shape": _shape_json(out.shape), "dtype": out.dtype.name,
                                                    "requires_grad": bool(out.requires_grad)}
        entry["site"] = node.site
        nodes.append(entry)
    document = {
        "format": FORMAT_NAME,
        "format_version": FORMAT_VERSION,
        "weights": None,  # filled by save_graph: {"file", "format", "sha256"}
        "variables": var_entries,
        "generators": enc.generators,
        "nodes": nodes,
    }
    return document, enc.arrays


def _literal(encoded: Any) -> Any:
    """In ``inputs`` a bare string names a node, so a string literal is wrapped."""
    return {"$str": encoded} if isinstance(encoded, str) else encoded


def save_graph(graph: Graph, path: str) -> str:
    """Save ``graph`` (structure, variables' current and initial values, constants) to ``path``.

    Writes ``<path>.json`` (the documented structure, see ``docs/graph-format.md``) and
    ``<path>.npz`` (the arrays), each atomically; ``path`` may end in ``.json``. Returns the JSON path.

    Examples:
        >>> gg.save_graph(g, "/tmp/model")      # /tmp/model.json + /tmp/model.npz
        '/tmp/model.json'
        >>> g2, named = gg.load_graph("/tmp/model")
    """
    json_path, weights_path = graph_paths(path)
    document, arrays = graph_to_dict(graph)
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    weights = buffer.getvalue()
    digest = hashlib.sha256(weights).hexdigest()
    # All or nothing: at every instant the JSON file names a weights file holding exactly its arrays.
    # 1. the new arrays go to a staging file next to the old pair (the old pair is untouched);
    # 2. the JSON is swapped to name the staging file; 3. the staging file is renamed to <base>.npz
    #    (a JSON naming a missing staging file falls back to <base>.npz, whose SHA-256 must match);
    # 4. the JSON is swapped to name <base>.npz. A crash at any step leaves the old or the new save.
    staged_path = weights_path[:-4] + f".{digest[:16]}.npz"
    atomic_write(staged_path, weights)
    document["weights"] = {"file": os.path.basename(staged_path), "format": "npz", "sha256": digest}
    atomic_write(json_path, dumps_document(document).encode("utf-8"))
    os.replace(staged_path, weights_path)
    _fsync_dir(weights_path)
    document["weights"] = {"file": os.path.basename(weights_path), "format": "npz", "sha256": digest}
    atomic_write(json_path, dumps_document(document).encode("utf-8"))
    _remove_stale(json_path, weights_path)
    return json_path


_STALE_SECONDS = 60.0


def _remove_stale(json_path: str, weights_path: str) -> None:
    """Delete what killed saves of this same target left behind: its staging weights files
    (``<base>.<16 hex>.npz``, which the JSON no longer names) and its temporary files
    (``.<name>.<random>.tmp``) older than a minute."""
    import re
    import time
    folder = os.path.dirname(os.path.abspath(json_path))
    base = os.path.basename(weights_path)[:-4]
    staged = re.compile(re.escape(base) + r"\.[0-9a-f]{16}\.npz\Z")
    temp = re.compile(r"\.(?:" + "|".join(re.escape(os.path.basename(p)) for p in (json_path, weights_path))
                      + "|" + re.escape(base) + r"\.[0-9a-f]{16}\.npz)\.[A-Za-z0-9_]+\.tmp\Z")
    now = time.time()
    try:
        names = os.listdir(folder)
    except OSError:
        return
    for name in names:
        full = os.path.join(folder, name)
        is_staged = staged.match(name) is not None
        is_temp = temp.match(name) is not None
        if not (is_staged or is_temp):
            continue
        try:
            if is_temp and now - os.lstat(full).st_mtime < _STALE_SECONDS:
                continue  # maybe another save in progress
            os.unlink(full)
        except OSError:
            pass


def _fsync_dir(path: str) -> None:
    try:
        fd = os.open(os.path.dirname(os.path.abspath(path)), os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def dumps_document(document: dict) -> str:
    """The document as JSON text: top-level fields one per line, one line per variable, generator and
    node (readable, and diff-friendly)."""
    parts = []
    for key, value in document.items():
        if isinstance(value, list) and value:
            items = ",\n".join("  " + json.dumps(v, allow_nan=False) for v in value)
            parts.append(f" {json.dumps(key)}: [\n{items}\n ]")
        else:
            parts.append(f" {json.dumps(key)}: {json.dumps(value, allow_nan=False)}")
    return "{\n" + ",\n".join(parts) + "\n}\n"


# ---- load --------------------------------------------------------------------------------------------------
def read_document(path: str) -> tuple:
    """``(document, arrays)`` read from a saved graph (checks the format, version and weights hash)."""
    json_path, weights_path = graph_paths(path)
    try:
        with open(json_path, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            files.check_load_size(size, repr(json_path), "the graph file", GraphError)
            text = files.read_bounded(f, repr(json_path), "the graph file", GraphError)  # FIFOs, devices too
            document = json.loads(text.decode("utf-8"))
    except FileNotFoundError:
        raise GraphError(f"no saved graph at {json_path!r}") from None
    except (ValueError, RecursionError) as exc:
        raise GraphError(f"{json_path!r} is not a valid graph file: {type(exc).__name__}: {exc}") from None
    if not isinstance(document, dict) or document.get("format") != FORMAT_NAME:
        raise GraphError(f"{json_path!r} is not a graphgrad graph file (no \"format\": \"{FORMAT_NAME}\")")
    version = document.get("format_version")
    if version != FORMAT_VERSION:
        raise GraphError(f"{json_path!r} has format version {version}; this graphgrad reads version {FORMAT_VERSION}")
    data, weights_path = _read_weights(json_path, weights_path, document.get("weights"))
    # bounded: the sizes the archive declares are checked before any array is allocated (zip bombs)
    arrays = files.read_npz(io.BytesIO(data), f"the weights file {weights_path!r} of {json_path!r}",
                            error=GraphError, limit_error=GraphError)
    return document, arrays


def _read_weights(json_path: str, default_path: str, info) -> tuple:
    """``(bytes, path)`` of the weights file a graph's JSON names: confined to the JSON file's folder
    (no absolute path, no ``..``, a regular file), at most ``graphgrad.config.max_load_bytes`` bytes, and
    its SHA-256 must equal the one the JSON records."""
    if not isinstance(info, dict) or not isinstance(info.get("file"), str) or not isinstance(info.get("sha256"), str):
        raise GraphError(f"{json_path!r} does not name its weights file with a SHA-256 "
                         "(\"weights\": {\"file\": ..., \"sha256\": ...} is required)")
    name = info["file"]
    if (not name or os.path.isabs(name) or "/" in name or "\\" in name or name in (".", "..")
            or os.path.basename(name) != name):
        raise GraphError(f"{json_path!r} names the weights file {name!r}, which is not a file in its own folder: "
                         "refused (weights must sit next to the JSON file)")
    folder = os.path.dirname(json_path)
    weights_path = os.path.join(folder, name)
    if not os.path.exists(weights_path) and os.path.exists(default_path):
        weights_path = default_path  # a save was interrupted after renaming its staged weights: checked below
    try:
        st = os.stat(weights_path)
    except FileNotFoundError:
        raise GraphError(f"the weights file {weights_path!r} of {json_path!r} is missing") from None
    import stat as _stat
    if not _stat.S_ISREG(st.st_mode):
        raise GraphError(f"the weights file {weights_path!r} of {json_path!r} is not a regular file: refused")
    limit = _max_load_bytes()
    if st.st_size > limit:
        raise GraphError(f"the weights file {weights_path!r} is {st.st_size} bytes, over the load limit of {limit} "
                         "bytes (raise graphgrad.config.max_load_bytes to load it)")
    with open(weights_path, "rb") as f:
        data = f.read(min(limit, st.st_size) + 1)  # read(n) allocates n bytes up front: never the whole limit
    if len(data) > limit:
        raise GraphError(f"the weights file {weights_path!r} is over the load limit of {limit} bytes "
                         "(raise graphgrad.config.max_load_bytes to load it)")
    if hashlib.sha256(data).hexdigest() != info["sha256"]:
        raise GraphError(f"the weights file {weights_path!r} does not belong to {json_path!r} (SHA-256 differs): "
                         "they come from different saves")
    return data, weights_path


def _max_load_bytes() -> int:
    return files.max_load_bytes()


def read_saved_variables(path: str) -> dict:
    """``{name: (value, initial_value)}`` of the variables saved at ``path``."""
    document, arrays = read_document(path)
    return {v["name"]: (arrays[v["value"]], arrays[v["initial_value"]]) for v in document["variables"]}


def load_graph(path: str) -> tuple:
    """Load a graph saved by :func:`save_graph`.

    Returns:
        ``(graph, named)``: a new Graph (its Variables are new Variables holding the saved values and
        initial values) and a dict from every node name to its output tensor (or to the node itself
        for operations without output, like ``group``).

    Examples:
        >>> g, named = gg.load_graph("/tmp/model")
        >>> gg.Session(g).run(named["y"], {named["x"]: batch})
    """
    document, arrays = read_document(path)
    try:
        return _build_graph(document, arrays)
    except GraphError:
        raise
    except (KeyError, TypeError, IndexError, AttributeError, ValueError, RecursionError) as exc:
        raise GraphError(f"load_graph: {graph_paths(path)[0]!r} has a malformed structure "
                         f"({type(exc).__name__}: {exc})") from None


def _build_graph(document: dict, arrays: dict) -> tuple:
    classes = _op_classes()
    graph = Graph()
    variables: dict = {}
    generators = []
    for entry in document.get("generators", []):
        gen = Generator(entry["initial_seed"])
        gen.set_state(entry["state"])
        generators.append(gen)
    with graph.as_default():
        for entry in document["variables"]:
            var = Variable(arrays[entry["value"]], trainable=entry["trainable"], name=entry["base_name"],
                           dtype=entry["dtype"])
            var.initial_value = arrays[entry["initial_value"]].astype(var.dtype, copy=True)
            var.requires_grad = bool(entry.get("requires_grad", var.requires_grad))
            variables[entry["name"]] = var
    decode = _Decoder(arrays, variables, generators)
    readers = {v["read_node"]: variables[v["name"]] for v in document["variables"] if v.get("read_node")}
    named: dict = {}
    for entry in document["nodes"]:
        name, op_name = entry["name"], entry["op"]
        cls = classes.get(op_name)
        if cls is None:
            raise GraphError(f"load_graph: node {name!r} has op {op_name!r}, which this graphgrad does not define")
        try:
            op = _make_op(cls, {k: decode(v) for k, v in entry["props"].items()},
                          {k: decode(v) for k, v in entry.get("state", {}).items()})
            inputs = tuple(named[x] if isinstance(x, str) else
                           (x["$str"] if isinstance(x, dict) and "$str" in x else decode(x)) for x in entry["inputs"])
            controls = tuple(_as_node(named[c]) for c in entry["control_inputs"])
        except KeyError as exc:
            raise GraphError(f"load_graph: node {name!r} refers to {exc}, which is not defined before it") from None
        saved = entry["output"]
        spec = _infer(op, inputs, name)
        if (spec is None) != (saved is None) or (spec is not None and (
                _shape_json(spec.shape) != saved["shape"] or spec.dtype.name != saved["dtype"])):
            shown = None if spec is None else f"{spec.shape} {spec.dtype}"
            raise GraphError(f"load_graph: node {name!r} ({op_name}) now gives {shown}, but was saved with "
                             f"{saved and (tuple(saved['shape'] or ()), saved['dtype'])}: its op did not round-trip")
        node = graph.add_node(op, inputs, spec, name=name,
                              requires_grad=bool(saved and saved["requires_grad"]), control_inputs=controls)
        if node.name != name:
            raise GraphError(f"load_graph: duplicate node name {name!r}")
        node.site = entry.get("site") or node.site
        if name in readers:
            graph._reads[id(readers[name])] = node.out
        named[name] = node if node.out is None else node.out
    return graph, named


def _as_node(value) -> GraphNode:
    return value if isinstance(value, GraphNode) else value._node


def _infer(op, inputs: tuple, name: str) -> Optional[TensorSpec]:
    specs = [spec_of(x) for x in inputs]
    try:
        if any(isinstance(s, TensorSpec) and s.shape is None for s in specs):
            return _unknown_rank_spec(op, specs)
        return op.infer(*specs)
    except Exception as exc:
        raise GraphError(f"load_graph: node {name!r} ({op.name}) failed its shape rule: {exc}") from exc
