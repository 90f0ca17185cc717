/* test_gpt2_kernels.cu — GPT-2's own kernels against CPU double references, in fp32 and bf16, each with a negative
 * control: the embedding (forward; backward's scatter-add, deterministic run to run), LayerNorm (y, mean, rstd, dx,
 * dgamma, dbeta, accumulating), GELU (tanh) both ways, the fused cross-entropy over GPT-2's vocabulary (loss, in-place
 * gradient, ignored targets, padding columns). The residual adds are the linear layer's epilogue (test_gpt2_linear).
 * Run: ./test_gpt2_kernels [seed]   (fresh random inputs each run, seed printed; exits 77 without a CUDA device) */
#include <string.h>
#include "gpt2_model_ref.h"
#include "engine/gpt2/gpt2_kernels.h"

static void sync(cudaStream_t s) { CHECK_CUDA(cudaStreamSynchronize(s)); }

/* Inputs of type t are rounded on the host before the reference sees them, so the reference computes from exactly
 * the GPU's inputs: what is left is the result's rounding to t (gpt2_tol's stages) and fp32 arithmetic. Parameter
 * gradients are fp32 sums of products of such inputs: GPT2_TOL. */

// --- embedding

static void test_embed(dtype_t t, rng_t *rng, cudaStream_t s) {
    const int B = 4, T = 40, C = 96, V = 97, rows = B * T;   /* 160 rows over 97 tokens: most tokens repeat */
    const char *tn = dtype_name(t);
    char name[64];
    int *tok = (int *)malloc(sizeof(int) * rows);
    for (int r = 0; r < rows; r++) tok[r] = (int)rng_below(rng, V / 3);   /* a third of the vocabulary: many repeats */
    void *dwte_t, *dwpe_t;
    float *wte = gpt2_rand_dev(rng, (size_t)V * C, -1, 1, t, &dwte_t);
    float *wpe = gpt2_rand_dev(rng, (size_t)T * C, -1, 1, t, &dwpe_t);
    int *dtok = (int *)gpt2_dev(rows, sizeof(int));
    void *dout = gpt2_dev((size_t)rows * C, dtype_size(t));
    CHECK_CUDA(cudaMemcpy(dtok, tok, sizeof(int) * rows, cudaMemcpyHostToDevice));
    poison(dout, (size_t)rows * C, t);
    gpt2_embed_forward(dtok, dwte_t, dwpe_t, dout, t, rows, T, C, V, s);
    sync(s);
    size_t n = (size_t)rows * C;
    float *got = falloc(n > (size_t)V * C ? n : (size_t)V * C);
    double *ref = dalloc(n), *wrong = dalloc(n);
    download(got, dout, n, t);
    for (int r = 0; r < rows; r++)
        for (int c = 0; c < C; c++) {
            ref[(size_t)r * C + c] = (double)wte[(size_t)tok[r] * C + c] + wpe[(size_t)(r % T) * C + c];
            wrong[(size_t)r * C + c] = wte[(size_t)tok[r] * C + c];
        }
    snprintf(name, sizeof name, "[%s] embed forward", tn);
    check(name, "out", got, ref, n, gpt2_tol(t, 1));
    control(name, "no position embedding", got, ref, wrong, n, gpt2_tol(t, 1));

    /* backward: dout of type t, gradients accumulated onto random priors */
    float *dy = gpt2_rand(rng, n, -1, 1, t), *pte = gpt2_rand(rng, (size_t)V * C, -1, 1, DTYPE_FP32);
    float *ppe = gpt2_rand(rng, (size_t)T * C, -1, 1, DTYPE_FP32);
    upload(dout, dy, n, t);
    float *gte = (float *)gpt2_dev((size_t)V * C, 4), *gpe = (float *)gpt2_dev((size_t)T * C, 4);
    size_t sb = gpt2_embed_scratch_bytes(rows, V);
    void *scratch = gpt2_dev(sb, 1);
    double *rte = dalloc((size_t)V * C), *wte_first = dalloc((size_t)V * C);
    double *rpe = dalloc((size_t)T * C);
    double *wpe_b0 = dalloc((size_t)T * C);
    for (size_t i = 0; i < (size_t)V * C; i++) rte[i] = wte_first[i] = pte[i];
    for (size_t i = 0; i < (size_t)T * C; i++) rpe[i] = wpe_b0[i] = ppe[i];
    int *seen = (int *)calloc(V, sizeof(int));
    for (int r = 0; r < rows; r++) {
        for (int c = 0; c < C; c++) {
            double g = dy[(size_t)r * C + c];
            rte[(size_t)tok[r] * C + c] += g;
            if (!seen[tok[r]]) wte_first[(size_t)tok[r] * C + c] += g;   /* a lost update keeps one row per token */
            rpe[(size_t)(r % T) * C + c] += g;
            if (r < T) wpe_b0[(size_t)r * C + c] += g;
        }
        seen[tok[r]] = 1;
    }
    float *run1 = falloc((size_t)V * C);
    for (int run = 0; run < 2; run++) {
        upload(gte, pte, (size_t)V * C, DTYPE_FP32);
        upload(gpe, ppe, (size_t)T * C, DTYPE_FP32);
        gpt2_embed_backward(dtok, dout, gte, gpe, t, rows, T, C, V, scratch, sb, s);
        sync(s);
        download(got, gte, (size_t)V * C, DTYPE_FP32);
        if (run == 0) { memcpy(run1, got, sizeof(float) * V * C); continue; }
        EXPECT(memcmp(run1, got, sizeof(float) * V * C) == 0, "[%s] embed backward: two runs differ", tn);
    }
    snprintf(name, sizeof name, "[%s] embed backward", tn);
    check(name, "dwte (accumulated)", got, rte, (size_t)V * C, GPT2_TOL);
    control(name, "one row per token (lost updates)", got, rte, wte_first, (size_t)V * C, GPT2_TOL);
    gpt2_check_dev(name, "dwpe (accumulated)", got, gpe, DTYPE_FP32, rpe, (size_t)T * C, GPT2_TOL,
                   "only the first sequence", wpe_b0);

    /* A token outside the vocabulary: its row is NaN, the others are not, and backward skips it. */
    tok[7] = V;
    CHECK_CUDA(cudaMemcpy(dtok, tok, sizeof(int) * rows, cudaMemcpyHostToDevice));
    gpt2_embed_forward(dtok, dwte_t, dwpe_t, dout, t, rows, T, C, V, s);
    sync(s);
    download(got, dout, n, t);
    int nan_row = 1, nan_else = 0;
    for (size_t i = 0; i < n; i++) {
        if (i / C == 7) nan_row &= isnan(got[i]) != 0;
        else nan_else += isnan(got[i]) != 0;
    }
    EXPECT(nan_row && !nan_else, "[%s] embed: a bad token's row NaN %d, %d NaN elsewhere", tn, nan_row, nan_else);
    upload(gte, pte, (size_t)V * C, DTYPE_FP32);
    upload(dout, dy, n, t);
    gpt2_embed_backward(dtok, dout, gte, gpe, t, rows, T, C, V, scratch, sb, s);
    sync(s);
    download(got, gte, (size_t)V * C, DTYPE_FP32);
    int finite = 1;
    for (size_t i = 0; i < (size_t)V * C; i++) finite &= isfinite(got[i]) != 0;
    EXPECT(finite, "[%s] embed backward with a bad token: non-finite gradients", tn);

    free(tok), free(wte), free(wpe), free(got), free(ref), free(wrong), free(dy), free(pte), free(ppe), free(rte);
    free(wte_first), free(rpe), free(wpe_b0), free(seen), free(run1);
    void *bufs[] = {dtok, dwte_t, dwpe_t, dout, gte, gpe, scratch};
    for (int i = 0; i < 7; i++) CHECK_CUDA(cudaFree(bufs[i]));
}

