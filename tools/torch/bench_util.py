"""bench_util.py — what the project's multi-process PyTorch programs (ddp_imagenet.py, torch_pipeline.py) share: one
bf16-autocast training step, and how a step is timed: bursts of steps with every rank starting together, each burst
the slowest rank's wall time, as a step is over only when every rank's is."""
import time

import torch
import torch.distributed as dist
import torch.nn.functional as F


def bf16_step(net, opt, x, y):
    """One SGD step of net on (x, y): forward and loss under bf16 autocast, backward, update, gradients set to None."""
    with torch.autocast("cuda", dtype=torch.bfloat16):
        loss = F.cross_entropy(net(x), y)
    loss.backward()
    opt.step()
    opt.zero_grad(set_to_none=True)


def bursts(step, steps, reps):
    """Seconds of each of `reps` bursts of `steps` calls of step(), the slowest rank's (an all-reduce of MAX)."""
    ts = []
    for _ in range(reps):
        torch.cuda.synchronize()
        dist.barrier()
        t = time.perf_counter()
        for _ in range(steps):
            step()
        torch.cuda.synchronize()
        dt = torch.tensor([time.perf_counter() - t], device="cuda")
        dist.all_reduce(dt, op=dist.ReduceOp.MAX)
        ts.append(dt.item())
    return ts
