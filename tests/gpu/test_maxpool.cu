/* test_maxpool.cu — max pooling's own kernels (engine/layers/pool.cu) where test_layers' random inputs do not reach:
 * windows full of exact ties (ReLU zeros) routed to the first maximum as layer_ref.h does, with the last maximum as a
 * negative control that must fail; NaN propagation; an evaluation forward leaving the training batch's winners to
 * its backward; the 16-byte and one-channel paths (C, alignment); bitwise reruns and CUDA-graph replays.
 * Run: ./test_maxpool [seed]  |  ./test_maxpool --bench (ours vs cuDNN at ResNet-50's stem pool; not a test).
 * Exits 77 without a CUDA device, after the host-side checks. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include "gpu_test.h"
#include "bf16_ref.h"
#include "layer_ref.h"
#include "engine/layer.h"
#include "engine/gpu.h"
#include "engine/check.h"
#include "engine/layers/cudnn_util.h"
#include "dev_io.h"
#include "ref_check.h"

/* dx in fp32: each cell sums at most ceil(k / stride)^2 values of dy (9 here) plus beta dx, against double. */
#define TOL 1e-5
#define TOL_BF16 (BF16_U + TOL)     /* dx in bf16: rounded once on its way out (test_layers.cu) */


/* Bit for bit, NaN payloads aside: y is a copy of one of x's values, so nothing but the exact value will do. */
static void check_same(const char *name, const char *tensor, const float *got, const float *want, size_t n) {
    size_t bad = 0, first = 0;
    for (size_t i = 0; i < n; i++)
        if (!(got[i] == want[i] || (isnan(got[i]) && isnan(want[i]))) && !bad++) first = i;
    printf("%-4s %-40s %-22s bitwise (%zu of %zu differ)\n", bad ? "FAIL" : "ok", name, tensor, bad, n);
    if (bad) printf("       first at %zu: got %.9g want %.9g\n", first, got[first], want[first]);
    EXPECT(bad == 0, "%s %s: %zu of %zu elements differ", name, tensor, bad, n);
}

enum { RULE_FIRST = 0, RULE_LAST = 1 };

/* Max pooling by the kernels' rule (RULE_FIRST: the first maximum in row-major window order; a NaN beats any number
 * and the first NaN the later ones) or by the negative control's (RULE_LAST: the last maximum). y may be NULL; the
 * winners' dx accumulates dy, in double where dx is given and in fp32 where dx32 is, in window order (oh, then ow),
 * the order both backward kernels promise. Without NaN, RULE_FIRST is layer_ref.h's ref_maxpool. */
static void mp_ref(const layer_t *l, int rule, const float *x, const float *dy, float *y, double *dx, float *dx32) {
    shape_t in = l->in_shape[0], out = l->out_shape;
    int k = l->cfg.k, st = l->cfg.stride, pad = l->cfg.pad;
    for (int n = 0; n < out.n; n++)
        for (int oh = 0; oh < out.h; oh++)
            for (int ow = 0; ow < out.w; ow++)
                for (int c = 0; c < out.c; c++) {
                    size_t best = (size_t)-1;
                    float m = -INFINITY;
                    for (int r = 0; r < k; r++)
                        for (int s = 0; s < k; s++) {
                            int ih = oh * st - pad + r, iw = ow * st - pad + s;
                            if (ih < 0 || ih >= in.h || iw < 0 || iw >= in.w) continue;
                            size_t xi = at(in, n, ih, iw, c);
                            float v = x[xi];
                            int take = best == (size_t)-1 ? 1 : rule == RULE_LAST ? v >= m
                                                                                  : v > m || (isnan(v) && !isnan(m));
                            if (take) {
                                m = v;
                                best = xi;
                            }
                        }
                    size_t o = at(out, n, oh, ow, c);
                    if (y) y[o] = m;
                    if (dx) dx[best] += dy[o];
                    if (dx32) dx32[best] += dy[o];
                }
}

// --- a maxpool layer bound to device buffers

typedef struct {
    const char *name;
    shape_t in;
    int k, stride, pad;
    int misalign;       // elements past an aligned address the tensors start at: the 16-byte path must be refused
} mp_case_t;

typedef struct {
    layer_t l;
    dtype_t t;
    size_t nin, nout;
    void *base[4];      // x, y, dy, dx as allocated
    char name[96];      // the case's name, "[bf16] " first in bf16: every check line's label
} rig_t;

