# Copied unchanged from the project's PyTorch anchors (anchors/torch_ddp_resnet18.py, README of 2026-11-27); what
# it measured is cited in README.md and doc/, and tools/README.md gives the command that reruns each comparison.
"""Reference: the same training in PyTorch, for side-by-side comparison.

PyTorch DistributedDataParallel (one process per GPU, NCCL) training the
d2l ResNet-18 variant on Fashion-MNIST, weak scaling: batch 256 per GPU,
lr 0.1 per GPU (linear scaling rule). Prints one CSV row per
(variant, gpus, epoch) with epoch seconds and test accuracy.

variants: eager-fp32   data on GPU, fp32 (cuDNN TF32 convs, PyTorch default)
          eager-bf16   data on GPU, bf16 autocast, channels_last
          loader-fp32  DataLoader + DistributedSampler from CPU tensors (d2l style)
          compile-fp32 / compile-bf16: as eager, under torch.compile
usage: torch_baseline.py DATA_DIR EPOCHS VARIANTS GPUS [resnet18|lenet]
"""
import gzip, os, sys, time, struct
import numpy as np
import torch, torch.nn as nn, torch.nn.functional as F
import torch.distributed as dist
import torch.multiprocessing as mp


def load_idx(path):
    with gzip.open(path, "rb") as f:
        data = f.read()
    magic = struct.unpack(">I", data[:4])[0]
    nd = magic & 0xFF
    dims = struct.unpack(">" + "I" * nd, data[4:4 + 4 * nd])
    return np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * nd).reshape(dims)


class Residual(nn.Module):
    def __init__(self, cin, cout, use_1x1conv=False, strides=1):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, padding=1, stride=strides)
        self.conv2 = nn.Conv2d(cout, cout, 3, padding=1)
        self.conv3 = nn.Conv2d(cin, cout, 1, stride=strides) if use_1x1conv else None
        self.bn1 = nn.BatchNorm2d(cout)
        self.bn2 = nn.BatchNorm2d(cout)

    def forward(self, x):
        y = F.relu(self.bn1(self.conv1(x)))
        y = self.bn2(self.conv2(y))
        if self.conv3 is not None:
            x = self.conv3(x)
        return F.relu(y + x)


def resnet18(num_classes=10, cin=1):
    def block(cin, cout, n, first=False):
        blk = []
        for i in range(n):
            if i == 0 and not first:
                blk.append(Residual(cin, cout, use_1x1conv=True, strides=2))
            else:
                blk.append(Residual(cout, cout))
        return nn.Sequential(*blk)
    return nn.Sequential(
        nn.Conv2d(cin, 64, 3, stride=1, padding=1), nn.BatchNorm2d(64), nn.ReLU(),
        block(64, 64, 2, first=True), block(64, 128, 2), block(128, 256, 2), block(256, 512, 2),
        nn.AdaptiveAvgPool2d((1, 1)), nn.Flatten(), nn.Linear(512, num_classes))


def lenet(num_classes=10):
    return nn.Sequential(nn.Conv2d(1, 20, 5), nn.ReLU(), nn.MaxPool2d(2, 2), nn.Conv2d(20, 50, 5), nn.ReLU(),
                         nn.MaxPool2d(2, 2), nn.Flatten(), nn.Linear(800, 512), nn.ReLU(), nn.Linear(512, num_classes))


