/* gpt2_attn.cu — the plain causal attention (gpt2_attn.h): per sequence, one strided-batched GEMM over the heads for
 * each product, reading q, k and v where they lie in qkv (no permutation), and a warp-per-row causal softmax. */
#include <math.h>
#include "gpt2_attn.h"
#include "gpt2_util.cuh"

#define ATT_WARPS 8   /* rows per block: one warp per row */

/* Column-major views (cuBLAS): head h of sequence b is, in qkv, Q^T (hd, T) at b T 3C + h hd with ld 3C (K at + C,
 * V at + 2C); in out, O^T (hd, T) at b T C + h hd with ld C; the head's row-major (T, T) attention is the
 * column-major (T_k, T_q) matrix with ld T: element (i, j) of P is P^T's (j, i). Heads are hd apart in qkv and out,
 * T * T apart in att: one strided batch of NH per sequence. */

// --- kernels

template <typename T>
__global__ static void causal_softmax_kernel(T *att, int rows, int seq, float scale) {
    int r = blockIdx.x * ATT_WARPS + threadIdx.x / 32, lane = threadIdx.x % 32;
    if (r >= rows) return;
    int i = r % seq;   /* the query's position: keys 0..i are visible */
    T *p = att + (size_t)r * seq;
    float m = -INFINITY;
    for (int j = lane; j <= i; j += 32) m = fmaxf(m, to_f(p[j]));
    m = gpt2_warp_max(m);
    float s = 0.0f;
    for (int j = lane; j <= i; j += 32) s += expf(scale * (to_f(p[j]) - m));
    float inv = 1.0f / gpt2_warp_sum(s);
    for (int j = lane; j < seq; j += 32) p[j] = from_f<T>(j <= i ? expf(scale * (to_f(p[j]) - m)) * inv : 0.0f);
}

/* dS = scale * P (dP - sum_j P dP) on the visible keys, 0 above the diagonal; in place over dP. */
template <typename T>
__global__ static void causal_softmax_backward_kernel(const T *att, T *datt, int rows, int seq, float scale) {
    int r = blockIdx.x * ATT_WARPS + threadIdx.x / 32, lane = threadIdx.x % 32;
    if (r >= rows) return;
    int i = r % seq;
    const T *p = att + (size_t)r * seq;
    T *d = datt + (size_t)r * seq;
    float s = 0.0f;
    for (int j = lane; j <= i; j += 32) s += to_f(p[j]) * to_f(d[j]);
    s = gpt2_warp_sum(s);
    for (int j = lane; j < seq; j += 32) d[j] = from_f<T>(j <= i ? scale * to_f(p[j]) * (to_f(d[j]) - s) : 0.0f);
}

// --- launchers

typedef struct {
    cublasHandle_t h;
    cudaDataType_t type;
    cublasComputeType_t ct;
    size_t es;   /* bytes per element */
} att_blas_t;

/* C = op(A) op(B) + beta C for `batch` matrices strideA/B/C elements apart (alpha 1). */
static void sb_gemm(const att_blas_t *a, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,
                    const void *A, int lda, long long sa, const void *B, int ldb, long long sb, void *C, int ldc,
                    long long sc, int batch) {
    const float one = 1.0f, zero = 0.0f;
    CHECK_CUBLAS(cublasGemmStridedBatchedEx(a->h, ta, tb, m, n, k, &one, A, a->type, lda, sa, B, a->type, ldb, sb,
                                            &zero, C, a->type, ldc, sc, batch, a->ct, CUBLAS_GEMM_DEFAULT));
}

static att_blas_t att_blas(cublasHandle_t h, dtype_t t, int tf32, cudaStream_t stream, const char *what) {
    gpt2_check_type(t, what);
    /* cublasSetStream also drops a workspace set with cublasSetWorkspace (gpu_t's, which a captured GEMM needs), so
     * the stream is set only where it differs */
    cudaStream_t cur = NULL;
    CHECK_CUBLAS(cublasGetStream(h, &cur));
    if (cur != stream) CHECK_CUBLAS(cublasSetStream(h, stream));
    att_blas_t a = {h, gpt2_cuda_type(t), gpt2_compute_type(t, tf32), dtype_size(t)};
    return a;
}

template <typename T> struct softmax_fwd {
    static void run(void *att, int rows, int seq, float scale, cudaStream_t s) {
        causal_softmax_kernel<T><<<(rows + ATT_WARPS - 1) / ATT_WARPS, 32 * ATT_WARPS, 0, s>>>((T *)att, rows, seq,
                                                                                               scale);
        CHECK_LAUNCH();
    }
};
template <typename T> struct softmax_bwd {
    static void run(const void *att, void *datt, int rows, int seq, float scale, cudaStream_t s) {
        causal_softmax_backward_kernel<T><<<(rows + ATT_WARPS - 1) / ATT_WARPS, 32 * ATT_WARPS, 0, s>>>(
            (const T *)att, (T *)datt, rows, seq, scale);
        CHECK_LAUNCH();
    }
};

