/* gpt2_file.c — the reader and writer of gpt2_file.h's format: a header of 16 int32 words, the flat parameters, the
 * tokens, the targets and the writer's losses. Host-only. */
#include "gpt2_file.h"
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The file is little-endian; so is every machine this builds for (x86-64, aarch64 Linux), which the reader checks. */
static int little_endian(void) {
    uint32_t one = 1;
    unsigned char b;
    memcpy(&b, &one, 1);
    return b == 1;
}

/* The shape's dimensions, the batch and the counts agree with each other: 0, or -1 with the reason. */
static int check_shape(const gpt2_file_t *f, char *err, size_t errlen) {
    const gpt2_shape_t *s = &f->shape;
    if (s->layers < 1 || s->width < 1 || s->heads < 1 || s->width % s->heads || s->context < 1 || s->vocab < 1 ||
        s->vocab_pad < s->vocab) {
        snprintf(err, errlen, "not a GPT-2 shape: %d layers, width %d, %d heads, context %d, vocabulary %d (%d rows)",
                 s->layers, s->width, s->heads, s->context, s->vocab, s->vocab_pad);
        return -1;
    }
    if (f->B < 1 || f->T < 1 || f->T > s->context || (double)f->B * f->T > 1e9) {
        snprintf(err, errlen, "a batch of %d x %d tokens with a context of %d", f->B, f->T, s->context);
        return -1;
    }
    size_t want = gpt2_layout(s, NULL, 0);
    if (f->n_params != want) {
        snprintf(err, errlen, "%zu parameters, where the shape's flat layout has %zu", f->n_params, want);
        return -1;
    }
    if (f->n_losses < 0) {
        snprintf(err, errlen, "%d losses", f->n_losses);
        return -1;
    }
    if (f->precision != 0 && f->precision != GPT2_FILE_FP32 && f->precision != GPT2_FILE_BF16) {
        snprintf(err, errlen, "precision code %d (1 fp32, 2 bf16, 0 unsaid)", f->precision);
        return -1;
    }
    if (!(f->lr >= 0.0f && f->lr < 1e30f)) {   /* also refuses NaN and infinity */
        snprintf(err, errlen, "a learning rate of %g", (double)f->lr);
        return -1;
    }
    return 0;
}

static int check_tokens(const gpt2_file_t *f, char *err, size_t errlen) {
    const gpt2_shape_t *s = &f->shape;
    size_t n = (size_t)f->B * (size_t)f->T;
    for (size_t i = 0; i < n; i++)
        if (f->tokens[i] < 0 || f->tokens[i] >= s->vocab || f->targets[i] < -1 || f->targets[i] >= s->vocab) {
            snprintf(err, errlen, "row %zu: token %d, target %d, outside a vocabulary of %d", i, f->tokens[i],
                     f->targets[i], s->vocab);
            return -1;
        }
    return 0;
}

static const char *shape_name(const gpt2_shape_t *s) {
    for (int i = 0; gpt2_shapes[i].name; i++) {
        const gpt2_shape_t *t = &gpt2_shapes[i];
        if (t->layers == s->layers && t->width == s->width && t->heads == s->heads && t->context == s->context &&
            t->vocab == s->vocab && t->vocab_pad == s->vocab_pad)
            return t->name;
    }
    return "custom";
}

void gpt2_file_free(gpt2_file_t *f) {
    free(f->params), free(f->tokens), free(f->targets), free(f->losses);
    memset(f, 0, sizeof *f);
}

/* n elements of size bytes from fp into p: 0, or -1 (the file ended). */
static int take(FILE *fp, void *p, size_t size, size_t n) { return fread(p, size, n, fp) == n ? 0 : -1; }

