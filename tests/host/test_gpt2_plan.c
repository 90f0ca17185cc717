/* test_gpt2_plan.c — GPT-2's memory plan (the figures gpt2_plan.h states for small at 16 x 1024, every buffer's size,
 * the refusals) and its initialisation (gpt2_layout_init: GPT-2's standard deviations, biases 0, gains 1, padding 0,
 * the same bits from the same seed). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "test.h"
#include "engine/gpt2/gpt2_plan.h"

static void test_plan(void) {
    const gpt2_shape_t *s = gpt2_shape("small");
    gpt2_plan_t p;
    char err[200] = "";
    EXPECT(gpt2_plan(s, 16, 1024, DTYPE_BF16, &p, err, sizeof err) == 0, "small bf16: %s", err);
    printf("gpt2 small, 16 x 1024, bf16: %zu + %zu + %zu bytes\n", p.arena_bytes[0], p.arena_bytes[1],
           p.arena_bytes[2]);
    EXPECT(p.arena_bytes[0] == 2240566272u && p.arena_bytes[1] + p.arena_bytes[2] == 11919294464u,
           "the figures gpt2_plan.h states");
    EXPECT(p.lo == 0 && p.hi == 14 && p.b0 == 0 && p.nb == 12 && p.buf[GPT2_BUF_DOUT].count == 0,
           "the whole model: units %d..%d, blocks %d + %d", p.lo, p.hi, p.b0, p.nb);
    EXPECT(p.arena_bytes[0] == 18 * p.flat_elems, "18 bytes a parameter");
    EXPECT(p.buf[GPT2_BUF_ATT].count * p.buf[GPT2_BUF_ATT].stride == 4831838208u, "12 x (16, 12, 1024, 1024) bf16");
    EXPECT(p.buf[GPT2_BUF_RESID].count == 25 && p.buf[GPT2_BUF_LN_STATS].count == 25, "2L + 1 residuals and stats");
    EXPECT(p.buf[GPT2_BUF_LOGITS].elems == (size_t)16 * 1024 * 50304, "logits over the padded vocabulary");
    /* every buffer inside its arena, aligned, none overlapping the next */
    for (int a = 0; a < GPT2_ARENAS; a++) {
        size_t end = 0;
        for (int k = 0; k < GPT2_BUF_KINDS; k++) {
            const gpt2_plan_buf_t *b = &p.buf[k];
            if (b->arena != a) continue;
            EXPECT(b->at == end && b->at % GPT2_PLAN_ALIGN == 0 && b->stride >= b->elems * b->elem_bytes,
                   "%s: at %zu, end of the one before %zu", b->name, b->at, end);
            end = b->at + (size_t)b->count * b->stride;
        }
        EXPECT(end == p.arena_bytes[a], "arena %d: %zu of %zu", a, end, p.arena_bytes[a]);
    }
    EXPECT(gpt2_plan(s, 16, 1024, DTYPE_FP32, &p, err, sizeof err) == 0, "small fp32: %s", err);
    EXPECT(p.arena_bytes[0] + p.arena_bytes[1] + p.arena_bytes[2] == 25826926592u, "fp32: %zu",
           p.arena_bytes[0] + p.arena_bytes[1] + p.arena_bytes[2]);
    EXPECT(p.buf[GPT2_BUF_PARAMS_LP].count == 0, "no bf16 copy under fp32");
    EXPECT(gpt2_plan(s, 16, 1025, DTYPE_BF16, &p, err, sizeof err) == -1 && strstr(err, "1024"), "T > context: %s",
           err);
    EXPECT(gpt2_plan(s, 16, 1024, DTYPE_FP16, &p, err, sizeof err) == -1 && strstr(err, "fp16"), "fp16: %s", err);
    EXPECT(gpt2_plan(s, 0, 1024, DTYPE_BF16, &p, err, sizeof err) == -1, "B 0 is refused");
}

/* A pipeline's stages: their slices tile the whole layout (the tied token embedding on both ends), each stage's
 * blocks' activations are the whole model's share, the head's buffers on the last stage alone, and a stage before
 * the head takes its output's gradient. */
