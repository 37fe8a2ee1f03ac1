"""``torch.optim``: graphgrad's optimizers (PyTorch's names and param groups), and ``lr_scheduler``."""
from graphgrad.optim import *  # noqa: F401,F403
from graphgrad.optim import Optimizer  # noqa: F401
from graphgrad.compat.torch.optim import lr_scheduler  # noqa: F401
