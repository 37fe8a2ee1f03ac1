"""Write the PyTorch-exported ONNX models that ``test_torch_models.py`` imports (run by hand):

    pip install torch==2.13.0 onnxscript
    python tests/io/onnx/torch_models/generate.py

Each small model is exported by ``torch.onnx.export``, with the TorchScript exporter (opset 17) and
the dynamo exporter (opset 18) where each can export it, to ``<model>_<exporter>.onnx``. Next to it,
``<model>_<exporter>.npz`` holds the input ``x``, PyTorch's output ``y``, an upstream gradient ``gy``
and, for float inputs, PyTorch's gradient ``gx`` of ``sum(y * gy)`` with respect to ``x``; models
exported with a dynamic batch also store a second input ``x2`` of another batch size and its ``y2``.
The language models (``gpt2_dynamo``, ``llama_dynamo``: GPT-2's tanh GELU with ``Pow(x, 3.0)``, a
-3.4e38 mask fill, LLaMA's RMSNorm, rotary tables from an ``inv_freq`` buffer, grouped-query attention)
are exported with a dynamic batch and sequence length, with outputs at three shapes and PyTorch's
losses over five Adam steps of fine-tuning.
graphgrad is not imported: these files record what PyTorch exports and computes.
"""
from __future__ import annotations

import math
import os

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))


class SmallCNN(nn.Module):
    """Conv + BatchNorm + ReLU + max pool, strided conv + GELU, global mean, Linear, log-softmax."""

    def __init__(self):
        super().__init__()
        self.conv1, self.bn = nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8)
        self.conv2, self.fc = nn.Conv2d(8, 16, 3, stride=2), nn.Linear(16, 5)

    def forward(self, x):
        x = F.max_pool2d(torch.relu(self.bn(self.conv1(x))), 2)
        return torch.log_softmax(self.fc(F.gelu(self.conv2(x)).mean(dim=(2, 3))), -1)


class LSTMLanguageModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed, self.lstm, self.out = nn.Embedding(20, 8), nn.LSTM(8, 16, num_layers=2, batch_first=True), \
            nn.Linear(16, 20)

    def forward(self, x):
        return self.out(self.lstm(self.embed(x))[0])


class BiGRUClassifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.gru, self.out = nn.GRU(6, 10, batch_first=True, bidirectional=True), nn.Linear(20, 3)

    def forward(self, x):
        return self.out(self.gru(x)[0][:, -1])


class CausalTransformer(nn.Module):
    """Embedding + learned positions, two pre-norm encoder layers with a causal mask, LayerNorm, Linear."""

    def __init__(self):
        super().__init__()
        self.embed, self.pos = nn.Embedding(30, 16), nn.Parameter(torch.randn(1, 12, 16) * 0.1)
        layer = nn.TransformerEncoderLayer(16, 4, 32, dropout=0.0, batch_first=True, norm_first=True)
        self.encoder = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
        self.norm, self.out = nn.LayerNorm(16), nn.Linear(16, 30)

    def forward(self, x):
        h = self.embed(x) + self.pos[:, :x.shape[1]]
        mask = nn.Transformer.generate_square_subsequent_mask(x.shape[1])
        return self.out(self.norm(self.encoder(h, mask=mask, is_causal=True)))


class CausalSelfAttention(nn.Module):
    """GPT-style attention written with scaled_dot_product_attention."""

    def __init__(self):
        super().__init__()
        self.qkv, self.proj = nn.Linear(16, 48), nn.Linear(16, 16)

    def forward(self, x):
        b, t, c = x.shape
        q, k, v = (z.view(b, t, 4, 4).transpose(1, 2) for z in self.qkv(x).split(16, -1))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.proj(y.transpose(1, 2).reshape(b, t, c))


class MultiheadSelfAttention(nn.Module):
    def __init__(self):
        super().__init__()
        self.attention = nn.MultiheadAttention(16, 4, batch_first=True)

    def forward(self, x):
        return self.attention(x, x, x)[0]


class Upsampler(nn.Module):
    """ConvTranspose + GroupNorm + bilinear interpolation."""

    def __init__(self):
        super().__init__()
        self.up, self.norm = nn.ConvTranspose2d(4, 2, 4, stride=2, padding=1), nn.GroupNorm(2, 2)

    def forward(self, x):
        return F.interpolate(self.norm(self.up(x)), scale_factor=2, mode="bilinear", align_corners=False)


