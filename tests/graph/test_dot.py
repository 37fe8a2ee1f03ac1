"""gg.viz.to_dot / to_svg: Graphviz drawings of graphs."""
from __future__ import annotations

import re
import shutil

import numpy as np
import pytest

import graphgrad as gg
from graphgrad.viz import dot as dotmod


def _small():
    g = gg.Graph()
    with g.as_default():
        x = gg.placeholder(gg.float32, (None, 2), name="x")
        w = gg.Variable(np.ones((2, 3), np.float32), name="w")
        c = gg.constant(np.ones(3, np.float32), name="c")
        with gg.name_scope("layer"):
            h = gg.relu(x @ w + c)
        update = w.assign(w * 2.0)
        with gg.control_dependencies([update]):
            y = gg.sum(h, axis=1)
        other = gg.placeholder(gg.float32, (3,), name="unused")
        z = other * 3.0
    return g, x, y, z


def _nodes(dot: str) -> dict:
    """``{node id: {attr: value}}`` parsed from ``to_dot`` output."""
    out = {}
    for m in re.finditer(r'^\s*(n\d+) \[(.*)\];$', dot, re.M):
        attrs = dict(re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', m.group(2)))
        out[m.group(1)] = attrs
    return out


def _edges(dot: str) -> list:
    return re.findall(r'^\s*(n\d+) -> (n\d+)(.*);$', dot, re.M)


def test_whole_graph_structure():
    g, x, y, z = _small()
    dot = gg.viz.to_dot(g)
    assert dot.startswith('digraph "graphgrad" {\n') and dot.endswith("}\n")
    assert dot.count("{") == dot.count("}")
    nodes = _nodes(dot)
    assert len(nodes) == len(g.get_operations())
    labels = {a["label"].split("\\n")[1]: a for a in nodes.values()}
    assert labels["x"]["label"] == "Placeholder\\nx\\n(None, 2) float32"
    assert labels["w"]["label"] == "ReadVariable\\nw\\n(2, 3) float32"
    assert labels["layer/MatMul"]["label"] == "MatMul\\nlayer/MatMul\\n(None, 3) float32"
    assert labels["Sum"]["label"] == "Sum\\nSum\\n(None,) float32"
    assert labels["Mul"]["label"] == "Mul\\nMul\\n[1]=2.0\\n(2, 3) float32"  # literal input shown
    # kinds are visually distinct
    assert labels["x"]["shape"] == "invhouse" and labels["unused"]["shape"] == "invhouse"
    assert labels["w"]["shape"] == "cylinder" and labels["w/Assign"]["shape"] == "cylinder"
    assert labels["c"]["shape"] == "note"
    assert labels["layer/Relu"]["shape"] == "box"
    fills = {labels[n]["fillcolor"] for n in ("x", "w", "c", "layer/Relu")}
    assert len(fills) == 4
    # edges: inputs solid (numbered when several), the control dependency dashed
    ids = {a["label"].split("\\n")[1]: i for i, a in nodes.items()}
    edges = _edges(dot)
    assert (ids["x"], ids["layer/MatMul"], ' [label="0"]') in edges
    assert (ids["w"], ids["layer/MatMul"], ' [label="1"]') in edges
    assert (ids["layer/Relu"], ids["Sum"], "") in edges
    control = [e for e in edges if "dashed" in e[2]]
    assert [(a, b) for a, b, _ in control] == [(ids["w/Assign"], ids["Sum"])]
    solid = [e for e in edges if "dashed" not in e[2]]
    assert len(solid) == sum(sum(1 for i in n.inputs if isinstance(i, gg.Tensor)) for n in g.get_operations())
    # name scopes become clusters
    assert re.search(r'subgraph cluster_\d+ \{\n\s+label="layer";', dot)


def test_subgraph_of_tensors():
    g, x, y, z = _small()
    dot = gg.viz.to_dot(y)
    names = {a["label"].split("\\n")[1] for a in _nodes(dot).values()}
    assert names == {"x", "w", "c", "layer/MatMul", "layer/Add", "layer/Relu", "Mul", "w/Assign", "Sum"}
    both = {a["label"].split("\\n")[1] for a in _nodes(gg.viz.to_dot([y, z])).values()}
    assert both == names | {"unused", "Mul_1"}
    only_z = gg.viz.to_dot(z._node)
    assert {a["label"].split("\\n")[1] for a in _nodes(only_z).values()} == {"unused", "Mul_1"}
    assert _edges(only_z) == [("n0", "n1", "")]


def test_options_and_escaping():
    g = gg.Graph()
    with g.as_default():
        a = gg.placeholder(gg.float32, None, name='we"ird\\name')
        b = gg.sum(gg.placeholder(gg.float32, (4, 5), name="p"), axis=1, keepdims=True)
    dot = gg.viz.to_dot(g, rankdir="LR", show_props=True, cluster_scopes=False, graph_name='my "g"')
    assert 'digraph "my \\"g\\"" {' in dot and 'rankdir="LR"' in dot
    assert 'label="Placeholder\\nwe\\"ird\\\\name\\n(?) float32"' in dot
    assert "axis=1, keepdims=True" in dot and "(4, 1) float32" in dot
    assert "subgraph" not in dot
    assert dotmod.escape('a"b\\c\nd') == 'a\\"b\\\\c\\nd'
    with pytest.raises(TypeError):
        gg.viz.to_dot(3)
    with pytest.raises(TypeError, match="Variable"):
        gg.viz.to_dot(gg.Variable(np.zeros(2)))


def test_group_node_style():
    g = gg.Graph()
    with g.as_default():
        v = gg.Variable(np.zeros(2, np.float32), name="v")
        op = gg.group(v.assign(v + 1.0), name="train")
    nodes = _nodes(gg.viz.to_dot(op))
    train = next(a for a in nodes.values() if a["label"] == "NoOp\\ntrain")
    assert train["shape"] == "octagon"


def test_to_svg_without_dot_names_the_package(monkeypatch, tmp_path):
    g, _, y, _ = _small()
    monkeypatch.setenv("PATH", str(tmp_path))  # an empty folder: no `dot`
    with pytest.raises(gg.viz.GraphvizNotFoundError) as info:
        gg.viz.to_svg(y, str(tmp_path / "g.svg"))
    message = str(info.value)
    assert "apt-get install graphviz" in message and "pip install graphviz" in message
    assert "not the `dot` program" in message
    assert not (tmp_path / "g.svg").exists()


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz `dot` is not installed")
def test_to_svg_renders(tmp_path):
    g, _, y, _ = _small()
    path = tmp_path / "out" / "g.svg"
    svg = gg.viz.to_svg(g, str(path))
    assert svg.lstrip().startswith("<?xml") and "<svg" in svg
    assert path.read_text() == svg
    assert "layer/MatMul" in svg