static void rig_make(rig_t *r, gpu_t *g, const mp_case_t *c, dtype_t t) {
    memset(r, 0, sizeof *r);
    snprintf(r->name, sizeof r->name, "%s%s", t == DTYPE_BF16 ? "[bf16] " : "", c->name);
    layer_t *l = &r->l;
    l->ops = &layer_maxpool_ops;
    l->cfg.k = c->k;
    l->cfg.stride = c->stride;
    l->cfg.pad = c->pad;
    snprintf(l->label, sizeof l->label, "%s", c->name);
    l->n_in = 1;
    l->in_shape[0] = c->in;
    char err[256] = "";
    if (l->ops->out_shape(l, &l->out_shape, err, sizeof err) != 0) {
        fprintf(stderr, "%s: out_shape: %s\n", c->name, err);
        exit(1);
    }
    l->dtype = r->t = t;
    r->nin = shape_numel(c->in);
    r->nout = shape_numel(l->out_shape);
    size_t n[4] = {r->nin, r->nout, r->nout, r->nin};
    void *p[4];
    for (int i = 0; i < 4; i++) {
        CHECK_CUDA(cudaMalloc(&r->base[i], (n[i] + (size_t)c->misalign) * dtype_size(t)));
        p[i] = (char *)r->base[i] + (size_t)c->misalign * dtype_size(t);
    }
    l->x[0] = p[0];
    l->y = p[1];
    l->dy = p[2];
    l->dx[0] = p[3];
    l->ops->setup(l, g);
}

static void rig_free(rig_t *r) {
    r->l.ops->destroy(&r->l);
    for (int i = 0; i < 4; i++) CHECK_CUDA(cudaFree(r->base[i]));
}

/* x, dy, dx's prior (pass 1) or poison (pass 0), y poisoned: the state every run of a pass starts from. */
static void rig_prepare(rig_t *r, const float *hx, const float *hdy, const float *hdx0, int pass) {
    upload((void *)r->l.x[0], hx, r->nin, r->t);
    upload((void *)r->l.dy, hdy, r->nout, r->t);
    poison(r->l.y, r->nout, r->t);
    r->l.dx_beta[0] = (float)pass;
    if (pass) upload(r->l.dx[0], hdx0, r->nin, r->t);
    else poison(r->l.dx[0], r->nin, r->t);
}

static void rig_step(rig_t *r, gpu_t *g) {
    r->l.ops->forward(&r->l, g, 1);
    r->l.ops->backward(&r->l, g, 0.0f);
}

// --- the cases

/* Whole windows of exact ties, as after a ReLU: half the cells 0, the rest one of three values exact in bf16. Per
 * pass: y bit for bit; an evaluation forward on other data (its y checked too) between the training forward and the
 * backward; dx overwritten (pass 0) or accumulated (pass 1) against ref_maxpool, against the last-maximum rule as the
 * control, and bit for bit against fp32 sums in window order (ResNet's 3x3/2/1 kernel and the general one promise
 * the same bits); then the same step rerun and replayed from a CUDA graph, bit for bit. */
