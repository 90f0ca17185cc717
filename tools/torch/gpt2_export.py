#!/usr/bin/env python3
"""gpt2_export.py — one GPT-2's initial weights and one token batch from PyTorch, written in the engine's parameter
file (engine/gpt2/gpt2_file.h), with PyTorch's loss at step 0 and over 20 AdamW steps on that batch.

A minimal GPT-2 in plain PyTorch, laid out as ours (nanoGPT's modules): pre-LN blocks, q, k and v from one (3C, C)
linear, GELU (tanh), the head tied to the token embedding. The token embedding has vocab_pad rows, the last ones 0,
and the loss reads the first vocab logits, as the engine's head does; their gradients stay 0, so do the rows.

The next step compares: the same initial weights and tokens must give our loss at step 0 within 1e-3, and the curve.

Run (a GPU with PyTorch):
  python3 tools/torch/gpt2_export.py --shape small --batch 16 --seq 1024 --out gpt2_small.bin
  python3 tools/torch/gpt2_export.py --shape tiny --batch 4 --seq 64 --device cpu --dtype fp32 --out tiny.bin
"""
import argparse
import math
import struct
import sys
from array import array

# gpt2_shape.c's table: layers, width, heads, context, vocab, vocab_pad.
SHAPES = {
    "tiny": (2, 64, 4, 64, 512, 512),
    "small": (12, 768, 12, 1024, 50257, 50304),
    "medium": (24, 1024, 16, 1024, 50257, 50304),
    "large": (36, 1280, 20, 1024, 50257, 50304),
    "xl": (48, 1600, 25, 1024, 50257, 50304),
}
ALIGN = 64  # GPT2_ALIGN: every tensor of the flat layout starts at a multiple of 64 elements
MAGIC = b"GPT2PARM"
VERSION = 1


def layout(shape):
    """gpt2_layout: [(name, layer, (rows, cols), at)] in layer order, and the flat buffer's elements."""
    layers, c = shape[0], shape[1]
    dims = {"ln1.w": (1, c), "ln1.b": (1, c), "qkv.w": (3 * c, c), "qkv.b": (1, 3 * c), "attn_proj.w": (c, c),
            "attn_proj.b": (1, c), "ln2.w": (1, c), "ln2.b": (1, c), "fc.w": (4 * c, c), "fc.b": (1, 4 * c),
            "mlp_proj.w": (c, 4 * c), "mlp_proj.b": (1, c)}
    names = [("wte", -1, (shape[5], c)), ("wpe", -1, (shape[3], c))]
    for layer in range(layers):
        names += [(n, layer, dims[n]) for n in dims]  # dicts keep their order: the layout's
    names += [("lnf.w", -1, (1, c)), ("lnf.b", -1, (1, c))]
    out, at = [], 0
    for name, layer, rc in names:
        out.append((name, layer, rc, at))
        at += (rc[0] * rc[1] + ALIGN - 1) // ALIGN * ALIGN
    return out, at


def as_bytes(values, typecode):
    """Little-endian bytes of 4-byte floats ("f") or ints ("i") from a list or a CPU tensor."""
    if hasattr(values, "numpy"):
        try:
            return values.contiguous().numpy().astype("<f4" if typecode == "f" else "<i4").tobytes()
        except Exception:  # PyTorch without NumPy
            values = values.tolist()
    a = array(typecode, values)
    assert a.itemsize == 4
    if sys.byteorder != "little":
        a.byteswap()
    return a.tobytes()


def write_file(path, shape, batch, seq, flat, tokens, targets, losses):
    """gpt2_file.h's format, version 1: flat, tokens and targets flat sequences (lists or CPU tensors)."""
    _, n_params = layout(shape)
    assert len(flat) == n_params and len(tokens) == batch * seq and len(targets) == batch * seq
    header = MAGIC + struct.pack("<10i", VERSION, *shape, batch, seq, len(losses)) + struct.pack("<q2i", n_params, 0, 0)
    assert len(header) == 64
    with open(path, "wb") as f:
        f.write(header)
        for typecode, values in (("f", flat), ("i", tokens), ("i", targets), ("f", losses)):
            f.write(as_bytes(values, typecode))


