/* gpu.h — one GPU context: device, compute and communication streams, cuDNN/cuBLAS handles, math mode,
 * the workspace arena and the cuDNN algorithm cache. No globals: every launcher gets one of these. */
#pragma once
#include <stddef.h>
#include <cuda_runtime.h>
#include <cudnn.h>
#include <cublas_v2.h>
#include "dtype.h"
#include "conv_algo.h"
#include "math_mode.h"
#include "setup_count.h"

#define GPU_CUBLAS_WORKSPACE ((size_t)32 << 20)

/* math_t, its names and its table (activation type, strictness): math_mode.h. */
static inline const char *gpu_math_name(math_t m) { return math_name(m); }

/* Whether convolutions under math m may run on cuDNN backend engine configs (engine/layers/conv.cu): every math but
 * strict fp32, whose FMA-only promise the backend cannot keep (it has no math type: fp32 tensors may run on TF32
 * tensor cores). The --conv-cache id names these maths. */
static inline int gpu_conv_backend_math(math_t m) { return !MATH_INFO[m].strict; }

/* Which batch-norm training kernels run: per layer, the way measured fastest at its shape among cuDNN's and our
 * kernels' (the default, auto: engine/layers/bn.cu, recorded in the algorithm cache as convolutions' are), or
 * everywhere cuDNN's or ours (engine/layers/bn_nhwc.cu; own still measures among our ways). Read once by gpu_init
 * from the environment, SCALING_BN=auto|own|cudnn: a benchmark knob for timing each in one binary. */
typedef enum { GPU_BN_OWN = 0, GPU_BN_CUDNN = 1, GPU_BN_AUTO = 2 } gpu_bn_t;

/* How a convolution's search picks where gpu_conv_backend_math allows the backend (else cudnnFind's algorithm):
 * auto, the default, replaces cudnnFind's choice with a backend engine config (engine/layers/conv_be.h) at least 3 %
 * faster; legacy only cudnnFind; backend the heuristics' first backend config that runs, wherever one does, untimed
 * (tests). SCALING_CONV, read once. */
typedef enum { GPU_CONV_AUTO = 0, GPU_CONV_LEGACY = 1, GPU_CONV_BACKEND = 2 } gpu_conv_t;

/* What a run lends each of its GPUs' setup (both borrowed, either NULL): the --conv-cache file (engine/conv_cache.h)
 * and the counter the run's progress lines read (engine/setup_count.h). */
typedef struct {
    const char *conv_cache;
    setup_count_t *count;
} gpu_setup_t;

typedef struct gpu {
    int device;                 /* CUDA ordinal */
    cudaStream_t stream;        /* compute: forward, backward, update */
    cudaStream_t comm_stream;   /* communication, ordered against `stream` with events; created at the device's
                                 * highest priority unless SCALING_COMM_PRIORITY=normal (comm_high 0) */
    int comm_high;
    cudnnHandle_t cudnn;        /* bound to `stream` */
    cublasHandle_t cublas;      /* bound to `stream` */
    void *cublas_ws;            /* its workspace (GPU_CUBLAS_WORKSPACE bytes): the same for eager and captured GEMMs */
    math_t math;
    gpu_bn_t bn;                /* batch-norm training kernels (SCALING_BN); tests may set it after gpu_init */
    gpu_conv_t conv;            /* convolution search rule (SCALING_CONV); tests may set it after gpu_init */
    void *workspace;            /* one arena for every layer's cuDNN workspace on this GPU */
    size_t workspace_bytes;
    void *ones[DTYPE_COUNT];    /* vectors of 1s for bias add/reduction through cuBLAS: fp32 and the math's activation
                                 * type (NULL for the others) */
    int ones_len;
    conv_algo_t *conv_algos;    /* cudnnFind's choices per shape, n_conv_algos of them (conv_algo_add grows it) */
    int n_conv_algos, cap_conv_algos;
    gpu_setup_t setup;          /* the run's --conv-cache file and setup counter, or NULLs: set after gpu_init */
    int conv_searches;          /* algorithm searches (shape and direction) since the last gpu_conv_cache_save */
    int bn_searches;            /* batch-norm shapes measured (SCALING_BN=auto) since then */
} gpu_t;

