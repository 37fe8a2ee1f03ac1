"""Training: the Keras-like high-level API and the TF1 graph utilities.

* ``gg.train.Model`` / ``gg.train.Sequential`` (also ``gg.Model``, ``gg.Sequential``): ``compile``,
  ``fit``, ``evaluate``, ``predict``, ``summary`` around a Module;
* ``gg.train.callbacks`` (History, EarlyStopping, ModelCheckpoint, LearningRateScheduler,
  ReduceLROnPlateau, CSVLogger, TensorBoard) and ``gg.train.metrics`` (accuracy, precision, f1...);
* ``gg.train.SummaryWriter``: TensorBoard event files; ``gg.train.plot_decision_boundary``;
* for static graphs: ``gg.train.Saver`` saves and restores Variables (with the graph they belong
  to); ``gg.train.AdamOptimizer`` and the other graph optimizers build train ops
  (``minimize(loss)``) from the shared update rules of ``gg.optim.rules``;
  ``gg.train.DistributedOptimizer`` averages their gradients over the ranks of a distributed job and
  ``gg.train.broadcast_variables`` / ``broadcast_global_variables`` copy rank 0's variables to all
  (Horovod's names; they live in ``graphgrad.distributed``).
"""
from graphgrad.train.saver import Saver
from graphgrad.train.optimizers import (AdamOptimizer, GradientDescentOptimizer, MomentumOptimizer, Optimizer,
                                        RMSPropOptimizer)
from graphgrad.train import callbacks, metrics
from graphgrad.train.callbacks import (Callback, CSVLogger, EarlyStopping, History, LearningRateScheduler,
                                       ModelCheckpoint, ReduceLROnPlateau, TensorBoard)
from graphgrad.train.model import Model, Sequential
from graphgrad.train.tensorboard import SummaryWriter
from graphgrad.train.plots import plot_decision_boundary
from graphgrad.distributed.graph import DistributedOptimizer, broadcast_global_variables, broadcast_variables

__all__ = ["Saver", "AdamOptimizer", "GradientDescentOptimizer", "MomentumOptimizer", "Optimizer", "RMSPropOptimizer",
           "callbacks", "metrics", "Callback", "CSVLogger", "EarlyStopping", "History", "LearningRateScheduler",
           "ModelCheckpoint", "ReduceLROnPlateau", "TensorBoard", "Model", "Sequential", "SummaryWriter",
           "plot_decision_boundary", "DistributedOptimizer", "broadcast_variables", "broadcast_global_variables"]
