/* blas.cu — the cuBLAS calls of the dense and convolution layers, typed by the layer's precision: fp32 through
 * cublasSgemm/Sgemv (strict or TF32 per the handle), bf16 and fp16 through cublasGemmEx with fp32 accumulation. */
#include "cudnn_util.h"

static cudaDataType_t cuda_dtype(dtype_t t) {
    static const cudaDataType_t of[DTYPE_COUNT] = {CUDA_R_32F, CUDA_R_16BF, CUDA_R_16F};
    return of[t];
}

const void *blas_ones(const gpu_t *g, dtype_t t) {
    if (!g->ones[t]) check_fail(__FILE__, __LINE__, "blas_ones", "no vector of ones in this type (not the math's)");
    return g->ones[t];
}

/* One cublasGemmEx: operands of type ab, result of type c, alpha 1, accumulation as ct says. */
static void gemm_ex(gpu_t *g, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k, cudaDataType_t ab,
                    const void *A, int lda, const void *B, int ldb, float beta, cudaDataType_t c, void *C, int ldc,
                    cublasComputeType_t ct) {
    CHECK_CUBLAS(cublasGemmEx(g->cublas, ta, tb, m, n, k, &CU_ONE, A, ab, lda, B, ab, ldb, &beta, C, c, ldc, ct,
                              CUBLAS_GEMM_DEFAULT));
}

void blas_gemm(gpu_t *g, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k, dtype_t ab, const void *A,
               int lda, const void *B, int ldb, float beta, dtype_t c, void *C, int ldc) {
    if (ab == DTYPE_FP32 && c == DTYPE_FP32) {
        CHECK_CUBLAS(cublasSgemm(g->cublas, ta, tb, m, n, k, &CU_ONE, (const float *)A, lda, (const float *)B, ldb,
                                 &beta, (float *)C, ldc));
        return;
    }
    if (!dtype_is_low(ab) || (c != ab && c != DTYPE_FP32))
        check_fail(__FILE__, __LINE__, "blas_gemm", "operands and result of types cuBLAS does not mix");
    gemm_ex(g, ta, tb, m, n, k, cuda_dtype(ab), A, lda, B, ldb, beta, cuda_dtype(c), C, ldc, CUBLAS_COMPUTE_32F);
}

void blas_gemm_conv(gpu_t *g, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k, dtype_t ab,
                    const void *A, int lda, const void *B, int ldb, float beta, dtype_t c, void *C, int ldc) {
    if (ab == DTYPE_FP32 && c == DTYPE_FP32 && g->math == MATH_TF32) {
        gemm_ex(g, ta, tb, m, n, k, CUDA_R_32F, A, lda, B, ldb, beta, CUDA_R_32F, C, ldc, CUBLAS_COMPUTE_32F_FAST_TF32);
        return;
    }
    blas_gemm(g, ta, tb, m, n, k, ab, A, lda, B, ldb, beta, c, C, ldc);
}

void blas_bias_grad(gpu_t *g, dtype_t t, const void *dy, int k, int m, float beta, float *db) {
    if (t == DTYPE_FP32) {
        CHECK_CUBLAS(cublasSgemv(g->cublas, CUBLAS_OP_N, k, m, &CU_ONE, (const float *)dy, k,
                                 (const float *)blas_ones(g, t), 1, &beta, db, 1));
        return;
    }
    /* cuBLAS has no mixed-type GEMV: a GEMM with n = 1 (2-byte operands, fp32 result). */
    blas_gemm(g, CUBLAS_OP_N, CUBLAS_OP_N, k, 1, m, t, dy, k, blas_ones(g, t), m, beta, DTYPE_FP32, db, k);
}
