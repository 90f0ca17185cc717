/* reduce.cu — kernels for data-parallel strategies: the sum of gradient buffers on the reducing GPU (fp32, or bf16 or
 * fp16 summed in fp32 arithmetic), the fp32 -> bf16 or fp16 cast of gradients for the wire, the bit-exact replica
 * checksum, and the integer patterns that make all-reduce results exactly checkable, in any of these types. */
#include "reduce.h"
#include "check.h"
#include "launch.h"
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdint.h>

typedef struct {
    void *p[REDUCE_MAX_SRC];
} ptr_list_t;

static unsigned grid_for(size_t n, int threads) { return launch_blocks(n, threads, 4096); }

// --- element types: arithmetic is fp32; a 2-byte element is widened on load (exact) and rounded to nearest even on
// store. vec16<T> does the same for 16 bytes at once (the vector bodies).

__device__ static float widen(float x) { return x; }
__device__ static float widen(__nv_bfloat16 x) { return __bfloat162float(x); }
__device__ static float widen(__half x) { return __half2float(x); }
__device__ static void narrow(float *p, float x) { *p = x; }
__device__ static void narrow(__nv_bfloat16 *p, float x) { *p = __float2bfloat16_rn(x); }
__device__ static void narrow(__half *p, float x) { *p = __float2half_rn(x); }

template <typename T> struct vec16;
template <> struct vec16<float> {
    static constexpr int N = 4;
    __device__ static void widen(uint4 v, float *f) {
        f[0] = __uint_as_float(v.x); f[1] = __uint_as_float(v.y);
        f[2] = __uint_as_float(v.z); f[3] = __uint_as_float(v.w);
    }
    __device__ static uint4 narrow(const float *f) {
        return make_uint4(__float_as_uint(f[0]), __float_as_uint(f[1]), __float_as_uint(f[2]), __float_as_uint(f[3]));
    }
};
template <> struct vec16<__nv_bfloat16> {
    static constexpr int N = 8;
    /* Little endian: the element at the lower address is the low half of each 32-bit word. */
    __device__ static void widen2(unsigned w, float *f) {
        f[0] = __uint_as_float(w << 16);
        f[1] = __uint_as_float(w & 0xffff0000u);
    }
    __device__ static unsigned narrow2(const float *f) {
        return (unsigned)__bfloat16_as_ushort(__float2bfloat16_rn(f[0])) |
               (unsigned)__bfloat16_as_ushort(__float2bfloat16_rn(f[1])) << 16;
    }
    __device__ static void widen(uint4 v, float *f) {
        widen2(v.x, f); widen2(v.y, f + 2); widen2(v.z, f + 4); widen2(v.w, f + 6);
    }
    __device__ static uint4 narrow(const float *f) {
        return make_uint4(narrow2(f), narrow2(f + 2), narrow2(f + 4), narrow2(f + 6));
    }
};
template <> struct vec16<__half> {
    static constexpr int N = 8;
    __device__ static void widen2(unsigned w, float *f) {
        const float2 v = __half22float2(*(const __half2 *)&w);
        f[0] = v.x;
        f[1] = v.y;
    }
    __device__ static unsigned narrow2(const float *f) {
        const __half2 h = __floats2half2_rn(f[0], f[1]);
        return *(const unsigned *)&h;
    }
    __device__ static void widen(uint4 v, float *f) {
        widen2(v.x, f); widen2(v.y, f + 2); widen2(v.z, f + 4); widen2(v.w, f + 6);
    }
    __device__ static uint4 narrow(const float *f) {
        return make_uint4(narrow2(f), narrow2(f + 2), narrow2(f + 4), narrow2(f + 6));
    }
};

static int aligned16(const void *p) { return ((uintptr_t)p & 15) == 0; }

// --- kernels
/* own's value as the wire carries it: unchanged for fp32, rounded to the 2-byte type (and widened back, exactly). */
template <typename T> __device__ static float on_wire(float x) {
    T t;
    narrow(&t, x);
    return widen(t);
}

/* Memory-bound: 16-byte loads and stores when every pointer allows it (gradient slices are 256-byte aligned). The
 * sources and outputs may be peers' memory: every element is read from all of them before it is written to any,
 * so an output may alias a source. */
template <typename T>
__global__ static void sum_into_vec_kernel(uint4 *__restrict__ dst, const float4 *__restrict__ own, ptr_list_t src,
                                           int n_src, ptr_list_t out, int n_out, size_t n_vec) {
    constexpr int N = vec16<T>::N;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n_vec; i += (size_t)gridDim.x * blockDim.x) {
        float a[N], b[N];
        if (own) {
#pragma unroll
            for (int q = 0; q < N / 4; q++) {
                float4 f = own[i * (N / 4) + q];
                a[4 * q] = on_wire<T>(f.x); a[4 * q + 1] = on_wire<T>(f.y);
                a[4 * q + 2] = on_wire<T>(f.z); a[4 * q + 3] = on_wire<T>(f.w);
            }
        } else {
            vec16<T>::widen(dst[i], a);
        }
        for (int s = 0; s < n_src; s++) {
            vec16<T>::widen(((const uint4 *)src.p[s])[i], b);
#pragma unroll
            for (int k = 0; k < N; k++) a[k] += b[k];
        }
        uint4 v = vec16<T>::narrow(a);
        dst[i] = v;
        for (int o = 0; o < n_out; o++) ((uint4 *)out.p[o])[i] = v;
    }
}

