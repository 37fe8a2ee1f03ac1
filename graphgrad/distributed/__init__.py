"""Data-parallel training on MPI (mpi4py): the world, collectives as ops, and the training helpers.

Run a script on several processes with ``python -m graphgrad.distributed.run -n 4 train.py`` (or
``mpiexec -n 4 python train.py``); without a launcher the same script runs as a world of one.

* the world: :func:`init`, :func:`rank`, :func:`world_size`, :func:`local_rank`,
  :func:`is_initialized`, :func:`barrier`;
* collectives on tensors, differentiable and usable in eager code, static graphs and
  ``gg.function``: :func:`all_reduce`, :func:`broadcast`, :func:`all_gather`,
  :func:`reduce_scatter` (``async_op=True`` returns a :class:`Work` with ``wait()``);
  :func:`grouped_all_reduce` reduces a list of tensors in a few bucketed collectives;
* static graphs, TensorFlow-1 style: :class:`DistributedOptimizer` (gradients averaged over the ranks
  inside ``minimize``) and :func:`broadcast_variables` / :func:`broadcast_global_variables`.
* eager training: :class:`DistributedDataParallel` (``DDP``) averages gradients in buckets while
  ``backward()`` runs, overlapping communication with computation; ``no_sync()`` for accumulation;
* data: :class:`DistributedSampler` (each rank its share, a new order every epoch) and
  :class:`ShardSampler` (an unpadded split for evaluation);
* Keras style: ``Model.fit`` / ``evaluate`` / ``predict`` run data-parallel by themselves under a
  launcher (helpers in :mod:`graphgrad.distributed.training`); ``gg.save_checkpoint`` is written
  by rank 0 alone (``gg.save`` writes on every rank that calls it).

``import graphgrad`` never imports mpi4py: MPI is loaded by :func:`init`, under a launcher only.
"""
from graphgrad.distributed.world import (CollectiveTimeout, DistributedError, init, is_initialized, is_main_process,
                                         local_rank, rank, world_size)
from graphgrad.distributed.ops import Work, all_gather, all_reduce, barrier, broadcast, reduce_scatter
from graphgrad.distributed.sampler import DistributedSampler, ShardSampler
from graphgrad.distributed.graph import (DistributedOptimizer, broadcast_global_variables, broadcast_variables,
                                         grouped_all_reduce)
from graphgrad.distributed.parallel import DDP, DistributedDataParallel

__all__ = ["init", "is_initialized", "is_main_process", "rank", "world_size", "local_rank", "barrier", "all_reduce",
           "broadcast", "all_gather", "reduce_scatter", "Work", "DistributedError", "CollectiveTimeout",
           "DistributedSampler", "ShardSampler",
           "DistributedOptimizer", "broadcast_variables", "broadcast_global_variables", "grouped_all_reduce",
           "DistributedDataParallel", "DDP"]
