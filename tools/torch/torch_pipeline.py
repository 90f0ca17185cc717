"""PyTorch's own pipelining beside ours: torchvision's ResNet-101 (or ResNet-50) cut at the stage boundaries our
pipeline chose, run by torch.distributed.pipelining (PipelineStage, one stage per GPU, one process per GPU over
NCCL) with its GPipe, 1F1B and zero-bubble schedules (ScheduleInterleavedZeroBubble with one stage per rank: ZB-H1,
the B/W split done by autograd), bf16 autocast, channels_last, SGD momentum 0.9, synthetic 224x224 data on the GPUs;
and its one-GPU baseline, eager, at the pipeline's global batch and at a ladder of batches (the fastest is
torchgpipe's baseline). Prints one CSV row per configuration, images/s the median over bursts (the slowest rank's
time per burst).

  torch_pipeline.py --model resnet101 --batch 512 --stages 2,4 --split 2=0,101 --split 4=0,43,99,159 \
      --schedules gpipe,1f1b,zb --micro 4,8 --single 64,128,256,512 [--steps 4] [--reps 3]

--split P=LIST gives our split for P stages (the first layer of every stage, in our layer numbering: stem conv, stem
batch norm, max-pool, then each bottleneck's conv1, bn1, conv2, bn2, conv3, [proj, proj.bn,] bn3, then the pooling
and the dense layer); a cut inside a block carries the shortcut beside the branch, as ours does. Without one the
stages take equal numbers of blocks. Columns: impl, model, schedule, stages, micro_batches, global_batch,
images_per_s, step_ms, split, note.
"""
import argparse, os, queue, statistics, sys, time
from datetime import timedelta
import torch, torch.nn as nn, torch.nn.functional as F, torch.distributed as dist, torch.multiprocessing as mp
import torchvision
import bench_util


# ---- the model as our layer list: one op per layer of ours, each on a state tuple (x) or (branch, shortcut)

class Op(nn.Module):
    """One of our layers: fn(module, *state) -> state tuple; the module holds torchvision's parameters."""
    def __init__(self, fn, mod=None):
        super().__init__()
        self.fn, self.mod = fn, mod

    def forward(self, *state):
        return self.fn(self.mod, *state)


def bottleneck_ops(b):
    ops = [Op(lambda m, x: (m(x), x), b.conv1),                        # conv1; the input becomes the shortcut
           Op(lambda m, y, s: (F.relu(m(y)), s), b.bn1),
           Op(lambda m, y, s: (m(y), s), b.conv2),
           Op(lambda m, y, s: (F.relu(m(y)), s), b.bn2),
           Op(lambda m, y, s: (m(y), s), b.conv3)]
    if b.downsample is not None:
        ops += [Op(lambda m, y, s: (y, m(s)), b.downsample[0]),        # proj
                Op(lambda m, y, s: (y, m(s)), b.downsample[1])]        # proj.bn
    ops.append(Op(lambda m, y, s: (F.relu(m(y) + s),), b.bn3))         # bn3 + add + relu
    return ops


def layer_ops(net):
    ops = [Op(lambda m, x: (m(x),), net.conv1), Op(lambda m, x: (F.relu(m(x)),), net.bn1),
           Op(lambda m, x: (m(x),), net.maxpool)]
    for layer in (net.layer1, net.layer2, net.layer3, net.layer4):
        for b in layer:
            ops += bottleneck_ops(b)
    ops += [Op(lambda m, x: (torch.flatten(m(x), 1),), net.avgpool), Op(lambda m, x: (m(x),), net.fc)]
    return ops


class Stage(nn.Module):
    """Our layers [a, b) under bf16 autocast: tensors in, a tensor or a tuple out (two across a cut inside a block)."""
    def __init__(self, ops):
        super().__init__()
        self.ops = nn.ModuleList(ops)

    def forward(self, *state):
        with torch.autocast("cuda", dtype=torch.bfloat16):
            for op in self.ops:
                state = op(*state)
        return state[0] if len(state) == 1 else state


def even_split(ops, p):
    """Equal numbers of our layers per stage, each cut moved to the nearest layer that takes one tensor (no cut
    inside a block)."""
    n = len(ops)
    cut_ok = [k for k in range(1, n) if ops[k].fn.__code__.co_argcount == 2]
    return [0] + [min(cut_ok, key=lambda c: abs(c - round(k * n / p))) for k in range(1, p)]


def loss_fn(logits, target):
    return F.cross_entropy(logits.float(), target)   # in fp32, as autocast computes a loss


# ---- one process per GPU