# ---- language models fine-tuned after import (dynamo exporter, dynamic batch and sequence length) ----------
class GPT2Block(nn.Module):
    def __init__(self, d, h, T):
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.c_attn, self.c_proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.fc, self.proj = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)
        self.h = h
        self.register_buffer("bias", torch.tril(torch.ones(T, T, dtype=torch.bool)).view(1, 1, T, T))

    def gelu(self, x):  # GPT-2's tanh approximation, as Hugging Face writes it
        return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))

    def forward(self, x):
        b, t, c = x.shape
        q, k, v = self.c_attn(self.ln1(x)).split(c, dim=2)
        q, k, v = (z.view(b, t, self.h, c // self.h).transpose(1, 2) for z in (q, k, v))
        att = (q @ k.transpose(-2, -1)) / torch.full([], v.size(-1) ** 0.5, dtype=x.dtype)
        mask = self.bias[:, :, :t, :t]
        att = torch.where(mask, att, torch.tensor(torch.finfo(att.dtype).min, dtype=att.dtype))
        y = (att.softmax(-1) @ v).transpose(1, 2).reshape(b, t, c)
        x = x + self.c_proj(y)
        return x + self.proj(self.gelu(self.fc(self.ln2(x))))

class GPT2(nn.Module):
    def __init__(self, vocab=32, d=16, h=4, T=16, layers=2):
        super().__init__()
        self.wte, self.wpe = nn.Embedding(vocab, d), nn.Embedding(T, d)
        self.blocks = nn.ModuleList(GPT2Block(d, h, T) for _ in range(layers))
        self.ln_f = nn.LayerNorm(d)
        self.lm_head = nn.Linear(d, vocab, bias=False)

    def forward(self, idx):
        t = idx.shape[1]
        x = self.wte(idx) + self.wpe(torch.arange(t, device=idx.device))
        for block in self.blocks:
            x = block(x)
        return self.lm_head(self.ln_f(x))

class RMSNorm(nn.Module):
    def __init__(self, d, eps=1e-6):
        super().__init__()
        self.weight, self.eps = nn.Parameter(torch.ones(d)), eps
    def forward(self, x):
        return self.weight * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps))

def rotate_half(x):
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat((-x2, x1), dim=-1)

