# Copied unchanged from the project's PyTorch anchors (anchors/torch_profile_resnet18.py, README of 2026-11-27); what
# it measured is cited in README.md and doc/, and tools/README.md gives the command that reruns each comparison.
"""Where PyTorch's ResNet-18 (d2l variant) step time goes on one GPU: kernel time by category."""
import sys, time, torch, torch.nn as nn
sys.path.insert(0, __import__("os").path.dirname(__file__))
from torch_ddp_resnet18 import resnet18
torch.backends.cudnn.benchmark = True
dev = torch.device("cuda", 0)
for bf16 in (False, True):
    net = resnet18().to(dev)
    if bf16: net = net.to(memory_format=torch.channels_last)
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    x = torch.rand(256, 1, 28, 28, device=dev); y = torch.randint(0, 10, (256,), device=dev)
    if bf16: x = x.contiguous(memory_format=torch.channels_last)
    def step():
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=bf16):
            loss = nn.functional.cross_entropy(net(x), y)
        opt.zero_grad(set_to_none=True); loss.backward(); opt.step()
    for _ in range(30): step()
    torch.cuda.synchronize(); t = time.perf_counter()
    for _ in range(50): step()
    torch.cuda.synchronize(); ms = (time.perf_counter() - t) / 50 * 1e3
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        for _ in range(10): step()
        torch.cuda.synchronize()
    cats = {}
    tot = 0
    for e in prof.key_averages():
        t_us = e.device_time_total if hasattr(e, "device_time_total") else e.cuda_time_total
        if t_us <= 0 or e.key.startswith("aten::") or e.key.startswith("cuda"): continue
        k = e.key.lower()
        c = ("conv/gemm" if any(w in k for w in ("conv", "gemm", "xmma", "sm90", "cutlass", "wgrad", "dgrad", "fprop", "implicit")) else
             "batchnorm" if "batch_norm" in k or "bn_" in k or "batchnorm" in k else
             "elementwise/other")
        cats[c] = cats.get(c, 0) + t_us; tot += t_us
    print(f"bf16={bf16} wall {ms:.2f} ms/step, GPU kernels {tot/10/1e3:.2f} ms/step: " +
          ", ".join(f"{c} {v/10/1e3:.2f} ms" for c, v in sorted(cats.items(), key=lambda kv: -kv[1])))
    print(prof.key_averages().table(sort_by="cuda_time_total", row_limit=12, max_name_column_width=70))
