"""ONNX import converters: classical machine learning, the ``ai.onnx.ml`` domain, and ``TfIdfVectorizer``.

These ops carry their model in attributes: the trees of a forest, a label map, a pool of n-grams.
The attributes are turned into constant NumPy tables when the model is imported; what depends on
the model's input is built from graphgrad ops on those tables, so an imported model runs eagerly,
in a static graph or in a ``gg.function`` trace, with batch sizes known only at run time.

* **Trees** (``TreeEnsemble``, and the older ``TreeEnsembleRegressor``/``TreeEnsembleClassifier``
  that scikit-learn converters emit): the nodes and leaves of every tree are rows of one table, a
  leaf's row pointing to itself. Each sample holds a current row per tree, starting at the roots;
  one step looks up the row's feature, threshold and comparison (``take``), compares, and moves to
  the true or false child (``where``). After as many steps as the deepest tree, every sample sits on
  a leaf of every tree, whose weights are looked up and aggregated over the trees.
* **LabelEncoder**: a binary search of the sorted keys (``log2(len(keys))`` steps of ``take`` and
  compare), so memory does not grow with the number of keys. String tensors (NumPy object arrays)
  flow through these ops like numbers: string keys, values and class labels are supported.
* **TfIdfVectorizer**: every n-gram of the pool is compared with the shifted slices of the input
  (its last dimension must be known at import) and the matches counted.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional

import graphgrad.ops as G
from graphgrad.backend import np
from graphgrad.io.onnx.importer import const_tensor, converter

ML = "ai.onnx.ml"


# ---- elementwise and selection ------------------------------------------------------------------------------
@converter("Binarizer", domain=ML)
def binarizer(node, x):
    # a Python float is a weak scalar: the comparison happens in x's dtype, as ONNX's does
    return G.astype(x > float(node.attr("threshold", 0.0)), x.dtype)


@converter("ArrayFeatureExtractor", domain=ML)
def array_feature_extractor(node, x, indices):
    # picks along the last axis; a 1-D input gives one row (N = 1), as onnxruntime does
    picked = G.take(x, G.reshape(indices, (-1,)), axis=-1)
    return G.reshape(picked, (1, -1)) if x.ndim == 1 else picked


# ---- LabelEncoder ---------------------------------------------------------------------------------------------
# the default of each kind of values (float, integer, string): its attribute, and ONNX's default for it
_DEFAULT_ATTRS = {"f": "default_float", "i": "default_int64", "O": "default_string"}
_DEFAULTS = {"f": -0.0, "i": -1, "O": "_Unused"}


@converter("LabelEncoder", domain=ML)
def label_encoder(node, x):
    keys, values, default = _label_map(node, x)
    return _lookup(x, keys, values, default)


def _label_map(node, x) -> tuple:
    """(keys, values, default) as NumPy: the keys and values 1-D, the default 0-d of the values' dtype."""
    if node.has("classes_strings"):  # opset 1: strings <-> their position in the list
        classes = np.asarray(node.attr("classes_strings"), dtype=object)
        positions = np.arange(len(classes), dtype="int64")
        if x.dtype.kind == "O":
            return classes, positions, np.asarray(node.attr("default_int64", -1), "int64")
        return positions, classes, np.asarray(node.attr("default_string", "_Unused"), object)
    keys = _first_attr(node, (("keys_tensor", None), ("keys_floats", "float32"), ("keys_int64s", "int64"),
                              ("keys_strings", object)))
    values = _first_attr(node, (("values_tensor", None), ("values_floats", "float32"),
                                ("values_int64s", "int64"), ("values_strings", object)))
    if keys is None or values is None or len(keys) != len(values):
        raise node.error("needs one keys_* and one values_* attribute of the same length")
    kind = values.dtype.kind
    if kind not in _DEFAULTS:
        raise node.unsupported(f"values of dtype {values.dtype}")
    if node.has("default_tensor"):
        default = node.attr("default_tensor")
    else:
        default = node.attr(_DEFAULT_ATTRS[kind], _DEFAULTS[kind])
    default = np.asarray(default).reshape(-1).tolist()[0]  # a Python value: a str, not a NumPy str_
    return keys, values, np.asarray(default, dtype=values.dtype)


def _first_attr(node, choices) -> Optional[np.ndarray]:
    """The first of the attributes ``choices`` ((name, dtype) pairs) that the node has, as a 1-D array."""
    for name, dtype in choices:
        if node.has(name):
            return np.asarray(node.attr(name), dtype=dtype).reshape(-1)
    return None


