"""``torch.utils``: ``data``, ``benchmark``."""
from graphgrad.compat.torch.utils import data  # noqa: F401
from graphgrad.compat.torch.utils import benchmark  # noqa: F401,E402
from graphgrad.compat.torch.utils import _pytree  # noqa: F401,E402
