/* check_cuda.c — CHECK_CUDA's failure path: the CUDA error's text, and for an allocation that found no memory the
 * device's free and total memory at that moment, which the oom row records. */
#include "check.h"
#include <cuda_runtime.h>

void check_fail_cuda(const char *file, int line, const char *what, int error) {
    cudaError_t e = (cudaError_t)error;
    if (e == cudaErrorMemoryAllocation) {
        size_t free_b = 0, total_b = 0;
        if (cudaMemGetInfo(&free_b, &total_b) == cudaSuccess) {
            char msg[96];
            snprintf(msg, sizeof msg, "mem %.0f %.0f\n", free_b / 1048576.0, total_b / 1048576.0);
            check_report(msg);
        }
    }
    check_fail(file, line, what, cudaGetErrorString(e));
}
