/* dataset.cu — the data set resident on one GPU: bytes uploaded once and normalised there, a per-epoch
 * permutation drawn on the host from (seed, epoch), and gather kernels that build each batch on the GPU. */
#include "dataset.h"
#include "check.h"
#include "launch.h"
#include "rng.h"
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "layers/elem.cuh"

#define DS_THREADS 256
#define DS_MAX_BLOCKS (1 << 20)   /* grid-stride beyond this; far more than any batch needs */

static unsigned grid_for(size_t n) { return launch_blocks(n, DS_THREADS, DS_MAX_BLOCKS); }

/* byte / 255 in float, a true division: it matches PyTorch's ToTensor and the host reference bit for bit,
 * where multiplying by 1/255 would not. */
__global__ static void bytes_to_unit_kernel(const uint8_t *__restrict__ in, float *__restrict__ out, size_t n) {
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        out[i] = (float)in[i] / 255.0f;
}

__global__ static void bytes_to_int_kernel(const uint8_t *__restrict__ in, int *__restrict__ out, size_t n) {
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        out[i] = in[i];
}

/* Element conversions of the gather: the data set is fp32 on the GPU, a bf16 or fp16 model's input is its rounding
 * to that type (what autocast feeds the first convolution). A float4 of pixels goes out as a float4, or as four
 * 2-byte values (8 bytes, aligned as the float4 source is). */
__device__ static inline void put(float4 &d, float4 s) { d = s; }
template <typename T> __device__ static inline void put(T &d, float s) { d = from_f<T>(s); }
template <typename T> __device__ static inline void put(pack_t<T, 4> &d, float4 s) {
    d.v[0] = from_f<T>(s.x);
    d.v[1] = from_f<T>(s.y);
    d.v[2] = from_f<T>(s.z);
    d.v[3] = from_f<T>(s.w);
}
/* What a thread writes for a float4 of pixels, in element type T. */
template <typename T> struct x4 { typedef pack_t<T, 4> type; };
template <> struct x4<float> { typedef float4 type; };

/* The batch's first row: a step counter on the device lets one captured CUDA graph gather a different batch at every
 * replay (first + step * step_stride). */
__device__ static inline int step_first(int first, int n, int last, const int *step, int step_stride) {
    if (!step) return first;
    first += *step * step_stride;
    if (first < 0 || first + n - 1 > last) __trap();   // a caller bug: never read past the permutation
    return first;
}

/* One thread per element S of a row (S = float4 where rows allow: 784 floats = 196 float4), written as D. Source
 * row of output row i: perm[first + i] when perm is given (train), else first + i clamped to [0, last] (test).
 * The thread holding a row's first element also copies its label, saving a second launch per batch. */
template <typename S, typename D>
__global__ static void gather_kernel(const S *__restrict__ src, const int *__restrict__ src_y,
                                     const int *__restrict__ perm, int first, int n, int last, int row_elems,
                                     D *__restrict__ x, int *__restrict__ y, const int *__restrict__ step,
                                     int step_stride) {
    first = step_first(first, n, last, step, step_stride);
    size_t total = (size_t)n * row_elems;
    for (size_t t = (size_t)blockIdx.x * blockDim.x + threadIdx.x; t < total; t += (size_t)gridDim.x * blockDim.x) {
        int i = (int)(t / row_elems), c = (int)(t % row_elems);
        int r = first + i;
        r = perm ? perm[r] : min(r, last);
        put(x[t], src[(size_t)r * row_elems + c]);
        if (y && c == 0) y[i] = src_y[r];
    }
}

/* splitmix64's finaliser: a bijection of 64 bits whose outputs pass BigCrush for consecutive inputs, so pixel and
 * label values are independent draws whatever the row and element. */
