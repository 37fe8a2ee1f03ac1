"""Looking up a Keras object by what a program passes for it: ``None``, a name, a saved
``{class_name, config}`` dict, an object or a function (``keras.regularizers.get``,
``keras.constraints.get``)."""
from __future__ import annotations

from typing import Any


def lookup(kind: str, what: str, identifier: Any, namespace: dict, by_name: dict) -> Any:
    """The ``what`` (e.g. "regularizer") of ``keras.<kind>`` that ``identifier`` names; classes are
    looked up in ``namespace`` (the module's globals), names in ``by_name`` (lower case)."""
    if identifier is None:
        return None
    if isinstance(identifier, dict) and "class_name" in identifier:  # a saved config
        cls = namespace.get(identifier["class_name"])
        if not isinstance(cls, type):
            raise ValueError(f"keras.{kind}: unknown class {identifier['class_name']!r}")
        return cls(**identifier.get("config", {}))
    if isinstance(identifier, str):
        key = identifier.lower()
        if key not in by_name:
            raise ValueError(f"keras.{kind}: unknown {what} {identifier!r}; known: {sorted(by_name)}")
        return by_name[key]()
    if callable(identifier):
        return identifier
    raise TypeError(f"keras.{kind}: expected a name, a {what} or a function, got {type(identifier).__name__}")
