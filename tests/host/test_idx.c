/* test_idx.c — the IDX reader against the real MNIST / Fashion-MNIST files and against broken copies of them:
 * each corruption must fail with one line naming the file and the fault. Host only; runs on CI. */
#define _POSIX_C_SOURCE 200809L   /* mkdtemp */
#include "engine/idx.h"
#include "test.h"
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#define SUBSET 1000   /* images in the broken copies: enough to be real data, small enough to write fast */
#define PIX (28 * 28)

static char tmpdir[256];
static char made[64][512];   /* files to delete at the end */
static int n_made;

static int mkdir_ok(const char *path) { return mkdir(path, 0700) == 0; }

static const char *tmp_path(const char *name) {
    char *p = made[n_made++];
    snprintf(p, sizeof made[0], "%s/%s", tmpdir, name);
    return p;
}

static void put_be32(uint8_t *p, uint32_t v) {
    p[0] = (uint8_t)(v >> 24); p[1] = (uint8_t)(v >> 16); p[2] = (uint8_t)(v >> 8); p[3] = (uint8_t)v;
}

/* Writes an IDX file: magic, then n_dims header words, then `bytes` bytes of data (which may disagree with
 * the header: that is the point), then `extra` trailing zero bytes. gz picks gzip or raw. */
static void write_idx(const char *path, int gz, uint32_t magic, int n_dims, const uint32_t *dims,
                      const uint8_t *data, size_t bytes, size_t extra) {
    uint8_t hdr[16];
    put_be32(hdr, magic);
    for (int i = 0; i < n_dims; i++) put_be32(hdr + 4 + 4 * i, dims[i]);
    size_t hb = 4 * (size_t)(1 + n_dims);
    uint8_t *zeros = calloc(extra + 1, 1);
    if (gz) {
        gzFile f = gzopen(path, "wb1");
        if (!f) { perror(path); exit(2); }
        gzwrite(f, hdr, (unsigned)hb);
        if (bytes) gzwrite(f, data, (unsigned)bytes);
        if (extra) gzwrite(f, zeros, (unsigned)extra);
        gzclose(f);
    } else {
        FILE *f = fopen(path, "wb");
        if (!f) { perror(path); exit(2); }
        fwrite(hdr, 1, hb, f);
        fwrite(data, 1, bytes, f);
        fwrite(zeros, 1, extra, f);
        fclose(f);
    }
    free(zeros);
}

static void write_images(const char *path, int gz, uint32_t count, const uint8_t *data, size_t bytes, size_t extra) {
    uint32_t dims[3] = {count, 28, 28};
    write_idx(path, gz, 0x803, 3, dims, data, bytes, extra);
}

static void write_labels(const char *path, int gz, uint32_t count, const uint8_t *data, size_t bytes, size_t extra) {
    write_idx(path, gz, 0x801, 1, &count, data, bytes, extra);
}

/* A load that must fail: the message is one line, names `culprit` and contains every non-NULL want[]. */
static void expect_fail(const char *label, const char *images, const char *labels, const char *culprit,
                        const char *want0, const char *want1) {
    idx_split_t s;
    char err[1024] = "";
    int rc = idx_load_split(images, labels, &s, err, sizeof err);
    EXPECT(rc == -1, "%s: load succeeded", label);
    EXPECT(s.images == NULL && s.labels == NULL && s.n == 0, "%s: split not cleared on failure", label);
    EXPECT(err[0] && !strchr(err, '\n'), "%s: message not one line: '%s'", label, err);
    EXPECT(strstr(err, culprit) != NULL, "%s: message does not name %s: '%s'", label, culprit, err);
    EXPECT(!want0 || strstr(err, want0), "%s: want '%s' in '%s'", label, want0, err);
    EXPECT(!want1 || strstr(err, want1), "%s: want '%s' in '%s'", label, want1, err);
    printf("  %-28s -> %s\n", label, err);
}

