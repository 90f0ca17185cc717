/* gpt2_linear.cu — GPT-2's linear layers on cuBLASLt (gpt2_linear.h): one matmul per product, the bias and GELU in
 * the forward epilogue, GELU's derivative in backward's dx epilogue, each falling back to the plain product and
 * gpt2_gelu_* where cuBLASLt offers no algorithm for the fused one. */
#include <stdio.h>
#include <string.h>
#include "gpt2_linear.h"
#include "gpt2_kernels.h"
#include "gpt2_util.cuh"
#include "../gpu.h"

/* cuBLASLt is column-major: a row-major (r, c) matrix is its column-major (c, r) transpose, so x (rows, in) is
 * X^T (in, rows), W (out, in) is W^T (in, out), y (rows, out) is Y^T (out, rows), each with ld = its row length. */


// --- one matmul

typedef struct {
    cublasOperation_t ta, tb;
    int m, n, k;
    cudaDataType_t ab, cd;      /* A and B's type; C and D's */
    const void *A, *B;
    int lda, ldb;
    float beta;
    void *D;
    int ldd;
    cublasLtEpilogue_t epi;
    const void *bias;           /* BIAS epilogues: m elements of type cd */
    void *aux;                  /* GELU_AUX and DGELU epilogues: (m, n) of type cd, ld ldaux */
    int ldaux;
    const void *C;              /* the beta term's input, laid out as D; NULL: D itself */
} lt_gemm_t;


#define LT_SET(desc, attr, val) CHECK_CUBLAS(cublasLtMatmulDescSetAttribute(desc, attr, &(val), sizeof(val)))

/* D = op(A) op(B) + beta D with g's epilogue. Returns 1, or 0 where cuBLASLt has no algorithm for it (nothing ran). */
static int lt_gemm(gpt2_lt_t *c, const lt_gemm_t *g, cublasComputeType_t ct, cudaStream_t s) {
    cublasLtMatmulDesc_t op;
    cublasLtMatrixLayout_t la, lb, ld;
    CHECK_CUBLAS(cublasLtMatmulDescCreate(&op, ct, CUDA_R_32F));
    int32_t ta = g->ta, tb = g->tb;
    uint32_t epi = g->epi;
    LT_SET(op, CUBLASLT_MATMUL_DESC_TRANSA, ta);
    LT_SET(op, CUBLASLT_MATMUL_DESC_TRANSB, tb);
    LT_SET(op, CUBLASLT_MATMUL_DESC_EPILOGUE, epi);
    if (g->bias) LT_SET(op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, g->bias);
    if (g->aux) {
        int64_t ldaux = g->ldaux;
        LT_SET(op, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER, g->aux);
        LT_SET(op, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD, ldaux);
    }
    CHECK_CUBLAS(cublasLtMatrixLayoutCreate(&la, g->ab, g->ta == CUBLAS_OP_N ? g->m : g->k,
                                            g->ta == CUBLAS_OP_N ? g->k : g->m, g->lda));
    CHECK_CUBLAS(cublasLtMatrixLayoutCreate(&lb, g->ab, g->tb == CUBLAS_OP_N ? g->k : g->n,
                                            g->tb == CUBLAS_OP_N ? g->n : g->k, g->ldb));
    CHECK_CUBLAS(cublasLtMatrixLayoutCreate(&ld, g->cd, g->m, g->n, g->ldd));
    cublasLtMatmulPreference_t pref;
    CHECK_CUBLAS(cublasLtMatmulPreferenceCreate(&pref));
    uint64_t ws = GPU_CUBLAS_WORKSPACE;
    CHECK_CUBLAS(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws));
    cublasLtMatmulHeuristicResult_t res;
    int found = 0;
    cublasStatus_t st = cublasLtMatmulAlgoGetHeuristic(c->lt, op, la, lb, ld, ld, pref, 1, &res, &found);
    int ok = st == CUBLAS_STATUS_SUCCESS && found > 0;
    if (ok) {
        const float one = 1.0f;
        CHECK_CUBLAS(cublasLtMatmul(c->lt, op, &one, g->A, la, g->B, lb, &g->beta, g->C ? g->C : g->D, ld, g->D, ld,
                                    &res.algo, c->g->cublas_ws, GPU_CUBLAS_WORKSPACE, s));
    }
    CHECK_CUBLAS(cublasLtMatmulPreferenceDestroy(pref));
    CHECK_CUBLAS(cublasLtMatrixLayoutDestroy(ld));
    CHECK_CUBLAS(cublasLtMatrixLayoutDestroy(lb));
    CHECK_CUBLAS(cublasLtMatrixLayoutDestroy(la));
    CHECK_CUBLAS(cublasLtMatmulDescDestroy(op));
    return ok;
}

