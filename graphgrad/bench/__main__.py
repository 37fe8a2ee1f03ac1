"""``python -m graphgrad.bench``: the benchmark suite (as ``python -m graphgrad bench``)."""
import sys

from graphgrad.bench.suite import main

if __name__ == "__main__":  # (importing it, e.g. to document it, runs nothing)
    sys.exit(main())
