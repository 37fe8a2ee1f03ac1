"""Neural-network building blocks: Module, Parameter, layers, losses, initializers.

Each family module lists its public names in ``__all__``; they are all re-exported here
(``gg.nn.Linear``, ``gg.nn.CrossEntropyLoss``...).
"""
import importlib as _importlib

from graphgrad.nn.module import Module
from graphgrad.nn.parameter import Buffer, Parameter

#: The modules whose public names make up ``gg.nn``.
FAMILIES = ("layers.container", "layers.linear", "layers.activation", "layers.activation_more", "layers.conv",
            "layers.conv_lazy", "layers.pooling", "layers.padding", "layers.upsampling", "layers.fold", "layers.norm",
            "layers.norm_more",
            "layers.dropout", "layers.embedding", "layers.recurrent", "layers.attention", "losses",
            "regularizers", "rnn_utils", "layers.activation_extra", "losses_more",
            "layers.transformer", "layers.aliases", "layers.adaptive")

__all__ = ["Module", "Parameter", "Buffer", "init", "functional"]
for _family in FAMILIES:
    try:
        _module = _importlib.import_module(f"graphgrad.nn.{_family}")
    except ModuleNotFoundError as _exc:  # families are being written; see FAMILIES
        if _exc.name != f"graphgrad.nn.{_family}":
            raise
        continue
    for _name in _module.__all__:
        globals()[_name] = getattr(_module, _name)
        __all__.append(_name)

for _sub in ("init", "functional"):
    try:
        globals()[_sub] = _importlib.import_module(f"graphgrad.nn.{_sub}")
    except ModuleNotFoundError as _exc:
        if _exc.name != f"graphgrad.nn.{_sub}":
            raise