int gpt2_file_read(const char *path, gpt2_file_t *f, char *err, size_t errlen) {
    memset(f, 0, sizeof *f);
    if (!little_endian()) {
        snprintf(err, errlen, "%s: this machine is big-endian; the format is little-endian", path);
        return -1;
    }
    FILE *fp = fopen(path, "rb");
    if (!fp) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return -1;
    }
    int32_t h[16];
    int64_t np = 0;
    int rc = -1;
    if (take(fp, h, sizeof h[0], 16)) {
        snprintf(err, errlen, "%s: shorter than the header", path);
        goto out;
    }
    if (memcmp(h, GPT2_FILE_MAGIC, 8) != 0 || h[2] != GPT2_FILE_VERSION) {
        snprintf(err, errlen, "%s: not a GPT-2 parameter file of version %d", path, GPT2_FILE_VERSION);
        goto out;
    }
    gpt2_shape_t s = {NULL, h[3], h[4], h[5], h[6], h[7], h[8]};
    f->shape = s;
    f->B = h[9];
    f->T = h[10];
    f->n_losses = h[11];
    memcpy(&np, &h[12], sizeof np);
    f->precision = h[14];
    memcpy(&f->lr, &h[15], sizeof f->lr);
    f->n_params = np > 0 ? (size_t)np : 0;
    char why[200];
    if (np <= 0 || check_shape(f, why, sizeof why)) {
        snprintf(err, errlen, "%s: %s", path, np <= 0 ? "no parameters" : why);
        goto out;
    }
    size_t n = (size_t)f->B * (size_t)f->T;
    f->params = (float *)malloc(f->n_params * sizeof(float));
    f->tokens = (int *)malloc(n * sizeof(int));
    f->targets = (int *)malloc(n * sizeof(int));
    f->losses = f->n_losses ? (float *)malloc((size_t)f->n_losses * sizeof(float)) : NULL;
    if (!f->params || !f->tokens || !f->targets || (f->n_losses && !f->losses)) {
        snprintf(err, errlen, "%s: out of host memory", path);
        goto out;
    }
    if (take(fp, f->params, sizeof(float), f->n_params) || take(fp, f->tokens, sizeof(int), n) ||
        take(fp, f->targets, sizeof(int), n) || take(fp, f->losses, sizeof(float), (size_t)f->n_losses)) {
        snprintf(err, errlen, "%s: shorter than its header says", path);
        goto out;
    }
    if (fgetc(fp) != EOF) {
        snprintf(err, errlen, "%s: longer than its header says", path);
        goto out;
    }
    if (check_tokens(f, why, sizeof why)) {
        snprintf(err, errlen, "%s: %s", path, why);
        goto out;
    }
    f->shape.name = shape_name(&f->shape);
    rc = 0;
out:
    fclose(fp);
    if (rc) gpt2_file_free(f);
    return rc;
}

int gpt2_file_write(const char *path, const gpt2_file_t *f, char *err, size_t errlen) {
    if (!little_endian()) {
        snprintf(err, errlen, "%s: this machine is big-endian; the format is little-endian", path);
        return -1;
    }
    if (check_shape(f, err, errlen) || check_tokens(f, err, errlen)) return -1;
    int32_t h[16] = {0};
    memcpy(h, GPT2_FILE_MAGIC, 8);
    const gpt2_shape_t *s = &f->shape;
    int32_t v[11] = {GPT2_FILE_VERSION, s->layers, s->width, s->heads, s->context, s->vocab, s->vocab_pad,
                     f->B, f->T, f->n_losses, 0};
    memcpy(&h[2], v, 10 * sizeof v[0]);
    int64_t np = (int64_t)f->n_params;
    memcpy(&h[12], &np, sizeof np);
    h[14] = f->precision;
    memcpy(&h[15], &f->lr, sizeof f->lr);
    FILE *fp = fopen(path, "wb");
    if (!fp) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return -1;
    }
    size_t n = (size_t)f->B * (size_t)f->T;
    int ok = fwrite(h, sizeof h[0], 16, fp) == 16 &&
             fwrite(f->params, sizeof(float), f->n_params, fp) == f->n_params &&
             fwrite(f->tokens, sizeof(int), n, fp) == n && fwrite(f->targets, sizeof(int), n, fp) == n &&
             (!f->n_losses || fwrite(f->losses, sizeof(float), (size_t)f->n_losses, fp) == (size_t)f->n_losses);
    if (fclose(fp) != 0) ok = 0;
    if (!ok) {
        snprintf(err, errlen, "%s: %s", path, errno ? strerror(errno) : "write failed");
        return -1;
    }
    return 0;
}
