/* gpt2_plan.c — GPT-2's device memory buffer by buffer (gpt2_plan.h), from the shape, the batch and the activations'
 * type alone. Host-only: a run can check it against the GPU's memory before it allocates. */
#include "gpt2_plan.h"
#include <stdio.h>
#include <string.h>

static void put(gpt2_plan_t *p, gpt2_buf_t k, const char *name, int arena, int count, size_t elems, size_t bytes) {
    gpt2_plan_buf_t *b = &p->buf[k];
    b->name = name;
    b->arena = arena;
    b->count = count;
    b->elems = elems;
    b->elem_bytes = bytes;
    b->stride = (elems * bytes + GPT2_PLAN_ALIGN - 1) / GPT2_PLAN_ALIGN * GPT2_PLAN_ALIGN;
    b->at = p->arena_bytes[arena];
    p->arena_bytes[arena] += (size_t)count * b->stride;
}

int gpt2_plan(const gpt2_shape_t *s, int B, int T, dtype_t t, gpt2_plan_t *p, char *err, size_t errlen) {
    return gpt2_plan_attn(s, B, T, t, 0, p, err, errlen);
}

int gpt2_plan_attn(const gpt2_shape_t *s, int B, int T, dtype_t t, int fused, gpt2_plan_t *p, char *err,
                   size_t errlen) {
    return gpt2_plan_stage(s, B, T, t, fused, 0, s ? GPT2_UNITS(s->layers) : 1, p, err, errlen);
}

int gpt2_plan_stage(const gpt2_shape_t *s, int B, int T, dtype_t t, int fused, int lo, int hi, gpt2_plan_t *p,
                    char *err, size_t errlen) {
    memset(p, 0, sizeof *p);
    if (!s || s->layers < 1 || s->heads < 1 || s->width % s->heads || s->vocab < 1 || s->vocab_pad < s->vocab) {
        snprintf(err, errlen, "not a GPT-2 shape");
        return -1;
    }
    if (B < 1 || T < 1 || T > s->context) {
        snprintf(err, errlen, "batch %d x %d: GPT-2 %s takes sequences of 1 to %d tokens", B, T, s->name, s->context);
        return -1;
    }
    /* The kernels count rows and (rows, 4C) elements in int. */
    if ((double)B * T * 4.0 * s->width > 2147483647.0) {
        snprintf(err, errlen, "batch %d x %d: more tokens than GPT-2's kernels index", B, T);
        return -1;
    }
    if (t != DTYPE_FP32 && t != DTYPE_BF16) {
        snprintf(err, errlen, "GPT-2 trains in fp32 or bf16, not %s", dtype_name(t));
        return -1;
    }
    if (fused && t != DTYPE_BF16) {
        snprintf(err, errlen, "the fused attention is bf16 only, not %s", dtype_name(t));
        return -1;
    }
    int units = GPT2_UNITS(s->layers);
    if (lo < 0 || hi > units || lo >= hi) {
        snprintf(err, errlen, "units [%d, %d) are not a stage of GPT-2 %s's %d", lo, hi, s->name, units);
        return -1;
    }
    fused = fused != 0;
    size_t es = dtype_size(t), C = (size_t)s->width, BT = (size_t)B * (size_t)T;
    size_t att = (size_t)B * (size_t)s->heads * (size_t)T * (size_t)T;
    int head = hi == units;
    p->lo = lo;
    p->hi = hi;
    p->b0 = lo > 0 ? lo - 1 : 0;
    p->nb = (hi < s->layers + 1 ? hi - 1 : s->layers) - p->b0;   /* units 1 .. L are blocks 0 .. L - 1 */
    int l = p->nb;
    p->flat_elems = gpt2_layout_stage(s, lo, hi, NULL, 0);
    size_t N = p->flat_elems;
    put(p, GPT2_BUF_PARAMS, "params", 0, 1, N, 4);
    put(p, GPT2_BUF_GRADS, "grads", 0, 1, N, 4);
    put(p, GPT2_BUF_ADAM_M, "adam_m", 0, 1, N, 4);
    put(p, GPT2_BUF_ADAM_V, "adam_v", 0, 1, N, 4);
    put(p, GPT2_BUF_PARAMS_LP, "params_bf16", 0, t == DTYPE_BF16, N, 2);
    put(p, GPT2_BUF_RESID, "resid", 1, 2 * l + 1, BT * C, es);
    put(p, GPT2_BUF_LN1, "ln1", 1, l, BT * C, es);
    put(p, GPT2_BUF_QKV, "qkv", 1, l, BT * 3 * C, es);
    put(p, GPT2_BUF_ATT, "att", 1, fused ? 0 : l, att, es);
    put(p, GPT2_BUF_ATT_STATS, "att_stats", 1, fused ? l : 0, (size_t)B * (size_t)s->heads * (size_t)T, 4);
    put(p, GPT2_BUF_ATTY, "atty", 1, l, BT * C, es);
    put(p, GPT2_BUF_LN2, "ln2", 1, l, BT * C, es);
    put(p, GPT2_BUF_FC_PRE, "fc_pre", 1, l, BT * 4 * C, es);
    put(p, GPT2_BUF_FC, "fc", 1, l, BT * 4 * C, es);
    put(p, GPT2_BUF_LNF, "lnf", 1, head, BT * C, es);
    put(p, GPT2_BUF_LN_STATS, "ln_stats", 1, 2 * l + head, 2 * BT, 4);
    put(p, GPT2_BUF_LOGITS, "logits", 1, head, BT * (size_t)s->vocab_pad, es);
    put(p, GPT2_BUF_DRESID, "dresid", 2, 1, BT * C, es);
    put(p, GPT2_BUF_DC, "dc", 2, 1, BT * C, es);
    put(p, GPT2_BUF_D4C, "d4c", 2, 1, BT * 4 * C, es);
    put(p, GPT2_BUF_DATT, "datt", 2, !fused && l > 0, att, es);
    put(p, GPT2_BUF_DOUT, "dout", 2, !head, BT * C, es);
    return 0;
}
