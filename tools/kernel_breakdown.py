# kernel_breakdown.py — per-step GPU kernel time by category from `nsys stats --report cuda_gpu_kern_sum --format csv`
# output: python3 tools/kernel_breakdown.py KERN.csv STEPS LABEL [TOP]
import csv, sys, re
rows = [r for r in csv.reader(open(sys.argv[1])) if len(r) > 5]
h = rows[0]; ti = h.index("Total Time (ns)"); ni = h.index("Name"); ci = h.index("Instances")
steps = float(sys.argv[2])
tot = sum(float(r[ti]) for r in rows[1:])
print(f"== {sys.argv[3]}: GPU kernel time {tot/1e6/steps:.3f} ms per step ({steps:.0f} steps)")
cats = {}
def cat(n):
    # ours: bn_nhwc.cu's four passes (and the mask bits' fallback), bn_nhwc_persist.cu's two, conv_gemm.cu's im2col
    # (the stem's forward copy)
    for k, pat in (("conv fprop", r"fprop|convolve|implicit_convolve|ImplicitGemm|im2col"), ("conv dgrad", r"dgrad"), ("conv wgrad", r"wgrad"),
                   ("batch norm", r"batchnorm|bn_|fwd_stats_kernel|fwd_apply_kernel|bwd_reduce_kernel|bwd_apply_kernel|bits_from_y|persist_fwd_kernel|persist_bwd_kernel"), ("pooling", r"pooling|maxpool_|gap_"), ("gemm/gemv (dense, bias grads)", r"gemm|gemv|nvjet|splitK|Kernel2"),
                   ("element-wise (bias, add, relu, casts)", r"op_generic|bias_add|acc_f32|activation|f32_to_bf16|cast"), ("sgd", r"sgd"),
                   ("gather/loss", r"gather|softmax")):
        if re.search(pat, n): return k
    return "other"
for r in rows[1:]:
    c = cat(r[ni]); cats[c] = cats.get(c, 0) + float(r[ti])
for c, t in sorted(cats.items(), key=lambda x: -x[1]): print(f"  {t/1e6/steps:7.3f} ms  {c}")
print("  top kernels:")
for r in sorted(rows[1:], key=lambda r: -float(r[ti]))[:int(sys.argv[4]) if len(sys.argv) > 4 else 10]:
    print(f"  {float(r[ti])/1e6/steps:7.3f} ms {int(r[ci])/steps:5.1f}/step  {r[ni][:120]}")
