"""The graph optimizer: a pipeline of rewrite passes run on a copy of the subgraph a run needs.

Levels: ``0`` runs nothing; ``1`` the cheap passes (algebraic simplification, common subexpression
elimination, dead-code pruning); ``2`` (the default) adds constant folding and elementwise fusion.
"""
from __future__ import annotations

from typing import Iterable

from graphgrad.graph.graph import GraphNode
from graphgrad.graph.rewrite.engine import (PROGRAM_PASSES, RULES, Fed, PassRecord, Program, RewriteContext,
                                            copy_program, program_pass, rewrite, run_phase, run_program_pass)

#: The passes, by level. Each name is a phase of registered rules (a module of this package).
PIPELINE = {
    0: (),
    1: ("simplify", "cse", "prune"),
    2: ("fold", "simplify", "cse", "fold", "fuse", "prune"),
}

# importing the pass modules registers their rules
from graphgrad.graph.rewrite import cse, fold, fuse, gather, pooling, prune, simplify  # noqa: E402,F401


def optimize(fetch_nodes: Iterable[GraphNode], feeds: Iterable[GraphNode] = (), level: int = 2,
             skip: Iterable[str] = ()) -> Program:
    """An optimized copy of what ``fetch_nodes`` need (the user's graph is not changed); the passes
    named in ``skip`` are left out (tests use it to look at one pass's work)."""
    if level not in PIPELINE:
        raise ValueError(f"optimize must be one of {sorted(PIPELINE)}, got {level!r}")
    program = copy_program(fetch_nodes, feeds)
    skip = set(skip)
    for phase in PIPELINE[level]:
        if phase in skip:
            continue
        if phase in PROGRAM_PASSES:
            program.log.append(run_program_pass(program, phase))
        elif phase in RULES:
            program.log.append(run_phase(program, phase))
    return program


__all__ = ["PIPELINE", "optimize", "rewrite", "program_pass", "RewriteContext", "Program", "PassRecord", "Fed", "copy_program",
           "run_phase"]
