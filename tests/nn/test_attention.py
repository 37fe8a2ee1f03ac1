"""Attention layers: scaled_dot_product_attention against a NumPy reference, MultiheadAttention and
TransformerEncoderLayer shapes, masks (causal == explicit triu mask; key padding), float64 gradient
checks, state_dict keys and round trips, dropout only in training, and graph mode against eager."""
from __future__ import annotations

import numpy as np
import pytest

import graphgrad as gg
from tests.nn.test_recurrent import with_params

TOL = dict(rtol=1e-9, atol=1e-11)


def _np_attention(q, k, v, mask=None):
    scores = q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1])
    if mask is not None:
        scores = np.where(mask, scores, -np.inf) if mask.dtype == bool else scores + mask
    w = np.exp(scores - scores.max(-1, keepdims=True))
    w /= w.sum(-1, keepdims=True)
    return w @ v


def _causal(L, S):
    return np.triu(np.ones((L, S), dtype=bool), 1)


# ---- scaled_dot_product_attention ---------------------------------------------------------------------
def test_sdpa_matches_numpy_reference_and_masks():
    rng = np.random.default_rng(0)
    q, k, v = rng.standard_normal((2, 3, 4, 5)), rng.standard_normal((2, 3, 6, 5)), rng.standard_normal((2, 3, 6, 7))
    sdpa = gg.nn.scaled_dot_product_attention
    out = sdpa(gg.tensor(q), gg.tensor(k), gg.tensor(v))
    assert out.shape == (2, 3, 4, 7)
    np.testing.assert_allclose(out.numpy(), _np_attention(q, k, v), **TOL)
    keep = rng.random((4, 6)) > 0.3
    keep[:, 0] = True
    np.testing.assert_allclose(sdpa(q, k, v, attn_mask=gg.tensor(keep)).numpy(), _np_attention(q, k, v, keep), **TOL)
    bias = rng.standard_normal((2, 1, 4, 6))
    np.testing.assert_allclose(sdpa(q, k, v, attn_mask=gg.tensor(bias)).numpy(), _np_attention(q, k, v, bias), **TOL)
    causal = sdpa(q, k, v, is_causal=True).numpy()
    np.testing.assert_allclose(causal, _np_attention(q, k, v, np.tril(np.ones((4, 6), dtype=bool))), **TOL)
    np.testing.assert_allclose(causal, sdpa(q, k, v, attn_mask=gg.tensor(~_causal(4, 6))).numpy(), **TOL)
    np.testing.assert_allclose(sdpa(q, k, v, scale=0.3).numpy(), _np_attention(q * 0.3 * np.sqrt(5), k, v), **TOL)
    with pytest.raises(ValueError):
        sdpa(q, k, v, attn_mask=gg.tensor(keep), is_causal=True)


def test_sdpa_dropout_and_second_order_gradient():
    rng = np.random.default_rng(1)
    q, k, v = (gg.tensor(rng.standard_normal((2, 3, 4))) for _ in range(3))
    gg.manual_seed(0)
    a = gg.nn.scaled_dot_product_attention(q, k, v, dropout_p=0.5).numpy()
    b = gg.nn.scaled_dot_product_attention(q, k, v, dropout_p=0.5).numpy()
    assert not np.allclose(a, b)
    gg.check_grad(lambda q, k, v: gg.nn.scaled_dot_product_attention(q, k, v, is_causal=True), q, k, v, order=2)


# ---- MultiheadAttention -----------------------------------------------------------------------------
@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("kv_dims", [None, (6, 5)])
def test_mha_shapes(batch_first, kv_dims):
    E, h, L, S, N = 8, 2, 4, 6, 3
    kdim, vdim = kv_dims or (E, E)
    m = gg.nn.MultiheadAttention(E, h, batch_first=batch_first, kdim=kdim, vdim=vdim)
    shape = (lambda T, d: (N, T, d)) if batch_first else (lambda T, d: (T, N, d))
    q, k, v = gg.randn(*shape(L, E)), gg.randn(*shape(S, kdim)), gg.randn(*shape(S, vdim))
    out, w = m(q, k, v)
    assert out.shape == shape(L, E) and w.shape == (N, L, S)
    np.testing.assert_allclose(w.numpy().sum(-1), 1.0, rtol=1e-5)
    out, w = m(q, k, v, average_attn_weights=False)
    assert w.shape == (N, h, L, S)
    out, w = m(q, k, v, need_weights=False)
    assert out.shape == shape(L, E) and w is None
    out, w = m(gg.randn(L, E), gg.randn(S, kdim), gg.randn(S, vdim))  # unbatched
    assert out.shape == (L, E) and w.shape == (L, S)


