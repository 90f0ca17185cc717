/* test_reduce_kernels.cu — engine/reduce.cu's kernels against CPU references, on fresh random inputs: the fp32 ->
 * bf16 and fp32 -> fp16 casts bit for bit against a host round-to-nearest-even and against __float2bfloat16_rn /
 * __float2half_rn themselves (NaN, +-inf, denormals, subnormals, ties and overflow included); the sums of fp32, bf16
 * and fp16 buffers (fp32 arithmetic in a fixed order, one rounding for a 2-byte type) bit for bit; the pattern fill
 * and the wrong count of the exact checks, in every type. Vector bodies and scalar paths (misaligned pointers, tails)
 * alike.
 * Run: ./test_reduce_kernels [seed]   (seed printed; exits 77 without a CUDA device) */
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdint.h>
#include <string.h>
#include "gpu_test.h"
#include "bf16_ref.h"
#include "dev_io.h"
#include "engine/reduce.h"
#include "engine/check.h"
#include "engine/rng.h"

static void *dev_alloc(size_t bytes) {
    void *p = NULL;
    CHECK_CUDA(cudaMalloc(&p, bytes ? bytes : 1));
    return p;
}
static void *host_alloc(size_t bytes) {
    void *p = malloc(bytes ? bytes : 1);
    if (!p) { fprintf(stderr, "out of host memory\n"); exit(1); }
    return p;
}

__global__ static void intrinsic_cast_kernel(__nv_bfloat16 *dst, const float *src, size_t n) {
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        dst[i] = __float2bfloat16_rn(src[i]);
}
__global__ static void intrinsic_cast_kernel(__half *dst, const float *src, size_t n) {
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        dst[i] = __float2half_rn(src[i]);
}

/* Two 2-byte values of type t the same: equal bits, or both NaN (the host reference's NaN is 0x7fff in bf16, 0x7e00
 * in fp16, where the device writes 0x7fff: a NaN's payload is no result). */
static int same_low(uint16_t a, uint16_t b, dtype_t t) {
    if (t == DTYPE_BF16) return a == b;
    int na = (a & 0x7c00u) == 0x7c00u && (a & 0x3ffu), nb = (b & 0x7c00u) == 0x7c00u && (b & 0x3ffu);
    return a == b || (na && nb);
}

// ---- the host reference itself, on known answers (so that it cannot agree with a wrong kernel by being wrong too);
// they also open the GPU's inputs, so that every special value is cast there at least once.

static const struct { uint32_t in; uint16_t out; const char *what; } known[] = {
    {0x3f800000u, 0x3f80u, "1.0"},
    {0x3f808000u, 0x3f80u, "tie, kept part even: down"},
    {0x3f818000u, 0x3f82u, "tie, kept part odd: up"},
    {0x3f807fffu, 0x3f80u, "just below a tie"},
    {0x3f808001u, 0x3f81u, "just above a tie"},
    {0xbf818000u, 0xbf82u, "negative tie, odd: away from zero"},
    {0x7f7fffffu, 0x7f80u, "largest float: overflows to +inf"},
    {0x7f800000u, 0x7f80u, "+inf"},
    {0xff800000u, 0xff80u, "-inf"},
    {0x00000001u, 0x0000u, "smallest denormal: to +0"},
    {0x00008000u, 0x0000u, "denormal tie, even: to +0"},
    {0x00018000u, 0x0002u, "denormal tie, odd: up"},
    {0x007fffffu, 0x0080u, "largest denormal: up to the smallest normal"},
    {0x00010000u, 0x0001u, "smallest bf16 denormal"},
    {0x80000001u, 0x8000u, "negative denormal: to -0"},
    {0x7fc00000u, 0x7fffu, "quiet NaN"},
    {0x7f800001u, 0x7fffu, "signalling NaN"},
    {0xffffffffu, 0x7fffu, "negative NaN"},
};
#define N_KNOWN (sizeof known / sizeof known[0])

static void check_reference(void) {
    for (size_t i = 0; i < N_KNOWN; i++) {
        uint16_t h = bf16_ref_rne(bf16_ref_float(known[i].in));
        EXPECT(h == known[i].out, "host reference: %s: 0x%08x -> 0x%04x, want 0x%04x", known[i].what, known[i].in, h,
               known[i].out);
    }
}

// ---- the cast

/* The known answers' inputs, then every class of input, mixed: raw random bit patterns (all exponents: NaNs with
 * random payloads), exact ties, values near the overflow threshold, denormals, and ordinary normal values, each at
 * t's precision and range (fp16: ties at 11 bits, values about 65504, its subnormals 2^-24..2^-15). */
