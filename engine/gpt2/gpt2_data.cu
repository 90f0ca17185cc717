/* gpt2_data.cu — a token corpus on one GPU (gpt2_data.h): the splits uploaded, the epoch's order, and the gather of a
 * batch's windows, whose training form reads the step from the device so CUDA graphs can replay it. */
#include "gpt2_data.h"
#include "../check.h"
#include "../gpu.h"
#include "../launch.h"
#include <stdio.h>
#include <string.h>

/* Rows b < B of a batch: window w = order[at + b] (the identity without order) gives tok = src[w T + i] and
 * tgt = src[w T + i + 1]; a row past the last window gets token 0 and no target (-1), which the loss does not count.
 * at = *step * step_rows + first under FROM_STEP (training: the device counter, global batches of step_rows), else
 * `first`. (B, T) each, B T below 2^31 less the grid (int indices).
 * The two kinds are two instantiations, not a runtime test of step: as one kernel (nvcc 13.0, sm_90) the held-out
 * form read, in some warps of about one launch in thirty, a start holding other kernels' register values
 * (results/gpt2-heldout-2026-11-29; test_gpt2_repeat checks both forms). */
template <bool FROM_STEP>
__global__ static void gather_kernel(const uint16_t *src, const int *order, int n_windows, const int *step,
                                     int step_rows, long long first, int B, int T, int *tok, int *tgt) {
    long long at = first;
    if (FROM_STEP) at += (long long)*step * step_rows;
    const int n = B * T;
    for (int k = blockIdx.x * blockDim.x + threadIdx.x; k < n; k += gridDim.x * blockDim.x) {
        long long row = at + k / T;
        int i = k % T;
        if (row >= n_windows) {
            tok[k] = 0;
            tgt[k] = -1;
            continue;
        }
        long long w = order ? order[row] : row;
        const uint16_t *p = src + w * T + i;
        tok[k] = p[0];
        tgt[k] = p[1];
    }
}

static void gather(const uint16_t *src, const int *order, int n_windows, const int *step, int step_rows,
                   long long first, int B, int T, int *tok, int *tgt, cudaStream_t s) {
    const size_t n = (size_t)B * T;
    const unsigned blocks = launch_blocks(n, 256, 4096);
    if (n + (size_t)blocks * 256 > 0x7fffffff)   /* int indices: the last one plus the grid's stride */
        check_fail(__FILE__, __LINE__, "gpt2_data", "a batch of 2^31 tokens or more");
    if (step)
        gather_kernel<true><<<blocks, 256, 0, s>>>(src, order, n_windows, step, step_rows, first, B, T, tok, tgt);
    else
        gather_kernel<false><<<blocks, 256, 0, s>>>(src, order, n_windows, NULL, 0, first, B, T, tok, tgt);
    CHECK_LAUNCH();
}

/* A split's tokens on the device. */
static int upload(uint16_t **d, const tokens_t *t, char *err, size_t errlen) {
    size_t bytes = (size_t)t->n * sizeof(uint16_t);
    if (gpu_try_malloc((void **)d, bytes) != 0) {
        snprintf(err, errlen, "out of memory: %lld tokens of the corpus", t->n);
        return -1;
    }
    CHECK_CUDA(cudaMemcpy(*d, t->tok, bytes, cudaMemcpyHostToDevice));
    return 0;
}

int gpt2_data_init(gpt2_data_t *d, int device, const tokens_corpus_t *corpus, char *err, size_t errlen) {
    memset(d, 0, sizeof *d);
    d->device = device;
    if (tokens_sampler_init(&d->order, &corpus->train, corpus->T, err, errlen) != 0) return -1;
    d->n_val = tokens_corpus_windows(&corpus->val, corpus->T);
    CHECK_CUDA(cudaSetDevice(device));
    if (upload(&d->d_train, &corpus->train, err, errlen) || upload(&d->d_val, &corpus->val, err, errlen)) return -1;
    if (gpu_try_malloc((void **)&d->d_order, (size_t)d->order.n_windows * sizeof(int))) {
        snprintf(err, errlen, "out of memory: the order of %d windows", d->order.n_windows);
        return -1;
    }
    return 0;
}

void gpt2_data_free(gpt2_data_t *d) {
    tokens_sampler_free(&d->order);
    void *bufs[] = {d->d_train, d->d_val, d->d_order};
    if (d->d_train || d->d_val || d->d_order) CHECK_CUDA(cudaSetDevice(d->device));
    for (int i = 0; i < 3; i++)
        if (bufs[i]) CHECK_CUDA(cudaFree(bufs[i]));
    memset(d, 0, sizeof *d);
}

void gpt2_data_epoch(gpt2_data_t *d, unsigned long long seed, int epoch, cudaStream_t stream) {
    tokens_sampler_shuffle(&d->order, seed, epoch);
    /* Ordered on the stream after the previous epoch's steps and evaluation, which read the old order. */
    CHECK_CUDA(cudaMemcpyAsync(d->d_order, d->order.order, (size_t)d->order.n_windows * sizeof(int),
                               cudaMemcpyHostToDevice, stream));
    CHECK_CUDA(cudaStreamSynchronize(stream));   /* the order is pageable: copied before it changes */
}

void gpt2_data_train(const gpt2_data_t *d, const int *step, int step_rows, long long first, int B, int *tok, int *tgt,
                     cudaStream_t stream) {
    gather(d->d_train, d->d_order, d->order.n_windows, step, step_rows, first, B, d->order.T, tok, tgt, stream);
}

void gpt2_data_val(const gpt2_data_t *d, long long first, int B, int *tok, int *tgt, cudaStream_t stream) {
    gather(d->d_val, NULL, d->n_val, NULL, 0, first, B, d->order.T, tok, tgt, stream);
}
