"""``python -m graphgrad ...``"""
import sys

from graphgrad.cli import main

if __name__ == "__main__":  # (importing it, e.g. to document it, runs nothing)
    sys.exit(main())
