/* test_gpt2_repeat.cu — GPT-2's forward and backward give the same bits every time on the same parameters and tokens:
 * the tiny shape (vocabularies 512 and GPT-2's 50,257), fp32 and bf16, each buffer of the activations (and the
 * gradients) compared on the GPU with the first pass's after each of R passes; a buffer that ever differs is named.
 * Negative control: one token changed is seen. Run: ./test_gpt2_repeat [seed] [passes]  (exits 77 without a GPU);
 * ./test_gpt2_repeat SEED PASSES CORPUS_DIR [gather] is the held-out loss's diagnosis (results/gpt2-heldout-*). */
#include <stdint.h>
#include <string.h>
#include "gpu_test.h"
#include "engine/check.h"
#include "engine/gpu.h"
#include "engine/rng.h"
#include "engine/gpt2/gpt2_model.h"
#include "engine/gpt2/gpt2_train.h"
#include "engine/tokens.h"

enum { B = 16, T = 64, ROWS = B * T };

/* Bytes of a and b that differ, added to *count. */
__global__ static void diff_kernel(const uint32_t *a, const uint32_t *b, size_t n, unsigned long long *count) {
    unsigned long long c = 0;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        c += a[i] != b[i];
    if (c) atomicAdd(count, c);
}

typedef struct {
    gpu_t g;
    gpt2_model_t m;
    int *dtok, *dtgt;
    void *ref[3];                    /* the first pass's arenas (flat buffers, activations, scratch) */
    unsigned long long *dcount;      /* one counter per (kind, index) */
    int n_counts;
} rcase_t;

/* Words of every (kind, index) buffer compared against the reference, counts on the device. */
static void compare(rcase_t *c, unsigned long long *host) {
    const gpt2_plan_t *p = &c->m.plan;
    CHECK_CUDA(cudaMemsetAsync(c->dcount, 0, (size_t)c->n_counts * sizeof *c->dcount, c->g.stream));
    int at = 0;
    for (int k = 0; k < GPT2_BUF_KINDS; k++)
        for (int i = 0; i < p->buf[k].count; i++, at++) {
            size_t off = gpt2_plan_at(p, (gpt2_buf_t)k, i), words = p->buf[k].elems * p->buf[k].elem_bytes / 4;
            const char *now = (const char *)c->m.arena[p->buf[k].arena] + off;
            const char *was = (const char *)c->ref[p->buf[k].arena] + off;
            diff_kernel<<<256, 256, 0, c->g.stream>>>((const uint32_t *)now, (const uint32_t *)was, words,
                                                      c->dcount + at);
            CHECK_LAUNCH();
        }
    CHECK_CUDA(cudaMemcpyAsync(host, c->dcount, (size_t)c->n_counts * sizeof *host, cudaMemcpyDeviceToHost,
                               c->g.stream));
    CHECK_CUDA(cudaStreamSynchronize(c->g.stream));
}

static void pass(rcase_t *c, int grad) {
    gpt2_model_forward(&c->m, c->dtok, c->dtgt, grad, c->g.stream);
    if (grad) gpt2_model_backward(&c->m, c->dtok, c->g.stream);
}

/* R passes; returns the passes with any difference, each differing buffer named once. */
static int repeat(rcase_t *c, const char *name, int grad, int R) {
    const gpt2_plan_t *p = &c->m.plan;
    pass(c, grad);
    for (int a = 0; a < 3; a++)
        CHECK_CUDA(cudaMemcpyAsync(c->ref[a], c->m.arena[a], p->arena_bytes[a], cudaMemcpyDeviceToDevice,
                                   c->g.stream));
    unsigned long long *h = (unsigned long long *)calloc((size_t)c->n_counts, sizeof *h);
    int *seen = (int *)calloc((size_t)c->n_counts, sizeof *seen), bad = 0;
    for (int r = 0; r < R; r++) {
        pass(c, grad);
        compare(c, h);
        int any = 0, at = 0;
        for (int k = 0; k < GPT2_BUF_KINDS; k++)
            for (int i = 0; i < p->buf[k].count; i++, at++) {
                if (!h[at]) continue;
                any = 1;
                if (!seen[at]++)
                    printf("%s: pass %d: %s[%d] differs in %llu words\n", name, r + 1, p->buf[k].name, i, h[at]);
            }
        bad += any;
    }
    free(h);
    free(seen);
    return bad;
}