def _lookup(x, keys: np.ndarray, values: np.ndarray, default: np.ndarray):
    """``values[i]`` where ``x == keys[i]``, else ``default``; a later repeated key wins, and a NaN
    key matches NaN inputs. Shapes: x (...) -> (...), in the values' dtype."""
    table = {k: v for k, v in zip(keys.tolist(), values.tolist()) if k == k}  # NaN never equals itself
    nan_keys = [v for k, v in zip(keys.tolist(), values.tolist()) if k != k]
    out = G.where(G.zeros_like(x, dtype="bool"), const_tensor(default), const_tensor(default))  # default, x's shape
    if table:
        ordered = sorted(table)
        sorted_keys = const_tensor(np.asarray(ordered, dtype=keys.dtype))
        sorted_values = const_tensor(np.asarray([table[k] for k in ordered], dtype=values.dtype))
        at = _lower_bound(sorted_keys, len(ordered), x)
        at = G.minimum(at, len(ordered) - 1)
        out = G.where(G.take(sorted_keys, at) == x, G.take(sorted_values, at), out)
    if nan_keys:
        out = G.where(G.isnan(x), const_tensor(np.asarray(nan_keys[-1], dtype=values.dtype)), out)
    return out


def _lower_bound(sorted_keys, n: int, x):
    """int64 count of ``sorted_keys`` (n of them) smaller than each element of ``x``: a branchless
    binary search, one ``take`` per halving, so it works for strings too."""
    position = G.zeros_like(x, dtype="int64")
    step = 1 << (n.bit_length() - 1)
    while step:
        candidate = position + step
        probe = G.take(sorted_keys, G.minimum(candidate, n) - 1)
        position = G.where((candidate <= n) & (probe < x), candidate, position)
        step //= 2
    return position


# ---- TfIdfVectorizer -----------------------------------------------------------------------------------------
@converter("TfIdfVectorizer")
def tfidf_vectorizer(node, x):
    """Counts of the pool's n-grams in each row of ``x`` ((C,) -> (D,), (N, C) -> (N, D), D = the
    largest of ngram_indexes + 1), weighted as ``mode`` says."""
    pool = _first_attr(node, (("pool_int64s", "int64"), ("pool_strings", object)))
    if pool is None:
        raise node.error("needs pool_int64s or pool_strings")
    columns = node.attr("ngram_indexes")
    width = max(columns) + 1
    if x.ndim > 2:
        raise node.error(f"expects an input of shape (C,) or (N, C), got {x.shape}")
    rows = G.reshape(x, (1, -1)) if x.ndim < 2 else x
    length = rows.shape[1]
    if length is None:
        raise node.error("needs the length of the input's rows when the model is imported; give the model's "
                         "inputs static shapes (load(..., input_shapes=...))")
    counts, spread = [], []
    for n, first, grams in _pool_ngrams(node, pool):
        if not node.attr("min_gram_length") <= n <= node.attr("max_gram_length"):
            continue
        count = _count_ngrams(rows, length, grams, node.attr("max_skip_count", 0) if n > 1 else 0)
        if count is not None:
            counts.append(count)
            spread.append(np.eye(width, dtype="float32")[columns[first:first + len(grams)]])
    if not counts:
        y = G.zeros_like(rows[:, :1], dtype="float32") + const_tensor(np.zeros(width, "float32"))
    else:  # scatter the n-grams' counts to their output columns
        y = G.matmul(G.concatenate(counts, 1), const_tensor(np.concatenate(spread, 0)))
    y = _tfidf_weighting(node, y, width)
    return G.reshape(y, (width,)) if x.ndim < 2 else y


def _pool_ngrams(node, pool: np.ndarray) -> list:
    """[(n, index of the first in the pool's n-gram numbering, (P, n) array of the P n-grams)] for each
    n-gram length the pool has (``ngram_counts`` gives where each length starts in the pool)."""
    starts = list(node.attr("ngram_counts")) + [len(pool)]
    out, numbered = [], 0
    for n, (begin, end) in enumerate(zip(starts[:-1], starts[1:]), start=1):
        if (end - begin) % n:
            raise node.error(f"the pool's {n}-grams ({end - begin} tokens) are not a whole number of {n}-grams")
        grams = pool[begin:end].reshape(-1, n)
        if len(grams):
            out.append((n, numbered, grams))
        numbered += len(grams)
    return out


