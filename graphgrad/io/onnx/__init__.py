"""ONNX in and out: ``gg.onnx.export`` writes graphgrad models, functions and graphs as ONNX;
``gg.onnx.load`` / ``gg.onnx.to_module`` import ONNX models as graphgrad graphs or Modules (runnable
eagerly, in a Session or in ``gg.function``, and differentiable). Only this package imports ``onnx``
(install with ``pip install 'graphgrad[onnx]'``)."""
from graphgrad.io.onnx.importer import OnnxGraph, OnnxImportError, load, to_module
from graphgrad.io.onnx.export import OnnxExportError, export

__all__ = ["load", "to_module", "OnnxGraph", "OnnxImportError", "export", "OnnxExportError"]