static void cast_inputs(rng_t *r, float *x, size_t n, dtype_t t) {
    const int h = t == DTYPE_FP16;
    for (size_t i = 0; i < n; i++) {
        if (i < N_KNOWN) { x[i] = bf16_ref_float(known[i].in); continue; }
        uint32_t u = (uint32_t)rng_u64(r), e = (u >> 23) & 0xffu;
        switch (i % 5) {
        case 0: break;                                                        /* anything */
        case 1:                                                               /* a tie */
            u = h ? (u & 0x800fe000u) | 0x1000u | ((113u + e % 30u) << 23) : (u & 0xffff0000u) | 0x8000u;
            break;
        case 2: u = (u & 0x807fffffu) | ((h ? 142u : 254u) << 23); break;    /* the top binade: may overflow */
        case 3: u = h ? (u & 0x807fffffu) | ((103u + e % 10u) << 23) : u & 0x807fffffu; break;   /* (sub)denormal */
        default: u = (u & 0x807fffffu) | ((96u + (u >> 23) % 64u) << 23); break;   /* ordinary */
        }
        x[i] = bf16_ref_float(u);
    }
}

/* One cast to t with dst and src offset by the given elements (misaligned offsets take the scalar path). */
static void check_cast_at(const char *what, dtype_t t, const float *h_src, size_t n, size_t dst_off, size_t src_off) {
    const size_t guard = 16;
    float *d_src = (float *)dev_alloc((n + src_off) * sizeof(float));
    uint16_t *d_dst = (uint16_t *)dev_alloc((n + dst_off + guard) * 2), *d_ref = (uint16_t *)dev_alloc(n * 2);
    uint16_t *got = (uint16_t *)host_alloc((n + guard) * 2), *ref = (uint16_t *)host_alloc(n * 2);
    CHECK_CUDA(cudaMemcpy(d_src + src_off, h_src, n * sizeof(float), cudaMemcpyHostToDevice));
    /* 0xffff is a NaN: an element left unwritten fails (the bf16 reference writes 0x7fff, fp16's a NaN too, but a
     * guard element must keep exactly these bits). */
    CHECK_CUDA(cudaMemset(d_dst, 0xff, (n + dst_off + guard) * 2));
    CHECK_CUDA(cudaMemset(d_ref, 0, n * 2));
    reduce_cast(d_dst + dst_off, t, d_src + src_off, n, 0);
    if (t == DTYPE_FP16) intrinsic_cast_kernel<<<1024, 256>>>((__half *)d_ref, d_src + src_off, n);
    else intrinsic_cast_kernel<<<1024, 256>>>((__nv_bfloat16 *)d_ref, d_src + src_off, n);
    CHECK_LAUNCH();
    CHECK_CUDA(cudaDeviceSynchronize());
    CHECK_CUDA(cudaMemcpy(got, d_dst + dst_off, (n + guard) * 2, cudaMemcpyDeviceToHost));
    CHECK_CUDA(cudaMemcpy(ref, d_ref, n * 2, cudaMemcpyDeviceToHost));
    size_t bad_host = 0, bad_intrinsic = 0, first = n, unwritten = 0;
    for (size_t i = 0; i < n; i++) {
        int hb = !same_low(got[i], half_bits(h_src[i], t), t), d = got[i] != ref[i];
        bad_host += hb;
        bad_intrinsic += d;
        unwritten += got[i] == 0xffffu && ref[i] != 0xffffu;
        if ((hb || d) && first == n) first = i;
    }
    size_t past = 0;
    for (size_t i = n; i < n + guard; i++) past += got[i] != 0xffffu;
    printf("cast to %s %-28s %8zu values: %zu differ from host RNE, %zu from the intrinsic, %zu written past the "
           "end\n", dtype_name(t), what, n, bad_host, bad_intrinsic, past);
    EXPECT(bad_host == 0 && bad_intrinsic == 0 && unwritten == 0, "cast to %s %s: first difference at %zu: 0x%08x -> "
           "0x%04x, host 0x%04x, intrinsic 0x%04x", dtype_name(t), what, first,
           first < n ? bf16_ref_bits(h_src[first]) : 0, first < n ? got[first] : 0,
           first < n ? half_bits(h_src[first], t) : 0, first < n ? ref[first] : 0);
    EXPECT(past == 0, "cast to %s %s: %zu elements written past the end", dtype_name(t), what, past);
    CHECK_CUDA(cudaFree(d_src));
    CHECK_CUDA(cudaFree(d_dst));
    CHECK_CUDA(cudaFree(d_ref));
    free(got);
    free(ref);
}

