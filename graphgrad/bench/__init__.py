"""Benchmarks of graphgrad against PyTorch (and NumPy by hand): the workloads W1..W6 of BENCHMARKS.md,
interleaved timing, whole-process memory and start-up, and the ``python -m graphgrad bench`` suite.

``timing`` has the interleaved ``time_steps``; ``workloads`` the models and steps, written once for
both frameworks; ``process`` the peak-RSS and first-step measurements; ``suite`` the command. PyTorch
is optional and only imported inside functions.
"""
