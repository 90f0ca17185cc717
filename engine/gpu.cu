/* gpu.cu — creation and teardown of a GPU context (streams, cuDNN/cuBLAS handles, workspace arena).
 * Everything a launcher needs hangs off gpu_t, so several GPUs can be driven from one host thread. */
#include "gpu.h"
#include "check.h"
#include "launch.h"
#include "conv_cache.h"
#include "knob.h"
#include "gpu_arch.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>

/* The knobs' words are in gpu_bn_t's and gpu_conv_t's order (engine/knob.c). */
static_assert(GPU_BN_OWN == 0 && GPU_BN_CUDNN == 1 && GPU_BN_AUTO == 2, "SCALING_BN's words");
static_assert(GPU_CONV_AUTO == 0 && GPU_CONV_LEGACY == 1 && GPU_CONV_BACKEND == 2, "SCALING_CONV's words");

void gpu_init(gpu_t *g, int device, math_t math) {
    memset(g, 0, sizeof *g);
    g->device = device;
    g->math = math;
    g->bn = (gpu_bn_t)knob_get(KNOB_BN);
    g->conv = (gpu_conv_t)knob_get(KNOB_CONV);
    g->comm_high = knob_get(KNOB_COMM_PRIORITY) == 0;   /* high */
    CHECK_CUDA(cudaSetDevice(device));
    CHECK_CUDA(cudaStreamCreateWithFlags(&g->stream, cudaStreamNonBlocking));
    /* The block scheduler starts a higher-priority stream's blocks first as SMs free up. An all-reduce kernel that
     * waits behind the compute stream's blocks on one GPU keeps its peers' kernels spinning on their SMs (and a
     * persistent batch-norm kernel there waiting for those SMs), so communication goes first. */
    int least = 0, greatest = 0;
    CHECK_CUDA(cudaDeviceGetStreamPriorityRange(&least, &greatest));
    CHECK_CUDA(cudaStreamCreateWithPriority(&g->comm_stream, cudaStreamNonBlocking, g->comm_high ? greatest : least));
    CHECK_CUDNN(cudnnCreate(&g->cudnn));
    CHECK_CUDNN(cudnnSetStream(g->cudnn, g->stream));
    CHECK_CUBLAS(cublasCreate(&g->cublas));
    CHECK_CUBLAS(cublasSetStream(g->cublas, g->stream));
    /* A workspace of our own, allocated here rather than by cuBLAS at its first call (inside a graph capture, or
     * inside a timed step): eager and captured GEMMs use the same memory and the same size. 32 MiB is cuBLAS's
     * recommendation for Hopper. */
    CHECK_ALLOC(cudaMalloc(&g->cublas_ws, GPU_CUBLAS_WORKSPACE));
    CHECK_CUBLAS(cublasSetWorkspace(g->cublas, g->cublas_ws, GPU_CUBLAS_WORKSPACE));
    /* fp32 GEMMs stay fp32 under tf32: PyTorch's default (TF32 convolutions, strict fp32 matmuls), so the two
     * engines are compared at the same math. fp32 is pedantic so no override can bring TF32 back. bf16 and fp16
     * GEMMs (cublasGemmEx, fp32 compute) use tensor cores under the default mode. */
    CHECK_CUBLAS(cublasSetMathMode(g->cublas, MATH_INFO[math].strict ? CUBLAS_PEDANTIC_MATH : CUBLAS_DEFAULT_MATH));
}

void gpu_workspace_reserve(gpu_t *g, size_t bytes) {
    if (bytes <= g->workspace_bytes) return;
    CHECK_CUDA(cudaSetDevice(g->device));
    CHECK_CUDA(cudaStreamSynchronize(g->stream));   /* the old arena may still be in use */
    if (g->workspace) CHECK_CUDA(cudaFree(g->workspace));
    CHECK_ALLOC(cudaMalloc(&g->workspace, bytes));
    g->workspace_bytes = bytes;
}

void gpu_workspace_set(gpu_t *g, size_t bytes) {
    CHECK_CUDA(cudaSetDevice(g->device));
    CHECK_CUDA(cudaStreamSynchronize(g->stream));
    if (g->workspace) CHECK_CUDA(cudaFree(g->workspace));
    g->workspace = NULL;
    g->workspace_bytes = 0;
    if (bytes) {
        CHECK_ALLOC(cudaMalloc(&g->workspace, bytes));
        g->workspace_bytes = bytes;
    }
}

// --- kernels
template <typename T>
__global__ static void ones_kernel(T *p, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) p[i] = (T)1.0f;
}

/* Counter-based hash: fills any size without host data or RNG state. */
template <typename T>
__global__ static void fill_hash_kernel(T *p, size_t n, unsigned seed, float lo, float hi) {
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        unsigned h = (unsigned)i * 2654435761u ^ (unsigned)(i >> 32) ^ seed;
        h ^= h >> 16; h *= 0x7feb352du; h ^= h >> 15; h *= 0x846ca68bu; h ^= h >> 16;
        p[i] = (T)(lo + (hi - lo) * (float)(h >> 8) * (1.0f / 16777216.0f));
    }
}

