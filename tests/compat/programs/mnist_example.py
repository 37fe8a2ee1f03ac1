# PyTorch's examples/mnist/main.py (Net, train, test, Adadelta + StepLR, torch.save of the
# state_dict), as its authors write it, on synthetic 28x28 digits (a class-dependent stroke on
# noise) so it runs offline in seconds. Runs under real PyTorch and, unchanged, on graphgrad.compat.torch.
import os
import tempfile

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torch.optim.lr_scheduler import StepLR
from torch.utils.data import DataLoader, TensorDataset


class Net(nn.Module):
    def __init__(self):
        super(Net, self).__init__()
        self.conv1 = nn.Conv2d(1, 32, 3, 1)
        self.conv2 = nn.Conv2d(32, 64, 3, 1)
        self.dropout1 = nn.Dropout(0.25)
        self.dropout2 = nn.Dropout(0.5)
        self.fc1 = nn.Linear(9216, 128)
        self.fc2 = nn.Linear(128, 10)

    def forward(self, x):
        x = self.conv1(x)
        x = F.relu(x)
        x = self.conv2(x)
        x = F.relu(x)
        x = F.max_pool2d(x, 2)
        x = self.dropout1(x)
        x = torch.flatten(x, 1)
        x = self.fc1(x)
        x = F.relu(x)
        x = self.dropout2(x)
        x = self.fc2(x)
        output = F.log_softmax(x, dim=1)
        return output


def train(model, device, train_loader, optimizer, epoch):
    model.train()
    for batch_idx, (data, target) in enumerate(train_loader):
        data, target = data.to(device), target.to(device)
        optimizer.zero_grad()
        output = model(data)
        loss = F.nll_loss(output, target)
        loss.backward()
        optimizer.step()


def test(model, device, test_loader):
    model.eval()
    test_loss = 0
    correct = 0
    with torch.no_grad():
        for data, target in test_loader:
            data, target = data.to(device), target.to(device)
            output = model(data)
            test_loss += F.nll_loss(output, target, reduction='sum').item()  # sum up batch loss
            pred = output.argmax(dim=1, keepdim=True)  # get the index of the max log-probability
            correct += pred.eq(target.view_as(pred)).sum().item()
    test_loss /= len(test_loader.dataset)
    print('Test set: Average loss: {:.4f}, Accuracy: {}/{}'.format(test_loss, correct, len(test_loader.dataset)))
    return correct / len(test_loader.dataset)


def make_data(n):
    target = torch.randint(0, 10, (n,))
    data = torch.randn(n, 1, 28, 28) * 0.3
    for i in range(n):
        k = int(target[i])
        data[i, 0, 2 + 2 * k:4 + 2 * k, 4:24] += 2.0
    return data, target


def main():
    torch.manual_seed(1)
    device = torch.device("cpu")
    train_loader = DataLoader(TensorDataset(*make_data(256)), batch_size=32, shuffle=True)
    test_loader = DataLoader(TensorDataset(*make_data(128)), batch_size=64)
    model = Net().to(device)
    optimizer = optim.Adadelta(model.parameters(), lr=1.0)
    scheduler = StepLR(optimizer, step_size=1, gamma=0.7)
    for epoch in range(1, 3):
        train(model, device, train_loader, optimizer, epoch)
        accuracy = test(model, device, test_loader)
        scheduler.step()
    path = os.path.join(tempfile.mkdtemp(), "mnist_cnn.pt")
    torch.save(model.state_dict(), path)
    model.load_state_dict(torch.load(path, weights_only=True))
    print(f"accuracy {accuracy:.3f}")


if __name__ == '__main__':
    main()