__host__ __device__ static inline unsigned long long mix64(unsigned long long z) {
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

__host__ __device__ static inline unsigned long long gen_key(unsigned long long seed, int split, long long row) {
    return mix64(seed * 0x9e3779b97f4a7c15ull + (unsigned long long)split * 0xd1b54a32d192ed03ull +
                 (unsigned long long)row);
}

/* Pixels 2m and 2m + 1 of a row: the top and the next 24 bits of one 64-bit draw, each a float in [0, 1), exact in
 * fp32 and the same on host and device. One draw per two pixels halves the hashing of the batch's build. */
__host__ __device__ static inline void gen_pixel_pair(unsigned long long key, long long m, float *even, float *odd) {
    unsigned long long z = mix64(key + 0x9e3779b97f4a7c15ull * (unsigned long long)(m + 1));
    *even = (float)(z >> 40) * (1.0f / 16777216.0f);
    *odd = (float)((z >> 16) & 0xffffffull) * (1.0f / 16777216.0f);
}

__host__ __device__ static inline float gen_pixel(unsigned long long key, long long e) {
    float v[2];
    gen_pixel_pair(key, e / 2, &v[0], &v[1]);
    return v[e & 1];
}

__host__ __device__ static inline int gen_label(unsigned long long key, int classes) {
    return (int)(mix64(key ^ 0x5851f42d4c957f2dull) % (unsigned long long)classes);
}

extern "C" float dataset_generated_pixel(unsigned long long seed, int split, long long row, long long e) {
    return gen_pixel(gen_key(seed, split, row), e);
}

extern "C" int dataset_generated_label(unsigned long long seed, int split, long long row, int classes) {
    return gen_label(gen_key(seed, split, row), classes);
}

/* What the general gather reads: a stored set of side x side x channels images (src, src_y), or a generated one
 * (src NULL: gen_seed, split, classes), written at out_side x out_side (bilinear when out_side != side). */
typedef struct {
    const float *src;
    const int *src_y;
    int side, channels, out_side;
    unsigned long long gen_seed;
    int split, classes;
} gather_src_t;

/* PyTorch's bilinear interpolation (align_corners=False): source coordinate scale * (dst + 0.5) - 0.5 with
 * scale = in / out, clamped at 0, the two neighbours (the second clamped to the edge), weights in fp32 and the
 * same order of operations as upsample_bilinear2d. */
__device__ static inline float bilinear(const float *img, int side, int ch, int c, int oy, int ox, float scale) {
    float sy = fmaxf(scale * ((float)oy + 0.5f) - 0.5f, 0.0f), sx = fmaxf(scale * ((float)ox + 0.5f) - 0.5f, 0.0f);
    int y0 = (int)sy, x0 = (int)sx;
    int y1 = y0 + (y0 < side - 1), x1 = x0 + (x0 < side - 1);
    float ly = sy - (float)y0, lx = sx - (float)x0, hy = 1.0f - ly, hx = 1.0f - lx;
    const float *p = img + c;
    return hy * (hx * p[((size_t)y0 * side + x0) * ch] + lx * p[((size_t)y0 * side + x1) * ch]) +
           ly * (hx * p[((size_t)y1 * side + x0) * ch] + lx * p[((size_t)y1 * side + x1) * ch]);
}

/* One thread per output element of the general gather (a resize, or a generated set whose rows the kernel below
 * cannot take); rows as gather_kernel's. I, the element index's type: 32 bits where the batch allows (its divisions
 * are cheaper: a synthetic ImageNet batch of 256 took 0.24 ms instead of 0.27 on an H200). */
template <typename D, typename I>
__global__ static void gather_general_kernel(gather_src_t g, const int *__restrict__ perm, int first, int n, int last,
                                             D *__restrict__ x, int *__restrict__ y, const int *__restrict__ step,
                                             int step_stride) {
    first = step_first(first, n, last, step, step_stride);
    const I out_elems = (I)g.out_side * g.out_side * g.channels, total = (I)n * out_elems;
    float scale = (float)g.side / (float)g.out_side;
    for (I t = (I)blockIdx.x * blockDim.x + threadIdx.x; t < total; t += (I)gridDim.x * blockDim.x) {
        I q = t / out_elems;
        int i = (int)q, e = (int)(t - q * out_elems);
        int r = first + i;
        r = perm ? perm[r] : min(r, last);
        float v;
        if (!g.src) {
            unsigned long long key = gen_key(g.gen_seed, g.split, r);
            v = gen_pixel(key, e);
            if (y && e == 0) y[i] = gen_label(key, g.classes);
        } else {
            int c = e % g.channels, pos = e / g.channels;
            v = bilinear(g.src + (size_t)r * g.side * g.side * g.channels, g.side, g.channels, c, pos / g.out_side,
                         pos % g.out_side, scale);
            if (y && e == 0) y[i] = g.src_y[r];
        }
        put(x[t], v);
    }
}

/* The general gather with 32-bit element indices where total leaves room for the grid-stride step, else 64-bit. */
template <typename D>
static void launch_general(const gather_src_t &g, const int *perm, int first, int n, int last, D *x, size_t total,
                           int *y, cudaStream_t stream, const int *step, int step_stride) {
    if (total < (1u << 31))
        gather_general_kernel<D, unsigned><<<grid_for(total), DS_THREADS, 0, stream>>>(g, perm, first, n, last, x, y,
                                                                                      step, step_stride);
    else
        gather_general_kernel<D, size_t><<<grid_for(total), DS_THREADS, 0, stream>>>(g, perm, first, n, last, x, y,
                                                                                    step, step_stride);
    CHECK_LAUNCH();
}

/* A generated set, 8 elements of a row a thread (one 16-byte store in bf16): the row's key once and one draw per
 * two pixels, where the general kernel hashes twice per element (a synthetic ImageNet batch of 256 on an H200:
 * 0.047 ms against 0.244). Needs rows of a multiple of 8 elements, a 16-byte aligned x and n * row_elems < 2^32. */
template <typename D>
__global__ static void gather_generated_kernel(gather_src_t g, const int *__restrict__ perm, int first, int n,
                                               int last, unsigned row_elems, D *__restrict__ x, int *__restrict__ y,
                                               const int *__restrict__ step, int step_stride) {
    first = step_first(first, n, last, step, step_stride);
    const unsigned groups = row_elems / 8, total = (unsigned)n * groups;
    for (unsigned t = blockIdx.x * blockDim.x + threadIdx.x; t < total; t += gridDim.x * blockDim.x) {
        const unsigned i = t / groups, e = (t - i * groups) * 8;
        int r = first + (int)i;
        r = perm ? perm[r] : min(r, last);
        const unsigned long long key = gen_key(g.gen_seed, g.split, r);
        float v[8];
        for (int j = 0; j < 4; j++) gen_pixel_pair(key, e / 2 + j, &v[2 * j], &v[2 * j + 1]);
        store8(x, t * 8, v);
        if (y && e == 0) y[i] = gen_label(key, g.classes);
    }
}

template <typename S, typename D>
static void gather_as(const S *src, const int *src_y, const int *perm, int first, int n, int last, int row_elems,
                      D *x, int *y, cudaStream_t stream, const int *step, int step_stride) {
    gather_kernel<S, D><<<grid_for((size_t)n * row_elems), DS_THREADS, 0, stream>>>(src, src_y, perm, first, n, last,
                                                                                  row_elems, x, y, step, step_stride);
}

/* The copy of stored rows at their size, in element type T (through dtype_dispatch). Vectors of 4 need 16-byte
 * alignment of the source and 16 (fp32) or 8 (2-byte) bytes of the output; a caller's x offset by a partial row
 * falls back. */
template <typename T> struct gather_copy {
    static void run(const float *src, const int *src_y, const int *perm, int first, int n, int last, int pixels,
                    void *x, int *y, cudaStream_t stream, const int *step, int step_stride) {
        if (pixels % 4 == 0 && (uintptr_t)src % 16 == 0 && (uintptr_t)x % (4 * sizeof(T)) == 0)
            gather_as((const float4 *)src, src_y, perm, first, n, last, pixels / 4, (typename x4<T>::type *)x, y,
                      stream, step, step_stride);
        else
            gather_as(src, src_y, perm, first, n, last, pixels, (T *)x, y, stream, step, step_stride);
        CHECK_LAUNCH();
    }
};

/* A generated set or a resize, in element type T: gather_generated_kernel where its rows allow, else the general
 * kernel. */
template <typename T> struct gather_made {
    static void run(const gather_src_t &g, const int *perm, int first, int n, int last, void *x, int *y,
                    cudaStream_t stream, const int *step, int step_stride) {
        size_t row = (size_t)g.out_side * g.out_side * g.channels, total = (size_t)n * row;
        if (!g.src && row % 8 == 0 && (uintptr_t)x % 16 == 0 && total < (1ull << 32)) {
            gather_generated_kernel<<<grid_for(total / 8), DS_THREADS, 0, stream>>>(
                g, perm, first, n, last, (unsigned)row, (T *)x, y, step, step_stride);
            CHECK_LAUNCH();
            return;
        }
        launch_general(g, perm, first, n, last, (T *)x, total, y, stream, step, step_stride);
    }
};

/* Stored rows at their size: the copy (gather_copy); a generated set or a resize: gather_made. */
static void gather_rows(const dataset_t *ds, int split, const int *perm, int first, int n, int last, void *x,
                        dtype_t t, int *y, cudaStream_t stream, const int *step = NULL, int step_stride = 0) {
    if (n <= 0) return;   /* a zero-block grid is a launch error */
    const float *src = split ? ds->test_x : ds->train_x;
    const int *src_y = split ? ds->test_y : ds->train_y;
    if (!ds->generated && ds->out_side == ds->side) {
        dtype_dispatch<gather_copy>(t, src, src_y, perm, first, n, last, ds->pixels, x, y, stream, step, step_stride);
        return;
    }
    gather_src_t g = {ds->generated ? NULL : src, src_y, ds->side, ds->channels, ds->out_side, ds->gen_seed, split,
                      ds->classes};
    dtype_dispatch<gather_made>(t, g, perm, first, n, last, x, y, stream, step, step_stride);
}

/* Copies one split's bytes through `staging` and converts them in place on the GPU, so the host never
 * holds the 188 MB float copy of the training images. */
static void upload_split(const idx_split_t *s, int pixels, uint8_t *staging, float **x, int **y, cudaStream_t stream) {
    size_t img = (size_t)s->n * pixels, lab = (size_t)s->n;
    CHECK_ALLOC(cudaMalloc((void **)x, img * sizeof(float)));
    CHECK_ALLOC(cudaMalloc((void **)y, lab * sizeof(int)));
    CHECK_CUDA(cudaMemcpyAsync(staging, s->images, img, cudaMemcpyHostToDevice, stream));
    CHECK_CUDA(cudaMemcpyAsync(staging + img, s->labels, lab, cudaMemcpyHostToDevice, stream));
    bytes_to_unit_kernel<<<grid_for(img), DS_THREADS, 0, stream>>>(staging, *x, img);
    CHECK_LAUNCH();
    bytes_to_int_kernel<<<grid_for(lab), DS_THREADS, 0, stream>>>(staging + img, *y, lab);
    CHECK_LAUNCH();
    /* staging is reused by the next split, and the host bytes may be freed once upload returns. */
    CHECK_CUDA(cudaStreamSynchronize(stream));
}

void dataset_upload(dataset_t *ds, const idx_dataset_t *d) {
    memset(ds, 0, sizeof *ds);
    int pixels = d->train.rows * d->train.cols * idx_channels(d);
    if (d->train.n <= 0 || d->test.n <= 0 || pixels <= 0 || d->test.rows * d->test.cols * idx_channels(d) != pixels ||
        d->train.rows != d->train.cols || idx_image(d) < 1) {
        char why[128];
        snprintf(why, sizeof why, "bad splits: %d train, %d test, %dx%d vs %dx%d", d->train.n, d->test.n,
                 d->train.rows, d->train.cols, d->test.rows, d->test.cols);
        check_fail(__FILE__, __LINE__, "dataset_upload", why);
    }
    CHECK_CUDA(cudaGetDevice(&ds->device));
    ds->n_train = d->train.n;
    ds->n_test = d->test.n;
    ds->pixels = pixels;
    ds->side = d->train.rows;
    ds->channels = idx_channels(d);
    ds->classes = idx_classes(d);
    ds->out_side = idx_image(d);
    ds->generated = d->generated;
    ds->gen_seed = d->gen_seed;

    /* A private non-blocking stream: the upload neither waits on nor serialises the legacy default stream. */
    cudaStream_t stream;
    CHECK_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    if (!d->generated) {
        if (ds->channels != 1) check_fail(__FILE__, __LINE__, "dataset_upload", "stored sets have one channel");
        size_t staging_bytes = (size_t)ds->n_train * (pixels + 1);
        if ((size_t)ds->n_test * (pixels + 1) > staging_bytes) staging_bytes = (size_t)ds->n_test * (pixels + 1);
        uint8_t *staging;
        CHECK_ALLOC(cudaMalloc((void **)&staging, staging_bytes));
        upload_split(&d->train, pixels, staging, &ds->train_x, &ds->train_y, stream);
        upload_split(&d->test, pixels, staging, &ds->test_x, &ds->test_y, stream);
        CHECK_CUDA(cudaFree(staging));
    }

    /* Identity order until the first shuffle, so a gather before it reads valid rows. */
    CHECK_ALLOC(cudaMalloc((void **)&ds->perm, (size_t)ds->n_train * sizeof(int)));
    CHECK_ALLOC(cudaMallocHost((void **)&ds->perm_host, (size_t)ds->n_train * sizeof(int)));
    if (!ds->generated)   /* a generated set keeps the identity: nothing to draw ahead */
        CHECK_ALLOC(cudaMallocHost((void **)&ds->perm_next_host, (size_t)ds->n_train * sizeof(int)));
    for (int i = 0; i < ds->n_train; i++) ds->perm_host[i] = i;
    CHECK_CUDA(cudaMemcpyAsync(ds->perm, ds->perm_host, (size_t)ds->n_train * sizeof(int), cudaMemcpyHostToDevice,
                               stream));
    CHECK_CUDA(cudaEventCreateWithFlags(&ds->perm_copied, cudaEventDisableTiming));
    CHECK_CUDA(cudaStreamSynchronize(stream));
    CHECK_CUDA(cudaStreamDestroy(stream));
}

/* The order: rng_epoch_order (engine/rng.h), the same on every replica. */
void dataset_shuffle(dataset_t *ds, unsigned long long seed, int epoch, cudaStream_t stream) {
    /* A generated image is an independent draw already, so the identity order is as random as any; drawing 1.28 M
     * indices on the host would cost ~20 ms per replica and epoch, inside the timed epoch. */
    if (ds->generated) return;
    /* perm_host is the source of the previous epoch's async copy, which may still be queued behind a
     * whole epoch of work on `stream`: wait for that copy, not for the stream. */
    CHECK_CUDA(cudaEventSynchronize(ds->perm_copied));
    if (ds->next_ready && ds->shuffled && seed == ds->seed && epoch == ds->epoch + 1) {
        int *drawn = ds->perm_next_host;   /* the old perm_host's copy has fired: it may be drawn into next */
        ds->perm_next_host = ds->perm_host;
        ds->perm_host = drawn;
    } else {
        rng_epoch_order(seed, epoch, ds->perm_host, ds->n_train);
    }
    ds->seed = seed;
    ds->epoch = epoch;
    ds->shuffled = 1;
    ds->next_ready = 0;
    /* Ordered after earlier gathers on `stream` that still read the old perm; gathers on other streams
     * must be ordered against `stream` by the caller. */
    CHECK_CUDA(cudaMemcpyAsync(ds->perm, ds->perm_host, (size_t)ds->n_train * sizeof(int), cudaMemcpyHostToDevice,
                               stream));
    CHECK_CUDA(cudaEventRecord(ds->perm_copied, stream));
}

void dataset_shuffle_ahead(dataset_t *ds) {
    if (ds->generated || !ds->shuffled || ds->next_ready) return;
    rng_epoch_order(ds->seed, ds->epoch + 1, ds->perm_next_host, ds->n_train);
    ds->next_ready = 1;
}

/* A bad range is a caller bug (a wrong shard or batch offset), and reading past perm would be silent. */
__global__ static void step_advance_kernel(int *step) { ++*step; }

void dataset_gather_train_at(const dataset_t *ds, const int *d_step, int stride, int offset, int n, void *x,
                             dtype_t t, int *y, cudaStream_t stream) {
    gather_rows(ds, 0, ds->perm, offset, n, ds->n_train - 1, x, t, y, stream, d_step, stride);
}

void dataset_step_advance(int *d_step, cudaStream_t stream) {
    step_advance_kernel<<<1, 1, 0, stream>>>(d_step);
    CHECK_LAUNCH();
}

void dataset_gather_train(const dataset_t *ds, int first, int n, void *x, dtype_t t, int *y, cudaStream_t stream) {
    if (first < 0 || n < 0 || first > ds->n_train - n) {
        char why[128];
        snprintf(why, sizeof why, "rows %d..%d outside 0..%d", first, first + n - 1, ds->n_train - 1);
        check_fail(__FILE__, __LINE__, "dataset_gather_train", why);
    }
    gather_rows(ds, 0, ds->perm, first, n, ds->n_train - 1, x, t, y, stream);
}

/* Rows at or past n_test repeat row n_test-1, so the last partial batch keeps its full shape; the caller
 * counts only its n_valid rows. y may be NULL where only images are wanted. */
void dataset_gather_test(const dataset_t *ds, int first, int n, void *x, dtype_t t, int *y, cudaStream_t stream) {
    if (first < 0 || n < 0) {
        char why[128];
        snprintf(why, sizeof why, "first %d, n %d", first, n);
        check_fail(__FILE__, __LINE__, "dataset_gather_test", why);
    }
    gather_rows(ds, 1, NULL, first, n, ds->n_test - 1, x, t, y, stream);
}

void dataset_free(dataset_t *ds) {
    if (!ds->train_x && !ds->perm_copied) { memset(ds, 0, sizeof *ds); return; }   /* never uploaded, or freed */
    int prev = 0;
    CHECK_CUDA(cudaGetDevice(&prev));
    CHECK_CUDA(cudaSetDevice(ds->device));   /* events and pinned memory belong to the upload's device */
    if (ds->perm_copied) {
        CHECK_CUDA(cudaEventSynchronize(ds->perm_copied));   /* perm_host may still be a copy's source */
        CHECK_CUDA(cudaEventDestroy(ds->perm_copied));
    }
    CHECK_CUDA(cudaFreeHost(ds->perm_host));
    if (ds->perm_next_host) CHECK_CUDA(cudaFreeHost(ds->perm_next_host));
    CHECK_CUDA(cudaFree(ds->perm));
    CHECK_CUDA(cudaFree(ds->train_x));
    CHECK_CUDA(cudaFree(ds->train_y));
    CHECK_CUDA(cudaFree(ds->test_x));
    CHECK_CUDA(cudaFree(ds->test_y));
    CHECK_CUDA(cudaSetDevice(prev));
    memset(ds, 0, sizeof *ds);
}