static void run_case(math_t math, int vocab, unsigned long long seed, int R) {
    rcase_t c;
    memset(&c, 0, sizeof c);
    char err[512] = "", name[64];
    dtype_t t = math_act_dtype(math);
    snprintf(name, sizeof name, "%s, vocabulary %d", math_name(math), vocab);
    gpu_init(&c.g, 0, math);
    gpt2_shape_t s = gpt2_shape_for_vocab(gpt2_shape("tiny"), vocab);
    const gpt2_adamw_cfg_t opt = GPT2_ADAMW_RECIPE(0.1f);
    if (gpt2_model_init(&c.m, &s, B, T, t, t == DTYPE_FP32 && !MATH_INFO[math].strict, &c.g, &opt, err, sizeof err)) {
        fprintf(stderr, "%s: %s\n", name, err);
        exit(1);
    }
    gpt2_model_init_params(&c.m, seed, c.g.stream);
    int tok[ROWS], tgt[ROWS];
    rng_t r;
    rng_seed(&r, seed + 1);
    for (int i = 0; i < ROWS; i++) {
        tok[i] = (int)rng_below(&r, (uint32_t)vocab);
        tgt[i] = i % T == T - 1 && i / T == B - 1 ? -1 : (int)rng_below(&r, (uint32_t)vocab);   /* one row uncounted */
    }
    CHECK_CUDA(cudaMalloc(&c.dtok, sizeof tok));
    CHECK_CUDA(cudaMalloc(&c.dtgt, sizeof tgt));
    CHECK_CUDA(cudaMemcpy(c.dtok, tok, sizeof tok, cudaMemcpyHostToDevice));
    CHECK_CUDA(cudaMemcpy(c.dtgt, tgt, sizeof tgt, cudaMemcpyHostToDevice));
    for (int a = 0; a < 3; a++) CHECK_CUDA(cudaMalloc(&c.ref[a], c.m.plan.arena_bytes[a]));
    for (int k = 0; k < GPT2_BUF_KINDS; k++) c.n_counts += c.m.plan.buf[k].count;
    CHECK_CUDA(cudaMalloc(&c.dcount, (size_t)c.n_counts * sizeof *c.dcount));
    CHECK_CUDA(cudaDeviceSynchronize());

    char label[96];
    snprintf(label, sizeof label, "%s, forward", name);
    int bad = repeat(&c, label, 0, R);
    EXPECT(bad == 0, "%s: %d of %d passes differ from the first", label, bad, R);
    snprintf(label, sizeof label, "%s, forward and backward", name);
    bad = repeat(&c, label, 1, R / 4 > 0 ? R / 4 : 1);
    EXPECT(bad == 0, "%s: %d of %d passes differ from the first", label, bad, R / 4 > 0 ? R / 4 : 1);
    /* the control: one token changed must show (the comparison sees a difference) */
    tok[5] = (tok[5] + 1) % vocab;
    pass(&c, 0);
    for (int a = 0; a < 3; a++)
        CHECK_CUDA(cudaMemcpyAsync(c.ref[a], c.m.arena[a], c.m.plan.arena_bytes[a], cudaMemcpyDeviceToDevice,
                                   c.g.stream));
    CHECK_CUDA(cudaMemcpyAsync(c.dtok, tok, sizeof tok, cudaMemcpyHostToDevice, c.g.stream));
    pass(&c, 0);
    unsigned long long *h = (unsigned long long *)calloc((size_t)c.n_counts, sizeof *h);
    compare(&c, h);
    unsigned long long total = 0;
    for (int i = 0; i < c.n_counts; i++) total += h[i];
    EXPECT(total > 0, "%s: control: a changed token left every buffer equal", name);
    printf("%s: %d passes equal; control: %llu words differ after one token changed\n", name, R, total);
    free(h);
    for (int a = 0; a < 3; a++) CHECK_CUDA(cudaFree(c.ref[a]));
    CHECK_CUDA(cudaFree(c.dcount));
    CHECK_CUDA(cudaFree(c.dtok));
    CHECK_CUDA(cudaFree(c.dtgt));
    gpt2_model_free(&c.m);
    gpu_free(&c.g);
}

