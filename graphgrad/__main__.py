"""``python -m graphgrad ...``"""
import sys

from graphgrad.cli import main

sys.exit(main())
