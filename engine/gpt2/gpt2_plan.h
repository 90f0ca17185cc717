/* gpt2_plan.h — the device memory of one GPT-2 at a batch of B sequences of T tokens, buffer by buffer, known before
 * anything is allocated: what gpt2_model carves its two allocations into. Host-only. */
#pragma once
#include <stddef.h>
#include "gpt2_shape.h"
#include "../dtype.h"

#ifdef __cplusplus
extern "C" {
#endif
/* Every buffer of the model; t is the activations' type (fp32 or bf16), BT = B * T rows, C the width, L the layers.
 * GPT-2 small at B = 16, T = 1024 in bf16: 2,240,566,272 bytes of flat buffers (18 bytes a parameter: fp32 master,
 * gradient, two moments, the bf16 copy) and 11,919,294,464 of activations and backward's scratch, 14,159,860,736 bytes
 * in all
 * (14.16 GB, 13.19 GiB). 5.23 GB of it is the plain attention's softmax and its gradient (12 + 1 of (16, 12, 1024,
 * 1024)), which cuDNN's fused attention will not keep; 1.65 GB the logits. In fp32: 25.83 GB. The kernels' scratch
 * adds a few MB (gpt2_model_t's scratch); cuBLASLt borrows the GPU's cuBLAS workspace. test_gpt2_plan checks these
 * figures. */
typedef enum {
    /* the flat buffers (gpt2_shape's layout), one allocation */
    GPT2_BUF_PARAMS = 0,    /* fp32 master parameters */
    GPT2_BUF_GRADS,         /* fp32 gradients, overwritten by every backward */
    GPT2_BUF_ADAM_M,        /* AdamW's moments, fp32 */
    GPT2_BUF_ADAM_V,
    GPT2_BUF_PARAMS_LP,     /* the bf16 copy the GEMMs and the embedding read under bf16 (none under fp32) */
    /* what backward reads, one per block unless said: the second allocation (a pipeline stage's activation slot) */
    GPT2_BUF_RESID,         /* 2L + 1 of (BT, C): the residual stream (the embedding's output, after each block's
                             * attention, after its MLP): the LayerNorms' inputs */
    GPT2_BUF_LN1,           /* (BT, C): LayerNorm 1's output, the QKV product's input (its dW) */
    GPT2_BUF_QKV,           /* (BT, 3C): the attention's input */
    GPT2_BUF_ATT,           /* (B, NH, T, T): the attention's softmax (none under the fused attention) */
    GPT2_BUF_ATT_STATS,     /* B NH T fp32: the fused attention's log-sum-exp per row, what it keeps instead */
    GPT2_BUF_ATTY,          /* (BT, C): the heads' output, the attention projection's input */
    GPT2_BUF_LN2,           /* (BT, C): LayerNorm 2's output, the MLP's input */
    GPT2_BUF_FC_PRE,        /* (BT, 4C): the MLP's pre-activation, for GELU's derivative */
    GPT2_BUF_FC,            /* (BT, 4C): GELU's output, the MLP projection's input */
    GPT2_BUF_LNF,           /* one (BT, C): the final LayerNorm's output, the head's input */
    GPT2_BUF_LN_STATS,      /* 2L + 1 of 2 BT fp32: each LayerNorm's mean and reciprocal standard deviation */
    GPT2_BUF_LOGITS,        /* one (BT, vocab_pad): the head's output, overwritten by its gradient */
    /* backward's scratch, one each, reused by every block: the third allocation (a stage's slots share it) */
    GPT2_BUF_DRESID,        /* (BT, C): the residual stream's gradient; after a stage's backward, its input's */
    GPT2_BUF_DC,            /* (BT, C): the gradient into a LayerNorm's output, or into the attention's output */
    GPT2_BUF_D4C,           /* (BT, 4C): the MLP pre-activation's gradient, then the QKV's (3C of it) */
    GPT2_BUF_DATT,          /* (B, NH, T, T): the softmax's gradient (none under the fused attention) */
    GPT2_BUF_DOUT,          /* (BT, C): a stage without the head: its output's gradient, from the next stage */
    GPT2_BUF_KINDS
} gpt2_buf_t;

/* The plan's allocations: the flat buffers, the activations, backward's scratch. */
enum { GPT2_ARENAS = 3 };

/* Buffers start 256 bytes apart at least (cuBLASLt's and the vector loads' alignment). */
#define GPT2_PLAN_ALIGN 256

typedef struct {
    const char *name;
    int arena;              /* 0: the flat buffers' allocation, 1: the activations' */
    int count;              /* buffers of this kind (0: none) */
    size_t elems;           /* elements each */
    size_t elem_bytes;
    size_t at;              /* bytes from its arena's start to the first */
    size_t stride;          /* bytes from one to the next: elems * elem_bytes rounded up to GPT2_PLAN_ALIGN */
} gpt2_plan_buf_t;

typedef struct {
    gpt2_plan_buf_t buf[GPT2_BUF_KINDS];
    int lo, hi;             /* the units (gpt2_shape.h's GPT2_UNITS) it holds: all of them, or a pipeline stage's */
    int b0, nb;             /* its blocks: b0 .. b0 + nb - 1; a block's buffers are indexed from b0 */
    size_t flat_elems;      /* gpt2_layout_stage's total */
    size_t arena_bytes[GPT2_ARENAS];  /* the flat buffers', the activations', backward's scratch */
} gpt2_plan_t;

/* The plan of shape s at B x T (1 <= T <= context) with activations of type t (fp32 or bf16) and the plain
 * attention: 0, or -1 with the reason in err. */
int gpt2_plan(const gpt2_shape_t *s, int B, int T, dtype_t t, gpt2_plan_t *p, char *err, size_t errlen);
/* The same with cuDNN's fused attention where fused (bf16 only): the row statistics in place of the softmax and its
 * gradient, 5.23 GB less for small at 16 x 1024 (9.4 MB of statistics). */
int gpt2_plan_attn(const gpt2_shape_t *s, int B, int T, dtype_t t, int fused, gpt2_plan_t *p, char *err,
                   size_t errlen);
/* The plan of a pipeline stage of units [lo, hi) (0 <= lo < hi <= GPT2_UNITS(layers)) with the attention fused or
 * not: its slices of the flat buffers (gpt2_layout_stage), its blocks' activations (the input's residual stream on
 * a stage after the first, the final LayerNorm and the logits on the head's), backward's scratch with the output's
 * gradient on a stage before the head's. lo 0, hi GPT2_UNITS is gpt2_plan_attn's. 0, or -1 with the reason in err. */
int gpt2_plan_stage(const gpt2_shape_t *s, int B, int T, dtype_t t, int fused, int lo, int hi, gpt2_plan_t *p,
                    char *err, size_t errlen);
/* Bytes from its arena's start to buffer i of kind k. */
static inline size_t gpt2_plan_at(const gpt2_plan_t *p, gpt2_buf_t k, int i) {
    return p->buf[k].at + (size_t)i * p->buf[k].stride;
}
#ifdef __cplusplus
}
#endif
