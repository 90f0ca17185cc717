/* elem.cuh — loads and stores of fp32, bf16 or fp16 activations with fp32 arithmetic, for the kernels of our own
 * that serve several types (convolution, batch norm, pooling, the gather): one rounding per stored value, to
 * nearest. */
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>

/* One element to fp32 and back (one rounding, to nearest). */
__device__ __forceinline__ float to_f(float v) { return v; }
__device__ __forceinline__ float to_f(__nv_bfloat16 v) { return __bfloat162float(v); }
__device__ __forceinline__ float to_f(__half v) { return __half2float(v); }
template <typename T> __device__ __forceinline__ T from_f(float v);
template <> __device__ __forceinline__ float from_f<float>(float v) { return v; }
template <> __device__ __forceinline__ __nv_bfloat16 from_f<__nv_bfloat16>(float v) { return __float2bfloat16_rn(v); }
template <> __device__ __forceinline__ __half from_f<__half>(float v) { return __float2half_rn(v); }

/* The largest fp32 value that rounds to 0 in T (to nearest, ties to even): v > relu_floor<T>() exactly where
 * from_f<T>(v) > 0, so a ReLU mask recomputed in fp32 agrees with the stored output's. */
template <typename T> __host__ __device__ constexpr float relu_floor();
template <> __host__ __device__ constexpr float relu_floor<float>() { return 0.0f; }
template <> __host__ __device__ constexpr float relu_floor<__nv_bfloat16>() { return 0x1p-134f; }  /* half bf16's least */
template <> __host__ __device__ constexpr float relu_floor<__half>() { return 0x1p-25f; }           /* half fp16's least */

template <typename T> __device__ static inline float ld(const T *p, unsigned i) { return to_f(p[i]); }

/* Eight consecutive values: one 16-byte store in bf16, two in fp32 (y + i 16-byte aligned). */
__device__ static inline void store8(float *y, unsigned i, const float *a) {
    ((float4 *)(y + i))[0] = make_float4(a[0], a[1], a[2], a[3]);
    ((float4 *)(y + i))[1] = make_float4(a[4], a[5], a[6], a[7]);
}
__device__ static inline void store8(__nv_bfloat16 *y, unsigned i, const float *a) {
    uint4 v;
    __nv_bfloat162 *h = (__nv_bfloat162 *)&v;
    for (int j = 0; j < 4; j++) h[j] = __floats2bfloat162_rn(a[2 * j], a[2 * j + 1]);
    *(uint4 *)(y + i) = v;
}
__device__ static inline void store8(__half *y, unsigned i, const float *a) {
    uint4 v;
    __half2 *h = (__half2 *)&v;
    for (int j = 0; j < 4; j++) h[j] = __floats2half2_rn(a[2 * j], a[2 * j + 1]);
    *(uint4 *)(y + i) = v;
}
/* Two consecutive values: one 4-byte store in bf16, 8 in fp32 (y + i aligned to that). */
__device__ static inline void store2(float *y, unsigned i, float a, float b) { *(float2 *)(y + i) = make_float2(a, b); }
__device__ static inline void store2(__nv_bfloat16 *y, unsigned i, float a, float b) {
    *(__nv_bfloat162 *)(y + i) = __floats2bfloat162_rn(a, b);
}
__device__ static inline void store2(__half *y, unsigned i, float a, float b) {
    *(__half2 *)(y + i) = __floats2half2_rn(a, b);
}
template <typename T> __device__ static inline void store1(T *y, unsigned i, float a) { y[i] = from_f<T>(a); }

/* V consecutive elements moved as one access (16 bytes of data: 8 bf16 or 4 fp32; or V bytes). */
template <typename T, int V>
struct alignas(sizeof(T) * V) pack_t { T v[V]; };

template <typename T, int V>
__device__ __forceinline__ pack_t<T, V> load_p(const T *p) { return *reinterpret_cast<const pack_t<T, V> *>(p); }
template <typename T, int V>
__device__ __forceinline__ void store_p(T *p, const pack_t<T, V> &q) { *reinterpret_cast<pack_t<T, V> *>(p) = q; }

#include "../dtype.h"
/* Runs F<T>::run(a...) for the element type T of t (float, __nv_bfloat16, __half): the one place a dtype_t becomes
 * a kernel's template argument. Host code of .cu files. */
template <template <typename> class F, typename... A>
static inline void dtype_dispatch(dtype_t t, A &&...a) {
    if (t == DTYPE_BF16) F<__nv_bfloat16>::run(a...);
    else if (t == DTYPE_FP16) F<__half>::run(a...);
    else F<float>::run(a...);
}
