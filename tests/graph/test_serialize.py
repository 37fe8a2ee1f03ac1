"""Saving and loading graphs (gg.save_graph / gg.load_graph) and gg.train.Saver."""
from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import graphgrad as gg
from graphgrad.graph import serialize

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _build():
    """A graph with placeholders, variables, constants, name scopes, control deps, a group and gradients."""
    rng = np.random.default_rng(0)
    g = gg.Graph()
    with g.as_default():
        x = gg.placeholder(gg.float32, (4, 2), name="x")
        t = gg.placeholder_with_default(np.ones((4,), np.float32), name="t")
        w = gg.Variable(rng.standard_normal((2, 3)).astype(np.float32), name="w")
        b = gg.Variable(np.zeros(3, np.float32), name="b")
        step = gg.Variable(np.int64(0), trainable=False, name="step")
        scale = gg.constant(rng.standard_normal((3,)).astype(np.float32), name="scale")
        with gg.name_scope("layer1"):
            h = gg.relu(x @ w + b)
            y = gg.sum(h * scale, axis=1)
        with gg.name_scope("extra"):
            e = gg.einsum("ij,jk->ik", x, w)
            cut = h[:, 1:3]
        loss = gg.sum((y - t) ** 2) + gg.sum(e) * 0.5 + gg.sum(cut)
        gw, gb = gg.gradients(loss, [w, b])
        update_w = w.assign_sub(gw * 0.1)
        update_b = b.assign_sub(gb * 0.1)
        with gg.control_dependencies([update_w]):
            after = gg.identity(loss)
        train = gg.group(update_w, update_b, step.assign_add(1), name="train")
    fetch = {"y": y, "loss": loss, "gw": gw, "gb": gb, "after": after}
    return g, fetch, train


def _feed():
    return np.arange(8, dtype=np.float32).reshape(4, 2) / 7.0 - 0.5


def _run_reference(g, fetch, train, named=None):
    """Outputs, then 3 training steps, then outputs and variable values (all as lists of arrays)."""
    sess = gg.Session(g)
    x = g.get_tensor_by_name("x")
    results = sess.run(fetch, {x: _feed()})
    for _ in range(3):
        sess.run(train, {x: _feed()})
    results2 = sess.run(fetch, {x: _feed()})
    values = {v.base_name: v.numpy() for v in g.variables()}
    return results, results2, values


def test_save_writes_documented_json(tmp_path):
    g, fetch, train = _build()
    path = gg.save_graph(g, str(tmp_path / "model"))
    assert path == str(tmp_path / "model.json")
    assert (tmp_path / "model.npz").exists()
    doc = json.loads((tmp_path / "model.json").read_text())
    assert doc["format"] == "graphgrad.graph" and doc["format_version"] == serialize.FORMAT_VERSION
    assert doc["weights"]["file"] == "model.npz" and doc["weights"]["format"] == "npz"
    assert len(doc["weights"]["sha256"]) == 64
    names = [n["name"] for n in doc["nodes"]]
    assert names == [n.name for n in g.get_operations()]  # creation order
    for n in doc["nodes"]:
        assert set(n) >= {"name", "op", "props", "inputs", "control_inputs", "output"}
    by = {n["name"]: n for n in doc["nodes"]}
    assert by["x"]["op"] == "Placeholder"
    assert by["x"]["props"] == {"shape": [4, 2], "dtype": {"$dtype": "float32"}}
    assert by["x"]["output"] == {"shape": [4, 2], "dtype": "float32", "requires_grad": True}
    assert by["layer1/MatMul"]["inputs"] == ["x", "w"]
    assert by["layer1/Sum"]["props"] == {"axis": 1, "keepdims": False}
    assert by["scale"]["op"] == "Const" and set(by["scale"]["props"]["value"]) == {"$array"}
    assert by["train"]["op"] == "NoOp" and by["train"]["output"] is None
    assert by["train"]["control_inputs"] == ["w/AssignSub", "b/AssignSub", "step/AssignAdd"]
    assert by[fetch["after"]._node.name]["control_inputs"] == ["w/AssignSub"]
    assert any(name.startswith("gradients/") for name in names)
    pow_node = next(n for n in doc["nodes"] if n["op"] == "Pow")
    assert pow_node["inputs"][1] == 2  # a literal input
    variables = {v["name"]: v for v in doc["variables"]}
    assert set(variables) == {"w", "b", "step"}
    assert variables["w"] == {"name": "w", "base_name": "w", "trainable": True, "requires_grad": True,
                              "dtype": "float32", "shape": [2, 3], "read_node": "w",
                              "value": variables["w"]["value"], "initial_value": variables["w"]["initial_value"]}
    assert variables["step"]["trainable"] is False and variables["step"]["dtype"] == "int64"
    with np.load(tmp_path / "model.npz") as npz:
        np.testing.assert_array_equal(npz[variables["w"]["value"]], g.variables()[0].numpy())
        assert npz[by["scale"]["props"]["value"]["$array"]].dtype == np.float32


