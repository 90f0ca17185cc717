/* test_gpt2_model.c — the whole GPT-2 (engine/gpt2/gpt2_model.h) against the CPU double reference of
 * gpt2_model_ref.h, in strict fp32 and in bf16, on the tiny shape with 509 of its 512 token rows real (so the head's
 * padding counts), a batch of 3 x 40 tokens: the initialisation's upload; the loss and every parameter's gradient
 * (negative controls: the residual dropped, the tied head's gradient without the embedding's part, the residual
 * stream's gradient overwritten, no causal mask); deterministic gradients; one AdamW step (and the next forward
 * reading the new bf16 copy); 20 steps on one repeated batch from GPT-2's initialisation following the reference's
 * loss curve down; and the step captured in a CUDA graph giving the eager step's loss and gradients.
 * Run: ./test_gpt2_model [seed]   (fresh random inputs each run, seed printed; exits 77 without a CUDA device) */
#include <string.h>
#include "gpt2_model_ref.h"
#include "engine/gpt2/gpt2_model.h"
#include "engine/gpu.h"
#include "engine/graph.h"
#include "engine/optim.h"

enum { B = 3, T = 40, ROWS = B * T, STEPS = 20 };
static const gpt2_adamw_cfg_t OPT = GPT2_ADAMW_RECIPE(0.1f);
#define LR_ONE 1e-3      /* the one-step check's rate */
#define LR_LEARN 3e-3    /* the learning check's: the reference falls from 6.2 to about 2.0 in 20 steps */

/* fp32: every product strict fp32 (cuBLAS pedantic, cuBLASLt's 32F compute), rounding 2^-24 per operation over sums
 * of at most 512 terms through two blocks: about 1e-6 relative; 1e-5 on the loss and 1e-4 on the gradients leave
 * 10x. bf16: the CPU reference run with every activation rounded where the GPU stores it in bf16
 * (REF_ROUND_BF16) differs from the exact one by at most 1.7e-4 on the loss and 1.4e-2 on any gradient over 20 seeds;
 * 2e-3 and 5e-2 leave 3x to 10x for what that emulation leaves out (fp32 arithmetic, the fused epilogues' one
 * rounding). The gradient controls are 0.7 to 5 apart. */
#define TOL_LOSS_FP32 1e-5
#define TOL_GRAD_FP32 1e-4
#define TOL_LOSS_BF16 2e-3
#define TOL_GRAD_BF16 5e-2
/* The update, judged by p - p0 as test_gpt2_adamw does: fp32 arithmetic on both sides of the same gradients. */
#define TOL_DELTA 1e-4
/* The loss curve: 20 steps compound every difference; the bf16 emulation stays within 1.2e-3 of exact. */
#define TOL_CURVE_FP32 1e-3
#define TOL_CURVE_BF16 1e-2

typedef struct {
    dtype_t t;
    gpu_t g;
    gpt2_model_t m;
    gpt2_mref_t r;
    size_t N;
    int tok[ROWS], tgt[ROWS];
    int *dtok, *dtgt;
    char name[48];
} tcase_t;

static double tol_loss(dtype_t t) { return t == DTYPE_BF16 ? TOL_LOSS_BF16 : TOL_LOSS_FP32; }
static double tol_grad(dtype_t t) { return t == DTYPE_BF16 ? TOL_GRAD_BF16 : TOL_GRAD_FP32; }

/* The reference with flags: the loss, and the gradient into grad. */
static double ref_run(tcase_t *c, int flags, const double *p, double *grad) {
    gpt2_mref_t r = c->r;
    r.flags = flags;
    return gpt2_mref_run(&r, p, c->tok, c->tgt, grad);
}

// --- the initialisation lands as gpt2_layout_init draws it

static void test_init(tcase_t *c, unsigned long long seed) {
    cudaStream_t s = c->g.stream;
    gpt2_model_init_params(&c->m, seed, s);
    float *want = falloc(c->N), *got = falloc(c->N);
    gpt2_layout_init(&c->m.shape, seed, want, c->N);
    download(got, c->m.params, c->N, DTYPE_FP32);
    EXPECT(memcmp(got, want, c->N * sizeof(float)) == 0, "%s: the parameters differ from gpt2_layout_init's", c->name);
    if (c->t == DTYPE_BF16) {
        download(got, c->m.params_lp, c->N, DTYPE_BF16);
        size_t bad = 0;
        for (size_t i = 0; i < c->N; i++) bad += got[i] != bf16_ref_round(want[i]);
        EXPECT(bad == 0, "%s: %zu of the bf16 copy differ from their parameter's rounding", c->name, bad);
    }
    printf("ok   [%s] initialisation uploaded as drawn (seed %llu)\n", c->name, seed);
    free(want), free(got);
}

