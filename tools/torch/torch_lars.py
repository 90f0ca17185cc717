"""torch_lars.py — the PyTorch side of a question about LARS at large batches: the d2l ResNet-18 on Fashion-MNIST at
batch 4096, bf16 autocast, LARS as the harness defines it (engine/optim.cu: one trust ratio per layer, its weights and
bias together, batch norm's scale and shift together; trust = eta |w| / (|g| + wd |w|), eta 0.001, 1 where a norm is
0; no momentum or weight decay, the harness's defaults), the harness's warm-up and cosine schedule (engine/schedule.c).
Each epoch it prints the training accuracy and the test accuracy twice: with batch norm's running statistics (eval
mode, what every row's test_acc is) and with each test batch's own statistics (train mode, the running ones left as
they are). Where the two differ, the running statistics do not describe the network being evaluated.

usage: torch_lars.py DATA_DIR EPOCHS LR [BATCH]  -> CSV epoch,lr_now,train_acc,test_acc_running,test_acc_batch
"""
import math
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from torch_ddp_resnet18 import load_idx, resnet18  # noqa: E402

ETA = 0.001


def rate(step, steps_per_epoch, epochs, peak, warmup_epochs=1.0):
    total = epochs * steps_per_epoch
    w = min(round(warmup_epochs * steps_per_epoch), total)
    step = max(0, min(step, total - 1))
    if step < w:
        return peak * (step + 1) / w
    return peak * 0.5 * (1 + math.cos(math.pi * (step - w) / (total - w)))


def layers(net):
    """The parameter groups LARS adapts as one: each module with its own parameters."""
    return [list(m.parameters(recurse=False)) for m in net.modules() if list(m.parameters(recurse=False))]


@torch.no_grad()
def lars_step(groups, lr):
    for ps in groups:
        wn = torch.sqrt(sum((p.float() ** 2).sum() for p in ps))
        gn = torch.sqrt(sum((p.grad.float() ** 2).sum() for p in ps))
        trust = torch.where((wn > 0) & (gn > 0), ETA * wn / gn, torch.ones_like(wn))
        for p in ps:
            p.sub_(lr * trust * p.grad)


@torch.no_grad()
def test_acc(net, X, y, batch_stats):
    net.train(batch_stats)
    saved = []
    if batch_stats:   # momentum 0: the running statistics stay as they are
        for m in net.modules():
            if isinstance(m, nn.BatchNorm2d):
                saved.append((m, m.momentum))
                m.momentum = 0.0
    correct = 0
    with torch.autocast("cuda", dtype=torch.bfloat16):
        for i in range(0, X.shape[0], 1000):
            correct += (net(X[i:i + 1000]).argmax(1) == y[i:i + 1000]).sum().item()
    for m, mom in saved:
        m.momentum = mom
    return correct / X.shape[0]


def main():
    data_dir, epochs, peak = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
    bs = int(sys.argv[4]) if len(sys.argv) > 4 else 4096
    dev = torch.device("cuda", 0)
    torch.manual_seed(1)
    L = lambda n: torch.from_numpy(load_idx(f"{data_dir}/{n}.gz").copy())
    X = L("train-images-idx3-ubyte").float().div_(255).unsqueeze(1).to(dev)
    y = L("train-labels-idx1-ubyte").long().to(dev)
    Xt = L("t10k-images-idx3-ubyte").float().div_(255).unsqueeze(1).to(dev)
    yt = L("t10k-labels-idx1-ubyte").long().to(dev)
    net = resnet18().to(dev)
    for m in net.modules():
        if isinstance(m, (nn.Linear, nn.Conv2d)):
            nn.init.normal_(m.weight, std=0.01)
    groups = layers(net)
    n, spe, step = X.shape[0], X.shape[0] // bs, 0
    print("epoch,lr_now,train_acc,test_acc_running,test_acc_batch", flush=True)
    for ep in range(epochs):
        net.train()
        g = torch.Generator(device="cpu")
        g.manual_seed(ep)
        perm = torch.randperm(n, generator=g).to(dev)
        correct = 0
        for i in range(spe):
            idx = perm[i * bs:(i + 1) * bs]
            lr = rate(step, spe, epochs, peak)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                out = net(X[idx])
                loss = F.cross_entropy(out, y[idx])
            correct += (out.argmax(1) == y[idx]).sum().item()
            net.zero_grad(set_to_none=False)
            loss.backward()
            lars_step(groups, lr)
            step += 1
        print(f"{ep + 1},{lr:.6g},{correct / (spe * bs):.4f},{test_acc(net, Xt, yt, False):.4f},"
              f"{test_acc(net, Xt, yt, True):.4f}", flush=True)


if __name__ == "__main__":
    main()
