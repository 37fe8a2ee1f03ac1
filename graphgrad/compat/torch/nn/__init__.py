"""``torch.nn``: graphgrad's layers, losses and Module (PyTorch's contract already), plus
``functional``, ``init`` and ``utils``."""
from graphgrad.nn import *  # noqa: F401,F403
from graphgrad.nn import Module, Parameter  # noqa: F401
from graphgrad.compat.torch.nn import functional, init, parallel, utils  # noqa: F401
from graphgrad.nn import _Loss, _WeightedLoss  # noqa: F401,E402  (torch.nn.modules.loss's bases)