def _count_ngrams(rows, length: int, grams: np.ndarray, max_skip: int):
    """float32 (N, P) occurrences of each of the P n-grams ``grams`` (P, n) in ``rows`` (N, length),
    with 0 to ``max_skip`` tokens skipped between consecutive tokens of an n-gram (None if no n-gram
    fits)."""
    p, n = grams.shape
    total = None
    for skip in range(max_skip + 1):
        gap = skip + 1
        starts = length - gap * (n - 1)  # n-grams that fit in a row
        if starts <= 0:
            break
        match = None
        for j in range(n):
            tokens = G.expand_dims(rows[:, j * gap:j * gap + starts], 1)  # (N, 1, starts)
            equal = tokens == const_tensor(grams[:, j].reshape(1, p, 1))
            match = equal if match is None else match & equal
        found = G.sum(G.astype(match, "float32"), 2)
        total = found if total is None else total + found
    return total


def _tfidf_weighting(node, counts, width: int):
    """TF: the counts; IDF: 0/1 presence times the weight of the output column; TFIDF: counts times it."""
    mode = node.attr("mode")
    weights = node.attr("weights")
    weights = const_tensor(np.asarray(weights if weights else np.ones(width), dtype="float32"))
    if mode == "TF":
        return counts
    if mode == "IDF":
        return G.astype(counts > 0, "float32") * weights
    if mode == "TFIDF":
        return counts * weights
    raise node.unsupported(f"mode {mode!r}")


# ---- trees ---------------------------------------------------------------------------------------------------
LEQ, LT, GTE, GT, EQ, NEQ, MEMBER = range(7)
_MODE_CODES = {"BRANCH_LEQ": LEQ, "BRANCH_LT": LT, "BRANCH_GTE": GTE, "BRANCH_GT": GT, "BRANCH_EQ": EQ,
               "BRANCH_NEQ": NEQ, "BRANCH_MEMBER": MEMBER}
_COMPARE = {LEQ: G.less_equal, LT: G.less, GTE: G.greater_equal, GT: G.greater, EQ: G.equal, NEQ: G.not_equal}
_AGGREGATES = ("AVERAGE", "SUM", "MIN", "MAX")  # TreeEnsemble's codes are the positions
_POST_TRANSFORMS = ("NONE", "SOFTMAX", "LOGISTIC", "SOFTMAX_ZERO", "PROBIT")


@dataclass
class Forest:
    """Trees as one table of R rows (interior nodes and leaves; a leaf's children are itself).

    Attributes (NumPy, one entry per row): ``feature`` (int64), ``split`` (thresholds), ``mode``
    (comparison codes LEQ...MEMBER), ``true_next``/``false_next`` (int64 rows), ``missing_true``
    (bool: a NaN feature takes the true branch), ``members`` ((R, S) sets of a MEMBER row, NaN-padded,
    or None), ``leaf_values`` ((R, K) a leaf's contribution to each of K targets), and ``roots``
    (int64, one per tree). ``nan_compares``: whether a NaN feature still goes through the comparison
    (TreeEnsemble, where NaN != split is true) rather than straight to the false branch (the older ops).
    """
    feature: np.ndarray
    split: np.ndarray
    mode: np.ndarray
    true_next: np.ndarray
    false_next: np.ndarray
    missing_true: np.ndarray
    members: Optional[np.ndarray]
    leaf_values: np.ndarray
    roots: np.ndarray
    nan_compares: bool


def _aggregated_leaves(node, rows: int, targets: int, entries: tuple, aggregate: str, dtype) -> np.ndarray:
    """(rows, targets) table of what landing on each row adds, from ``entries`` = (row, target, weight)
    arrays; MIN and MAX start from the dtype's largest/smallest value (what a target no leaf touches
    keeps, as in ONNX's reference)."""
    row, target, weight = entries
    if aggregate in ("SUM", "AVERAGE"):
        table = np.zeros((rows, targets), dtype)
        np.add.at(table, (row, target), weight)
    elif aggregate == "MIN":
        table = np.full((rows, targets), np.finfo(dtype).max, dtype)
        np.minimum.at(table, (row, target), weight)
    elif aggregate == "MAX":
        table = np.full((rows, targets), np.finfo(dtype).min, dtype)
        np.maximum.at(table, (row, target), weight)
    else:
        raise node.unsupported(f"aggregate_function {aggregate!r}")
    return table