class LlamaBlock(nn.Module):
    def __init__(self, d, h, kv):
        super().__init__()
        self.h, self.kv, self.hd = h, kv, d // h
        self.q, self.k = nn.Linear(d, d, bias=False), nn.Linear(d, kv * self.hd, bias=False)
        self.v, self.o = nn.Linear(d, kv * self.hd, bias=False), nn.Linear(d, d, bias=False)
        self.gate, self.up, self.down = nn.Linear(d, 2 * d, bias=False), nn.Linear(d, 2 * d, bias=False), nn.Linear(2 * d, d, bias=False)
        self.n1, self.n2 = RMSNorm(d), RMSNorm(d)

    def forward(self, x, cos, sin):
        b, t, _ = x.shape
        hx = self.n1(x)
        q = self.q(hx).view(b, t, self.h, self.hd).transpose(1, 2)
        k = self.k(hx).view(b, t, self.kv, self.hd).transpose(1, 2)
        v = self.v(hx).view(b, t, self.kv, self.hd).transpose(1, 2)
        q, k = q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin
        k = k.repeat_interleave(self.h // self.kv, dim=1)
        v = v.repeat_interleave(self.h // self.kv, dim=1)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.o(y.transpose(1, 2).reshape(b, t, -1))
        hx = self.n2(x)
        return x + self.down(F.silu(self.gate(hx)) * self.up(hx))

class Llama(nn.Module):
    def __init__(self, vocab=32, d=16, h=4, kv=2, layers=2, theta=10000.0):
        super().__init__()
        self.embed = nn.Embedding(vocab, d)
        self.blocks = nn.ModuleList(LlamaBlock(d, h, kv) for _ in range(layers))
        self.norm, self.lm_head = RMSNorm(d), nn.Linear(d, vocab, bias=False)
        hd = d // h
        self.register_buffer("inv_freq", 1.0 / theta ** (torch.arange(0, hd, 2).float() / hd), persistent=False)

    def forward(self, idx):
        t = idx.shape[1]
        pos = torch.arange(t, device=idx.device).float()
        freqs = torch.outer(pos, self.inv_freq)
        emb = torch.cat((freqs, freqs), dim=-1)
        cos, sin = emb.cos()[None, None], emb.sin()[None, None]
        x = self.embed(idx)
        for block in self.blocks:
            x = block(x, cos, sin)
        return self.lm_head(self.norm(x))


def _language_models():
    return {"gpt2": GPT2(), "llama": Llama()}


def _fine_tune_trajectory(model, x, targets, steps: int = 5, lr: float = 0.01) -> list:
    """PyTorch's losses over ``steps`` Adam steps of next-token cross-entropy on one batch."""
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    losses = []
    for _ in range(steps):
        optimizer.zero_grad()
        logits = model(x)
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses


def write_language_models() -> None:
    """``gpt2_dynamo`` and ``llama_dynamo``: exported with a dynamic batch and sequence length. The
    ``.npz`` holds outputs for three input shapes (``x``, ``x2``, ``x3``) and PyTorch's losses over
    five Adam steps (``losses``, lr 0.01) on ``train_x``/``train_targets``."""
    g = torch.Generator().manual_seed(2)
    for name, model in _language_models().items():
        with torch.no_grad():  # random weights everywhere (the exporter would merge equal initializers)
            for p in model.parameters():
                p.add_(torch.randn(p.shape, generator=g) * 0.1)
        model.eval()
        base = os.path.join(HERE, f"{name}_dynamo")
        x = torch.randint(0, 32, (2, 8), generator=g)
        shapes = {"idx": {0: torch.export.Dim("batch", max=64), 1: torch.export.Dim("seq", max=16)}}
        with torch.no_grad():
            torch.onnx.export(model, (x,), base + ".onnx", input_names=["x"], output_names=["y"], dynamo=True,
                              opset_version=18, dynamic_shapes=shapes)
        arrays = {"x": x.numpy()}
        with torch.no_grad():
            for key, shape in (("", (2, 8)), ("2", (3, 5)), ("3", (1, 13))):
                xi = x if not key else torch.randint(0, 32, shape, generator=g)
                arrays["x" + key], arrays["y" + key] = xi.numpy(), model(xi).numpy()
        train_x = torch.randint(0, 32, (4, 12), generator=g)
        train_targets = torch.roll(train_x, -1, dims=1)
        arrays.update(train_x=train_x.numpy(), train_targets=train_targets.numpy(),
                      losses=np.array(_fine_tune_trajectory(model, train_x, train_targets)))
        np.savez(base + ".npz", **arrays)
        print(f"wrote {os.path.basename(base)}.onnx/.npz: losses {np.round(arrays['losses'], 4)}")


# ---- a BERT-style encoder with an attention-mask input (dynamic batch and sequence length) -------------
class BertLayer(nn.Module):
    """A post-norm encoder layer as BERT's: attention with an additive mask, erf GELU."""

    def __init__(s, d=16, h=4):
        super().__init__()
        s.h, s.qkv, s.o, s.ln1 = h, nn.Linear(d, 3 * d), nn.Linear(d, d), nn.LayerNorm(d)
        s.ff1, s.ff2, s.ln2 = nn.Linear(d, 4 * d), nn.Linear(4 * d, d), nn.LayerNorm(d)
    def forward(s, x, ext):
        b,t,c = x.shape
        q,k,v = (z.view(b,t,s.h,c//s.h).transpose(1,2) for z in s.qkv(x).chunk(3,-1))
        att = (q @ k.transpose(-1,-2)) / math.sqrt(c//s.h) + ext
        y = (att.softmax(-1) @ v).transpose(1,2).reshape(b,t,c)
        x = s.ln1(x + s.o(y))
        return s.ln2(x + s.ff2(F.gelu(s.ff1(x))))
class Bert(nn.Module):
    """BERT-style: token, position (sliced from a buffer) and token-type embeddings; an attention mask
    input made additive with finfo.min; a tanh pooler over the first token."""

    def __init__(s, vocab=40, d=16, T=32):
        super().__init__()
        s.tok, s.pos, s.typ, s.ln = nn.Embedding(vocab, d), nn.Embedding(T, d), nn.Embedding(2, d), nn.LayerNorm(d)
        s.layers, s.pool = nn.ModuleList([BertLayer(d), BertLayer(d)]), nn.Linear(d, d)
        s.register_buffer("position_ids", torch.arange(T).expand(1,-1), persistent=False)
    def forward(s, input_ids, attention_mask):
        t = input_ids.shape[1]
        x = s.ln(s.tok(input_ids) + s.pos(s.position_ids[:, :t]) + s.typ(torch.zeros_like(input_ids)))
        ext = (1.0 - attention_mask[:, None, None, :].to(x.dtype)) * torch.finfo(x.dtype).min
        for l in s.layers: x = l(x, ext)
        return torch.tanh(s.pool(x[:, 0]))


def write_bert() -> None:
    """``bert/bert_dynamo.onnx``: :class:`Bert` exported by the dynamo exporter with a dynamic batch and
    sequence length for both inputs; the ``.npz`` holds inputs and PyTorch's pooled output at three shapes."""
    folder = os.path.join(HERE, "bert")
    os.makedirs(folder, exist_ok=True)
    torch.manual_seed(0)
    model = Bert().eval()
    g = torch.Generator().manual_seed(4)
    ids = torch.randint(0, 40, (2, 9), generator=g)
    mask = torch.ones(2, 9, dtype=torch.long)
    mask[1, 6:] = 0
    dims = {0: torch.export.Dim("batch", max=64), 1: torch.export.Dim("seq", max=32)}
    with torch.no_grad():
        torch.onnx.export(model, (ids, mask), os.path.join(folder, "bert_dynamo.onnx"),
                          input_names=["input_ids", "attention_mask"], output_names=["pooled"], dynamo=True,
                          opset_version=18, dynamic_shapes={"input_ids": dims, "attention_mask": dims},
                          external_data=False)
    arrays = {}
    for key, shape in (("", (2, 9)), ("2", (3, 5)), ("3", (1, 17))):
        ids = torch.randint(0, 40, shape, generator=g)
        mask = torch.ones(shape, dtype=torch.long)
        mask[0, -2:] = 0
        with torch.no_grad():
            pooled = model(ids, mask)
        arrays.update({"input_ids" + key: ids.numpy(), "attention_mask" + key: mask.numpy(),
                       "pooled" + key: pooled.numpy()})
    np.savez(os.path.join(folder, "bert_dynamo.npz"), **arrays)
    print("wrote bert/bert_dynamo.onnx/.npz")


# ---- a detection model: an SSD-lite-style network exported by PyTorch, with ONNX NMS appended -----------
class SSDLite(nn.Module):
    """A MobileNet-style backbone (conv, depthwise-separable blocks with ReLU6 and BatchNorm), SSD
    heads over a 4x4 grid with 3 anchors per cell, box decoding against fixed anchors. Returns boxes
    (B, N, 4) as corners and class scores (B, C, N), the layout ONNX NonMaxSuppression takes."""

    def __init__(self, classes: int = 3, anchors_per_cell: int = 3):
        super().__init__()

        def separable(cin, cout, stride):
            return nn.Sequential(nn.Conv2d(cin, cin, 3, stride, 1, groups=cin, bias=False), nn.BatchNorm2d(cin),
                                 nn.ReLU6(), nn.Conv2d(cin, cout, 1, bias=False), nn.BatchNorm2d(cout), nn.ReLU6())

        self.backbone = nn.Sequential(nn.Conv2d(3, 8, 3, 2, 1, bias=False), nn.BatchNorm2d(8), nn.ReLU6(),
                                      separable(8, 16, 2), separable(16, 16, 2))
        self.classes, self.a = classes, anchors_per_cell
        self.cls_head = nn.Conv2d(16, anchors_per_cell * classes, 3, padding=1)
        self.box_head = nn.Conv2d(16, anchors_per_cell * 4, 3, padding=1)
        grid = (torch.arange(4, dtype=torch.float32) + 0.5) / 4
        cy, cx = torch.meshgrid(grid, grid, indexing="ij")
        sizes = torch.tensor([0.2, 0.35, 0.5])
        anchors = torch.stack([cx[..., None].expand(4, 4, 3), cy[..., None].expand(4, 4, 3),
                               sizes.expand(4, 4, 3), sizes.expand(4, 4, 3)], -1)
        self.register_buffer("anchors", anchors.reshape(-1, 4))  # (N, 4) as (cx, cy, w, h)

    def forward(self, x):
        features = self.backbone(x)
        b = x.shape[0]
        logits = self.cls_head(features).permute(0, 2, 3, 1).reshape(b, -1, self.classes)
        deltas = self.box_head(features).permute(0, 2, 3, 1).reshape(b, -1, 4)
        centers = self.anchors[:, :2] + 0.1 * deltas[..., :2] * self.anchors[:, 2:]
        sizes = self.anchors[:, 2:] * torch.exp(0.2 * deltas[..., 2:])
        boxes = torch.cat([centers - sizes / 2, centers + sizes / 2], -1)
        return boxes, logits.softmax(-1).transpose(1, 2)


def write_detection_model() -> None:
    """``detection/ssdlite_nms.onnx``: :class:`SSDLite` exported by the dynamo exporter (dynamic
    batch), with ONNX ``NonMaxSuppression`` (10 boxes per class, IoU 0.3, score 0.3) and ``GatherND``
    appended to give the kept boxes, scores and indices. The ``.npz`` holds inputs of two batch sizes
    and onnxruntime's outputs (cross-checked against a NumPy greedy NMS over PyTorch's boxes)."""
    import onnx
    import onnxruntime
    from onnx import TensorProto, helper, numpy_helper

    folder = os.path.join(HERE, "detection")
    os.makedirs(folder, exist_ok=True)
    g = torch.Generator().manual_seed(3)
    model = SSDLite()
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.randn(p.shape, generator=g) * 0.5)
        for m in model.modules():
            if isinstance(m, nn.BatchNorm2d):
                m.running_mean.copy_(torch.randn(m.running_mean.shape, generator=g) * 0.1)
                m.running_var.copy_(torch.rand(m.running_var.shape, generator=g) + 0.5)
    model.eval()
    x = torch.randn(2, 3, 32, 32, generator=g)
    x2 = torch.randn(3, 3, 32, 32, generator=g)
    raw = os.path.join(folder, "ssdlite_raw.onnx")
    with torch.no_grad():
        torch.onnx.export(model, (x,), raw, input_names=["x"], output_names=["boxes", "scores"], dynamo=True,
                          opset_version=18, dynamic_shapes={"x": {0: torch.export.Dim("batch", max=64)}},
                          external_data=False)
    detector = onnx.load(raw)
    os.remove(raw)
    graph = detector.graph
    graph.initializer.extend([numpy_helper.from_array(np.array([10], np.int64), "nms_max_boxes"),
                              numpy_helper.from_array(np.array([0.3], np.float32), "nms_iou"),
                              numpy_helper.from_array(np.array([0.3], np.float32), "nms_score"),
                              numpy_helper.from_array(np.array([0, 2], np.int64), "batch_and_box")])
    graph.node.extend([
        helper.make_node("NonMaxSuppression", ["boxes", "scores", "nms_max_boxes", "nms_iou", "nms_score"],
                         ["selected"], name="nms"),
        helper.make_node("Gather", ["selected", "batch_and_box"], ["box_index"], axis=1, name="pick_box_index"),
        helper.make_node("GatherND", ["boxes", "box_index"], ["kept_boxes"], name="kept_boxes"),
        helper.make_node("GatherND", ["scores", "selected"], ["kept_scores"], name="kept_scores"),
    ])
    del graph.output[:]
    graph.output.extend([helper.make_tensor_value_info("selected", TensorProto.INT64, ["kept", 3]),
                         helper.make_tensor_value_info("kept_boxes", TensorProto.FLOAT, ["kept", 4]),
                         helper.make_tensor_value_info("kept_scores", TensorProto.FLOAT, ["kept"])])
    onnx.checker.check_model(detector)
    path = os.path.join(folder, "ssdlite_nms.onnx")
    onnx.save(detector, path)
    session = onnxruntime.InferenceSession(path, providers=["CPUExecutionProvider"])
    arrays = {}
    for key, xi in (("", x), ("2", x2)):
        with torch.no_grad():
            boxes, scores = model(xi)
        selected, kept_boxes, kept_scores = session.run(None, {"x": xi.numpy()})
        assert selected.tolist() == _greedy_nms(boxes.numpy(), scores.numpy(), 10, 0.3, 0.3), "NMS disagrees"
        arrays.update({"x" + key: xi.numpy(), "boxes" + key: boxes.numpy(), "scores" + key: scores.numpy(),
                       "selected" + key: selected, "kept_boxes" + key: kept_boxes, "kept_scores" + key: kept_scores})
    np.savez(os.path.join(folder, "ssdlite_nms.npz"), **arrays)
    print(f"wrote detection/ssdlite_nms.onnx/.npz: kept {len(arrays['selected'])} and {len(arrays['selected2'])} boxes")


def _greedy_nms(boxes, scores, max_boxes: int, iou_threshold: float, score_threshold: float) -> list:
    """ONNX NonMaxSuppression by its definition, in plain NumPy (corner boxes)."""
    def iou(a, b):
        x1, y1 = np.maximum(a[0], b[0]), np.maximum(a[1], b[1])
        x2, y2 = np.minimum(a[2], b[2]), np.minimum(a[3], b[3])
        inter = max(0.0, x2 - x1) * max(0.0, y2 - y1)
        union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
        return inter / union if union > 0 else 0.0

    picked = []
    for b in range(boxes.shape[0]):
        for c in range(scores.shape[1]):
            order = [i for i in np.argsort(-scores[b, c], kind="stable") if scores[b, c, i] > score_threshold]
            kept = []
            for i in order:
                if len(kept) == max_boxes:
                    break
                if all(iou(boxes[b, i], boxes[b, j]) <= iou_threshold for j in kept):
                    kept.append(i)
            picked += [[b, c, int(i)] for i in kept]
    return picked


def _models():
    g = torch.Generator().manual_seed(0)
    return {
        "cnn": (SmallCNN(), torch.randn(2, 3, 16, 16, generator=g), torch.randn(5, 3, 16, 16, generator=g)),
        "lstm": (LSTMLanguageModel(), torch.randint(0, 20, (2, 7), generator=g), None),
        "bigru": (BiGRUClassifier(), torch.randn(3, 5, 6, generator=g), None),
        "transformer": (CausalTransformer(), torch.randint(0, 30, (2, 12), generator=g), None),
        "sdpa": (CausalSelfAttention(), torch.randn(2, 6, 16, generator=g), None),
        "mha": (MultiheadSelfAttention(), torch.randn(2, 5, 16, generator=g), None),
        "upsample": (Upsampler(), torch.randn(1, 4, 5, 5, generator=g), None),
    }


def _export(model, x, x2, path: str, dynamo: bool) -> bool:
    kwargs = {"input_names": ["x"], "output_names": ["y"], "dynamo": dynamo, "opset_version": 18 if dynamo else 17}
    if x2 is not None:
        if dynamo:
            kwargs["dynamic_shapes"] = {"x": {0: torch.export.Dim("batch")}}
        else:
            kwargs["dynamic_axes"] = {"x": {0: "batch"}, "y": {0: "batch"}}
    try:
        with torch.no_grad():
            torch.onnx.export(model, (x,), path, **kwargs)
    except Exception as exc:  # noqa: BLE001 - some exporters cannot export some models: skip those
        print(f"skipped {os.path.basename(path)}: {type(exc).__name__}: {str(exc).splitlines()[0][:120]}")
        return False
    return True


def main() -> None:
    torch.manual_seed(0)
    for name, (model, x, x2) in _models().items():
        model.eval()
        for exporter, dynamo in (("ts", False), ("dynamo", True)):
            base = os.path.join(HERE, f"{name}_{exporter}")
            if not _export(model, x, x2, base + ".onnx", dynamo):
                continue
            arrays = {"x": x.numpy()}
            xg = x.clone().requires_grad_(x.is_floating_point())
            y = model(xg)
            gy = torch.randn(y.shape, generator=torch.Generator().manual_seed(1))
            arrays.update(y=y.detach().numpy(), gy=gy.numpy())
            if xg.requires_grad:
                arrays["gx"] = torch.autograd.grad(y, xg, gy)[0].numpy()
            if x2 is not None:
                arrays.update(x2=x2.numpy(), y2=model(x2).detach().numpy())
            np.savez(base + ".npz", **arrays)
            print(f"wrote {os.path.basename(base)}.onnx/.npz")
    write_language_models()
    write_detection_model()
    write_bert()


if __name__ == "__main__":
    main()
