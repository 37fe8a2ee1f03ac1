"""``torch.nn.utils``: gradient clipping."""
from graphgrad.optim import clip_grad_norm_, clip_grad_value_  # noqa: F401
