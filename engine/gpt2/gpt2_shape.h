/* gpt2_shape.h — the GPT-2 shapes (one table entry per size) and the flat parameter layout every GPT-2 buffer
 * (parameters, gradients, AdamW's moments, the 2-byte copy) shares. Host-only. */
#pragma once
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif
/* A GPT-2 of one size: pre-LN blocks (LayerNorm, causal self-attention, residual add; LayerNorm, MLP of 4x width
 * with GELU (tanh), residual add), a final LayerNorm and a head tied to the token embedding (no parameters). */
typedef struct {
    const char *name;
    int layers;         /* transformer blocks */
    int width;          /* channels C of the residual stream */
    int heads;          /* attention heads; width / heads channels each */
    int context;        /* positions of the position embedding: the longest sequence */
    int vocab;          /* tokens V */
    int vocab_pad;      /* rows of the token embedding as stored: V rounded up to a multiple of 128, so the head's
                         * GEMM runs on aligned tiles; rows V.. stay 0 (the loss gives their logits no gradient) */
} gpt2_shape_t;

/* Every size, NULL-name terminated: "tiny" (tests), "small" (124M), "medium" (350M), "large" (774M), "xl" (1.5B). */
extern const gpt2_shape_t gpt2_shapes[];
/* The entry for name, or NULL. */
const gpt2_shape_t *gpt2_shape(const char *name);
/* Shape s with a vocabulary of at least `vocab` tokens (a corpus's): s itself where it holds them, else its vocabulary
 * raised to vocab and padded to a multiple of 128 (the tiny shape's 512 would not hold GPT-2's 50,257 tokens). */
gpt2_shape_t gpt2_shape_for_vocab(const gpt2_shape_t *s, int vocab);
/* Trainable parameters with the tied head (the padding rows of the token embedding not counted): 124,439,808 for
 * small, as Hugging Face's GPT2LMHeadModel counts them. */
size_t gpt2_shape_params(const gpt2_shape_t *s);
/* Training FLOPs a token at sequences of T tokens, forward and backward, as PaLM's MFU and PyTorch's script count
 * them: 6 N + 12 L T d, N the parameters but the position embedding. */
double gpt2_shape_flops_per_token(const gpt2_shape_t *s, int T);
/* unit's share of gpt2_shape_flops_per_token (units: GPT2_UNITS below), the units' shares summing to it: the
 * embeddings 0 (a gather; the token embedding's 6 V C is the head's product, the position embedding is not counted),
 * a block 6 (12 C^2 + 13 C) + 12 T C, the final LayerNorm with the head 6 (V C + 2 C). What a pipeline balances its
 * stages by. */
double gpt2_shape_unit_flops(const gpt2_shape_t *s, int T, int unit);

/* The tensors of the flat layout, in layer order (the order backward finishes them in reverse): the embeddings, then
 * per block the twelve below, then the final LayerNorm. Weights are row-major (out, in), as nn.Linear's. */
typedef enum {
    GPT2_WTE = 0,       /* (vocab_pad, C); also the head */
    GPT2_WPE,           /* (context, C) */
    GPT2_LN1_W, GPT2_LN1_B,             /* (C) each */
    GPT2_QKV_W, GPT2_QKV_B,             /* (3C, C), (3C): q, k, v each C wide, heads contiguous in each */
    GPT2_ATTN_PROJ_W, GPT2_ATTN_PROJ_B, /* (C, C), (C) */
    GPT2_LN2_W, GPT2_LN2_B,             /* (C) each */
    GPT2_FC_W, GPT2_FC_B,               /* (4C, C), (4C) */
    GPT2_MLP_PROJ_W, GPT2_MLP_PROJ_B,   /* (C, 4C), (C) */
    GPT2_LNF_W, GPT2_LNF_B,             /* (C) each */
    GPT2_TENSOR_KINDS
} gpt2_tensor_t;

/* One tensor's slice of the flat buffers. */
typedef struct {
    gpt2_tensor_t kind;
    int layer;          /* block index; -1 for the embeddings and the final LayerNorm */
    size_t at;          /* elements from the start: a multiple of GPT2_ALIGN */
    size_t len;         /* elements, the padding rows of the token embedding included */
    int rows, cols;     /* its shape (a vector: rows 1) */
    int decay;          /* AdamW's weight decay applies (gpt2_tensor_decays) */
} gpt2_slice_t;

