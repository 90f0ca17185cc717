/* bf16_ref.h — the host reference of bf16 that the GPU tests check against: round to nearest even on the bit
 * pattern (what __float2bfloat16_rn does on the GPU), widening, and the unit roundoff of the error bounds.
 * C and C++. */
#pragma once
#include <stdint.h>
#include <string.h>

#define BF16_U (1.0 / 256.0)   /* unit roundoff: 8 significant bits, |RN(x) - x| <= 2^-8 |x| for normal results */

static inline uint32_t bf16_ref_bits(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
static inline float bf16_ref_float(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }
static inline float bf16_ref_widen(uint16_t h) { return bf16_ref_float((uint32_t)h << 16); }

/* Round to nearest even on the bit pattern: adding 0x7fff plus the bit that is kept last carries into the kept part
 * exactly when the dropped half is above one half, or equal to it with an odd kept part. Denormals, infinities and
 * the overflow of the largest finite values to infinity follow from the same carry. A NaN becomes 0x7fff, the
 * canonical NaN (cuda_bf16.hpp's host conversion gives the same). */
static inline uint16_t bf16_ref_rne(float f) {
    uint32_t u = bf16_ref_bits(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) return 0x7fffu;
    return (uint16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

/* What a bf16 buffer holds after f is stored in it, as a float. */
static inline float bf16_ref_round(float f) { return bf16_ref_widen(bf16_ref_rne(f)); }
