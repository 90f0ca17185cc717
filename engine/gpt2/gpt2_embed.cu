/* gpt2_embed.cu — GPT-2's token + position embedding: the forward gather, and the backward scatter-add made
 * deterministic by sorting the rows by token on the device (cub's stable radix sort) instead of atomics. */
#include <math.h>
#include <cub/device/device_radix_sort.cuh>
#include "gpt2_kernels.h"
#include "gpt2_util.cuh"
#include "../launch.h"

#define EMBED_THREADS 256

// --- kernels

template <typename T>
__global__ static void embed_forward_kernel(const int *tok, const T *wte, const T *wpe, T *out, int rows, int seq,
                                            int C, int vocab) {
    size_t n = (size_t)rows * C;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        int r = (int)(i / C), c = (int)(i % C), v = tok[r];
        float e = v >= 0 && v < vocab ? to_f(wte[(size_t)v * C + c]) + to_f(wpe[(size_t)(r % seq) * C + c]) : NAN;
        out[i] = from_f<T>(e);
    }
}

/* The radix sort's keys and values: the token (outside [0, vocab): vocab, a key that sorts last and is skipped) and
 * the row. */
__global__ static void embed_keys_kernel(const int *tok, int *key, int *row, int rows, int vocab) {
    for (int r = blockIdx.x * blockDim.x + threadIdx.x; r < rows; r += gridDim.x * blockDim.x) {
        int v = tok[r];
        key[r] = v >= 0 && v < vocab ? v : vocab;
        row[r] = r;
    }
}

/* One block per sorted position; the block at the first position of a token's run sums the run's rows (in row order:
 * the sort is stable) and adds the sum to the token's gradient row, which no other block touches. */
template <typename T>
__global__ static void embed_wte_kernel(const int *key, const int *row, const T *dout, float *dwte, int rows, int C,
                                        int vocab) {
    int i = blockIdx.x, v = key[i];
    if (v >= vocab || (i > 0 && key[i - 1] == v)) return;
    int end = i + 1;
    while (end < rows && key[end] == v) end++;
    for (int c = threadIdx.x; c < C; c += blockDim.x) {
        float s = 0.0f;
        for (int j = i; j < end; j++) s += to_f(dout[(size_t)row[j] * C + c]);
        dwte[(size_t)v * C + c] += s;
    }
}

/* dwpe[p, c] += sum over b of dout[b * seq + p, c], in order of b. */
template <typename T>
__global__ static void embed_wpe_kernel(const T *dout, float *dwpe, int rows, int seq, int C) {
    size_t n = (size_t)seq * C;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        float s = 0.0f;
        for (size_t at = i; at < (size_t)rows * C; at += n) s += to_f(dout[at]);
        dwpe[i] += s;
    }
}

// --- launchers

/* The scratch: keys in, keys out, rows in, rows out (rows ints each, 256-byte aligned), then cub's temporary space. */
static size_t align256(size_t b) { return (b + 255) / 256 * 256; }
static int key_bits(int vocab) {
    int bits = 1;
    while (bits < 31 && (1 << bits) <= vocab) bits++;   /* vocab itself is a key */
    return bits;
}
static size_t cub_bytes(int rows, int vocab) {
    size_t b = 0;
    CHECK_CUDA(cub::DeviceRadixSort::SortPairs(NULL, b, (const int *)NULL, (int *)NULL, (const int *)NULL,
                                               (int *)NULL, rows, 0, key_bits(vocab)));
    return b;
}

extern "C" size_t gpt2_embed_scratch_bytes(int rows, int vocab) {
    return 4 * align256((size_t)rows * sizeof(int)) + align256(cub_bytes(rows, vocab));
}

template <typename T> struct embed_fwd {
    static void run(const int *tok, const void *wte, const void *wpe, void *out, int rows, int seq, int C, int vocab,
                    cudaStream_t s) {
        unsigned blocks = launch_blocks((size_t)rows * C, EMBED_THREADS, 4096);
        embed_forward_kernel<T><<<blocks, EMBED_THREADS, 0, s>>>(tok, (const T *)wte, (const T *)wpe, (T *)out, rows,
                                                                 seq, C, vocab);
        CHECK_LAUNCH();
    }
};

extern "C" void gpt2_embed_forward(const int *tok, const void *wte, const void *wpe, void *out, dtype_t t, int rows,
                                   int seq, int C, int vocab, cudaStream_t stream) {
    if (rows <= 0 || C <= 0) return;
    gpt2_dispatch<embed_fwd>("gpt2_embed_forward", t, tok, wte, wpe, out, rows, seq, C, vocab, stream);
}

template <typename T> struct embed_bwd {
    static void run(const int *tok, const void *dout, float *dwte, float *dwpe, int rows, int seq, int C, int vocab,
                    void *scratch, size_t bytes, cudaStream_t s) {
        size_t part = align256((size_t)rows * sizeof(int)), tmp = cub_bytes(rows, vocab);
        if (!scratch || bytes < 4 * part + tmp)
            check_fail(__FILE__, __LINE__, "gpt2_embed_backward", "scratch smaller than gpt2_embed_scratch_bytes");
        char *p = (char *)scratch;
        int *key_in = (int *)p, *key_out = (int *)(p + part), *row_in = (int *)(p + 2 * part);
        int *row_out = (int *)(p + 3 * part);
        embed_keys_kernel<<<launch_blocks((size_t)rows, EMBED_THREADS, 1024), EMBED_THREADS, 0, s>>>(tok, key_in,
                                                                                                  row_in, rows, vocab);
        CHECK_LAUNCH();
        CHECK_CUDA(cub::DeviceRadixSort::SortPairs(p + 4 * part, tmp, key_in, key_out, row_in, row_out, rows, 0,
                                                   key_bits(vocab), s));
        if (dwte) {
            embed_wte_kernel<T><<<rows, C < EMBED_THREADS ? 32 * ((C + 31) / 32) : EMBED_THREADS, 0, s>>>(
                key_out, row_out, (const T *)dout, dwte, rows, C, vocab);
            CHECK_LAUNCH();
        }
        if (dwpe) {
            embed_wpe_kernel<T><<<launch_blocks((size_t)seq * C, EMBED_THREADS, 4096), EMBED_THREADS, 0, s>>>(
                (const T *)dout, dwpe, rows, seq, C);
            CHECK_LAUNCH();
        }
    }
};

extern "C" void gpt2_embed_backward(const int *tok, const void *dout, float *dwte, float *dwpe, dtype_t t, int rows,
                                    int seq, int C, int vocab, void *scratch, size_t scratch_bytes,
                                    cudaStream_t stream) {
    if (rows <= 0 || C <= 0) return;
    gpt2_dispatch<embed_bwd>("gpt2_embed_backward", t, tok, dout, dwte, dwpe, rows, seq, C, vocab, scratch,
                             scratch_bytes, stream);
}
