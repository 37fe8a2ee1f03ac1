"""PyTorch-agreement tests: a committed corpus of PyTorch outputs and gradients (``corpus.npz``),
written by ``generate.py`` (run by hand with PyTorch installed) from the case table in ``cases.py``,
and checked by ``test_oracle.py`` without PyTorch."""
