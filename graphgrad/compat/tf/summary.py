"""``tf.summary``: ``scalar``/``histogram`` summaries, ``merge_all``/``merge`` and ``FileWriter``, writing
TensorBoard event files with graphgrad's writer (``gg.train.SummaryWriter``, which needs the
``tensorboard`` package).

A summary is a fetchable structure (a named tuple of graph tensors): ``sess.run(merged)`` gives their
values, which ``FileWriter.add_summary`` writes under their tags.
"""
from __future__ import annotations

import collections
from typing import Any, Optional

import graphgrad as _gg
from graphgrad.compat.tf._common import current_scope, graph_state


def _summary_type(entries: list) -> type:
    """A named-tuple class whose instances hold one value per ``(tag, kind)`` entry."""
    kind = collections.namedtuple("Summary", [f"value{i}" for i in range(len(entries))])
    kind._entries = list(entries)
    return kind


def _make(name: str, tensor: Any, kind: str, collections_: Any) -> Any:
    tag = current_scope()[0] + name
    with _gg.get_default_graph().as_default():
        value = _gg.identity(tensor)
    summary = _summary_type([(tag, kind)])(value)
    for key in collections_ or ["summaries"]:
        graph_state()["collections"].setdefault(key, []).append(summary)
    return summary


def scalar(name: str, tensor: Any, collections: Any = None, family: Any = None) -> Any:
    """A scalar summary of ``tensor`` under the tag ``name`` (prefixed by the enclosing name scope)."""
    return _make(name, tensor, "scalar", collections)


def histogram(name: str, values: Any, collections: Any = None, family: Any = None) -> Any:
    """A histogram summary of ``values``."""
    return _make(name, values, "histogram", collections)


def image(name: str, tensor: Any, max_outputs: int = 3, collections: Any = None, family: Any = None) -> Any:
    """An image summary: accepted and fetched, but not written (the event files hold scalars, histograms
    and text)."""
    return _make(name, tensor, "image", collections)


def text(name: str, tensor: Any, collections: Any = None) -> Any:
    """A text summary (a string tensor)."""
    return _make(name, tensor, "text", collections)


def merge(inputs: list, collections: Any = None, name: Optional[str] = None) -> Any:
    """One summary holding every summary of ``inputs``."""
    entries, values = [], []
    for summary in inputs:
        entries.extend(type(summary)._entries)
        values.extend(summary)
    return _summary_type(entries)(*values) if entries else None


def merge_all(key: str = "summaries", scope: Any = None, name: Optional[str] = None) -> Any:
    """Every summary made in the default graph (``None`` if there is none)."""
    return merge(list(graph_state()["collections"].get(key, [])))


class FileWriter:
    """Writes summaries to a TensorBoard event file in ``logdir``."""

    def __init__(self, logdir: str, graph: Any = None, max_queue: int = 10, flush_secs: int = 120,
                 filename_suffix: str = "", **kwargs) -> None:
        self._writer = _gg.train.SummaryWriter(logdir, flush_secs=flush_secs, max_queue=max_queue,
                                               filename_suffix=filename_suffix)
        self.logdir = logdir

    def add_summary(self, summary: Any, global_step: Optional[int] = None) -> None:
        """Write the values of a fetched summary (``sess.run(merged)``) at ``global_step``."""
        entries = getattr(type(summary), "_entries", None)
        if entries is None:
            raise TypeError(f"add_summary: expected the value of a summary from sess.run, got {type(summary).__name__}")
        step = None if global_step is None else int(global_step)
        for (tag, kind), value in zip(entries, summary):
            if kind == "scalar":
                self._writer.add_scalar(tag, float(value), step)
            elif kind == "histogram":
                self._writer.add_histogram(tag, value, step)
            elif kind == "text":
                text = value.item() if hasattr(value, "item") and getattr(value, "ndim", 0) == 0 else value
                self._writer.add_text(tag, text.decode() if isinstance(text, bytes) else str(text), step)

    def add_run_metadata(self, run_metadata: Any, tag: str, global_step: Any = None) -> None:
        """Accepted; graphgrad records no run traces."""

    def add_graph(self, graph: Any, global_step: Any = None) -> None:
        """Accepted; the graph is not drawn in TensorBoard (use ``gg.viz.to_dot``)."""

    def flush(self) -> None:
        self._writer.flush()

    def close(self) -> None:
        self._writer.close()

    def __enter__(self) -> "FileWriter":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


__all__ = ["scalar", "histogram", "image", "text", "merge", "merge_all", "FileWriter"]
