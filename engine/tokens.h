/* tokens.h — the token files of the text corpus (data/sotu/{train,val}.bin, GPT-2 byte-pair tokens written by
 * scripts/setup.sh) and the order in which training takes their windows. Host code with no CUDA headers, tested on CI.
 *
 * The file, defined here once (scripts/text_tokens.js writes it), every field little-endian:
 *   bytes 0-7    magic "SCTOKENS"
 *   bytes 8-11   version, 1                       (uint32)
 *   bytes 12-15  vocabulary size V, 50257 for GPT-2 (uint32, 1..65536: tokens are uint16)
 *   bytes 16-23  token count n                   (uint64, at least 1)
 *   bytes 24-27  end-of-text token, 50256        (uint32, < V)
 *   bytes 28-31  document count D                (uint32)
 *   then n tokens, uint16, each < V: every document preceded by the end-of-text token, so the file starts with it and
 *   holds it exactly D times. The file is exactly 32 + 2n bytes. */
#pragma once
#include <stddef.h>
#include <stdint.h>

#define TOKENS_MAGIC "SCTOKENS"
#define TOKENS_VERSION 1u
#define TOKENS_HEADER_BYTES 32

typedef struct {
    char *path;             /* as loaded, for messages */
    uint16_t *tok;          /* (n) */
    long long n;
    uint32_t vocab;         /* every token is below it */
    uint32_t eot;           /* end-of-text, one before each document */
    uint32_t docs;
} tokens_t;

/* An epoch's windows: window w is tokens w*T .. w*T + T (T + 1 of them: the inputs are the first T, the targets the
 * last T), so the windows tile the file and one epoch takes every token once. The order is a permutation of the
 * windows drawn from (seed, epoch) as the image sets' (dataset_shuffle): every replica of a run draws the same one
 * and replica r of R takes rows first = step * R * B + r * B of it. Until the first shuffle the order is the identity:
 * the held-out split is read that way, every window once, in file order. */
typedef struct {
    const tokens_t *t;
    int T;
    int n_windows;          /* (n - 1) / T: the last (n - 1) mod T tokens are never a target */
    int *order;             /* (n_windows) this epoch's order of the windows */
} tokens_sampler_t;

/* A language model's data set: the training windows and the held-out split's, of T + 1 tokens each, from
 * <dir>/train.bin and <dir>/val.bin (the held-out loss is measured on val's windows in file order), or random tokens
 * (--dataset synthetic: throughput only, no held-out loss). */
typedef struct tokens_corpus {
    tokens_t train, val;
    int T;                  /* the inputs of a window: the model's sequence length */
    int synthetic;
} tokens_corpus_t;
/* Tokens of the synthetic corpus's splits: about the text corpus's (1.9 M and 0.2 M), so an epoch takes as long. */
#define TOKENS_SYNTH_TRAIN 2000001LL
#define TOKENS_SYNTH_VAL 200001LL

#ifdef __cplusplus
extern "C" {
#endif
/* Reads and validates a token file: the header (magic, version, a vocabulary that fits uint16, the end-of-text token
 * inside it), the size (exactly the tokens the header promises), every token below the vocabulary size, and the
 * end-of-text tokens (first, and D of them). On failure returns -1, *t cleared, with one line naming the file and the
 * fault in err. */
int tokens_load(const char *path, tokens_t *t, char *err, size_t errlen);
void tokens_free(tokens_t *t);

/* Windows of T + 1 tokens over t (which must outlive the sampler), in file order. -1 with one line in err where the
 * file holds no window (fewer than T + 1 tokens) or more windows than an int counts. */
int tokens_sampler_init(tokens_sampler_t *s, const tokens_t *t, int T, char *err, size_t errlen);
/* This epoch's order: rng_epoch_order's permutation, as the image sets'. */
void tokens_sampler_shuffle(tokens_sampler_t *s, unsigned long long seed, int epoch);
/* Rows first .. first + B - 1 of the order into x and y, (B, T) each: x[b][i] = tok[w*T + i], y[b][i] =
 * tok[w*T + i + 1] for w = order[first + b]. -1 (nothing written) where a row falls outside 0 .. n_windows - 1. */
int tokens_sampler_batch(const tokens_sampler_t *s, long long first, int B, int *x, int *y);
void tokens_sampler_free(tokens_sampler_t *s);

/* <dir>/train.bin and <dir>/val.bin (tokens_load's checks) as windows of T + 1 tokens: both of one vocabulary, each
 * with one window at least. -1, *c cleared, with one line in err. */
int tokens_corpus_load(tokens_corpus_t *c, const char *dir, int T, char *err, size_t errlen);
/* Random tokens below `vocab` from seed, TOKENS_SYNTH_TRAIN and TOKENS_SYNTH_VAL of them (vocab 1..65536). */
void tokens_corpus_synthetic(tokens_corpus_t *c, int T, uint32_t vocab, unsigned long long seed);
/* Windows of the training split and of the held-out one. */
static inline int tokens_corpus_windows(const tokens_t *t, int T) { return T > 0 ? (int)((t->n - 1) / T) : 0; }
void tokens_corpus_free(tokens_corpus_t *c);
#ifdef __cplusplus
}
#endif
