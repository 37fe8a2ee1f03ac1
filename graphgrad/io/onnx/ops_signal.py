"""ONNX import converters: signal (being written)."""
from __future__ import annotations