/* Loads a real data set and checks what is known about it; returns 0 if it loaded. */
static int check_real(const char *dir, int label0, idx_dataset_t *d) {
    char err[1024] = "";
    int rc = idx_load_dataset(dir, d, err, sizeof err);
    EXPECT(rc == 0, "%s (scripts/setup.sh places the data)", err);
    if (rc) return -1;
    EXPECT(d->train.n == 60000 && d->test.n == 10000, "%s: %d train, %d test", dir, d->train.n, d->test.n);
    EXPECT(d->train.rows == 28 && d->train.cols == 28 && d->test.rows == 28 && d->test.cols == 28,
           "%s: %dx%d", dir, d->train.rows, d->train.cols);
    int hist[10] = {0}, bad = 0, hist_ok = 1;
    for (int i = 0; i < d->train.n; i++) { if (d->train.labels[i] < 10) hist[d->train.labels[i]]++; else bad++; }
    for (int i = 0; i < d->test.n; i++) bad += d->test.labels[i] >= 10;
    EXPECT(bad == 0, "%s: %d labels >= 10", dir, bad);
    for (int c = 0; c < 10; c++) hist_ok &= hist[c] >= 5000 && hist[c] <= 7000;
    EXPECT(hist_ok, "%s: train histogram %d %d %d %d %d %d %d %d %d %d", dir, hist[0], hist[1], hist[2], hist[3],
           hist[4], hist[5], hist[6], hist[7], hist[8], hist[9]);
    EXPECT(d->train.labels[0] == label0, "%s: train label[0] = %d, expected %d", dir, d->train.labels[0], label0);
    long sum = 0;   /* an all-zero payload would pass every check above */
    for (int i = 0; i < PIX; i++) sum += d->train.images[i];
    EXPECT(sum > 0, "%s: first image is blank", dir);
    printf("  %s: %d train, %d test, label[0] = %d\n", dir, d->train.n, d->test.n, d->train.labels[0]);
    return 0;
}

