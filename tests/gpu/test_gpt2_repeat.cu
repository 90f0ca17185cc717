/* test_gpt2_repeat.cu — GPT-2's forward and backward give the same bits every time on the same parameters and tokens:
 * the tiny shape (vocabularies 512 and GPT-2's 50,257), fp32 and bf16, each buffer of the activations (and the
 * gradients) compared on the GPU with the first pass's after each of R passes; a buffer that ever differs is named.
 * Negative control: one token changed is seen. Also the batches the trainer gathers, against the host's windows.
 * Run: ./test_gpt2_repeat [seed] [passes]  (exits 77 without a GPU). */
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
    void *ref[GPT2_ARENAS];          /* the first pass's arenas (flat buffers, activations, scratch) */
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
    for (int a = 0; a < GPT2_ARENAS; a++)
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
    for (int a = 0; a < GPT2_ARENAS; a++) CHECK_CUDA(cudaMalloc(&c.ref[a], c.m.plan.arena_bytes[a]));
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
    for (int a = 0; a < GPT2_ARENAS; a++)
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
    for (int a = 0; a < GPT2_ARENAS; a++) CHECK_CUDA(cudaFree(c.ref[a]));
    CHECK_CUDA(cudaFree(c.dcount));
    CHECK_CUDA(cudaFree(c.dtok));
    CHECK_CUDA(cudaFree(c.dtgt));
    gpt2_model_free(&c.m);
    gpu_free(&c.g);
}

/* The held-out loss of a trainer (engine/gpt2/gpt2_train.h) after K steps of its CUDA graph, E times: the same. */
/* A trainer of the tiny GPT-2 at batch B on GPU 0, on random tokens of vocabulary `vocab` (into *corpus): AdamW at
 * 1e-3, weight decay 0.1. */
static void tiny_trainer(gpt2_train_t *g, tokens_corpus_t *corpus, math_t math, int vocab, int B,
                         unsigned long long seed) {
    tokens_corpus_synthetic(corpus, T, (uint32_t)vocab, seed);
    optim_cfg_t o;
    memset(&o, 0, sizeof o);
    o.kind = OPTIM_ADAMW;
    o.sched.peak = 1e-3;
    char err[512] = "";
    if (gpt2_train_init(g, 0, "tiny", B, B, 0, math, &o, 0.1f, corpus, seed, err, sizeof err)) {
        fprintf(stderr, "%s: %s\n", math_name(math), err);
        exit(1);
    }
}