def test_round_trip_in_process(tmp_path):
    g, fetch, train = _build()
    gg.save_graph(g, str(tmp_path / "m.json"))  # the ".json" form names the same pair of files
    g2, named = gg.load_graph(str(tmp_path / "m"))
    assert [n.name for n in g2.get_operations()] == [n.name for n in g.get_operations()]
    assert [n.op.name for n in g2.get_operations()] == [n.op.name for n in g.get_operations()]
    for a, b in zip(g.get_operations(), g2.get_operations()):
        assert [c.name for c in a.control_inputs] == [c.name for c in b.control_inputs]
        assert (a.out is None) == (b.out is None)
        if a.out is not None:
            assert a.out.shape == b.out.shape and a.out.dtype == b.out.dtype
            assert a.out.requires_grad == b.out.requires_grad
    fetch2 = {k: named[v._node.name] for k, v in fetch.items()}
    before = _run_reference(g2, fetch2, named["train"])
    reference = _run_reference(g, fetch, train)
    for got, want in zip(before[:2], reference[:2]):
        for k in want:
            np.testing.assert_array_equal(got[k], want[k])
            assert got[k].dtype == want[k].dtype
    assert before[2].keys() == reference[2].keys()
    for k in reference[2]:
        np.testing.assert_array_equal(before[2][k], reference[2][k])
    # loaded Variables keep their initial values, and the graph can be extended and differentiated
    w2 = next(v for v in g2.variables() if v.base_name == "w")
    with g2.as_default():
        w2_init = w2.initializer
        (gx,) = gg.gradients(named[fetch["loss"]._node.name], [named["x"]])
    sess = gg.Session(g2)
    sess.run(w2_init)
    assert np.array_equal(w2.numpy(), w2.initial_value)
    assert sess.run(gx, {named["x"]: _feed()}).shape == (4, 2)


_CHILD = textwrap.dedent("""
    import pickle, sys
    import numpy as np
    import graphgrad as gg
    g, named = gg.load_graph(sys.argv[1])
    with open(sys.argv[2], "rb") as f:
        names = pickle.load(f)
    sess = gg.Session(g)
    x = named["x"]
    feed = np.arange(8, dtype=np.float32).reshape(4, 2) / 7.0 - 0.5
    first = sess.run({k: named[v] for k, v in names.items()}, {x: feed})
    for _ in range(3):
        sess.run(named["train"], {x: feed})
    second = sess.run({k: named[v] for k, v in names.items()}, {x: feed})
    values = {v.base_name: v.numpy() for v in g.variables()}
    with open(sys.argv[3], "wb") as f:
        pickle.dump((first, second, values), f)
""")


def test_round_trip_in_a_fresh_process(tmp_path):
    g, fetch, train = _build()
    gg.save_graph(g, str(tmp_path / "model"))
    names_path, out_path = tmp_path / "names.pkl", tmp_path / "out.pkl"
    names_path.write_bytes(pickle.dumps({k: v._node.name for k, v in fetch.items()}))
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.run([sys.executable, "-c", _CHILD, str(tmp_path / "model"), str(names_path), str(out_path)],
                          capture_output=True, text=True, env=env, cwd=str(tmp_path), timeout=300)
    assert proc.returncode == 0, proc.stderr
    first, second, values = pickle.loads(out_path.read_bytes())
    reference = _run_reference(g, fetch, train)
    for got, want in zip((first, second), reference[:2]):
        for k in want:
            np.testing.assert_array_equal(got[k], want[k])
            assert got[k].dtype == want[k].dtype
    for k in reference[2]:
        np.testing.assert_array_equal(values[k], reference[2][k])


