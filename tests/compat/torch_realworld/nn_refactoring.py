"""Digit-like classification refactored step by step in the style of the PyTorch tutorial "What is torch.nn
really?": a model from plain tensors updated by hand under no_grad, then nn.Module and nn.Parameter, then a
convolutional nn.Sequential with a Lambda layer, TensorDataset/DataLoader, a wrapped loader that moves batches
to the device, and fit()/loss_batch() with SGD and momentum.

The 8x8 "images" are noisy class prototypes made here; the last line printed is the validation accuracy."""
import math

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn, optim
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
rng = np.random.default_rng(0)
prototypes = (rng.random((10, 64)) > 0.6).astype(np.float32)
labels = rng.integers(0, 10, 1200)
images = (prototypes[labels] * 0.8 + rng.random((1200, 64)) * 0.4).astype(np.float32)
x_train, y_train, x_valid, y_valid = map(torch.tensor, (images[:1000], labels[:1000], images[1000:], labels[1000:]))
n, c = x_train.shape
print(x_train.shape, y_train.min().item(), y_train.max().item())

# ---- from scratch: tensors that require grad, a hand-written log_softmax and negative log likelihood
weights = torch.randn(64, 10) / math.sqrt(64)
weights.requires_grad_()
bias = torch.zeros(10, requires_grad=True)


def log_softmax(x):
    return x - x.exp().sum(-1).log().unsqueeze(-1)


def model(xb):
    return log_softmax(xb @ weights + bias)


def nll(input, target):
    return -input[torch.arange(target.shape[0]), target].mean()


def accuracy(out, yb):
    return (torch.argmax(out, dim=1) == yb).float().mean()


bs, lr, epochs = 50, 0.5, 2
for epoch in range(epochs):
    for i in range((n - 1) // bs + 1):
        xb, yb = x_train[i * bs:i * bs + bs], y_train[i * bs:i * bs + bs]
        loss = nll(model(xb), yb)
        loss.backward()
        with torch.no_grad():
            weights -= weights.grad * lr
            bias -= bias.grad * lr
            weights.grad.zero_()
            bias.grad.zero_()
print("from scratch:", nll(model(x_valid), y_valid).item(), accuracy(model(x_valid), y_valid).item())


# ---- nn.Module with nn.Parameter, updated through model.parameters()
class Logistic(nn.Module):
    def __init__(self):
        super().__init__()
        self.weights = nn.Parameter(torch.randn(64, 10) / math.sqrt(64))
        self.bias = nn.Parameter(torch.zeros(10))

    def forward(self, xb):
        return xb @ self.weights + self.bias


model = Logistic()
loss_func = F.cross_entropy
for epoch in range(epochs):
    for i in range((n - 1) // bs + 1):
        xb, yb = x_train[i * bs:i * bs + bs], y_train[i * bs:i * bs + bs]
        loss = loss_func(model(xb), yb)
        loss.backward()
        with torch.no_grad():
            for p in model.parameters():
                p -= p.grad * lr
            model.zero_grad()
print("nn.Module:", loss_func(model(x_valid), y_valid).item())


# ---- a CNN as nn.Sequential, data through DataLoader, batches moved by a wrapping loader
class Lambda(nn.Module):
    def __init__(self, func):
        super().__init__()
        self.func = func

    def forward(self, x):
        return self.func(x)


class WrappedDataLoader:
    def __init__(self, dl, func):
        self.dl, self.func = dl, func

    def __len__(self):
        return len(self.dl)

    def __iter__(self):
        for b in self.dl:
            yield self.func(*b)


def loss_batch(model, loss_func, xb, yb, opt=None):
    loss = loss_func(model(xb), yb)
    if opt is not None:
        loss.backward()
        opt.step()
        opt.zero_grad()
    return loss.item(), len(xb)


def fit(epochs, model, loss_func, opt, train_dl, valid_dl):
    for epoch in range(epochs):
        model.train()
        for xb, yb in train_dl:
            loss_batch(model, loss_func, xb, yb, opt)
        model.eval()
        with torch.no_grad():
            losses, nums = zip(*[loss_batch(model, loss_func, xb, yb) for xb, yb in valid_dl])
        print(epoch, np.sum(np.multiply(losses, nums)) / np.sum(nums))


dev = torch.device("cuda") if torch.cuda.is_available() else torch.device("cpu")
preprocess = lambda x, y: (x.view(-1, 1, 8, 8).to(dev), y.to(dev))  # noqa: E731
train_dl = WrappedDataLoader(DataLoader(TensorDataset(x_train, y_train), batch_size=bs, shuffle=True), preprocess)
valid_dl = WrappedDataLoader(DataLoader(TensorDataset(x_valid, y_valid), batch_size=bs * 2), preprocess)
model = nn.Sequential(
    nn.Conv2d(1, 16, kernel_size=3, stride=1, padding=1), nn.ReLU(),
    nn.Conv2d(16, 16, kernel_size=3, stride=2, padding=1), nn.ReLU(),
    nn.Conv2d(16, 10, kernel_size=3, stride=2, padding=1),
    nn.AdaptiveAvgPool2d(1), Lambda(lambda x: x.view(x.size(0), -1)))
model.to(dev)
opt = optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
fit(4, model, loss_func, opt, train_dl, valid_dl)
with torch.no_grad():
    correct = sum((model(xb).argmax(1) == yb).sum().item() for xb, yb in valid_dl)
print("accuracy", f"{correct / len(y_valid):.4f}")