// --- loss and gradients against the reference

static void test_grads(tcase_t *c, const float *p0) {
    cudaStream_t s = c->g.stream;
    dtype_t t = c->t;
    size_t N = c->N;
    char name[80];
    gpt2_model_set_params(&c->m, p0, s);
    gpt2_model_forward(&c->m, c->dtok, c->dtgt, 1, s);
    gpt2_model_backward(&c->m, c->dtok, s);
    float loss = gpt2_model_loss(&c->m, s), *got = falloc(N), *again = falloc(N);
    download(got, c->m.grads, N, DTYPE_FP32);
    double *p = gpt2_widen(p0, N), *g = dalloc(N), *gw = dalloc(N);
    double rl = ref_run(c, 0, p, g);
    snprintf(name, sizeof name, "[%s] loss", c->name);
    check(name, "mean cross-entropy", &loss, &rl, 1, tol_loss(t));
    double wrong = ref_run(c, REF_DROP_RESIDUAL, p, NULL);
    control(name, "residual dropped", &loss, &rl, &wrong, 1, tol_loss(t));
    wrong = ref_run(c, REF_NO_CAUSAL, p, NULL);
    control(name, "no causal mask", &loss, &rl, &wrong, 1, tol_loss(t));

    snprintf(name, sizeof name, "[%s] gradient", c->name);
    for (int k = 0; k < c->r.n_sl; k++) {
        const gpt2_slice_t *sl = &c->r.sl[k];
        char tensor[40];
        if (sl->layer < 0) snprintf(tensor, sizeof tensor, "%s", gpt2_tensor_name(sl->kind));
        else snprintf(tensor, sizeof tensor, "h%d %s", sl->layer, gpt2_tensor_name(sl->kind));
        check(name, tensor, got + sl->at, g + sl->at, sl->len, tol_grad(t));
    }
    /* The controls, each on the tensor its mistake shows in first. */
    const gpt2_slice_t *wte = gpt2_layout_find(c->r.sl, c->r.n_sl, GPT2_WTE, -1);
    const gpt2_slice_t *wpe = gpt2_layout_find(c->r.sl, c->r.n_sl, GPT2_WPE, -1);
    const gpt2_slice_t *qkv = gpt2_layout_find(c->r.sl, c->r.n_sl, GPT2_QKV_W, 0);
    const gpt2_slice_t *ln1 = gpt2_layout_find(c->r.sl, c->r.n_sl, GPT2_LN1_W, 0);
    const struct { int flags; const gpt2_slice_t *sl; const char *what; } ctl[] = {
        {REF_UNTIED_GRAD, wte, "wte: the head's part alone"},
        {REF_GRAD_OVERWRITE, wpe, "wpe: residual grad overwritten"},
        {REF_NO_CAUSAL, qkv, "h0 qkv.w: no causal mask"},
        {REF_DROP_RESIDUAL, ln1, "h0 ln1.w: residual dropped"},
    };
    for (int k = 0; k < 4; k++) {
        ref_run(c, ctl[k].flags, p, gw);
        control(name, ctl[k].what, got + ctl[k].sl->at, g + ctl[k].sl->at, gw + ctl[k].sl->at, ctl[k].sl->len,
                tol_grad(t));
    }
    /* Exactly 0: the head's padding rows (their logits are outside the loss) and the positions past T. */
    size_t nz = 0;
    for (size_t i = (size_t)c->m.shape.vocab * c->m.shape.width; i < wte->len; i++) nz += got[wte->at + i] != 0.0f;
    for (size_t i = (size_t)T * c->m.shape.width; i < wpe->len; i++) nz += got[wpe->at + i] != 0.0f;
    EXPECT(nz == 0, "%s: %zu gradients of padding rows or unused positions are not 0", c->name, nz);
    /* Deterministic: the same step again gives the same bits (no atomics in any gradient). */
    gpt2_model_forward(&c->m, c->dtok, c->dtgt, 1, s);
    gpt2_model_backward(&c->m, c->dtok, s);
    CHECK_CUDA(cudaStreamSynchronize(s));
    download(again, c->m.grads, N, DTYPE_FP32);
    EXPECT(memcmp(got, again, N * sizeof(float)) == 0, "%s: two backward passes differ", c->name);
    printf("%-4s [%s] gradients deterministic (two passes bit for bit)\n", memcmp(got, again, N * 4) ? "FAIL" : "ok",
           c->name);
    /* Backward in unit ranges from the top down (data parallelism's buckets) is the whole backward, bit for bit,
     * however the ranges fall, an empty one included; control: ranges that stop above the embeddings (the last)
     * leave their gradients out. */
    int U = GPT2_UNITS(c->m.shape.layers);
    const int tilings[][6] = {{U, U - 1, 1, 0, -1}, {U, U, U - 2, 0, -1}, {U, 1, 0, -1}, {U, U - 1, 1, -1}};
    for (int k = 0; k < 4; k++) {
        CHECK_CUDA(cudaMemsetAsync(c->m.grads, 0, N * sizeof(float), s));
        gpt2_model_forward(&c->m, c->dtok, c->dtgt, 1, s);
        char cut[32] = "";
        for (int j = 0; tilings[k][j + 1] >= 0; j++) {
            gpt2_model_backward_units(&c->m, c->dtok, tilings[k][j + 1], tilings[k][j], s);
            snprintf(cut + strlen(cut), sizeof cut - strlen(cut), "%s[%d,%d)", j ? " " : "", tilings[k][j + 1],
                     tilings[k][j]);
        }
        CHECK_CUDA(cudaStreamSynchronize(s));
        download(again, c->m.grads, N, DTYPE_FP32);
        int same = memcmp(got, again, N * sizeof(float)) == 0, skips = k == 3;
        printf("%-4s [%s] backward over units %s: %s\n", same != skips ? "ok" : "FAIL", c->name, cut,
               same ? "the whole backward's bits" : "differs");
        EXPECT(same != skips, "%s: backward over units %s %s the whole backward", c->name, cut,
               skips ? "(a control that skips units) gives" : "is not");
    }
    /* The control left the embeddings' gradients out: the whole backward again, for the update below to read. */
    gpt2_model_forward(&c->m, c->dtok, c->dtgt, 1, s);
    gpt2_model_backward(&c->m, c->dtok, s);

    /* One AdamW step from the GPU's own gradients: Adam's first step is lr * sign(g) wherever |g| >> eps, so a
     * gradient the model makes 0 (the key bias's: softmax ignores a constant added to every score) would flip whole
     * steps on rounding noise if the reference stepped from its own. */
    optim_t o;
    gpt2_test_optim(&o, LR_ONE, 1);
    gpt2_model_update(&c->m, &o, s);
    double lr = optim_lr_read(&o, s);
    float *p1 = falloc(N), *dgot = falloc(N);
    download(p1, c->m.params, N, DTYPE_FP32);
    double *pr = gpt2_widen(p0, N), *pd = gpt2_widen(p0, N), *gg = gpt2_widen(got, N), *mm = dalloc(N);
    double *vv = dalloc(N), *dref = dalloc(N), *dnod = dalloc(N);
    gpt2_mref_adamw(&c->r, pr, mm, vv, gg, lr, 1, OPT.beta1, OPT.beta2, OPT.eps, OPT.weight_decay, OPT.max_norm);
    memset(mm, 0, N * sizeof *mm), memset(vv, 0, N * sizeof *vv);
    gpt2_mref_adamw(&c->r, pd, mm, vv, gg, lr, 1, OPT.beta1, OPT.beta2, OPT.eps, 0.0, OPT.max_norm);
    size_t pad_moved = 0, n = 0;
    unsigned char *in = (unsigned char *)calloc(N, 1);
    for (int k = 0; k < c->r.n_sl; k++) memset(in + c->r.sl[k].at, 1, c->r.sl[k].len);
    for (size_t i = 0; i < N; i++) {
        if (!in[i]) { pad_moved += p1[i] != 0.0f; continue; }
        dgot[n] = (float)((double)p1[i] - p0[i]);
        dref[n] = pr[i] - p0[i];
        dnod[n++] = pd[i] - p0[i];
    }
    snprintf(name, sizeof name, "[%s] one AdamW step", c->name);
    check(name, "p - p0", dgot, dref, n, TOL_DELTA);
    control(name, "no weight decay", dgot, dref, dnod, n, TOL_DELTA);
    EXPECT(pad_moved == 0, "%s: the update moved %zu padding elements", c->name, pad_moved);
    if (t == DTYPE_BF16) {
        download(again, c->m.params_lp, N, DTYPE_BF16);
        size_t bad = 0;
        for (size_t i = 0; i < N; i++) bad += again[i] != bf16_ref_round(p1[i]);
        EXPECT(bad == 0, "%s: %zu of the bf16 copy are not their updated parameter's rounding", c->name, bad);
    }
    /* the next forward reads the updated parameters (the bf16 copy under bf16) */
    gpt2_model_forward(&c->m, c->dtok, c->dtgt, 0, s);
    float after = gpt2_model_loss(&c->m, s);
    double ra = ref_run(c, 0, pr, NULL), stale = rl;
    check(name, "the next loss", &after, &ra, 1, tol_loss(t));
    control(name, "the parameters before it", &after, &ra, &stale, 1, tol_loss(t));
    optim_free(&o);
    free(got), free(again), free(p), free(g), free(gw), free(p1), free(dgot), free(pr), free(pd), free(gg), free(mm);
    free(vv), free(dref), free(dnod), free(in);
}

