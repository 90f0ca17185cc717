/* test_gpt2_adamw.cu — GPT-2's AdamW over the tiny shape's flat layout against a CPU double reference, three steps at
 * the rates of a warm-up + cosine table read on the device (optim.h), with clipping by the global norm from
 * optim_sumsq (on at steps 1 and 3, off at 2): parameters, both moments, the bf16 copy (exactly the rounding of each
 * parameter) and the padding between slices left alone. Negative controls: weight decay on every tensor, no clipping,
 * no bias correction.
 * Run: ./test_gpt2_adamw [seed]   (fresh random inputs each run, seed printed; exits 77 without a CUDA device) */
#include <string.h>
#include "gpt2_model_ref.h"
#include "engine/gpt2/gpt2_adamw.h"
#include "engine/optim.h"

/* The parameters are compared by their change over the three steps (p - p0), which is what AdamW computes: fp32
 * stores p each step, rounding it by up to 2^-24 |p| (|p| <= 1) against a change of ~1e-2 per step, 1e-5 of the
 * change, and the update's own fp32 arithmetic (a division, a square root) a few 2^-24. 1e-4 bounds both. The moments
 * are fp32 sums of two products: GPT2_TOL. */
#define TOL_DELTA 1e-4
#define PAD_SENTINEL 7.0f

static const float BETA1 = 0.9f, BETA2 = 0.95f, EPS = 1e-8f, WD = 0.1f, MAX_NORM = 1.0f;

/* A reference's state and its variant: gpt2_model_ref.h's flags, and max_norm (0: no clipping). */
typedef struct { gpt2_mref_t r; double max_norm, *p, *m, *v; } ref_state_t;

static void ref_step(ref_state_t *s, const double *g, double lr, long t) {
    gpt2_mref_adamw(&s->r, s->p, s->m, s->v, g, lr, t, BETA1, BETA2, EPS, WD, s->max_norm);
}