def _is_leaf(forest: Forest) -> np.ndarray:
    rows = np.arange(len(forest.true_next))
    return (forest.true_next == rows) & (forest.false_next == rows)


def _depth(node, forest: Forest) -> int:
    """How many steps take every sample from the roots to a leaf (the deepest tree's depth)."""
    is_leaf = _is_leaf(forest)
    reached, steps = np.unique(forest.roots), 0
    while not is_leaf[reached].all():
        reached = np.unique(np.concatenate([forest.true_next[reached], forest.false_next[reached]]))
        steps += 1
        if steps > len(is_leaf):
            raise node.error("the trees have a cycle")
    return steps


def _leaf_rows(node, x, forest: Forest):
    """int64 (N, T): the leaf row each of the N samples of ``x`` (N, F) reaches in each of T trees."""
    modes = sorted(set(forest.mode[~_is_leaf(forest)].tolist()))
    columns = ("feature", "split", "mode", "true_next", "false_next", "missing_true")
    table = {name: const_tensor(getattr(forest, name)) for name in columns}
    at = G.zeros_like(x[:, :1], dtype="int64") + const_tensor(forest.roots)  # (N, T), N maybe known only at run time
    for _ in range(_depth(node, forest)):
        value = G.take_along_axis(x, G.take(table["feature"], at), 1)
        mode = G.take(table["mode"], at) if len(modes) > 1 else None
        taken = None
        for code in modes:
            if code == MEMBER:
                hit = G.any(G.expand_dims(value, -1) == G.take(const_tensor(forest.members), at, 0), -1)
            else:
                hit = _COMPARE[code](value, G.take(table["split"], at))
            taken = hit if taken is None else G.where(mode == code, hit, taken)
        nan = G.isnan(value)
        if forest.missing_true.any():
            follows = nan & G.take(table["missing_true"], at)
            taken = taken | follows if forest.nan_compares else G.where(nan, follows, taken)
        elif not forest.nan_compares and NEQ in modes:  # NaN != split would be true
            taken = taken & ~nan
        at = G.where(taken, G.take(table["true_next"], at), G.take(table["false_next"], at))
    return at


def _forest_scores(node, x, forest: Forest, aggregate: str):
    """(N, K) scores: the leaves' values aggregated over the trees (in the leaf table's dtype)."""
    if x.ndim != 2:
        raise node.error(f"expects a 2-D input (samples, features), got shape {x.shape}")
    leaves = G.take(const_tensor(forest.leaf_values), _leaf_rows(node, x, forest), 0)  # (N, T, K)
    if aggregate == "SUM":
        return G.sum(leaves, 1)
    if aggregate == "AVERAGE":
        return G.sum(leaves, 1) / len(forest.roots)
    return G.min(leaves, 1) if aggregate == "MIN" else G.max(leaves, 1)


def _post_transform(node, scores, name: str):
    """The ``post_transform`` of (N, K) scores."""
    if name == "NONE":
        return scores
    if name == "SOFTMAX":
        return G.softmax(scores, -1)
    if name == "LOGISTIC":
        return G.sigmoid(scores)
    if name == "SOFTMAX_ZERO":  # a softmax that leaves (near) zero scores at zero
        exp = G.exp(scores - G.max(scores, -1, keepdims=True))
        exp = G.where(G.abs(scores) > 1e-7, exp, scores * G.exp(-G.max(scores, -1, keepdims=True)))
        total = G.sum(exp, -1, keepdims=True)
        return G.where(total == 0, G.full_like(exp, 0.5), exp / G.where(total == 0, G.ones_like(total), total))
    if name == "PROBIT":
        return _probit(scores)
    raise node.unsupported(f"post_transform {name!r}")


def _probit(p):
    """sqrt(2) * erfinv(2p - 1), with the approximation of erfinv that onnxruntime uses (Winitzki's)."""
    x = p * 2 - 1
    log = G.log((1 - x) * (1 + x))
    a = log * 0.5 + 2 / (math.pi * 0.147)
    return G.sign(x) * G.sqrt(G.sqrt(a * a - log / 0.147) - a) * math.sqrt(2)


