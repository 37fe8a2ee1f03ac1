"""Classify variable-length token sequences with an LSTM over packed sequences, written the way
PyTorch's tutorials write it: a Dataset, a collate_fn padding each batch, DataLoader worker
processes, pack_padded_sequence, AdamW with a LambdaLR warm-up, gradient clipping.

Task: does the sequence contain more 7s than 3s? Prints ``accuracy <value>`` on held-out data."""
import random

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils.rnn import pack_padded_sequence, pad_sequence
from torch.utils.data import DataLoader, Dataset

VOCAB, PAD = 10, 0


class CountingDataset(Dataset):
    def __init__(self, n, seed):
        rng = random.Random(seed)
        self.samples = []
        for _ in range(n):
            length = rng.randint(3, 14)
            tokens = [rng.choice([1, 2, 3, 4, 5, 6, 7, 8, 9]) for _ in range(length)]
            if tokens.count(7) == tokens.count(3):
                tokens.append(7)
            self.samples.append((torch.tensor(tokens, dtype=torch.long), int(tokens.count(7) > tokens.count(3))))

    def __len__(self):
        return len(self.samples)

    def __getitem__(self, i):
        return self.samples[i]


def collate(batch):
    sequences, labels = zip(*batch)
    lengths = torch.tensor([len(s) for s in sequences])
    return pad_sequence(list(sequences), batch_first=True, padding_value=PAD), lengths, torch.tensor(labels)


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, 16, padding_idx=PAD)
        self.rnn = nn.LSTM(16, 32, batch_first=True, bidirectional=True)
        self.head = nn.Sequential(nn.Linear(64, 32), nn.ReLU(), nn.Dropout(0.1), nn.Linear(32, 2))

    def forward(self, tokens, lengths):
        packed = pack_padded_sequence(self.embed(tokens), lengths, batch_first=True, enforce_sorted=False)
        _, (h, _) = self.rnn(packed)
        return self.head(torch.cat([h[-2], h[-1]], dim=1))


def main():
    torch.manual_seed(0)
    train = DataLoader(CountingDataset(1200, 1), batch_size=32, shuffle=True, collate_fn=collate, num_workers=2)
    test = DataLoader(CountingDataset(300, 2), batch_size=100, collate_fn=collate)
    model = Classifier()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2, weight_decay=1e-4)
    warmup = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda step: min(1.0, (step + 1) / 20))
    for epoch in range(6):
        model.train()
        for tokens, lengths, labels in train:
            optimizer.zero_grad()
            loss = F.cross_entropy(model(tokens, lengths), labels)
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            warmup.step()
    model.eval()
    correct = total = 0
    with torch.no_grad():
        for tokens, lengths, labels in test:
            correct += (model(tokens, lengths).argmax(dim=1) == labels).sum().item()
            total += labels.numel()
    print(f"accuracy {correct / total:.3f}")


if __name__ == "__main__":
    main()
