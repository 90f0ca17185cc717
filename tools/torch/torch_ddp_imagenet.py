# Copied unchanged from the project's PyTorch anchors (anchors/torch_ddp_imagenet.py, README of 2026-11-27); what
# it measured is cited in README.md and doc/, and tools/README.md gives the command that reruns each comparison.
"""PyTorch DDP ResNet-50/101 on synthetic 224x224 data, one process per GPU (NCCL), bf16 autocast + channels_last,
SGD momentum 0.9, batch per GPU fixed (weak scaling). Prints one CSV row per (variant, gpus): total images/s
(median of REPS timed bursts of STEPS steps, slowest rank), per GPU, step ms.
usage: torch_ddp_imagenet.py MODEL BATCH VARIANTS GPUS [STEPS] [REPS]   variants: eager-bf16, compile-bf16"""
import os, sys, time, statistics
import torch, torch.nn.functional as F, torch.distributed as dist, torch.multiprocessing as mp, torchvision

def worker(rank, n, model, batch, variant, steps, reps, port, q):
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", rank=rank, world_size=n, device_id=torch.device("cuda", rank))
    torch.backends.cudnn.benchmark = True
    m = getattr(torchvision.models, model)(num_classes=1000).cuda().to(memory_format=torch.channels_last)
    ddp = torch.nn.parallel.DistributedDataParallel(m, device_ids=[rank], gradient_as_bucket_view=True)
    net = torch.compile(ddp) if variant.startswith("compile") else ddp
    opt = torch.optim.SGD(m.parameters(), lr=0.1, momentum=0.9)
    g = torch.Generator(device="cuda").manual_seed(rank)
    x = torch.randn(batch, 3, 224, 224, device="cuda", generator=g).to(memory_format=torch.channels_last)
    y = torch.randint(0, 1000, (batch,), device="cuda", generator=g)
    def step():
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = F.cross_entropy(net(x), y)
        loss.backward(); opt.step(); opt.zero_grad(set_to_none=True)
    for _ in range(15): step()
    torch.cuda.synchronize(); dist.barrier()
    ts = []
    for _ in range(reps):
        torch.cuda.synchronize(); dist.barrier(); t = time.perf_counter()
        for _ in range(steps): step()
        torch.cuda.synchronize(); dt = torch.tensor([time.perf_counter() - t], device="cuda")
        dist.all_reduce(dt, op=dist.ReduceOp.MAX); ts.append(dt.item())
    if rank == 0: q.put(statistics.median(ts))
    dist.destroy_process_group()

if __name__ == "__main__":
    model, batch, variants, gpus = sys.argv[1], int(sys.argv[2]), sys.argv[3].split(","), [int(g) for g in sys.argv[4].split(",")]
    steps = int(sys.argv[5]) if len(sys.argv) > 5 else 30
    reps = int(sys.argv[6]) if len(sys.argv) > 6 else 3
    print("variant,model,gpus,batch_per_gpu,images_per_s,images_per_s_per_gpu,step_ms", flush=True)
    port = 29600
    for v in variants:
        for n in gpus:
            ctx = mp.get_context("spawn"); q = ctx.Queue(); port += 1
            mp.spawn(worker, args=(n, model, batch, v, steps, reps, port, q), nprocs=n, join=True)
            t = q.get(); ips = n * batch * steps / t
            print(f"{v},{model},{n},{batch},{ips:.0f},{ips/n:.0f},{1000*t/steps:.2f}", flush=True)