// --- a repeated batch is learned, as the reference learns it

static void test_learn(tcase_t *c, unsigned long long seed) {
    cudaStream_t s = c->g.stream;
    size_t N = c->N;
    optim_t o;
    gpt2_test_optim(&o, LR_LEARN, 1);
    gpt2_model_init_params(&c->m, seed, s);
    float loss[STEPS + 1];
    for (int k = 0; k <= STEPS; k++) {
        gpt2_model_forward(&c->m, c->dtok, c->dtgt, 1, s);
        loss[k] = gpt2_model_loss(&c->m, s);
        if (k == STEPS) break;
        gpt2_model_backward(&c->m, c->dtok, s);
        gpt2_model_update(&c->m, &o, s);
    }
    double lr = optim_lr_read(&o, s);
    float *p0 = falloc(N);
    gpt2_layout_init(&c->m.shape, seed, p0, N);
    double *p = gpt2_widen(p0, N), *g = dalloc(N), *mm = dalloc(N), *vv = dalloc(N);
    double ref[STEPS + 1];
    for (int k = 0; k <= STEPS; k++) {
        ref[k] = ref_run(c, 0, p, k < STEPS ? g : NULL);
        if (k < STEPS)
            gpt2_mref_adamw(&c->r, p, mm, vv, g, lr, k + 1, OPT.beta1, OPT.beta2, OPT.eps, OPT.weight_decay,
                            OPT.max_norm);
    }
    char name[120];
    snprintf(name, sizeof name, "[%s] %d AdamW steps, lr %g", c->name, STEPS, lr);
    printf("#    %s: step, loss, reference\n", name);
    int falls = 1;
    double worst = 0;
    for (int k = 0; k <= STEPS; k++) {
        double e = fabs(loss[k] - ref[k]) / ref[k];
        worst = e > worst ? e : worst;
        falls &= k == 0 || loss[k] < loss[k - 1];
        printf("#      %2d %.5f %.5f\n", k, loss[k], ref[k]);
    }
    double tol = c->t == DTYPE_BF16 ? TOL_CURVE_BF16 : TOL_CURVE_FP32;
    printf("%-4s %-40s loss curve against the reference: worst rel_err %.3e (tol %.1e)\n", worst <= tol ? "ok" : "FAIL",
           name, worst, tol);
    EXPECT(worst <= tol, "%s: loss curve %.3e from the reference's", name, worst);
    EXPECT(falls && loss[STEPS] < loss[0] - 2.0, "%s: the loss went %.4f -> %.4f (falling every step: %d)", name,
           loss[0], loss[STEPS], falls);
    optim_free(&o);
    free(p0), free(p), free(g), free(mm), free(vv);
}

