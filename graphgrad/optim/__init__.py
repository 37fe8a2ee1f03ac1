"""Optimizers. ``gg.optim.rules`` holds the update rules (SGD, momentum, Adam, RMSprop, Adagrad,
Adadelta) written once with graphgrad ops: the eager optimizers here (PyTorch's API: ``SGD``,
``Adam``, ``AdamW``, ``RMSprop``, ``Adagrad``, ``Adadelta``) and the graph optimizers of
``gg.train`` both use them. Also learning-rate schedules (``StepLR``... ``ReduceLROnPlateau``) and
gradient clipping (``clip_grad_norm_``, ``clip_grad_value_``)."""
from graphgrad.optim import rules
from graphgrad.optim.rules import NEEDS_STEP, RULES, STATE, state_for
from graphgrad.optim.optimizer import Optimizer
from graphgrad.optim.sgd import SGD
from graphgrad.optim.adam import Adam, AdamW
from graphgrad.optim.rmsprop import RMSprop
from graphgrad.optim.adagrad import Adagrad
from graphgrad.optim.adadelta import Adadelta
from graphgrad.optim.more import ASGD, LBFGS, Adamax, NAdam, RAdam, Rprop, SparseAdam
from graphgrad.optim.schedule import (CosineAnnealingLR, ExponentialLR, LinearWarmup, LRScheduler, MultiStepLR,
                                      OneCycleLR, ReduceLROnPlateau, StepLR)
from graphgrad.optim.schedule_more import (ChainedScheduler, ConstantLR, CosineAnnealingWarmRestarts, CyclicLR,
                                           LambdaLR, LinearLR, MultiplicativeLR, PolynomialLR, SequentialLR)
from graphgrad.optim.clip import clip_grad_norm_, clip_grad_value_

__all__ = ["rules", "NEEDS_STEP", "RULES", "STATE", "state_for",
           "Optimizer", "SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adadelta", "Adamax", "NAdam", "RAdam",
           "Rprop", "ASGD", "LBFGS", "SparseAdam",
           "LRScheduler", "StepLR", "MultiStepLR", "ExponentialLR", "CosineAnnealingLR", "OneCycleLR", "LinearWarmup",
           "ReduceLROnPlateau", "LambdaLR", "MultiplicativeLR", "ConstantLR", "LinearLR", "PolynomialLR",
           "CosineAnnealingWarmRestarts", "CyclicLR", "SequentialLR", "ChainedScheduler",
           "clip_grad_norm_", "clip_grad_value_"]
