/* reduce.h — the few kernels that data-parallel strategies need besides training: summing gradient buffers (fp32,
 * or bf16 or fp16 on the wire), the fp32 -> 2-byte cast of gradients (and of the parameters' copy), a bit-exact
 * checksum of a replica's parameters, and exactly checkable integer patterns for reduction tests. */
#pragma once
#include <stddef.h>
#include <cuda_runtime.h>
#include "dtype.h"

#define REDUCE_MAX_SRC 16   /* most buffers one reduce_sum_into launch reads, and writes (one per GPU) */

#ifdef __cplusplus
extern "C" {
#endif
/* dst[k] = (((d + src[0][k]) + src[1][k]) + ...) for k < n, and the same value into out[0][k] .. out[n_out-1][k]:
 * every buffer holds n elements of type t, and a fixed order makes the sum deterministic. d is dst[k], or with own
 * (fp32, NULL for none) own[k] as the wire carries it: unchanged for fp32, rounded to nearest even for a 2-byte t (as
 * reduce_cast would have cast it into dst first). The sum is formed in fp32 arithmetic whatever t is; for a 2-byte t
 * each element is widened (exactly) on load and the fp32 sum is rounded to t once, at the end. Every src and out
 * may be a peer's memory (with peer access), and an out may be a src: each element is read from every source before
 * it is written anywhere. The one-pass all-reduce of --strategy naive: GPU 0 reads the peers' gradients and writes
 * the sum back into them. */
void reduce_sum_into(void *dst, const float *own, const void *const *src, int n_src, void *const *out, int n_out,
                     dtype_t t, size_t n, cudaStream_t stream);
/* dst[k] (type t: bf16 or fp16) = src[k] (fp32) rounded to nearest even, exactly as __float2bfloat16_rn or
 * __float2half_rn: values past t's largest finite value become +-inf (fp16: past 65504, which a loss-scaled step's
 * check then finds), values below its least subnormal 0, a NaN a NaN. */
void reduce_cast(void *dst, dtype_t t, const float *src, size_t n, cudaStream_t stream);
/* reduce_cast of the parts of dst and src given as n (offset, count) pairs of elements in device memory (ranges,
 * 2n size_t), the longest max_count, in one launch: a bucket of which backward wrote some parts in t already. */
void reduce_cast_ranges(void *dst, dtype_t t, const float *src, const size_t *ranges, int n, size_t max_count,
                        cudaStream_t stream);
/* *out (device) = sum over k of mix(k, bit pattern of p[k]) modulo 2^64. Integer addition commutes, so the value
 * does not depend on the launch shape, and any changed bit or moved value changes it (up to hash collisions):
 * equal checksums mean bit-identical buffers, which float sums could not tell. */
void reduce_checksum(const float *p, size_t n, unsigned long long *out, cudaStream_t stream);
/* p[k] (type t) = base + a small integer (-8..7) depending on (k, rank). With base 0 the sums over ranks are exact
 * in fp32 (up to 2^20 ranks), bf16 and fp16 (up to 32 ranks: |sum| <= 256, and so is every partial sum); base 248
 * keeps each value exact in bf16 (240..255) while most sums of two or more are not (bf16 integers above 256 are
 * even): the negative control of an exact bf16 check; base 2040 the same for fp16 (2032..2047; fp16 integers above
 * 2048 are even). reduce_inexact_base gives the base for t. */
void reduce_fill_pattern(void *p, dtype_t t, size_t n, int rank, int base, cudaStream_t stream);
static inline int reduce_inexact_base(dtype_t t) { return t == DTYPE_FP16 ? 2040 : 248; }
/* *wrong (device, accumulated: zero it first) += count of k where p[k] (type t) != the sum over ranks
 * 0..n_ranks-1 of the pattern with that base, formed exactly in fp32: what every buffer must hold after an
 * all-reduce sum of reduce_fill_pattern inputs. */
void reduce_count_wrong(const void *p, dtype_t t, size_t n, int n_ranks, int base, unsigned long long *wrong,
                        cudaStream_t stream);
#ifdef __cplusplus
}
#endif