/* The held-out loss of a trainer (engine/gpt2/gpt2_train.h) after K steps of its CUDA graph, E times: the same. */
static void trained_case(math_t math, unsigned long long seed, int E) {
    enum { K = 5, TB = 8 };
    tokens_corpus_t corpus;
    tokens_corpus_synthetic(&corpus, T, 512, seed);
    optim_cfg_t o;
    memset(&o, 0, sizeof o);
    o.kind = OPTIM_ADAMW;
    o.sched.peak = 1e-3;
    gpt2_train_t g;
    char err[512] = "";
    if (gpt2_train_init(&g, 0, "tiny", TB, TB, 0, math, &o, 0.1f, &corpus, seed, err, sizeof err)) {
        fprintf(stderr, "%s: %s\n", math_name(math), err);
        exit(1);
    }
    g.use_graph = 1;
    gpt2_train_epoch_begin(&g, 0);
    for (int k = 0; k < K; k++) gpt2_train_step(&g, k);
    double es, ms, loss;
    gpt2_train_epoch_end(&g, K, &es, &ms, &loss);
    double first = gpt2_train_evaluate(&g);
    int differ = 0;
    for (int e = 1; e < E; e++) {
        double h = gpt2_train_evaluate(&g);
        if (h != first) printf("%s, trained: evaluation %d gave %.9g, the first %.9g\n", math_name(math), e, h, first);
        differ += h != first;
    }
    EXPECT(differ == 0, "%s, trained: %d of %d evaluations differ from the first", math_name(math), differ, E - 1);
    printf("%s, trained %d steps: %d evaluations of %d held-out windows, %d differ; held-out %.9g\n",
           math_name(math), K, E, g.data.n_val, differ, first);
    gpt2_train_free(&g);
    tokens_corpus_free(&corpus);
}

/* The diagnosis's trainer: the tiny GPT-2 at 16 x T on the corpus in dir (loaded into *corpus), `steps` steps of epoch
 * 1 taken (graphed or eager); the epoch's training loss. */
static double diag_trainer(const char *dir, math_t math, unsigned long long seed, int steps, int graph,
                           tokens_corpus_t *corpus, gpt2_train_t *g) {
    char err[512] = "";
    if (tokens_corpus_load(corpus, dir, T, err, sizeof err)) { fprintf(stderr, "%s\n", err); exit(1); }
    optim_cfg_t o;
    memset(&o, 0, sizeof o);
    o.kind = OPTIM_ADAMW;
    o.sched.peak = 6e-4;
    o.steps_cap = 20;
    if (gpt2_train_init(g, 0, "tiny", 16, 16, 0, math, &o, 0.1f, corpus, seed, err, sizeof err)) {
        fprintf(stderr, "%s\n", err);
        exit(1);
    }
    g->use_graph = graph;
    gpt2_train_epoch_begin(g, 1);
    for (int k = 0; k < steps; k++) gpt2_train_step(g, k);
    double es, ms, loss = 0;
    if (steps) gpt2_train_epoch_end(g, steps, &es, &ms, &loss);
    return loss;
}

/* A diagnosis between processes, not a check: the tiny model trained 20 steps at 16 x 64 on the corpus in dir, then
 * every full held-out batch's loss sum printed exactly (run it in several processes and compare the lines). */
