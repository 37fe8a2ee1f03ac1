# PyTorch's "Deep Learning with PyTorch: A 60 Minute Blitz" CIFAR-10 classifier, as its tutorial
# writes it; the data are synthetic 3x32x32 images (a class-dependent bright square on noise) so the
# program runs offline in seconds. Runs under real PyTorch and, unchanged, on graphgrad.compat.torch.
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim

torch.manual_seed(0)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 6, 5)
        self.pool = nn.MaxPool2d(2, 2)
        self.conv2 = nn.Conv2d(6, 16, 5)
        self.fc1 = nn.Linear(16 * 5 * 5, 120)
        self.fc2 = nn.Linear(120, 84)
        self.fc3 = nn.Linear(84, 10)

    def forward(self, x):
        x = self.pool(F.relu(self.conv1(x)))
        x = self.pool(F.relu(self.conv2(x)))
        x = torch.flatten(x, 1)  # flatten all dimensions except batch
        x = F.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        x = self.fc3(x)
        return x


def make_data(n):
    labels = torch.randint(0, 10, (n,))
    images = torch.randn(n, 3, 32, 32) * 0.3
    for i in range(n):
        k = int(labels[i])
        row, col = (k // 5) * 16, (k % 5) * 6
        images[i, k % 3, row:row + 12, col:col + 6] += 2.0
    return images, labels


trainset = torch.utils.data.TensorDataset(*make_data(640))
trainloader = torch.utils.data.DataLoader(trainset, batch_size=16, shuffle=True)
testset = torch.utils.data.TensorDataset(*make_data(200))
testloader = torch.utils.data.DataLoader(testset, batch_size=50, shuffle=False)

net = Net()
criterion = nn.CrossEntropyLoss()
optimizer = optim.SGD(net.parameters(), lr=0.01, momentum=0.9)

for epoch in range(4):  # loop over the dataset multiple times
    running_loss = 0.0
    for i, data in enumerate(trainloader, 0):
        # get the inputs; data is a list of [inputs, labels]
        inputs, labels = data

        # zero the parameter gradients
        optimizer.zero_grad()

        # forward + backward + optimize
        outputs = net(inputs)
        loss = criterion(outputs, labels)
        loss.backward()
        optimizer.step()

        running_loss += loss.item()
    print(f"[{epoch + 1}] loss: {running_loss / len(trainloader):.3f}")

print("Finished Training")

correct = 0
total = 0
# since we're not training, we don't need to calculate the gradients for our outputs
with torch.no_grad():
    for data in testloader:
        images, labels = data
        # calculate outputs by running images through the network
        outputs = net(images)
        # the class with the highest energy is what we choose as prediction
        _, predicted = torch.max(outputs.data, 1)
        total += labels.size(0)
        correct += (predicted == labels).sum().item()

print(f"accuracy {correct / total:.3f}")
