/* gpt2_bench.c — `build/gpt2_bench`: the engine's GPT-2 training step (forward, backward, AdamW with clipping) on one
 * GPU, the model alone (`scaling --model gpt2` trains it on a corpus): tokens/s and MFU as tools/torch/torch_gpt2.py
 * reports them.
 *
 *   build/gpt2_bench [SIZE] [BATCH] [SEQ] [STEPS]      (default: small 16 1024 20)
 *
 * Random tokens (throughput only), bf16 activations with fp32 master weights, the attention the model picks
 * (cuDNN's fused one where it plans; stderr says when the plain one runs instead). The step runs eagerly,
 * then captured in a CUDA graph and replayed: three bursts of STEPS steps each way, timed by CUDA events; the median
 * burst's step, and the bursts' range. MFU: (6 N + 12 L T d) FLOPs a token, N the parameters without the position
 * embedding, against 989.4 TFLOP/s of dense bf16 (an H200's), as the PyTorch script counts it. */
#include "engine/gpt2/gpt2_model.h"
#include "engine/gpu.h"
#include "engine/graph.h"
#include "engine/check.h"
#include "engine/rng.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    gpt2_model_t *m;
    optim_t *o;
    const int *tok, *tgt;
    cudaStream_t s;
} step_t;

static void train_step(void *ctx, const void *arg) {
    (void)arg;
    step_t *x = ctx;
    gpt2_model_step(x->m, x->tok, x->tgt, x->o, x->s);
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Three bursts of `steps` steps (graph: replayed from one capture): each burst's ms a step, sorted, into ms[3]. */
static void bursts(step_t *x, graph_seg_t *seg, int graph, int steps, double ms[3]) {
    cudaEvent_t a, b;
    CHECK_CUDA(cudaEventCreate(&a));
    CHECK_CUDA(cudaEventCreate(&b));
    for (int k = 0; k < 3; k++) {
        CHECK_CUDA(cudaEventRecord(a, x->s));
        for (int i = 0; i < steps; i++) graph_seg_run(seg, x->s, graph, train_step, x, NULL);
        CHECK_CUDA(cudaEventRecord(b, x->s));
        CHECK_CUDA(cudaEventSynchronize(b));
        float t;
        CHECK_CUDA(cudaEventElapsedTime(&t, a, b));
        ms[k] = t / steps;
    }
    qsort(ms, 3, sizeof *ms, cmp_double);
    CHECK_CUDA(cudaEventDestroy(a));
    CHECK_CUDA(cudaEventDestroy(b));
}

int main(int argc, char **argv) {
    const char *size = argc > 1 ? argv[1] : "small";
    int B = argc > 2 ? atoi(argv[2]) : 16, T = argc > 3 ? atoi(argv[3]) : 1024, steps = argc > 4 ? atoi(argv[4]) : 20;
    const gpt2_shape_t *sh = gpt2_shape(size);
    if (!sh || B < 1 || T < 2 || T > sh->context || steps < 1) {
        fprintf(stderr, "usage: gpt2_bench [tiny|small|medium|large|xl] [BATCH] [SEQ <= context] [STEPS]\n");
        return 2;
    }
    gpu_t g;
    gpu_init(&g, 0, MATH_BF16);
    gpt2_model_t m;
    const gpt2_adamw_cfg_t cfg = GPT2_ADAMW_RECIPE(0.1f);
    char err[256] = "";
    if (gpt2_model_init(&m, sh, B, T, DTYPE_BF16, 0, &g, &cfg, err, sizeof err) != 0) {
        fprintf(stderr, "gpt2_bench: %s\n", err);
        return 1;
    }
    gpt2_model_init_params(&m, 1, g.stream);
    /* random tokens, the targets the next ones */
    size_t n = (size_t)B * T;
    int *h = malloc((n + 1) * sizeof *h), *tok, *tgt;
    if (!h) { fprintf(stderr, "gpt2_bench: out of host memory\n"); return 1; }
    rng_t r;
    rng_seed(&r, 7);
    for (size_t i = 0; i <= n; i++) h[i] = (int)rng_below(&r, (uint32_t)sh->vocab);
    CHECK_ALLOC(cudaMalloc((void **)&tok, n * sizeof *tok));
    CHECK_ALLOC(cudaMalloc((void **)&tgt, n * sizeof *tgt));
    CHECK_CUDA(cudaMemcpy(tok, h, n * sizeof *tok, cudaMemcpyHostToDevice));
    CHECK_CUDA(cudaMemcpy(tgt, h + 1, n * sizeof *tgt, cudaMemcpyHostToDevice));
    optim_t o;
    lr_schedule_t sched = {LR_CONSTANT, 6e-4, 0, 0};
    if (optim_init(&o, OPTIM_ADAMW, 0.0f, 0.0f, &sched, 1, NULL, err, sizeof err) != 0) {
        fprintf(stderr, "gpt2_bench: optim_init: %s\n", err);
        return 1;
    }
    CHECK_CUDA(cudaDeviceSynchronize());
    step_t x = {&m, &o, tok, tgt, g.stream};
    graph_seg_t seg;
    memset(&seg, 0, sizeof seg);
    double N = (double)gpt2_shape_params(sh) - (double)sh->context * sh->width;   /* the params column */
    double flops_tok = gpt2_shape_flops_per_token(sh, T);
    printf("variant,batch,seq,params,tokens_per_s,step_ms,step_ms_min,step_ms_max,mfu,loss,device_bytes\n");
    for (int graph = 0; graph <= 1; graph++) {
        for (int i = 0; i < 3; i++) graph_seg_run(&seg, g.stream, graph, train_step, &x, NULL);   /* warm-up */
        double ms[3];
        bursts(&x, &seg, graph, steps, ms);
        float loss = gpt2_model_loss(&m, g.stream);
        double tok_s = n / (ms[1] * 1e-3);
        printf("engine-%s-bf16,%d,%d,%.0f,%.0f,%.2f,%.2f,%.2f,%.3f,%.4f,%zu\n", graph ? "graph" : "eager", B, T, N,
               tok_s, ms[1], ms[0], ms[2], tok_s * flops_tok / 989.4e12, loss, gpt2_model_bytes(&m));
        fflush(stdout);
    }
    graph_seg_free(&seg);
    optim_free(&o);
    CHECK_CUDA(cudaFree(tok));
    CHECK_CUDA(cudaFree(tgt));
    free(h);
    gpt2_model_free(&m);
    gpu_free(&g);
    return 0;
}
