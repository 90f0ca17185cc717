/* dataset.h — the whole data set resident on one GPU as normalised floats, shuffled per epoch from a seeded
 * RNG and gathered into batches on the GPU: no host round trip per step. */
#pragma once
#include <cuda_runtime.h>
#include "idx.h"
#include "dtype.h"

typedef struct {
    int device;
    int n_train, n_test, pixels;    /* pixels = rows*cols*channels: 784 for the IDX sets */
    int side, channels, classes;    /* images as stored: side x side x channels; labels 0 .. classes-1 */
    int out_side;                   /* side of a gathered image: side, or the bilinear resize to it */
    int generated;                  /* 1: images and labels computed from (gen_seed, split, row) at gather time */
    unsigned long long gen_seed;
    float *train_x, *test_x;        /* (n, 28, 28, 1) in [0, 1]: byte / 255, as the PyTorch reference; NULL generated */
    int *train_y, *test_y;
    int *perm;                      /* (n_train) this epoch's order, on the GPU */
    int *perm_host;                 /* (n_train) pinned source of the async perm upload */
    cudaEvent_t perm_copied;        /* recorded after that upload: perm_host is reused only once it fires */
    /* The order of the epoch after the last shuffled one, drawn ahead (dataset_shuffle_ahead) into a second pinned
     * buffer that is never a pending copy's source; swapped with perm_host by the shuffle that uses it. */
    int *perm_next_host;
    unsigned long long seed;        /* the last shuffle's seed and epoch (shuffled: 0 before the first) */
    int epoch, shuffled, next_ready;
} dataset_t;

#ifdef __cplusplus
extern "C" {
#endif
/* Uploads d to the current device (call after cudaSetDevice); a generated set uploads nothing but its order.
 * Batches come out at idx_image(d): a side other than the stored one is resized on the GPU at gather time,
 * bilinear with align_corners=False and no antialiasing (PyTorch's F.interpolate(mode="bilinear"), torchvision's
 * Resize on tensors with antialias=False), in fp32 before the rounding to bf16. */
void dataset_upload(dataset_t *ds, const idx_dataset_t *d);
/* Generated images: pixel e (NHWC order within its image) of row `row` of split (0 train, 1 test) is uniform in
 * [0, 1) from a 64-bit hash of (seed, split, row, e); the label is the hash of (seed, split, row) mod classes.
 * Exposed for tests, which recompute batches on the host. */
float dataset_generated_pixel(unsigned long long seed, int split, long long row, long long e);
int dataset_generated_label(unsigned long long seed, int split, long long row, int classes);
/* Host Fisher-Yates permutation from (seed, epoch), uploaded once per epoch on `stream`.
 * Every replica of a run draws the same permutation, so shards partition one global order.
 * The RNG is rng_seed(seed * 1000003 + epoch). Until the first shuffle, perm is the identity; a generated set keeps
 * the identity (its images are independent random draws). */
void dataset_shuffle(dataset_t *ds, unsigned long long seed, int epoch, cudaStream_t stream);
/* Draws the order of the epoch after the last shuffled one (same seed) now, on the host, so that epoch's shuffle
 * only uploads it: called at an epoch's end while the GPU still runs its last steps, the draw (~0.5 ms per replica
 * for 60,000 images, one per replica in a process) leaves the next epoch's first step. No-op for a generated set,
 * before the first shuffle, or when already drawn; a shuffle of any other (seed, epoch) draws its own as before. */
void dataset_shuffle_ahead(dataset_t *ds);
/* x[i] = train_x[perm[first + i]], y[i] = train_y[perm[first + i]] for i < n; x of type t (bf16: each pixel
 * rounded to nearest even). */
void dataset_gather_train(const dataset_t *ds, int first, int n, void *x, dtype_t t, int *y, cudaStream_t stream);
/* As dataset_gather_train with first = *d_step * stride + offset read on the GPU, so the launch is the same
 * at every step and can be replayed from a CUDA graph; dataset_step_advance increments *d_step on the stream. */
void dataset_gather_train_at(const dataset_t *ds, const int *d_step, int stride, int offset, int n, void *x,
                             dtype_t t, int *y, cudaStream_t stream);
void dataset_step_advance(int *d_step, cudaStream_t stream);
/* Test rows first .. first+n-1 (clamped to n_test; rows past the end are copies of the last row, counted out
 * by the caller's n_valid). */
void dataset_gather_test(const dataset_t *ds, int first, int n, void *x, dtype_t t, int *y, cudaStream_t stream);
void dataset_free(dataset_t *ds);
#ifdef __cplusplus
}
#endif