def test_many_op_kinds_round_trip(tmp_path):
    """Ops with tuple, dtype, key, pooling, generator and array props come back equal."""
    rng = np.random.default_rng(1)
    g = gg.Graph()
    with g.as_default():
        img = gg.placeholder(gg.float32, (2, 3, 6, 6), name="img")
        k = gg.Variable(rng.standard_normal((4, 3, 3, 3)).astype(np.float32), name="k")
        v = gg.placeholder(gg.float32, (5, 4), name="v")
        c = gg.conv2d(img, k, stride=1, padding=1)
        outs = [c, gg.max_pool2d(c, 2), gg.avg_pool2d(c, 2), gg.clip(v, -0.5, 0.5), gg.astype(v, gg.float64),
                gg.pad(v, ((1, 1), (0, 2))), v[np.array([0, 2, 2]), 1:], v[..., None, ::2], gg.cumsum(v, axis=1),
                gg.softmax(v, axis=-1), gg.transpose(v), gg.reshape(v, (2, 10)), gg.full_like(v, float("inf")),
                gg.dropout(v, 0.5, generator=gg.Generator(3)), gg.where(v > 0, v, -v), gg.tril(v, -1),
                gg.one_hot(gg.constant([1, 0, 3]), 4), gg.argmax(v, axis=0), gg.concatenate([v, v], axis=0),
                gg.max(v, axis=(0, 1), keepdims=True), v * np.float32(3.5)]
        total = sum(gg.sum(o) for o in outs if o.dtype.kind == "f" and o.shape is not None)
        outs += [t for t in gg.gradients(total, [img, k, v]) if t is not None]
    gg.save_graph(g, str(tmp_path / "ops"))
    g2, named = gg.load_graph(str(tmp_path / "ops"))
    for a, b in zip(g.get_operations(), g2.get_operations()):
        if a.op.name not in ("ReadVariable", "Assign", "Const", "DropoutMask"):  # identity-compared props
            assert a.op == b.op, a.name
    feed = {"img": rng.standard_normal((2, 3, 6, 6)).astype(np.float32),
            "v": rng.standard_normal((5, 4)).astype(np.float32)}
    want = gg.Session(g).run(outs, {g.get_tensor_by_name(n): a for n, a in feed.items()})
    got = gg.Session(g2).run([named[o._node.name] for o in outs], {named[n]: a for n, a in feed.items()})
    for o, a, b in zip(outs, want, got):
        assert a.dtype == b.dtype and np.array_equal(a, b, equal_nan=True), o._node.name


def test_encoding_of_values():
    enc = serialize._Encoder({})
    values = [None, True, 3, 2.5, "s", (1, None, (2,)), [1, 2], slice(1, None, -1), Ellipsis, np.dtype("int32"),
              np.float32(1.5), float("nan"), float("-inf"), 1 + 2j]
    encoded = [enc(v, "test") for v in values]
    json.dumps(encoded, allow_nan=False)
    assert encoded[5] == [1, None, [2]] and encoded[6] == {"$list": [1, 2]}
    dec = serialize._Decoder({}, {}, [])
    decoded = [dec(json.loads(json.dumps(e))) for e in encoded]
    for a, b in zip(values, decoded):
        assert serialize._same(a, b), (a, b)
    with pytest.raises(gg.GraphError, match="cannot serialize"):
        enc(object(), "node 'x' prop 'p'")