def worker(rank, world, variant, epochs, data_dir, out_q, model_name="resnet18"):
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29533")
    dist.init_process_group("nccl", rank=rank, world_size=world)
    torch.cuda.set_device(rank)
    dev = torch.device("cuda", rank)
    torch.manual_seed(0)
    torch.backends.cudnn.benchmark = True
    Xtr = torch.from_numpy(load_idx(f"{data_dir}/train-images-idx3-ubyte.gz").copy()).float().div_(255).unsqueeze(1)
    ytr = torch.from_numpy(load_idx(f"{data_dir}/train-labels-idx1-ubyte.gz").astype(np.int64))
    Xte = torch.from_numpy(load_idx(f"{data_dir}/t10k-images-idx3-ubyte.gz").copy()).float().div_(255).unsqueeze(1)
    yte = torch.from_numpy(load_idx(f"{data_dir}/t10k-labels-idx1-ubyte.gz").astype(np.int64))
    bs = 256 if model_name == "resnet18" else 64
    lr = 0.1 * world
    net = (resnet18() if model_name == "resnet18" else lenet()).to(dev)
    for m in net.modules():
        if isinstance(m, (nn.Linear, nn.Conv2d)):
            if model_name == "resnet18":
                nn.init.normal_(m.weight, std=0.01)
            else:
                nn.init.xavier_uniform_(m.weight, gain=2.24 ** 0.5)
    bf16 = variant.endswith("bf16")
    cl = bf16
    if cl:
        net = net.to(memory_format=torch.channels_last)
    model = nn.parallel.DistributedDataParallel(net, device_ids=[rank])
    if variant.startswith("compile"):
        model = torch.compile(model)
    opt = torch.optim.SGD(model.parameters(), lr=lr)
    loss_fn = nn.CrossEntropyLoss()
    if variant == "loader-fp32":
        ds = torch.utils.data.TensorDataset(Xtr, ytr)
        sampler = torch.utils.data.distributed.DistributedSampler(ds, world, rank, shuffle=True)
        loader = torch.utils.data.DataLoader(ds, batch_size=bs, sampler=sampler, num_workers=4,
                                             pin_memory=True, drop_last=True, persistent_workers=True)
    else:
        Xg, yg = Xtr.to(dev), ytr.to(dev)
        if cl:
            Xg = Xg.contiguous(memory_format=torch.channels_last)
    Xte_g, yte_g = Xte.to(dev), yte.to(dev)
    n_per = Xtr.shape[0] // world
    for ep in range(epochs):
        model.train()
        torch.cuda.synchronize(); dist.barrier()
        t0 = time.perf_counter()
        if variant == "loader-fp32":
            sampler.set_epoch(ep)
            batches = ((x.to(dev, non_blocking=True), y.to(dev, non_blocking=True)) for x, y in loader)
        else:
            g = torch.Generator(device="cpu"); g.manual_seed(ep)
            perm = torch.randperm(Xtr.shape[0], generator=g)[rank * n_per:(rank + 1) * n_per].to(dev)
            batches = ((Xg[perm[i:i + bs]], yg[perm[i:i + bs]]) for i in range(0, n_per - bs + 1, bs))
        for x, y in batches:
            with torch.autocast("cuda", dtype=torch.bfloat16, enabled=bf16):
                loss = loss_fn(model(x), y)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
        torch.cuda.synchronize(); dist.barrier()
        t = time.perf_counter() - t0
        model.eval()
        correct = 0
        with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16, enabled=bf16):
            for i in range(0, Xte_g.shape[0], 1000):
                correct += (net(Xte_g[i:i + 1000]).argmax(1) == yte_g[i:i + 1000]).sum().item()
        if rank == 0:
            out_q.put((variant, world, ep + 1, t, correct / Xte_g.shape[0]))
    dist.destroy_process_group()


def main():
    data_dir = sys.argv[1]
    epochs = int(sys.argv[2])
    variants = sys.argv[3].split(",")
    gpus = [int(g) for g in sys.argv[4].split(",")]
    model_name = sys.argv[5] if len(sys.argv) > 5 else "resnet18"
    ctx = mp.get_context("spawn")
    print("model,variant,gpus,epoch,epoch_s,test_acc,images_per_s", flush=True)
    port = 29533
    for v in variants:
        for w in gpus:
            if w > torch.cuda.device_count():
                continue
            q = ctx.Queue()
            port += 1
            os.environ["MASTER_PORT"] = str(port)
            procs = [ctx.Process(target=worker, args=(r, w, v, epochs, data_dir, q, model_name)) for r in range(w)]
            for p in procs: p.start()
            for p in procs: p.join()
            while not q.empty():
                v_, w_, ep, t, acc = q.get()
                b = 256 if model_name == "resnet18" else 64
                imgs = (60000 // w // b) * b * w
                print(f"{model_name},{v_},{w_},{ep},{t:.3f},{acc:.4f},{imgs / t:.0f}", flush=True)


if __name__ == "__main__":
    main()
