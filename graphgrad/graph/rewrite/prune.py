"""Dead-code elimination: only what the requested outputs need is kept.

The engine already executes only the outputs' ancestors; this pass makes that visible in the log by
counting the nodes rewrites left without consumers, and drops them from the copy's node list.
"""
from __future__ import annotations

import collections

from graphgrad.graph.rewrite.engine import Program, program_pass


@program_pass("prune")
def prune(program: Program) -> collections.Counter:
    """Forget every node of the copy that no output depends on."""
    graph = program.graph
    before = len(graph._nodes)
    live = set(program.nodes())
    graph._nodes = [n for n in graph._nodes if n in live]
    graph._by_name = {n.name: n for n in graph._nodes}
    return collections.Counter({"remove_dead_node": before - len(graph._nodes)} if before > len(live) else {})
