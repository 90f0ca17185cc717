/* gpt2_data.h — a token corpus (engine/tokens.h) on one GPU for a language model's batches: both splits uploaded once,
 * each epoch's order of the training windows, and a batch's inputs and targets gathered on the GPU, at a device step
 * counter for training so that a captured step replays with the next step's windows. */
#pragma once
#include <stdint.h>
#include <cuda_runtime.h>
#include "../tokens.h"

typedef struct {
    int device;
    tokens_sampler_t order;     /* the training windows (n_windows) and this epoch's order of them */
    int n_val;                  /* held-out windows */
    uint16_t *d_train, *d_val;  /* device: the splits' tokens */
    int *d_order;               /* device: order.order, uploaded each epoch */
} gpt2_data_t;

#ifdef __cplusplus
extern "C" {
#endif
/* corpus (which must outlive d) at windows of corpus->T tokens on `device`. 0, or -1 with the reason in err (out of
 * memory). */
int gpt2_data_init(gpt2_data_t *d, int device, const tokens_corpus_t *corpus, char *err, size_t errlen);
void gpt2_data_free(gpt2_data_t *d);
/* The epoch's order of the training windows (seed, epoch) uploaded on `stream`, which it synchronises (the order is
 * the sampler's pageable copy). */
void gpt2_data_epoch(gpt2_data_t *d, unsigned long long seed, int epoch, cudaStream_t stream);
/* Rows b < B of a training batch: window order[*step * step_rows + first + b] gives tok (its inputs) and tgt (its
 * next tokens), (B, T) each; a row past the last window gets token 0 and no target (-1). */
void gpt2_data_train(const gpt2_data_t *d, const int *step, int step_rows, long long first, int B, int *tok, int *tgt,
                     cudaStream_t stream);
/* The same of the held-out windows first .. first + B - 1, in file order (the last batch's missing rows: no target). */
void gpt2_data_val(const gpt2_data_t *d, long long first, int B, int *tok, int *tgt, cudaStream_t stream);
#ifdef __cplusplus
}
#endif