static void corpus_dump(const char *dir, math_t math, unsigned long long seed) {
    enum { TB = 16, K = 20 };
    tokens_corpus_t corpus;
    gpt2_train_t g;
    char err[512] = "";
    double loss = diag_trainer(dir, math, seed, K, 1, &corpus, &g);
    printf("dump %s: train loss %a, held-out %a\n", math_name(math), loss, gpt2_train_evaluate(&g));
    tokens_sampler_t vs;
    if (tokens_sampler_init(&vs, &corpus.val, T, err, sizeof err)) { fprintf(stderr, "%s\n", err); exit(1); }
    int *x = (int *)malloc(TB * T * sizeof(int)), *y = (int *)malloc(TB * T * sizeof(int)), *dx, *dy;
    CHECK_CUDA(cudaMalloc(&dx, TB * T * sizeof(int)));
    CHECK_CUDA(cudaMalloc(&dy, TB * T * sizeof(int)));
    uint16_t *hv = (uint16_t *)malloc((size_t)corpus.val.n * 2);
    CHECK_CUDA(cudaMemcpy(hv, g.data.d_val, (size_t)corpus.val.n * 2, cudaMemcpyDeviceToHost));
    printf("dump %s: d_val %s the file's\n", math_name(math),
           memcmp(hv, corpus.val.tok, (size_t)corpus.val.n * 2) ? "DIFFERS from" : "equals");
    free(hv);
    printf("dump %s: held-out again %a\n", math_name(math), gpt2_train_evaluate(&g));
    double tot[2] = {0, 0};
    int bad_prefix = 0, bad_again = 0;
    for (int b = 0; b * TB < vs.n_windows; b++) {
        for (int r = 0; r < TB; r++)   /* the last batch's missing rows: token 0, no target (as the trainer's) */
            if (tokens_sampler_batch(&vs, (long long)b * TB + r, 1, x + r * T, y + r * T))
                for (int i = 0; i < T; i++) x[r * T + i] = 0, y[r * T + i] = -1;
        CHECK_CUDA(cudaMemcpy(dx, x, TB * T * sizeof(int), cudaMemcpyHostToDevice));
        CHECK_CUDA(cudaMemcpy(dy, y, TB * T * sizeof(int), cudaMemcpyHostToDevice));
        gpt2_model_forward(&g.m, dx, dy, 0, g.gpu.stream);
        double acc[2];
        CHECK_CUDA(cudaStreamSynchronize(g.gpu.stream));
        CHECK_CUDA(cudaMemcpy(acc, g.m.loss_acc, sizeof acc, cudaMemcpyDeviceToHost));
        printf("dump %s batch %d %a %a\n", math_name(math), b, acc[0], acc[1]);
        tot[0] += acc[0];
        tot[1] += acc[1];
        /* the trainer's evaluation over the first b + 1 batches alone, against these batches' */
        int keep = g.data.n_val;
        g.data.n_val = (b + 1) * TB < keep ? (b + 1) * TB : keep;
        double e = gpt2_train_evaluate(&g);
        g.data.n_val = keep;
        {   /* the trainer's last batch (this one) against the host's */
            int *gx = (int *)malloc(TB * T * sizeof(int)), *gy = (int *)malloc(TB * T * sizeof(int)), nx = 0, ny = 0;
            CHECK_CUDA(cudaMemcpy(gx, g.d_tok, TB * T * sizeof(int), cudaMemcpyDeviceToHost));
            CHECK_CUDA(cudaMemcpy(gy, g.d_tgt, TB * T * sizeof(int), cudaMemcpyDeviceToHost));
            int shown = 0;
            for (int i = 0; i < TB * T; i++) {
                nx += gx[i] != x[i], ny += gy[i] != y[i];
                if ((gx[i] != x[i] || gy[i] != y[i]) && shown++ < 6)
                    printf("  [%d] (row %d col %d): tok %d tgt %d, host %d %d\n", i, i / T, i % T, gx[i], gy[i], x[i],
                           y[i]);
            }
            if (nx || ny) printf("dump %s: batch %d: the trainer's tokens differ in %d, targets in %d\n",
                                 math_name(math), b, nx, ny);
            free(gx);
            free(gy);
            double a2[2];   /* the forward again on the trainer's token buffers */
            gpt2_model_forward(&g.m, g.d_tok, g.d_tgt, 0, g.gpu.stream);
            CHECK_CUDA(cudaStreamSynchronize(g.gpu.stream));
            CHECK_CUDA(cudaMemcpy(a2, g.m.loss_acc, sizeof a2, cudaMemcpyDeviceToHost));
            if (a2[0] != acc[0] && bad_again++ < 5)
                printf("dump %s: batch %d: the forward on the trainer's buffers %a (%g targets), on the host's %a\n",
                       math_name(math), b, a2[0], a2[1], acc[0]);
        }
        if (e != tot[0] / tot[1] && bad_prefix++ < 5)
            printf("dump %s: the first %d batches: evaluation %a, the host's batches %a (batch %d: %a %a)\n",
                   math_name(math), b + 1, e, tot[0] / tot[1], b, acc[0], acc[1]);
    }
    printf("dump %s: held-out from the host's batches %a\n", math_name(math), tot[0] / tot[1]);
    free(x);
    free(y);
    CHECK_CUDA(cudaFree(dx));
    CHECK_CUDA(cudaFree(dy));
    tokens_sampler_free(&vs);
    gpt2_train_free(&g);
    tokens_corpus_free(&corpus);
}