/* A product that must run: its epilogue is one every cuBLASLt has. */
static void lt_gemm_must(gpt2_lt_t *c, const lt_gemm_t *g, cublasComputeType_t ct, cudaStream_t s, const char *what) {
    if (!lt_gemm(c, g, ct, s)) {
        char why[160];
        snprintf(why, sizeof why, "cuBLASLt has no algorithm for this product (m %d, n %d, k %d)", g->m, g->n, g->k);
        check_fail(__FILE__, __LINE__, what, why);
    }
}

// --- host

extern "C" void gpt2_lt_init(gpt2_lt_t *c, gpu_t *g, int max_rows) {
    memset(c, 0, sizeof *c);
    CHECK_CUDA(cudaSetDevice(g->device));
    CHECK_CUBLAS(cublasLtCreate(&c->lt));
    c->g = g;
    c->max_rows = max_rows > 0 ? max_rows : 1;
    gpu_ones_reserve(g, c->max_rows);
    /* The ones are written on g's stream, and the model's setup wrote on the legacy one: any stream may read after. */
    CHECK_CUDA(cudaDeviceSynchronize());
}

extern "C" void gpt2_lt_free(gpt2_lt_t *c) {
    if (c->lt) CHECK_CUBLAS(cublasLtDestroy(c->lt));
    memset(c, 0, sizeof *c);
}

extern "C" int gpt2_linear_forward(gpt2_lt_t *c, dtype_t t, int tf32, const void *x, const void *w, const void *b,
                                   void *y, void *pre, int rows, int in, int out, cudaStream_t stream) {
    gpt2_check_type(t, "gpt2_linear_forward");
    cublasComputeType_t ct = gpt2_compute_type(t, tf32);
    // Y^T (out, rows) = W (out, in) . X^T (in, rows) [+ b (out) on every column]
    cudaDataType_t ab = gpt2_cuda_type(t);
    lt_gemm_t g = {CUBLAS_OP_T, CUBLAS_OP_N, out, rows, in, ab, ab, w, x, in, in, 0.0f, y, out,
                   CUBLASLT_EPILOGUE_DEFAULT, b, NULL, 0, NULL};
    if (!pre) {
        g.epi = b ? CUBLASLT_EPILOGUE_BIAS : CUBLASLT_EPILOGUE_DEFAULT;
        lt_gemm_must(c, &g, ct, stream, "gpt2_linear_forward");
        return 1;
    }
    g.epi = b ? CUBLASLT_EPILOGUE_GELU_AUX_BIAS : CUBLASLT_EPILOGUE_GELU_AUX;
    g.aux = pre;
    g.ldaux = out;
    if (lt_gemm(c, &g, ct, stream)) return 1;
    g.epi = b ? CUBLASLT_EPILOGUE_BIAS : CUBLASLT_EPILOGUE_DEFAULT;
    g.aux = NULL;
    g.D = pre;
    lt_gemm_must(c, &g, ct, stream, "gpt2_linear_forward");
    gpt2_gelu_forward(pre, y, t, (size_t)rows * out, stream);
    return 0;
}

