"""``gg.explain``: what the graph compiler did to a computation, pass by pass.

For a graph (its sink nodes), some graph tensors, or a ``gg.function`` and example arguments, it runs
the optimizer (on a copy; nothing is changed) and prints, per pass, the node count before and after,
which rules fired how many times and how long the pass took, then the op counts of the final program
and the peak intermediate memory before and after buffer planning. With ``dot_dir`` it also writes
Graphviz drawings of the graph before (``before.dot``) and after (``after.dot``) optimization, and SVG
files when the ``dot`` program is installed.
"""
from __future__ import annotations

import collections
import os
from typing import Any, Callable, Iterable, Optional

from graphgrad.core.tensor import Tensor
from graphgrad.graph.graph import Graph, GraphNode
from graphgrad.graph.rewrite import optimize
from graphgrad.viz.dot import GraphvizNotFoundError, to_dot, to_svg

__all__ = ["explain", "explain_program"]


def _fetch_nodes(target: Any) -> list:
    if isinstance(target, Graph):
        consumed = {x._node for n in target.get_operations() for x in n.inputs if isinstance(x, Tensor)}
        consumed |= {c for n in target.get_operations() for c in n.control_inputs}
        return [n for n in target.get_operations() if n not in consumed]
    items = target if isinstance(target, (list, tuple)) else [target]
    nodes = []
    for item in items:
        if isinstance(item, GraphNode):
            nodes.append(item)
        elif isinstance(item, Tensor) and isinstance(item._node, GraphNode):
            nodes.append(item._node)
        else:
            raise TypeError(f"explain: expected a Graph, graph tensors or operations, got {type(item).__name__}")
    return nodes


def _bytes(n: int) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n} B"


def explain_program(program, memory: Optional[dict] = None) -> str:
    """The text report for an optimized ``Program`` (see :func:`explain`)."""
    lines = ["graph optimization report", "-" * 72,
             f"{'pass':<10}{'nodes before':>14}{'nodes after':>13}{'time':>10}   rules fired"]
    for record in program.log:
        fired = ", ".join(f"{name} x{count}" for name, count in record.fired.most_common()) or "-"
        lines.append(f"{record.name:<10}{record.nodes_before:>14}{record.nodes_after:>13}"
                     f"{record.seconds * 1e3:>8.1f}ms   {fired}")
    ops = collections.Counter(node.op.name for node in program.nodes())
    lines.append("-" * 72)
    lines.append(f"final program: {sum(ops.values())} nodes: "
                 + ", ".join(f"{name} x{count}" for name, count in ops.most_common()))
    if memory:
        before, after = memory.get("peak_before"), memory.get("peak_after")
        if before is not None and after is not None:
            ratio = f" ({after / before:.2f}x)" if before else ""
            lines.append(f"peak intermediate memory: {_bytes(before)} without buffer planning, "
                         f"{_bytes(after)} with it{ratio}")
    return "\n".join(lines)


def explain(target: Any, feeds: Iterable[Any] = (), level: int = 2, dot_dir: Optional[str] = None,
            print_fn: Optional[Callable[[str], Any]] = print) -> str:
    """Show what the compiler does to ``target`` (a Graph, graph tensors/operations) at ``level``.

    Args:
        target: a Graph (everything it computes), or the graph tensors/operations you would fetch.
        feeds: graph tensors that would be fed (the optimizer does not look through them).
        level: the optimization level (0, 1 or 2).
        dot_dir: write ``before.dot`` and ``after.dot`` (and ``.svg`` with Graphviz) there.
        print_fn: where the report goes (``None``: only return it).

    Returns:
        The report text.

    Example:
        >>> x = gg.placeholder(gg.float32, (4,))
        >>> gg.explain(x * 2 * 2 * 2)      # one Mul by 8 remains
    """
    fetch_nodes = _fetch_nodes(target)
    feed_nodes = _fetch_nodes(list(feeds)) if feeds else []
    program = optimize(fetch_nodes, feed_nodes, level)
    memory = None
    try:
        from graphgrad.graph.session import plan_memory  # the executor's estimate, when it provides one

        memory = plan_memory(program)
    except (ImportError, TypeError, ValueError):
        memory = None
    report = explain_program(program, memory)
    if dot_dir is not None:
        os.makedirs(dot_dir, exist_ok=True)
        drawings = {"before": fetch_nodes, "after": program.graph}
        for name, what in drawings.items():
            path = os.path.join(dot_dir, f"{name}.dot")
            with open(path, "w") as fh:
                fh.write(to_dot(what))
            try:
                to_svg(what, os.path.join(dot_dir, f"{name}.svg"))
            except GraphvizNotFoundError:
                pass
        report += f"\ndrawings written to {dot_dir}/before.dot and {dot_dir}/after.dot"
    if print_fn is not None:
        print_fn(report)
    return report
