/* gpt2_util.cuh — what GPT-2's kernel files share: the fp32/bf16 dispatch (fp16 refused: it would need a loss
 * scale these kernels do not take) and warp reductions. */
#pragma once
#include <cuda_bf16.h>
#include "../check.h"
#include "../layers/elem.cuh"

/* Runs F<T>::run(a...) for t fp32 (float) or bf16 (__nv_bfloat16); stops the process on fp16, naming `what`. */
template <template <typename> class F, typename... A>
static inline void gpt2_dispatch(const char *what, dtype_t t, A &&...a) {
    if (t == DTYPE_BF16) F<__nv_bfloat16>::run(a...);
    else if (t == DTYPE_FP32) F<float>::run(a...);
    else check_fail(__FILE__, __LINE__, what, "fp16 activations are not supported by GPT-2's kernels");
}

__device__ __forceinline__ float gpt2_warp_sum(float v) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}
__device__ __forceinline__ float gpt2_warp_max(float v) {
    for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}
