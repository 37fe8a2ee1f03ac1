"""The ONNX backend node tests, run directly (no unittest machinery), for quick iteration.

    python -m tests.io.onnx.node_suite [REGEX ...] [--failures] [--summary] [--write-xfail]

prints PASS/FAIL per node test whose name matches (``test_relu``, ``test_reduce_sum.*``), with the
first line of each failure; ``--summary`` prints only the counts; ``--write-xfail`` rewrites
``conformance_xfail.txt`` with every failing test and a short reason (run it on the whole suite).
``results(pattern)`` returns {test name: None (passed) or the error text}. Comparisons follow onnx's
own runner (shape, dtype, ``assert_allclose`` with the case's rtol/atol).
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


def reason(error: str) -> str:
    """A short reason for the expected-failure list, from an error text."""
    text = error.splitlines()[0] if error else "fails"
    for pattern, short in _REASONS:
        match = re.search(pattern, text)
        if match:
            return short.format(*match.groups())
    return text[:150]


_REASONS = [
    (r"ONNX op (\w+) \(domain '([\w.]+)'\)", "op {0} of domain {1} is not supported"),
    (r"ONNX op (\w+) .*is not supported", "op {0} is not supported"),
    (r"casting (\w+) to (\w+) is not supported", "cast {0} -> {1}: dtype not supported"),
    (r"dtype (bfloat16|object|float8\w*|u?int[24]|float4\w*)", "dtype {0} is not supported"),
    (r"not a tensor \(sequences", "sequence/optional/map values are not supported"),
]
RANDOM_TESTS = re.compile(r"^test_(training_dropout(_default)?(_mask)?|bernoulli.*|random.*)$")
#: failures whose error text does not say why (found by looking at the case)
KNOWN_REASONS = {
    "test_loop16_seq_none": "graphgrad's output equals the expected one, but onnx 1.23's runner cannot compare a "
                            "sequence holding a 0-d tensor (it recurses into the array)",
    "test_dft_inverse": "the expected data carries NumPy's float32 FFT rounding (1.9e-7 where the exact value is "
                        "0), beyond the test's atol 1e-7",
    "test_dft_inverse_opset19": "the expected data carries NumPy's float32 FFT rounding (1.9e-7 where the exact "
                                "value is 0), beyond the test's atol 1e-7",
}


def write_xfail(res: dict, path: str) -> int:
    lines = ["# ONNX backend node tests (onnx 1.23.2) that graphgrad does not pass yet: 'name  # reason'.",
             "# Regenerate: python -m tests.io.onnx.node_suite --write-xfail (then review the diff)."]
    failing = sorted(name for name, err in res.items() if err is not None)
    for name in failing:
        why = "needs ONNX's own random numbers" if RANDOM_TESTS.match(name) else \
            KNOWN_REASONS.get(name) or reason(res[name])
        lines.append(f"{name}  # {why}")
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    return len(failing)


def main(argv=None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    failures_only = "--failures" in args
    summary = "--summary" in args or "--write-xfail" in args
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
    if "--write-xfail" in args:
        import os

        path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "conformance_xfail.txt")
        print(f"{write_xfail(res, path)} expected failures written to {path}")
    return 0


if __name__ == "__main__":
    np.seterr(all="ignore")
    sys.exit(main())
