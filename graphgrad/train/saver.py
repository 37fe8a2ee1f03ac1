"""Saver: save a session's graph and Variable values to disk, and restore the values later.

``Saver().save(sess, "ckpt/model")`` writes ``ckpt/model.json`` (the graph, see
``docs/graph-format.md``) and ``ckpt/model.npz`` (values); ``restore(sess, "ckpt/model")`` loads the
saved values into the Variables of ``sess.graph``, matched by name (a variable's name is the name of
its read node in the graph, e.g. ``"layer1/w"``). ``gg.load_graph`` rebuilds the whole graph instead.
"""
from __future__ import annotations

from typing import Any, Optional

from graphgrad.errors import GraphError
from graphgrad.graph.serialize import graph_paths, read_saved_variables, save_graph, variable_names


class Saver:
    """Saves and restores Variables (TensorFlow 1's ``tf.train.Saver``).

    Args:
        var_list: the Variables that ``restore`` loads (a list; each is named by its name in the
            graph); default every Variable of the session's graph. ``save`` always writes the whole
            graph with every Variable's value, so that ``gg.load_graph`` can rebuild it.

    Examples:
        >>> saver = gg.train.Saver()
        >>> path = saver.save(sess, "/tmp/ckpt/model")   # '/tmp/ckpt/model.json' (+ model.npz)
        >>> saver.restore(sess, "/tmp/ckpt/model")
    """

    def __init__(self, var_list: Any = None) -> None:
        if var_list is not None and not isinstance(var_list, (list, tuple)):
            raise TypeError(f"Saver: var_list must be a list of Variables, got {type(var_list).__name__}")
        for v in var_list or ():
            if not getattr(v, "is_variable", False):
                raise TypeError(f"Saver: var_list must hold Variables, got {type(v).__name__}")
        self.var_list = None if var_list is None else list(var_list)

    def _named(self, graph) -> dict:
        """``{name: Variable}`` of the Variables this saver handles, named as in ``graph``."""
        names = variable_names(graph)
        variables = graph.variables() if self.var_list is None else list(self.var_list)
        out = {}
        for v in variables:
            name = names.get(id(v))
            if name is None:
                name = variable_names(graph, [v])[id(v)]
            out[name] = v
        return out

    def save(self, sess, path: str) -> str:
        """Write ``sess.graph`` and its Variables' values to ``path`` (``path.json`` + ``path.npz``,
        atomically). Returns the JSON file's path."""
        graph = sess.graph
        named = self._named(graph)
        saved = set(variable_names(graph).values())
        extra = sorted(set(named) - saved)
        if extra:
            raise GraphError(f"Saver.save: variables {extra} are not used in the session's graph, so they "
                             "cannot be saved with it")
        return save_graph(graph, path)

    def restore(self, sess, path: str, strict: Optional[bool] = None) -> None:
        """Load the values saved at ``path`` into this saver's Variables, matched by name.

        Raises ``GraphError`` listing every missing name (a Variable with no saved value), every
        unexpected name (a saved value with no Variable; only when ``strict``, the default when the
        saver handles every Variable of the graph) and every shape mismatch, before changing anything.
        """
        json_path, _ = graph_paths(path)
        saved = read_saved_variables(path)
        named = self._named(sess.graph)
        strict = self.var_list is None if strict is None else strict
        missing = [n for n in named if n not in saved]
        unexpected = [n for n in saved if n not in named] if strict else []
        mismatched = [f"{n}: saved {tuple(saved[n][0].shape)}, variable {tuple(v.shape)}"
                      for n, v in named.items() if n in saved and tuple(saved[n][0].shape) != tuple(v.shape)]
        problems = []
        if missing:
            problems.append(f"missing (no saved value): {missing}")
        if unexpected:
            problems.append(f"unexpected (saved, but no such variable): {unexpected}")
        if mismatched:
            problems.append("shape mismatch: " + "; ".join(mismatched))
        if problems:
            raise GraphError(f"Saver.restore from {json_path!r} failed:\n  " + "\n  ".join(problems)
                             + f"\n  saved variables: {sorted(saved)}\n  graph variables: {sorted(named)}")
        for name, v in named.items():
            v.load(saved[name][0])

    def __repr__(self) -> str:
        return f"<gg.train.Saver var_list={'all' if self.var_list is None else len(self.var_list)}>"
