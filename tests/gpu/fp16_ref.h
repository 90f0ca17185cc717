/* fp16_ref.h — the host reference of IEEE half precision that the GPU tests check against: round to nearest even
 * (what __float2half_rn does on the GPU), subnormals and overflow to infinity included, widening, and the unit
 * roundoff of the error bounds. C and C++. */
#pragma once
#include <math.h>
#include <stdint.h>
#include "bf16_ref.h"

#define FP16_U (1.0 / 2048.0)  /* unit roundoff: 11 significant bits, for normal results (|x| >= 2^-14) */

/* Round to nearest even: the float is exact in double, and scaling by a power of two keeps it exact, so
 * nearbyint (the current rounding mode: to nearest even) rounds the significand at the half's precision. */
static inline uint16_t fp16_ref_rne(float f) {
    uint32_t u = bf16_ref_bits(f), sign = (u >> 16) & 0x8000u;
    double a = fabs((double)f);
    if (f != f) return 0x7e00u;
    if (a >= 65520.0) return (uint16_t)(sign | 0x7c00u);   /* 65504 + half an ulp and above: infinity */
    int e;
    frexp(a, &e);                                          /* a = m 2^e, m in [0.5, 1) */
    int q = e - 11 < -24 ? -24 : e - 11;                   /* the exponent of the last kept bit */
    double k = nearbyint(ldexp(a, -q));                    /* significand in units of 2^q */
    if (k >= 2048.0) { k /= 2.0; q += 1; }                 /* rounded up to the next binade (from below 2^-14 too) */
    if (k == 0.0) return (uint16_t)sign;
    if (q == -24 && k < 1024.0) return (uint16_t)(sign | (uint32_t)k);   /* subnormal */
    int exp = q + 10 + 15;                                 /* biased exponent of k 2^q with k in [1024, 2048) */
    return (uint16_t)(sign | (uint32_t)exp << 10 | ((uint32_t)k - 1024u));
}

static inline float fp16_ref_widen(uint16_t h) {
    int e = (h >> 10) & 0x1f, m = h & 0x3ff;
    double v = e == 0 ? ldexp((double)m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexp((double)(m | 1024), e - 25);
    return (float)((h & 0x8000u) ? -v : v);
}

/* What an fp16 buffer holds after f is stored in it, as a float. */
static inline float fp16_ref_round(float f) { return fp16_ref_widen(fp16_ref_rne(f)); }