// --- the step captured in a CUDA graph

typedef struct { tcase_t *c; optim_t *o; } step_ctx_t;

static void train_step(void *ctx, const void *arg) {
    (void)arg;
    step_ctx_t *x = (step_ctx_t *)ctx;
    gpt2_model_step(&x->c->m, x->c->dtok, x->c->dtgt, x->o, x->c->g.stream);
}

static void test_graph(tcase_t *c, const float *p0) {
    cudaStream_t s = c->g.stream;
    size_t N = c->N;
    optim_t oe, ow, og;
    gpt2_test_optim(&oe, LR_ONE, 1), gpt2_test_optim(&ow, LR_ONE, 1), gpt2_test_optim(&og, LR_ONE, 1);
    step_ctx_t x = {c, &oe};
    gpt2_model_set_params(&c->m, p0, s);
    train_step(&x, NULL);
    float le = gpt2_model_loss(&c->m, s), lg, *ge = falloc(N), *gg = falloc(N);
    download(ge, c->m.grads, N, DTYPE_FP32);
    /* graph_seg_run: the first call eager (the libraries' warm-up), the second captured and launched */
    graph_seg_t seg;
    memset(&seg, 0, sizeof seg);
    x.o = &ow;
    gpt2_model_set_params(&c->m, p0, s);
    graph_seg_run(&seg, s, 1, train_step, &x, NULL);
    gpt2_model_set_params(&c->m, p0, s);
    x.o = &og;   /* a fresh step count for the captured step, as the eager one had */
    graph_seg_run(&seg, s, 1, train_step, &x, NULL);
    lg = gpt2_model_loss(&c->m, s);
    download(gg, c->m.grads, N, DTYPE_FP32);
    double dle = le, *dge = gpt2_widen(ge, N);
    char name[80];
    snprintf(name, sizeof name, "[%s] step in a CUDA graph", c->name);
    EXPECT(seg.state == 2, "%s: not captured", name);
    /* The same launches: the same bits are expected (printed); the check allows the eager tolerances. */
    printf("#    %s: gradients %s the eager step's\n", name,
           memcmp(ge, gg, N * sizeof(float)) ? "differ from" : "bit for bit");
    check(name, "loss = eager's", &lg, &dle, 1, tol_loss(c->t));
    check(name, "gradients = eager's", gg, dge, N, tol_grad(c->t));
    graph_seg_free(&seg);
    optim_free(&oe), optim_free(&ow), optim_free(&og);
    free(ge), free(gg), free(dge);
}

