/* test_gpt2_sdpa.cu — GPT-2's attention through cuDNN's fused flash attention (gpt2_sdpa.h) against a CPU double
 * reference in bf16: the output, the row statistics (max + log sum exp) kept for backward, and the gradient of q, k
 * and v; negative controls: attention to later positions (no causal mask) and scores not scaled by 1/sqrt(64); the
 * fused output and gradients beside the plain path's (gpt2_attn.h); backward's bits twice where it plans
 * deterministic. Shapes: B = 2, 3 heads of 64, T = 64 (must plan on an H200) and T = 100 (a partial tile: reported,
 * not failed, where cuDNN refuses it).
 * Run: ./test_gpt2_sdpa [seed]   (fresh random inputs each run, seed printed; exits 77 without a CUDA device) */
#include <string.h>
#include "gpt2_ref.h"
#include "engine/gpt2/gpt2_attn.h"
#include "engine/gpt2/gpt2_sdpa.h"

/* bf16 inputs are exact (rounded on the host), the scores and the softmax fp32 inside the kernel. What is rounded to
 * bf16, each at most 2^-8 relative: forward, P before P V and the output (2); backward, P or dS as the operand of the
 * products that make dv, dk and dq, the other operand's conversion where the engine makes one, the result, and the
 * output O (rounded) that rowsum(dO o O) reads in place of the exact P dP (4). Scores here are about 0.33 in size
 * after scaling (inputs in [-1, 1], 64 wide), so the softmax does not amplify a rounding beyond ~1.3x; 4 x 1.5 -> 6,
 * and 8 x 2^-8 = 0.031 keeps a margin. The controls are O(1) apart. */
#define TOL_SDPA (8 * BF16_U)
/* The statistics: fp32 sums of exact products and an fp32 log-sum-exp (exp2 approximations of ~2^-22 each): about
 * 1e-6 relative; 1e-3 leaves room for any internal rescaling, the controls are O(1) apart. */
#define TOL_STATS 1e-3
/* The plain path's own bf16 bound (test_gpt2_attn: 12 roundings x 2^-8); the two paths differ by at most the sum of
 * their distances to the reference. */
#define TOL_PLAIN (12 * BF16_U)

typedef struct {
    int B, T, C, NH;
} shape_t;

