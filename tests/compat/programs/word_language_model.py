# PyTorch's examples/word_language_model (RNNModel with Embedding, LSTM, dropout, a tied decoder;
# batchify, get_batch, repackage_hidden, clip_grad_norm_, manual SGD update), as its authors write it,
# on a small synthetic corpus (a repeating sentence pattern) so it runs offline in seconds. Runs under
# real PyTorch and, unchanged, on graphgrad.compat.torch. Prints the final validation perplexity.
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class RNNModel(nn.Module):
    """Container module with an encoder, a recurrent module, and a decoder."""

    def __init__(self, ntoken, ninp, nhid, nlayers, dropout=0.5, tie_weights=False):
        super(RNNModel, self).__init__()
        self.ntoken = ntoken
        self.drop = nn.Dropout(dropout)
        self.encoder = nn.Embedding(ntoken, ninp)
        self.rnn = nn.LSTM(ninp, nhid, nlayers, dropout=dropout)
        self.decoder = nn.Linear(nhid, ntoken)
        if tie_weights:
            self.decoder.weight = self.encoder.weight
        self.init_weights()
        self.nhid = nhid
        self.nlayers = nlayers

    def init_weights(self):
        initrange = 0.1
        nn.init.uniform_(self.encoder.weight, -initrange, initrange)
        nn.init.zeros_(self.decoder.bias)
        nn.init.uniform_(self.decoder.weight, -initrange, initrange)

    def forward(self, input, hidden):
        emb = self.drop(self.encoder(input))
        output, hidden = self.rnn(emb, hidden)
        output = self.drop(output)
        decoded = self.decoder(output)
        decoded = decoded.view(-1, self.ntoken)
        return F.log_softmax(decoded, dim=1), hidden

    def init_hidden(self, bsz):
        weight = next(self.parameters())
        return (weight.new_zeros(self.nlayers, bsz, self.nhid),
                weight.new_zeros(self.nlayers, bsz, self.nhid))


def batchify(data, bsz):
    nbatch = data.size(0) // bsz
    data = data.narrow(0, 0, nbatch * bsz)
    data = data.view(bsz, -1).t().contiguous()
    return data


def get_batch(source, i, bptt=12):
    seq_len = min(bptt, len(source) - 1 - i)
    data = source[i:i + seq_len]
    target = source[i + 1:i + 1 + seq_len].view(-1)
    return data, target


def repackage_hidden(h):
    """Wraps hidden states in new Tensors, to detach them from their history."""
    if isinstance(h, torch.Tensor):
        return h.detach()
    else:
        return tuple(repackage_hidden(v) for v in h)


torch.manual_seed(1111)
sentence = [0, 5, 9, 2, 7, 3, 8, 1, 6, 4, 11, 10]
corpus = torch.tensor(sentence * 60)
train_data = batchify(corpus[:600], 10)
val_data = batchify(corpus[600:], 5)
ntokens = 12
model = RNNModel(ntokens, 32, 32, 2, dropout=0.2, tie_weights=True)
criterion = nn.NLLLoss()
lr = 20.0


def evaluate(data_source):
    model.eval()
    total_loss = 0.
    hidden = model.init_hidden(5)
    with torch.no_grad():
        for i in range(0, data_source.size(0) - 1, 12):
            data, targets = get_batch(data_source, i)
            output, hidden = model(data, hidden)
            hidden = repackage_hidden(hidden)
            total_loss += len(data) * criterion(output, targets).item()
    return total_loss / (len(data_source) - 1)


for epoch in range(1, 11):
    model.train()
    hidden = model.init_hidden(10)
    for batch, i in enumerate(range(0, train_data.size(0) - 1, 12)):
        data, targets = get_batch(train_data, i)
        model.zero_grad()
        hidden = repackage_hidden(hidden)
        output, hidden = model(data, hidden)
        loss = criterion(output, targets)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 0.25)
        for p in model.parameters():
            p.data.add_(p.grad, alpha=-lr)
    val_loss = evaluate(val_data)
    print('| end of epoch {:3d} | valid loss {:5.2f} | valid ppl {:8.2f}'.format(epoch, val_loss, math.exp(val_loss)))

print(f"perplexity {math.exp(val_loss):.3f}")
