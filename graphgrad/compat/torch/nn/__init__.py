"""``torch.nn``: graphgrad's layers, losses and Module (PyTorch's contract already), plus
``functional``, ``init`` and ``utils``."""
from graphgrad.nn import *  # noqa: F401,F403
from graphgrad.nn import Module, Parameter  # noqa: F401
from graphgrad.compat.torch.nn import functional, init, parallel, utils  # noqa: F401
from graphgrad.nn import _Loss, _WeightedLoss  # noqa: F401,E402  (torch.nn.modules.loss's bases)
from graphgrad.nn import Linear as NonDynamicallyQuantizableLinear  # noqa: F401,E402  (attention's output projection)


class _ModulesPackage:
    """``torch.nn.modules``: PyTorch's package of layer modules, reached by attribute
    (``torch.nn.modules.dropout.Dropout``, ``torch.nn.modules.loss._Loss``): each of its submodules is
    this namespace, which holds every layer."""

    SUBMODULES = frozenset({"activation", "adaptive", "batchnorm", "channelshuffle", "container", "conv",
                            "distance", "dropout", "flatten", "fold", "instancenorm", "lazy", "linear", "loss",
                            "module", "normalization", "padding", "pixelshuffle", "pooling", "rnn", "sparse",
                            "transformer", "upsampling"})

    def __getattr__(self, name: str):
        import sys

        me = sys.modules[__name__]
        return me if name in self.SUBMODULES else getattr(me, name)


modules = _ModulesPackage()
