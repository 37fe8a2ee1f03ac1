"""``torch.onnx``: ``export`` writes a module as ONNX through graphgrad's exporter (``gg.onnx.export``):
the module is traced on inputs shaped like ``args``, in its current mode (call ``model.eval()`` first,
as PyTorch's documentation says); ``dynamic_axes`` names the dimensions left free."""
from __future__ import annotations

from typing import Any, Optional, Sequence

import graphgrad as _gg


def export(model: Any, args: Any, f: Any = None, export_params: bool = True, verbose: Any = False,
           training: Any = None, input_names: Optional[Sequence[str]] = None,
           output_names: Optional[Sequence[str]] = None, operator_export_type: Any = None,
           opset_version: Optional[int] = None, do_constant_folding: bool = True,
           dynamic_axes: Optional[dict] = None, keep_initializers_as_inputs: Any = None,
           custom_opsets: Any = None, export_modules_as_functions: Any = False, autograd_inlining: Any = True,
           dynamo: bool = False, **kwargs: Any):
    """Write ``model`` (an ``nn.Module``) called on ``args`` (a tensor or a tuple of them) to ``f`` (a path)
    as ONNX; returns the ``onnx.ModelProto``. ``export_params=False`` is not supported (the weights are
    always written)."""
    if not export_params:
        raise ValueError("torch.onnx.export: export_params=False is not supported; graphgrad writes the weights")
    example = tuple(args) if isinstance(args, (tuple, list)) else (args,)
    if example and isinstance(example[-1], dict):  # PyTorch's trailing kwargs dict: empty ones only
        if example[-1]:
            raise ValueError("torch.onnx.export: keyword inputs (a trailing dict in args) are not supported")
        example = example[:-1]
    return _gg.onnx.export(model, f, example if len(example) != 1 else example[0], input_names=input_names,
                           output_names=output_names, dynamic_axes=dynamic_axes, opset=opset_version)


def is_in_onnx_export() -> bool:
    return False


__all__ = ["export", "is_in_onnx_export"]
