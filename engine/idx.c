/* idx.c — loads and validates the IDX files of MNIST and Fashion-MNIST, gzip or raw alike (zlib's gzread
 * passes raw files through). A bad or partial download is user input, so every failure is one line naming the file. */
#include "idx.h"
#include "tokens.h"
#include "errmsg.h"
#include "rng.h"
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#define IDX_MAGIC_IMAGES 0x00000803u   /* unsigned byte, 3 dimensions */
#define IDX_MAGIC_LABELS 0x00000801u   /* unsigned byte, 1 dimension */
#define IDX_SIDE 28
#define IDX_CLASSES 10
#define IDX_SYNTH_TRAIN 60000
#define IDX_SYNTH_TEST 10000
/* Payload buffers grow as data actually arrives, so a corrupt header promising terabytes fails as
 * "truncated" instead of as a huge malloc. */
#define IDX_FIRST_CHUNK ((size_t)8 << 20)

static uint32_t be32(const uint8_t *p) {
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | (uint32_t)p[3];
}

/* Reads until len bytes or end of file. A gzip stream cut short (Z_BUF_ERROR) is a short read, not an error,
 * so it reports as truncation like a cut raw file; other zlib errors (bad CRC, corrupt data) return -1. */
static long long read_upto(gzFile f, uint8_t *buf, size_t len, const char **zmsg) {
    size_t got = 0;
    while (got < len) {
        size_t want = len - got;
        if (want > (1u << 30)) want = 1u << 30;   /* gzread takes an unsigned and returns an int */
        int r = gzread(f, buf + got, (unsigned)want);
        if (r < 0) {
            int zerr = Z_OK;
            const char *m = gzerror(f, &zerr);
            if (zerr == Z_BUF_ERROR) break;
            *zmsg = zerr == Z_ERRNO ? strerror(errno) : m;
            return -1;
        }
        if (r == 0) break;
        got += (size_t)r;
    }
    return (long long)got;
}

/* Opens path, checks magic and header, and reads exactly count * item_bytes of payload into *data.
 * what names the payload in messages ("image" / "label"); dims receives the header words after the magic. */
static int read_idx(const char *path, uint32_t magic, int n_dims, const char *what, uint32_t dims[3],
                    uint8_t **data, char *err, size_t errlen) {
    *data = NULL;
    errno = 0;
    gzFile f = gzopen(path, "rb");
    if (!f) {
        errmsg(-1, err, errlen, "%s: cannot open: %s", path, errno ? strerror(errno) : "out of memory");
        return -1;
    }
    gzbuffer(f, 1u << 18);
    int rc = -1;
    uint8_t hdr[16], *buf = NULL;
    const char *zmsg = NULL;
    size_t hdr_bytes = 4 * (size_t)(1 + n_dims);
    long long got = read_upto(f, hdr, hdr_bytes, &zmsg);
    if (got < 0) { errmsg(-1, err, errlen, "%s: read error: %s", path, zmsg); goto out; }
    if ((size_t)got < hdr_bytes) {
        errmsg(-1, err, errlen, "%s: truncated: expected a %zu-byte IDX header, got %lld bytes", path, hdr_bytes, got);
        goto out;
    }
    uint32_t found = be32(hdr);
    if (found != magic) {
        const char *hint = found == IDX_MAGIC_IMAGES ? " (an images file)"
                         : found == IDX_MAGIC_LABELS ? " (a labels file)" : "";
        errmsg(-1, err, errlen,
               "%s: bad magic 0x%08X%s, expected 0x%08X for IDX %s data", path, found, hint, magic, what);
        goto out;
    }
    for (int i = 0; i < n_dims; i++) dims[i] = be32(hdr + 4 + 4 * i);
    if (dims[0] == 0) { errmsg(-1, err, errlen, "%s: header says 0 %ss", path, what); goto out; }
    if (n_dims == 3 && (dims[1] != IDX_SIDE || dims[2] != IDX_SIDE)) {
        errmsg(-1, err, errlen, "%s: images are %ux%u, expected %dx%d", path, dims[1], dims[2], IDX_SIDE, IDX_SIDE);
        goto out;
    }
    size_t item = n_dims == 3 ? (size_t)IDX_SIDE * IDX_SIDE : 1;
    if (dims[0] > (uint32_t)INT_MAX / item) {   /* counts and offsets are int elsewhere */
        errmsg(-1, err, errlen, "%s: header count %u is implausibly large", path, dims[0]);
        goto out;
    }
    size_t expected = dims[0] * item, cap = expected < IDX_FIRST_CHUNK ? expected : IDX_FIRST_CHUNK, have = 0;
    for (;;) {
        uint8_t *nb = realloc(buf, cap);
        if (!nb) { errmsg(-1, err, errlen, "%s: out of memory for %zu bytes", path, cap); goto out; }
        buf = nb;
        got = read_upto(f, buf + have, cap - have, &zmsg);
        if (got < 0) { errmsg(-1, err, errlen, "%s: read error: %s", path, zmsg); goto out; }
        have += (size_t)got;
        if (have < cap || cap == expected) break;
        cap = cap > expected / 2 ? expected : cap * 2;
    }
    if (have < expected) {
        errmsg(-1, err, errlen, "%s: truncated: expected %zu bytes of %s data, got %zu", path, expected, what, have);
        goto out;
    }
    uint8_t extra[4096];
    long long n_extra = 0;
    while ((got = read_upto(f, extra, sizeof extra, &zmsg)) > 0) n_extra += got;
    if (got < 0) { errmsg(-1, err, errlen, "%s: read error: %s", path, zmsg); goto out; }
    if (n_extra > 0) {
        errmsg(-1, err, errlen, "%s: %lld bytes of trailing data after the %zu bytes of %s data the header promises",
               path, n_extra, expected, what);
        goto out;
    }
    *data = buf;
    buf = NULL;
    rc = 0;
out:
    free(buf);
    gzclose(f);
    return rc;
}