// --- LayerNorm

/* C 200: 16-byte accesses in fp32 and bf16 (200 = 25 x 8), a partial warp stride; 198: one element at a time in
 * both. rows 300: warps whose blocks take a partial share of the rows. */
static void test_layernorm(dtype_t t, int C, rng_t *rng, cudaStream_t s) {
    const int rows = 300;
    char tn[32], name[64];
    snprintf(tn, sizeof tn, "%s C=%d", dtype_name(t), C);
    size_t n = (size_t)rows * C;
    float *x = falloc(n);
    for (int r = 0; r < rows; r++) {   /* rows of different means and spreads, one far from zero mean */
        double off = r == 5 ? 40.0 : 4.0 * rng_uniform(rng) - 2.0, sc = 0.5 + 2.0 * rng_uniform(rng);
        for (int c = 0; c < C; c++) x[(size_t)r * C + c] = (float)(off + sc * (2.0 * rng_uniform(rng) - 1.0));
    }
    round_to(x, n, t);
    void *dw_, *db_;
    float *w = gpt2_rand_dev(rng, C, 0.5, 1.5, DTYPE_FP32, &dw_);
    float *b = gpt2_rand_dev(rng, C, -0.5, 0.5, DTYPE_FP32, &db_);
    void *dx_in = gpt2_dev(n, dtype_size(t)), *dy_ = gpt2_dev(n, dtype_size(t));
    float *dm = (float *)gpt2_dev(rows, 4), *dr = (float *)gpt2_dev(rows, 4);
    upload(dx_in, x, n, t);
    poison(dy_, n, t);
    gpt2_layernorm_forward(dx_in, (float *)dw_, (float *)db_, dy_, dm, dr, t, rows, C, s);
    sync(s);
    double *xd = gpt2_widen(x, n), *wd = gpt2_widen(w, C), *bd = gpt2_widen(b, C), *ones = dalloc(C);
    double *mean = dalloc(rows), *rstd = dalloc(rows), *y = dalloc(n), *y_nog = dalloc(n);
    for (int c = 0; c < C; c++) ones[c] = 1.0;
    mref_ln(xd, wd, bd, y, mean, rstd, rows, C);
    mref_ln(xd, ones, bd, y_nog, mean, rstd, rows, C);   /* the gain not applied (the same mean and rstd) */
    float *got = falloc(n);
    snprintf(name, sizeof name, "[%s] layernorm forward", tn);
    gpt2_check_dev(name, "y", got, dy_, t, y, n, gpt2_tol(t, 1), "gain not applied", y_nog);
    gpt2_check_dev(name, "mean", got, dm, DTYPE_FP32, mean, rows, GPT2_TOL, NULL, NULL);
    gpt2_check_dev(name, "rstd", got, dr, DTYPE_FP32, rstd, rows, GPT2_TOL, NULL, NULL);

    /* backward, accumulating onto random priors (dx_beta = dw_beta = 1) */
    void *ddx, *gw, *gb;
    float *dy = gpt2_rand(rng, n, -1, 1, t), *pdx = gpt2_rand_dev(rng, n, -1, 1, t, &ddx);
    float *pw = gpt2_rand_dev(rng, C, -1, 1, DTYPE_FP32, &gw), *pb = gpt2_rand_dev(rng, C, -1, 1, DTYPE_FP32, &gb);
    upload(dy_, dy, n, t);
    size_t sb = gpt2_layernorm_scratch_bytes(rows, C);
    void *scratch = gpt2_dev(sb, 1);
    gpt2_layernorm_backward(dx_in, (float *)dw_, dm, dr, dy_, ddx, 1.0f, (float *)gw, (float *)gb, 1.0f, t, rows, C,
                            scratch, sb, s);
    sync(s);
    double *dyd = gpt2_widen(dy, n), *rdx = gpt2_widen(pdx, n), *rw = gpt2_widen(pw, C), *rb = gpt2_widen(pb, C);
    double *wdx = dalloc(n), *ww = gpt2_widen(pw, C), *wb = dalloc(C);
    mref_ln_back(xd, wd, mean, rstd, dyd, rdx, 1, rw, rb, rows, C);
    /* the controls: dx without the xhat term, dgamma from x rather than xhat, dbeta without its prior */
    for (int r = 0; r < rows; r++) {
        double mg = 0;
        for (int c = 0; c < C; c++) mg += (double)dy[(size_t)r * C + c] * w[c];
        mg /= C;
        for (int c = 0; c < C; c++) {
            size_t i = (size_t)r * C + c;
            wdx[i] = pdx[i] + rstd[r] * ((double)dy[i] * w[c] - mg);
            ww[c] += (double)dy[i] * x[i];
            wb[c] += dy[i];
        }
    }
    snprintf(name, sizeof name, "[%s] layernorm backward", tn);
    gpt2_check_dev(name, "dx (accumulated)", got, ddx, t, rdx, n, gpt2_tol(t, 1), "without the xhat term", wdx);
    gpt2_check_dev(name, "dgamma (accumulated)", got, gw, DTYPE_FP32, rw, C, GPT2_TOL, "dy * x, not dy * xhat", ww);
    gpt2_check_dev(name, "dbeta (accumulated)", got, gb, DTYPE_FP32, rb, C, GPT2_TOL, "prior overwritten", wb);

    free(x), free(w), free(b), free(mean), free(rstd), free(y), free(y_nog), free(got), free(dy), free(pdx), free(pw);
    free(pb), free(rdx), free(wdx), free(rw), free(rb), free(ww), free(wb), free(xd), free(wd), free(bd), free(ones);
    free(dyd);
    void *bufs[] = {dx_in, dy_, ddx, dw_, db_, dm, dr, gw, gb, scratch};
    for (int i = 0; i < 10; i++) CHECK_CUDA(cudaFree(bufs[i]));
}