static void test_ties(gpu_t *g, rng_t *rng, const mp_case_t *c, dtype_t t) {
    rig_t r;
    rig_make(&r, g, c, t);
    const char *name = r.name;
    layer_t *l = &r.l;
    size_t nin = r.nin, nout = r.nout;
    printf("---- %s: in (%d, %d, %d, %d) -> out (%d, %d, %d, %d)\n", name, c->in.n, c->in.h, c->in.w, c->in.c,
           l->out_shape.n, l->out_shape.h, l->out_shape.w, l->out_shape.c);
    float *hx = falloc(nin), *hx2 = falloc(nin), *hdy = falloc(nout), *hdx0 = falloc(nin);
    float *y_ref = falloc(nout), *y2_ref = falloc(nout), *y_got = falloc(nout), *dx_got = falloc(nin);
    float *y_again = falloc(nout), *dx_again = falloc(nin);
    for (size_t i = 0; i < nin; i++) hx[i] = rng_uniform(rng) < 0.5 ? 0.0f : 0.25f * (float)(1 + rng_below(rng, 3));
    for (size_t i = 0; i < nin; i++) hx2[i] = (float)(2.0 * rng_uniform(rng) - 1.0);
    for (size_t i = 0; i < nout; i++) hdy[i] = (float)(2.0 * rng_uniform(rng) - 1.0);
    for (size_t i = 0; i < nin; i++) hdx0[i] = (float)(2.0 * rng_uniform(rng) - 1.0);
    round_to(hx2, nin, t);
    round_to(hdy, nout, t);
    round_to(hdx0, nin, t);

    ref_t ref;
    memset(&ref, 0, sizeof ref);
    ref.x[0] = hx;
    ref.dy = hdy;
    ref.y = dalloc(nout);
    ref.dx[0] = dalloc(nin);
    ref_maxpool(l, 1, &ref);
    for (size_t i = 0; i < nout; i++) y_ref[i] = (float)ref.y[i];
    double *last = dalloc(nin), *scratch = dalloc(nin), *want = dalloc(nin), *wrong = dalloc(nin);
    mp_ref(l, RULE_LAST, hx, hdy, NULL, last, NULL);
    mp_ref(l, RULE_FIRST, hx2, hdy, y2_ref, scratch, NULL);
    float *sum32 = falloc(nin), *bits = falloc(nin);
    memset(sum32, 0, nin * sizeof(float));
    mp_ref(l, RULE_FIRST, hx, hdy, NULL, NULL, sum32);
    size_t tied = 0;   // input cells whose gradient the tie rule decides
    for (size_t i = 0; i < nin; i++) tied += ref.dx[0][i] != last[i];
    printf("     %zu of %zu input cells get a different gradient under the last-maximum rule\n", tied, nin);

    double tol = t == DTYPE_BF16 ? TOL_BF16 : TOL;
    for (int pass = 0; pass < 2; pass++) {
        char tn[48];
        rig_prepare(&r, hx, hdy, hdx0, pass);
        l->ops->forward(l, g, 1);
        CHECK_CUDA(cudaStreamSynchronize(g->stream));
        download(y_got, l->y, nout, t);
        if (pass == 0) check_same(name, "y", y_got, y_ref, nout);
        upload((void *)l->x[0], hx2, nin, t);
        poison(l->y, nout, t);
        l->ops->forward(l, g, 0);
        CHECK_CUDA(cudaStreamSynchronize(g->stream));
        download(y_got, l->y, nout, t);
        if (pass == 0) check_same(name, "y (evaluation, other x)", y_got, y2_ref, nout);
        upload((void *)l->x[0], hx, nin, t);
        l->ops->backward(l, g, 0.0f);
        CHECK_CUDA(cudaStreamSynchronize(g->stream));
        download(dx_got, l->dx[0], nin, t);
        for (size_t i = 0; i < nin; i++) {
            want[i] = ref.dx[0][i] + pass * (double)hdx0[i];
            wrong[i] = last[i] + pass * (double)hdx0[i];
        }
        snprintf(tn, sizeof tn, "dx(beta=%d)", pass);
        check(name, tn, dx_got, want, nin, tol);
        control(name, "dx to the last maximum", dx_got, want, wrong, nin, tol);
        /* Bit for bit: fp32 sums in window order, beta dx added with one rounding, then the output's type. */
        for (size_t i = 0; i < nin; i++) bits[i] = pass ? sum32[i] + hdx0[i] : sum32[i];
        round_to(bits, nin, t);
        snprintf(tn, sizeof tn, "dx(beta=%d) fp32 order", pass);
        check_same(name, tn, dx_got, bits, nin);

        /* The same step again, eagerly and as a CUDA graph: the gather adds in a fixed order, so the same bits. */
        rig_prepare(&r, hx, hdy, hdx0, pass);
        rig_step(&r, g);
        CHECK_CUDA(cudaStreamSynchronize(g->stream));
        download(dx_again, l->dx[0], nin, t);
        download(y_again, l->y, nout, t);
        int same = memcmp(dx_again, dx_got, nin * sizeof(float)) == 0 &&
                   memcmp(y_again, y_ref, nout * sizeof(float)) == 0;
        printf("%-4s %-40s %-22s bitwise (pass %d)\n", same ? "ok" : "FAIL", name, "rerun", pass);
        EXPECT(same, "%s: a second run with the same inputs differs (pass %d)", name, pass);
        rig_prepare(&r, hx, hdy, hdx0, pass);
        cudaGraph_t graph;
        cudaGraphExec_t exec;
        CHECK_CUDA(cudaStreamBeginCapture(g->stream, cudaStreamCaptureModeThreadLocal));
        rig_step(&r, g);
        CHECK_CUDA(cudaStreamEndCapture(g->stream, &graph));
        CHECK_CUDA(cudaGraphInstantiate(&exec, graph, 0));
        CHECK_CUDA(cudaGraphLaunch(exec, g->stream));
        CHECK_CUDA(cudaStreamSynchronize(g->stream));
        download(dx_again, l->dx[0], nin, t);
        download(y_again, l->y, nout, t);
        same = memcmp(dx_again, dx_got, nin * sizeof(float)) == 0 && memcmp(y_again, y_ref, nout * sizeof(float)) == 0;
        printf("%-4s %-40s %-22s bitwise (pass %d)\n", same ? "ok" : "FAIL", name, "graph = eager", pass);
        EXPECT(same, "%s: the CUDA graph's outputs differ from eager ones (pass %d)", name, pass);
        CHECK_CUDA(cudaGraphExecDestroy(exec));
        CHECK_CUDA(cudaGraphDestroy(graph));
    }
    rig_free(&r);
    free(hx); free(hx2); free(hdy); free(hdx0); free(y_ref); free(y2_ref); free(y_got); free(dx_got);
    free(y_again); free(dx_again); free(ref.y); free(ref.dx[0]); free(last); free(scratch); free(want); free(wrong);
    free(sum32); free(bits);
}

