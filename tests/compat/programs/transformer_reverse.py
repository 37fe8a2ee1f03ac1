"""A sequence-to-sequence nn.Transformer learning to reverse digit strings, written the way PyTorch's
translation tutorial writes it: token embeddings plus a sinusoidal positional encoding buffer, causal
target masks from Transformer.generate_square_subsequent_mask, padding masks, CrossEntropyLoss with
ignore_index, teacher forcing, greedy decoding.

Prints ``accuracy <value>``: the fraction of held-out sequences decoded exactly."""
import math

import torch
import torch.nn as nn

PAD, BOS, EOS, DIGITS = 0, 1, 2, 8  # tokens 3..10 are the digits
VOCAB = 3 + DIGITS


def make_batch(generator, n, length):
    digits = torch.randint(3, VOCAB, (n, length), generator=generator)
    src = digits
    tgt = torch.cat([torch.full((n, 1), BOS, dtype=torch.long), digits.flip(1), torch.full((n, 1), EOS, dtype=torch.long)],
                    dim=1)
    return src, tgt


class PositionalEncoding(nn.Module):
    def __init__(self, d_model, max_len=64):
        super().__init__()
        position = torch.arange(max_len).unsqueeze(1)
        div_term = torch.exp(torch.arange(0, d_model, 2) * (-math.log(10000.0) / d_model))
        pe = torch.zeros(max_len, 1, d_model)
        pe[:, 0, 0::2] = torch.sin(position * div_term)
        pe[:, 0, 1::2] = torch.cos(position * div_term)
        self.register_buffer("pe", pe)

    def forward(self, x):  # (S, N, E)
        return x + self.pe[: x.size(0)]


class Reverser(nn.Module):
    def __init__(self, d_model=32):
        super().__init__()
        self.d_model = d_model
        self.embed = nn.Embedding(VOCAB, d_model)
        self.pos = PositionalEncoding(d_model)
        self.transformer = nn.Transformer(d_model, nhead=4, num_encoder_layers=1, num_decoder_layers=1,
                                          dim_feedforward=64, dropout=0.0)
        self.out = nn.Linear(d_model, VOCAB)

    def forward(self, src, tgt):  # (N, S), (N, T) -> (N, T, VOCAB)
        s = self.pos(self.embed(src).transpose(0, 1) * math.sqrt(self.d_model))
        t = self.pos(self.embed(tgt).transpose(0, 1) * math.sqrt(self.d_model))
        mask = nn.Transformer.generate_square_subsequent_mask(tgt.size(1))
        y = self.transformer(s, t, tgt_mask=mask, src_key_padding_mask=src == PAD, tgt_key_padding_mask=tgt == PAD)
        return self.out(y).transpose(0, 1)


def main():
    torch.manual_seed(0)
    generator = torch.Generator().manual_seed(1)
    model = Reverser()
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)
    criterion = nn.CrossEntropyLoss(ignore_index=PAD)
    for step in range(800):
        src, tgt = make_batch(generator, 64, 5)
        logits = model(src, tgt[:, :-1])
        loss = criterion(logits.reshape(-1, VOCAB), tgt[:, 1:].reshape(-1))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    model.eval()
    src, tgt = make_batch(generator, 100, 5)
    with torch.no_grad():
        decoded = torch.full((100, 1), BOS, dtype=torch.long)
        for _ in range(tgt.size(1) - 1):
            next_token = model(src, decoded)[:, -1].argmax(dim=-1, keepdim=True)
            decoded = torch.cat([decoded, next_token], dim=1)
    exact = (decoded[:, 1:] == tgt[:, 1:]).all(dim=1).float().mean().item()
    print(f"accuracy {exact:.3f}")


if __name__ == "__main__":
    main()
