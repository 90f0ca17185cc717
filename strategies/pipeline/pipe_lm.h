/* pipe_lm.h — a language model's pipeline stages: GPT-2's units (gpt2_shape.h: the embeddings, each block, the final
 * LayerNorm with the head) are the layers a stage takes a range of, a cut between any two. Host-only: CI tests it. */
#pragma once
#include <stddef.h>
#include "../../engine/gpt2/gpt2_shape.h"

/* Why GPT-2 takes no zero-bubble schedule: the options' refusal and the strategy's own say it alike. */
#define PIPE_LM_ZB_WHY "zero bubble splits backward into its data and weight parts, which GPT-2's layers do not; " \
                       "--schedule gpipe or 1f1b"

/* The stages' first units, starts[0..p] (starts[0] = 0, starts[p] = GPT2_UNITS(layers)), of GPT-2 of shape s at
 * sequences of T tokens on p stages: the hand split split[0..n_split) (the first units of stages 2..p, split_check's
 * messages) where given (split not NULL), else the split whose slowest stage has the fewest training FLOPs
 * (gpt2_shape_unit_flops, partition_balance). Every cut carries the same tensor, the residual stream, so no cut costs
 * more than another. 0, or -1 with a one-line message in err. */
int pipe_lm_split(const gpt2_shape_t *s, int T, int p, const int *split, int n_split, int *starts, char *err,
                  size_t errlen);
/* A unit's name in messages: "embeddings", "block 3", "head". */
void pipe_lm_unit_name(const gpt2_shape_t *s, int unit, char *buf, size_t len);
