"""``torch.utils._pytree``: flattening nested lists, tuples, named tuples and dicts of leaves, as libraries
built on PyTorch use it (``tree_map`` over a batch of tensors)."""
from __future__ import annotations

from typing import Any, Callable, List, NamedTuple, Optional, Tuple


class TreeSpec(NamedTuple):
    """The structure of a tree: its node type, the node's context (dict keys, a named tuple's class) and
    the specs of its children; a leaf is ``TreeSpec(None, None, [])``."""

    type: Any
    context: Any
    children_specs: list

    @property
    def num_leaves(self) -> int:
        return 1 if self.type is None else sum(c.num_leaves for c in self.children_specs)


LeafSpec = lambda: TreeSpec(None, None, [])  # noqa: E731


def _is_namedtuple(x: Any) -> bool:
    return isinstance(x, tuple) and hasattr(type(x), "_fields")


def tree_flatten(tree: Any, is_leaf: Optional[Callable[[Any], bool]] = None) -> Tuple[List[Any], TreeSpec]:
    """The leaves of ``tree`` in order, and its structure."""
    if is_leaf is not None and is_leaf(tree):
        return [tree], LeafSpec()
    if tree is None:  # a node without children, as PyTorch's
        return [], TreeSpec(type(None), None, [])
    if isinstance(tree, dict):
        keys = list(tree)
        children = [tree_flatten(tree[k], is_leaf) for k in keys]
        return [leaf for c in children for leaf in c[0]], TreeSpec(type(tree), keys, [c[1] for c in children])
    if isinstance(tree, (list, tuple)):
        children = [tree_flatten(x, is_leaf) for x in tree]
        kind = type(tree) if _is_namedtuple(tree) else (list if isinstance(tree, list) else tuple)
        return [leaf for c in children for leaf in c[0]], TreeSpec(kind, None, [c[1] for c in children])
    return [tree], LeafSpec()


def tree_unflatten(leaves: List[Any], spec: TreeSpec) -> Any:
    """The tree of structure ``spec`` holding ``leaves``."""
    leaves = iter(leaves)

    def build(s: TreeSpec) -> Any:
        if s.type is None:
            return next(leaves)
        if s.type is type(None):
            return None
        children = [build(c) for c in s.children_specs]
        if issubclass(s.type, dict):
            return s.type(zip(s.context, children))
        if s.type in (list, tuple):
            return s.type(children)
        return s.type(*children)  # a named tuple

    return build(spec)


def tree_leaves(tree: Any, is_leaf: Optional[Callable[[Any], bool]] = None) -> List[Any]:
    return tree_flatten(tree, is_leaf)[0]


def tree_structure(tree: Any, is_leaf: Optional[Callable[[Any], bool]] = None) -> TreeSpec:
    return tree_flatten(tree, is_leaf)[1]


def tree_map(fn: Callable, tree: Any, *rests: Any, is_leaf: Optional[Callable[[Any], bool]] = None) -> Any:
    """``tree`` with ``fn`` applied to each leaf (with the matching leaves of ``rests``)."""
    leaves, spec = tree_flatten(tree, is_leaf)
    others = [tree_flatten(r, is_leaf)[0] for r in rests]
    return tree_unflatten([fn(*args) for args in zip(leaves, *others)], spec)


def tree_map_only(cls: Any, fn: Callable, tree: Any, is_leaf: Optional[Callable[[Any], bool]] = None) -> Any:
    """``tree_map`` applying ``fn`` only to leaves that are instances of ``cls``."""
    return tree_map(lambda x: fn(x) if isinstance(x, cls) else x, tree, is_leaf=is_leaf)


def tree_any(pred: Callable[[Any], bool], tree: Any) -> bool:
    return any(pred(x) for x in tree_leaves(tree))


def tree_all(pred: Callable[[Any], bool], tree: Any) -> bool:
    return all(pred(x) for x in tree_leaves(tree))
