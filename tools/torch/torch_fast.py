# Copied unchanged from the project's PyTorch anchors (anchors/torch_fast.py, README of 2026-11-27); what
# it measured is cited in README.md and doc/, and tools/README.md gives the command that reruns each comparison.
"""Reference: the fastest single-GPU PyTorch training of the d2l ResNet-18 on Fashion-MNIST we can write.

Same model, init, data, batch 256, lr 0.1, plain SGD as torch_ddp_resnet18.py, one GPU, no DDP.
variants: eager-bf16   bf16 autocast + channels_last, data on the GPU (host-bound at this size)
          graph-bf16   the same, whole step (forward, backward, SGD) captured once in a CUDA graph and replayed
                       (PyTorch's documented whole-network capture): no host overhead left
          graph-tf32   as graph-bf16 in fp32/TF32 (cuDNN TF32 convs, PyTorch's default)
          cgraph-bf16  torch.compile (Inductor's fused kernels), then the whole step captured as in graph-bf16
usage: torch_fast.py DATA_DIR EPOCHS VARIANTS   -> CSV model,variant,gpus,epoch,epoch_s,test_acc,images_per_s
"""
import sys, time
import torch, torch.nn as nn
sys.path.insert(0, __file__.rsplit("/", 1)[0])
from torch_ddp_resnet18 import load_idx, resnet18  # noqa: E402


def run(variant, epochs, data_dir):
    dev = torch.device("cuda", 0)
    torch.manual_seed(0)
    torch.backends.cudnn.benchmark = True
    L = lambda n: torch.from_numpy(load_idx(f"{data_dir}/{n}.gz").copy())
    Xtr = L("train-images-idx3-ubyte").float().div_(255).unsqueeze(1)
    ytr = L("train-labels-idx1-ubyte").long()
    Xte = L("t10k-images-idx3-ubyte").float().div_(255).unsqueeze(1)
    yte = L("t10k-labels-idx1-ubyte").long()
    bs, lr = 256, 0.1
    net = resnet18().to(dev)
    for m in net.modules():
        if isinstance(m, (nn.Linear, nn.Conv2d)):
            nn.init.normal_(m.weight, std=0.01)
    bf16 = variant.endswith("bf16")
    mf = torch.channels_last if bf16 else torch.contiguous_format
    net = net.to(memory_format=mf)
    Xg, yg = Xtr.to(dev).contiguous(memory_format=mf), ytr.to(dev)
    Xte_g, yte_g = Xte.to(dev).contiguous(memory_format=mf), yte.to(dev)
    opt = torch.optim.SGD(net.parameters(), lr=lr)
    loss_fn = nn.CrossEntropyLoss()
    static_x = torch.empty((bs, 1, 28, 28), device=dev).contiguous(memory_format=mf)
    static_y = torch.empty((bs,), dtype=torch.long, device=dev)

    def step():
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=bf16, cache_enabled=False):
            loss = loss_fn(model(static_x), static_y)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=False)
        return loss

    model = net
    graph = None
    if variant.startswith("cgraph"):
        model = torch.compile(net)
    if variant.startswith(("graph", "cgraph")):
        static_x.copy_(Xg[:bs]); static_y.copy_(yg[:bs])
        s = torch.cuda.Stream(); s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            for _ in range(3):
                step()
        torch.cuda.current_stream().wait_stream(s)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            step()
    n = Xtr.shape[0]
    for ep in range(epochs):
        net.train()
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        g = torch.Generator(device="cpu"); g.manual_seed(ep)
        perm = torch.randperm(n, generator=g).to(dev)
        for i in range(0, n - bs + 1, bs):
            idx = perm[i:i + bs]
            static_x.copy_(Xg[idx]); static_y.copy_(yg[idx])
            if graph is not None:
                graph.replay()
            else:
                step()
        torch.cuda.synchronize()
        t = time.perf_counter() - t0
        net.eval()
        correct = 0
        with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16, enabled=bf16):
            for i in range(0, Xte_g.shape[0], 1000):
                correct += (net(Xte_g[i:i + 1000]).argmax(1) == yte_g[i:i + 1000]).sum().item()
        print(f"resnet18,{variant},1,{ep + 1},{t:.3f},{correct / Xte_g.shape[0]:.4f},{(n // bs) * bs / t:.0f}",
              flush=True)


if __name__ == "__main__":
    print("model,variant,gpus,epoch,epoch_s,test_acc,images_per_s", flush=True)
    for v in sys.argv[3].split(","):
        run(v, int(sys.argv[2]), sys.argv[1])
