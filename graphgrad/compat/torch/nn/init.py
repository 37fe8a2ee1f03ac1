"""``torch.nn.init``: graphgrad's initializers (the in-place ``*_`` forms)."""
from graphgrad.nn.init import *  # noqa: F401,F403
from graphgrad.nn.init import (calculate_gain, constant_, eye_, kaiming_normal_, kaiming_uniform_,  # noqa: F401
                               normal_, ones_, orthogonal_, trunc_normal_, uniform_)
