"""The ONNX backend node tests, run directly (no unittest machinery), for quick iteration.

    python -m tests.io.onnx.node_suite [REGEX ...] [--failures] [--summary]

prints PASS/FAIL per node test whose name matches (``test_relu``, ``test_reduce_sum.*``), with the
first line of each failure; ``--summary`` prints only the counts. ``results(pattern)`` returns
{test name: None (passed) or the error text}. Comparisons follow onnx's own runner (shape, dtype,
``assert_allclose`` with the case's rtol/atol).
"""
from __future__ import annotations

import re
import sys
import warnings

import numpy as np


def cases():
    """Every node test case of the installed onnx (generated in memory)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from onnx.backend.test.loader import load_model_tests

        return load_model_tests(kind="node")


def _normalize(item):
    from onnx import TensorProto, numpy_helper

    return numpy_helper.to_array(item) if isinstance(item, TensorProto) else item


def run_case(case) -> "str | None":
    """None when graphgrad's backend reproduces every data set of ``case``, else the error text."""
    from onnx.backend.test.runner import Runner

    from graphgrad.io.onnx import backend

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            rep = backend.prepare(case.model)
            for inputs, expected in case.data_sets:
                outputs = rep.run([_normalize(x) for x in inputs])
                Runner.assert_similar_outputs([_normalize(x) for x in expected], outputs, rtol=case.rtol,
                                              atol=case.atol)
    except Exception as exc:  # noqa: BLE001 - a report of every failure is the point
        return f"{type(exc).__name__}: {exc}".strip()
    return None


def results(*patterns: str) -> dict:
    regex = [re.compile(p) for p in patterns] or [re.compile(".")]
    return {c.name: run_case(c) for c in cases() if any(r.search(c.name) for r in regex)}


def main(argv=None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    failures_only = "--failures" in args
    summary = "--summary" in args
    patterns = [a for a in args if not a.startswith("--")]
    res = results(*patterns)
    passed = sum(v is None for v in res.values())
    if not summary:
        for name, err in sorted(res.items()):
            if err is None and not failures_only:
                print(f"PASS {name}")
            elif err is not None:
                print(f"FAIL {name}: {err.splitlines()[0][:300] if err else ''}")
    print(f"{passed} passed, {len(res) - passed} failed of {len(res)}")
    return 0


if __name__ == "__main__":
    np.seterr(all="ignore")
    sys.exit(main())
