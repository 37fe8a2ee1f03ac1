"""Visualization: draw graphs as Graphviz DOT text or SVG (``gg.viz.to_dot``, ``gg.viz.to_svg``)."""
from graphgrad.viz.dot import GraphvizNotFoundError, NODE_STYLES, to_dot, to_svg

__all__ = ["to_dot", "to_svg", "GraphvizNotFoundError", "NODE_STYLES", "explain", "program_report"]
from graphgrad.viz.explain import explain, program_report  # noqa: E402