#ifdef __cplusplus
extern "C" {
#endif
/* Creates streams and handles on `device`; math sets cuBLAS' math mode here and conv math at setup. Reads
 * SCALING_BN and SCALING_CONV (unset or empty: auto) and SCALING_COMM_PRIORITY (high, the default, or normal: the
 * communication stream's priority against the compute stream's); a value none names stops the process with one
 * line, exit 2 (engine/knob.h). */
void gpu_init(gpu_t *g, int device, math_t math);
void gpu_free(gpu_t *g);
/* With g->setup.conv_cache set: fills the algorithm cache from that file (before layers are set up) / appends what
 * the search added (after, saying on stdout how many searches ran), under the GPU model's and cuDNN version's id. A
 * file that cannot be read or written stops the run with its path and the reason (it was checked before the run
 * began, conv_cache_check). */
void gpu_conv_cache_load(gpu_t *g);
void gpu_conv_cache_save(gpu_t *g);
/* Grows the workspace arena to at least `bytes` (never shrinks); call outside any timed region. */
void gpu_workspace_reserve(gpu_t *g, size_t bytes);
/* Releases the arena and allocates exactly `bytes`: used after algorithm search to give back the search arena. */
void gpu_workspace_set(gpu_t *g, size_t bytes);
/* Ensures g->ones[fp32] and g->ones[the math's activation type] have at least n elements. */
void gpu_ones_reserve(gpu_t *g, int n);
/* Fills p[0..n) (elements of type t) with uniform values in [lo, hi) on g->stream (algorithm search must not time
 * on zeros). */
void gpu_fill_uniform(const gpu_t *g, void *p, dtype_t t, size_t n, unsigned seed, float lo, float hi);
/* Keeps stream s busy for about `cycles` SM clock cycles (one thread spinning): timed calls queued behind it then
 * start back to back (timing_call_ms). */
void gpu_hold_stream(cudaStream_t s, long long cycles);
/* Lets `device` access `peer`'s memory. Peer access is a property of the context and outlives a run (a sweep,
 * the tests, NCCL may rely on it), so it is never disabled; enabling it twice is not an error, and a pair this
 * process enabled before is not enabled again (no CUDA call). */
void gpu_enable_peer(int device, int peer);
/* cudaMalloc on the current device that a sweep survives: 0, or -1 where the device is out of memory (or
 * SCALING_FAULT=alloc:K makes this the K-th allocation to fail, counted as CHECK_ALLOC counts), with *p NULL and the
 * error cleared so the context stays usable; any other error stops the process as CHECK_CUDA does. */
int gpu_try_malloc(void **p, size_t bytes);
/* Bytes of device memory in use on the current device (total - free), for peak-memory reporting. */
size_t gpu_mem_used(const gpu_t *g);
/* The same on `device` before a run allocates anything, its context created first so that the baseline includes it
 * (what a replica, a stage or a trainer reports its memory against); the device is left current. */
size_t gpu_mem_baseline(int device);
/* A strategy's params(): the n fp32 parameters at dev on g's device into host, at most max of them, after g's
 * stream's work; returns n (host NULL: n only, nothing copied). */
size_t gpu_params_download(const gpu_t *g, const float *dev, size_t n, float *host, size_t max);
/* The device count in *n: 0 where there is a GPU, else -1 with the one line (engine/gpu_arch.h) saying why there is
 * none: no driver, a driver too old for this build's CUDA, no device visible, or the runtime's own error. */
int gpu_count(int *n, char *why, size_t len);
#ifdef __cplusplus
}
#endif