static void check_cast(rng_t *r, dtype_t t) {
    size_t n = ((size_t)1 << 20) + 13;   /* not a multiple of 8: the vector body and a scalar tail */
    float *x = (float *)host_alloc(n * sizeof(float));
    cast_inputs(r, x, n, t);
    const uint16_t inf = t == DTYPE_FP16 ? 0x7c00u : 0x7f80u;
    const int shift = t == DTYPE_FP16 ? 13 : 16;   /* the fp32 mantissa bits t drops (ties: exactly half of them) */
    size_t nan = 0, infs = 0, tiny = 0, ties = 0, overflow = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t u = bf16_ref_bits(x[i]), e = (u >> 23) & 0xffu, m = u & 0x7fffffu;
        uint16_t hb = half_bits(x[i], t);
        nan += e == 0xffu && m;
        infs += e == 0xffu && !m;
        tiny += t == DTYPE_FP16 ? (hb & 0x7c00u) == 0 && (hb & 0x3ffu) : e == 0 && m;   /* t's own denormals */
        ties += (u & ((1u << shift) - 1)) == 1u << (shift - 1) && e != 0xffu && (hb & 0x7fffu) != inf;
        overflow += e != 0xffu && (hb & 0x7fffu) == inf;
    }
    printf("cast to %s inputs: %zu NaN, %zu inf, %zu giving denormals, %zu ties, %zu finite overflowing to inf\n",
           dtype_name(t), nan, infs, tiny, ties, overflow);
    EXPECT(nan && infs && tiny && ties && overflow, "cast to %s: every class of input is present", dtype_name(t));
    check_cast_at("aligned (16-byte body)", t, x, n, 0, 0);
    check_cast_at("dst misaligned", t, x, n, 1, 0);
    check_cast_at("src misaligned", t, x, n, 0, 1);
    check_cast_at("7 values (tail only)", t, x + 5, 7, 0, 0);
    free(x);
}

// ---- the sums

/* A finite value of type t (its bits in the low 16 for a 2-byte t): half from a narrow exponent window, so that the
 * adds really round, half from the whole finite range (denormals included). */
static uint32_t finite_bits(rng_t *r, size_t i, dtype_t t) {
    uint32_t u = (uint32_t)rng_u64(r);
    if (t == DTYPE_FP16) {
        uint32_t e = i % 2 ? 12u + (u >> 10) % 8u : (u >> 10) % 31u;
        return (u & 0x83ffu) | (e << 10);
    }
    uint32_t e = i % 2 ? 120u + (u >> 23) % 16u : (u >> 23) % 255u;
    u = (u & 0x807fffffu) | (e << 23);
    return t == DTYPE_BF16 ? u >> 16 : u;
}
/* Element i of a host buffer of type t, as a float. */
static float host_at(const unsigned char *h, size_t i, dtype_t t) {
    if (t == DTYPE_FP32) { float v; memcpy(&v, h + i * 4, 4); return v; }
    uint16_t x;
    memcpy(&x, h + i * 2, 2);
    return half_widen(x, t);
}

/* own: the sum starts from a fresh fp32 buffer as the wire carries it instead of dst; n_out: the sum is also written
 * back into the first n_out sources, as naive writes it into its peers' buffers. */