def test_mha_parameters_match_torch_names_and_round_trip():
    m = gg.nn.MultiheadAttention(8, 2)
    assert list(m.state_dict()) == ["in_proj_weight", "in_proj_bias", "out_proj.weight", "out_proj.bias"]
    assert m.in_proj_weight.shape == (24, 8) and m.out_proj.weight.shape == (8, 8)
    assert not np.any(m.in_proj_bias.numpy()) and not np.any(m.out_proj.bias.numpy())
    kv = gg.nn.MultiheadAttention(8, 2, kdim=6, vdim=5, bias=False)
    assert list(kv.state_dict()) == ["q_proj_weight", "k_proj_weight", "v_proj_weight", "out_proj.weight"]
    assert kv.k_proj_weight.shape == (8, 6) and kv.v_proj_weight.shape == (8, 5)
    other = gg.nn.MultiheadAttention(8, 2)
    x = gg.randn(4, 2, 8)
    other.load_state_dict(m.state_dict())
    np.testing.assert_array_equal(m(x, x, x)[0].numpy(), other(x, x, x)[0].numpy())
    with pytest.raises(ValueError):
        gg.nn.MultiheadAttention(8, 3)


def test_mha_matches_per_head_reference():
    rng = np.random.default_rng(2)
    E, h, L, S, N = 6, 3, 4, 5, 2
    m = gg.nn.MultiheadAttention(E, h, batch_first=True).double()
    state = {k: rng.standard_normal(v.shape) for k, v in m.state_dict().items()}
    m.load_state_dict(state)
    q, k, v = rng.standard_normal((N, L, E)), rng.standard_normal((N, S, E)), rng.standard_normal((N, S, E))
    W, b = state["in_proj_weight"], state["in_proj_bias"]
    Q, K, V = (x @ W[i * E:(i + 1) * E].T + b[i * E:(i + 1) * E] for i, x in enumerate((q, k, v)))
    d = E // h
    heads = [_np_attention(Q[..., i * d:(i + 1) * d], K[..., i * d:(i + 1) * d], V[..., i * d:(i + 1) * d])
             for i in range(h)]
    expected = np.concatenate(heads, -1) @ state["out_proj.weight"].T + state["out_proj.bias"]
    out, _ = m(gg.tensor(q), gg.tensor(k), gg.tensor(v))
    np.testing.assert_allclose(out.numpy(), expected, **TOL)


def test_mha_causal_equals_explicit_masks():
    m = gg.nn.MultiheadAttention(8, 2).double()
    x = gg.tensor(np.random.default_rng(3).standard_normal((5, 2, 8)))
    causal_out, causal_w = m(x, x, x, is_causal=True)
    bool_out, bool_w = m(x, x, x, attn_mask=gg.tensor(_causal(5, 5)))
    float_mask = np.where(_causal(5, 5), -np.inf, 0.0)
    float_out, float_w = m(x, x, x, attn_mask=gg.tensor(float_mask))
    for o, w in ((bool_out, bool_w), (float_out, float_w)):
        np.testing.assert_allclose(o.numpy(), causal_out.numpy(), **TOL)
        np.testing.assert_allclose(w.numpy(), causal_w.numpy(), **TOL)
    assert np.all(causal_w.numpy()[:, _causal(5, 5)] == 0)
    # a 3-D mask (N * heads, L, S) repeating the causal one is the same
    mask3 = gg.tensor(np.broadcast_to(_causal(5, 5), (4, 5, 5)).copy())
    np.testing.assert_allclose(m(x, x, x, attn_mask=mask3)[0].numpy(), causal_out.numpy(), **TOL)


