"""``torch.optim.lr_scheduler``: graphgrad's schedules."""
from graphgrad.optim import (ChainedScheduler, ConstantLR, CosineAnnealingLR, CosineAnnealingWarmRestarts,  # noqa: F401
                             CyclicLR, ExponentialLR, LambdaLR, LinearLR, LinearWarmup, LRScheduler, MultiplicativeLR,
                             MultiStepLR, OneCycleLR, PolynomialLR, ReduceLROnPlateau, SequentialLR, StepLR)

_LRScheduler = LRScheduler  # the pre-2.0 name, still used by older code
