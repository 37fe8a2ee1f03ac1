"""Name classification with a character-level RNN in the style of the PyTorch tutorial "NLP From Scratch:
Classifying Names with a Character-Level RNN": one-hot letters as <line_length x 1 x n_letters> tensors, a
Dataset of (label tensor, line tensor, label, line), random_split with a seeded torch.Generator, nn.RNN whose
last hidden state feeds a Linear + LogSoftmax, batches made with np.array_split of shuffled indices, a loss
summed over a batch's names, clip_grad_norm_, and a confusion matrix at the end. Older idioms appear too:
torch.LongTensor([i]) labels and x.type(torch.FloatTensor).

The "languages" are made here: each has its own endings; the last line printed is the held-out accuracy."""
import random
import string

import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import Dataset

random.seed(0)
torch.manual_seed(0)
allowed_characters = string.ascii_letters + " .,;'" + "_"
n_letters = len(allowed_characters)
ENDINGS = {"Italian": ("ini", "elli", "etti"), "Japanese": ("moto", "shi", "kawa"), "Polish": ("ski", "wicz", "czyk"),
           "Scottish": ("son", "ie", "ach")}


def letterToIndex(letter):
    return allowed_characters.find(letter) if letter in allowed_characters else allowed_characters.find("_")


def lineToTensor(line):
    tensor = torch.zeros(len(line), 1, n_letters, dtype=torch.uint8)
    for li, letter in enumerate(line):
        tensor[li][0][letterToIndex(letter)] = 1
    return tensor.type(torch.FloatTensor)


class NamesDataset(Dataset):
    def __init__(self, per_language=50):
        self.data, self.data_tensors, self.labels, self.labels_tensors = [], [], [], []
        self.labels_uniq = sorted(ENDINGS)
        for label, endings in ENDINGS.items():
            for _ in range(per_language):
                stem = "".join(random.choice("abdeiklmnorstu") for _ in range(random.randint(2, 4)))
                name = stem.capitalize() + random.choice(endings)
                self.data.append(name)
                self.data_tensors.append(lineToTensor(name))
                self.labels.append(label)
                self.labels_tensors.append(torch.LongTensor([self.labels_uniq.index(label)]))

    def __len__(self):
        return len(self.data)

    def __getitem__(self, idx):
        return self.labels_tensors[idx], self.data_tensors[idx], self.labels[idx], self.data[idx]


alldata = NamesDataset()
assert alldata[0][1].type() == "torch.FloatTensor" and isinstance(alldata[0][0], torch.LongTensor)
train_set, test_set = torch.utils.data.random_split(alldata, [.8, .2], generator=torch.Generator(device="cpu").manual_seed(2024))


class CharRNN(nn.Module):
    def __init__(self, input_size, hidden_size, output_size):
        super().__init__()
        self.rnn = nn.RNN(input_size, hidden_size)
        self.h2o = nn.Linear(hidden_size, output_size)
        self.softmax = nn.LogSoftmax(dim=1)

    def forward(self, line_tensor):
        rnn_out, hidden = self.rnn(line_tensor)
        return self.softmax(self.h2o(hidden[0]))


def label_from_output(output, output_labels):
    top_n, top_i = output.topk(1)
    label_i = top_i[0].item()
    return output_labels[label_i], label_i


rnn = CharRNN(n_letters, 32, len(alldata.labels_uniq))
criterion = nn.NLLLoss()
optimizer = torch.optim.SGD(rnn.parameters(), lr=0.15)
rnn.train()
for epoch in range(1, 7):
    batches = list(range(len(train_set)))
    random.shuffle(batches)
    batches = np.array_split(batches, len(batches) // 16)
    current_loss = 0
    for batch in batches:
        batch_loss = 0
        for i in batch:
            (label_tensor, text_tensor, label, text) = train_set[i]
            output = rnn.forward(text_tensor)
            batch_loss += criterion(output, label_tensor)
        batch_loss.backward()
        nn.utils.clip_grad_norm_(rnn.parameters(), 3)
        optimizer.step()
        optimizer.zero_grad()
        current_loss += batch_loss.item() / len(batch)
    print(f"epoch {epoch} average batch loss {current_loss / len(batches):.4f}")

classes = alldata.labels_uniq
confusion = torch.zeros(len(classes), len(classes))
rnn.eval()
with torch.no_grad():
    for i in range(len(test_set)):
        (label_tensor, text_tensor, label, text) = test_set[i]
        guess, guess_i = label_from_output(rnn(text_tensor), classes)
        confusion[classes.index(label)][guess_i] += 1
print(confusion)
print("accuracy", (torch.diag(confusion).sum() / confusion.sum()).item())