def test_mha_key_padding_ignores_padded_keys():
    rng = np.random.default_rng(4)
    m = gg.nn.MultiheadAttention(8, 2, batch_first=True).double()
    q, k, v = rng.standard_normal((2, 3, 8)), rng.standard_normal((2, 5, 8)), rng.standard_normal((2, 5, 8))
    pad = np.array([[False, False, False, True, True], [False, False, False, False, True]])
    out, w = m(gg.tensor(q), gg.tensor(k), gg.tensor(v), key_padding_mask=gg.tensor(pad))
    assert np.all(w.numpy()[0, :, 3:] == 0) and np.all(w.numpy()[1, :, 4:] == 0)
    k2, v2 = k.copy(), v.copy()
    k2[pad], v2[pad] = 100.0, -100.0
    out2, _ = m(gg.tensor(q), gg.tensor(k2), gg.tensor(v2), key_padding_mask=gg.tensor(pad))
    np.testing.assert_allclose(out.numpy(), out2.numpy(), **TOL)
    float_pad = gg.tensor(np.where(pad, -np.inf, 0.0))
    np.testing.assert_allclose(m(gg.tensor(q), gg.tensor(k), gg.tensor(v), key_padding_mask=float_pad)[0].numpy(),
                               out.numpy(), **TOL)
    # the first (unpadded) keys give the same result as cutting the padded keys off
    short, _ = m(gg.tensor(q[:1]), gg.tensor(k[:1, :3]), gg.tensor(v[:1, :3]))
    np.testing.assert_allclose(out.numpy()[:1], short.numpy(), **TOL)


@pytest.mark.parametrize("setup", ["self", "cross_kdim_masks"])
def test_mha_check_grad(setup):
    gg.manual_seed(0)
    rng = np.random.default_rng(5)
    if setup == "self":
        m = gg.nn.MultiheadAttention(4, 2).double()
        x = gg.tensor(rng.standard_normal((3, 2, 4)))

        def run(module, x):
            return module(x, x, x, average_attn_weights=False)

        f, params = with_params(m, run, 1)
        gg.check_grad(f, x, *params)
    else:
        m = gg.nn.MultiheadAttention(4, 2, kdim=3, vdim=2, batch_first=True).double()
        q, k, v = (gg.tensor(rng.standard_normal(s)) for s in ((2, 3, 4), (2, 4, 3), (2, 4, 2)))
        pad = gg.tensor(np.array([[False, False, False, True], [False, False, False, False]]))
        mask = gg.tensor(rng.standard_normal((3, 4)))

        def run(module, q, k, v, mask):
            return module(q, k, v, key_padding_mask=pad, attn_mask=mask)

        f, params = with_params(m, run, 4)
        gg.check_grad(f, q, k, v, mask, *params)


def _mha_masks(kind: str, N: int, h: int, L: int, rng) -> dict:
    causal = _causal(L, L)
    pad = np.zeros((N, L), bool)
    pad[0, -2:] = True
    masks = {"none": {}, "causal": {"is_causal": True}, "bool": {"attn_mask": causal},
             "float": {"attn_mask": np.where(causal, -np.inf, rng.standard_normal((L, L)))},
             "float3d": {"attn_mask": rng.standard_normal((N * h, L, L))},
             "padding": {"key_padding_mask": pad}, "bool+padding": {"attn_mask": causal, "key_padding_mask": pad},
             "float-padding": {"key_padding_mask": np.where(pad, -np.inf, 0.0)}}[kind]
    return {k: gg.tensor(v) if isinstance(v, np.ndarray) else v for k, v in masks.items()}


@pytest.mark.parametrize("kind", ["none", "causal", "bool", "float", "float3d", "padding", "bool+padding",
                                  "float-padding"])
@pytest.mark.parametrize("batch_first", [True, False])
def test_mha_fused_self_attention_matches_the_composition(kind, batch_first):
    # need_weights=False takes the fused packed-heads op, need_weights=True the composition of ops
    rng = np.random.default_rng(6)
    N, h, L, E = 2, 2, 5, 8
    m = gg.nn.MultiheadAttention(E, h, batch_first=batch_first).double()
    x_np = rng.standard_normal((N, L, E) if batch_first else (L, N, E))
    upstream = gg.tensor(rng.standard_normal(x_np.shape))
    masks = _mha_masks(kind, N, h, L, rng)
    results = []
    for need_weights in (False, True):
        x = gg.tensor(x_np, requires_grad=True)
        m.zero_grad()
        out, _ = m(x, x, x, need_weights=need_weights, **masks)
        out.backward(upstream)
        results.append([out.numpy(), x.grad.numpy()] + [p.grad.numpy() for p in m.parameters()])
    for fused, composed in zip(*results):
        np.testing.assert_allclose(fused, composed, rtol=1e-10, atol=1e-12)


