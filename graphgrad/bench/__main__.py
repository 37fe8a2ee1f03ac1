"""``python -m graphgrad.bench``: the benchmark suite (as ``python -m graphgrad bench``)."""
import sys

from graphgrad.bench.suite import main

sys.exit(main())
