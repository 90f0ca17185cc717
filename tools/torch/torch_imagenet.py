"""PyTorch training throughput of torchvision ResNet-50/101 on synthetic ImageNet-shaped data, one GPU: the comparison
the engine's ImageNet benchmarks print beside their own numbers.

From the project's shared anchors (anchors/torch_imagenet.py, which ran the bf16 variants of
results/imagenet-h200-2026-11-24), with fp16 variants added: fp16 autocast with torch.amp's GradScaler (initial scale
65536, growth 2x after 2000 clean steps, halved and the step skipped on inf/NaN), the optimizer fused SGD so that
the scaler's skip decision stays on the GPU and the step can be captured.
Horovod's and MLPerf's reference workload: autocast + channels_last, SGD momentum 0.9; the step eager, captured in
one CUDA graph (graph-*), or torch.compile'd then captured (cgraph-*: PyTorch's fastest).

usage: torch_imagenet.py MODEL BATCH VARIANTS [STEPS]  -> CSV model,variant,batch,img_per_s,step_ms
VARIANTS: comma-separated {eager,graph,cgraph}-{bf16,fp16}; a variant that fails prints a row with its error.
"""
import sys, time
import torch, torch.nn as nn, torchvision


def run(model_name, bs, variant, steps):
    kind, _, prec = variant.partition("-")
    dtype = {"bf16": torch.bfloat16, "fp16": torch.float16}[prec or "bf16"]
    dev = torch.device("cuda", 0)
    torch.manual_seed(0)
    torch.backends.cudnn.benchmark = True
    net = getattr(torchvision.models, model_name)(num_classes=1000).to(dev).to(memory_format=torch.channels_last)
    fp16 = dtype == torch.float16
    opt = torch.optim.SGD(net.parameters(), lr=0.1, momentum=0.9, fused=fp16)
    scaler = torch.amp.GradScaler("cuda", init_scale=65536.0, growth_factor=2.0, backoff_factor=0.5,
                                  growth_interval=2000) if fp16 else None
    loss_fn = nn.CrossEntropyLoss()
    x = torch.randn(bs, 3, 224, 224, device=dev).contiguous(memory_format=torch.channels_last)
    y = torch.randint(0, 1000, (bs,), device=dev)
    model = torch.compile(net) if kind == "cgraph" else net

    def step():
        with torch.autocast("cuda", dtype=dtype, cache_enabled=False):
            loss = loss_fn(model(x), y)
        if scaler:
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()
        else:
            loss.backward()
            opt.step()
        opt.zero_grad(set_to_none=False)

    s = torch.cuda.Stream(); s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3):
            step()
    torch.cuda.current_stream().wait_stream(s)
    run_once = step
    if kind in ("graph", "cgraph"):
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            step()
        run_once = g.replay
    for _ in range(5):
        run_once()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(steps):
        run_once()
    torch.cuda.synchronize()
    dt = (time.perf_counter() - t0) / steps
    print(f"{model_name},{variant},{bs},{bs / dt:.0f},{dt * 1e3:.2f}", flush=True)


if __name__ == "__main__":
    print("model,variant,batch,img_per_s,step_ms", flush=True)
    steps = int(sys.argv[4]) if len(sys.argv) > 4 else 30
    for v in sys.argv[3].split(","):
        try:
            run(sys.argv[1], int(sys.argv[2]), v, steps)
        except Exception as e:  # one variant's failure (a capture the scaler refuses) costs that row only
            print(f"{sys.argv[1]},{v},{sys.argv[2]},,,{type(e).__name__}: {str(e)[:120]!r}", flush=True)
        torch._dynamo.reset()
        torch.cuda.empty_cache()