# ---- TreeEnsemble (ai.onnx.ml opset 5) ------------------------------------------------------------------------
@converter("TreeEnsemble", domain=ML)
def tree_ensemble(node, x):
    """(N, F) -> (N, n_targets) in x's dtype."""
    aggregate = _named(node, "aggregate_function", _AGGREGATES, 1)
    forest = _forest_v5(node, x.dtype, aggregate)
    scores = _forest_scores(node, x, forest, aggregate)
    return _post_transform(node, scores, _named(node, "post_transform", _POST_TRANSFORMS, 0))


def _named(node, attribute: str, names: tuple, default: int) -> str:
    """The name of an enumeration attribute's code (TreeEnsemble numbers what the older ops spell)."""
    code = node.attr(attribute, default)
    if not 0 <= code < len(names):
        raise node.unsupported(f"{attribute} {code}")
    return names[code]


def _forest_v5(node, dtype, aggregate: str) -> Forest:
    """The table of TreeEnsemble's attributes: its interior nodes first, then its leaves."""
    feature = np.asarray(node.attr("nodes_featureids"), "int64")
    n = len(feature)
    leaf_weights = np.asarray(node.attr("leaf_weights"), dtype).reshape(-1)
    rows = n + len(leaf_weights)
    own = np.arange(n, rows)

    def children(ids: str, to_leaf: str) -> np.ndarray:
        ids, to_leaf = np.asarray(node.attr(ids), "int64"), np.asarray(node.attr(to_leaf), bool)
        return np.concatenate([np.where(to_leaf, ids + n, ids), own])

    mode = np.asarray(node.attr("nodes_modes"), "int64").reshape(-1)
    missing = np.asarray(node.attr("nodes_missing_value_tracks_true", [0] * n), bool)
    targets = np.asarray(node.attr("leaf_targetids"), "int64")
    n_targets = node.attr("n_targets", int(targets.max()) + 1 if len(targets) else 1)
    leaf_values = _aggregated_leaves(node, rows, n_targets, (own, targets, leaf_weights), aggregate, dtype)
    return Forest(feature=np.concatenate([feature, np.zeros(len(own), "int64")]),
                  split=np.concatenate([np.asarray(node.attr("nodes_splits"), dtype).reshape(-1),
                                        np.zeros(len(own), dtype)]),
                  mode=np.concatenate([mode, np.zeros(len(own), "int64")]),
                  true_next=children("nodes_truenodeids", "nodes_trueleafs"),
                  false_next=children("nodes_falsenodeids", "nodes_falseleafs"),
                  missing_true=np.concatenate([missing, np.zeros(len(own), bool)]),
                  members=_member_sets(node, mode, rows, dtype), leaf_values=leaf_values,
                  roots=np.asarray(node.attr("tree_roots"), "int64"), nan_compares=True)


def _member_sets(node, mode: np.ndarray, rows: int, dtype) -> Optional[np.ndarray]:
    """(rows, S) the values of each MEMBER node's set, NaN-padded (``membership_values`` lists the sets
    in the order of the MEMBER nodes, each ended by a NaN); None without MEMBER nodes."""
    nodes = np.flatnonzero(mode == MEMBER)
    if not len(nodes):
        return None
    values = np.asarray(node.attr("membership_values", []), dtype).reshape(-1)
    ends = np.flatnonzero(np.isnan(values))
    if len(ends) < len(nodes):
        raise node.error(f"{len(nodes)} BRANCH_MEMBER nodes but {len(ends)} sets in membership_values")
    sets = np.split(values, ends + 1)[:len(nodes)]
    table = np.full((rows, max(len(s) for s in sets)), np.nan, dtype)  # each set keeps its NaN end: never equal
    for row, members in zip(nodes, sets):
        table[row, :len(members)] = members
    return table


# ---- TreeEnsembleRegressor, TreeEnsembleClassifier (ai.onnx.ml opsets 1 and 3) --------------------------------
@converter("TreeEnsembleRegressor", domain=ML)
def tree_ensemble_regressor(node, x):
    """(N, F) -> float32 (N, n_targets)."""
    aggregate = node.attr("aggregate_function", "SUM")
    forest = _forest_legacy(node, x.dtype, node.attr("n_targets", 1), "target_", "target_ids", aggregate)
    scores = _forest_scores(node, G.astype(x, forest.split.dtype), forest, aggregate)
    scores = _plus_base_values(node, G.astype(scores, "float32"))
    return _post_transform(node, scores, node.attr("post_transform", "NONE"))