/* About one cell in twelve NaN, so that some windows hold two: y NaN wherever its window holds one, the gradient to
 * the first NaN; elsewhere the ordinary rule. */
static void test_nan(gpu_t *g, rng_t *rng, const mp_case_t *c, dtype_t t) {
    rig_t r;
    rig_make(&r, g, c, t);
    const char *name = r.name;
    layer_t *l = &r.l;
    size_t nin = r.nin, nout = r.nout;
    float *hx = falloc(nin), *hdy = falloc(nout), *y_ref = falloc(nout), *y_got = falloc(nout), *dx_got = falloc(nin);
    for (size_t i = 0; i < nin; i++) hx[i] = rng_below(rng, 12) == 0 ? NAN : (float)(2.0 * rng_uniform(rng) - 1.0);
    for (size_t i = 0; i < nout; i++) hdy[i] = (float)(2.0 * rng_uniform(rng) - 1.0);
    round_to(hx, nin, t);
    round_to(hdy, nout, t);
    double *want = dalloc(nin);
    mp_ref(l, RULE_FIRST, hx, hdy, y_ref, want, NULL);
    size_t nan_out = 0;
    for (size_t i = 0; i < nout; i++) nan_out += isnan(y_ref[i]);
    printf("---- %s: %zu of %zu windows hold a NaN\n", name, nan_out, nout);
    EXPECT(nan_out > 0 && nan_out < nout, "%s: %zu of %zu windows hold a NaN: no test", name, nan_out, nout);
    rig_prepare(&r, hx, hdy, NULL, 0);
    rig_step(&r, g);
    CHECK_CUDA(cudaStreamSynchronize(g->stream));
    download(y_got, l->y, nout, t);
    download(dx_got, l->dx[0], nin, t);
    check_same(name, "y (NaN where one is)", y_got, y_ref, nout);
    check(name, "dx (to the first NaN)", dx_got, want, nin, t == DTYPE_BF16 ? TOL_BF16 : TOL);
    rig_free(&r);
    free(hx); free(hdy); free(y_ref); free(y_got); free(dx_got); free(want);
}

/* Windows up to 16 x 16 (the winner's place is kept in one byte); a larger one is refused with a message. */
static void test_host_side(void) {
    layer_t l;
    memset(&l, 0, sizeof l);
    l.ops = &layer_maxpool_ops;
    l.n_in = 1;
    shape_t in = {1, 20, 20, 4};
    l.in_shape[0] = in;
    char err[256] = "";
    shape_t s;
    l.cfg.k = l.cfg.stride = 16;
    EXPECT(l.ops->out_shape(&l, &s, err, sizeof err) == 0 && s.h == 1, "maxpool k=16 refused: %s", err);
    l.cfg.k = l.cfg.stride = 17;
    err[0] = 0;
    int refused = l.ops->out_shape(&l, &s, err, sizeof err) == -1 && err[0];
    printf("%-4s maxpool k=17 refused: \"%s\"\n", refused ? "ok" : "FAIL", err);
    EXPECT(refused, "maxpool k=17 accepted");
}

