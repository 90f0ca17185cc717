/* test_gpt2_linear.cu — GPT-2's cuBLASLt linear layer against CPU double references in strict fp32, TF32 and bf16,
 * each with negative controls: y with the bias epilogue, y plus a residual through the epilogue's C operand (and in
 * place), y and its pre-activation with the bias + GELU epilogue, backward's dx (accumulated; and with GELU's
 * derivative from the epilogue), dW and db (accumulated, fp32).
 * Run: ./test_gpt2_linear [seed]   (fresh random inputs each run, seed printed; exits 77 without a CUDA device) */
#include <string.h>
#include "gpt2_model_ref.h"
#include "engine/gpt2/gpt2_linear.h"

/* TF32 rounds each operand to 10 explicit mantissa bits (2^-11 relative), so each product errs by about 2^-10 and
 * an O(1) sum of K such products by about that in the relative L2 norm; 5e-3 is test_layers' TF32 bound. */
#define TOL_TF32 5e-3

static const int ROWS = 64, IN = 96, OUT = 128;

typedef struct { dtype_t t; int tf32; const char *name; } lin_case_t;

/* Tolerance of a result of type t rounded `stages` times on its way out (0: fp32 parameter gradients). */
static double tol(const lin_case_t *k, int stages) {
    return k->tf32 ? TOL_TF32 : gpt2_tol(k->t, k->t == DTYPE_BF16 ? stages : 0);
}

static void sync(cudaStream_t s) { CHECK_CUDA(cudaStreamSynchronize(s)); }

