"""Datasets and data loading."""
from graphgrad.data.datasets import make_spiral

__all__ = ["make_spiral"]