static void test_broken(const uint8_t *img, const uint8_t *lab) {
    const size_t ib = (size_t)SUBSET * PIX;
    char want[512];
    const char *gi = tmp_path("good-images"), *gl = tmp_path("good-labels");
    const char *gzi = tmp_path("good-images.gz"), *gzl = tmp_path("good-labels.gz");
    write_images(gi, 0, SUBSET, img, ib, 0);
    write_labels(gl, 0, SUBSET, lab, SUBSET, 0);
    write_images(gzi, 1, SUBSET, img, ib, 0);
    write_labels(gzl, 1, SUBSET, lab, SUBSET, 0);

    /* The intact copies load, raw and gzip, byte for byte. */
    const char *pairs[2][2] = {{gi, gl}, {gzi, gzl}};
    for (int k = 0; k < 2; k++) {
        idx_split_t s;
        char err[1024] = "";
        int rc = idx_load_split(pairs[k][0], pairs[k][1], &s, err, sizeof err);
        EXPECT(rc == 0, "intact copy %s: %s", pairs[k][0], err);
        if (rc) continue;
        EXPECT(s.n == SUBSET && !memcmp(s.images, img, ib) && !memcmp(s.labels, lab, SUBSET), "intact copy differs");
        free(s.images);
        free(s.labels);
    }

    /* Truncated by half an image, raw and as a complete gzip of the short data. */
    for (int gz = 0; gz < 2; gz++) {
        const char *p = tmp_path(gz ? "trunc-images.gz" : "trunc-images");
        write_images(p, gz, SUBSET, img, ib - PIX / 2, 0);
        snprintf(want, sizeof want, "%s: truncated: expected %zu bytes of image data, got %zu", p, ib, ib - PIX / 2);
        expect_fail(gz ? "truncated images (gz)" : "truncated images (raw)", p, gl, p, want, NULL);
    }
    /* A gzip file cut mid-stream, as an interrupted download leaves it. */
    {
        const char *p = tmp_path("cut-images.gz");
        FILE *src = fopen(gzi, "rb");
        fseek(src, 0, SEEK_END);
        long len = ftell(src);
        fseek(src, 0, SEEK_SET);
        uint8_t *buf = malloc((size_t)len);
        size_t got = fread(buf, 1, (size_t)len, src);
        fclose(src);
        FILE *dst = fopen(p, "wb");
        fwrite(buf, 1, got / 2, dst);
        fclose(dst);
        free(buf);
        expect_fail("cut gzip stream", p, gl, p, "truncated: expected 784000 bytes of image data, got ", NULL);
    }
    /* Truncated label file. */
    {
        const char *p = tmp_path("trunc-labels");
        write_labels(p, 0, SUBSET, lab, SUBSET - 3, 0);
        snprintf(want, sizeof want, "%s: truncated: expected %d bytes of label data, got %d", p, SUBSET, SUBSET - 3);
        expect_fail("truncated labels", gi, p, p, want, NULL);
    }
    /* Header shorter than its fixed size. */
    {
        const char *p = tmp_path("stub-images");
        FILE *f = fopen(p, "wb");
        fwrite("\0\0\x08\x03\0\0", 1, 6, f);
        fclose(f);
        expect_fail("truncated header", p, gl, p, "truncated", "header");
    }
    /* Bad magic: labels where images belong, and plain garbage in a labels file. */
    {
        expect_fail("labels file as images", gl, gl, gl, "bad magic 0x00000801", "expected 0x00000803");
        const char *p = tmp_path("magic-labels");
        uint32_t n = SUBSET;
        write_idx(p, 0, 0x12345678u, 1, &n, lab, SUBSET, 0);
        expect_fail("bad label magic", gi, p, p, "bad magic 0x12345678", "expected 0x00000801");
    }
    /* Image and label counts disagree, each file consistent with its own header. */
    {
        const char *p = tmp_path("short-labels.gz");
        write_labels(p, 1, SUBSET - 1, lab, SUBSET - 1, 0);
        snprintf(want, sizeof want, "%s holds %d images but %s holds %d labels", gi, SUBSET, p, SUBSET - 1);
        expect_fail("label count mismatch", gi, p, p, want, NULL);
    }
    /* Missing files, alone and as a whole directory. */
    {
        const char *p = tmp_path("no-such-file");
        expect_fail("missing images", p, gl, p, "cannot open", "No such file or directory");
        expect_fail("missing labels", gi, p, p, "cannot open", "No such file or directory");
        idx_dataset_t d;
        char err[1024] = "";
        const char *dir = tmp_path("empty-dir");
        EXPECT(mkdir_ok(dir), "mkdir %s", dir);
        EXPECT(idx_load_dataset(dir, &d, err, sizeof err) == -1, "empty directory loaded");
        EXPECT(strstr(err, "train-images-idx3-ubyte") && strstr(err, "not found") && !strchr(err, '\n'),
               "empty directory: '%s'", err);
        EXPECT(d.train.images == NULL && d.test.images == NULL, "dataset not cleared on failure");
        printf("  %-28s -> %s\n", "empty directory", err);
    }
    /* A label out of range. */
    {
        uint8_t *bad = malloc(SUBSET);
        memcpy(bad, lab, SUBSET);
        bad[5] = 10;
        const char *p = tmp_path("bad-labels");
        write_labels(p, 0, SUBSET, bad, SUBSET, 0);
        expect_fail("label >= 10", gi, p, p, "label 10 at index 5", NULL);
        free(bad);
    }
    /* Trailing bytes past what the header promises, raw and gzip. */
    for (int gz = 0; gz < 2; gz++) {
        const char *p = tmp_path(gz ? "long-images.gz" : "long-images");
        write_images(p, gz, SUBSET, img, ib, 17);
        expect_fail(gz ? "trailing bytes (gz)" : "trailing bytes (raw)", p, gl, p, "17 bytes of trailing data", NULL);
    }
    /* Wrong dimensions and an empty file set. */
    {
        const char *p = tmp_path("wide-images");
        uint32_t dims[3] = {SUBSET / 4, 56, 28};   /* same byte count: only the header can tell */
        write_idx(p, 0, 0x803, 3, dims, img, ib / 2, 0);
        expect_fail("56x28 images", p, gl, p, "images are 56x28, expected 28x28", NULL);
        const char *q = tmp_path("zero-images");
        write_images(q, 0, 0, img, 0, 0);
        expect_fail("zero count", q, gl, q, "0 images", NULL);
    }
}

/* idx_load_dataset prefers <name>.gz over <name> and falls back to <name>: a broken raw file next to a good
 * .gz must not matter, and a raw-only file must be found. */