// --- --bench: ours against cuDNN's CUDNN_POOLING_MAX_DETERMINISTIC (what the layer ran before) at ResNet-50's stem

enum { BENCH_WARM = 3, BENCH_REPS = 15, BENCH_BURST = 10 };

typedef struct {
    cudnnTensorDescriptor_t x_desc, y_desc;
    cudnnPoolingDescriptor_t pool;
} cudnn_pool_t;

typedef struct { rig_t *r; gpu_t *g; const cudnn_pool_t *cp; int what; } bench_call_t;

/* One call of what: 0 our forward, 1 our backward, 2 cuDNN's forward, 3 cuDNN's backward. */
static void bench_call(void *ctx) {
    const bench_call_t *b = (const bench_call_t *)ctx;
    layer_t *l = &b->r->l;
    gpu_t *g = b->g;
    const cudnn_pool_t *cp = b->cp;
    if (b->what == 0) l->ops->forward(l, g, 1);
    else if (b->what == 1) l->ops->backward(l, g, 0.0f);
    else if (b->what == 2)
        CHECK_CUDNN(cudnnPoolingForward(g->cudnn, cp->pool, &CU_ONE, cp->x_desc, l->x[0], &CU_ZERO, cp->y_desc, l->y));
    else
        CHECK_CUDNN(cudnnPoolingBackward(g->cudnn, cp->pool, &CU_ONE, cp->y_desc, l->y, cp->y_desc, l->dy, cp->x_desc,
                                         l->x[0], &CU_ZERO, cp->x_desc, l->dx[0]));
}

/* Microseconds per call of what (time_burst_us). */
static float bench_time(rig_t *r, gpu_t *g, const cudnn_pool_t *cp, int what) {
    bench_call_t b = {r, g, cp, what};
    return time_burst_us(g->stream, BENCH_WARM, BENCH_REPS, BENCH_BURST, bench_call, &b);
}

