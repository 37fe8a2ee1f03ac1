"""Optimizers. ``gg.optim.rules`` holds the update rules (SGD, momentum, Adam, RMSprop) written once
with graphgrad ops: the eager optimizers and the graph optimizers of ``gg.train`` both use them."""
from graphgrad.optim import rules
from graphgrad.optim.rules import NEEDS_STEP, RULES, STATE, state_for

__all__ = ["rules", "NEEDS_STEP", "RULES", "STATE", "state_for"]
