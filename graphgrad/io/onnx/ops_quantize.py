"""ONNX import converters: quantize (being written)."""
from __future__ import annotations
