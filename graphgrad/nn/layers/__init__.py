"""Layers, one family per file."""
