"""ONNX import converters: vision (being written)."""
from __future__ import annotations