static void test_dir_preference(const uint8_t *img, const uint8_t *lab) {
    const char *dir = tmp_path("prefer");
    if (!mkdir_ok(dir)) { EXPECT(0, "mkdir %s", dir); return; }
    const char *pre[2] = {"train", "t10k"};
    char name[128];
    for (int k = 0; k < 2; k++) {
        snprintf(name, sizeof name, "prefer/%s-images-idx3-ubyte.gz", pre[k]);
        write_images(tmp_path(name), 1, SUBSET, img, (size_t)SUBSET * PIX, 0);
        snprintf(name, sizeof name, "prefer/%s-images-idx3-ubyte", pre[k]);
        write_images(tmp_path(name), 0, SUBSET, img, 100, 0);   /* truncated: must be ignored */
        snprintf(name, sizeof name, "prefer/%s-labels-idx1-ubyte", pre[k]);   /* raw only: the fallback */
        write_labels(tmp_path(name), 0, SUBSET, lab, SUBSET, 0);
    }
    idx_dataset_t d;
    char err[1024] = "";
    int rc = idx_load_dataset(dir, &d, err, sizeof err);
    EXPECT(rc == 0, ".gz preferred over a broken raw file: %s", err);
    if (rc == 0) {
        EXPECT(d.train.n == SUBSET && d.test.n == SUBSET && !memcmp(d.test.images, img, (size_t)SUBSET * PIX) &&
               !memcmp(d.train.labels, lab, SUBSET), "mixed .gz/raw directory read back differently");
        idx_free(&d);
        EXPECT(d.train.images == NULL && d.test.labels == NULL && d.train.n == 0, "idx_free left fields set");
    }
}

static void test_synthetic(void) {
    idx_dataset_t a, b, c;
    idx_synthetic(&a, 42);
    idx_synthetic(&b, 42);
    idx_synthetic(&c, 43);
    EXPECT(a.train.n == 60000 && a.test.n == 10000, "synthetic: %d train, %d test", a.train.n, a.test.n);
    EXPECT(a.train.rows == 28 && a.train.cols == 28 && a.test.rows == 28 && a.test.cols == 28, "synthetic dims");
    int bad = 0, hist[10] = {0}, hist_ok = 1;
    for (int i = 0; i < a.train.n; i++) { if (a.train.labels[i] < 10) hist[a.train.labels[i]]++; else bad++; }
    for (int i = 0; i < a.test.n; i++) bad += a.test.labels[i] >= 10;
    for (int k = 0; k < 10; k++) hist_ok &= hist[k] > 5500 && hist[k] < 6500;
    EXPECT(bad == 0, "synthetic: %d labels >= 10", bad);
    EXPECT(hist_ok, "synthetic labels not roughly uniform (class 0: %d)", hist[0]);
    size_t tb = (size_t)60000 * PIX, eb = (size_t)10000 * PIX;
    EXPECT(!memcmp(a.train.images, b.train.images, tb) && !memcmp(a.test.images, b.test.images, eb) &&
           !memcmp(a.train.labels, b.train.labels, 60000) && !memcmp(a.test.labels, b.test.labels, 10000),
           "synthetic differs for the same seed");
    EXPECT(memcmp(a.train.images, c.train.images, tb) && memcmp(a.train.labels, c.train.labels, 60000),
           "synthetic identical for different seeds");
    EXPECT(memcmp(a.train.images, a.test.images, eb), "synthetic test split repeats the train split");
    idx_free(&a);
    idx_free(&b);
    idx_free(&c);
    EXPECT(a.train.images == NULL && a.test.images == NULL && a.train.n == 0, "idx_free left fields set");
}

int main(void) {
    idx_dataset_t fashion, mnist;
    printf("real data under %s\n", DATA_ROOT);
    int have_fashion = check_real(DATA_ROOT "/fashion-mnist", 9, &fashion) == 0;
    if (check_real(DATA_ROOT "/mnist", 5, &mnist) == 0) idx_free(&mnist);

    snprintf(tmpdir, sizeof tmpdir, "%s", "/tmp/test_idx.XXXXXX");
    if (!mkdtemp(tmpdir)) { perror("mkdtemp"); return 2; }
    /* Broken copies start from real images where present; synthetic keeps these checks running otherwise
     * (the missing data has already failed above). */
    idx_dataset_t synth;
    const idx_split_t *src = &fashion.train;
    if (!have_fashion) { idx_synthetic(&synth, 1); src = &synth.train; }
    printf("broken copies in %s\n", tmpdir);
    test_broken(src->images, src->labels);
    test_dir_preference(src->images, src->labels);
    idx_free(have_fashion ? &fashion : &synth);
    test_synthetic();

    for (int i = n_made - 1; i >= 0; i--) remove(made[i]);   /* newest first: files before their directory */
    if (rmdir(tmpdir)) perror(tmpdir);
    return test_summary();
}
