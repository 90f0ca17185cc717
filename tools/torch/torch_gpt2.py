# Copied unchanged from the project's PyTorch anchors (anchors/torch_gpt2.py, 2026-11-29); tools/README.md gives the
# command that reruns each comparison.
"""GPT-2 small (124M) training step in PyTorch at its best on one GPU: the anchor a C/CUDA transformer is measured
against. Written for this project from the GPT-2 architecture (pre-LN decoder, learned positions, GELU(tanh) MLP,
weight-tied LM head), not copied from any repository.

usage: torch_gpt2.py VARIANTS [BATCH] [STEPS] [VOCAB]  -> CSV variant,batch,seq,params,tokens_per_s,step_ms,mfu
VARIANTS: comma-separated of eager-bf16, compile-bf16 (torch.compile), cgraph-bf16 (torch.compile with
          mode="reduce-overhead": forward and backward replayed from CUDA graphs). bf16 autocast, fp32 master weights, fused AdamW
          (lr 6e-4, betas 0.9/0.95, wd 0.1), causal attention through scaled_dot_product_attention (flash on Hopper),
          gradient clipping at 1.0. Random tokens (throughput only); the loss is printed to show training runs.
MFU: (6 N + 12 L T d) FLOPs per token (N parameters without position embeddings), against 989.4 TFLOP/s dense bf16.
"""
import math, sys, time
import torch
import torch.nn as nn
import torch.nn.functional as F


class Block(nn.Module):
    def __init__(self, d, h):
        super().__init__()
        self.h = h
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.fc, self.fc2 = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(C, dim=2)
        q, k, v = (t.view(B, T, self.h, C // self.h).transpose(1, 2) for t in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(y.transpose(1, 2).contiguous().view(B, T, C))
        return x + self.fc2(F.gelu(self.fc(self.ln2(x)), approximate="tanh"))


class GPT(nn.Module):
    def __init__(self, vocab=50257, seq=1024, L=12, d=768, h=12):
        super().__init__()
        self.wte, self.wpe = nn.Embedding(vocab, d), nn.Embedding(seq, d)
        self.blocks = nn.ModuleList(Block(d, h) for _ in range(L))
        self.lnf = nn.LayerNorm(d)
        self.head = nn.Linear(d, vocab, bias=False)
        self.head.weight = self.wte.weight
        for n, p in self.named_parameters():
            if p.dim() >= 2:
                std = 0.02 / math.sqrt(2 * L) if n.endswith(("proj.weight", "fc2.weight")) else 0.02
                nn.init.normal_(p, 0.0, std)
            elif n.endswith("bias"):
                nn.init.zeros_(p)

    def forward(self, idx, tgt):
        T = idx.shape[1]
        x = self.wte(idx) + self.wpe(torch.arange(T, device=idx.device))
        for b in self.blocks:
            x = b(x)
        logits = self.head(self.lnf(x))
        return F.cross_entropy(logits.float().view(-1, logits.size(-1)), tgt.reshape(-1))


def run(variant, B, steps, vocab, T=1024, L=12, d=768):
    torch.manual_seed(0)
    torch.backends.cuda.matmul.allow_tf32 = True
    dev = "cuda"
    model = GPT(vocab=vocab, seq=T, L=L, d=d).to(dev)
    n_params = sum(p.numel() for p in model.parameters()) - model.wpe.weight.numel()
    decay = [p for p in model.parameters() if p.dim() >= 2]
    no_decay = [p for p in model.parameters() if p.dim() < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1}, {"params": no_decay, "weight_decay": 0.0}],
                            lr=6e-4, betas=(0.9, 0.95), eps=1e-8, fused=True)
    fwd = model
    if variant.startswith("compile"):
        fwd = torch.compile(model)
    elif variant.startswith("cgraph"):
        fwd = torch.compile(model, mode="reduce-overhead")
    data = torch.randint(0, vocab, (steps + 20, B, T + 1), device=dev)

    def step(i):
        x, y = data[i, :, :-1].contiguous(), data[i, :, 1:].contiguous()
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = fwd(x, y)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)
        return loss

    for i in range(10):
        loss = step(i)
    torch.cuda.synchronize()
    t = time.perf_counter()
    for i in range(steps):
        loss = step(10 + i)
    torch.cuda.synchronize()
    dt = (time.perf_counter() - t) / steps
    tok_s = B * T / dt
    flops_tok = 6 * n_params + 12 * L * T * d
    mfu = tok_s * flops_tok / 989.4e12
    print(f"{variant},{B},{T},{n_params},{tok_s:.0f},{dt * 1e3:.2f},{mfu:.3f},{loss.item():.4f}", flush=True)
    del model, opt, data
    torch.cuda.empty_cache()


if __name__ == "__main__":
    print("variant,batch,seq,params,tokens_per_s,step_ms,mfu,last_loss", flush=True)
    B = int(sys.argv[2]) if len(sys.argv) > 2 else 16
    steps = int(sys.argv[3]) if len(sys.argv) > 3 else 30
    vocab = int(sys.argv[4]) if len(sys.argv) > 4 else 50257
    for v in sys.argv[1].split(","):
        try:
            run(v, B, steps, vocab)
        except Exception as e:  # a variant that fails prints its error as a row
            print(f"{v},{B},1024,,,,,error: {type(e).__name__}: {str(e)[:120]}", flush=True)
