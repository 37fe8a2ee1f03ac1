"""Facades that run programs written for other frameworks on graphgrad: ``graphgrad.compat.torch``.

They only map names and argument conventions onto graphgrad's public API; nothing is implemented a
second time.
"""
