/* tokens.c — loads and validates a token file (the format is in tokens.h) and orders its windows per epoch. A file
 * cut short or corrupt is user input, so every failure is one line naming the file and what is wrong with it. */
#include "tokens.h"
#include "errmsg.h"
#include "rng.h"
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint32_t le32(const uint8_t *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t le64(const uint8_t *p) { return (uint64_t)le32(p) | (uint64_t)le32(p + 4) << 32; }

/* The magic as found, printable: another file's first bytes are often binary. */
static void show_magic(const uint8_t *m, char *out, size_t outlen) {
    size_t k = 0;
    for (int i = 0; i < 8 && k + 5 < outlen; i++)
        k += (size_t)snprintf(out + k, outlen - k, m[i] >= 0x20 && m[i] < 0x7f && m[i] != '\\' ? "%c" : "\\x%02X",
                              m[i]);
    out[k] = '\0';
}

/* The header's fields against the format, into t (the count, vocabulary, end-of-text token and documents). */
static int check_header(const char *path, const uint8_t *h, tokens_t *t, char *err, size_t errlen) {
    if (memcmp(h, TOKENS_MAGIC, 8) != 0) {
        char shown[40];
        show_magic(h, shown, sizeof shown);
        errmsg(-1, err, errlen,
               "%s: bad magic \"%s\", expected \"%s\": not a token file (scripts/setup.sh writes them)",
               path, shown, TOKENS_MAGIC);
        return -1;
    }
    uint32_t version = le32(h + 8);
    if (version != TOKENS_VERSION) {
        errmsg(-1, err, errlen,
               "%s: token file version %u, this build reads version %u", path, version, TOKENS_VERSION);
        return -1;
    }
    t->vocab = le32(h + 12);
    uint64_t n = le64(h + 16);
    t->eot = le32(h + 24);
    t->docs = le32(h + 28);
    if (t->vocab == 0 || t->vocab > 65536u) {
        errmsg(-1, err, errlen,
               "%s: vocabulary size %u does not fit the file's uint16 tokens (1..65536)", path, t->vocab);
        return -1;
    }
    if (t->eot >= t->vocab) {
        errmsg(-1, err, errlen, "%s: end-of-text token %u is outside the vocabulary of %u", path, t->eot, t->vocab);
        return -1;
    }
    if (n == 0) { errmsg(-1, err, errlen, "%s: header says 0 tokens", path); return -1; }
    if (n > (uint64_t)LLONG_MAX / 2) {
        errmsg(-1, err, errlen, "%s: header count of %llu tokens is implausibly large", path, (unsigned long long)n);
        return -1;
    }
    t->n = (long long)n;
    return 0;
}

/* Every token below the vocabulary size; the end-of-text token first and exactly docs times. */
static int check_tokens(const char *path, const tokens_t *t, char *err, size_t errlen) {
    long long eots = 0;
    for (long long i = 0; i < t->n; i++) {
        if (t->tok[i] >= t->vocab) {
            errmsg(-1, err, errlen, "%s: token %u at index %lld is outside the vocabulary of %u", path, t->tok[i], i,
                   t->vocab);
            return -1;
        }
        eots += t->tok[i] == t->eot;
    }
    if (t->tok[0] != t->eot) {
        errmsg(-1, err, errlen, "%s: starts with token %u, not the end-of-text token %u that precedes each document",
               path, t->tok[0], t->eot);
        return -1;
    }
    if (eots != (long long)t->docs) {
        errmsg(-1, err, errlen, "%s: holds %lld end-of-text tokens, the header says %u documents", path, eots, t->docs);
        return -1;
    }
    return 0;
}

int tokens_load(const char *path, tokens_t *t, char *err, size_t errlen) {
    memset(t, 0, sizeof *t);
    errno = 0;
    FILE *f = fopen(path, "rb");
    if (!f) {
        errmsg(-1, err, errlen, "%s: cannot open: %s (scripts/setup.sh writes it)", path,
               errno ? strerror(errno) : "unknown error");
        return -1;
    }
    int rc = -1;
    uint8_t h[TOKENS_HEADER_BYTES];
    size_t got = fread(h, 1, sizeof h, f);
    if (got < sizeof h) {
        errmsg(-1, err, errlen,
               "%s: truncated: expected a %d-byte header, got %zu bytes", path, TOKENS_HEADER_BYTES, got);
        goto out;
    }
    if (check_header(path, h, t, err, errlen)) goto out;
    /* The size before the allocation, so that a corrupt count fails as truncated rather than as a huge malloc. */
    long long want = 2 * t->n;
    if (fseek(f, 0, SEEK_END) != 0) { errmsg(-1, err, errlen, "%s: cannot seek: %s", path, strerror(errno)); goto out; }
    long size = ftell(f);
    if (size < 0) { errmsg(-1, err, errlen, "%s: cannot tell its size: %s", path, strerror(errno)); goto out; }
    long long payload = (long long)size - TOKENS_HEADER_BYTES;
    if (payload < want) {
        errmsg(-1, err, errlen,
               "%s: truncated: the header promises %lld tokens (%lld bytes), the file holds %lld bytes",
               path, t->n, want, payload);
        goto out;
    }
    if (payload > want) {
        errmsg(-1, err, errlen, "%s: %lld bytes of trailing data after the %lld tokens the header promises", path,
               payload - want, t->n);
        goto out;
    }
    if ((unsigned long long)want > SIZE_MAX || !(t->tok = malloc((size_t)want))) {
        errmsg(-1, err, errlen, "%s: out of memory for %lld bytes", path, want);
        goto out;
    }
    if (fseek(f, TOKENS_HEADER_BYTES, SEEK_SET) != 0 || fread(t->tok, 2, (size_t)t->n, f) != (size_t)t->n) {
        errmsg(-1, err, errlen, "%s: read error: %s", path, ferror(f) ? strerror(errno) : "short read");
        goto out;
    }
    /* The file is little-endian; on a big-endian host each token's two bytes are swapped back. */
    const uint16_t probe = 1;
    if (*(const uint8_t *)&probe == 0)
        for (long long i = 0; i < t->n; i++) t->tok[i] = (uint16_t)(t->tok[i] >> 8 | t->tok[i] << 8);
    if (check_tokens(path, t, err, errlen)) goto out;
    size_t len = strlen(path) + 1;
    if (!(t->path = malloc(len))) { errmsg(-1, err, errlen, "%s: out of memory", path); goto out; }
    memcpy(t->path, path, len);
    rc = 0;
out:
    fclose(f);
    if (rc) tokens_free(t);
    return rc;
}

void tokens_free(tokens_t *t) {
    free(t->path);
    free(t->tok);
    memset(t, 0, sizeof *t);
}

int tokens_sampler_init(tokens_sampler_t *s, const tokens_t *t, int T, char *err, size_t errlen) {
    memset(s, 0, sizeof *s);
    const char *path = t->path ? t->path : "token file";
    if (T < 1) { errmsg(-1, err, errlen, "%s: context of %d tokens: at least 1 is needed", path, T); return -1; }
    long long windows = (t->n - 1) / T;
    if (windows < 1) {
        errmsg(-1, err, errlen, "%s: holds %lld tokens, fewer than one window of %d + 1", path, t->n, T);
        return -1;
    }
    if (windows > INT_MAX) {
        errmsg(-1, err, errlen, "%s: %lld windows of %d + 1 tokens, more than this sampler counts (%d)", path, windows,
               T, INT_MAX);
        return -1;
    }
    if (!(s->order = malloc((size_t)windows * sizeof *s->order))) {
        errmsg(-1, err, errlen, "%s: out of memory for the order of %lld windows", path, windows);
        return -1;
    }
    for (int w = 0; w < (int)windows; w++) s->order[w] = w;
    s->t = t;
    s->T = T;
    s->n_windows = (int)windows;
    return 0;
}

void tokens_sampler_shuffle(tokens_sampler_t *s, unsigned long long seed, int epoch) {
    rng_epoch_order(seed, epoch, s->order, s->n_windows);
}

int tokens_sampler_batch(const tokens_sampler_t *s, long long first, int B, int *x, int *y) {
    if (first < 0 || B < 0 || first + B > s->n_windows) return -1;
    const int T = s->T;
    for (int b = 0; b < B; b++) {
        const uint16_t *src = s->t->tok + (long long)s->order[first + b] * T;
        for (int i = 0; i < T; i++) {
            x[(long long)b * T + i] = src[i];
            y[(long long)b * T + i] = src[i + 1];
        }
    }
    return 0;
}

void tokens_sampler_free(tokens_sampler_t *s) {
    free(s->order);
    memset(s, 0, sizeof *s);
}

int tokens_corpus_load(tokens_corpus_t *c, const char *dir, int T, char *err, size_t errlen) {
    memset(c, 0, sizeof *c);
    c->T = T;
    const char *name[2] = {"train.bin", "val.bin"};
    tokens_t *split[2] = {&c->train, &c->val};
    for (int i = 0; i < 2; i++) {
        char path[4096];
        if (snprintf(path, sizeof path, "%s/%s", dir, name[i]) >= (int)sizeof path) {
            tokens_corpus_free(c);
            return errmsg(-1, err, errlen, "%s: directory name too long", dir);
        }
        tokens_sampler_t s;
        if (tokens_load(path, split[i], err, errlen) != 0 || tokens_sampler_init(&s, split[i], T, err, errlen) != 0) {
            tokens_corpus_free(c);
            return -1;
        }
        tokens_sampler_free(&s);    /* it counted the windows: one at least, no more than an int */
    }
    if (c->train.vocab != c->val.vocab) {
        errmsg(-1, err, errlen, "%s: train.bin's vocabulary of %u and val.bin's of %u differ", dir, c->train.vocab,
               c->val.vocab);
        tokens_corpus_free(c);
        return -1;
    }
    return 0;
}

/* n random tokens below vocab into t (no documents: throughput only). */
static void synth_split(tokens_t *t, long long n, uint32_t vocab, rng_t *r) {
    t->tok = malloc((size_t)n * sizeof *t->tok);
    if (!t->tok) { fprintf(stderr, "scaling: error: out of host memory for %lld random tokens\n", n); exit(1); }
    for (long long i = 0; i < n; i++) t->tok[i] = (uint16_t)rng_below(r, vocab);
    t->n = n;
    t->vocab = vocab;
    t->eot = vocab - 1;
    t->docs = 0;
}

void tokens_corpus_synthetic(tokens_corpus_t *c, int T, uint32_t vocab, unsigned long long seed) {
    memset(c, 0, sizeof *c);
    rng_t r;
    rng_seed(&r, seed);
    synth_split(&c->train, TOKENS_SYNTH_TRAIN, vocab, &r);
    synth_split(&c->val, TOKENS_SYNTH_VAL, vocab, &r);
    c->T = T;
    c->synthetic = 1;
}

void tokens_corpus_free(tokens_corpus_t *c) {
    tokens_free(&c->train);
    tokens_free(&c->val);
    memset(c, 0, sizeof *c);
}
