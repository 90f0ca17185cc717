"""ddp_imagenet.py — PyTorch DistributedDataParallel beside `scaling --strategy nccl`: torchvision's ResNet-50/101 on
synthetic 224x224 data resident on the GPU, one process per GPU (NCCL), bf16 autocast, channels_last, SGD momentum
0.9 (lr 0.1, no weight decay, as our runs), a fixed batch per GPU (weak scaling), DDP's defaults (25 MiB buckets,
fp32 gradients on the wire) with gradients as bucket views.

Adapted from the comparison program ../shared/anchors/torch_ddp_imagenet.py (the same model, data, optimizer, warm-up
and timing) with: the spread of the timed bursts in the output, a free port picked by the OS, and PyTorch's version
in every row.

usage: ddp_imagenet.py MODEL BATCH VARIANTS GPUS [STEPS] [REPS]
  VARIANTS: eager-bf16 and/or compile-bf16 (torch.compile over the DDP module: its graph is cut at the buckets)
  GPUS: comma-separated process counts, e.g. 1,4
Prints one CSV row per (variant, gpus): images/s over all GPUs (the median of REPS timed bursts of STEPS steps, each
timed on the slowest rank, after 15 untimed steps that include compilation), its min and max over the bursts, per
GPU, and the median step in ms. Efficiency at N GPUs is images_per_s(N) / (N images_per_s(1)), by step as ours.
"""
import os, socket, statistics, sys
import torch, torch.distributed as dist, torch.multiprocessing as mp, torchvision
import bench_util


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
        bench_util.bf16_step(net, opt, x, y)

    for _ in range(15):
        step()
    torch.cuda.synchronize()
    dist.barrier()
    ts = bench_util.bursts(step, steps, reps)
    if rank == 0:
        q.put(ts)
    dist.destroy_process_group()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


if __name__ == "__main__":
    if len(sys.argv) < 5:
        sys.exit(__doc__)
    model, batch = sys.argv[1], int(sys.argv[2])
    variants, gpus = sys.argv[3].split(","), [int(g) for g in sys.argv[4].split(",")]
    steps = int(sys.argv[5]) if len(sys.argv) > 5 else 30
    reps = int(sys.argv[6]) if len(sys.argv) > 6 else 3
    print("variant,model,gpus,batch_per_gpu,images_per_s,images_per_s_min,images_per_s_max,images_per_s_per_gpu,"
          "step_ms,torch", flush=True)
    for v in variants:
        for n in gpus:
            ctx = mp.get_context("spawn")
            q = ctx.Queue()
            mp.spawn(worker, args=(n, model, batch, v, steps, reps, free_port(), q), nprocs=n, join=True)
            ts = q.get()
            ips = [n * batch * steps / t for t in ts]
            t = statistics.median(ts)
            print(f"{v},{model},{n},{batch},{n * batch * steps / t:.0f},{min(ips):.0f},{max(ips):.0f},"
                  f"{n * batch * steps / t / n:.0f},{1000 * t / steps:.2f},{torch.__version__}", flush=True)