static void run_case(const shape_t *sh, int must_plan, cublasHandle_t hb, cudnnHandle_t hd, rng_t *rng,
                     cudaStream_t s) {
    const dtype_t t = DTYPE_BF16;
    int B = sh->B, T = sh->T, C = sh->C, NH = sh->NH;
    size_t nqkv = (size_t)B * T * 3 * C, no = (size_t)B * T * C, nl = (size_t)B * NH * T, na = (size_t)B * NH * T * T;
    double scale = 1.0 / sqrt((double)(C / NH));
    char name[64], why[512] = "";
    snprintf(name, sizeof name, "[bf16] fused attention T=%d", T);
    gpt2_sdpa_t a;
    if (gpt2_sdpa_init(&a, hd, B, T, C, NH, why, sizeof why)) {
        printf("%-4s %-40s cuDNN built no plan: %s\n", must_plan ? "FAIL" : "n/a", name, why);
        EXPECT(!must_plan, "%s: no plan: %s", name, why);
        return;
    }
    printf("#    %s: engines %lld (forward) and %lld (backward, %s), workspace %zu bytes\n", name,
           (long long)a.fwd_engine, (long long)a.bwd_engine, a.deterministic ? "deterministic" : "fp32 atomics for dq",
           a.ws_bytes);
    void *dq, *ddo, *dO = gpt2_dev(no, 2), *ddq = gpt2_dev(nqkv, 2), *dl = gpt2_dev(nl, 4);
    void *ws = gpt2_dev(a.ws_bytes, 1);
    float *qkv = gpt2_rand_dev(rng, nqkv, -1, 1, t, &dq), *dout = gpt2_rand_dev(rng, no, -1, 1, t, &ddo);
    void *pO = gpt2_dev(no, 2), *pa = gpt2_dev(na, 2), *pda = gpt2_dev(na, 2), *pdq = gpt2_dev(nqkv, 2);
    poison(dO, no, t);
    poison(ddq, nqkv, t);
    poison(dl, nl, DTYPE_FP32);
    gpt2_sdpa_forward(&a, dq, dO, (float *)dl, ws, s);
    gpt2_sdpa_backward(&a, dq, dO, (const float *)dl, ddo, ddq, ws, s);
    gpt2_attn_forward(hb, t, 0, dq, pa, pO, B, T, C, NH, s);
    gpt2_attn_backward(hb, t, 0, dq, pa, ddo, pda, pdq, B, T, C, NH, s);
    CHECK_CUDA(cudaStreamSynchronize(s));

    double *out = dalloc(no), *lse = dalloc(nl), *dqkv = dalloc(nqkv);
    double *out_nc = dalloc(no), *lse_nc = dalloc(nl), *dqkv_nc = dalloc(nqkv);
    double *out_ns = dalloc(no), *lse_ns = dalloc(nl), *dqkv_ns = dalloc(nqkv);
    gpt2_ref_attention(B, T, C, NH, qkv, dout, scale, scale, 1, out, NULL, lse, dqkv);
    /* attends to later positions too */
    gpt2_ref_attention(B, T, C, NH, qkv, dout, scale, scale, 0, out_nc, NULL, lse_nc, dqkv_nc);
    /* scores not scaled */
    gpt2_ref_attention(B, T, C, NH, qkv, dout, 1.0, 1.0, 1, out_ns, NULL, lse_ns, dqkv_ns);
    float *got = falloc(nqkv), *again = falloc(nqkv), *plain = falloc(nqkv);

    gpt2_check_dev(name, "out", got, dO, t, out, no, TOL_SDPA, "no causal mask", out_nc);
    control(name, "scores not scaled", got, out, out_ns, no, TOL_SDPA);
    download(plain, pO, no, t);
    double *wide = gpt2_widen(plain, no);
    check(name, "out beside the plain path", got, wide, no, TOL_SDPA + TOL_PLAIN);
    free(wide);

    gpt2_check_dev(name, "stats (max + log sum exp)", got, dl, DTYPE_FP32, lse, nl, TOL_STATS,
                   "no causal mask", lse_nc);
    control(name, "scores not scaled", got, lse, lse_ns, nl, TOL_STATS);

    gpt2_check_dev(name, "dqkv", got, ddq, t, dqkv, nqkv, TOL_SDPA, "no causal mask", dqkv_nc);
    control(name, "scores not scaled", got, dqkv, dqkv_ns, nqkv, TOL_SDPA);
    download(plain, pdq, nqkv, t);
    wide = gpt2_widen(plain, nqkv);
    check(name, "dqkv beside the plain path", got, wide, nqkv, TOL_SDPA + TOL_PLAIN);
    free(wide);

    /* backward again over the same inputs: the deterministic plan gives the same bits */
    poison(ddq, nqkv, t);
    gpt2_sdpa_backward(&a, dq, dO, (const float *)dl, ddo, ddq, ws, s);
    CHECK_CUDA(cudaStreamSynchronize(s));
    download(again, ddq, nqkv, t);
    int same = memcmp(got, again, nqkv * sizeof(float)) == 0;
    if (a.deterministic) {
        printf("%-4s %-40s backward twice, bit for bit\n", same ? "ok" : "FAIL", name);
        EXPECT(same, "%s: the deterministic backward gave other bits", name);
    } else {
        printf("n/a  %-40s backward twice: %s (fp32 atomics)\n", name, same ? "the same bits" : "other bits");
    }

    free(qkv), free(dout), free(out), free(lse), free(dqkv), free(out_nc), free(lse_nc), free(dqkv_nc);
    free(out_ns), free(lse_ns), free(dqkv_ns), free(got), free(again), free(plain);
    void *bufs[] = {dq, dO, ddo, ddq, dl, ws, pO, pa, pda, pdq};
    for (int i = 0; i < 10; i++) CHECK_CUDA(cudaFree(bufs[i]));
    gpt2_sdpa_free(&a);
}

int main(int argc, char **argv) {
    gpu_test_require(1);
    rng_t rng;
    rng_seed(&rng, gpu_test_seed(argc, argv, "test_gpt2_sdpa"));
    cudaStream_t s;
    CHECK_CUDA(cudaStreamCreate(&s));
    cublasHandle_t hb;
    CHECK_CUBLAS(cublasCreate(&hb));
    cudnnHandle_t hd;
    CHECK_CUDNN(cudnnCreate(&hd));
    const shape_t full = {2, 64, 192, 3}, partial = {2, 100, 192, 3};
    run_case(&full, 1, hb, hd, &rng, s);
    run_case(&partial, 0, hb, hd, &rng, s);
    CHECK_CUDNN(cudnnDestroy(hd));
    CHECK_CUBLAS(cublasDestroy(hb));
    CHECK_CUDA(cudaStreamDestroy(s));
    return test_summary();
}
