"""A character-level name generator in the style of makemore: a Dataset of words padded to one length, an
endless DataLoader over a RandomSampler with replacement, a small causal Transformer, AdamW, evaluation under
inference_mode, sampling with top-k and multinomial, and a checkpoint reloaded.

The words are made up from syllables (no download); the last line printed is the test loss."""
import math
import os
import random
import tempfile

import torch
import torch.nn as nn
from torch.nn import functional as F
from torch.utils.data import Dataset
from torch.utils.data.dataloader import DataLoader


class ModelConfig:
    def __init__(self, block_size, vocab_size, n_layer=2, n_embd=32, n_head=4):
        self.block_size, self.vocab_size = block_size, vocab_size
        self.n_layer, self.n_embd, self.n_head = n_layer, n_embd, n_head


class NewGELU(nn.Module):
    def forward(self, x):
        return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))


class CausalSelfAttention(nn.Module):
    def __init__(self, config):
        super().__init__()
        assert config.n_embd % config.n_head == 0
        self.c_attn = nn.Linear(config.n_embd, 3 * config.n_embd)
        self.c_proj = nn.Linear(config.n_embd, config.n_embd)
        self.register_buffer("bias", torch.tril(torch.ones(config.block_size, config.block_size))
                             .view(1, 1, config.block_size, config.block_size))
        self.n_head, self.n_embd = config.n_head, config.n_embd

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.c_attn(x).split(self.n_embd, dim=2)
        k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        att = att.masked_fill(self.bias[:, :, :T, :T] == 0, float('-inf'))
        att = F.softmax(att, dim=-1)
        y = (att @ v).transpose(1, 2).contiguous().view(B, T, C)
        return self.c_proj(y)


class Block(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.ln_1 = nn.LayerNorm(config.n_embd)
        self.attn = CausalSelfAttention(config)
        self.ln_2 = nn.LayerNorm(config.n_embd)
        self.mlp = nn.ModuleDict(dict(c_fc=nn.Linear(config.n_embd, 4 * config.n_embd),
                                      c_proj=nn.Linear(4 * config.n_embd, config.n_embd), act=NewGELU()))
        m = self.mlp
        self.mlpf = lambda x: m.c_proj(m.act(m.c_fc(x)))

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlpf(self.ln_2(x))


class Transformer(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.block_size = config.block_size
        self.transformer = nn.ModuleDict(dict(
            wte=nn.Embedding(config.vocab_size, config.n_embd),
            wpe=nn.Embedding(config.block_size, config.n_embd),
            h=nn.ModuleList([Block(config) for _ in range(config.n_layer)]),
            ln_f=nn.LayerNorm(config.n_embd)))
        self.lm_head = nn.Linear(config.n_embd, config.vocab_size, bias=False)
        n_params = sum(p.numel() for p in self.transformer.parameters())
        print("number of parameters: %.2fK" % (n_params / 1e3,))

    def get_block_size(self):
        return self.block_size

    def forward(self, idx, targets=None):
        device = idx.device
        b, t = idx.size()
        assert t <= self.block_size, f"sequence of length {t} is longer than the block size {self.block_size}"
        pos = torch.arange(0, t, dtype=torch.long, device=device).unsqueeze(0)
        x = self.transformer.wte(idx) + self.transformer.wpe(pos)
        for block in self.transformer.h:
            x = block(x)
        logits = self.lm_head(self.transformer.ln_f(x))
        loss = None
        if targets is not None:
            loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1), ignore_index=-1)
        return logits, loss


@torch.no_grad()
def generate(model, idx, max_new_tokens, temperature=1.0, do_sample=False, top_k=None):
    block_size = model.get_block_size()
    for _ in range(max_new_tokens):
        idx_cond = idx if idx.size(1) <= block_size else idx[:, -block_size:]
        logits, _ = model(idx_cond)
        logits = logits[:, -1, :] / temperature
        if top_k is not None:
            v, _ = torch.topk(logits, top_k)
            logits[logits < v[:, [-1]]] = -float('Inf')
        probs = F.softmax(logits, dim=-1)
        if do_sample:
            idx_next = torch.multinomial(probs, num_samples=1)
        else:
            _, idx_next = torch.topk(probs, k=1, dim=-1)
        idx = torch.cat((idx, idx_next), dim=1)
    return idx