template <typename T>
__global__ static void sum_into_kernel(T *__restrict__ dst, const float *__restrict__ own, ptr_list_t src, int n_src,
                                       ptr_list_t out, int n_out, size_t first, size_t n) {
    for (size_t i = first + (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        float a = own ? on_wire<T>(own[i]) : widen(dst[i]);
        for (int s = 0; s < n_src; s++) a += widen(((const T *)src.p[s])[i]);
        narrow(&dst[i], a);
        for (int o = 0; o < n_out; o++) ((T *)out.p[o])[i] = dst[i];
    }
}

/* 8 floats (two 16-byte loads) in, 8 2-byte values (one 16-byte store) out per iteration. */
template <typename T>
__global__ static void cast_vec_kernel(uint4 *__restrict__ dst, const float4 *__restrict__ src, size_t n8) {
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n8; i += (size_t)gridDim.x * blockDim.x) {
        float4 lo = src[2 * i], hi = src[2 * i + 1];
        float f[8] = {lo.x, lo.y, lo.z, lo.w, hi.x, hi.y, hi.z, hi.w};
        dst[i] = vec16<T>::narrow(f);
    }
}

template <typename T>
__global__ static void cast_kernel(T *__restrict__ dst, const float *__restrict__ src, size_t first, size_t n) {
    for (size_t i = first + (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        narrow(&dst[i], src[i]);
}

/* Part blockIdx.y of the (offset, count) pairs. */
template <typename T>
__global__ static void cast_ranges_kernel(T *__restrict__ dst, const float *__restrict__ src,
                                          const size_t *__restrict__ ranges) {
    size_t first = ranges[2 * blockIdx.y], n = ranges[2 * blockIdx.y + 1];
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        narrow(&dst[first + i], src[first + i]);
}

__device__ static unsigned long long mix64(unsigned long long x) {   /* splitmix64's finaliser */
    x ^= x >> 30; x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27; x *= 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

__global__ static void checksum_kernel(const uint32_t *__restrict__ p, size_t n, unsigned long long *out) {
    unsigned long long acc = 0;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        acc += mix64(((unsigned long long)i << 32) ^ p[i] ^ (i >> 32));
    for (int o = 16; o > 0; o >>= 1) acc += __shfl_down_sync(0xffffffffu, acc, o);
    __shared__ unsigned long long warp_sums[32];
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if (lane == 0) warp_sums[warp] = acc;
    __syncthreads();
    if (warp == 0) {
        acc = lane < (int)(blockDim.x >> 5) ? warp_sums[lane] : 0;
        for (int o = 16; o > 0; o >>= 1) acc += __shfl_down_sync(0xffffffffu, acc, o);
        if (lane == 0) atomicAdd(out, acc);
    }
}

__device__ static float pattern(size_t k, int rank, int base) {
    unsigned h = (unsigned)k * 2654435761u ^ (unsigned)(k >> 32) ^ ((unsigned)rank * 40503u + 0x9e3779b9u);
    h ^= h >> 15; h *= 0x2c1b3c6du; h ^= h >> 12;
    return (float)(base + (int)(h >> 28) - 8);
}

template <typename T>
__global__ static void fill_pattern_kernel(T *p, size_t n, int rank, int base) {
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        narrow(&p[i], pattern(i, rank, base));
}

template <typename T>
__global__ static void count_wrong_kernel(const T *p, size_t n, int n_ranks, int base, unsigned long long *wrong) {
    unsigned long long bad = 0;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        float want = 0.0f;
        for (int r = 0; r < n_ranks; r++) want += pattern(i, r, base);
        bad += widen(p[i]) != want;
    }
    for (int o = 16; o > 0; o >>= 1) bad += __shfl_down_sync(0xffffffffu, bad, o);
    if ((threadIdx.x & 31) == 0 && bad) atomicAdd(wrong, bad);
}

// --- launchers
static ptr_list_t ptr_list(const void *const *p, int n, int *aligned) {
    ptr_list_t l = {};
    for (int i = 0; i < n; i++) {
        l.p[i] = (void *)p[i];
        *aligned &= aligned16(p[i]);
    }
    return l;
}

template <typename T>
static void sum_into(T *dst, const float *own, const void *const *src, int n_src, void *const *out, int n_out, size_t n,
                     cudaStream_t stream) {
    int aligned = aligned16(dst) && (!own || aligned16(own));
    ptr_list_t s = ptr_list(src, n_src, &aligned), o = ptr_list((const void *const *)out, n_out, &aligned);
    constexpr int N = vec16<T>::N;
    size_t n_vec = aligned ? n / N : 0;
    if (n_vec) {
        sum_into_vec_kernel<T><<<grid_for(n_vec, 256), 256, 0, stream>>>((uint4 *)dst, (const float4 *)own, s, n_src,
                                                                          o, n_out, n_vec);
        CHECK_LAUNCH();
    }
    if (N * n_vec < n) {
        sum_into_kernel<T><<<grid_for(n - N * n_vec, 256), 256, 0, stream>>>(dst, own, s, n_src, o, n_out, N * n_vec,
                                                                              n);
        CHECK_LAUNCH();
    }
}

void reduce_sum_into(void *dst, const float *own, const void *const *src, int n_src, void *const *out, int n_out,
                     dtype_t t, size_t n, cudaStream_t stream) {
    if (n == 0) return;
    if (n_src < 0 || n_src > REDUCE_MAX_SRC || n_out < 0 || n_out > REDUCE_MAX_SRC)
        check_fail(__FILE__, __LINE__, "reduce_sum_into", "sources or outputs outside 0..REDUCE_MAX_SRC");
    if (t == DTYPE_BF16) sum_into((__nv_bfloat16 *)dst, own, src, n_src, out, n_out, n, stream);
    else if (t == DTYPE_FP16) sum_into((__half *)dst, own, src, n_src, out, n_out, n, stream);
    else sum_into((float *)dst, own, src, n_src, out, n_out, n, stream);
}

template <typename T>
static void cast_as(void *dst, const float *src, size_t n, cudaStream_t stream) {
    size_t n8 = aligned16(dst) && aligned16(src) ? n / 8 : 0;
    if (n8) {
        cast_vec_kernel<T><<<grid_for(n8, 256), 256, 0, stream>>>((uint4 *)dst, (const float4 *)src, n8);
        CHECK_LAUNCH();
    }
    if (8 * n8 < n) {
        cast_kernel<T><<<grid_for(n - 8 * n8, 256), 256, 0, stream>>>((T *)dst, src, 8 * n8, n);
        CHECK_LAUNCH();
    }
}

static void check_low(dtype_t t, const char *where) {
    if (!dtype_is_low(t)) check_fail(__FILE__, __LINE__, where, "a cast to a type that is not 2 bytes");
}

void reduce_cast(void *dst, dtype_t t, const float *src, size_t n, cudaStream_t stream) {
    check_low(t, "reduce_cast");
    if (n == 0) return;
    if (t == DTYPE_FP16) cast_as<__half>(dst, src, n, stream);
    else cast_as<__nv_bfloat16>(dst, src, n, stream);
}

void reduce_cast_ranges(void *dst, dtype_t t, const float *src, const size_t *ranges, int n, size_t max_count,
                        cudaStream_t stream) {
    check_low(t, "reduce_cast_ranges");
    if (n <= 0 || max_count == 0) return;
    if (n > 65535) check_fail(__FILE__, __LINE__, "reduce_cast_ranges", "more than 65535 parts");
    /* About 4096 blocks in all, as the other launches: most parts are a batch norm's few hundred elements. */
    unsigned bx = launch_blocks(max_count, 256, (4096 + n - 1) / n);
    if (t == DTYPE_FP16)
        cast_ranges_kernel<<<dim3(bx, (unsigned)n), 256, 0, stream>>>((__half *)dst, src, ranges);
    else
        cast_ranges_kernel<<<dim3(bx, (unsigned)n), 256, 0, stream>>>((__nv_bfloat16 *)dst, src, ranges);
    CHECK_LAUNCH();
}

void reduce_checksum(const float *p, size_t n, unsigned long long *out, cudaStream_t stream) {
    CHECK_CUDA(cudaMemsetAsync(out, 0, sizeof *out, stream));
    if (n == 0) return;
    checksum_kernel<<<grid_for(n, 256), 256, 0, stream>>>((const uint32_t *)p, n, out);
    CHECK_LAUNCH();
}

void reduce_fill_pattern(void *p, dtype_t t, size_t n, int rank, int base, cudaStream_t stream) {
    if (n == 0) return;
    if (t == DTYPE_BF16)
        fill_pattern_kernel<<<grid_for(n, 256), 256, 0, stream>>>((__nv_bfloat16 *)p, n, rank, base);
    else if (t == DTYPE_FP16)
        fill_pattern_kernel<<<grid_for(n, 256), 256, 0, stream>>>((__half *)p, n, rank, base);
    else
        fill_pattern_kernel<<<grid_for(n, 256), 256, 0, stream>>>((float *)p, n, rank, base);
    CHECK_LAUNCH();
}

void reduce_count_wrong(const void *p, dtype_t t, size_t n, int n_ranks, int base, unsigned long long *wrong,
                        cudaStream_t stream) {
    if (n == 0) return;
    if (t == DTYPE_BF16)
        count_wrong_kernel<<<grid_for(n, 256), 256, 0, stream>>>((const __nv_bfloat16 *)p, n, n_ranks, base, wrong);
    else if (t == DTYPE_FP16)
        count_wrong_kernel<<<grid_for(n, 256), 256, 0, stream>>>((const __half *)p, n, n_ranks, base, wrong);
    else
        count_wrong_kernel<<<grid_for(n, 256), 256, 0, stream>>>((const float *)p, n, n_ranks, base, wrong);
    CHECK_LAUNCH();
}
