"""``torch.utils``: ``data``."""
from graphgrad.compat.torch.utils import data  # noqa: F401