static void check_sum(rng_t *r, dtype_t t, int n_src, int misalign_dst, int misalign_src, int own, int n_out) {
    size_t n = ((size_t)1 << 18) + 7, es = dtype_size(t), off_d = misalign_dst ? 1 : 0, off_s = misalign_src ? 1 : 0;
    int nb = n_src + 1;
    unsigned char *h[REDUCE_MAX_SRC + 1];
    void *d[REDUCE_MAX_SRC + 1];
    for (int b = 0; b < nb; b++) {
        h[b] = (unsigned char *)host_alloc(n * es);
        for (size_t i = 0; i < n; i++) {
            uint32_t u = finite_bits(r, i, t);
            if (dtype_is_low(t)) { uint16_t v = (uint16_t)u; memcpy(h[b] + i * 2, &v, 2); }
            else memcpy(h[b] + i * 4, &u, 4);
        }
        size_t off = b == 0 ? off_d : (b == nb - 1 ? off_s : 0);   /* the last source may be misaligned */
        d[b] = (char *)dev_alloc((n + 1) * es) + off * es;
        CHECK_CUDA(cudaMemcpy(d[b], h[b], n * es, cudaMemcpyHostToDevice));
    }
    float *h_own = NULL, *d_own = NULL;
    if (own) {
        h_own = (float *)host_alloc(n * sizeof(float));
        for (size_t i = 0; i < n; i++) { uint32_t u = finite_bits(r, i, DTYPE_FP32); memcpy(&h_own[i], &u, 4); }
        d_own = (float *)dev_alloc(n * sizeof(float));
        CHECK_CUDA(cudaMemcpy(d_own, h_own, n * sizeof(float), cudaMemcpyHostToDevice));
    }
    reduce_sum_into(d[0], d_own, (const void *const *)&d[1], n_src, &d[1], n_out, t, n, 0);
    unsigned char *got = (unsigned char *)host_alloc(n * es);
    CHECK_CUDA(cudaDeviceSynchronize());
    size_t bad = 0, first = n;
    for (int o = 0; o <= n_out; o++) {   /* dst, then every output */
        CHECK_CUDA(cudaMemcpy(got, d[o], n * es, cudaMemcpyDeviceToHost));
        for (size_t i = 0; i < n; i++) {
            float a = 0;
            uint32_t want, have = 0;
            for (int b = 0; b < nb; b++) {   /* dst (or own on the wire) first, then the sources in order, in fp32 */
                float v = b == 0 && own ? round_as(h_own[i], t) : host_at(h[b], i, t);
                a = b == 0 ? v : a + v;
            }
            if (dtype_is_low(t)) { uint16_t x; memcpy(&x, got + i * 2, 2); have = x; want = half_bits(a, t); }
            else { memcpy(&have, got + i * 4, 4); want = bf16_ref_bits(a); }
            if (have != want && first == n) first = i;
            bad += have != want;
        }
    }
    printf("sum %s, %d source%s%s%s%s, written to dst%s: %zu of %zu differ from the host's fp32 sum%s\n",
           dtype_name(t), n_src, n_src == 1 ? "" : "s", own ? " after an fp32 buffer on the wire" : "",
           misalign_dst ? ", dst misaligned" : "", misalign_src ? ", a source misaligned" : "",
           n_out ? " and back over sources" : "", bad, n * (n_out + 1), dtype_is_low(t) ? " rounded once" : "");
    EXPECT(bad == 0, "sum %s %d sources: first difference at %zu", dtype_name(t), n_src, first);
    for (int b = 0; b < nb; b++) {
        size_t off = b == 0 ? off_d : (b == nb - 1 ? off_s : 0);
        CHECK_CUDA(cudaFree((char *)d[b] - off * es));
        free(h[b]);
    }
    if (own) { CHECK_CUDA(cudaFree(d_own)); free(h_own); }
    free(got);
}

// ---- the exact-check patterns

/* The fill and the wrong count in fp32 and in the 2-byte type lt, at base 0 (every sum exact in lt) and at
 * reduce_inexact_base(lt) (every value exact in lt, most sums over 3 ranks not). */
