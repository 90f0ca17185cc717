#!/usr/bin/env python3
"""gpt2_export.py — one GPT-2's initial weights and one token batch from PyTorch, written in the engine's parameter
file (engine/gpt2/gpt2_file.h), with PyTorch's losses at steps 0 .. STEPS-1 of AdamW on that batch.

The model is gpt2_torch_model.py's (laid out as ours). The batch is the first B windows of T + 1 tokens of the corpus's
training split (data/sotu/train.bin: the first B * T + 1 tokens), from window --window on; where the shape's
vocabulary is smaller than the corpus's (tiny), each token is taken modulo it. --random draws uniform tokens instead.
The recipe is the engine's: AdamW at a constant rate (betas 0.9, 0.95, eps 1e-8, weight decay 0.1 on the 2-D tensors),
the gradient clipped to norm 1 (clip_grad_norm_) before each step; bf16: autocast with fp32 master weights; fp32:
strict fp32 products (no TF32). Loss k is the forward's of step k, before its update: STEPS losses, STEPS - 1 updates.
The header records the precision and the rate, which build/tests/test_gpt2_torch then runs at.

Run (a GPU with PyTorch), then compare:
  python3 tools/torch/gpt2_export.py --shape small --batch 16 --seq 1024 --out /tmp/gpt2_small.bin
  build/tests/test_gpt2_torch /tmp/gpt2_small.bin
  python3 tools/torch/gpt2_export.py --shape tiny --batch 8 --seq 64 --dtype fp32 --out /tmp/gpt2_tiny.bin
"""
import argparse
import ctypes
import struct
import sys
from array import array

import gpt2_torch_model as gm

MAGIC = b"GPT2PARM"
VERSION = 1
PRECISION = {"fp32": 1, "bf16": 2}  # gpt2_file.h's GPT2_FILE_FP32, GPT2_FILE_BF16


def as_bytes(torch, values, typecode):
    """Little-endian bytes of 4-byte floats ("f") or ints ("i") from a list or a CPU tensor. A tensor's memory is
    copied as it lies (ctypes: no NumPy needed, and no Python list of small's 124M parameters)."""
    if sys.byteorder != "little":
        sys.exit("this machine is big-endian; the parameter file is little-endian")
    if isinstance(values, torch.Tensor):
        t = values.detach().to("cpu", torch.float32 if typecode == "f" else torch.int32).contiguous()
        return ctypes.string_at(t.data_ptr(), t.numel() * 4)
    a = array(typecode, values)
    assert a.itemsize == 4
    return a.tobytes()


def write_file(torch, path, shape, batch, seq, flat, tokens, targets, losses, precision, lr):
    """gpt2_file.h's format, version 1: flat, tokens and targets flat sequences (CPU tensors or lists)."""
    _, n_params = gm.layout(shape)
    assert len(flat) == n_params and len(tokens) == batch * seq and len(targets) == batch * seq
    header = (MAGIC + struct.pack("<10i", VERSION, *shape, batch, seq, len(losses)) + struct.pack("<q", n_params) +
              struct.pack("<if", PRECISION[precision], lr))
    assert len(header) == 64
    with open(path, "wb") as f:
        f.write(header)
        for typecode, values in (("f", flat), ("i", tokens), ("i", targets), ("f", losses)):
            f.write(as_bytes(torch, values, typecode))


def batch_tokens(torch, a, shape, gen):
    """(B, T + 1) int64: window w of T + 1 tokens is tokens w T .. w T + T, as the engine's sampler cuts them."""
    vocab = shape[4]
    if a.random:
        return torch.randint(0, vocab, (a.batch, a.seq + 1), generator=gen), "uniform random tokens, seed %d" % a.seed
    tok, file_vocab = gm.read_tokens(torch, a.tokens)
    first, need = a.window * a.seq, a.batch * a.seq + 1
    if first + need > tok.numel():
        sys.exit("%s: %d tokens, fewer than windows %d .. %d of %d + 1 need" % (
            a.tokens, tok.numel(), a.window, a.window + a.batch - 1, a.seq))
    flat = tok[first:first + need]
    what = "%s windows %d .. %d" % (a.tokens, a.window, a.window + a.batch - 1)
    if file_vocab > vocab:
        flat = flat % vocab
        what += ", each token modulo %d" % vocab
    rows = [flat[b * a.seq:b * a.seq + a.seq + 1] for b in range(a.batch)]
    return torch.stack(rows), what


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--shape", default="small", choices=sorted(gm.SHAPES))
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--seq", type=int, default=1024)
    ap.add_argument("--seed", type=int, default=1337, help="the initial weights' (and --random's tokens')")
    ap.add_argument("--steps", type=int, default=20, help="losses recorded: steps 0 .. STEPS-1")
    ap.add_argument("--lr", type=float, default=6e-4, help="AdamW's constant rate")
    ap.add_argument("--dtype", default="bf16", choices=sorted(PRECISION), help="bf16: autocast, fp32 master weights")
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--tokens", default="data/sotu/train.bin", help="a token file (engine/tokens.h)")
    ap.add_argument("--window", type=int, default=0, help="the batch's first window of T + 1 tokens in --tokens")
    ap.add_argument("--random", action="store_true", help="uniform random tokens from --seed instead of --tokens")
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    import torch  # here: --help needs no PyTorch

    shape = gm.SHAPES[a.shape]
    if not 1 <= a.seq <= shape[3] or a.batch < 1 or a.steps < 1 or a.window < 0 or not a.lr > 0:
        sys.exit("--seq must be in [1, %d]; --batch, --steps at least 1; --window at least 0; --lr above 0" % shape[3])
    # fp32 means fp32 products here as in the engine's fp32 (cuBLAS pedantic): no TF32
    torch.set_float32_matmul_precision("highest")
    gen = torch.Generator().manual_seed(a.seed)
    seqs, what = batch_tokens(torch, a, shape, gen)
    idx, tgt = seqs[:, :-1].contiguous(), seqs[:, 1:].contiguous()  # each token's target: the next one

    torch.manual_seed(a.seed)
    model = gm.build(torch, shape)
    # the weights' own generator: the same weights for a seed whether the tokens are drawn or read
    gm.init_gpt2(torch, model, shape, torch.Generator().manual_seed(a.seed + 1))
    flat = gm.flatten(torch, model, shape)
    model.to(a.device)
    idx_d, tgt_d = idx.to(a.device), tgt.to(a.device)
    cuda = a.device.startswith("cuda")
    opt = gm.adamw(torch, model, a.lr, fused=cuda)
    losses = []
    for step in range(a.steps):
        with torch.autocast(device_type=a.device.split(":")[0], dtype=torch.bfloat16, enabled=a.dtype == "bf16"):
            loss = model(idx_d, tgt_d)
        losses.append(loss.item())
        if step + 1 == a.steps:
            break
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), gm.MAX_NORM)
        opt.step()
    write_file(torch, a.out, shape, a.batch, a.seq, flat, idx.reshape(-1), tgt.reshape(-1), losses, a.dtype, a.lr)
    print("# gpt2_export: %s, %d x %d tokens (%s), init seed %d, %s, AdamW lr %g, PyTorch %s on %s: %s" % (
        a.shape, a.batch, a.seq, what, a.seed, a.dtype, a.lr, torch.__version__,
        torch.cuda.get_device_name() if cuda else a.device, a.out))
    print("step,loss")
    for step, value in enumerate(losses):
        print("%d,%.6f" % (step, value))


if __name__ == "__main__":
    main()
