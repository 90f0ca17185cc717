/* gpt2_shape.c — the GPT-2 size table, its parameter count and the flat parameter layout (gpt2_shape.h).
 * Host-only: the options, the memory plan and the tests read it without a GPU. */
#include "gpt2_shape.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "../rng.h"

/* OpenAI's released sizes (and Hugging Face's configs of them); "tiny" is ours, small enough for CPU references. */
const gpt2_shape_t gpt2_shapes[] = {
    {"tiny", 2, 64, 4, 64, 512, 512},
    {"small", 12, 768, 12, 1024, 50257, 50304},
    {"medium", 24, 1024, 16, 1024, 50257, 50304},
    {"large", 36, 1280, 20, 1024, 50257, 50304},
    {"xl", 48, 1600, 25, 1024, 50257, 50304},
    {NULL, 0, 0, 0, 0, 0, 0},
};

const gpt2_shape_t *gpt2_shape(const char *name) {
    for (int i = 0; name && gpt2_shapes[i].name; i++)
        if (strcmp(gpt2_shapes[i].name, name) == 0) return &gpt2_shapes[i];
    return NULL;
}

gpt2_shape_t gpt2_shape_for_vocab(const gpt2_shape_t *s, int vocab) {
    gpt2_shape_t r = *s;
    if (vocab > r.vocab) {
        r.vocab = vocab;
        r.vocab_pad = (vocab + 127) / 128 * 128;
    }
    return r;
}

static const char *const tensor_names[GPT2_TENSOR_KINDS] = {
    "wte", "wpe", "ln1.w", "ln1.b", "qkv.w", "qkv.b", "attn_proj.w", "attn_proj.b",
    "ln2.w", "ln2.b", "fc.w", "fc.b", "mlp_proj.w", "mlp_proj.b", "lnf.w", "lnf.b",
};

const char *gpt2_tensor_name(gpt2_tensor_t kind) {
    return kind >= 0 && kind < GPT2_TENSOR_KINDS ? tensor_names[kind] : "?";
}

int gpt2_tensor_decays(gpt2_tensor_t kind) {
    switch (kind) {
    case GPT2_WTE: case GPT2_WPE: case GPT2_QKV_W: case GPT2_ATTN_PROJ_W: case GPT2_FC_W: case GPT2_MLP_PROJ_W:
        return 1;
    default:
        return 0;
    }
}

/* (rows, cols) of a tensor of shape s; the token embedding with its padding rows. */
static void tensor_dims(const gpt2_shape_t *s, gpt2_tensor_t kind, int *rows, int *cols) {
    int c = s->width;
    *rows = 1;
    *cols = c;
    switch (kind) {
    case GPT2_WTE: *rows = s->vocab_pad; break;
    case GPT2_WPE: *rows = s->context; break;
    case GPT2_QKV_W: *rows = 3 * c; break;
    case GPT2_QKV_B: *cols = 3 * c; break;
    case GPT2_ATTN_PROJ_W: *rows = c; break;
    case GPT2_FC_W: *rows = 4 * c; break;
    case GPT2_FC_B: *cols = 4 * c; break;
    case GPT2_MLP_PROJ_W: *rows = c; *cols = 4 * c; break;
    default: break;   /* LayerNorms and the projections' biases: (C) */
    }
}

/* The layout's order: the two embeddings, each block's twelve, the final LayerNorm's two. */
#define BLOCK_KINDS (GPT2_LNF_W - GPT2_LN1_W)

int gpt2_layout_count(const gpt2_shape_t *s) { return 4 + BLOCK_KINDS * s->layers; }

/* Where (kind, layer) sits among n slices in that order (n - 2 .. n - 1: the final LayerNorm). */
static int layout_index(int n, gpt2_tensor_t kind, int layer) {
    if (kind < GPT2_LN1_W) return (int)kind;
    if (kind >= GPT2_LNF_W) return n - 2 + (int)(kind - GPT2_LNF_W);
    return 2 + layer * BLOCK_KINDS + (int)(kind - GPT2_LN1_W);
}

/* The unit a slice of kind in block `layer` belongs to; the token embedding's (both of them) is handled apart. */
static int slice_unit(const gpt2_shape_t *s, gpt2_tensor_t kind, int layer) {
    if (kind < GPT2_LN1_W) return 0;
    if (kind >= GPT2_LNF_W) return s->layers + 1;
    return 1 + layer;
}

size_t gpt2_layout_stage(const gpt2_shape_t *s, int lo, int hi, gpt2_slice_t *slice, int max) {
    size_t at = 0;
    int n = 0;
    int total = gpt2_layout_count(s);
    for (int i = 0; i < total; i++) {
        gpt2_tensor_t kind;
        int layer = -1;
        if (i < 2) kind = (gpt2_tensor_t)i;
        else if (i >= total - 2) kind = (gpt2_tensor_t)(GPT2_LNF_W + (i - (total - 2)));
        else {
            layer = (i - 2) / BLOCK_KINDS;
            kind = (gpt2_tensor_t)(GPT2_LN1_W + (i - 2) % BLOCK_KINDS);
        }
        int u = slice_unit(s, kind, layer);
        int here = kind == GPT2_WTE ? lo == 0 || hi == GPT2_UNITS(s->layers) : u >= lo && u < hi;
        gpt2_slice_t sl = {kind, layer, here ? at : 0, 0, 0, 0, gpt2_tensor_decays(kind)};
        tensor_dims(s, kind, &sl.rows, &sl.cols);
        if (here) sl.len = (size_t)sl.rows * (size_t)sl.cols;
        if (n < max) slice[n] = sl;
        n++;
        at += (sl.len + GPT2_ALIGN - 1) / GPT2_ALIGN * GPT2_ALIGN;
    }
    return at;
}

