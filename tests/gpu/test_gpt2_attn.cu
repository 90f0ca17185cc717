/* test_gpt2_attn.cu — GPT-2's plain causal attention against a CPU double reference in strict fp32 and bf16: the
 * kept attention P, the output, and the gradient of q, k and v; negative controls: attention to later positions
 * (no causal mask), scores not scaled by 1/sqrt(head width), and backward's dS without that scale.
 * Run: ./test_gpt2_attn [seed]   (fresh random inputs each run, seed printed; exits 77 without a CUDA device) */
#include <string.h>
#include "gpt2_ref.h"
#include "engine/gpt2/gpt2_attn.h"

/* Strict fp32: four products and a softmax in a row, each erring by about sqrt(K) 2^-24 relative (K <= 64), under
 * 1e-6 together; 1e-4 is a wide margin that any wrong term (of O(1) size here) still exceeds.
 * bf16: the scores S, the attention P, the output, and backward's dP and dS are each stored in bf16, each rounding
 * erring by <= 2^-8 relative; an error in S moves P by about |scale S| times it (<= 1 here: inputs in [-1, 1], head
 * width 16), and dS = P (dP - sum P dP) can cancel, amplifying dP's rounding a few times. Up to 6 roundings, x2 for the
 * cancellation: 12 * 2^-8 = 0.047. The controls are O(1) apart. */
#define TOL_FP32 1e-4
#define TOL_ATT_BF16 (12 * BF16_U)

static const int B = 2, T = 64, C = 64, NH = 4;

static void run_case(dtype_t t, cublasHandle_t hb, rng_t *rng, cudaStream_t s) {
    size_t es = dtype_size(t), nqkv = (size_t)B * T * 3 * C, no = (size_t)B * T * C, na = (size_t)B * NH * T * T;
    double tol = t == DTYPE_BF16 ? TOL_ATT_BF16 : TOL_FP32, scale = 1.0 / sqrt((double)(C / NH));
    char name[64];
    void *dq, *ddo, *da = gpt2_dev(na, es), *dO = gpt2_dev(no, es), *dda = gpt2_dev(na, es), *ddq = gpt2_dev(nqkv, es);
    float *qkv = gpt2_rand_dev(rng, nqkv, -1, 1, t, &dq), *dout = gpt2_rand_dev(rng, no, -1, 1, t, &ddo);
    poison(da, na, t);
    poison(dO, no, t);
    poison(ddq, nqkv, t);
    gpt2_attn_forward(hb, t, 0, dq, da, dO, B, T, C, NH, s);
    gpt2_attn_backward(hb, t, 0, dq, da, ddo, dda, ddq, B, T, C, NH, s);
    CHECK_CUDA(cudaStreamSynchronize(s));
    double *out = dalloc(no), *att = dalloc(na), *dqkv = dalloc(nqkv);
    double *out_nc = dalloc(no), *att_nc = dalloc(na), *dqkv_nc = dalloc(nqkv);
    double *out_ns = dalloc(no), *att_ns = dalloc(na), *dqkv_bs = dalloc(nqkv);
    double *tmp_out = dalloc(no), *tmp_att = dalloc(na), *tmp_dqkv = dalloc(nqkv);
    gpt2_ref_attention(B, T, C, NH, qkv, dout, scale, scale, 1, out, att, NULL, dqkv);
    /* attends to later positions too */
    gpt2_ref_attention(B, T, C, NH, qkv, dout, scale, scale, 0, out_nc, att_nc, NULL, dqkv_nc);
    /* scores not scaled */
    gpt2_ref_attention(B, T, C, NH, qkv, dout, 1.0, 1.0, 1, out_ns, att_ns, NULL, tmp_dqkv);
    /* backward's dS not scaled */
    gpt2_ref_attention(B, T, C, NH, qkv, dout, scale, 1.0, 1, tmp_out, tmp_att, NULL, dqkv_bs);
    float *got = falloc(na > nqkv ? na : nqkv);
    snprintf(name, sizeof name, "[%s] causal attention forward", dtype_name(t));
    gpt2_check_dev(name, "P (kept)", got, da, t, att, na, tol, "no causal mask", att_nc);
    control(name, "scores not scaled", got, att, att_ns, na, tol);
    gpt2_check_dev(name, "out", got, dO, t, out, no, tol, "no causal mask", out_nc);
    control(name, "scores not scaled", got, out, out_ns, no, tol);
    snprintf(name, sizeof name, "[%s] causal attention backward", dtype_name(t));
    gpt2_check_dev(name, "dqkv", got, ddq, t, dqkv, nqkv, tol, "no causal mask", dqkv_nc);
    control(name, "dS not scaled", got, dqkv, dqkv_bs, nqkv, tol);
    free(qkv), free(dout), free(out), free(att), free(dqkv), free(out_nc), free(att_nc), free(dqkv_nc), free(out_ns);
    free(att_ns), free(dqkv_bs), free(got), free(tmp_out), free(tmp_att), free(tmp_dqkv);
    void *bufs[] = {dq, da, dO, ddo, dda, ddq};
    for (int i = 0; i < 6; i++) CHECK_CUDA(cudaFree(bufs[i]));
}

int main(int argc, char **argv) {
    gpu_test_require(1);
    rng_t rng;
    rng_seed(&rng, gpu_test_seed(argc, argv, "test_gpt2_attn"));
    cudaStream_t s;
    CHECK_CUDA(cudaStreamCreate(&s));
    cublasHandle_t hb;
    CHECK_CUBLAS(cublasCreate(&hb));   /* the default math mode: CUBLAS_COMPUTE_32F is strict fp32 */
    run_case(DTYPE_FP32, hb, &rng, s);
    run_case(DTYPE_BF16, hb, &rng, s);
    CHECK_CUBLAS(cublasDestroy(hb));
    CHECK_CUDA(cudaStreamDestroy(s));
    return test_summary();
}
