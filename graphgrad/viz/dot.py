"""Draw a graph: Graphviz DOT text (``to_dot``) and, with Graphviz installed, SVG (``to_svg``).

Each graph node is one box labelled with its op type, name and output (``(None, 3) float32``).
Kinds of node are told apart by shape and fill colour:

* placeholders (``Placeholder``, ``PlaceholderWithDefault``): ``invhouse``, light blue;
* variable reads (``ReadVariable``): ``cylinder``, light green; assignments (``Assign``): ``cylinder``,
  light orange;
* constants (``Const``): ``note``, light grey;
* groups and no-ops (``NoOp``): ``octagon``, not filled;
* every other op: rounded ``box``, white.

Input edges are solid (labelled with the input's position when a node has several), control edges
dashed. Nodes of a name scope (``layer1/...``) are drawn inside a cluster labelled with the scope.
"""
from __future__ import annotations

import os
import shutil
import subprocess
from typing import Any, Iterable, Optional

from graphgrad.core.tensor import Tensor
from graphgrad.errors import GraphgradError
from graphgrad.graph.graph import Graph, GraphNode

__all__ = ["to_dot", "to_svg", "NODE_STYLES", "GraphvizNotFoundError"]

#: DOT attributes per kind of node (see the module docstring).
NODE_STYLES = {
    "placeholder": {"shape": "invhouse", "style": "filled", "fillcolor": "#cfe2ff"},
    "variable": {"shape": "cylinder", "style": "filled", "fillcolor": "#d1e7dd"},
    "assign": {"shape": "cylinder", "style": "filled", "fillcolor": "#ffe5d0"},
    "constant": {"shape": "note", "style": "filled", "fillcolor": "#e9ecef"},
    "group": {"shape": "octagon", "style": "solid", "fillcolor": "white"},
    "op": {"shape": "box", "style": "rounded,filled", "fillcolor": "white"},
}
_KINDS = {"Placeholder": "placeholder", "PlaceholderWithDefault": "placeholder", "ReadVariable": "variable",
          "Assign": "assign", "Const": "constant", "NoOp": "group"}


_NO_PROPS = ("Placeholder", "PlaceholderWithDefault", "ReadVariable", "Assign", "Const")  # shown otherwise


class GraphvizNotFoundError(GraphgradError, RuntimeError):
    """The Graphviz ``dot`` program is not installed (or not on ``PATH``)."""


def kind_of(node: GraphNode) -> str:
    """``"placeholder"``, ``"variable"``, ``"assign"``, ``"constant"``, ``"group"`` or ``"op"``."""
    return _KINDS.get(node.op.name, "op")


def escape(text: str) -> str:
    """``text`` as the inside of a DOT double-quoted string (quotes, backslashes, newlines escaped)."""
    return (str(text).replace("\\", "\\\\").replace('"', '\\"').replace("\r", "")
            .replace("\n", "\\n"))


def shape_text(shape) -> str:
    """``(None, 3)``; ``(3,)`` for one dimension; ``(?)`` for an unknown rank."""
    if shape is None:
        return "(?)"
    dims = ["None" if d is None else str(d) for d in shape]
    return "(" + ", ".join(dims) + ("," if len(dims) == 1 else "") + ")"


def _nodes_of(target: Any) -> tuple:
    """``(graph, nodes to draw in creation order)`` for a Graph, a tensor/node, or a list of them."""
    if isinstance(target, Graph):
        return target, target.get_operations()
    roots = []
    for item in (target if isinstance(target, (list, tuple)) else [target]):
        if isinstance(item, GraphNode):
            roots.append(item)
        elif getattr(item, "is_variable", False):
            raise TypeError("to_dot: pass the graph tensor reading a Variable (variable.value() inside the graph), "
                            "not the Variable itself")
        elif isinstance(item, Tensor) and isinstance(item._node, GraphNode):
            roots.append(item._node)
        else:
            raise TypeError(f"to_dot: expected a Graph, graph tensors or operations, got {type(item).__name__}")
    if not roots:
        raise ValueError("to_dot: nothing to draw (empty list)")
    graph = roots[0].graph
    if any(r.graph is not graph for r in roots):
        raise ValueError("to_dot: the tensors belong to different graphs")
    needed = graph.ancestors(roots)
    return graph, [n for n in graph.get_operations() if n in needed]


def _literal_text(value: Any) -> str:
    is_dtype = type(value).__name__.endswith("DType") or type(value).__name__ == "dtype"
    text = str(value) if is_dtype else repr(value)
    return text if len(text) <= 24 else text[:21] + "..."


def _label(node: GraphNode, show_props: bool) -> str:
    lines = [node.op.name, node.name]
    if node.op.name in ("ReadVariable", "Assign") and node.op.variable.base_name != node.name:
        lines.append(f"var {node.op.variable.base_name}")
    if show_props and node.op.props and node.op.name not in _NO_PROPS:
        lines.append(", ".join(f"{p}={_literal_text(getattr(node.op, p))}" for p in node.op.props))
    literals = [(i, x) for i, x in enumerate(node.inputs) if not isinstance(x, Tensor)]
    if literals:
        lines.append(", ".join(f"[{i}]={_literal_text(x)}" for i, x in literals))
    if node.out is not None:
        lines.append(f"{shape_text(node.out.shape)} {node.out.dtype}")
    return "\n".join(lines)


def _attrs(attrs: dict) -> str:
    return ", ".join(f'{k}="{escape(v)}"' for k, v in attrs.items())


