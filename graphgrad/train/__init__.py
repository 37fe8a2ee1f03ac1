"""Training utilities for static graphs: ``gg.train.Saver`` saves and restores Variables (with the
graph they belong to); ``gg.train.AdamOptimizer`` and the other graph optimizers build train ops
(``minimize(loss)``) from the shared update rules of ``gg.optim.rules``."""
from graphgrad.train.saver import Saver
from graphgrad.train.optimizers import (AdamOptimizer, GradientDescentOptimizer, MomentumOptimizer, Optimizer,
                                        RMSPropOptimizer)