/* Counts, over `times`, how often d_tok holds other than the first windows after: mode 0 the gather (gpt2_data_val) alone;
 * 1 the gather then the forward on d_tok; 2 the gather once, then forwards on other buffers (dx, dy). */
static void stray_check(gpt2_train_t *g, const int *x, int mode, int times, const int *dx, const int *dy) {
    enum { TB = 16 };
    int *gx = (int *)malloc(TB * T * sizeof(int)), wrong = 0, worst = 0;
    cudaStream_t s = g->gpu.stream;
    for (int t = 0; t < times; t++) {
        if (mode < 2 || t == 0) gpt2_data_val(&g->data, 0, TB, g->d_tok, g->d_tgt, s);
        if (mode == 1) gpt2_model_forward(&g->m, g->d_tok, g->d_tgt, 0, s);
        if (mode == 2) gpt2_model_forward(&g->m, dx, dy, 0, s);
        CHECK_CUDA(cudaStreamSynchronize(s));
        CHECK_CUDA(cudaMemcpy(gx, g->d_tok, TB * T * sizeof(int), cudaMemcpyDeviceToHost));
        int n = 0;
        for (int i = 0; i < TB * T; i++) n += gx[i] != x[i];
        wrong += n > 0;
        worst = n > worst ? n : worst;
    }
    printf("stray: mode %d (%s): %d of %d wrong (at most %d)\n", mode,
           mode == 0 ? "the gather alone" : mode == 1 ? "gather, forward on it" : "forwards on other buffers", wrong,
           times, worst);
    free(gx);
}

/* Every device range the trainer holds, and any two that overlap; then the gather once, and forwards on (dx, dy), each
 * followed by a check of d_tok and d_tgt: the first wrong positions, their values, and the wrong positions' span. */
typedef struct { const char *name; const char *p; size_t n; } diag_range_t;