def to_dot(target: Any, *, rankdir: str = "TB", show_props: bool = False, cluster_scopes: bool = True,
           graph_name: str = "graphgrad") -> str:
    """Graphviz DOT text for a graph, or for the part of it that tensors depend on.

    Args:
        target: a :class:`Graph` (every node), or a graph tensor / operation / list of them (only
            the nodes they depend on, through inputs and control inputs).
        rankdir: ``"TB"`` (top to bottom) or ``"LR"`` (left to right).
        show_props: add the op's attributes (``axis=1, keepdims=False``) to each label.
        cluster_scopes: draw the nodes of each name scope in a labelled cluster.
        graph_name: the DOT graph's name.

    Returns:
        The DOT source (nodes are ``n0``, ``n1``... in creation order, labelled with op type, name
        and output shape/dtype).

    Examples:
        >>> print(gg.viz.to_dot(loss))          # the subgraph ``loss`` depends on
        >>> gg.viz.to_svg(g, "graph.svg")       # needs Graphviz's ``dot``
    """
    graph, nodes = _nodes_of(target)
    ids = {node: f"n{i}" for i, node in enumerate(nodes)}
    lines = [f'digraph "{escape(graph_name)}" {{',
             f'  graph [rankdir="{escape(rankdir)}", fontname="Helvetica", fontsize="10"];',
             '  node [fontname="Helvetica", fontsize="10"];',
             '  edge [fontname="Helvetica", fontsize="8"];']

    def node_line(node: GraphNode, indent: str) -> str:
        attrs = {"label": _label(node, show_props), **NODE_STYLES[kind_of(node)], "tooltip": node.site or node.name}
        return f"{indent}{ids[node]} [{_attrs(attrs)}];"

    if cluster_scopes:
        tree: dict = {"nodes": [], "children": {}}
        for node in nodes:
            branch = tree
            for part in node.name.split("/")[:-1]:
                branch = branch["children"].setdefault(part, {"nodes": [], "children": {}})
            branch["nodes"].append(node)
        counter = [0]

        def emit(branch: dict, prefix: str, indent: str) -> None:
            for node in branch["nodes"]:
                lines.append(node_line(node, indent))
            for part, child in branch["children"].items():
                scope = prefix + part
                lines.append(f"{indent}subgraph cluster_{counter[0]} {{")
                counter[0] += 1
                lines.append(f'{indent}  label="{escape(scope)}"; style="dashed"; color="#adb5bd";')
                emit(child, scope + "/", indent + "  ")
                lines.append(f"{indent}}}")

        emit(tree, "", "  ")
    else:
        for node in nodes:
            lines.append(node_line(node, "  "))
    for node in nodes:
        tensor_inputs = [x for x in node.inputs if isinstance(x, Tensor) and x._node in ids]
        numbered = len(tensor_inputs) > 1
        for i, x in enumerate(node.inputs):
            if isinstance(x, Tensor) and x._node in ids:
                extra = f' [label="{i}"]' if numbered else ""
                lines.append(f"  {ids[x._node]} -> {ids[node]}{extra};")
        for c in node.control_inputs:
            if c in ids:
                lines.append(f'  {ids[c]} -> {ids[node]} [style="dashed", color="#6c757d"];')
    lines.append("}")
    return "\n".join(lines) + "\n"


_INSTALL_HINT = ("install Graphviz, which provides it: `apt-get install graphviz` (Debian/Ubuntu), "
                 "`brew install graphviz` (macOS), `conda install graphviz`, or https://graphviz.org/download/. "
                 "Note that `pip install graphviz` installs only Python bindings, not the `dot` program. "
                 "gg.viz.to_dot() gives the DOT text without it.")


def to_svg(target: Any, path: Optional[str] = None, **options) -> str:
    """Render ``target`` (as :func:`to_dot` takes it) to SVG with Graphviz's ``dot`` program.

    Args:
        target: a Graph, or graph tensors/operations (their subgraph).
        path: where to write the SVG (atomically); ``None`` to only return it.
        **options: passed to :func:`to_dot`.

    Returns:
        The SVG text.

    Raises:
        GraphvizNotFoundError: when ``dot`` is not on ``PATH`` (the message says what to install).
    """
    dot = shutil.which("dot")
    if dot is None:
        raise GraphvizNotFoundError("to_svg needs the Graphviz `dot` program, which was not found on PATH: "
                                    + _INSTALL_HINT)
    source = to_dot(target, **options)
    result = subprocess.run([dot, "-Tsvg"], input=source.encode("utf-8"), capture_output=True, timeout=120)
    if result.returncode != 0:
        raise GraphgradError(f"Graphviz `dot` failed (exit {result.returncode}): "
                             f"{result.stderr.decode('utf-8', 'replace').strip()}")
    svg = result.stdout.decode("utf-8")
    if path is not None:
        folder = os.path.dirname(os.path.abspath(path))
        os.makedirs(folder, exist_ok=True)
        tmp = os.path.join(folder, f".{os.path.basename(path)}.{os.getpid()}.tmp")
        try:
            with open(tmp, "w", encoding="utf-8") as f:
                f.write(svg)
            os.replace(tmp, path)
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)
    return svg


def iter_kinds(nodes: Iterable[GraphNode]) -> dict:
    """``{node name: kind}`` (handy in tests and tools)."""
    return {n.name: kind_of(n) for n in nodes}
