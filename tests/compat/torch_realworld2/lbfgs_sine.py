"""Sine-wave continuation in the style of pytorch/examples' time_sequence_prediction: two stacked
nn.LSTMCell in float64 (seq.double()), the sequence walked one step at a time with chunk(), predictions fed
back in for `future` steps, and optim.LBFGS driven by a closure that returns the loss.

The waves are made here with random phases; the last line printed is the mean squared error on held-out
waves (about 0.5 for a model that learned nothing)."""
import numpy as np
import torch
import torch.nn as nn
import torch.optim as optim

np.random.seed(2)
torch.manual_seed(0)
T, L, N = 20, 40, 10
x = np.empty((N, L), np.int64)
x[:] = np.array(range(L)) + np.random.randint(-4 * T, 4 * T, N).reshape(N, 1)
data = np.sin(x / 1.0 / T).astype("float64")


class Sequence(nn.Module):
    def __init__(self, hidden=12):
        super().__init__()
        self.hidden = hidden
        self.lstm1 = nn.LSTMCell(1, hidden)
        self.lstm2 = nn.LSTMCell(hidden, hidden)
        self.linear = nn.Linear(hidden, 1)

    def forward(self, input, future=0):
        outputs = []
        h_t = torch.zeros(input.size(0), self.hidden, dtype=torch.double)
        c_t = torch.zeros(input.size(0), self.hidden, dtype=torch.double)
        h_t2 = torch.zeros(input.size(0), self.hidden, dtype=torch.double)
        c_t2 = torch.zeros(input.size(0), self.hidden, dtype=torch.double)
        for input_t in input.split(1, dim=1):
            h_t, c_t = self.lstm1(input_t, (h_t, c_t))
            h_t2, c_t2 = self.lstm2(h_t, (h_t2, c_t2))
            output = self.linear(h_t2)
            outputs += [output]
        for i in range(future):
            h_t, c_t = self.lstm1(output, (h_t, c_t))
            h_t2, c_t2 = self.lstm2(h_t, (h_t2, c_t2))
            output = self.linear(h_t2)
            outputs += [output]
        return torch.cat(outputs, dim=1)


input = torch.from_numpy(data[3:, :-1])
target = torch.from_numpy(data[3:, 1:])
test_input = torch.from_numpy(data[:3, :-1])
test_target = torch.from_numpy(data[:3, 1:])
seq = Sequence()
seq.double()
criterion = nn.MSELoss()
optimizer = optim.LBFGS(seq.parameters(), lr=0.8, max_iter=10)
for step in range(3):
    def closure():
        optimizer.zero_grad()
        out = seq(input)
        loss = criterion(out, target)
        loss.backward()
        return loss
    loss = optimizer.step(closure)
    print("step", step, "loss", loss.item())
with torch.no_grad():
    future = 10
    pred = seq(test_input, future=future)
    assert pred.shape == (3, L - 1 + future) and pred.dtype == torch.float64
    loss = criterion(pred[:, :-future], test_target)
    y = pred.detach().numpy()
print("loss", loss.item())