class CharDataset(Dataset):
    def __init__(self, words, chars, max_word_length):
        self.words, self.chars, self.max_word_length = words, chars, max_word_length
        self.stoi = {ch: i + 1 for i, ch in enumerate(chars)}
        self.itos = {i: s for s, i in self.stoi.items()}

    def __len__(self):
        return len(self.words)

    def contains(self, word):
        return word in self.words

    def get_vocab_size(self):
        return len(self.chars) + 1  # the 0 token ends (and starts) a word

    def get_output_length(self):
        return self.max_word_length + 1

    def encode(self, word):
        return torch.tensor([self.stoi[w] for w in word], dtype=torch.long)

    def decode(self, ix):
        return ''.join(self.itos[i] for i in ix)

    def __getitem__(self, idx):
        ix = self.encode(self.words[idx])
        x = torch.zeros(self.max_word_length + 1, dtype=torch.long)
        y = torch.zeros(self.max_word_length + 1, dtype=torch.long)
        x[1:1 + len(ix)] = ix
        y[:len(ix)] = ix
        y[len(ix) + 1:] = -1  # no loss past the end of the word
        return x, y


class InfiniteDataLoader:
    """Batches for ever: a sampler with replacement over a practically endless epoch."""

    def __init__(self, dataset, **kwargs):
        sampler = torch.utils.data.RandomSampler(dataset, replacement=True, num_samples=int(1e10))
        self.train_loader = DataLoader(dataset, sampler=sampler, **kwargs)
        self.data_iter = iter(self.train_loader)

    def next(self):
        try:
            batch = next(self.data_iter)
        except StopIteration:
            self.data_iter = iter(self.train_loader)
            batch = next(self.data_iter)
        return batch


def made_up_words(n, rng):
    starts, middles, ends = ["ka", "mi", "so", "ra", "lu", "be"], ["ri", "na", "to", "le"], ["n", "a", "y", "o"]
    return [rng.choice(starts) + "".join(rng.choice(middles) for _ in range(rng.randint(0, 2))) + rng.choice(ends)
            for _ in range(n)]


@torch.inference_mode()
def evaluate(model, dataset, batch_size=50, max_batches=None):
    model.eval()
    loader = DataLoader(dataset, shuffle=True, batch_size=batch_size, num_workers=0)
    losses = []
    for i, batch in enumerate(loader):
        X, Y = [t.to(device) for t in batch]
        _, loss = model(X, Y)
        losses.append(loss.item())
        if max_batches is not None and i >= max_batches:
            break
    model.train()
    return torch.tensor(losses).mean().item()


if __name__ == '__main__':
    torch.manual_seed(3407)
    torch.cuda.manual_seed_all(3407)
    rng = random.Random(3407)
    device = 'cpu'
    work_dir = tempfile.mkdtemp(prefix="makemore-")

    words = sorted(set(made_up_words(600, rng)))
    chars = sorted(list(set(''.join(words))))
    max_word_length = max(len(w) for w in words)
    rp = torch.randperm(len(words)).tolist()
    test_set_size = min(100, int(len(words) * 0.1))
    train_dataset = CharDataset([words[i] for i in rp[:-test_set_size]], chars, max_word_length)
    test_dataset = CharDataset([words[i] for i in rp[-test_set_size:]], chars, max_word_length)
    print(f"{len(words)} words, vocabulary {train_dataset.get_vocab_size()}, block {train_dataset.get_output_length()}")

    config = ModelConfig(vocab_size=train_dataset.get_vocab_size(), block_size=train_dataset.get_output_length())
    model = Transformer(config)
    model.to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=5e-3, weight_decay=0.01, betas=(0.9, 0.99), eps=1e-8)
    batch_loader = InfiniteDataLoader(train_dataset, batch_size=32, pin_memory=True, num_workers=0)

    best_loss = None
    for step in range(101):
        X, Y = [t.to(device) for t in batch_loader.next()]
        logits, loss = model(X, Y)
        model.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        if step % 50 == 0:
            train_loss = evaluate(model, train_dataset, batch_size=100, max_batches=3)
            test_loss = evaluate(model, test_dataset, batch_size=100, max_batches=3)
            print(f"step {step} train loss: {train_loss:.4f} test loss: {test_loss:.4f}")
            if best_loss is None or test_loss < best_loss:
                torch.save(model.state_dict(), os.path.join(work_dir, "model.pt"))
                best_loss = test_loss

    restored = Transformer(config)
    restored.load_state_dict(torch.load(os.path.join(work_dir, "model.pt")))
    X_init = torch.zeros(8, 1, dtype=torch.long).to(device)
    X_samp = generate(restored, X_init, train_dataset.get_output_length() - 1, top_k=5, do_sample=True).to('cpu')
    for i in range(X_samp.size(0)):
        row = X_samp[i, 1:].tolist()
        crop_index = row.index(0) if 0 in row else len(row)
        print("sample:", train_dataset.decode(row[:crop_index]))
    print("loss", f"{evaluate(restored, test_dataset, batch_size=100):.4f}")
