"""torch_fmnist_resnet.py — the PyTorch reference for tests/gpu/test_train_resnet50.c: torchvision's ResNet-50 (or
ResNet-101) with a 1-channel stem and 10 classes on Fashion-MNIST resized on the GPU to SIZE (bilinear,
align_corners=False, as the harness's --image-size), plain SGD, torchvision's initialisation, data resident on the GPU
in a fresh permutation per epoch, the last partial batch dropped; test accuracy after every epoch.

usage: python3 tools/torch_fmnist_resnet.py DATA_DIR [MODEL] [SIZE] [EPOCHS] [BATCH] [LR] [MATH] [SEED]
       defaults: resnet50 96 2 256 0.1 bf16 1; MATH bf16 (autocast, channels_last) or tf32
prints CSV: model,size,math,epoch,epoch_s,train_loss,train_acc,test_acc
"""
import gzip, os, struct, sys, time
import numpy as np
import torch, torch.nn as nn, torch.nn.functional as F, torchvision


def idx(path):
    op = gzip.open if path.endswith(".gz") else open
    with op(path, "rb") as f:
        magic, = struct.unpack(">I", f.read(4))
        dims = struct.unpack(">" + "I" * (magic & 0xFF), f.read(4 * (magic & 0xFF)))
        return np.frombuffer(f.read(), dtype=np.uint8).reshape(dims)


def load(d, split, dev):
    def find(name):
        for p in (f"{d}/{name}.gz", f"{d}/{name}"):
            if os.path.exists(p): return p
        sys.exit(f"{d}/{name}: not found")
    x = idx(find(f"{split}-images-idx3-ubyte"))
    y = idx(find(f"{split}-labels-idx1-ubyte"))
    return (torch.tensor(x, device=dev).float().div_(255.0).unsqueeze(1),   # byte / 255, as ToTensor
            torch.tensor(y, device=dev).long())


def main():
    a = sys.argv[1:]
    data = a[0]
    name = a[1] if len(a) > 1 else "resnet50"
    size = int(a[2]) if len(a) > 2 else 96
    epochs = int(a[3]) if len(a) > 3 else 2
    batch = int(a[4]) if len(a) > 4 else 256
    lr = float(a[5]) if len(a) > 5 else 0.1
    math = a[6] if len(a) > 6 else "bf16"
    seed = int(a[7]) if len(a) > 7 else 1
    dev = torch.device("cuda", 0)
    torch.manual_seed(seed)
    torch.backends.cudnn.benchmark = True
    torch.backends.cudnn.allow_tf32 = True
    torch.backends.cuda.matmul.allow_tf32 = False   # fp32 GEMMs, as PyTorch's default and the harness's tf32
    xtr, ytr = load(data, "train", dev)
    xte, yte = load(data, "t10k", dev)
    net = getattr(torchvision.models, name)(num_classes=10)
    net.conv1 = nn.Conv2d(1, 64, kernel_size=7, stride=2, padding=3, bias=False)   # the data set's one channel
    nn.init.kaiming_normal_(net.conv1.weight, mode="fan_out", nonlinearity="relu")   # as torchvision inits it
    net = net.to(dev)
    if math == "bf16": net = net.to(memory_format=torch.channels_last)
    opt = torch.optim.SGD(net.parameters(), lr=lr, momentum=0)
    fmt = torch.channels_last if math == "bf16" else torch.contiguous_format

    def prep(x):
        x = F.interpolate(x, size=(size, size), mode="bilinear", align_corners=False, antialias=False)
        return x.contiguous(memory_format=fmt)

    print("model,size,math,epoch,epoch_s,train_loss,train_acc,test_acc", flush=True)
    steps = xtr.shape[0] // batch
    for e in range(1, epochs + 1):
        net.train()
        perm = torch.randperm(xtr.shape[0], device=dev)
        loss_sum = torch.zeros((), device=dev); correct = torch.zeros((), device=dev)
        torch.cuda.synchronize(); t0 = time.perf_counter()
        for i in range(steps):
            j = perm[i * batch:(i + 1) * batch]
            x, y = prep(xtr[j]), ytr[j]
            with torch.autocast("cuda", dtype=torch.bfloat16, enabled=math == "bf16"):
                out = net(x)
                loss = F.cross_entropy(out.float(), y)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            loss_sum += loss.detach() * batch
            correct += (out.argmax(1) == y).sum()
        torch.cuda.synchronize(); dt = time.perf_counter() - t0
        net.eval()
        hits = 0
        with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16, enabled=math == "bf16"):
            for i in range(0, xte.shape[0], batch):
                hits += (net(prep(xte[i:i + batch])).argmax(1) == yte[i:i + batch]).sum().item()
        n = steps * batch
        print(f"{name},{size},{math},{e},{dt:.3f},{loss_sum.item() / n:.4f},{correct.item() / n:.4f},"
              f"{hits / xte.shape[0]:.4f}", flush=True)


if __name__ == "__main__":
    main()