static void check_patterns(rng_t *r, dtype_t lt) {
    const size_t n = 100003;
    const int ranks = 3;
    float *f32 = (float *)host_alloc(n * sizeof(float)), *want = (float *)host_alloc(n * sizeof(float));
    uint16_t *b16 = (uint16_t *)host_alloc(n * 2);
    void *d32 = dev_alloc(n * sizeof(float)), *d16 = dev_alloc(n * 2);
    unsigned long long *d_wrong = (unsigned long long *)dev_alloc(sizeof *d_wrong);
    const int bases[] = {0, reduce_inexact_base(lt)};
    const float bump = lt == DTYPE_FP16 ? 4096.0f : 512.0f;   /* changes a sum's value in lt: above any spacing here */
    for (size_t bi = 0; bi < 2; bi++) {
        int base = bases[bi];
        memset(want, 0, n * sizeof(float));
        for (int rank = 0; rank < ranks; rank++) {
            reduce_fill_pattern(d32, DTYPE_FP32, n, rank, base, 0);
            reduce_fill_pattern(d16, lt, n, rank, base, 0);
            CHECK_CUDA(cudaMemcpy(f32, d32, n * sizeof(float), cudaMemcpyDeviceToHost));
            CHECK_CUDA(cudaMemcpy(b16, d16, n * 2, cudaMemcpyDeviceToHost));
            size_t bad = 0, seen[16] = {0};
            for (size_t i = 0; i < n; i++) {
                float v = f32[i];
                int ok = v == floorf(v) && v >= base - 8 && v <= base + 7;
                bad += !ok || b16[i] != half_bits(v, lt) || half_widen(b16[i], lt) != v;
                if (ok) seen[(int)v - base + 8] = 1;
                want[i] += v;
            }
            int distinct = 0;
            for (int k = 0; k < 16; k++) distinct += (int)seen[k];
            EXPECT(bad == 0 && distinct == 16, "fill base %d rank %d: %zu values not integers in [%d, %d] or %s "
                   "differing from fp32, %d distinct values of 16", base, rank, bad, base - 8, base + 7,
                   dtype_name(lt), distinct);
        }
        /* count_wrong on the exact sums, then on copies with m elements changed (+1, and one NaN). */
        size_t inexact = 0;
        for (size_t i = 0; i < n; i++) {
            b16[i] = half_bits(want[i], lt);
            inexact += half_widen(b16[i], lt) != want[i];
        }
        size_t m = 1 + rng_below(r, 50);
        for (int t = 0; t < 2; t++) {
            dtype_t dt = t ? lt : DTYPE_FP32;
            for (int changed = 0; changed < 2; changed++) {
                size_t expect = (t ? inexact : 0);
                if (t) CHECK_CUDA(cudaMemcpy(d16, b16, n * 2, cudaMemcpyHostToDevice));
                else CHECK_CUDA(cudaMemcpy(d32, want, n * sizeof(float), cudaMemcpyHostToDevice));
                if (changed) {   /* m distinct positions: i = k * (n / m) + random offset within the stride */
                    for (size_t k = 0; k < m; k++) {
                        size_t i = k * (n / m) + rng_below(r, (uint32_t)(n / m));
                        float v = k == 0 ? bf16_ref_float(0x7fc00000u) : want[i] + (t ? bump : 1.0f);
                        uint16_t v16 = half_bits(v, lt);
                        int was_wrong = t && half_widen(b16[i], lt) != want[i];
                        if (t) CHECK_CUDA(cudaMemcpy((uint16_t *)d16 + i, &v16, 2, cudaMemcpyHostToDevice));
                        else CHECK_CUDA(cudaMemcpy((float *)d32 + i, &v, 4, cudaMemcpyHostToDevice));
                        expect += !was_wrong;
                    }
                }
                unsigned long long got = 0;
                CHECK_CUDA(cudaMemset(d_wrong, 0, sizeof got));
                reduce_count_wrong(t ? d16 : d32, dt, n, ranks, base, d_wrong, 0);
                CHECK_CUDA(cudaMemcpy(&got, d_wrong, sizeof got, cudaMemcpyDeviceToHost));
                printf("count_wrong %s, base %4d, %zu changed: %llu wrong (host: %zu)\n", dtype_name(dt), base,
                       changed ? m : 0, got, expect);
                EXPECT(got == expect, "count_wrong %s base %d changed %d: %llu, host %zu", dtype_name(dt), base,
                       changed, got, expect);
            }
        }
        EXPECT(base == 0 ? inexact == 0 : inexact > n / 2, "base %d: %zu of %zu sums over %d ranks not exact in %s",
               base, inexact, n, ranks, dtype_name(lt));
    }
    CHECK_CUDA(cudaFree(d32));
    CHECK_CUDA(cudaFree(d16));
    CHECK_CUDA(cudaFree(d_wrong));
    free(f32);
    free(want);
    free(b16);
}

int main(int argc, char **argv) {
    check_reference();   /* host only: runs, and can fail, without a GPU (gpu_test_require then fails) */
    gpu_test_require(1);
    unsigned long long seed = gpu_test_seed(argc, argv, "test_reduce_kernels");
    rng_t rng;
    rng_seed(&rng, seed);
    CHECK_CUDA(cudaSetDevice(0));
    check_cast(&rng, DTYPE_BF16);
    check_cast(&rng, DTYPE_FP16);
    for (int t = 0; t < DTYPE_COUNT; t++) {
        dtype_t dt = (dtype_t)t;
        check_sum(&rng, dt, 1, 0, 0, 0, 0);
        check_sum(&rng, dt, 3, 0, 0, 0, 0);
        check_sum(&rng, dt, 2, 1, 0, 0, 0);
        check_sum(&rng, dt, 2, 0, 1, 0, 0);
        check_sum(&rng, dt, 1, 0, 0, 1, 1);   /* naive's in-place sum over one peer */
        check_sum(&rng, dt, 3, 0, 0, 1, 2);
        check_sum(&rng, dt, 2, 0, 1, 1, 2);   /* misaligned: the scalar path writes back too */
    }
    check_patterns(&rng, DTYPE_BF16);
    check_patterns(&rng, DTYPE_FP16);
    printf("# seed %llu\n", seed);
    return test_summary();
}