def test_atomic_write_keeps_old_file_on_failure(tmp_path, monkeypatch):
    g, _, _ = _build()
    path = gg.save_graph(g, str(tmp_path / "model"))
    with open(path, "rb") as fh:
        before = fh.read()

    def broken(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(serialize.os, "replace", broken)
    with g.as_default():
        gg.constant(1.0, name="new")
    with pytest.raises(OSError, match="disk full"):
        gg.save_graph(g, str(tmp_path / "model"))
    monkeypatch.undo()
    assert open(path, "rb").read() == before
    assert sorted(os.listdir(tmp_path)) == ["model.json", "model.npz"]  # no temporary files left
    gg.load_graph(path)


def test_mismatched_weights_file_is_detected(tmp_path):
    g, _, _ = _build()
    gg.save_graph(g, str(tmp_path / "a"))
    with g.as_default():
        gg.constant(2.0, name="more")
    gg.save_graph(g, str(tmp_path / "b"))
    os.replace(tmp_path / "b.npz", tmp_path / "a.npz")
    with pytest.raises(gg.GraphError, match="different saves"):
        gg.load_graph(str(tmp_path / "a"))
    with pytest.raises(gg.GraphError, match="no saved graph"):
        gg.load_graph(str(tmp_path / "missing"))


def test_unknown_shapes_round_trip(tmp_path):
    g = gg.Graph()
    with g.as_default():
        a = gg.placeholder(gg.float32, None, name="a")
        b = gg.placeholder(gg.float32, (None, 3), name="b")
        c = a * 2.0 + 1.0
        d = gg.sum(b, axis=1)
    gg.save_graph(g, str(tmp_path / "u"))
    doc = json.loads((tmp_path / "u.json").read_text())
    by = {n["name"]: n for n in doc["nodes"]}
    assert by["a"]["output"]["shape"] is None
    assert by["b"]["output"]["shape"] == [None, 3]
    g2, named = gg.load_graph(str(tmp_path / "u"))
    assert named[c._node.name].shape is None and named[d._node.name].shape == (None,)
    out = gg.Session(g2).run([named[c._node.name], named[d._node.name]],
                             {named["a"]: np.ones((2, 2), np.float32), named["b"]: np.ones((5, 3), np.float32)})
    np.testing.assert_array_equal(out[0], np.full((2, 2), 3.0, np.float32))
    np.testing.assert_array_equal(out[1], np.full((5,), 3.0, np.float32))


# ---- Saver ----------------------------------------------------------------------------------------------
def test_saver_save_and_restore(tmp_path):
    g, fetch, train = _build()
    sess = gg.Session(g)
    x = g.get_tensor_by_name("x")
    sess.run(train, {x: _feed()})
    saver = gg.train.Saver()
    path = saver.save(sess, str(tmp_path / "ckpt" / "model"))
    assert path == str(tmp_path / "ckpt" / "model.json") and os.path.exists(path)
    saved = {v.base_name: v.numpy().copy() for v in g.variables()}
    want = sess.run(fetch["loss"], {x: _feed()})
    for _ in range(3):
        sess.run(train, {x: _feed()})
    assert sess.run(fetch["loss"], {x: _feed()}) != want
    saver.restore(sess, path)
    for v in g.variables():
        np.testing.assert_array_equal(v.numpy(), saved[v.base_name])
    assert sess.run(fetch["loss"], {x: _feed()}) == want
    # a rebuilt graph (same code, fresh variables) restores by name too
    g2, fetch2, _ = _build()
    sess2 = gg.Session(g2)
    gg.train.Saver().restore(sess2, str(tmp_path / "ckpt" / "model"))
    assert sess2.run(fetch2["loss"], {g2.get_tensor_by_name("x"): _feed()}) == want


def test_saver_var_list_restores_only_those(tmp_path):
    g, _, train = _build()
    sess = gg.Session(g)
    w = next(v for v in g.variables() if v.base_name == "w")
    b = next(v for v in g.variables() if v.base_name == "b")
    path = gg.train.Saver().save(sess, str(tmp_path / "m"))
    w_saved, b_saved = w.numpy().copy(), b.numpy().copy()
    sess.run(train, {g.get_tensor_by_name("x"): _feed()})
    gg.train.Saver([w]).restore(sess, path)
    np.testing.assert_array_equal(w.numpy(), w_saved)
    assert not np.array_equal(b.numpy(), b_saved)


def test_saver_errors_list_missing_unexpected_and_shapes(tmp_path):
    g, _, _ = _build()
    path = gg.train.Saver().save(gg.Session(g), str(tmp_path / "m"))
    other = gg.Graph()
    with other.as_default():
        x = gg.placeholder(gg.float32, (4, 2), name="x")
        w = gg.Variable(np.zeros((2, 5), np.float32), name="w")  # wrong shape
        v = gg.Variable(np.zeros(3, np.float32), name="v")  # not saved
        y = x @ w + gg.sum(v)
    before = w.numpy().copy()
    with pytest.raises(gg.GraphError) as info:
        gg.train.Saver().restore(gg.Session(other), path)
    message = str(info.value)
    assert "missing (no saved value): ['v']" in message
    assert "unexpected" in message and "'b'" in message and "'step'" in message
    assert "w: saved (2, 3), variable (2, 5)" in message
    np.testing.assert_array_equal(w.numpy(), before)  # nothing changed
    with pytest.raises(gg.GraphError, match="shape mismatch"):
        gg.train.Saver([w]).restore(gg.Session(other), path)
    with pytest.raises(TypeError):
        gg.train.Saver([y])


def test_same_base_names_and_unused_variables(tmp_path):
    g = gg.Graph()
    with g.as_default():
        a = gg.Variable(np.ones(2, np.float32), name="w")
        b = gg.Variable(np.full(2, 2.0, np.float32), name="w")
        unused = gg.Variable(np.zeros(3), name="unused")  # noqa: F841  (kept alive: graphs hold variables weakly)
        y = a + b
    gg.save_graph(g, str(tmp_path / "d"))
    doc = json.loads((tmp_path / "d.json").read_text())
    assert [v["name"] for v in doc["variables"]] == ["w", "w_1", "unused"]
    assert [v["read_node"] for v in doc["variables"]] == ["w", "w_1", None]
    g2, named = gg.load_graph(str(tmp_path / "d"))
    import gc

    gc.collect()
    assert [v.base_name for v in g2.variables()] == ["w", "w", "unused"]
    np.testing.assert_array_equal(gg.Session(g2).run(named[y._node.name]), np.full(2, 3.0, np.float32))
    gg.train.Saver().restore(gg.Session(g2), str(tmp_path / "d"))  # every name matches