static int bench(void) {
    cudaDeviceProp prop;
    CHECK_CUDA(cudaGetDeviceProperties(&prop, 0));
    printf("# bench_maxpool: %s, cuDNN %zu, k3 s2 p1, per call: median of %d reps of %d calls after %d warm-up\n",
           prop.name, cudnnGetVersion(), BENCH_REPS, BENCH_BURST, BENCH_WARM);
    printf("# bytes: forward reads x and writes y and the winners (1 byte per output); backward reads dy and the\n"
           "# winners and writes dx. cuDNN's GB/s are counted with the same bytes (time is the comparison).\n");
    printf("%-16s %-5s %-6s %9s %8s %9s %8s\n", "shape", "dtype", "impl", "fwd_us", "fwd_GB/s", "bwd_us", "bwd_GB/s");
    for (int bf = 1; bf >= 0; bf--) {
        dtype_t t = bf ? DTYPE_BF16 : DTYPE_FP32;
        gpu_t g;
        gpu_init(&g, 0, bf ? MATH_BF16 : MATH_FP32);
        mp_case_t c = {"bench", {256, 112, 112, 64}, 3, 2, 1, 0};
        rig_t r;
        rig_make(&r, &g, &c, t);
        layer_t *l = &r.l;
        gpu_fill_uniform(&g, (void *)l->x[0], t, r.nin, 11u, -1.0f, 1.0f);
        gpu_fill_uniform(&g, (void *)l->dy, t, r.nout, 12u, -1.0f, 1.0f);
        l->dx_beta[0] = 0.0f;
        cudnn_pool_t cp;
        cp.x_desc = cudnn_nhwc_desc(c.in, t);
        cp.y_desc = cudnn_nhwc_desc(l->out_shape, t);
        CHECK_CUDNN(cudnnCreatePoolingDescriptor(&cp.pool));
        CHECK_CUDNN(cudnnSetPooling2dDescriptor(cp.pool, CUDNN_POOLING_MAX_DETERMINISTIC, CUDNN_PROPAGATE_NAN, 3, 3, 1,
                                                1, 2, 2));
        double es = (double)dtype_size(t), bf_bytes = (r.nin + r.nout) * es + r.nout,
               bb_bytes = (r.nout + r.nin) * es + r.nout;
        float t_ours[2], t_cudnn[2];
        t_ours[0] = bench_time(&r, &g, &cp, 0);
        t_ours[1] = bench_time(&r, &g, &cp, 1);
        float *y_ours = falloc(r.nout), *y_cudnn = falloc(r.nout), *dx_ours = falloc(r.nin), *dx_cudnn = falloc(r.nin);
        download(y_ours, l->y, r.nout, t);
        download(dx_ours, l->dx[0], r.nin, t);
        t_cudnn[0] = bench_time(&r, &g, &cp, 2);
        t_cudnn[1] = bench_time(&r, &g, &cp, 3);
        download(y_cudnn, l->y, r.nout, t);
        download(dx_cudnn, l->dx[0], r.nin, t);
        for (int impl = 0; impl < 2; impl++) {
            const float *tm = impl ? t_cudnn : t_ours;
            printf("%-16s %-5s %-6s %9.1f %8.0f %9.1f %8.0f\n", "256x112x112x64", bf ? "bf16" : "fp32",
                   impl ? "cudnn" : "own", tm[0], bf_bytes / tm[0] / 1e3, tm[1], bb_bytes / tm[1] / 1e3);
        }
        size_t y_diff = 0, dx_diff = 0;
        for (size_t i = 0; i < r.nout; i++) y_diff += memcmp(&y_ours[i], &y_cudnn[i], sizeof(float)) != 0;
        for (size_t i = 0; i < r.nin; i++) dx_diff += memcmp(&dx_ours[i], &dx_cudnn[i], sizeof(float)) != 0;
        printf("# %s: y differs from cuDNN's in %zu of %zu elements, dx in %zu of %zu (ties cuDNN may route "
               "elsewhere)\n", bf ? "bf16" : "fp32", y_diff, r.nout, dx_diff, r.nin);
        free(y_ours); free(y_cudnn); free(dx_ours); free(dx_cudnn);
        cudnn_tensor_desc_free(&cp.x_desc);
        cudnn_tensor_desc_free(&cp.y_desc);
        CHECK_CUDNN(cudnnDestroyPoolingDescriptor(cp.pool));
        rig_free(&r);
        gpu_free(&g);
    }
    return 0;
}

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    test_host_side();
    gpu_test_require(1);
    if (argc > 1 && strcmp(argv[1], "--bench") == 0) return bench();
    unsigned long long seed = gpu_test_seed(argc, argv, "test_maxpool");
    rng_t rng;
    rng_seed(&rng, seed);

    /* C = 16: 16-byte accesses in fp32 and bf16; C = 3 and a misaligned start: one channel a thread. k3 s1: nine
     * windows cover a cell; k2 s3: some cells lie in none, and still get dx = beta dx. */
    static const mp_case_t ties[] = {
        {"maxpool ties k3 s2 p1 c16 (stem)", {2, 15, 15, 16}, 3, 2, 1, 0},
        {"maxpool ties k3 s2 p1 c16 even", {2, 14, 14, 16}, 3, 2, 1, 0},
        {"maxpool ties k3 s2 p1 c3", {3, 11, 11, 3}, 3, 2, 1, 0},
        {"maxpool ties k3 s2 p1 c16 misaligned", {2, 15, 15, 16}, 3, 2, 1, 1},
        {"maxpool ties k3 s2 p0 c16 (3x3 stride 2, not ResNet's kernel)", {2, 15, 15, 16}, 3, 2, 0, 0},
        {"maxpool ties k2 s2 c8 (LeNet)", {3, 12, 12, 8}, 2, 2, 0, 0},
        {"maxpool ties k3 s1 p1 c8", {2, 9, 9, 8}, 3, 1, 1, 0},
        {"maxpool ties k2 s3 c8", {2, 10, 10, 8}, 2, 3, 0, 0},
    };
    static const mp_case_t nans[] = {
        {"maxpool NaN k3 s2 p1 c16", {2, 15, 15, 16}, 3, 2, 1, 0},
        {"maxpool NaN k3 s2 p1 c3", {2, 11, 11, 3}, 3, 2, 1, 0},
    };
    for (int bf = 0; bf < 2; bf++) {
        gpu_t g;
        gpu_init(&g, 0, bf ? MATH_BF16 : MATH_FP32);
        dtype_t t = bf ? DTYPE_BF16 : DTYPE_FP32;
        for (size_t i = 0; i < sizeof ties / sizeof ties[0]; i++) test_ties(&g, &rng, &ties[i], t);
        for (size_t i = 0; i < sizeof nans / sizeof nans[0]; i++) test_nan(&g, &rng, &nans[i], t);
        gpu_free(&g);
    }
    printf("# seed %llu\n", seed);
    return test_summary();
}