extern "C" void gpt2_attn_forward(cublasHandle_t h, dtype_t t, int tf32, const void *qkv, void *att, void *out, int B,
                                  int T, int C, int NH, cudaStream_t stream) {
    att_blas_t a = att_blas(h, t, tf32, stream, "gpt2_attn_forward");
    int hd = C / NH;
    long long tt = (long long)T * T;
    for (int b = 0; b < B; b++) {
        const char *q = (const char *)qkv + (size_t)b * T * 3 * C * a.es;
        char *pb = (char *)att + (size_t)b * NH * tt * a.es;
        // S^T (T_k, T_q) = K (T_k, hd) . Q^T (hd, T_q)
        sb_gemm(&a, CUBLAS_OP_T, CUBLAS_OP_N, T, T, hd, q + C * a.es, 3 * C, hd, q, 3 * C, hd, pb, T, tt, NH);
    }
    gpt2_dispatch<softmax_fwd>("gpt2_attn_forward", t, att, B * NH * T, T, 1.0f / sqrtf((float)hd), stream);
    for (int b = 0; b < B; b++) {
        const char *q = (const char *)qkv + (size_t)b * T * 3 * C * a.es;
        const char *pb = (const char *)att + (size_t)b * NH * tt * a.es;
        // O^T (hd, T_q) = V^T (hd, T_k) . P^T (T_k, T_q)
        sb_gemm(&a, CUBLAS_OP_N, CUBLAS_OP_N, hd, T, T, q + 2 * C * a.es, 3 * C, hd, pb, T, tt,
                (char *)out + (size_t)b * T * C * a.es, C, hd, NH);
    }
}

extern "C" void gpt2_attn_backward(cublasHandle_t h, dtype_t t, int tf32, const void *qkv, const void *att,
                                   const void *dout, void *datt, void *dqkv, int B, int T, int C, int NH,
                                   cudaStream_t stream) {
    att_blas_t a = att_blas(h, t, tf32, stream, "gpt2_attn_backward");
    int hd = C / NH;
    long long tt = (long long)T * T;
    for (int b = 0; b < B; b++) {
        const char *q = (const char *)qkv + (size_t)b * T * 3 * C * a.es;
        const char *dob = (const char *)dout + (size_t)b * T * C * a.es;
        char *db = (char *)datt + (size_t)b * NH * tt * a.es;
        // dP^T (T_k, T_q) = V (T_k, hd) . dO^T (hd, T_q)
        sb_gemm(&a, CUBLAS_OP_T, CUBLAS_OP_N, T, T, hd, q + 2 * C * a.es, 3 * C, hd, dob, C, hd, db, T, tt, NH);
    }
    gpt2_dispatch<softmax_bwd>("gpt2_attn_backward", t, att, datt, B * NH * T, T, 1.0f / sqrtf((float)hd), stream);
    for (int b = 0; b < B; b++) {
        const char *q = (const char *)qkv + (size_t)b * T * 3 * C * a.es;
        const char *dob = (const char *)dout + (size_t)b * T * C * a.es;
        const char *pb = (const char *)att + (size_t)b * NH * tt * a.es;
        const char *db = (const char *)datt + (size_t)b * NH * tt * a.es;
        char *dq = (char *)dqkv + (size_t)b * T * 3 * C * a.es;
        // dQ^T (hd, T_q) = K^T (hd, T_k) . dS^T (T_k, T_q)
        sb_gemm(&a, CUBLAS_OP_N, CUBLAS_OP_N, hd, T, T, q + C * a.es, 3 * C, hd, db, T, tt, dq, 3 * C, hd, NH);
        // dK^T (hd, T_k) = Q^T (hd, T_q) . dS (T_q, T_k)
        sb_gemm(&a, CUBLAS_OP_N, CUBLAS_OP_T, hd, T, T, q, 3 * C, hd, db, T, tt, dq + C * a.es, 3 * C, hd, NH);
        // dV^T (hd, T_k) = dO^T (hd, T_q) . P (T_q, T_k)
        sb_gemm(&a, CUBLAS_OP_N, CUBLAS_OP_T, hd, T, T, dob, C, hd, pb, T, tt, dq + 2 * C * a.es, 3 * C, hd, NH);
    }
}
