/* loss_scale.cu — fp16's loss scale on the device: the check of a step's gradients for an inf or a NaN, and
 * loss_scale.h's schedule run by one thread, so the decision to skip a step never leaves the GPU. */
#include "loss_scale_gpu.h"
#include "check.h"
#include "launch.h"
#include <cuda_bf16.h>
#include <cuda_fp16.h>

// --- kernels

/* Any non-finite element sets the flag (every writer writes 1: no atomics needed). */
template <typename T>
__global__ static void check_kernel(const T *__restrict__ g, size_t n, loss_scale_t *s) {
    bool bad = false;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        bad |= !isfinite((float)g[i]);
    if (__any_sync(0xffffffffu, bad) && (threadIdx.x & 31) == 0) s->found_inf = 1;
}

__global__ static void advance_kernel(loss_scale_t *s, loss_scale_cfg_t c) { loss_scale_update(s, c); }

__global__ static void combine_kernel(loss_scale_t *s, const int *flags, int n) {
    int any = 0;
    for (int i = 0; i < n; i++) any |= flags[i] != 0;
    if (any) s->found_inf = 1;
}

// --- launchers

loss_scale_t *loss_scale_alloc(loss_scale_cfg_t c, cudaStream_t stream) {
    loss_scale_t *dev = NULL, h = loss_scale_start(c);
    CHECK_ALLOC(cudaMalloc((void **)&dev, sizeof *dev));
    CHECK_CUDA(cudaMemcpyAsync(dev, &h, sizeof h, cudaMemcpyHostToDevice, stream));
    CHECK_CUDA(cudaStreamSynchronize(stream));   /* h is on this stack frame */
    return dev;
}

void loss_scale_free(loss_scale_t *dev) {
    if (dev) CHECK_CUDA(cudaFree(dev));
}

void loss_scale_check(loss_scale_t *dev, const void *grads, dtype_t t, size_t n, cudaStream_t stream) {
    if (!n) return;
    const unsigned b = launch_blocks(n, 256, 2048);
    if (t == DTYPE_BF16) check_kernel<<<b, 256, 0, stream>>>((const __nv_bfloat16 *)grads, n, dev);
    else if (t == DTYPE_FP16) check_kernel<<<b, 256, 0, stream>>>((const __half *)grads, n, dev);
    else check_kernel<<<b, 256, 0, stream>>>((const float *)grads, n, dev);
    CHECK_LAUNCH();
}

void loss_scale_combine(loss_scale_t *dev, const int *flags, int n, cudaStream_t stream) {
    if (n <= 0) return;
    combine_kernel<<<1, 1, 0, stream>>>(dev, flags, n);
    CHECK_LAUNCH();
}

void loss_scale_advance(loss_scale_t *dev, loss_scale_cfg_t c, cudaStream_t stream) {
    advance_kernel<<<1, 1, 0, stream>>>(dev, c);
    CHECK_LAUNCH();
}

loss_scale_t loss_scale_read(const loss_scale_t *dev, cudaStream_t stream) {
    loss_scale_t h;
    CHECK_CUDA(cudaMemcpyAsync(&h, dev, sizeof h, cudaMemcpyDeviceToHost, stream));
    CHECK_CUDA(cudaStreamSynchronize(stream));
    return h;
}