def worker(rank, p, args, splits, port, q):
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    torch.cuda.set_device(rank)
    dev = torch.device("cuda", rank)
    # A rank that fails leaves the others in a receive: the deadline ends them (the parent reports it).
    dist.init_process_group("nccl", rank=rank, world_size=p, device_id=dev, timeout=timedelta(seconds=args.timeout))
    from torch.distributed.pipelining import PipelineStage, ScheduleGPipe, Schedule1F1B, ScheduleInterleavedZeroBubble
    torch.backends.cudnn.benchmark = True
    torch.manual_seed(0)
    net = getattr(torchvision.models, args.model)(num_classes=1000).to(dev).to(memory_format=torch.channels_last)
    ops = layer_ops(net)
    starts = splits.get(p) or even_split(ops, p)
    bounds = starts + [len(ops)]
    stage_mod = Stage(ops[bounds[rank]:bounds[rank + 1]])
    g = torch.Generator(device=dev).manual_seed(1)
    x = torch.randn(args.batch, 3, 224, 224, device=dev, generator=g).contiguous(memory_format=torch.channels_last)
    y = torch.randint(0, 1000, (args.batch,), device=dev, generator=g)
    opt = torch.optim.SGD(stage_mod.parameters(), lr=0.1, momentum=0.9)
    kinds = {"gpipe": ScheduleGPipe, "1f1b": Schedule1F1B, "zb": ScheduleInterleavedZeroBubble}
    for sched in args.schedules:
        for m in args.micro:
            # shapes and dtypes of what crosses are inferred from the first micro-batch (PipelineStage's dynamic mode)
            stage = PipelineStage(stage_mod, rank, p, dev)
            s = kinds[sched]([stage] if sched == "zb" else stage, n_microbatches=m, loss_fn=loss_fn)

            def step():
                if rank == 0:
                    s.step(x)
                elif rank == p - 1:
                    s.step(target=y)
                else:
                    s.step()
                opt.step()
                opt.zero_grad(set_to_none=True)
            for _ in range(args.warmup):
                step()
            t = statistics.median(bench_util.bursts(step, args.steps, args.reps))
            if rank == 0:
                q.put((sched, m, args.batch * args.steps / t, t))
            del s, stage
            torch.cuda.empty_cache()
    if rank == 0:
        q.put(None)
    dist.destroy_process_group()


def single(args):
    dev = torch.device("cuda", 0)
    torch.backends.cudnn.benchmark = True
    torch.manual_seed(0)
    net = getattr(torchvision.models, args.model)(num_classes=1000).to(dev).to(memory_format=torch.channels_last)
    opt = torch.optim.SGD(net.parameters(), lr=0.1, momentum=0.9)
    for b in args.single:
        try:
            x = torch.randn(b, 3, 224, 224, device=dev).contiguous(memory_format=torch.channels_last)
            y = torch.randint(0, 1000, (b,), device=dev)

            def step():
                bench_util.bf16_step(net, opt, x, y)
            for _ in range(args.warmup):
                step()
            ts = []
            for _ in range(args.reps):
                torch.cuda.synchronize(); t = time.perf_counter()
                for _ in range(args.steps):
                    step()
                torch.cuda.synchronize(); ts.append(time.perf_counter() - t)
            t = statistics.median(ts)
            row(args, "single", 1, 1, b, b * args.steps / t, 1e3 * t / args.steps, "", "")
        except torch.cuda.OutOfMemoryError:
            row(args, "single", 1, 1, b, 0, 0, "", "out of memory")
        x = y = None
        torch.cuda.empty_cache()


def row(args, sched, p, m, batch, ips, step_ms, split, note):
    print(f"torch,{args.model},{sched},{p},{m},{batch},{ips:.0f},{step_ms:.2f},{split},{note}", flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", default="resnet101", choices=["resnet50", "resnet101"])
    ap.add_argument("--batch", type=int, default=512)
    ap.add_argument("--stages", default="2,4")
    ap.add_argument("--split", action="append", default=[], help="P=a,b,...: our split for P stages")
    ap.add_argument("--schedules", default="gpipe,1f1b,zb")
    ap.add_argument("--micro", default="4,8")
    ap.add_argument("--single", default="64,128,256,512", help="one-GPU batches ('' for none)")
    ap.add_argument("--steps", type=int, default=4)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--timeout", type=int, default=120, help="seconds a rank waits on another before it fails")
    args = ap.parse_args()
    args.schedules = [s for s in args.schedules.split(",") if s]
    args.micro = [int(m) for m in args.micro.split(",") if m]
    args.single = [int(b) for b in args.single.split(",") if b]
    splits = {}
    for sp in args.split:
        k, v = sp.split("=", 1)
        splits[int(k)] = [int(c) for c in v.split(",")]
    print("impl,model,schedule,stages,micro_batches,global_batch,images_per_s,step_ms,split,note", flush=True)
    print(f"# torch {torch.__version__}, torchvision {torchvision.__version__}, {torch.cuda.get_device_name(0)}",
          flush=True)
    if args.single:
        single(args)
    port = 29700
    for p in (int(s) for s in args.stages.split(",") if s):
        if p > torch.cuda.device_count():
            print(f"# {p} stages: only {torch.cuda.device_count()} GPUs", flush=True)
            continue
        ctx = mp.get_context("spawn")
        q = ctx.Queue()
        port += 1
        procs = [ctx.Process(target=worker, args=(r, p, args, splits, port, q)) for r in range(p)]
        for pr in procs:
            pr.start()
        split = ";".join(str(c) for c in splits.get(p, [])) or "even"
        done = set()
        while True:
            try:
                item = q.get(timeout=5)
            except queue.Empty:
                dead = [pr for pr in procs if pr.exitcode not in (None, 0)]
                if not dead:
                    continue
                # a rank failed (PyTorch refused a schedule, or memory): the rest of this stage count is lost
                for pr in procs:
                    pr.terminate()
                for sched in args.schedules:
                    for m in args.micro:
                        if (sched, m) not in done:
                            row(args, sched, p, m, args.batch, 0, 0, split, f"rank exit {dead[0].exitcode}: see stderr")
                break
            if item is None:
                break
            sched, m, ips, t = item
            done.add((sched, m))
            row(args, sched, p, m, args.batch, ips, 1e3 * t / args.steps, split, "")
        for pr in procs:
            pr.join()


if __name__ == "__main__":
    main()