static void trained_case(math_t math, unsigned long long seed, int E) {
    enum { K = 5, TB = 8 };
    tokens_corpus_t corpus;
    gpt2_train_t g;
    tiny_trainer(&g, &corpus, math, 512, TB, seed);
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

/* Words of n where a and b differ. */
static int words_differ(const int *a, const int *b, int n) {
    int d = 0;
    for (int i = 0; i < n; i++) d += a[i] != b[i];
    return d;
}

/* The trainer's two gathers (engine/gpt2/gpt2_data.h) against the host's windows (tokens_sampler_batch), `times`
 * times each into buffers set to another value first, a forward on other buffers between: its kernels leave their
 * registers behind, and the held-out gather once read a start of theirs in some warps, one launch in about thirty
 * (results/gpt2-heldout-2026-11-29). The training form at device steps 0 and 1 (the epoch's order from its first
 * and its second global batch). Vocabulary 50,257, as the corpus's. Control: the held-out batch one window on is
 * told apart. */
static void gather_case(unsigned long long seed, int times) {
    enum { GB = 16, N = GB * T };
    tokens_corpus_t corpus;
    gpt2_train_t g;
    tiny_trainer(&g, &corpus, MATH_BF16, 50257, GB, seed);
    char err[512] = "";
    gpt2_train_epoch_begin(&g, 1);   /* the step counter 0, the epoch's order uploaded */
    tokens_sampler_t vs;
    if (tokens_sampler_init(&vs, &corpus.val, T, err, sizeof err)) { fprintf(stderr, "%s\n", err); exit(1); }
    int vx[N], vy[N], tx[2][N], ty[2][N], gx[N], gy[N];
    int got = tokens_sampler_batch(&vs, 0, GB, vx, vy) == 0 &&
              tokens_sampler_batch(&g.data.order, 0, GB, tx[0], ty[0]) == 0 &&
              tokens_sampler_batch(&g.data.order, GB, GB, tx[1], ty[1]) == 0;
    EXPECT(got, "gather: the corpus holds fewer than %d windows", 2 * GB);
    if (!got) exit(test_summary());
    int *ft, *fg, *dx, *dy;
    CHECK_CUDA(cudaMalloc(&ft, sizeof gx));
    CHECK_CUDA(cudaMalloc(&fg, sizeof gx));
    CHECK_CUDA(cudaMalloc(&dx, sizeof gx));
    CHECK_CUDA(cudaMalloc(&dy, sizeof gx));
    CHECK_CUDA(cudaMemcpy(dx, vx, sizeof vx, cudaMemcpyHostToDevice));
    CHECK_CUDA(cudaMemcpy(dy, vy, sizeof vy, cudaMemcpyHostToDevice));
    cudaStream_t s = g.gpu.stream;
    int bad[3] = {0, 0, 0}, worst[3] = {0, 0, 0};
    for (int t = 0; t < times; t++)
        for (int form = 0; form < 3; form++) {   /* held-out; training at step 0; training at step 1 */
            const int step = form - 1;
            CHECK_CUDA(cudaMemsetAsync(ft, 0x55, sizeof gx, s));
            CHECK_CUDA(cudaMemsetAsync(fg, 0x55, sizeof gy, s));
            if (form == 0) {
                gpt2_data_val(&g.data, 0, GB, ft, fg, s);
            } else {
                CHECK_CUDA(cudaMemcpyAsync(g.d_step, &step, sizeof step, cudaMemcpyHostToDevice, s));
                gpt2_data_train(&g.data, g.d_step, GB, 0, GB, ft, fg, s);
            }
            CHECK_CUDA(cudaMemcpyAsync(gx, ft, sizeof gx, cudaMemcpyDeviceToHost, s));
            CHECK_CUDA(cudaMemcpyAsync(gy, fg, sizeof gy, cudaMemcpyDeviceToHost, s));
            gpt2_model_forward(&g.m, dx, dy, 0, s);
            CHECK_CUDA(cudaStreamSynchronize(s));
            int d = words_differ(gx, form ? tx[step] : vx, N) + words_differ(gy, form ? ty[step] : vy, N);
            bad[form] += d > 0;
            worst[form] = d > worst[form] ? d : worst[form];
        }
    const char *what[3] = {"the held-out batch", "the training batch at step 0", "the training batch at step 1"};
    for (int form = 0; form < 3; form++)
        EXPECT(bad[form] == 0, "gather: %s differed from the host's in %d of %d launches (at most %d words)",
               what[form], bad[form], times, worst[form]);
    gpt2_data_val(&g.data, 1, GB, ft, fg, s);   /* the control: one window on */
    CHECK_CUDA(cudaMemcpyAsync(gx, ft, sizeof gx, cudaMemcpyDeviceToHost, s));
    CHECK_CUDA(cudaStreamSynchronize(s));
    int control = words_differ(gx, vx, N);
    EXPECT(control > 0, "gather: control: the batch one window on equals the first");
    EXPECT(words_differ(tx[0], tx[1], N) > 0, "gather: control: the order's first two batches are the same");
    printf("gather: %d launches of each form equal the host's windows; control: %d words differ one window on\n",
           times, control);
    int *bufs[] = {ft, fg, dx, dy};
    for (int i = 0; i < 4; i++) CHECK_CUDA(cudaFree(bufs[i]));
    tokens_sampler_free(&vs);
    gpt2_train_free(&g);
    tokens_corpus_free(&corpus);
}

int main(int argc, char **argv) {
    gpu_test_require(1);
    unsigned long long seed = gpu_test_seed(argc, argv, "test_gpt2_repeat");
    int R = argc > 2 ? atoi(argv[2]) : 200;
    gather_case(seed, 400);
    const math_t maths[3] = {MATH_FP32, MATH_TF32, MATH_BF16};
    const int vocabs[2] = {512, 50257};
    for (int i = 0; i < 3; i++) {
        trained_case(maths[i], seed, R / 10 > 2 ? R / 10 : 2);
        for (int j = 0; j < 2; j++) run_case(maths[i], vocabs[j], seed, R);
    }
    return test_summary();
}
