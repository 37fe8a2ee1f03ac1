"""Differentially private SGD from per-sample gradients, in the style of the PyTorch tutorials on torch.func:
the loss of one sample written with functional_call, vmap(grad(...), in_dims=(None, None, 0, 0)) for the
per-sample gradients of a batch, each clipped to a norm, summed, noised and averaged, the parameters updated
as a dict of tensors and loaded back into the module with load_state_dict.

The data are three Gaussian blobs; the last line printed is the test accuracy."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.func import functional_call, grad, vmap

torch.manual_seed(0)


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(2, 16)
        self.fc2 = nn.Linear(16, 3)
        self.register_buffer("input_scale", torch.tensor(0.5))

    def forward(self, x):
        return self.fc2(torch.tanh(self.fc1(x * self.input_scale)))


def blobs(n):
    centers = torch.tensor([[2.0, 0.0], [-1.0, 1.7], [-1.0, -1.7]])
    labels = torch.randint(0, 3, (n,))
    return centers[labels] + 0.5 * torch.randn(n, 2), labels


model = MLP()
x_train, y_train = blobs(600)
x_test, y_test = blobs(300)
params = {k: v.detach() for k, v in model.named_parameters()}
buffers = {k: v.detach() for k, v in model.named_buffers()}


def compute_loss(params, buffers, sample, target):
    predictions = functional_call(model, (params, buffers), (sample.unsqueeze(0),))
    return F.cross_entropy(predictions, target.unsqueeze(0))


per_sample_grads = vmap(grad(compute_loss), in_dims=(None, None, 0, 0))
max_norm, noise_multiplier, lr, batch_size = 1.0, 0.5, 0.5, 50
for epoch in range(4):
    order = torch.randperm(len(x_train))
    for start in range(0, len(order), batch_size):
        idx = order[start:start + batch_size]
        grads = per_sample_grads(params, buffers, x_train[idx], y_train[idx])
        norms = torch.sqrt(sum(g.flatten(1).pow(2).sum(1) for g in grads.values()))
        factors = (max_norm / (norms + 1e-6)).clamp(max=1.0)
        with torch.no_grad():
            for name, g in grads.items():
                clipped = torch.einsum("i,i...->...", factors, g)
                noisy = clipped + noise_multiplier * max_norm * torch.randn_like(clipped)
                params[name] = params[name] - lr * noisy / len(idx)
    with torch.no_grad():
        loss = F.cross_entropy(functional_call(model, (params, buffers), (x_train,)), y_train)
    print(f"epoch {epoch} training loss {loss.item():.4f}")

model.load_state_dict({**params, **buffers})
model.eval()
with torch.inference_mode():
    accuracy = (model(x_test).argmax(dim=1) == y_test).float().mean().item()
print("accuracy", f"{accuracy:.4f}")
