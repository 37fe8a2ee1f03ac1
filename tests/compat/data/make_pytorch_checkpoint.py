"""Write pytorch_checkpoint.pt with real PyTorch (run once: ``python make_pytorch_checkpoint.py``); the
facade's torch.load test reads it and checks the values below, which it knows without PyTorch."""
import collections
import os

import torch

HERE = os.path.dirname(os.path.abspath(__file__))


def contents() -> dict:
    base = torch.arange(24, dtype=torch.float32).reshape(4, 6)
    linear = torch.nn.Linear(3, 2)
    with torch.no_grad():
        linear.weight.copy_(torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]))
        linear.bias.copy_(torch.tensor([0.5, -0.5]))
    return {
        "epoch": 7, "name": "run-1", "losses": [1.5, 0.75], "nested": {"lr": 0.01, "betas": (0.9, 0.999)},
        "model": linear.state_dict(),
        "param": torch.nn.Parameter(torch.tensor([1.0, -1.0])),
        "view": base[1:3, ::2],          # a strided view: offset 6, strides (6, 2)
        "transposed": base.t(),           # the same storage, transposed
        "scalar": torch.tensor(3.25, dtype=torch.float64),
        "half": torch.tensor([0.5, 2.0], dtype=torch.float16),
        "bf16": torch.tensor([1.5, -2.0], dtype=torch.bfloat16),
        "ints": torch.tensor([1, 2, 3], dtype=torch.int64),
        "mask": torch.tensor([True, False]),
        "bytes": torch.tensor([0, 255], dtype=torch.uint8),
        "ordered": collections.OrderedDict([("b", torch.ones(1)), ("a", torch.zeros(1))]),
    }


if __name__ == "__main__":
    torch.save(contents(), os.path.join(HERE, "pytorch_checkpoint.pt"))