// --- launchers
void gpu_fill_uniform(const gpu_t *g, void *p, dtype_t t, size_t n, unsigned seed, float lo, float hi) {
    if (!n) return;
    unsigned blocks = launch_blocks(n, 256, 8192);
    if (t == DTYPE_BF16)
        fill_hash_kernel<<<blocks, 256, 0, g->stream>>>((__nv_bfloat16 *)p, n, seed, lo, hi);
    else if (t == DTYPE_FP16)
        fill_hash_kernel<<<blocks, 256, 0, g->stream>>>((__half *)p, n, seed, lo, hi);
    else
        fill_hash_kernel<<<blocks, 256, 0, g->stream>>>((float *)p, n, seed, lo, hi);
    CHECK_LAUNCH();
}

void gpu_ones_reserve(gpu_t *g, int n) {
    if (n <= g->ones_len) return;
    CHECK_CUDA(cudaSetDevice(g->device));
    CHECK_CUDA(cudaStreamSynchronize(g->stream));
    for (int t = 0; t < DTYPE_COUNT; t++) {
        if (g->ones[t]) CHECK_CUDA(cudaFree(g->ones[t]));
        g->ones[t] = NULL;
    }
    /* fp32 (GEMVs of fp32 layers, and the parameters' type) and the math's activation type. */
    const dtype_t need[2] = {DTYPE_FP32, math_act_dtype(g->math)};
    for (int k = 0; k < 2; k++) {
        const dtype_t t = need[k];
        if (g->ones[t]) continue;
        CHECK_ALLOC(cudaMalloc(&g->ones[t], (size_t)n * dtype_size(t)));
        const unsigned b = (unsigned)((n + 255) / 256);
        if (t == DTYPE_BF16) ones_kernel<<<b, 256, 0, g->stream>>>((__nv_bfloat16 *)g->ones[t], n);
        else if (t == DTYPE_FP16) ones_kernel<<<b, 256, 0, g->stream>>>((__half *)g->ones[t], n);
        else ones_kernel<<<b, 256, 0, g->stream>>>((float *)g->ones[t], n);
        CHECK_LAUNCH();
    }
    g->ones_len = n;
}

__global__ static void spin_kernel(long long cycles) {
    long long t0 = clock64();
    while (clock64() - t0 < cycles) {}
}

void gpu_hold_stream(cudaStream_t s, long long cycles) {
    spin_kernel<<<1, 1, 0, s>>>(cycles);
    CHECK_LAUNCH();
}

int gpu_try_malloc(void **p, size_t bytes) {
    cudaError_t e = cudaMalloc(p, bytes);
    if (e == cudaSuccess && fault_inject(FAULT_ALLOC)) {   /* test-only (fault.h) */
        CHECK_CUDA(cudaFree(*p));
        e = cudaErrorMemoryAllocation;
    }
    if (e == cudaErrorMemoryAllocation) {
        (void)cudaGetLastError();   /* not sticky: reported by the caller, not at the next check */
        *p = NULL;
        return -1;
    }
    CHECK_CUDA(e);
    return 0;
}

void gpu_enable_peer(int device, int peer) {
    int known = device >= 0 && device < 64 && peer >= 0 && peer < 64;
    unsigned long long bit = known ? 1ull << peer : 0;
    if (known && (__atomic_load_n(&process_state.peers.enabled[device], __ATOMIC_ACQUIRE) & bit)) return;
    CHECK_CUDA(cudaSetDevice(device));
    cudaError_t e = cudaDeviceEnablePeerAccess(peer, 0);
    if (e == cudaErrorPeerAccessAlreadyEnabled) {   /* two threads at once, or a pair beyond the table */
        (void)cudaGetLastError();   /* not an error here, and it must not surface at the next CHECK_LAUNCH */
        e = cudaSuccess;
    }
    CHECK_CUDA(e);
    /* recorded once enabled, so that no caller returns before peer access exists */
    if (known) __atomic_fetch_or(&process_state.peers.enabled[device], bit, __ATOMIC_RELEASE);
}

/* The GPU model, the cuDNN version and the search rule: the choices of one hold for the other GPUs of its kind, and
 * lines searched by another rule (cudnnFind alone: older versions, SCALING_CONV=legacy; the backend for fewer maths)
 * are not taken for this one's. */
