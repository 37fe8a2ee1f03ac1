"""``torch.optim.lr_scheduler``: graphgrad's schedules."""
from graphgrad.optim import (CosineAnnealingLR, ExponentialLR, LinearWarmup, LRScheduler, MultiStepLR,  # noqa: F401
                             OneCycleLR, ReduceLROnPlateau, StepLR)