def test_mha_fused_self_attention_unbatched_and_float32():
    rng = np.random.default_rng(7)
    m = gg.nn.MultiheadAttention(8, 4)
    x = gg.tensor(rng.standard_normal((5, 8)).astype(np.float32))
    fused, _ = m(x, x, x, need_weights=False, is_causal=True)
    composed, _ = m(x, x, x, is_causal=True)
    assert fused.shape == (5, 8) and fused.dtype == np.float32
    np.testing.assert_allclose(fused.numpy(), composed.numpy(), rtol=1e-5, atol=1e-6)


def test_encoder_layer_training_step_eager_equals_compiled():
    # a pre-norm GELU layer with a causal mask (the W5 block): loss and every gradient, eager and gg.function
    rng = np.random.default_rng(8)
    x_np = rng.standard_normal((2, 6, 8))
    mask = gg.tensor(np.where(_causal(6, 6), -np.inf, 0.0))
    layer = gg.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, activation="gelu", batch_first=True,
                                          norm_first=True).double()

    def step(x):
        layer.zero_grad()
        loss = (layer(x, src_mask=mask, is_causal=True) ** 2).mean()
        loss.backward()
        return [loss] + [p.grad for p in layer.parameters()]

    eager = [t.numpy().copy() for t in step(gg.tensor(x_np))]
    compiled = [t.numpy() for t in gg.function(step)(gg.tensor(x_np))]
    for e, c in zip(eager, compiled):
        np.testing.assert_allclose(c, e, rtol=1e-10, atol=1e-12)


def test_mha_dropout_only_in_training():
    m = gg.nn.MultiheadAttention(8, 2, dropout=0.5).double()
    ref = gg.nn.MultiheadAttention(8, 2).double()
    ref.load_state_dict(m.state_dict())
    x = gg.tensor(np.random.default_rng(6).standard_normal((4, 2, 8)))
    a, b = m(x, x, x)[0].numpy(), m(x, x, x)[0].numpy()
    assert not np.allclose(a, b)
    m.eval()
    np.testing.assert_allclose(m(x, x, x)[0].numpy(), ref(x, x, x)[0].numpy(), **TOL)


# ---- transformer encoder ----------------------------------------------------------------------------
TORCH_ENCODER_KEYS = ["self_attn.in_proj_weight", "self_attn.in_proj_bias", "self_attn.out_proj.weight",
                      "self_attn.out_proj.bias", "linear1.weight", "linear1.bias", "linear2.weight", "linear2.bias",
                      "norm1.weight", "norm1.bias", "norm2.weight", "norm2.bias"]


@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("activation", ["relu", "gelu"])
def test_encoder_layer_shapes_keys_and_modes(norm_first, activation):
    layer = gg.nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, activation=activation, norm_first=norm_first)
    assert list(layer.state_dict()) == TORCH_ENCODER_KEYS
    for name in ("self_attn", "linear1", "dropout", "linear2", "norm1", "norm2", "dropout1", "dropout2"):
        assert name in dict(layer.named_children())
    x = gg.randn(5, 3, 8)
    assert layer(x).shape == (5, 3, 8)
    assert not np.allclose(layer(x).numpy(), layer(x).numpy())  # dropout in training
    layer.eval()
    np.testing.assert_array_equal(layer(x).numpy(), layer(x).numpy())
    assert layer(gg.randn(5, 8)).shape == (5, 8)
    bf = gg.nn.TransformerEncoderLayer(8, 2, 16, activation=activation, batch_first=True, norm_first=norm_first).eval()
    bf.load_state_dict(layer.state_dict())
    np.testing.assert_allclose(bf(gg.swapaxes(x, 0, 1)).numpy(), gg.swapaxes(layer(x), 0, 1).numpy(), rtol=1e-5,
                               atol=1e-6)


def test_encoder_layer_causal_and_padding():
    layer = gg.nn.TransformerEncoderLayer(8, 2, dim_feedforward=16).double().eval()
    x = gg.tensor(np.random.default_rng(7).standard_normal((5, 2, 8)))
    a = layer(x, is_causal=True).numpy()
    np.testing.assert_allclose(a, layer(x, src_mask=gg.tensor(_causal(5, 5))).numpy(), **TOL)
    # causal: position t does not depend on later positions
    x2 = x.numpy().copy()
    x2[3:] += 1.0
    np.testing.assert_allclose(layer(gg.tensor(x2), is_causal=True).numpy()[:3], a[:3], **TOL)
    pad = gg.tensor(np.array([[False] * 5, [False, False, False, True, True]]))
    out = layer(x, src_key_padding_mask=pad)
    assert out.shape == (5, 2, 8) and np.all(np.isfinite(out.numpy()))


