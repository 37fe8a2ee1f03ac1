"""A small GPT-style character Transformer: token + learned position embeddings, 2 pre-norm
``TransformerEncoderLayer`` blocks (d_model 128, 4 heads, feed-forward 512, GELU) under a causal
mask, a final LayerNorm and a linear head; AdamW with a linear warm-up then cosine decay, on random
64-character windows of a text file; then a sampled continuation.

    python examples/char_transformer.py                         # README.md; 500 steps, ~2 min on 2 cores
    python examples/char_transformer.py --text some.txt --epochs 20 --temperature 0.6
"""
from __future__ import annotations

import argparse
import pathlib
import time

import graphgrad as gg
from graphgrad import nn
from graphgrad.data import load_text, random_windows

README = pathlib.Path(__file__).resolve().parents[1] / "README.md"


class CharTransformer(nn.Module):
    def __init__(self, vocab_size: int, block_size: int = 64, d_model: int = 128, nhead: int = 4,
                 num_layers: int = 2, dim_feedforward: int = 512, dropout: float = 0.1) -> None:
        super().__init__()
        self.block_size = block_size
        self.token = nn.Embedding(vocab_size, d_model)
        # Attention is blind to order; a learned vector per position tells the model where each token is.
        self.position = nn.Embedding(block_size, d_model)
        self.blocks = nn.ModuleList([
            nn.TransformerEncoderLayer(d_model, nhead, dim_feedforward, dropout, activation="gelu",
                                       batch_first=True, norm_first=True)
            for _ in range(num_layers)])
        # Pre-norm blocks leave the residual stream unnormalised: normalise once before the head.
        self.norm = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, vocab_size)

    def forward(self, tokens: gg.Tensor) -> gg.Tensor:
        """tokens (N, L) int64 with L <= block_size -> logits (N, L, vocab)."""
        length = tokens.shape[1]
        x = self.token(tokens) + self.position(gg.arange(length))
        # True above the diagonal = "may not attend": position i sees only positions <= i, so every
        # position of a window is a next-character prediction trained in the same pass.
        causal = gg.triu(gg.ones((length, length), dtype="bool"), 1)
        for block in self.blocks:
            x = block(x, src_mask=causal, is_causal=True)
        return self.head(self.norm(x))








def generate(model: CharTransformer, prompt: str, length: int, vocab: list, temperature: float = 0.8,
             generator: gg.Generator | None = None) -> str:
    """``length`` characters continuing ``prompt``. No state is carried: each step re-reads the last
    ``block_size`` characters (the most the position embedding covers)."""
    unknown = sorted(set(prompt) - set(vocab))
    if unknown:
        raise ValueError(f"the prompt has characters the model never saw: {''.join(unknown)!r}")
    index = {ch: i for i, ch in enumerate(vocab)}
    generator = generator or gg.Generator(0)
    tokens = [index[ch] for ch in prompt]
    model.eval()  # no dropout while sampling
    with gg.no_grad():
        for _ in range(length):
            context = gg.tensor([tokens[-model.block_size:]], dtype="int64")
            probs = gg.softmax(model(context)[0, -1] / temperature, axis=-1)  # sharper when cold
            tokens.append(int(gg.multinomial(probs, generator=generator).item()))
    model.train()
    return "".join(vocab[i] for i in tokens[len(prompt):])


def main(epochs: int = 5, steps_per_epoch: int = 100, text: str | None = None, block_size: int = 64,
         batch_size: int = 32, lr: float = 3e-3, warmup: int = 20, dropout: float = 0.1, sample_length: int = 200,
         temperature: float = 0.8, prompt: str | None = None, seed: int = 0, verbose: bool = False) -> dict:
    """Train; return ``{"losses": mean training loss of each epoch, "sample": sample_length generated
    characters, "seconds": training time}``."""
    content, vocab, data = load_text(text or README)
    gg.manual_seed(seed)  # initial weights and dropout masks
    batches = gg.Generator(seed)
    model = CharTransformer(len(vocab), block_size, dropout=dropout)
    # AdamW: weight decay decoupled from the adaptive step, the usual choice for Transformers.
    optimizer = gg.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.01)
    total_steps = epochs * steps_per_epoch
    warmup = max(1, min(warmup, total_steps - 1))
    # Warm-up: Adam's early steps, with poor second-moment estimates, can wreck the attention weights
    # at full learning rate. Cosine decay afterwards settles the model at the end of the run.
    cosine = gg.optim.CosineAnnealingLR(optimizer, T_max=max(1, total_steps - warmup), eta_min=lr / 20)
    schedule = gg.optim.LinearWarmup(optimizer, warmup_steps=warmup, start_factor=0.05, after=cosine)
    loss_fn = nn.CrossEntropyLoss()
    if verbose:
        print(f"{len(content)} characters, vocabulary of {len(vocab)}, "
              f"{sum(p.size for p in model.parameters())} parameters")
    losses, start = [], time.perf_counter()
    for epoch in range(1, epochs + 1):
        total = 0.0
        for _ in range(steps_per_epoch):
            x, y = random_windows(data, block_size, batch_size, batches)
            loss = loss_fn(model(x).reshape(-1, len(vocab)), y.reshape(-1))
            optimizer.zero_grad()
            loss.backward()
            gg.optim.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            schedule.step()  # per step, not per epoch: the warm-up is measured in steps
            total += loss.item()
        losses.append(total / steps_per_epoch)
        if verbose:
            print(f"epoch {epoch:3d}  loss {losses[-1]:.4f}  lr {optimizer.param_groups[0]['lr']:.2e}  "
                  f"({time.perf_counter() - start:.1f}s)")
    seconds = time.perf_counter() - start
    prompt = prompt if prompt is not None else content[:block_size // 2]
    sample = generate(model, prompt, sample_length, vocab, temperature, gg.Generator(seed))
    if verbose:
        print(f"--- sample (temperature {temperature}) ---\n{prompt}{sample}")
    return {"losses": losses, "sample": sample, "seconds": seconds}


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--text", default=None, help="a UTF-8 text file (default: the repository's README.md)")
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--steps-per-epoch", type=int, default=100)
    parser.add_argument("--lr", type=float, default=3e-3)
    parser.add_argument("--dropout", type=float, default=0.1)
    parser.add_argument("--sample-length", type=int, default=200)
    parser.add_argument("--temperature", type=float, default=0.8)
    parser.add_argument("--prompt", default=None, help="start of the sample (default: the text's first 32 characters)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    # a small model: one BLAS thread (a second only spins, and slows it 2-4x on a busy machine)
    with gg.backend.blas_threads(1):
        main(args.epochs, args.steps_per_epoch, args.text, lr=args.lr, dropout=args.dropout,
             sample_length=args.sample_length, temperature=args.temperature, prompt=args.prompt, seed=args.seed,
             verbose=True)