static void addr_check(gpt2_train_t *g, const int *x, const int *dx, const int *dy, int times) {
    enum { TB = 16 };
    gpt2_model_t *m = &g->m;
    diag_range_t r[] = {
        {"d_tok", (const char *)g->d_tok, TB * T * 4}, {"d_tgt", (const char *)g->d_tgt, TB * T * 4},
        {"dx", (const char *)dx, TB * T * 4}, {"dy", (const char *)dy, TB * T * 4},
        {"arena0", (const char *)m->arena[0], m->plan.arena_bytes[0]},
        {"arena1", (const char *)m->arena[1], m->plan.arena_bytes[1]},
        {"arena2", (const char *)m->arena[2], m->plan.arena_bytes[2]},
        {"scratch", (const char *)m->scratch, m->scratch_bytes + 512},
        {"sdpa_ws", (const char *)m->sdpa_ws, m->fused ? m->sdpa.ws_bytes : 0},
        {"cublas_ws", (const char *)g->gpu.cublas_ws, GPU_CUBLAS_WORKSPACE},
        {"workspace", (const char *)g->gpu.workspace, g->gpu.workspace_bytes},
        {"ones32", (const char *)g->gpu.ones[DTYPE_FP32], (size_t)g->gpu.ones_len * 4},
        {"d_train", (const char *)g->data.d_train, 0}, {"d_val", (const char *)g->data.d_val, 0},
        {"d_order", (const char *)g->data.d_order, (size_t)g->data.order.n_windows * 4},
        {"d_step", (const char *)g->d_step, 4}, {"d_loss", (const char *)g->d_loss, 16},
        {"opt.table", (const char *)g->opt.table, 0},
    };
    int n = (int)(sizeof r / sizeof r[0]);
    printf("addr: n_val %d, T %d\n", g->data.n_val, g->data.T);
    for (int i = 0; i < n; i++) printf("addr: %-10s %p + %zu\n", r[i].name, (const void *)r[i].p, r[i].n);
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++)
            if (r[i].p && r[j].p && r[i].n && r[j].n && r[i].p < r[j].p + r[j].n && r[j].p < r[i].p + r[i].n)
                printf("addr: OVERLAP %s and %s\n", r[i].name, r[j].name);
    int *gx = (int *)malloc(TB * T * sizeof(int)), *gy = (int *)malloc(TB * T * sizeof(int));
    cudaStream_t s = g->gpu.stream;
    int *ft, *fg, fresh_bad = 0, fresh_unset = 0;
    CHECK_CUDA(cudaMalloc(&ft, TB * T * sizeof(int)));
    CHECK_CUDA(cudaMalloc(&fg, TB * T * sizeof(int)));
    for (int t = 0; t < times; t++) {
        CHECK_CUDA(cudaMemsetAsync(ft, 0x55, TB * T * sizeof(int), s));
        CHECK_CUDA(cudaMemsetAsync(fg, 0x55, TB * T * sizeof(int), s));
        gpt2_data_val(&g->data, 0, TB, ft, fg, s);
        CHECK_CUDA(cudaStreamSynchronize(s));
        CHECK_CUDA(cudaMemcpy(gx, ft, TB * T * sizeof(int), cudaMemcpyDeviceToHost));
        int nf = 0, nu = 0;
        for (int i = 0; i < TB * T; i++) nf += gx[i] != x[i], nu += gx[i] == 0x55555555;
        if (nf) {
            printf("addr: try %d: fresh buffers %d wrong, %d unwritten; [0] %d\n", t, nf, nu, gx[0]);
            int *gt = (int *)malloc(TB * T * sizeof(int));
            CHECK_CUDA(cudaMemcpy(gt, fg, TB * T * sizeof(int), cudaMemcpyDeviceToHost));
            for (int i = 0, shown = 0; i < TB * T && shown < 24; i += 32)
                if (gx[i] != x[i]) {
                    printf("addr:   warp at %d (block %d): tok %d, row %d (k / T %d)\n", i, i / 256, gx[i], -gt[i] - 2, i / T);
                    shown++;
                }
            free(gt);
        }
        fresh_bad += nf > 0;
        fresh_unset += nu > 0;
        gpt2_data_val(&g->data, 0, TB, g->d_tok, g->d_tgt, s);
        CHECK_CUDA(cudaStreamSynchronize(s));
        for (int f = 0; f < 4; f++) {
            if (f > 0) gpt2_model_forward(m, dx, dy, 0, s);
            CHECK_CUDA(cudaStreamSynchronize(s));
            CHECK_CUDA(cudaMemcpy(gx, g->d_tok, TB * T * sizeof(int), cudaMemcpyDeviceToHost));
            CHECK_CUDA(cudaMemcpy(gy, g->d_tgt, TB * T * sizeof(int), cudaMemcpyDeviceToHost));
            int nw = 0, lo = -1, hi = -1;
            for (int i = 0; i < TB * T; i++)
                if (gx[i] != x[i]) {
                    if (nw++ < 4) printf("addr: try %d after %d forwards: [%d] tok %d (%#x) tgt %d (%#x), file %d\n", t, f,
                                         i, gx[i], (unsigned)gx[i], gy[i], (unsigned)gy[i], x[i]);
                    if (lo < 0) lo = i;
                    hi = i;
                }
            if (nw) {
                printf("addr: try %d after %d forwards: %d wrong in [%d, %d]\n", t, f, nw, lo, hi);
                break;
            }
        }
    }
    printf("addr: fresh buffers wrong in %d of %d tries, unwritten in %d\n", fresh_bad, times, fresh_unset);
    CHECK_CUDA(cudaFree(ft));
    CHECK_CUDA(cudaFree(fg));
    free(gx);
    free(gy);
}

