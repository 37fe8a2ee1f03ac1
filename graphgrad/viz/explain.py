"""``gg.explain``: what the graph compiler does to a computation, pass by pass, with drawings.

For a graph (everything it computes), some graph tensors, or a ``gg.function`` with example
arguments, it builds the plan a Session would run (on a copy; nothing is changed) and prints, per
pass, the node count before and after, which rules fired how many times and how long the pass took,
then the op counts of the final program and the peak intermediate memory without and with buffer
planning. With ``dot_dir`` it also writes Graphviz drawings of the computation before
(``before.dot``) and after (``after.dot``) optimization, and SVG files when ``dot`` is installed.
"""
from __future__ import annotations

import os
from typing import Any, Callable, Iterable, Optional

from graphgrad.core.tensor import Tensor
from graphgrad.graph.graph import Graph, GraphNode
from graphgrad.graph.rewrite.report import explain_run, program_report
from graphgrad.graph.session import Session
from graphgrad.viz.dot import GraphvizNotFoundError, to_dot, to_svg

__all__ = ["explain", "program_report"]


def _fetch_nodes(target: Any) -> list:
    if isinstance(target, Graph):
        ops = target.get_operations()
        consumed = {x._node for n in ops for x in n.inputs if isinstance(x, Tensor)}
        consumed |= {c for n in ops for c in n.control_inputs}
        return [n for n in ops if n not in consumed]
    nodes = []
    for item in (target if isinstance(target, (list, tuple)) else [target]):
        if isinstance(item, GraphNode):
            nodes.append(item)
        elif isinstance(item, Tensor) and isinstance(item._node, GraphNode):
            nodes.append(item._node)
        else:
            raise TypeError(f"explain: expected a Graph, graph tensors or operations, or a gg.function, "
                            f"got {type(item).__name__}")
    return nodes


def explain(target: Any, *args: Any, feeds: Iterable[Any] = (), level: Optional[int] = None,
            dot_dir: Optional[str] = None, print_fn: Optional[Callable[[str], Any]] = print, **kwargs: Any) -> str:
    """Show what the compiler does to ``target``.

    Args:
        target: a Graph (everything it computes), graph tensors/operations you would fetch, or a
            ``gg.function`` followed by example arguments (``gg.explain(step, x, y)``).
        feeds: graph tensors that would be fed (the optimizer does not look through them).
        level: the optimization level (default: the function's, else 2).
        dot_dir: write ``before.dot`` and ``after.dot`` (and ``.svg`` with Graphviz) there.
        print_fn: where the report goes (``None``: only return it).

    Returns:
        The report text.

    Examples:
        >>> x = gg.placeholder(gg.float32, (4,))
        >>> gg.explain(x * 2 * 2 * 2)      # one Mul by 8 remains
    """
    if hasattr(target, "concrete") and callable(target):  # a gg.function
        concrete = target.concrete(*args, **kwargs)
        session = concrete.session if level is None else Session(concrete.graph, optimize=level)
        fetch_nodes, feed_nodes = list(concrete.fetch_nodes), list(concrete.feed_nodes)
        header = concrete.explain().splitlines()[0] + "\n"
    else:
        fetch_nodes = _fetch_nodes(target)
        feed_nodes = _fetch_nodes(list(feeds)) if feeds else []
        session = Session(fetch_nodes[0].graph, optimize=2 if level is None else level)
        header = ""
    text, program = explain_run(session, fetch_nodes, feed_nodes)
    report = header + text
    if dot_dir is not None:
        os.makedirs(dot_dir, exist_ok=True)
        drawings = {"before": fetch_nodes}
        if program is not None:
            drawings["after"] = program.nodes()
        for name, what in drawings.items():
            with open(os.path.join(dot_dir, f"{name}.dot"), "w") as fh:
                fh.write(to_dot(what))
            try:
                to_svg(what, os.path.join(dot_dir, f"{name}.svg"))
            except GraphvizNotFoundError:
                pass
        report += f"\ndrawings: {', '.join(os.path.join(dot_dir, n + '.dot') for n in drawings)}"
    if print_fn is not None:
        print_fn(report)
    return report