/* Every slice starts at a multiple of 64 elements: 256 bytes of fp32, 128 of bf16, what cuBLASLt's fastest kernels
 * and 16-byte vector loads need. */
#define GPT2_ALIGN 64

/* The slices of shape s in layer order: 2 + 12 * layers + 2 of them. */
int gpt2_layout_count(const gpt2_shape_t *s);
/* Fills slice[0 .. count) (at most max written) and returns the elements of the whole flat buffer (padding
 * included), which is what a buffer of the layout allocates. */
size_t gpt2_layout(const gpt2_shape_t *s, gpt2_slice_t *slice, int max);
/* A pipeline stage's layout, of units [lo, hi) (GPT2_UNITS below): the same n slices in gpt2_layout's order, those
 * of the stage's units packed from 0 in that order, the others absent (len 0). The token embedding is on the stage of
 * the embeddings and on the head's (tied: the head's weight). Returns the stage's elements; lo 0, hi
 * GPT2_UNITS(layers) is gpt2_layout. */
size_t gpt2_layout_stage(const gpt2_shape_t *s, int lo, int hi, gpt2_slice_t *slice, int max);
/* The slice of kind in block `layer` (-1 for the embeddings and the final LayerNorm) among the n of gpt2_layout or
 * gpt2_layout_stage (in its order, where the place is known), or NULL, also for a slice absent from a stage. */
const gpt2_slice_t *gpt2_layout_find(const gpt2_slice_t *slice, int n, gpt2_tensor_t kind, int layer);
/* Backward's units: what data parallelism reduces gradients by and a pipeline would cut between. Unit 0 is the
 * embeddings, unit 1 + l block l, unit L + 1 the final LayerNorm with the head (which has no parameters of its own:
 * the token embedding is its weight). Backward finishes them from unit L + 1 down to unit 0, the token embedding
 * last (its scatter-add); in the flat layout unit j's slices precede unit j + 1's. */
#define GPT2_UNITS(layers) ((layers) + 2)
/* first[j]: where unit j's slices begin in the flat buffers, for the GPT2_UNITS(s->layers) units of a layout of s
 * (slice, n: gpt2_layout's); unit j ends where unit j + 1 begins, the last at the buffer's end. */
void gpt2_layout_units(const gpt2_shape_t *s, const gpt2_slice_t *slice, int n, size_t *first);
/* Whether AdamW decays a tensor of this kind. llm.c's and nanoGPT's rule, from GPT-2's training: every 2-D tensor
 * (the four weight matrices of a block and both embeddings, the token embedding being also the head), never a bias
 * or a LayerNorm's gain and shift. */
int gpt2_tensor_decays(gpt2_tensor_t kind);
const char *gpt2_tensor_name(gpt2_tensor_t kind);

/* GPT-2's initialisation (OpenAI's, as nanoGPT and llm.c do it) into flat (n_flat elements, gpt2_layout's total, of
 * shape s): every 2-D tensor normal(0, 0.02), the two residual projections of a block (attn_proj.w, mlp_proj.w)
 * normal(0, 0.02 / sqrt(2 layers)) so the residual stream's variance does not grow with depth; biases 0, LayerNorms'
 * gains 1 and shifts 0; the token embedding's padding rows and the padding between slices 0. Drawn from rng.h's
 * normal seeded with seed, tensor after tensor in layout order: the same seed gives the same bits on any machine. */
void gpt2_layout_init(const gpt2_shape_t *s, unsigned long long seed, float *flat, size_t n_flat);
/* The same values in a stage's layout of units [lo, hi) (gpt2_layout_stage; n_flat its total): each tensor it holds as
 * the whole model's initialisation draws it, without the whole model's buffer. */
void gpt2_layout_init_stage(const gpt2_shape_t *s, int lo, int hi, unsigned long long seed, float *flat,
                            size_t n_flat);
#ifdef __cplusplus
}
#endif