// --- GELU

static void test_gelu(dtype_t t, rng_t *rng, cudaStream_t s) {
    const size_t n = 10003;
    const char *tn = dtype_name(t);
    char name[64];
    void *dxp, *dyp = gpt2_dev(n, dtype_size(t));
    float *x = gpt2_rand_dev(rng, n, -5, 5, t, &dxp), *dy = gpt2_rand(rng, n, -1, 1, t), *got = falloc(n);
    poison(dyp, n, t);
    gpt2_gelu_forward(dxp, dyp, t, n, s);
    sync(s);
    double *ref = dalloc(n), *erfv = dalloc(n), *relu = dalloc(n), *dref = dalloc(n);
    double *dnone = dalloc(n);
    for (size_t i = 0; i < n; i++) {
        ref[i] = gelu_ref(x[i]);
        erfv[i] = 0.5 * x[i] * (1.0 + erf(x[i] / sqrt(2.0)));
        relu[i] = x[i] > 0 ? x[i] : 0.0;
        dref[i] = dy[i] * gelu_grad_ref(x[i]);
        dnone[i] = dy[i];
    }
    snprintf(name, sizeof name, "[%s] gelu forward", tn);
    gpt2_check_dev(name, "y", got, dyp, t, ref, n, gpt2_tol(t, 1), "erf GELU, not tanh", erfv);
    control(name, "ReLU", got, ref, relu, n, gpt2_tol(t, 1));
    /* backward in place: dx written over dy */
    upload(dyp, dy, n, t);
    gpt2_gelu_backward(dxp, dyp, dyp, t, n, s);
    sync(s);
    snprintf(name, sizeof name, "[%s] gelu backward", tn);
    gpt2_check_dev(name, "dx (in place)", got, dyp, t, dref, n, gpt2_tol(t, 1), "dy passed through", dnone);
    free(x), free(dy), free(got), free(ref), free(erfv), free(relu), free(dref), free(dnone);
    CHECK_CUDA(cudaFree(dxp));
    CHECK_CUDA(cudaFree(dyp));
}

