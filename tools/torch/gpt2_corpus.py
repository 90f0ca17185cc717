#!/usr/bin/env python3
"""gpt2_corpus.py — PyTorch's GPT-2 (gpt2_torch_model.py, the model the engine is compared with) trained on the
corpus's tokens: the held-out loss against which the engine's must fall alike, on the same tokens.

Training takes the windows of T + 1 tokens that tile data/sotu/train.bin (window w: tokens w T .. w T + T, as the
engine's tokens_sampler cuts them), shuffled each epoch, B a step (the last n_windows mod B of an epoch's order left
out); AdamW (betas 0.9, 0.95, eps 1e-8, weight decay 0.1 on the 2-D tensors), the gradient clipped to norm 1, bf16
autocast with fp32 master weights; the rate as the engine's schedule (schedule.c): linear from lr / W at the first
step to lr at step W - 1, then a cosine to 0 at the run's last step. The held-out loss is the mean cross-entropy over
every window of data/sotu/val.bin, in file order. One CSV row an epoch on stdout: epoch, train_loss (the mean over the
epoch's steps), val_loss, seconds (the epoch's training, the held-out pass not counted).

  python3 tools/torch/gpt2_corpus.py --shape small --batch 16 --seq 1024 --epochs 3 --warmup-steps 20
"""
import argparse
import math
import sys
import time

import gpt2_torch_model as gm


def lr_at(step, total, warmup, peak):
    """schedule.c's lr_schedule_at for a cosine with a warm-up of `warmup` steps, per step of `total`."""
    step = min(max(step, 0), total - 1)
    if step < warmup:
        return peak * (step + 1) / warmup
    return peak * 0.5 * (1.0 + math.cos(math.pi * (step - warmup) / (total - warmup)))


def windows(torch, tok, starts, seq):
    """(len(starts), T + 1) tokens: the windows that begin at starts (a device tensor of token offsets)."""
    return tok[starts[:, None] + torch.arange(seq + 1, device=tok.device)[None, :]]


def held_out(torch, model, tok, seq, batch, device):
    """The mean cross-entropy over every window of tok in file order (the last batch may be short)."""
    n = (tok.numel() - 1) // seq
    total = 0.0
    model.eval()
    with torch.no_grad():
        for first in range(0, n, batch):
            w = windows(torch, tok, torch.arange(first, min(first + batch, n), device=tok.device) * seq, seq)
            with torch.autocast(device_type=device, dtype=torch.bfloat16):
                loss = model(w[:, :-1], w[:, 1:])
            total += loss.item() * w.shape[0]   # every window has T targets: the mean of the means, weighted
    model.train()
    return total / n


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--shape", default="small", choices=sorted(gm.SHAPES))
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--seq", type=int, default=1024)
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--lr", type=float, default=6e-4, help="the peak rate")
    ap.add_argument("--warmup-steps", type=int, default=20, help="W: the warm-up's steps")
    ap.add_argument("--warmup-epochs", type=float, default=None,
                    help="W as the command's --warmup-epochs: this share of an epoch's steps, rounded (over "
                    "--warmup-steps)")
    ap.add_argument("--seed", type=int, default=1337, help="the initial weights' and the epochs' orders")
    ap.add_argument("--compile", action="store_true", help="torch.compile the training step's model")
    ap.add_argument("--train", default="data/sotu/train.bin")
    ap.add_argument("--val", default="data/sotu/val.bin")
    ap.add_argument("--device", default="cuda")
    a = ap.parse_args()
    import torch  # here: --help needs no PyTorch

    shape = gm.SHAPES[a.shape]
    if not 1 <= a.seq <= shape[3] or a.batch < 1 or a.epochs < 1 or a.warmup_steps < 0 or not a.lr > 0:
        sys.exit("--seq must be in [1, %d]; --batch, --epochs at least 1; --warmup-steps at least 0" % shape[3])
    train, vocab = gm.read_tokens(torch, a.train)
    val, val_vocab = gm.read_tokens(torch, a.val)
    if max(vocab, val_vocab) > shape[4]:   # the command widens tiny's vocabulary to the corpus's; this model cannot
        sys.exit("--shape %s: its vocabulary of %d is smaller than the corpus's %d (the command widens it; this "
                 "script does not): take small or larger" % (a.shape, shape[4], max(vocab, val_vocab)))
    dev = a.device.split(":")[0]
    train, val = train.to(a.device), val.to(a.device)
    n_windows = (train.numel() - 1) // a.seq
    steps = n_windows // a.batch
    if steps < 1 or (val.numel() - 1) // a.seq < 1:
        sys.exit("fewer windows of %d + 1 tokens than a batch of %d in %s, or none in %s" % (a.seq, a.batch, a.train,
                                                                                               a.val))
    total = steps * a.epochs
    w = a.warmup_steps if a.warmup_epochs is None else int(math.floor(a.warmup_epochs * steps + 0.5))   # lround
    warmup = min(w, total)

    torch.manual_seed(a.seed)
    model = gm.build(torch, shape)
    gm.init_gpt2(torch, model, shape, torch.Generator().manual_seed(a.seed + 1))
    model.to(a.device)
    step_model = torch.compile(model) if a.compile else model
    opt = gm.adamw(torch, model, a.lr, fused=dev == "cuda")
    order_gen = torch.Generator().manual_seed(a.seed)
    print("# gpt2_corpus: %s, %d x %d tokens a step, %d steps an epoch (%d windows), %d epochs, lr %g (warm-up %d, "
          "cosine), bf16 autocast%s, PyTorch %s on %s" % (
              a.shape, a.batch, a.seq, steps, n_windows, a.epochs, a.lr, warmup, ", compiled" if a.compile else "",
              torch.__version__, torch.cuda.get_device_name() if dev == "cuda" else a.device))
    print("# before training: val_loss %.6f" % held_out(torch, model, val, a.seq, a.batch, dev))
    print("epoch,train_loss,val_loss,seconds")
    sys.stdout.flush()
    step = 0
    for epoch in range(1, a.epochs + 1):
        order = torch.randperm(n_windows, generator=order_gen).to(a.device)
        loss_sum = torch.zeros((), device=a.device)
        if dev == "cuda":
            torch.cuda.synchronize()
        t0 = time.perf_counter()
        for i in range(steps):
            for group in opt.param_groups:
                group["lr"] = lr_at(step, total, warmup, a.lr)
            w = windows(torch, train, order[i * a.batch:(i + 1) * a.batch] * a.seq, a.seq)
            with torch.autocast(device_type=dev, dtype=torch.bfloat16):
                loss = step_model(w[:, :-1], w[:, 1:])
            opt.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), gm.MAX_NORM)
            opt.step()
            loss_sum += loss.detach()
            step += 1
        if dev == "cuda":
            torch.cuda.synchronize()
        seconds = time.perf_counter() - t0
        train_loss = loss_sum.item() / steps
        print("%d,%.6f,%.6f,%.2f" % (epoch, train_loss, held_out(torch, model, val, a.seq, a.batch, dev), seconds))
        sys.stdout.flush()


if __name__ == "__main__":
    main()
