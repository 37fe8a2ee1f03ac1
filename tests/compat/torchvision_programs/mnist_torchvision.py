"""A PyTorch MNIST program in the usual form: torchvision datasets and transforms, a DataLoader, a
small CNN, train and test loops. Reads MNIST's IDX files from the folder given as argv[1] (the
torchvision layout, ROOT/MNIST/raw); prints ``accuracy <test accuracy>`` last."""
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torch.optim.lr_scheduler import StepLR
from torchvision import datasets, transforms


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 16, 3, 1)
        self.conv2 = nn.Conv2d(16, 32, 3, 1)
        self.dropout = nn.Dropout(0.25)
        self.fc1 = nn.Linear(32 * 12 * 12, 64)
        self.fc2 = nn.Linear(64, 10)

    def forward(self, x):
        x = F.relu(self.conv1(x))
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        x = self.dropout(torch.flatten(x, 1))
        return F.log_softmax(self.fc2(F.relu(self.fc1(x))), dim=1)


def train(model, device, loader, optimizer):
    model.train()
    for data, target in loader:
        data, target = data.to(device), target.to(device)
        optimizer.zero_grad()
        loss = F.nll_loss(model(data), target)
        loss.backward()
        optimizer.step()


def test(model, device, loader):
    model.eval()
    correct = 0
    with torch.no_grad():
        for data, target in loader:
            output = model(data.to(device))
            correct += output.argmax(dim=1, keepdim=True).eq(target.to(device).view_as(output.argmax(dim=1, keepdim=True))).sum().item()
    return correct / len(loader.dataset)


def main():
    torch.manual_seed(1)
    device = torch.device("cpu")
    transform = transforms.Compose([transforms.ToTensor(), transforms.Normalize((0.1307,), (0.3081,))])
    train_set = datasets.MNIST(sys.argv[1], train=True, download=False, transform=transform)
    test_set = datasets.MNIST(sys.argv[1], train=False, transform=transform)
    train_loader = torch.utils.data.DataLoader(train_set, batch_size=32, shuffle=True)
    test_loader = torch.utils.data.DataLoader(test_set, batch_size=200)
    model = Net().to(device)
    optimizer = optim.Adadelta(model.parameters(), lr=1.0)
    scheduler = StepLR(optimizer, step_size=1, gamma=0.7)
    for epoch in range(3):
        train(model, device, train_loader, optimizer)
        scheduler.step()
    print("accuracy", test(model, device, test_loader))


if __name__ == "__main__":
    main()