static void conv_cache_id(const gpu_t *g, char *buf, size_t len) {
    cudaDeviceProp prop;
    CHECK_CUDA(cudaGetDeviceProperties(&prop, g->device));
    int k = snprintf(buf, len, "%s|cudnn %zu|conv %s", prop.name, cudnnGetVersion(), knob_word(KNOB_CONV, g->conv));
    if (g->conv == GPU_CONV_LEGACY) return;
    const char *sep = "|backend ";   /* then the maths it covers */
    for (int m = 0; m < MATH_COUNT && k > 0 && (size_t)k < len; m++)
        if (gpu_conv_backend_math((math_t)m)) {
            k += snprintf(buf + k, len - (size_t)k, "%s%s", sep, gpu_math_name((math_t)m));
            sep = " ";
        }
}

void gpu_conv_cache_load(gpu_t *g) {
    if (!g->setup.conv_cache) return;
    char id[CONV_CACHE_ID_MAX], err[512];
    conv_cache_id(g, id, sizeof id);
    if (conv_cache_load(g->setup.conv_cache, id, &g->conv_algos, &g->n_conv_algos, &g->cap_conv_algos, err, sizeof err))
        check_fail(__FILE__, __LINE__, "--conv-cache", err);
}

void gpu_conv_cache_save(gpu_t *g) {
    if (!g->setup.conv_cache) return;
    char id[CONV_CACHE_ID_MAX], err[512];
    conv_cache_id(g, id, sizeof id);
    if (conv_cache_save(g->setup.conv_cache, id, g->conv_algos, g->n_conv_algos, err, sizeof err) != 0)
        check_fail(__FILE__, __LINE__, "--conv-cache", err);
    /* Silent when every choice came from the file: a run that searched says so, as it may run other kernels. */
    if (g->conv_searches || g->bn_searches)
        printf("# --conv-cache %s: GPU %d searched %d convolution algorithm%s and %d batch-norm shape%s the file did not "
               "have\n", g->setup.conv_cache, g->device, g->conv_searches, g->conv_searches == 1 ? "" : "s",
               g->bn_searches, g->bn_searches == 1 ? "" : "s");
    g->conv_searches = g->bn_searches = 0;
}

size_t gpu_mem_used(const gpu_t *g) {
    size_t free_b = 0, total_b = 0;
    CHECK_CUDA(cudaSetDevice(g->device));
    CHECK_CUDA(cudaMemGetInfo(&free_b, &total_b));
    return total_b - free_b;
}

size_t gpu_params_download(const gpu_t *g, const float *dev, size_t n, float *host, size_t max) {
    if (!host) return n;
    CHECK_CUDA(cudaSetDevice(g->device));
    CHECK_CUDA(cudaStreamSynchronize(g->stream));
    CHECK_CUDA(cudaMemcpy(host, dev, (n < max ? n : max) * sizeof(float), cudaMemcpyDeviceToHost));
    return n;
}

size_t gpu_mem_baseline(int device) {
    size_t free_b = 0, total_b = 0;
    CHECK_CUDA(cudaSetDevice(device));
    CHECK_CUDA(cudaFree(0));
    CHECK_CUDA(cudaMemGetInfo(&free_b, &total_b));
    return total_b - free_b;
}

void gpu_free(gpu_t *g) {
    if (!g->stream) return;
    CHECK_CUDA(cudaSetDevice(g->device));
    CHECK_CUDA(cudaStreamSynchronize(g->stream));
    CHECK_CUDA(cudaStreamSynchronize(g->comm_stream));
    if (g->workspace) CHECK_CUDA(cudaFree(g->workspace));
    for (int t = 0; t < DTYPE_COUNT; t++)
        if (g->ones[t]) CHECK_CUDA(cudaFree(g->ones[t]));
    CHECK_CUBLAS(cublasDestroy(g->cublas));
    if (g->cublas_ws) CHECK_CUDA(cudaFree(g->cublas_ws));
    CHECK_CUDNN(cudnnDestroy(g->cudnn));
    CHECK_CUDA(cudaStreamDestroy(g->stream));
    CHECK_CUDA(cudaStreamDestroy(g->comm_stream));
    free(g->conv_algos);
    memset(g, 0, sizeof *g);
}

int gpu_count(int *n, char *why, size_t len) {
    *n = 0;
    cudaError_t ce = cudaGetDeviceCount(n);
    if (ce == cudaSuccess && *n > 0) return 0;
    int drv = 0, rt = 0;   /* a driver version of 0: no driver at all */
    cudaDriverGetVersion(&drv);
    cudaRuntimeGetVersion(&rt);
    gpu_none_t kind = ce == cudaSuccess || ce == cudaErrorNoDevice ? GPU_NONE_NO_DEVICE
                      : ce == cudaErrorInsufficientDriver      ? (drv ? GPU_NONE_DRIVER_OLD : GPU_NONE_NO_DRIVER)
                                                               : GPU_NONE_OTHER;
    (void)cudaGetLastError();
    gpu_arch_none(kind, drv, rt, cudaGetErrorString(ce), why, len);
    *n = 0;
    return -1;
}