static void run_case(dtype_t t, const gpt2_shape_t *sh, const gpt2_slice_t *sl, int n_sl, rng_t *rng) {
    tcase_t *c = (tcase_t *)calloc(1, sizeof *c);
    char err[256] = "";
    c->t = t;
    snprintf(c->name, sizeof c->name, "%s", dtype_name(t));
    gpu_init(&c->g, 0, t == DTYPE_BF16 ? MATH_BF16 : MATH_FP32);   /* fp32: cuBLAS pedantic, no TF32 */
    int rc = gpt2_model_init(&c->m, sh, B, T, t, 0, &c->g, &OPT, err, sizeof err);
    EXPECT(rc == 0, "gpt2_model_init: %s", err);
    if (rc) { gpu_free(&c->g); free(c); return; }
    printf("#    [%s] %zu parameters in %zu flat elements, %zu bytes on the device\n", c->name,
           gpt2_shape_params(sh), c->m.n_params, gpt2_model_bytes(&c->m));
    c->N = c->m.n_params;
    gpt2_mref_t r = {sh, sl, n_sl, B, T, 0};
    c->r = r;
    for (int i = 0; i < ROWS; i++) {
        c->tok[i] = (int)rng_below(rng, (uint32_t)sh->vocab);
        c->tgt[i] = (int)rng_below(rng, (uint32_t)sh->vocab);
    }
    c->tok[5] = sh->vocab - 1;   /* the last real row of the head */
    c->dtok = (int *)gpt2_dev(ROWS, sizeof(int));
    c->dtgt = (int *)gpt2_dev(ROWS, sizeof(int));
    CHECK_CUDA(cudaMemcpy(c->dtok, c->tok, sizeof c->tok, cudaMemcpyHostToDevice));
    CHECK_CUDA(cudaMemcpy(c->dtgt, c->tgt, sizeof c->tgt, cudaMemcpyHostToDevice));
    CHECK_CUDA(cudaDeviceSynchronize());   /* a pageable copy may return before it lands; the stream is non-blocking */
    float *p0 = falloc(c->N);
    gpt2_mref_random_params(&c->r, rng, p0, c->N, t);
    unsigned long long seed = rng_u64(rng);
    test_init(c, seed);
    test_grads(c, p0);
    test_learn(c, seed);
    test_graph(c, p0);
    free(p0);
    CHECK_CUDA(cudaFree(c->dtok));
    CHECK_CUDA(cudaFree(c->dtgt));
    gpt2_model_free(&c->m);
    gpu_free(&c->g);
    free(c);
}

int main(int argc, char **argv) {
    gpu_test_require(1);
    rng_t rng;
    rng_seed(&rng, gpu_test_seed(argc, argv, "test_gpt2_model"));
    gpt2_shape_t sh = *gpt2_shape("tiny");
    sh.name = "tiny-509";
    sh.vocab = 509;   /* 3 padding rows in the head, as small has 47 */
    int n = gpt2_layout_count(&sh);
    gpt2_slice_t *sl = (gpt2_slice_t *)calloc((size_t)n, sizeof *sl);
    gpt2_layout(&sh, sl, n);
    run_case(DTYPE_FP32, &sh, sl, n, &rng);
    run_case(DTYPE_BF16, &sh, sl, n, &rng);
    free(sl);
    return test_summary();
}
