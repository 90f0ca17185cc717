/* reduce.h — the few kernels that data-parallel strategies need besides training: summing gradient buffers,
 * a bit-exact checksum of a replica's parameters, and exactly checkable integer patterns for reduction tests. */
#pragma once
#include <stddef.h>
#include <cuda_runtime.h>

#define REDUCE_MAX_SRC 16   /* most buffers one reduce_sum_into launch adds (one per GPU) */

#ifdef __cplusplus
extern "C" {
#endif
/* dst[k] = (((dst[k] + src[0][k]) + src[1][k]) + ...) for k < n: a fixed order, so the sum is deterministic.
 * Every src must be readable from the current device (its own memory, or a peer's with peer access). */
void reduce_sum_into(float *dst, const float *const *src, int n_src, size_t n, cudaStream_t stream);
/* *out (device) = sum over k of mix(k, bit pattern of p[k]) modulo 2^64. Integer addition commutes, so the value
 * does not depend on the launch shape, and any changed bit or moved value changes it (up to hash collisions):
 * equal checksums mean bit-identical buffers, which float sums could not tell. */
void reduce_checksum(const float *p, size_t n, unsigned long long *out, cudaStream_t stream);
/* p[k] = a small integer (-8..7) depending on (k, rank): sums over up to 2^20 ranks are exact in fp32. */
void reduce_fill_pattern(float *p, size_t n, int rank, cudaStream_t stream);
/* *wrong (device, accumulated: zero it first) += count of k where p[k] != sum over ranks 0..n_ranks-1 of the
 * pattern: what every buffer must hold after an all-reduce sum of reduce_fill_pattern inputs. */
void reduce_count_wrong(const float *p, size_t n, int n_ranks, unsigned long long *wrong, cudaStream_t stream);
#ifdef __cplusplus
}
#endif
