"""Write the PyTorch-exported ONNX models that ``test_torch_models.py`` imports (run by hand):

    pip install torch==2.13.0 onnxscript
    python tests/io/onnx/torch_models/generate.py

Each small model is exported by ``torch.onnx.export``, with the TorchScript exporter (opset 17) and
the dynamo exporter (opset 18) where each can export it, to ``<model>_<exporter>.onnx``. Next to it,
``<model>_<exporter>.npz`` holds the input ``x``, PyTorch's output ``y``, an upstream gradient ``gy``
and, for float inputs, PyTorch's gradient ``gx`` of ``sum(y * gy)`` with respect to ``x``; models
exported with a dynamic batch also store a second input ``x2`` of another batch size and its ``y2``.
graphgrad is not imported: these files record what PyTorch exports and computes.
"""
from __future__ import annotations

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


if __name__ == "__main__":
    main()