static void test_stages(void) {
    const gpt2_shape_t *s = gpt2_shape("small");
    int n = gpt2_layout_count(s), U = GPT2_UNITS(s->layers);
    gpt2_slice_t *whole = calloc((size_t)n, sizeof *whole), *st = calloc((size_t)n, sizeof *st);
    size_t N = gpt2_layout(s, whole, n);
    static const int starts[][5] = {{0, 14}, {0, 7, 14}, {0, 5, 9, 13, 14}, {0, 1, 13, 14}};
    static const int ps[] = {1, 2, 4, 3};
    char err[200] = "";
    gpt2_plan_t full;
    EXPECT(gpt2_plan_attn(s, 4, 1024, DTYPE_BF16, 1, &full, err, sizeof err) == 0, "%s", err);
    for (int c = 0; c < 4; c++) {
        size_t sum = 0, act = 0;
        int *seen = calloc((size_t)n, sizeof *seen), blocks = 0;
        for (int k = 0; k < ps[c]; k++) {
            int lo = starts[c][k], hi = starts[c][k + 1];
            size_t Ns = gpt2_layout_stage(s, lo, hi, st, n), end = 0;
            for (int i = 0; i < n; i++) {
                if (!st[i].len) continue;
                EXPECT(st[i].len == whole[i].len && st[i].kind == whole[i].kind && st[i].at >= end &&
                           st[i].at % GPT2_ALIGN == 0,
                       "stages %d, stage %d: slice %d (%s) out of place", ps[c], k, i, gpt2_tensor_name(st[i].kind));
                end = st[i].at + st[i].len;
                seen[i]++;
            }
            EXPECT(end <= Ns, "stage %d: slices past its %zu elements", k, Ns);
            sum += Ns;
            gpt2_plan_t p;
            EXPECT(gpt2_plan_stage(s, 4, 1024, DTYPE_BF16, 1, lo, hi, &p, err, sizeof err) == 0, "%s", err);
            int head = hi == U;
            EXPECT(p.flat_elems == Ns && p.buf[GPT2_BUF_LOGITS].count == head && p.buf[GPT2_BUF_DOUT].count == !head &&
                       p.buf[GPT2_BUF_RESID].count == 2 * p.nb + 1 && p.buf[GPT2_BUF_LN_STATS].count == 2 * p.nb + head,
                   "stages %d, stage %d [%d, %d): the plan's buffers", ps[c], k, lo, hi);
            blocks += p.nb;
            act += p.arena_bytes[1] - (size_t)(p.buf[GPT2_BUF_RESID].count - 2 * p.nb) * p.buf[GPT2_BUF_RESID].stride;
        }
        /* every slice on exactly one stage, but the token embedding on both ends when they differ */
        int ok = 1;
        for (int i = 0; i < n; i++) ok &= seen[i] == (whole[i].kind == GPT2_WTE && ps[c] > 1 ? 2 : 1);
        EXPECT(ok && blocks == s->layers, "stages %d: slices not tiled (blocks %d)", ps[c], blocks);
        size_t wte = (whole[0].len + GPT2_ALIGN - 1) / GPT2_ALIGN * GPT2_ALIGN;
        EXPECT(sum == N + (ps[c] > 1 ? wte : 0), "stages %d: %zu elements, the whole model %zu", ps[c], sum, N);
        /* the activations but each stage's input: the whole model's but its embedding's output */
        size_t whole_act = full.arena_bytes[1] - full.buf[GPT2_BUF_RESID].stride;
        EXPECT(act == whole_act, "stages %d: activations %zu, the whole model's %zu", ps[c], act, whole_act);
        free(seen);
    }
    gpt2_plan_t p;
    EXPECT(gpt2_plan_stage(s, 4, 1024, DTYPE_BF16, 1, 3, 3, &p, err, sizeof err) == -1 && strstr(err, "not a stage"),
           "an empty stage: %s", err);
    EXPECT(gpt2_plan_stage(s, 4, 1024, DTYPE_BF16, 1, 0, 15, &p, err, sizeof err) == -1, "past the units");
    /* the control: a stage's layout is not the whole model's */
    EXPECT(gpt2_layout_stage(s, 1, 13, st, n) < N && gpt2_layout_find(st, n, GPT2_WTE, -1) == NULL &&
               gpt2_layout_find(st, n, GPT2_QKV_W, 0) != NULL,
           "the middle stage holds the token embedding, or not block 0");
    free(whole);
    free(st);
}