size_t gpt2_layout(const gpt2_shape_t *s, gpt2_slice_t *slice, int max) {
    return gpt2_layout_stage(s, 0, GPT2_UNITS(s->layers), slice, max);
}

const gpt2_slice_t *gpt2_layout_find(const gpt2_slice_t *slice, int n, gpt2_tensor_t kind, int layer) {
    /* In gpt2_layout's order the place is known: a lookup per tensor per call of an eager step costs no scan. */
    int i = layout_index(n, kind, layer);
    if (i >= 0 && i < n && slice[i].kind == kind && slice[i].layer == layer && slice[i].len) return &slice[i];
    return NULL;
}

void gpt2_layout_units(const gpt2_shape_t *s, const gpt2_slice_t *slice, int n, size_t *first) {
    first[0] = gpt2_layout_find(slice, n, GPT2_WTE, -1)->at;
    for (int l = 0; l < s->layers; l++) first[1 + l] = gpt2_layout_find(slice, n, GPT2_LN1_W, l)->at;
    first[s->layers + 1] = gpt2_layout_find(slice, n, GPT2_LNF_W, -1)->at;
}

/* A block's parameters: two LayerNorms, the attention's QKV and projection, the MLP's two products, with biases. */
static size_t block_params(const gpt2_shape_t *s) {
    size_t c = (size_t)s->width;
    return 2 * c + (3 * c * c + 3 * c) + (c * c + c) + 2 * c + (4 * c * c + 4 * c) + (4 * c * c + c);
}

size_t gpt2_shape_params(const gpt2_shape_t *s) {
    size_t c = (size_t)s->width;
    return (size_t)s->vocab * c + (size_t)s->context * c + (size_t)s->layers * block_params(s) + 2 * c;
}

double gpt2_shape_flops_per_token(const gpt2_shape_t *s, int T) {
    double n = (double)gpt2_shape_params(s) - (double)s->context * s->width;
    return 6 * n + 12.0 * s->layers * T * s->width;
}

double gpt2_shape_unit_flops(const gpt2_shape_t *s, int T, int unit) {
    if (unit <= 0 || unit > s->layers + 1) return 0;
    if (unit <= s->layers) return 6.0 * (double)block_params(s) + 12.0 * T * s->width;
    return 6.0 * ((double)s->vocab * s->width + 2.0 * s->width);
}

void gpt2_layout_init(const gpt2_shape_t *s, unsigned long long seed, float *flat, size_t n_flat) {
    gpt2_layout_init_stage(s, 0, GPT2_UNITS(s->layers), seed, flat, n_flat);
}

void gpt2_layout_init_stage(const gpt2_shape_t *s, int lo, int hi, unsigned long long seed, float *flat,
                            size_t n_flat) {
    memset(flat, 0, n_flat * sizeof *flat);
    int n = gpt2_layout_count(s);
    gpt2_slice_t *sl = (gpt2_slice_t *)calloc((size_t)n, sizeof *sl);
    /* a buffer of another shape or stage: leave it zero rather than overrun */
    if (!sl || gpt2_layout_stage(s, lo, hi, sl, n) != n_flat) {
        free(sl);
        return;
    }
    rng_t r;
    rng_seed(&r, seed);
    double proj_std = 0.02 / sqrt(2.0 * s->layers);
    for (int i = 0; i < n; i++) {
        /* every tensor's draws in the whole layout's order, kept where the stage holds the tensor */
        float *p = sl[i].len ? flat + sl[i].at : NULL;
        size_t len = (size_t)sl[i].rows * (size_t)sl[i].cols;   /* the tensor's, held here or not */
        double sd = 0;
        switch (sl[i].kind) {
        case GPT2_LN1_W: case GPT2_LN2_W: case GPT2_LNF_W:
            for (size_t k = 0; p && k < len; k++) p[k] = 1.0f;
            break;
        case GPT2_WTE:
            len = (size_t)s->vocab * (size_t)s->width;   /* the padding rows stay 0 */
            /* fall through */
        case GPT2_WPE: case GPT2_QKV_W: case GPT2_FC_W:
            sd = 0.02;
            break;
        case GPT2_ATTN_PROJ_W: case GPT2_MLP_PROJ_W:
            sd = proj_std;
            break;
        default:   /* biases and the LayerNorms' shifts */
            break;
        }
        for (size_t k = 0; sd > 0 && k < len; k++) {
            float v = (float)(sd * rng_normal(&r));
            if (p) p[k] = v;
        }
    }
    free(sl);
}
