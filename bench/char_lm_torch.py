#!/usr/bin/python3
"""The PyTorch side of the char-LSTM claim: `cohort train --model char-lstm --dataset text:PATH`'s
recipe in PyTorch 1.13, for bench/compare_char_lm.sh.

The corpus as cohort reads it (a file, or a directory's regular files sorted by name, without
symlinks, hidden files and *.dat), its distinct bytes as the vocabulary, the last tenth held out.
Training as data::CharStreams and the trainer's Note [Carried state] (truncated backpropagation
through time, as PyTorch's word_language_model): the training text cut into batch-size contiguous
streams read in order, windows of seq_len + 1 characters, the LSTM's state carried (detached) from
each batch to the next and zero at each epoch's start. Validation the same way: 64 streams read in
order with the state carried, starting from zeros. Embedding 64, a 2-layer LSTM of 256, a linear layer to the vocabulary; Adam;
cross-entropy over every position. Prints one line per epoch (validation bits per character,
characters/s of the training loop) and a JSON summary.

    OMP_NUM_THREADS=2 /usr/bin/python3 bench/char_lm_torch.py /usr/share/games/fortunes --epochs 1
"""
import argparse
import json
import math
import os
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


def read_corpus(path):
    if not os.path.isdir(path):
        return open(path, "rb").read()
    names = sorted(n for n in os.listdir(path) if not n.startswith(".") and not n.endswith(".dat"))
    files = [os.path.join(path, n) for n in names]
    return b"".join(open(f, "rb").read() for f in files if os.path.isfile(f) and not os.path.islink(f))


def streams(ids, seq_len, n):
    """Batch b of the streams: row s is window b of stream s (data::CharStreams' order)."""
    stream_len = (len(ids) - 1) // n
    count = stream_len // seq_len
    starts = torch.arange(n)[:, None] * stream_len + torch.arange(count)[None, :] * seq_len  # [n, count]
    idx = starts[..., None] + torch.arange(seq_len + 1)  # [n, count, seq_len + 1]
    w = ids[idx].transpose(0, 1)  # [count, n, seq_len + 1]
    return w[..., :-1], w[..., 1:]


class CharLSTM(nn.Module):
    def __init__(self, vocab):
        super().__init__()
        self.embedding = nn.Embedding(vocab, 64)
        self.lstm = nn.LSTM(64, 256, num_layers=2, batch_first=True)
        self.fc = nn.Linear(256, vocab)

    def forward(self, x, state=None):
        out, state = self.lstm(self.embedding(x), state)
        return self.fc(out.reshape(-1, 256)), state


def main():
    p = argparse.ArgumentParser()
    p.add_argument("corpus")
    p.add_argument("--epochs", type=int, default=1)
    p.add_argument("--seq-len", type=int, default=64)
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--lr", type=float, default=0.003)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--threads", type=int, default=2)
    a = p.parse_args()
    torch.manual_seed(a.seed)
    torch.set_num_threads(a.threads)
    text = read_corpus(a.corpus)
    vocab = sorted(set(text))
    index = {b: i for i, b in enumerate(vocab)}
    ids = torch.tensor([index[b] for b in text], dtype=torch.long)
    cut = len(text) - len(text) // 10
    train_x, train_y = streams(ids[:cut], a.seq_len, a.batch_size)
    val_streams = max(1, min(64, (len(text) - cut - 1) // a.seq_len))
    val_x, val_y = streams(ids[cut:], a.seq_len, val_streams)
    model = CharLSTM(len(vocab))
    opt = torch.optim.Adam(model.parameters(), lr=a.lr)
    results = []
    for epoch in range(a.epochs):
        model.train()
        state = None
        start = time.perf_counter()
        for b in range(len(train_x)):
            logits, state = model(train_x[b], state)
            state = tuple(s.detach() for s in state)
            loss = F.cross_entropy(logits, train_y[b].reshape(-1))
            opt.zero_grad()
            loss.backward()
            opt.step()
        seconds = time.perf_counter() - start
        model.eval()
        with torch.no_grad():
            total, state = 0.0, None
            for b in range(len(val_x)):
                logits, state = model(val_x[b], state)
                total += F.cross_entropy(logits, val_y[b].reshape(-1), reduction="sum").item()
        bpc = total / val_y.numel() / math.log(2)
        cps = train_x.numel() / seconds
        print(f"torch epoch {epoch + 1}/{a.epochs}: test {bpc:.3f} bits/char | {seconds:.1f} s, {cps:.0f} characters/s",
              flush=True)
        results.append({"epoch": epoch + 1, "test_bpc": bpc, "seconds": seconds, "characters_per_s": cps})
    print(json.dumps({"torch": results}))


if __name__ == "__main__":
    main()
