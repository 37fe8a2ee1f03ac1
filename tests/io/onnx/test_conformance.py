"""The ONNX project's backend node tests (``onnx.backend.test.BackendTest``) with graphgrad as the
backend: every node test of the pinned onnx release runs; the ones graphgrad does not pass yet are
listed, with a reason, in ``conformance_xfail.txt`` and run as expected failures. An expected
failure that starts passing fails the run ("unexpected success"): take it off the list, so the
count only ratchets up. ``python -m tests.io.onnx.node_suite`` runs the same cases for quick work.
"""
import os
import unittest
import warnings

import pytest

onnx = pytest.importorskip("onnx")
pytest.importorskip("onnx.backend.test")
if onnx.__version__ != "1.23.2":
    pytest.skip(f"the conformance list is for onnx 1.23.2 (installed: {onnx.__version__})", allow_module_level=True)

from onnx.backend.test import BackendTest  # noqa: E402

from graphgrad.io.onnx import backend  # noqa: E402

XFAIL_FILE = os.path.join(os.path.dirname(__file__), "conformance_xfail.txt")


def expected_failures() -> dict:
    """{node test name: reason} from conformance_xfail.txt (``name  # reason`` lines)."""
    entries = {}
    with open(XFAIL_FILE, encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            name, _, reason = line.partition("#")
            entries[name.strip()] = reason.strip()
    return entries


with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    _suite = BackendTest(backend, __name__)
    _suite.include(r"^test_.*_cpu$")
    for _name in expected_failures():
        _suite.xfail(rf"^{_name}_cpu$")
    OnnxBackendNodeModelTest = _suite.test_cases["OnnxBackendNodeModelTest"]


def test_expected_failures_name_real_node_tests():
    names = {n[: -len("_cpu")] for n in dir(OnnxBackendNodeModelTest) if n.startswith("test_")}
    unknown = sorted(set(expected_failures()) - names)
    assert not unknown, f"conformance_xfail.txt lists tests that do not exist: {unknown[:10]}"


del unittest