def build(torch, shape):
    nn, F = torch.nn, torch.nn.functional
    layers, c, heads, context, vocab, vocab_pad = shape

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln_1, self.ln_2 = nn.LayerNorm(c), nn.LayerNorm(c)
            self.c_attn, self.attn_proj = nn.Linear(c, 3 * c), nn.Linear(c, c)
            self.c_fc, self.mlp_proj = nn.Linear(c, 4 * c), nn.Linear(4 * c, c)

        def forward(self, x):
            b, t, _ = x.shape
            q, k, v = self.c_attn(self.ln_1(x)).split(c, dim=2)
            q, k, v = (z.view(b, t, heads, c // heads).transpose(1, 2) for z in (q, k, v))
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            x = x + self.attn_proj(y.transpose(1, 2).contiguous().view(b, t, c))
            return x + self.mlp_proj(F.gelu(self.c_fc(self.ln_2(x)), approximate="tanh"))

    class GPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.wte, self.wpe = nn.Embedding(vocab_pad, c), nn.Embedding(context, c)
            self.h = nn.ModuleList(Block() for _ in range(layers))
            self.ln_f = nn.LayerNorm(c)

        def forward(self, idx, targets):
            t = idx.shape[1]
            x = self.wte(idx) + self.wpe(torch.arange(t, device=idx.device))
            for block in self.h:
                x = block(x)
            logits = F.linear(self.ln_f(x), self.wte.weight)[..., :vocab]  # the tied head, its real rows
            return F.cross_entropy(logits.float().reshape(-1, vocab), targets.reshape(-1), ignore_index=-1)

    return GPT()


def init_gpt2(torch, model, shape, gen):
    """GPT-2's initialisation, as gpt2_layout_init's rule (its draws are PyTorch's, not rng.h's)."""
    std, proj_std = 0.02, 0.02 / math.sqrt(2 * shape[0])
    with torch.no_grad():
        for name, p in model.named_parameters():
            if p.dim() == 2:
                p.normal_(0.0, proj_std if name.endswith("proj.weight") else std, generator=gen)
            elif name.endswith("ln_1.weight") or name.endswith("ln_2.weight") or name == "ln_f.weight":
                p.fill_(1.0)
            else:
                p.zero_()
        model.wte.weight[shape[4]:].zero_()  # the padding rows


def flatten(torch, model, shape):
    """The parameters in gpt2_shape's flat layout: a CPU fp32 tensor, the padding 0."""
    ours = {"ln1.w": "ln_1.weight", "ln1.b": "ln_1.bias", "qkv.w": "c_attn.weight", "qkv.b": "c_attn.bias",
            "attn_proj.w": "attn_proj.weight", "attn_proj.b": "attn_proj.bias", "ln2.w": "ln_2.weight",
            "ln2.b": "ln_2.bias", "fc.w": "c_fc.weight", "fc.b": "c_fc.bias", "mlp_proj.w": "mlp_proj.weight",
            "mlp_proj.b": "mlp_proj.bias"}
    top = {"wte": "wte.weight", "wpe": "wpe.weight", "lnf.w": "ln_f.weight", "lnf.b": "ln_f.bias"}
    params = dict(model.named_parameters())
    slices, n = layout(shape)
    flat = torch.zeros(n, dtype=torch.float32)
    for name, layer, (rows, cols), at in slices:
        key = top[name] if layer < 0 else "h.%d.%s" % (layer, ours[name])
        t = params[key].detach().float().cpu().reshape(-1)  # nn.Linear's (out, in), row-major: ours
        assert t.numel() == rows * cols, (key, t.numel(), rows, cols)
        flat[at:at + rows * cols] = t
    return flat


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--shape", default="small", choices=sorted(SHAPES))
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--seq", type=int, default=1024)
    ap.add_argument("--seed", type=int, default=1337)
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--lr", type=float, default=6e-4, help="AdamW's constant rate (betas 0.9, 0.95, decay 0.1)")
    ap.add_argument("--dtype", default="bf16", choices=["bf16", "fp32"], help="bf16: autocast, fp32 master weights")
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--tokens", help="raw little-endian uint16 tokens (no header): the batch's B x (T + 1) from the "
                                     "start; without it, uniform random tokens from --seed")
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    import torch  # here: --help and the layout need no PyTorch

    shape = SHAPES[a.shape]
    vocab, n = shape[4], a.batch * a.seq
    if not 1 <= a.seq <= shape[3]:
        sys.exit("--seq must be in [1, %d]" % shape[3])
    gen = torch.Generator().manual_seed(a.seed)
    if a.tokens:
        raw = array("H")
        with open(a.tokens, "rb") as f:
            raw.frombytes(f.read(2 * a.batch * (a.seq + 1)))
        if sys.byteorder != "little":
            raw.byteswap()
        if len(raw) < a.batch * (a.seq + 1) or max(raw) >= vocab:
            sys.exit("%s: fewer than %d tokens, or one past the vocabulary" % (a.tokens, a.batch * (a.seq + 1)))
        seqs = torch.tensor(list(raw), dtype=torch.long).view(a.batch, a.seq + 1)
    else:
        seqs = torch.randint(0, vocab, (a.batch, a.seq + 1), generator=gen)
    idx, tgt = seqs[:, :-1].contiguous(), seqs[:, 1:].contiguous()  # each token's target: the next one

    torch.manual_seed(a.seed)
    model = build(torch, shape)
    init_gpt2(torch, model, shape, gen)
    flat = flatten(torch, model, shape)
    model.to(a.device)
    idx_d, tgt_d = idx.to(a.device), tgt.to(a.device)
    amp = a.dtype == "bf16"
    decay = [p for p in model.parameters() if p.dim() == 2]  # gpt2_tensor_decays: the matrices and both embeddings
    rest = [p for p in model.parameters() if p.dim() != 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1}, {"params": rest, "weight_decay": 0.0}],
                            lr=a.lr, betas=(0.9, 0.95), eps=1e-8, fused=a.device.startswith("cuda"))
    losses = []
    for step in range(a.steps + 1):
        with torch.autocast(device_type=a.device.split(":")[0], dtype=torch.bfloat16, enabled=amp):
            loss = model(idx_d, tgt_d)
        losses.append(loss.item())
        if step == a.steps:
            break
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
    write_file(a.out, shape, a.batch, a.seq, flat, idx.reshape(-1).int(), tgt.reshape(-1).int(), losses)
    print("# gpt2_export: %s, %d x %d tokens, seed %d, %s, AdamW lr %g: %s" % (a.shape, a.batch, a.seq, a.seed,
                                                                           a.dtype, a.lr, a.out))
    print("step 0 loss %.6f" % losses[0])
    for step, value in enumerate(losses):
        print("%d,%.6f" % (step, value))


if __name__ == "__main__":
    main()
