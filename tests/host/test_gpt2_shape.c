/* test_gpt2_shape.c — the GPT-2 size table and its flat layout: each size's parameter count is Hugging Face's
 * (124,439,808 for small with the tied head, counted by hand below too), the slices tile the buffer in layer order
 * without overlap, aligned, with the shapes and weight-decay flags of GPT-2's tensors. */
#include "engine/gpt2/gpt2_shape.h"
#include "test.h"

#include <stdlib.h>
#include <string.h>

/* sum(p.numel() for p in GPT2LMHeadModel.from_pretrained(name).parameters()): the head is tied, so not counted. */
static void test_counts(void) {
    static const struct { const char *name; size_t params; } want[] = {
        {"small", 124439808}, {"medium", 354823168}, {"large", 774030080}, {"xl", 1557611200},
    };
    for (int i = 0; i < 4; i++) {
        const gpt2_shape_t *s = gpt2_shape(want[i].name);
        EXPECT(s != NULL, "no shape %s", want[i].name);
        if (!s) continue;
        size_t p = gpt2_shape_params(s);
        printf("gpt2 %-6s %2d layers, width %4d, %2d heads: %zu parameters\n", s->name, s->layers, s->width, s->heads,
               p);
        EXPECT(p == want[i].params, "%s: %zu parameters, Hugging Face has %zu", s->name, p, want[i].params);
    }
    /* small by hand, tensor by tensor */
    size_t c = 768, block = 2 * c + (768 * 2304 + 2304) + (768 * 768 + 768) + 2 * c + (768 * 3072 + 3072) +
                           (3072 * 768 + 768);
    size_t hand = 50257 * c + 1024 * c + 12 * block + 2 * c;
    EXPECT(hand == 124439808, "the hand count is %zu", hand);
    const gpt2_shape_t *s = gpt2_shape("small");
    EXPECT(s && s->layers == 12 && s->width == 768 && s->heads == 12 && s->context == 1024 && s->vocab == 50257,
           "small's shape");
    /* Negative controls: an untied head, or the padded vocabulary counted, is another number. */
    gpt2_shape_t untied = *s;
    untied.vocab = s->vocab_pad;
    EXPECT(gpt2_shape_params(&untied) != 124439808, "the padded vocabulary counts the same");
    EXPECT(gpt2_shape_params(s) + 50257 * c != 124439808, "an untied head counts the same");
    EXPECT(gpt2_shape("gpt2-huge") == NULL && gpt2_shape(NULL) == NULL, "an unknown size is found");
}

/* Every size's layout: layer order, aligned, disjoint, real elements = the count plus the padding rows. */
static void test_layout(void) {
    for (int k = 0; gpt2_shapes[k].name; k++) {
        const gpt2_shape_t *s = &gpt2_shapes[k];
        EXPECT(s->width % s->heads == 0 && s->vocab_pad >= s->vocab && s->vocab_pad % 128 == 0,
               "%s: width %d heads %d vocab %d/%d", s->name, s->width, s->heads, s->vocab, s->vocab_pad);
        int n = gpt2_layout_count(s);
        EXPECT(n == 4 + 12 * s->layers, "%s: %d slices", s->name, n);
        gpt2_slice_t *sl = calloc((size_t)n, sizeof *sl);
        size_t total = gpt2_layout(s, sl, n), real = 0, end = 0;
        int ok_order = 1, ok_align = 1, ok_len = 1;
        for (int i = 0; i < n; i++) {
            if (sl[i].at % GPT2_ALIGN || sl[i].at < end) ok_align = 0;
            if (sl[i].len != (size_t)sl[i].rows * (size_t)sl[i].cols) ok_len = 0;
            end = sl[i].at + sl[i].len;
            real += sl[i].len;
            int want_layer = i < 2 || i >= n - 2 ? -1 : (i - 2) / 12;
            if (sl[i].layer != want_layer) ok_order = 0;
            if (i >= 2 && i < n - 2 && (int)sl[i].kind != GPT2_LN1_W + (i - 2) % 12) ok_order = 0;
        }
        EXPECT(ok_order && ok_align && ok_len, "%s: order %d, aligned and disjoint %d, lengths %d", s->name, ok_order,
               ok_align, ok_len);
        EXPECT(end <= total && total - end < GPT2_ALIGN, "%s: last slice ends at %zu of %zu", s->name, end, total);
        size_t pad = (size_t)(s->vocab_pad - s->vocab) * (size_t)s->width;
        EXPECT(real == gpt2_shape_params(s) + pad, "%s: slices hold %zu, count %zu + padding %zu", s->name, real,
               gpt2_shape_params(s), pad);
        const gpt2_slice_t *fc = gpt2_layout_find(sl, n, GPT2_FC_W, s->layers - 1);
        const gpt2_slice_t *proj = gpt2_layout_find(sl, n, GPT2_MLP_PROJ_W, 0);
        const gpt2_slice_t *qkvb = gpt2_layout_find(sl, n, GPT2_QKV_B, 0);
        EXPECT(fc && fc->rows == 4 * s->width && fc->cols == s->width && fc->decay, "%s: the last fc weight",
               s->name);
        EXPECT(proj && proj->rows == s->width && proj->cols == 4 * s->width, "%s: mlp proj (C, 4C)", s->name);
        EXPECT(qkvb && qkvb->rows == 1 && qkvb->cols == 3 * s->width && !qkvb->decay, "%s: qkv bias", s->name);
        EXPECT(gpt2_layout_find(sl, n, GPT2_LN1_W, s->layers) == NULL, "%s: a block past the last", s->name);
        int found = 0;   /* every slice at its own place; no block's tensor outside the blocks, no embedding inside */
        for (int i = 0; i < n; i++) found += gpt2_layout_find(sl, n, sl[i].kind, sl[i].layer) == &sl[i];
        EXPECT(found == n && !gpt2_layout_find(sl, n, GPT2_LN1_W, -1) && !gpt2_layout_find(sl, n, GPT2_WTE, 0) &&
                   !gpt2_layout_find(sl, n, GPT2_LNF_B, 0),
               "%s: %d of %d slices found at their place, or a slice found where there is none", s->name, found, n);
        /* gpt2_layout writes no more than max */
        gpt2_slice_t two[3];
        memset(two, 0x5a, sizeof two);
        EXPECT(gpt2_layout(s, two, 2) == total && ((unsigned char *)&two[2])[0] == 0x5a, "%s: wrote past max",
               s->name);
        free(sl);
    }
    int decayed = 0;
    for (int k = 0; k < GPT2_TENSOR_KINDS; k++) decayed += gpt2_tensor_decays((gpt2_tensor_t)k);
    EXPECT(decayed == 6, "%d kinds decayed: the 2-D ones are wte, wpe and four matrices per block", decayed);
    EXPECT(!gpt2_tensor_decays(GPT2_LN1_W) && !gpt2_tensor_decays(GPT2_FC_B) && gpt2_tensor_decays(GPT2_WTE),
           "decay flags");
    EXPECT(strcmp(gpt2_tensor_name(GPT2_MLP_PROJ_B), "mlp_proj.b") == 0, "names");
}

int main(void) {
    test_counts();
    test_layout();
    return test_summary();
}
