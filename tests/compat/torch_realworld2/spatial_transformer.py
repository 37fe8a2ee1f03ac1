"""A spatial transformer network in the style of the PyTorch tutorial: a localization net regresses a 2x3
affine matrix (its last layer started at the identity, the bias set through .data.copy_), F.affine_grid and
F.grid_sample resample the input, and a small classifier reads the result.

The 16x16 "images" are bars at shifted places, one class per orientation; the last line printed is the
accuracy on held-out images."""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim

torch.manual_seed(0)
rng = np.random.default_rng(0)


def make(n):
    images = np.zeros((n, 1, 16, 16), np.float32)
    labels = rng.integers(0, 3, n)
    for i, k in enumerate(labels):
        r, c = rng.integers(3, 13, 2)
        if k == 0:
            images[i, 0, r, max(c - 3, 0):c + 3] = 1.0
        elif k == 1:
            images[i, 0, max(r - 3, 0):r + 3, c] = 1.0
        else:
            for d in range(-2, 3):
                images[i, 0, min(max(r + d, 0), 15), min(max(c + d, 0), 15)] = 1.0
    return torch.from_numpy(images + rng.normal(0, 0.05, images.shape).astype(np.float32)), torch.from_numpy(labels)


x_train, y_train = make(480)
x_test, y_test = make(120)
loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(x_train, y_train), batch_size=32, shuffle=True)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 8, kernel_size=3)
        self.fc1 = nn.Linear(8 * 7 * 7, 32)
        self.fc2 = nn.Linear(32, 3)
        self.localization = nn.Sequential(nn.Conv2d(1, 4, kernel_size=5), nn.MaxPool2d(2, stride=2), nn.ReLU(True))
        self.fc_loc = nn.Sequential(nn.Linear(4 * 6 * 6, 16), nn.ReLU(True), nn.Linear(16, 3 * 2))
        self.fc_loc[2].weight.data.zero_()
        self.fc_loc[2].bias.data.copy_(torch.tensor([1, 0, 0, 0, 1, 0], dtype=torch.float))

    def stn(self, x):
        theta = self.fc_loc(self.localization(x).view(-1, 4 * 6 * 6)).view(-1, 2, 3)
        grid = F.affine_grid(theta, x.size(), align_corners=False)
        return F.grid_sample(x, grid, align_corners=False)

    def forward(self, x):
        x = self.stn(x)
        x = F.relu(F.max_pool2d(self.conv1(x), 2))
        x = F.relu(self.fc1(x.view(-1, 8 * 7 * 7)))
        return F.log_softmax(self.fc2(x), dim=1)


model = Net()
optimizer = optim.Adam(model.parameters(), lr=3e-3)
for epoch in range(6):
    model.train()
    for data, target in loader:
        optimizer.zero_grad()
        loss = F.nll_loss(model(data), target)
        loss.backward()
        optimizer.step()
    print(f"epoch {epoch} loss {loss.item():.4f}")

model.eval()
with torch.no_grad():
    assert model.stn(x_test[:4]).shape == (4, 1, 16, 16)
    pred = model(x_test).max(1, keepdim=True)[1]
    correct = pred.eq(y_test.view_as(pred)).sum().item()
print("accuracy", correct / len(y_test))
