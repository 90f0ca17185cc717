/* test_buckets.c — data parallelism's all-reduce buckets (strategies/buckets.h) on GPT-2's units and on a layer list
 * with parameter-free layers: the buckets tile the flat buffer from its end back, in backward's order, each within
 * the size unless one layer alone is larger, the first layers in a small tail bucket, and none empty. */
#include "test.h"
#include "strategies/buckets.h"
#include "engine/gpt2/gpt2_shape.h"
#include <stdlib.h>
#include <string.h>

/* The invariants every cut must keep; 1 if all hold. */
static int tiles(const bucket_t *b, int nb, int L, const size_t *first, size_t n_params, size_t bytes) {
    int ok = nb >= 1 && b[0].hi == L && b[nb - 1].lo == 0 && b[nb - 1].offset == 0;
    size_t end = n_params;
    for (int k = 0; k < nb; k++) {
        ok &= b[k].lo < b[k].hi && b[k].count > 0 && b[k].offset == first[b[k].lo];
        ok &= b[k].offset + b[k].count == end;   /* contiguous, from the buffer's end back */
        ok &= k == 0 || b[k].hi == b[k - 1].lo;
        int one_layer = 1;   /* a lone layer with parameters may exceed the size */
        for (int i = b[k].lo, seen = 0; i < b[k].hi; i++)
            if ((i + 1 < L ? first[i + 1] : n_params) > first[i] && seen++) one_layer = 0;
        ok &= one_layer || b[k].count * sizeof(float) <= bytes;
        end = b[k].offset;
    }
    return ok;
}

static void gpt2_case(const char *size, size_t bytes, int want) {
    const gpt2_shape_t *s = gpt2_shape(size);
    int n = gpt2_layout_count(s), U = GPT2_UNITS(s->layers);
    gpt2_slice_t *slice = malloc((size_t)n * sizeof *slice);
    size_t *first = malloc((size_t)U * sizeof *first);
    bucket_t *b = malloc((size_t)U * sizeof *b);
    if (!slice || !first || !b) { fprintf(stderr, "out of host memory\n"); exit(1); }
    size_t total = gpt2_layout(s, slice, n);
    gpt2_layout_units(s, slice, n, first);
    /* Units in layout order: the embeddings from 0, each block at its first LayerNorm, the final LayerNorm last. */
    int ordered = first[0] == 0;
    for (int j = 1; j < U; j++) ordered &= first[j] > first[j - 1];
    EXPECT(ordered && first[U - 1] == gpt2_layout_find(slice, n, GPT2_LNF_W, -1)->at,
           "gpt2 %s: units out of layout order", size);
    int nb = buckets_build(U, first, total, sizeof(float), bytes, b);
    char what[64];
    snprintf(what, sizeof what, "gpt2 %s at %zu bytes", size, bytes);
    EXPECT(tiles(b, nb, U, first, total, bytes), "%s: %d buckets break the invariants", what, nb);
    printf("%-32s %2d buckets (want %d): first units [%d, %d), tail [%d, %d) of %zu elements\n", what, nb, want,
           b[0].lo, b[0].hi, b[nb - 1].lo, b[nb - 1].hi, b[nb - 1].count);
    EXPECT(nb == want, "%s: %d buckets, want %d", what, nb, want);
    /* The token embedding is final only after the last unit's scatter-add: it is in the last bucket, alone. */
    EXPECT(b[nb - 1].lo == 0 && b[nb - 1].hi == 1, "%s: the embeddings share their bucket", what);
    free(slice);
    free(first);
    free(b);
}

int main(void) {
    /* small: 12 blocks of 7,087,872 parameters (28 MB in fp32). One byte: a bucket per unit. 25 MiB: a block is
     * larger, so again one each (14). 1 GiB: the embeddings' 38.6 M parameters (154 MB) exceed the tail's eighth
     * and go alone; the final LayerNorm and all 12 blocks (340 MB) fill one bucket. */
    gpt2_case("small", 1, 14);
    gpt2_case("small", (size_t)25 << 20, 14);
    gpt2_case("small", (size_t)1 << 30, 2);
    gpt2_case("tiny", 1, 4);
    gpt2_case("xl", (size_t)25 << 20, 50);
    /* Parameter-free layers (sizes 0, 10, 0, 20, 10): never a bucket of their own. */
    const size_t first[5] = {0, 0, 10, 10, 30};
    bucket_t b[5];
    for (size_t bytes = 1; bytes <= 256; bytes *= 2) {
        int nb = buckets_build(5, first, 40, sizeof(float), bytes, b);
        char what[48];
        snprintf(what, sizeof what, "layers 0,10,0,20,10 at %zu bytes", bytes);
        EXPECT(tiles(b, nb, 5, first, 40, bytes), "%s: %d buckets break the invariants", what, nb);
    }
    /* The control: the check rejects a cut that leaves a gap, and one over the size. */
    int nb = buckets_build(5, first, 40, sizeof(float), 1024, b);
    bucket_t gap[5], big[5];
    memcpy(gap, b, sizeof b);
    memcpy(big, b, sizeof b);
    gap[0].count -= 1;
    EXPECT(nb >= 2 && !tiles(gap, nb, 5, first, 40, 1024), "a gap in the cut passes the check");
    EXPECT(!tiles(big, nb, 5, first, 40, 8), "a cut over the size passes the check");
    return test_summary();
}
