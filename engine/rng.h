/* rng.h — a small seeded host RNG (splitmix64) for shuffles and initialisation.
 * Host-side and deterministic, so a seed reproduces a run exactly on any machine. */
#pragma once
#include <stdint.h>
#include <math.h>

typedef struct { uint64_t s; } rng_t;

static inline void rng_seed(rng_t *r, uint64_t seed) { r->s = seed * 0x9E3779B97F4A7C15ull + 0x632BE59BD9B4E019ull; }
static inline uint64_t rng_u64(rng_t *r) {
    uint64_t z = (r->s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
/* Uniform in [0, 1) with 53 random bits. */
static inline double rng_uniform(rng_t *r) { return (double)(rng_u64(r) >> 11) * (1.0 / 9007199254740992.0); }
/* Uniform integer in [0, n) without modulo bias (Lemire's rejection would be faster; n is small here). */
static inline uint32_t rng_below(rng_t *r, uint32_t n) {
    uint64_t lim = UINT64_MAX - UINT64_MAX % n, v;
    do { v = rng_u64(r); } while (v >= lim);
    return (uint32_t)(v % n);
}
/* Standard normal by Box-Muller; one draw per call keeps the stream position simple. */
static inline double rng_normal(rng_t *r) {
    double u1 = rng_uniform(r), u2 = rng_uniform(r);
    if (u1 < 1e-300) u1 = 1e-300;
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}
/* Fisher-Yates permutation of 0..n-1. */
static inline void rng_permutation(rng_t *r, int *p, int n) {
    for (int i = 0; i < n; i++) p[i] = i;
    for (int i = n - 1; i > 0; i--) { int j = (int)rng_below(r, (uint32_t)i + 1); int t = p[i]; p[i] = p[j]; p[j] = t; }
}

/* The order of an epoch of a data set (images or token windows): a permutation from rng_seed(seed * 1000003 +
 * epoch). The prime multiplier keeps (seed, epoch) and (seed, epoch + 1) on unrelated splitmix64 streams, distinct
 * for every epoch below a million; every replica computes the same order, so none is broadcast. */
static inline void rng_epoch_order(unsigned long long seed, int epoch, int *p, int n) {
    rng_t r;
    rng_seed(&r, seed * 1000003ull + (unsigned long long)epoch);
    rng_permutation(&r, p, n);
}
