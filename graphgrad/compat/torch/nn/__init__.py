"""``torch.nn``: graphgrad's layers, losses and Module (PyTorch's contract already), plus
``functional``, ``init`` and ``utils``."""
from graphgrad.nn import *  # noqa: F401,F403
from graphgrad.nn import Module, Parameter  # noqa: F401
import importlib as _importlib

# the submodules by their full names: `from graphgrad.compat.torch.nn import functional` would find the name
# graphgrad.nn's star import bound (graphgrad's own functional) and never load PyTorch's
functional, init, parallel, utils, attention = (_importlib.import_module(f"{__name__}.{_sub}")
                                                for _sub in ("functional", "init", "parallel", "utils", "attention"))
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


def _with_legacy_reduction(cls: type) -> type:
    """``cls`` taking PyTorch's deprecated ``size_average=`` / ``reduce=`` (``nn.MSELoss(size_average=False)``
    is ``reduction='sum'``)."""

    def __init__(self, *args, size_average=None, reduce=None, **kwargs):
        if size_average is not None or reduce is not None:
            kwargs["reduction"] = functional.legacy_reduction(size_average, reduce, kwargs.get("reduction", "mean"))
        cls.__init__(self, *args, **kwargs)

    return type(cls.__name__, (cls,), {"__init__": __init__, "__module__": __name__, "__qualname__": cls.__name__,
                                       "__doc__": cls.__doc__})


for _name in ("BCELoss", "BCEWithLogitsLoss", "CosineEmbeddingLoss", "CrossEntropyLoss", "HingeEmbeddingLoss",
              "KLDivLoss", "L1Loss", "MSELoss", "MarginRankingLoss", "MultiLabelMarginLoss", "MultiLabelSoftMarginLoss",
              "MultiMarginLoss", "NLLLoss", "SmoothL1Loss", "SoftMarginLoss", "TripletMarginLoss"):
    globals()[_name] = _with_legacy_reduction(globals()[_name])
NLLLoss2d = NLLLoss  # noqa: F811  (PyTorch's old name for the same loss)