extern "C" void gpt2_linear_forward_residual(gpt2_lt_t *c, dtype_t t, int tf32, const void *x, const void *w,
                                            const void *b, const void *res, void *y, int rows, int in, int out,
                                            cudaStream_t stream) {
    gpt2_check_type(t, "gpt2_linear_forward_residual");
    // Y^T (out, rows) = W (out, in) . X^T (in, rows) + 1 * RES^T (out, rows) [+ b (out) on every column]
    cudaDataType_t ab = gpt2_cuda_type(t);
    lt_gemm_t g = {CUBLAS_OP_T, CUBLAS_OP_N, out, rows, in, ab, ab, w, x, in, in, 1.0f, y, out,
                   b ? CUBLASLT_EPILOGUE_BIAS : CUBLASLT_EPILOGUE_DEFAULT, b, NULL, 0, res};
    lt_gemm_must(c, &g, gpt2_compute_type(t, tf32), stream, "gpt2_linear_forward_residual");
}

extern "C" int gpt2_linear_backward(gpt2_lt_t *c, dtype_t t, int tf32, const void *x, const void *w, const void *dy,
                                    void *dx, float dx_beta, const void *x_pre, float *dw, float *db, float dw_beta,
                                    int rows, int in, int out, cudaStream_t stream) {
    gpt2_check_type(t, "gpt2_linear_backward");
    cublasComputeType_t ct = gpt2_compute_type(t, tf32);
    cudaDataType_t ab = gpt2_cuda_type(t);
    if (dw) {   // dW^T (in, out) = X^T (in, rows) . dY (rows, out)
        lt_gemm_t g = {CUBLAS_OP_N, CUBLAS_OP_T, in, out, rows, ab, CUDA_R_32F, x, dy, in, out, dw_beta, dw, in,
                       CUBLASLT_EPILOGUE_DEFAULT, NULL, NULL, 0, NULL};
        lt_gemm_must(c, &g, ct, stream, "gpt2_linear_backward dw");
    }
    if (db) {   // db (out, 1) = dY^T (out, rows) . ones (rows, 1)
        const void *ones = c->g->ones[t];
        if (rows > c->max_rows || !ones)
            check_fail(__FILE__, __LINE__, "gpt2_linear_backward",
                       !ones ? "no ones of the activations' type on this GPU (its math's is another)"
                             : "more rows than gpt2_lt_init's ones");
        lt_gemm_t g = {CUBLAS_OP_N, CUBLAS_OP_N, out, 1, rows, ab, CUDA_R_32F, dy, ones, out, rows, dw_beta, db, out,
                       CUBLASLT_EPILOGUE_DEFAULT, NULL, NULL, 0, NULL};
        lt_gemm_must(c, &g, ct, stream, "gpt2_linear_backward db");
    }
    if (!dx) return 1;
    if (x_pre && dx_beta != 0.0f)
        check_fail(__FILE__, __LINE__, "gpt2_linear_backward", "GELU's derivative with an accumulated dx");
    // dX^T (in, rows) = W^T (in, out) . dY^T (out, rows) [times GELU'(x_pre) elementwise]
    lt_gemm_t g = {CUBLAS_OP_N, CUBLAS_OP_N, in, rows, out, ab, ab, w, dy, in, out, dx_beta, dx, in,
                   CUBLASLT_EPILOGUE_DEFAULT, NULL, NULL, 0, NULL};
    if (x_pre) {
        g.epi = CUBLASLT_EPILOGUE_DGELU;
        g.aux = (void *)x_pre;
        g.ldaux = in;
        if (lt_gemm(c, &g, ct, stream)) return 1;
        g.epi = CUBLASLT_EPILOGUE_DEFAULT;
        g.aux = NULL;
    }
    lt_gemm_must(c, &g, ct, stream, "gpt2_linear_backward dx");
    if (!x_pre) return 1;
    gpt2_gelu_backward(x_pre, dx, dx, t, (size_t)rows * in, stream);
    return 0;
}