// --- cross-entropy

/* ld 50304: GPT-2's padded head, 16-byte accesses in fp32 and bf16; 50259: one logit at a time in both. */
static void test_xent(dtype_t t, int ld, rng_t *rng, cudaStream_t s) {
    const int rows = 48, V = 50257;   /* GPT-2's vocabulary */
    char tn[32], name[64];
    snprintf(tn, sizeof tn, "%s ld=%d", dtype_name(t), ld);
    size_t n = (size_t)rows * ld;
    float *z = gpt2_rand(rng, n, -4, 4, t);
    for (int j = 0; j < ld; j++) z[9 * (size_t)ld + j] += 80.0f;   /* a row far from 0: the max must be subtracted */
    round_to(z, n, t);
    int *tgt = (int *)malloc(sizeof(int) * rows), valid = 0;
    for (int r = 0; r < rows; r++) {
        tgt[r] = r == 3 || r == 17 ? -1 : (int)rng_below(rng, V);
        valid += tgt[r] >= 0;
    }
    tgt[20] = V - 1;   /* the last real column */
    float scale = 1.0f / (float)valid;
    void *dz = gpt2_dev(n, dtype_size(t));
    int *dt = (int *)gpt2_dev(rows, sizeof(int));
    float *dl = (float *)gpt2_dev(rows, 4);
    double *dacc = (double *)gpt2_dev(2, sizeof(double)), acc[2];
    CHECK_CUDA(cudaMemcpy(dt, tgt, sizeof(int) * rows, cudaMemcpyHostToDevice));
    upload(dz, z, n, t);
    CHECK_CUDA(cudaMemset(dacc, 0, 2 * sizeof(double)));
    gpt2_xent(dz, dt, dl, dacc, t, rows, V, ld, scale, 1, s);
    sync(s);
    double *loss = dalloc(rows), *loss_off = dalloc(rows), *g = dalloc(n), *g_no1 = dalloc(n);
    double sum = 0;
    for (int r = 0; r < rows; r++) {
        const float *zr = z + (size_t)r * ld;
        double m = -INFINITY, se = 0;
        for (int j = 0; j < V; j++) m = fmax(m, zr[j]);
        for (int j = 0; j < V; j++) se += exp(zr[j] - m);
        double lse = m + log(se);
        if (tgt[r] >= 0) {
            loss[r] = lse - zr[tgt[r]];
            loss_off[r] = lse - zr[(tgt[r] + 1) % V];
            sum += loss[r];
            for (int j = 0; j < V; j++) {
                double p = exp(zr[j] - lse);
                g[(size_t)r * ld + j] = scale * (p - (j == tgt[r]));
                g_no1[(size_t)r * ld + j] = scale * p;
            }
        }
    }
    float *got = falloc(n);
    snprintf(name, sizeof name, "[%s] cross-entropy", tn);
    gpt2_check_dev(name, "loss per row", got, dl, DTYPE_FP32, loss, rows, GPT2_TOL,
                   "the next column's logit", loss_off);
    gpt2_check_dev(name, "dlogits (in place)", got, dz, t, g, n, gpt2_tol(t, 1), "no one-hot subtracted", g_no1);
    int zeros = 1;
    for (int r = 0; r < rows; r++)
        for (int j = tgt[r] < 0 ? 0 : V; j < ld; j++) zeros &= got[(size_t)r * ld + j] == 0.0f;
    EXPECT(zeros, "[%s] cross-entropy: padding columns or ignored rows have a gradient", tn);
    CHECK_CUDA(cudaMemcpy(acc, dacc, sizeof acc, cudaMemcpyDeviceToHost));
    EXPECT(fabs(acc[0] - sum) <= GPT2_TOL * sum && acc[1] == valid, "[%s] acc (%.9g, %g), want (%.9g, %d)", tn, acc[0],
           acc[1], sum, valid);
    /* Without grad the logits stay as they were, bit for bit. */
    upload(dz, z, n, t);
    gpt2_xent(dz, dt, dl, NULL, t, rows, V, ld, scale, 0, s);
    sync(s);
    download(got, dz, n, t);
    EXPECT(memcmp(got, z, sizeof(float) * n) == 0, "[%s] cross-entropy without grad changed the logits", tn);
    /* A target outside [-1, vocab): that row's loss is NaN. */
    tgt[0] = V;
    CHECK_CUDA(cudaMemcpy(dt, tgt, sizeof(int) * rows, cudaMemcpyHostToDevice));
    gpt2_xent(dz, dt, dl, NULL, t, rows, V, ld, scale, 0, s);
    sync(s);
    download(got, dl, rows, DTYPE_FP32);
    EXPECT(isnan(got[0]) && got[3] == 0.0f && isfinite(got[1]), "[%s] bad target: losses %g %g %g", tn, got[0],
           got[1], got[3]);
    free(z), free(tgt), free(loss), free(loss_off), free(g), free(g_no1), free(got);
    void *bufs[] = {dz, dt, dl, dacc};
    for (int i = 0; i < 4; i++) CHECK_CUDA(cudaFree(bufs[i]));
}

int main(int argc, char **argv) {
    gpu_test_require(1);
    rng_t rng;
    rng_seed(&rng, gpu_test_seed(argc, argv, "test_gpt2_kernels"));
    cudaStream_t s;
    CHECK_CUDA(cudaStreamCreate(&s));
    const dtype_t types[2] = {DTYPE_FP32, DTYPE_BF16};
    for (int k = 0; k < 2; k++) {
        test_embed(types[k], &rng, s);
        test_layernorm(types[k], 200, &rng, s);
        test_layernorm(types[k], 198, &rng, s);
        test_gelu(types[k], &rng, s);
        test_xent(types[k], 50304, &rng, s);
        test_xent(types[k], 50259, &rng, s);
        /* The draws of a test since removed (the engine's add layer, which GPT-2 does not use: two arrays of 256 x
         * 768), skipped so that a seed still gives every case the inputs it gave before. */
        for (int i = 0; i < 2 * 256 * 768; i++) (void)rng_uniform(&rng);
    }
    CHECK_CUDA(cudaStreamDestroy(s));
    return test_summary();
}
