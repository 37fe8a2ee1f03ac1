"""A character-level LSTM language model: Embedding(64) -> LSTM(128, batch_first) -> Linear(vocab),
trained with Adam and gradient clipping on random 35-character windows of a text file, then
sampling a continuation one character at a time.

    python examples/char_lstm.py                                  # README.md; 1000 steps, ~30 s
    python examples/char_lstm.py --text some.txt --epochs 20 --temperature 0.6
"""
from __future__ import annotations

import argparse
import pathlib
import time

import graphgrad as gg
from graphgrad import nn
from graphgrad.data import load_text, random_windows

README = pathlib.Path(__file__).resolve().parents[1] / "README.md"


class CharLSTM(nn.Module):
    def __init__(self, vocab_size: int, embedding_dim: int = 64, hidden_size: int = 128) -> None:
        super().__init__()
        self.embed = nn.Embedding(vocab_size, embedding_dim)
        self.lstm = nn.LSTM(embedding_dim, hidden_size, batch_first=True)
        self.head = nn.Linear(hidden_size, vocab_size)

    def forward(self, tokens: gg.Tensor, state=None):
        """tokens (N, L) int64 -> logits (N, L, vocab) and the LSTM state ``(h, c)`` to continue from."""
        out, state = self.lstm(self.embed(tokens), state)
        return self.head(out), state








def generate(model: CharLSTM, prompt: str, length: int, vocab: list, temperature: float = 0.8,
             generator: gg.Generator | None = None) -> str:
    """``length`` characters continuing ``prompt`` (whose characters must be in ``vocab``)."""
    unknown = sorted(set(prompt) - set(vocab))
    if unknown:
        raise ValueError(f"the prompt has characters the model never saw: {''.join(unknown)!r}")
    index = {ch: i for i, ch in enumerate(vocab)}
    generator = generator or gg.Generator(0)
    model.eval()
    out = []
    with gg.no_grad():
        # Read the whole prompt once, then feed back one character at a time, carrying the state.
        logits, state = model(gg.tensor([[index[ch] for ch in prompt]], dtype="int64"))
        for _ in range(length):
            nxt = int(gg.multinomial(gg.softmax(logits[0, -1] / temperature, axis=-1), generator=generator).item())
            out.append(vocab[nxt])
            logits, state = model(gg.tensor([[nxt]], dtype="int64"), state)
    model.train()
    return "".join(out)


def main(epochs: int = 10, steps_per_epoch: int = 100, text: str | None = None, seq_len: int = 35,
         batch_size: int = 32, lr: float = 3e-3, sample_length: int = 200, temperature: float = 0.8,
         prompt: str | None = None, seed: int = 0, verbose: bool = False) -> dict:
    """Train; return ``{"losses": mean training loss of each epoch, "sample": sample_length generated
    characters, "seconds": training time}``."""
    content, vocab, data = load_text(text or README)
    gg.manual_seed(seed)
    batches = gg.Generator(seed)
    model = CharLSTM(len(vocab))
    optimizer = gg.optim.Adam(model.parameters(), lr=lr)
    loss_fn = nn.CrossEntropyLoss()
    if verbose:
        print(f"{len(content)} characters, vocabulary of {len(vocab)}, "
              f"{sum(p.size for p in model.parameters())} parameters")
    losses, start = [], time.perf_counter()
    for epoch in range(1, epochs + 1):
        total = 0.0
        for _ in range(steps_per_epoch):
            x, y = random_windows(data, seq_len, batch_size, batches)
            logits, _ = model(x)
            loss = loss_fn(logits.reshape(-1, len(vocab)), y.reshape(-1))
            optimizer.zero_grad()
            loss.backward()
            # An LSTM's gradients occasionally spike (long products through time); clipping the total
            # norm keeps one bad batch from undoing the progress.
            gg.optim.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            total += loss.item()
        losses.append(total / steps_per_epoch)
        if verbose:
            print(f"epoch {epoch:3d}  loss {losses[-1]:.4f}  ({time.perf_counter() - start:.1f}s)")
    seconds = time.perf_counter() - start
    prompt = prompt if prompt is not None else content[:seq_len]
    sample = generate(model, prompt, sample_length, vocab, temperature, gg.Generator(seed))
    if verbose:
        print(f"--- sample (temperature {temperature}) ---\n{prompt}{sample}")
    return {"losses": losses, "sample": sample, "seconds": seconds}


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--text", default=None, help="a UTF-8 text file (default: the repository's README.md)")
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--steps-per-epoch", type=int, default=100)
    parser.add_argument("--lr", type=float, default=3e-3)
    parser.add_argument("--sample-length", type=int, default=200)
    parser.add_argument("--temperature", type=float, default=0.8)
    parser.add_argument("--prompt", default=None, help="start of the sample (default: the text's first 35 characters)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    # a small model: one BLAS thread (a second only spins, and slows it 2-4x on a busy machine)
    with gg.backend.blas_threads(1):
        main(args.epochs, args.steps_per_epoch, args.text, lr=args.lr, sample_length=args.sample_length,
             temperature=args.temperature, prompt=args.prompt, seed=args.seed, verbose=True)
