"""Sequence-to-sequence translation with attention in the style of the PyTorch tutorial "NLP From Scratch:
Translation with a Sequence to Sequence Network and Attention": an embedding + GRU encoder (batch_first), a
decoder whose Bahdanau attention (Wa, Ua, Va) reads the encoder outputs with torch.bmm, teacher forcing in
training, greedy decoding with topk at evaluation, TensorDataset + RandomSampler + DataLoader.

The "language pairs" are made here: the target sentence is the source words mapped one to one and written
in reverse order; the last line printed is the share of held-out sentences translated exactly."""
import random

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch import optim
from torch.utils.data import DataLoader, RandomSampler, TensorDataset

random.seed(0)
torch.manual_seed(0)
SOS_token, EOS_token, MAX_LENGTH, WORDS = 0, 1, 7, 10


def make_pairs(n):
    pairs = []
    for _ in range(n):
        words = [random.randrange(WORDS) for _ in range(random.randint(2, 5))]
        pairs.append((words, [w for w in reversed(words)]))
    return pairs


def to_ids(pairs):
    inputs = np.zeros((len(pairs), MAX_LENGTH), dtype=np.int32)
    targets = np.zeros((len(pairs), MAX_LENGTH), dtype=np.int32)
    for i, (src, tgt) in enumerate(pairs):
        src_ids = [w + 2 for w in src] + [EOS_token]
        tgt_ids = [w + 2 for w in tgt] + [EOS_token]
        inputs[i, :len(src_ids)] = src_ids
        targets[i, :len(tgt_ids)] = tgt_ids
    return torch.LongTensor(inputs), torch.LongTensor(targets)


class EncoderRNN(nn.Module):
    def __init__(self, input_size, hidden_size, dropout_p=0.1):
        super().__init__()
        self.embedding = nn.Embedding(input_size, hidden_size)
        self.gru = nn.GRU(hidden_size, hidden_size, batch_first=True)
        self.dropout = nn.Dropout(dropout_p)

    def forward(self, input):
        return self.gru(self.dropout(self.embedding(input)))


class BahdanauAttention(nn.Module):
    def __init__(self, hidden_size):
        super().__init__()
        self.Wa = nn.Linear(hidden_size, hidden_size)
        self.Ua = nn.Linear(hidden_size, hidden_size)
        self.Va = nn.Linear(hidden_size, 1)

    def forward(self, query, keys):
        scores = self.Va(torch.tanh(self.Wa(query) + self.Ua(keys))).squeeze(2).unsqueeze(1)
        weights = F.softmax(scores, dim=-1)
        return torch.bmm(weights, keys), weights


class AttnDecoderRNN(nn.Module):
    def __init__(self, hidden_size, output_size, dropout_p=0.1):
        super().__init__()
        self.embedding = nn.Embedding(output_size, hidden_size)
        self.attention = BahdanauAttention(hidden_size)
        self.gru = nn.GRU(2 * hidden_size, hidden_size, batch_first=True)
        self.out = nn.Linear(hidden_size, output_size)
        self.dropout = nn.Dropout(dropout_p)

    def forward(self, encoder_outputs, encoder_hidden, target_tensor=None):
        batch_size = encoder_outputs.size(0)
        decoder_input = torch.empty(batch_size, 1, dtype=torch.long).fill_(SOS_token)
        decoder_hidden = encoder_hidden
        decoder_outputs, attentions = [], []
        for i in range(MAX_LENGTH):
            decoder_output, decoder_hidden, attn_weights = self.forward_step(decoder_input, decoder_hidden,
                                                                             encoder_outputs)
            decoder_outputs.append(decoder_output)
            attentions.append(attn_weights)
            if target_tensor is not None:
                decoder_input = target_tensor[:, i].unsqueeze(1)  # teacher forcing
            else:
                _, topi = decoder_output.topk(1)
                decoder_input = topi.squeeze(-1).detach()
        decoder_outputs = F.log_softmax(torch.cat(decoder_outputs, dim=1), dim=-1)
        return decoder_outputs, decoder_hidden, torch.cat(attentions, dim=1)

    def forward_step(self, input, hidden, encoder_outputs):
        embedded = self.dropout(self.embedding(input))
        context, attn_weights = self.attention(hidden.permute(1, 0, 2), encoder_outputs)
        output, hidden = self.gru(torch.cat((embedded, context), dim=2), hidden)
        return self.out(output), hidden, attn_weights


train_inputs, train_targets = to_ids(make_pairs(600))
train_data = TensorDataset(train_inputs, train_targets)
train_dataloader = DataLoader(train_data, sampler=RandomSampler(train_data), batch_size=32)
hidden_size = 48
encoder = EncoderRNN(WORDS + 2, hidden_size)
decoder = AttnDecoderRNN(hidden_size, WORDS + 2)
encoder_optimizer = optim.Adam(encoder.parameters(), lr=0.01)
decoder_optimizer = optim.Adam(decoder.parameters(), lr=0.01)
criterion = nn.NLLLoss()
for epoch in range(1, 9):
    total_loss = 0
    for input_tensor, target_tensor in train_dataloader:
        encoder_optimizer.zero_grad()
        decoder_optimizer.zero_grad()
        encoder_outputs, encoder_hidden = encoder(input_tensor)
        decoder_outputs, _, _ = decoder(encoder_outputs, encoder_hidden, target_tensor)
        loss = criterion(decoder_outputs.view(-1, decoder_outputs.size(-1)), target_tensor.view(-1))
        loss.backward()
        encoder_optimizer.step()
        decoder_optimizer.step()
        total_loss += loss.item()
    print("epoch", epoch, "loss", round(total_loss / len(train_dataloader), 4))

encoder.eval()
decoder.eval()
test_pairs = make_pairs(50)
test_inputs, test_targets = to_ids(test_pairs)
with torch.no_grad():
    encoder_outputs, encoder_hidden = encoder(test_inputs)
    decoder_outputs, _, attentions = decoder(encoder_outputs, encoder_hidden)
    _, topi = decoder_outputs.topk(1)
    decoded = topi.squeeze()
assert attentions.shape == (50, MAX_LENGTH, MAX_LENGTH)
exact = 0
for row, (src, tgt) in zip(decoded, test_pairs):
    words = []
    for idx in row:
        if idx.item() == EOS_token:
            break
        words.append(idx.item() - 2)
    exact += words == tgt
print("accuracy", exact / len(test_pairs))