int main(int argc, char **argv) {
    gpu_test_require(1);
    rng_t rng;
    rng_seed(&rng, gpu_test_seed(argc, argv, "test_gpt2_adamw"));
    cudaStream_t s;
    CHECK_CUDA(cudaStreamCreate(&s));
    const gpt2_shape_t *shape = gpt2_shape("tiny");
    int n = gpt2_layout_count(shape);
    gpt2_slice_t *sl = (gpt2_slice_t *)calloc((size_t)n, sizeof *sl);
    size_t N = gpt2_layout(shape, sl, n);
    char err[256] = "";
    gpt2_adamw_t a;
    EXPECT(gpt2_adamw_init(&a, sl, n, BETA1, BETA2, EPS, WD, MAX_NORM, err, sizeof err) == 0, "adamw_init: %s", err);
    /* the rate: 4 steps an epoch, one epoch, half an epoch of warm-up, then a cosine decay */
    lr_schedule_t sched = {LR_COSINE, 1e-2, 0.5, 1};
    optim_t o;
    EXPECT(optim_init(&o, OPTIM_SGD, 0.0f, 0.0f, &sched, 4, NULL, err, sizeof err) == 0, "optim_init: %s", err);

    float *p0 = falloc(N), *g = falloc(N), *got = falloc(N);
    unsigned char *in_slice = (unsigned char *)calloc(N, 1);
    for (int k = 0; k < n; k++) memset(in_slice + sl[k].at, 1, sl[k].len);
    for (size_t i = 0; i < N; i++) p0[i] = in_slice[i] ? (float)(2.0 * rng_uniform(&rng) - 1.0) : PAD_SENTINEL;
    ref_state_t ref = {{shape, sl, n, 0, 0, 0}, MAX_NORM, gpt2_widen(p0, N), dalloc(N), dalloc(N)};
    ref_state_t all_dec = {{shape, sl, n, 0, 0, REF_ADAMW_DECAY_ALL}, MAX_NORM, gpt2_widen(p0, N), dalloc(N),
                           dalloc(N)};
    ref_state_t no_clip = {{shape, sl, n, 0, 0, 0}, 0.0, gpt2_widen(p0, N), dalloc(N), dalloc(N)};
    ref_state_t no_bc = {{shape, sl, n, 0, 0, REF_ADAMW_NO_BIAS_CORR}, MAX_NORM, gpt2_widen(p0, N), dalloc(N),
                         dalloc(N)};
    ref_state_t *rs[4] = {&ref, &all_dec, &no_clip, &no_bc};
    float *dp = (float *)gpt2_dev(N, 4), *dg = (float *)gpt2_dev(N, 4), *dm = (float *)gpt2_dev(N, 4);
    float *dv = (float *)gpt2_dev(N, 4);
    void *dlp = gpt2_dev(N, 2);
    double *dss = (double *)gpt2_dev(1, sizeof(double));
    upload(dp, p0, N, DTYPE_FP32);
    CHECK_CUDA(cudaMemset(dm, 0, N * 4));
    CHECK_CUDA(cudaMemset(dv, 0, N * 4));
    CHECK_CUDA(cudaMemset(dlp, 0, N * 2));
    /* gradient scales: the global norm is about sqrt(N / 3), ~210, times the scale: clipped, not, clipped */
    const double gscale[3] = {0.05, 0.001, 0.2};
    for (int step = 1; step <= 3; step++) {
        for (size_t i = 0; i < N; i++) g[i] = in_slice[i] ? (float)(gscale[step - 1] * (2.0 * rng_uniform(&rng) - 1.0))
                                                          : 0.0f;
        upload(dg, g, N, DTYPE_FP32);
        CHECK_CUDA(cudaMemsetAsync(dss, 0, sizeof(double), s));
        optim_begin_step(&o, s);
        optim_sumsq(dg, DTYPE_FP32, NULL, DTYPE_FP32, N, NULL, dss, s);
        gpt2_adamw_step(&a, dp, dlp, dg, dm, dv, o.lr, o.step, dss, s);
        double lr = optim_lr_read(&o, s);   /* synchronises s */
        double ss = 0;
        for (size_t i = 0; i < N; i++) ss += (double)g[i] * g[i];
        printf("#    step %d: lr %.6g, gradient norm %.4g (%s)\n", step, lr, sqrt(ss),
               sqrt(ss) > MAX_NORM ? "clipped" : "not clipped");
        EXPECT(lr > 0 && (step != 2 || sqrt(ss) < MAX_NORM) && (step == 2 || sqrt(ss) > MAX_NORM),
               "step %d: lr %g, norm %g: the case does not test what it says", step, lr, sqrt(ss));
        double *gd = gpt2_widen(g, N);
        for (int i = 0; i < 4; i++) ref_step(rs[i], gd, lr, step);
        free(gd);
    }
    /* changes over the three steps, slice elements only */
    size_t ns = 0;
    for (size_t i = 0; i < N; i++) ns += in_slice[i];
    float *dgot = falloc(ns);
    double *dref = dalloc(ns), *ddec = dalloc(ns), *dbc = dalloc(ns);
    download(got, dp, N, DTYPE_FP32);
    int pad_ok = 1;
    for (size_t i = 0, k = 0; i < N; i++) {
        if (!in_slice[i]) { pad_ok &= got[i] == PAD_SENTINEL; continue; }
        dgot[k] = (float)((double)got[i] - p0[i]);
        dref[k] = ref.p[i] - p0[i];
        ddec[k] = all_dec.p[i] - p0[i];
        dbc[k++] = no_bc.p[i] - p0[i];
    }
    EXPECT(pad_ok, "AdamW wrote between slices");
    check("adamw, 3 steps", "p - p0", dgot, dref, ns, TOL_DELTA);
    control("adamw, 3 steps", "decay on every tensor", dgot, dref, ddec, ns, TOL_DELTA);
    control("adamw, 3 steps", "no bias correction", dgot, dref, dbc, ns, TOL_DELTA);
    /* the bf16 copy is the rounding of each fp32 parameter, bit for bit */
    float *lp = falloc(N);
    download(lp, dlp, N, DTYPE_BF16);
    size_t lp_bad = 0;
    for (size_t i = 0; i < N; i++) lp_bad += in_slice[i] && lp[i] != bf16_ref_round(got[i]);
    EXPECT(lp_bad == 0, "%zu bf16 copies differ from their parameter's rounding", lp_bad);
    gpt2_check_dev("adamw, 3 steps", "m", got, dm, DTYPE_FP32, ref.m, N, GPT2_TOL, "no clipping", no_clip.m);
    gpt2_check_dev("adamw, 3 steps", "v", got, dv, DTYPE_FP32, ref.v, N, GPT2_TOL, NULL, NULL);

    gpt2_adamw_free(&a);
    optim_free(&o);
    void *bufs[] = {dp, dg, dm, dv, dlp, dss};
    for (int i = 0; i < 6; i++) CHECK_CUDA(cudaFree(bufs[i]));
    for (int i = 0; i < 4; i++) free(rs[i]->p), free(rs[i]->m), free(rs[i]->v);
    free(sl), free(p0), free(g), free(got), free(in_slice), free(dgot), free(dref), free(ddec), free(dbc), free(lp);
    CHECK_CUDA(cudaStreamDestroy(s));
    return test_summary();
}
