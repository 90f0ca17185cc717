/* gpt2_util.cuh — what GPT-2's kernel files share: the activations' types (fp32 or bf16; fp16 refused: it would need
 * a loss scale these kernels do not take) for the kernels and cuBLAS, and warp reductions. */
#pragma once
#include <cuda_bf16.h>
#include <cublas_v2.h>
#include "../check.h"
#include "../layers/elem.cuh"

/* Stops the process, naming the caller `what`, unless t is fp32 or bf16. */
static inline void gpt2_check_type(dtype_t t, const char *what) {
    if (t != DTYPE_FP32 && t != DTYPE_BF16)
        check_fail(__FILE__, __LINE__, what, "GPT-2's kernels take fp32 or bf16 activations (fp16 would need a loss "
                   "scale)");
}
/* cuBLAS's name of t, and the compute type of a product of it: fp32 accumulation, on TF32 tensor cores for fp32
 * operands where tf32. */
static inline cudaDataType_t gpt2_cuda_type(dtype_t t) { return t == DTYPE_BF16 ? CUDA_R_16BF : CUDA_R_32F; }
static inline cublasComputeType_t gpt2_compute_type(dtype_t t, int tf32) {
    return t == DTYPE_FP32 && tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
}

/* Runs F<T>::run(a...) for t fp32 (float) or bf16 (__nv_bfloat16); stops the process on fp16, naming `what`. */
template <template <typename> class F, typename... A>
static inline void gpt2_dispatch(const char *what, dtype_t t, A &&...a) {
    gpt2_check_type(t, what);
    if (t == DTYPE_BF16) F<__nv_bfloat16>::run(a...);
    else F<float>::run(a...);
}

__device__ __forceinline__ float gpt2_warp_sum(float v) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}
__device__ __forceinline__ float gpt2_warp_max(float v) {
    for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}
