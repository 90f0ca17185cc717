/* gpt2_file.h — a GPT-2's parameters with a batch of tokens in one file, as tools/torch/gpt2_export.py writes them
 * from PyTorch: the same initial weights and tokens on both sides, and PyTorch's loss curve beside them. Host-only. */
#pragma once
#include <stddef.h>
#include "gpt2_shape.h"

#ifdef __cplusplus
extern "C" {
#endif
/* The format, little-endian, version 1:
 *   a header of 16 int32 words (64 bytes):
 *     [0..1]   the magic "GPT2PARM" (8 bytes)
 *     [2]      the version, 1
 *     [3..8]   layers, width, heads, context, vocab, vocab_pad (gpt2_shape_t's fields, in its order)
 *     [9..10]  B, T: the batch's sequences and tokens per sequence
 *     [11]     n_losses: the losses at the end (0: none)
 *     [12..13] n_params, an int64: gpt2_layout's total for the shape (padding included)
 *     [14]     the writer's precision: 1 fp32, 2 bf16 (autocast, fp32 master weights), 0 unsaid
 *     [15]     the writer's constant AdamW rate, an fp32's bits (0: unsaid)
 *   n_params fp32: the parameters in gpt2_shape's flat layout (weights (out, in) as nn.Linear's, the padding 0);
 *   B * T int32 tokens, sequence after sequence, each in [0, vocab);
 *   B * T int32 targets, each in [0, vocab) or -1 (none);
 *   n_losses fp32: the writer's losses at steps 0, 1, ... on that batch (PyTorch's, in its precision);
 * and nothing after. */
#define GPT2_FILE_MAGIC "GPT2PARM"
#define GPT2_FILE_VERSION 1
/* Word 14's codes. Files written before it was defined hold 0 there, which still reads: the reader of such a file
 * picks the precision and rate itself. */
#define GPT2_FILE_FP32 1
#define GPT2_FILE_BF16 2

typedef struct {
    gpt2_shape_t shape;     /* name: the table's size with these dimensions, or "custom" */
    int B, T;
    size_t n_params;
    float *params;          /* n_params */
    int *tokens, *targets;  /* B * T each */
    int n_losses;
    float *losses;          /* n_losses (NULL when 0) */
    int precision;          /* the losses' precision: GPT2_FILE_FP32, GPT2_FILE_BF16, or 0 (unsaid) */
    float lr;               /* the constant AdamW rate the losses were trained at, or 0 (unsaid) */
} gpt2_file_t;

/* Reads path into f (its arrays malloc'd; gpt2_file_free): 0, or -1 with the reason in err (not such a file, another
 * version, a shape or layout that does not agree, an unknown precision or a negative rate, a token outside the
 * vocabulary, a short or long file). */
int gpt2_file_read(const char *path, gpt2_file_t *f, char *err, size_t errlen);
/* Writes f to path, checked as the reader checks: 0, or -1 with the reason in err. */
int gpt2_file_write(const char *path, const gpt2_file_t *f, char *err, size_t errlen);
void gpt2_file_free(gpt2_file_t *f);
#ifdef __cplusplus
}
#endif