@converter("TreeEnsembleClassifier", domain=ML)
def tree_ensemble_classifier(node, x):
    """(N, F) -> labels (N,) (int64 or strings) and float32 scores (N, classes)."""
    labels = _first_attr(node, (("classlabels_int64s", "int64"), ("classlabels_strings", object)))
    if labels is None or len(labels) < 2:
        raise node.unsupported("a classifier without at least two classlabels_int64s or classlabels_strings")
    forest = _forest_legacy(node, x.dtype, len(labels), "class_", "class_ids", "SUM")
    scores = _forest_scores(node, G.astype(x, forest.split.dtype), forest, "SUM")
    scores = _plus_base_values(node, G.astype(scores, "float32"))
    post_transform = node.attr("post_transform", "NONE")
    class_ids = set(node.attr("class_ids"))
    if len(class_ids) == 1:  # binary: the trees score one class, the other is its complement
        scored = class_ids.pop()
        positive = scores[:, scored:scored + 1]
        negative = 1 - positive if post_transform in ("NONE", "PROBIT") else -positive
        scores = G.concatenate([negative, positive, scores[:, 2:]], 1)
    scores = _post_transform(node, scores, post_transform)
    return G.take(const_tensor(labels), G.argmax(scores, 1), 0), scores


def _forest_legacy(node, x_dtype, n_targets: int, prefix: str, ids: str, aggregate: str) -> Forest:
    """The table of a TreeEnsembleRegressor/Classifier: nodes named by (tree id, node id), leaves are
    nodes of mode LEAF, and ``{prefix}treeids/nodeids/weights`` with ``ids`` give the leaves' votes.
    Thresholds are compared in float32 for integer inputs, in float64 if the input or they are."""
    tree, number = node.attr("nodes_treeids"), node.attr("nodes_nodeids")
    row_of = {(t, i): row for row, (t, i) in enumerate(zip(tree, number))}
    modes = node.attr("nodes_modes")
    unknown = set(modes) - set(_MODE_CODES) - {"LEAF"}
    if unknown:
        raise node.unsupported(f"nodes_modes {sorted(unknown)}")
    leaf = np.asarray([m == "LEAF" for m in modes])
    rows = np.arange(len(modes))

    def children(name: str) -> np.ndarray:
        return np.asarray([row if leaf[row] else row_of[tree[row], child]
                           for row, child in enumerate(node.attr(name))], "int64")

    splits = _float_attr(node, "nodes_values", len(modes))
    splits = splits.astype(np.result_type(x_dtype if x_dtype.kind == "f" else np.float32, splits.dtype))
    weights = _float_attr(node, f"{prefix}weights", len(node.attr(ids)))
    votes = np.asarray([row_of[key] for key in zip(node.attr(f"{prefix}treeids"), node.attr(f"{prefix}nodeids"))],
                       "int64").reshape(-1)
    roots = {}
    for row, t in enumerate(tree):  # a tree's root is its first node
        roots.setdefault(t, row)
    missing = node.attr("nodes_missing_value_tracks_true") or [0] * len(modes)
    return Forest(feature=np.asarray(node.attr("nodes_featureids"), "int64"), split=splits,
                  mode=np.asarray([_MODE_CODES.get(m, LEQ) for m in modes], "int64"),  # a leaf's is unused
                  true_next=np.where(leaf, rows, children("nodes_truenodeids")),
                  false_next=np.where(leaf, rows, children("nodes_falsenodeids")),
                  missing_true=np.asarray(missing, bool), members=None,
                  leaf_values=_aggregated_leaves(node, len(modes), n_targets,
                                                 (votes, np.asarray(node.attr(ids), "int64"), weights),
                                                 aggregate, weights.dtype),
                  roots=np.asarray([roots[t] for t in sorted(roots)], "int64"), nan_compares=False)


def _float_attr(node, name: str, size: int) -> np.ndarray:
    """The float attribute ``name`` (float32) or ``name_as_tensor`` (its dtype, double), else zeros."""
    if node.has(f"{name}_as_tensor"):
        return np.asarray(node.attr(f"{name}_as_tensor")).reshape(-1)
    return np.asarray(node.attr(name, [0.0] * size), "float32")


def _plus_base_values(node, scores):
    """float32 scores plus ``base_values`` (or ``base_values_as_tensor``), when given."""
    if not (node.has("base_values") or node.has("base_values_as_tensor")):
        return scores
    return scores + const_tensor(_float_attr(node, "base_values", 0).astype("float32"))