/* The diagnosis's second part: a trainer on dir after `steps` steps (graphed or eager), its evaluation of the first
 * batch alone `times` times; how often the batch it gathered is not the file's first windows. */
static void gather_check(const char *dir, int steps, int graph, int times) {
    enum { TB = 16 };
    tokens_corpus_t corpus;
    gpt2_train_t g;
    diag_trainer(dir, MATH_FP32, 5, steps, graph, &corpus, &g);
    int *x = (int *)malloc(TB * T * sizeof(int)), *gx = (int *)malloc(TB * T * sizeof(int)), wrong = 0, worst = 0;
    for (int r = 0; r < TB; r++)
        for (int i = 0; i < T; i++) x[r * T + i] = corpus.val.tok[(size_t)r * T + i];
    if (steps == 0 && graph) {
        int *dx, *dy;
        CHECK_CUDA(cudaMalloc(&dx, TB * T * sizeof(int)));
        CHECK_CUDA(cudaMalloc(&dy, TB * T * sizeof(int)));
        gpt2_data_val(&g.data, 0, TB, dx, dy, g.gpu.stream);
        if (getenv("DIAG_ADDR")) addr_check(&g, x, dx, dy, atoi(getenv("DIAG_ADDR")));
        else
            for (int mode = 0; mode < 3; mode++) stray_check(&g, x, mode, 400, dx, dy);
        CHECK_CUDA(cudaFree(dx));
        CHECK_CUDA(cudaFree(dy));
    }
    int keep = g.data.n_val;
    for (int t = 0; t < times; t++) {
        g.data.n_val = TB;
        gpt2_train_evaluate(&g);
        g.data.n_val = keep;
        CHECK_CUDA(cudaMemcpy(gx, g.d_tok, TB * T * sizeof(int), cudaMemcpyDeviceToHost));
        int n = 0;
        for (int i = 0; i < TB * T; i++) n += gx[i] != x[i];
        wrong += n > 0;
        worst = n > worst ? n : worst;
    }
    printf("gather: %d steps %s: %d of %d first-batch evaluations gathered other tokens (at most %d)\n", steps,
           graph ? "graphed" : "eager", wrong, times, worst);
    free(x);
    free(gx);
    gpt2_train_free(&g);
    tokens_corpus_free(&corpus);
}

int main(int argc, char **argv) {
    gpu_test_require(1);
    unsigned long long seed = gpu_test_seed(argc, argv, "test_gpt2_repeat");
    int R = argc > 2 ? atoi(argv[2]) : 200;
    if (argc > 3) {   /* the diagnosis: test_gpt2_repeat SEED PASSES CORPUS_DIR */
        if (argc > 4) {
            gather_check(argv[3], 0, 1, 200);
            if (getenv("DIAG_ADDR")) return 0;
            gather_check(argv[3], 20, 0, 200);
            gather_check(argv[3], 20, 1, 200);
            gather_check(argv[3], 2, 1, 200);
            return 0;
        }
        corpus_dump(argv[3], MATH_FP32, seed);
        corpus_dump(argv[3], MATH_BF16, seed);
        return 0;
    }
    const math_t maths[3] = {MATH_FP32, MATH_TF32, MATH_BF16};
    const int vocabs[2] = {512, 50257};
    for (int i = 0; i < 3; i++) {
        trained_case(maths[i], seed, R / 10 > 2 ? R / 10 : 2);
        for (int j = 0; j < 2; j++) run_case(maths[i], vocabs[j], seed, R);
    }
    return test_summary();
}
