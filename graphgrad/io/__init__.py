"""Input/output: ``gg.save`` / ``gg.load`` (safetensors or npz, atomic) and training checkpoints
(``gg.save_checkpoint`` / ``gg.load_checkpoint``). See :mod:`graphgrad.io.checkpoint` for the
on-disk layout."""
from graphgrad.io.checkpoint import load, load_checkpoint, save, save_checkpoint

__all__ = ["save", "load", "save_checkpoint", "load_checkpoint"]