int idx_load_split(const char *images_path, const char *labels_path, idx_split_t *s, char *err, size_t errlen) {
    memset(s, 0, sizeof *s);
    uint32_t idims[3] = {0}, ldims[3] = {0};
    uint8_t *images = NULL, *labels = NULL;
    if (read_idx(images_path, IDX_MAGIC_IMAGES, 3, "image", idims, &images, err, errlen)) return -1;
    if (read_idx(labels_path, IDX_MAGIC_LABELS, 1, "label", ldims, &labels, err, errlen)) { free(images); return -1; }
    if (idims[0] != ldims[0]) {
        errmsg(-1, err, errlen,
               "%s holds %u images but %s holds %u labels", images_path, idims[0], labels_path, ldims[0]);
        goto fail;
    }
    for (uint32_t i = 0; i < ldims[0]; i++)
        if (labels[i] >= IDX_CLASSES) {
            errmsg(-1, err, errlen, "%s: label %u at index %u is out of range 0..%d", labels_path, labels[i], i,
                   IDX_CLASSES - 1);
            goto fail;
        }
    s->n = (int)idims[0];
    s->rows = (int)idims[1];
    s->cols = (int)idims[2];
    s->images = images;
    s->labels = labels;
    return 0;
fail:
    free(images);
    free(labels);
    return -1;
}

/* <dir>/<name>.gz if it exists (or exists but cannot be read, so that error surfaces), else <dir>/<name>.
 * fopen rather than stat keeps this file plain C11. */
static int pick_path(const char *dir, const char *name, char *out, size_t outlen, char *err, size_t errlen) {
    int n = snprintf(out, outlen, "%s/%s.gz", dir, name);
    if (n < 0 || (size_t)n >= outlen) { errmsg(-1, err, errlen, "%s/%s: path too long", dir, name); return -1; }
    errno = 0;
    FILE *f = fopen(out, "rb");
    if (f) { fclose(f); return 0; }
    if (errno != ENOENT) return 0;
    snprintf(out, outlen, "%s/%s", dir, name);
    errno = 0;
    f = fopen(out, "rb");
    if (f) { fclose(f); return 0; }
    if (errno == ENOENT) {
        errmsg(-1, err, errlen, "%s/%s: not found (tried .gz and raw): %s", dir, name, strerror(ENOENT));
        return -1;
    }
    return 0;   /* exists but unreadable: read_idx names the reason */
}

int idx_load_dataset(const char *dir, idx_dataset_t *d, char *err, size_t errlen) {
    static const char *const names[2][2] = {
        {"train-images-idx3-ubyte", "train-labels-idx1-ubyte"},
        {"t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"},
    };
    memset(d, 0, sizeof *d);
    idx_split_t *splits[2] = {&d->train, &d->test};
    char ipath[4096], lpath[4096];
    for (int k = 0; k < 2; k++) {
        if (pick_path(dir, names[k][0], ipath, sizeof ipath, err, errlen) ||
            pick_path(dir, names[k][1], lpath, sizeof lpath, err, errlen) ||
            idx_load_split(ipath, lpath, splits[k], err, errlen)) {
            idx_free(d);
            return -1;
        }
    }
    return 0;
}

static void synth_split(idx_split_t *s, int n, rng_t *r) {
    s->n = n;
    s->rows = s->cols = IDX_SIDE;
    size_t bytes = (size_t)n * IDX_SIDE * IDX_SIDE;
    s->images = malloc(bytes);
    s->labels = malloc((size_t)n);
    if (!s->images || !s->labels) {   /* no error channel in the interface; 55 MB failing is fatal anyway */
        fprintf(stderr, "idx_synthetic: out of memory for %zu bytes\n", bytes);
        exit(1);
    }
    for (size_t i = 0; i < bytes; i += 8) {   /* 8 bytes per draw: 55 MB would take a while a byte at a time */
        uint64_t v = rng_u64(r);
        for (size_t b = 0; b < 8 && i + b < bytes; b++) s->images[i + b] = (uint8_t)(v >> (8 * b));
    }
    for (int i = 0; i < n; i++) s->labels[i] = (uint8_t)rng_below(r, IDX_CLASSES);
}

void idx_synthetic(idx_dataset_t *d, unsigned long long seed) {
    rng_t r;
    rng_seed(&r, seed);
    memset(d, 0, sizeof *d);
    synth_split(&d->train, IDX_SYNTH_TRAIN, &r);
    synth_split(&d->test, IDX_SYNTH_TEST, &r);
    d->synthetic = 1;
}

void idx_synthetic_generated(idx_dataset_t *d, unsigned long long seed, int side, int channels, int classes) {
    memset(d, 0, sizeof *d);
    d->train.n = 1281167;
    d->test.n = 50000;
    d->train.rows = d->train.cols = d->test.rows = d->test.cols = side;
    d->channels = channels;
    d->classes = classes;
    d->image = side;
    d->generated = 1;
    d->gen_seed = seed;
    d->synthetic = 1;
}

void idx_free(idx_dataset_t *d) {
    free(d->train.images);
    free(d->train.labels);
    free(d->test.images);
    free(d->test.labels);
    if (d->corpus) tokens_corpus_free(d->corpus);
    free(d->corpus);
    memset(d, 0, sizeof *d);
}
