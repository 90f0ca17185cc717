/* test_gpt2_file.c — the GPT-2 parameter file of the PyTorch comparison (engine/gpt2/gpt2_file.h): a file written and
 * read back bit for bit, and every damaged one refused with its reason (another magic, a short or long file, a layout
 * that does not fit the shape, an unknown precision or a negative rate, a token outside the vocabulary). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "test.h"
#include "engine/gpt2/gpt2_file.h"
#include "engine/gpt2/gpt2_plan.h"

static char dir[] = "/tmp/test_gpt2_file_XXXXXX";

/* Rewrites path's bytes [at, at + n) with p (n bytes), or truncates/extends it by delta bytes when p is NULL. */
static void damage(const char *path, long at, const void *p, long n, long delta) {
    size_t len = 0;
    char *b = test_slurp(path, &len);
    FILE *f = fopen(path, "wb");
    if (!b || !f) { fprintf(stderr, "cannot rewrite %s\n", path); exit(1); }
    if (p) memcpy(b + at, p, (size_t)n);
    size_t out = p ? len : (size_t)((long)len + delta);
    fwrite(b, 1, out < len ? out : len, f);
    for (size_t i = len; i < out; i++) fputc(0, f);
    fclose(f);
    free(b);
}

static void expect_refused(const char *path, const char *why) {
    gpt2_file_t g;
    char err[300] = "";
    int rc = gpt2_file_read(path, &g, err, sizeof err);
    EXPECT(rc == -1 && strstr(err, why), "want a refusal naming \"%s\", got %d: %s", why, rc, err);
    printf("refused: %s\n", err);
}

int main(void) {
    if (!mkdtemp(dir)) { perror("mkdtemp"); return 1; }
    char path[128], copy[160];
    snprintf(path, sizeof path, "%s/tiny.gpt2", dir);
    gpt2_file_t f;
    memset(&f, 0, sizeof f);
    f.shape = *gpt2_shape("tiny");
    f.B = 2;
    f.T = 16;
    f.n_params = gpt2_layout(&f.shape, NULL, 0);
    f.params = malloc(f.n_params * sizeof(float));
    gpt2_layout_init(&f.shape, 7, f.params, f.n_params);
    int n = f.B * f.T;
    f.tokens = malloc(n * sizeof(int));
    f.targets = malloc(n * sizeof(int));
    for (int i = 0; i < n; i++) f.tokens[i] = (i * 37) % f.shape.vocab, f.targets[i] = i == 3 ? -1 : (i * 11) % 512;
    float losses[3] = {6.25f, 6.0f, 5.5f};
    f.n_losses = 3;
    f.losses = losses;
    f.precision = GPT2_FILE_BF16;
    f.lr = 6e-4f;
    char err[300] = "";
    EXPECT(gpt2_file_write(path, &f, err, sizeof err) == 0, "write: %s", err);
    gpt2_file_t g;
    EXPECT(gpt2_file_read(path, &g, err, sizeof err) == 0, "read: %s", err);
    EXPECT(g.shape.name && strcmp(g.shape.name, "tiny") == 0, "the shape is named %s", g.shape.name);
    EXPECT(g.B == 2 && g.T == 16 && g.n_params == f.n_params && g.n_losses == 3, "the header read back");
    EXPECT(g.precision == GPT2_FILE_BF16 && g.lr == 6e-4f, "the precision %d and rate %g read back", g.precision,
           (double)g.lr);
    EXPECT(memcmp(g.params, f.params, f.n_params * sizeof(float)) == 0, "the parameters read back");
    EXPECT(memcmp(g.tokens, f.tokens, n * sizeof(int)) == 0 && memcmp(g.targets, f.targets, n * sizeof(int)) == 0,
           "the tokens and targets read back");
    EXPECT(memcmp(g.losses, losses, sizeof losses) == 0, "the losses read back");
    gpt2_file_free(&g);
    size_t len = 0;
    char *bytes = test_slurp(path, &len);
    EXPECT(len == 64 + 4 * f.n_params + 8 * (size_t)n + 12, "%zu bytes: the header, the arrays, nothing more", len);
    EXPECT(bytes && memcmp(bytes, "GPT2PARM", 8) == 0, "the magic opens the file");
    free(bytes);

    snprintf(copy, sizeof copy, "%s/damaged.gpt2", dir);
    const struct { long at; int32_t v; const char *why; } bad[] = {
        {0, 0x32545047 ^ 1, "not a GPT-2 parameter file"},   /* the magic */
        {8, 2, "not a GPT-2 parameter file"},                /* version 2 */
        {32, 500, "not a GPT-2 shape"},                      /* vocab_pad 500 for vocab 512 */
        {48, 64, "flat layout"},                             /* n_params 64: not the shape's layout */
        {40, 65, "batch"},                                   /* T past the context */
        {48, 0, "no parameters"},                            /* n_params 0 */
        {56, 3, "precision code"},                           /* neither fp32, bf16 nor unsaid */
        {60, (int32_t)0xbf800000, "learning rate"},          /* -1.0f */
        {56, 0, "ok"},                                       /* a precision unsaid: a file of before word 14 */
        {64 + 4 * 10, 0, "ok"},                              /* a parameter changed: still a file */
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        char cmd[400];
        snprintf(cmd, sizeof cmd, "cp '%s' '%s'", path, copy);
        EXPECT(system(cmd) == 0, "cp");
        damage(copy, bad[k].at, &bad[k].v, 4, 0);
        if (strcmp(bad[k].why, "ok") == 0) {
            EXPECT(gpt2_file_read(copy, &g, err, sizeof err) == 0, "byte %ld changed, still read: %s", bad[k].at, err);
            gpt2_file_free(&g);
        } else {
            expect_refused(copy, bad[k].why);
        }
    }
    /* a token outside the vocabulary */
    char cmd[400];
    snprintf(cmd, sizeof cmd, "cp '%s' '%s'", path, copy);
    EXPECT(system(cmd) == 0, "cp");
    int32_t tok = 512;
    damage(copy, (long)(64 + 4 * f.n_params + 4 * 5), &tok, 4, 0);
    expect_refused(copy, "outside a vocabulary");
    /* short and long */
    EXPECT(system(cmd) == 0, "cp");
    damage(copy, 0, NULL, 0, -4);
    expect_refused(copy, "shorter than its header says");
    EXPECT(system(cmd) == 0, "cp");
    damage(copy, 0, NULL, 0, 1);
    expect_refused(copy, "longer than its header says");
    EXPECT(system(cmd) == 0, "cp");
    damage(copy, 0, NULL, 0, -(long)len + 10);
    expect_refused(copy, "shorter than the header");
    snprintf(copy, sizeof copy, "%s/none.gpt2", dir);
    expect_refused(copy, "No such file");
    /* the writer checks as the reader does */
    f.tokens[0] = -1;
    EXPECT(gpt2_file_write(path, &f, err, sizeof err) == -1 && strstr(err, "outside a vocabulary"), "write: %s", err);
    free(f.params), free(f.tokens), free(f.targets);
    test_scratch_remove(dir);
    return test_summary();
}
