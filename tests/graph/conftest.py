"""What the graph tests share: ``g``, a fresh graph that is the default graph during the test."""
import pytest

import graphgrad as gg


@pytest.fixture
def g():
    graph = gg.Graph()
    with graph.as_default():
        yield graph