static void run_case(const lin_case_t *k, gpt2_lt_t *lt, rng_t *rng, cudaStream_t s) {
    dtype_t t = k->t;
    size_t es = dtype_size(t), nx = (size_t)ROWS * IN, nw = (size_t)OUT * IN, ny = (size_t)ROWS * OUT;
    char name[80];
    void *dx_, *dw_, *db_, *dy_ = gpt2_dev(ny, es), *dpre = gpt2_dev(ny, es);
    float *x = gpt2_rand_dev(rng, nx, -1, 1, t, &dx_), *w = gpt2_rand_dev(rng, nw, -0.5, 0.5, t, &dw_);
    float *b = gpt2_rand_dev(rng, OUT, -0.5, 0.5, t, &db_);
    double *xd = gpt2_widen(x, nx), *wd = gpt2_widen(w, nw), *pre = dalloc(ny), *nob = dalloc(ny), *gel = dalloc(ny);
    mref_linear(xd, wd, NULL, nob, ROWS, IN, OUT);
    for (size_t i = 0; i < ny; i++) {
        pre[i] = nob[i] + b[i % OUT];
        gel[i] = gelu_ref(pre[i]);
    }
    float *got = falloc(nw > ny ? nw : ny);

    /* forward, the bias in the epilogue */
    poison(dy_, ny, t);
    gpt2_linear_forward(lt, t, k->tf32, dx_, dw_, db_, dy_, NULL, ROWS, IN, OUT, s);
    sync(s);
    snprintf(name, sizeof name, "[%s] linear forward", k->name);
    gpt2_check_dev(name, "y = x W^T + b", got, dy_, t, pre, ny, tol(k, 1), "bias not added", nob);

    /* forward with the residual in the epilogue: y = r + x W^T + b rounded once; then in place (r is y) */
    void *dres;
    float *res = gpt2_rand_dev(rng, ny, -1, 1, t, &dres);
    double *rres = dalloc(ny);
    for (size_t i = 0; i < ny; i++) rres[i] = res[i] + pre[i];
    poison(dy_, ny, t);
    gpt2_linear_forward_residual(lt, t, k->tf32, dx_, dw_, db_, dres, dy_, ROWS, IN, OUT, s);
    sync(s);
    snprintf(name, sizeof name, "[%s] linear + residual forward", k->name);
    gpt2_check_dev(name, "y = r + x W^T + b", got, dy_, t, rres, ny, tol(k, 1), "residual not added", pre);
    upload(dy_, res, ny, t);
    gpt2_linear_forward_residual(lt, t, k->tf32, dx_, dw_, db_, dy_, dy_, ROWS, IN, OUT, s);
    sync(s);
    gpt2_check_dev(name, "in place (r is y)", got, dy_, t, rres, ny, tol(k, 1), NULL, NULL);
    free(res), free(rres);
    CHECK_CUDA(cudaFree(dres));

    /* forward with GELU: y = GELU(pre) (one rounding fused, two where GELU runs from the stored pre) */
    poison(dy_, ny, t);
    poison(dpre, ny, t);
    int fused = gpt2_linear_forward(lt, t, k->tf32, dx_, dw_, db_, dy_, dpre, ROWS, IN, OUT, s);
    sync(s);
    printf("#    [%s] bias + GELU %s\n", k->name, fused ? "in cuBLASLt's epilogue" : "as its own kernel (no epilogue)");
    snprintf(name, sizeof name, "[%s] linear + GELU forward", k->name);
    gpt2_check_dev(name, "y = GELU(x W^T + b)", got, dy_, t, gel, ny, tol(k, 2), "GELU not applied", pre);
    gpt2_check_dev(name, "pre = x W^T + b", got, dpre, t, pre, ny, tol(k, 1), NULL, NULL);

    /* backward, accumulating dx, dW and db onto random priors */
    void *ddy, *ddx, *gw, *gb;
    float *dy = gpt2_rand_dev(rng, ny, -1, 1, t, &ddy), *pdx = gpt2_rand_dev(rng, nx, -1, 1, t, &ddx);
    float *pw = gpt2_rand_dev(rng, nw, -1, 1, DTYPE_FP32, &gw), *pb = gpt2_rand_dev(rng, OUT, -1, 1, DTYPE_FP32, &gb);
    gpt2_linear_backward(lt, t, k->tf32, dx_, dw_, ddy, ddx, 1.0f, NULL, (float *)gw, (float *)gb, 1.0f, ROWS, IN, OUT,
                         s);
    sync(s);
    double *dyd = gpt2_widen(dy, ny), *rdx = dalloc(nx), *dyw = dalloc(nx), *rw = dalloc(nw), *ow = dalloc(nw);
    double *rb = dalloc(OUT), *ob = dalloc(OUT);
    mref_linear_back(xd, wd, dyd, dyw, ow, ob, ROWS, IN, OUT);   /* without the priors: the controls */
    for (size_t i = 0; i < nx; i++) rdx[i] = dyw[i] + pdx[i];
    for (size_t i = 0; i < nw; i++) rw[i] = ow[i] + pw[i];
    for (int o = 0; o < OUT; o++) rb[o] = pb[o] + ob[o];
    snprintf(name, sizeof name, "[%s] linear backward", k->name);
    gpt2_check_dev(name, "dx (accumulated)", got, ddx, t, rdx, nx, tol(k, 1), "prior overwritten", dyw);
    gpt2_check_dev(name, "dW (accumulated)", got, gw, DTYPE_FP32, rw, nw, tol(k, 0), "prior overwritten", ow);
    gpt2_check_dev(name, "db (accumulated)", got, gb, DTYPE_FP32, rb, OUT, tol(k, 0), "prior overwritten", ob);

    /* backward through GELU: x = GELU(x_pre), dx = (dy W) * GELU'(x_pre) */
    void *dxpre;
    float *xpre = gpt2_rand_dev(rng, nx, -3, 3, t, &dxpre);
    double *rg = dalloc(nx);
    for (size_t i = 0; i < nx; i++) rg[i] = dyw[i] * gelu_grad_ref(xpre[i]);
    poison(ddx, nx, t);
    fused = gpt2_linear_backward(lt, t, k->tf32, dx_, dw_, ddy, ddx, 0.0f, dxpre, NULL, NULL, 0.0f, ROWS, IN, OUT, s);
    sync(s);
    printf("#    [%s] GELU's derivative %s\n", k->name, fused ? "in cuBLASLt's epilogue" : "as its own kernel");
    snprintf(name, sizeof name, "[%s] linear backward through GELU", k->name);
    gpt2_check_dev(name, "dx = (dy W) GELU'(x_pre)", got, ddx, t, rg, nx, tol(k, 2), "GELU' not applied", dyw);

    free(x), free(w), free(b), free(pre), free(nob), free(gel), free(got), free(dy), free(pdx), free(pw), free(pb);
    free(rdx), free(dyw), free(rw), free(ow), free(rb), free(ob), free(xpre), free(rg), free(xd), free(wd), free(dyd);
    void *bufs[] = {dx_, dw_, db_, dy_, dpre, ddy, ddx, dxpre, gw, gb};
    for (int i = 0; i < 10; i++) CHECK_CUDA(cudaFree(bufs[i]));
}

int main(int argc, char **argv) {
    gpu_test_require(1);
    rng_t rng;
    rng_seed(&rng, gpu_test_seed(argc, argv, "test_gpt2_linear"));
    cudaStream_t s;
    CHECK_CUDA(cudaStreamCreate(&s));
    gpu_t g;   /* what gpt2_lt_t borrows: the workspace and the ones of fp32 and bf16 (a bf16 math's) */
    gpu_init(&g, 0, MATH_BF16);
    gpt2_lt_t lt;
    gpt2_lt_init(&lt, &g, ROWS);
    const lin_case_t cases[3] = {{DTYPE_FP32, 0, "fp32"}, {DTYPE_FP32, 1, "tf32"}, {DTYPE_BF16, 0, "bf16"}};
    for (int k = 0; k < 3; k++) run_case(&cases[k], &lt, &rng, s);
    gpt2_lt_free(&lt);
    gpu_free(&g);
    CHECK_CUDA(cudaStreamDestroy(s));
    return test_summary();
}