def test_encoder_layer_check_grad_eval():
    gg.manual_seed(1)
    layer = gg.nn.TransformerEncoderLayer(4, 2, dim_feedforward=6, activation="gelu", norm_first=True).double().eval()
    x = gg.tensor(np.random.default_rng(8).standard_normal((3, 2, 4)))

    def run(module, x):
        return module(x, is_causal=True)

    f, params = with_params(layer, run, 1)
    gg.check_grad(f, x, *params, max_elements=16)


def test_transformer_encoder_stacks_independent_copies():
    layer = gg.nn.TransformerEncoderLayer(8, 2, dim_feedforward=16)
    enc = gg.nn.TransformerEncoder(layer, num_layers=2, norm=gg.nn.LayerNorm(8))
    keys = list(enc.state_dict())
    assert keys[:12] == [f"layers.0.{k}" for k in TORCH_ENCODER_KEYS]
    assert keys[12:24] == [f"layers.1.{k}" for k in TORCH_ENCODER_KEYS] and keys[24:] == ["norm.weight", "norm.bias"]
    assert enc.layers[0].linear1.weight is not enc.layers[1].linear1.weight
    enc.eval()
    x = gg.randn(4, 2, 8)
    expected = enc.norm(enc.layers[1](enc.layers[0](x)))
    np.testing.assert_allclose(enc(x).numpy(), expected.numpy(), rtol=1e-6)
    x.requires_grad = True
    enc.train()
    enc(x).sum().backward()
    assert all(p.grad is not None for p in enc.parameters())


# ---- graph mode ---------------------------------------------------------------------------------------
def test_mha_graph_mode_matches_eager():
    m = gg.nn.MultiheadAttention(8, 2, batch_first=True).double()
    params = list(m.parameters())
    rng = np.random.default_rng(9)
    graph = gg.Graph()
    with graph.as_default():
        q = gg.placeholder(gg.float64, (None, 4, 8))
        kv = gg.placeholder(gg.float64, (None, 5, 8))
        pad = gg.placeholder(gg.bool, (None, 5))
        out, w = m(q, kv, kv, key_padding_mask=pad, attn_mask=gg.tensor(_causal(4, 5)))
        assert out.shape == (None, 4, 8) and w.shape == (None, 4, 5)
        loss = (out * out).sum() + (w * w).sum()
        grads = gg.gradients(loss, [q, kv] + params)
    sess = gg.Session(graph)
    for batch in (2, 3):
        qv, kvv = rng.standard_normal((batch, 4, 8)), rng.standard_normal((batch, 5, 8))
        padv = np.zeros((batch, 5), dtype=bool)
        padv[0, 4] = True
        got = sess.run([out, w] + grads, {q: qv, kv: kvv, pad: padv})
        tq, tkv = gg.tensor(qv, requires_grad=True), gg.tensor(kvv, requires_grad=True)
        e_out, e_w = m(tq, tkv, tkv, key_padding_mask=gg.tensor(padv), attn_mask=gg.tensor(_causal(4, 5)))
        e_loss = (e_out * e_out).sum() + (e_w * e_w).sum()
        expected = [e_out.numpy(), e_w.numpy()] + [g.numpy() for g in gg.grad(e_loss, [tq, tkv] + params)]
        for g, e in zip(got, expected):
            np.testing.assert_allclose(g, e, rtol=1e-9, atol=1e-10)


def test_encoder_layer_graph_mode_matches_eager():
    layer = gg.nn.TransformerEncoderLayer(8, 2, dim_feedforward=16).double().eval()
    graph = gg.Graph()
    with graph.as_default():
        x = gg.placeholder(gg.float64, (6, None, 8))
        y = layer(x, is_causal=True)
        assert y.shape == (6, None, 8)
    xv = np.random.default_rng(10).standard_normal((6, 3, 8))
    np.testing.assert_allclose(gg.Session(graph).run(y, {x: xv}), layer(gg.tensor(xv), is_causal=True).numpy(),
                               rtol=1e-9, atol=1e-10)