/* A stage's initialisation holds the whole model's values in its slices (control: another seed does not). */
static void test_init_stages(void) {
    const gpt2_shape_t *s = gpt2_shape("tiny");
    int n = gpt2_layout_count(s);
    gpt2_slice_t *whole = calloc((size_t)n, sizeof *whole), *st = calloc((size_t)n, sizeof *st);
    size_t N = gpt2_layout(s, whole, n);
    float *all = malloc(N * sizeof *all), *part = malloc(N * sizeof *part);
    gpt2_layout_init(s, 42, all, N);
    static const int starts[] = {0, 1, 3, 4};
    for (int k = 0; k < 3; k++) {
        size_t Ns = gpt2_layout_stage(s, starts[k], starts[k + 1], st, n);
        for (int seed = 42; seed <= 43; seed++) {
            gpt2_layout_init_stage(s, starts[k], starts[k + 1], (unsigned long long)seed, part, Ns);
            int same = 1, held = 0;
            for (int i = 0; i < n; i++)
                if (st[i].len) {
                    held++;
                    same &= memcmp(part + st[i].at, all + whole[i].at, st[i].len * sizeof(float)) == 0;
                }
            EXPECT(held > 0 && same == (seed == 42), "stage [%d, %d), seed %d: %s the whole model's values",
                   starts[k], starts[k + 1], seed, same ? "holds" : "does not hold");
        }
    }
    free(all);
    free(part);
    free(whole);
    free(st);
}

static void test_init(void) {
    const gpt2_shape_t *s = gpt2_shape("tiny");
    int n = gpt2_layout_count(s);
    gpt2_slice_t *sl = calloc((size_t)n, sizeof *sl);
    size_t N = gpt2_layout(s, sl, n);
    float *a = malloc(N * sizeof *a), *b = malloc(N * sizeof *b);
    memset(a, 0x7f, N * sizeof *a);   /* the padding must come out 0 whatever was there */
    gpt2_layout_init(s, 42, a, N);
    gpt2_layout_init(s, 42, b, N);
    EXPECT(memcmp(a, b, N * sizeof *a) == 0, "the same seed, other bits");
    gpt2_layout_init(s, 43, b, N);
    EXPECT(memcmp(a, b, N * sizeof *a) != 0, "another seed, the same bits");
    size_t in = 0, pad_nz = 0;
    for (int k = 0; k < n; k++) in += sl[k].len;
    unsigned char *mark = calloc(N, 1);
    for (int k = 0; k < n; k++) memset(mark + sl[k].at, 1, sl[k].len);
    for (size_t i = 0; i < N; i++) pad_nz += !mark[i] && a[i] != 0.0f;
    EXPECT(pad_nz == 0 && in <= N, "%zu padding elements are not 0", pad_nz);
    for (int k = 0; k < n; k++) {
        const float *p = a + sl[k].at;
        size_t len = sl[k].kind == GPT2_WTE ? (size_t)s->vocab * s->width : sl[k].len;
        double sum = 0, sq = 0, want = 0.02;
        for (size_t i = 0; i < len; i++) sum += p[i], sq += (double)p[i] * p[i];
        double mean = sum / len, sd = sqrt(sq / len - mean * mean);
        const char *name = gpt2_tensor_name(sl[k].kind);
        switch (sl[k].kind) {
        case GPT2_ATTN_PROJ_W: case GPT2_MLP_PROJ_W: want = 0.02 / sqrt(2.0 * s->layers); /* fall through */
        case GPT2_WTE: case GPT2_WPE: case GPT2_QKV_W: case GPT2_FC_W:
            /* >= 4096 draws: the sample deviation is within 1.1 % (one sigma) of the true one, the mean 0.016 sd */
            EXPECT(fabs(sd / want - 1.0) < 0.06 && fabs(mean) < 0.1 * want, "%s: mean %g, sd %g, want sd %g", name,
                   mean, sd, want);
            break;
        case GPT2_LN1_W: case GPT2_LN2_W: case GPT2_LNF_W:
            EXPECT(sum == (double)len && sd == 0, "%s: gains not 1", name);
            break;
        default:
            EXPECT(sq == 0, "%s: not 0", name);
            break;
        }
    }
    size_t pad_rows = 0;
    const gpt2_slice_t *wte = &sl[0];
    gpt2_shape_t padded = *s;
    padded.vocab = s->vocab - 3;   /* three padding rows */
    gpt2_layout_init(&padded, 42, a, N);
    for (size_t i = (size_t)padded.vocab * s->width; i < wte->len; i++) pad_rows += a[wte->at + i] != 0.0f;
    EXPECT(pad_rows == 0, "%zu elements of the token embedding's padding rows are not 0", pad_rows);
    free(sl), free(a), free(b), free(mark);
}

int main(void) {
    test_plan();
    test_stages();
    test_init_stages();
    test_init();
    return test_summary();
}
