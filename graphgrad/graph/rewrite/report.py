"""The text of ``explain()``: what each pass of a plan's optimization changed, and its memory."""
from __future__ import annotations

import collections
from typing import Iterable, Optional

from graphgrad.graph.graph import GraphNode
from graphgrad.graph.variables import Placeholder


def _bytes(n: float) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n} B"


def program_report(program, memory: Optional[dict] = None, nodes_built: Optional[int] = None) -> str:
    """Per pass: nodes before and after, rules fired, time; then the final op counts and the peak
    intermediate memory without and with buffer planning."""
    lines = ["graph optimization report", "-" * 78,
             f"{'pass':<10}{'nodes before':>14}{'nodes after':>13}{'time':>10}   rules fired"]
    if nodes_built is not None:
        lines.append(f"{'(built)':<10}{'':>14}{nodes_built:>13}")
    for record in program.log:
        fired = ", ".join(f"{name} x{count}" for name, count in record.fired.most_common()) or "-"
        lines.append(f"{record.name:<10}{record.nodes_before:>14}{record.nodes_after:>13}"
                     f"{record.seconds * 1e3:>8.1f}ms   {fired}")
    ops = collections.Counter(node.op.name for node in program.nodes())
    lines.append("-" * 78)
    lines.append(f"final program: {sum(ops.values())} nodes: "
                 + ", ".join(f"{name} x{count}" for name, count in ops.most_common()))
    unknown = any(n.out is not None and not n.out.spec.fully_known for n in program.nodes())
    if unknown and memory and not memory.get("peak_before"):
        lines.append("peak intermediate memory: known only at run time (some dimensions are unknown)")
    elif memory and memory.get("peak_before") is not None and memory.get("peak_after") is not None:
        before, after = memory["peak_before"], memory["peak_after"]
        ratio = f" ({after / before:.2f}x)" if before else ""
        lines.append(f"peak intermediate memory: {_bytes(before)} without buffer planning, "
                     f"{_bytes(after)} with it{ratio}"
                     + (f" (liveness alone: {_bytes(memory['peak_liveness'])})" if "peak_liveness" in memory else ""))
    return "\n".join(lines)


def explain_run(session, fetch_nodes: Iterable[GraphNode], feed_nodes: Iterable[GraphNode] = ()) -> tuple:
    """``(report text, program)`` for what ``session`` would run for these fetches; placeholders
    the fetches need count as fed (their values do not matter to the plan)."""
    from graphgrad.graph.graph import Graph

    fetch_nodes = tuple(fetch_nodes)
    feeds = set(feed_nodes)
    feeds |= {n for n in Graph.ancestors(fetch_nodes, stop=feeds) if isinstance(n.op, Placeholder)}
    built = len(Graph.ancestors(fetch_nodes, stop=feeds))
    plan = session._make_plan(fetch_nodes, dict.fromkeys(feeds))
    if plan.program is None:
        return f"optimization level 0: {built} nodes run as built", None
    return program_report(plan.program, getattr(plan, "memory", None), nodes_built=built), plan.program
