/* test_tokens.c — the token-file reader against small files written here (good, and broken in each way the format
 * can be) and against the corpus setup.sh writes; the window sampler's rows against the file, per seed. Host only. */
#define _POSIX_C_SOURCE 200809L   /* mkdtemp */
#include "engine/tokens.h"
#include "test.h"
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#define VOCAB 50257u
#define EOT 50256u

static char tmpdir[256];

static void put32(uint8_t *p, uint32_t v) { for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i)); }
static void put64(uint8_t *p, uint64_t v) { for (int i = 0; i < 8; i++) p[i] = (uint8_t)(v >> (8 * i)); }

/* The fields of a file to write; a test breaks one of them. */
typedef struct {
    const char *magic;
    uint32_t version, vocab, eot, docs;
    uint64_t n_header;      /* the count the header claims */
    const uint16_t *tok;
    size_t n_written;       /* tokens actually written */
    size_t extra;           /* trailing zero bytes */
    size_t cut;             /* bytes to leave out of the end (a header cut short where > payload) */
} spec_t;

static const char *write_file(const char *name, const spec_t *s) {
    static char path[512];
    snprintf(path, sizeof path, "%s/%s", tmpdir, name);
    size_t bytes = TOKENS_HEADER_BYTES + 2 * s->n_written + s->extra;
    uint8_t *buf = calloc(bytes, 1);
    if (!buf) { perror("calloc"); exit(2); }
    memcpy(buf, s->magic, 8);
    put32(buf + 8, s->version);
    put32(buf + 12, s->vocab);
    put64(buf + 16, s->n_header);
    put32(buf + 24, s->eot);
    put32(buf + 28, s->docs);
    for (size_t i = 0; i < s->n_written; i++) {   /* little-endian whatever the host */
        buf[TOKENS_HEADER_BYTES + 2 * i] = (uint8_t)s->tok[i];
        buf[TOKENS_HEADER_BYTES + 2 * i + 1] = (uint8_t)(s->tok[i] >> 8);
    }
    FILE *f = fopen(path, "wb");
    if (!f) { perror(path); exit(2); }
    fwrite(buf, 1, bytes - (s->cut < bytes ? s->cut : bytes), f);
    fclose(f);
    free(buf);
    return path;
}

/* n tokens in 3 documents: each starts with the end-of-text token; the rest cycle through the vocabulary's top. */
#define N 1000
static uint16_t good_tok[N];

static spec_t good_spec(void) {
    for (int i = 0; i < N; i++) good_tok[i] = (uint16_t)(i == 0 || i == 400 || i == 700 ? EOT : (i * 7919u) % EOT);
    spec_t s = {TOKENS_MAGIC, TOKENS_VERSION, VOCAB, EOT, 3, N, good_tok, N, 0, 0};
    return s;
}

static void expect_fail(const char *label, const spec_t *s, const char *want) {
    const char *path = write_file(label, s);
    tokens_t t;
    char err[1024] = "";
    int rc = tokens_load(path, &t, err, sizeof err);
    EXPECT(rc == -1, "%s: load succeeded", label);
    EXPECT(t.tok == NULL && t.n == 0 && t.path == NULL, "%s: not cleared on failure", label);
    EXPECT(err[0] && !strchr(err, '\n'), "%s: message not one line: '%s'", label, err);
    EXPECT(strstr(err, path) != NULL, "%s: message does not name the file: '%s'", label, err);
    EXPECT(strstr(err, want) != NULL, "%s: want '%s' in '%s'", label, want, err);
    printf("  %-20s -> %s\n", label, err);
    tokens_free(&t);
}

static void test_good_file(void) {
    spec_t s = good_spec();
    const char *path = write_file("good.bin", &s);
    tokens_t t;
    char err[1024] = "";
    EXPECT(tokens_load(path, &t, err, sizeof err) == 0, "good file refused: %s", err);
    EXPECT(t.n == N && t.vocab == VOCAB && t.eot == EOT && t.docs == 3, "fields: n %lld vocab %u eot %u docs %u",
           t.n, t.vocab, t.eot, t.docs);
    EXPECT(t.tok && memcmp(t.tok, good_tok, sizeof good_tok) == 0, "tokens differ from those written");
    EXPECT(t.path && strcmp(t.path, path) == 0, "path not kept");
    tokens_free(&t);
}

static void test_bad_files(void) {
    spec_t s;
    uint16_t bad[N];
    s = good_spec(); s.magic = "SCTOKENZ"; expect_fail("bad_magic", &s, "bad magic \"SCTOKENZ\"");
    s = good_spec(); s.magic = "\x1f\x8b\x08\x00\x00\x00\x00\x00"; expect_fail("gzipped", &s, "\\x1F\\x8B");
    s = good_spec(); s.version = 2; expect_fail("version", &s, "version 2");
    s = good_spec(); s.vocab = 0; expect_fail("vocab_0", &s, "vocabulary size 0");
    s = good_spec(); s.vocab = 70000; expect_fail("vocab_big", &s, "does not fit");
    s = good_spec(); s.eot = VOCAB; expect_fail("eot_outside", &s, "end-of-text token 50257 is outside");
    s = good_spec(); s.n_header = 0; s.n_written = 0; expect_fail("empty", &s, "0 tokens");
    s = good_spec(); s.cut = 2 * N + 10; expect_fail("short_header", &s, "expected a 32-byte header, got 22");
    s = good_spec(); s.cut = 1; expect_fail("truncated", &s, "truncated");
    s = good_spec(); s.n_header = 1ull << 40; expect_fail("huge_count", &s, "truncated");
    s = good_spec(); s.extra = 6; expect_fail("trailing", &s, "6 bytes of trailing data");
    memcpy(bad, good_tok, sizeof bad);
    bad[567] = (uint16_t)VOCAB;
    s = good_spec(); s.tok = bad; expect_fail("token_outside", &s, "token 50257 at index 567 is outside");
    memcpy(bad, good_tok, sizeof bad);
    bad[0] = 11;
    s = good_spec(); s.tok = bad; s.docs = 2; expect_fail("no_leading_eot", &s, "starts with token 11");
    s = good_spec(); s.docs = 4; expect_fail("docs_mismatch", &s, "3 end-of-text tokens, the header says 4");

    tokens_t t;
    char err[1024] = "", missing[512];
    snprintf(missing, sizeof missing, "%s/none.bin", tmpdir);
    EXPECT(tokens_load(missing, &t, err, sizeof err) == -1 && strstr(err, missing) && strstr(err, "cannot open"),
           "missing file: '%s'", err);
}

/* Mismatches between a batch and the rows of `order` it should hold (inputs the window's first T tokens, targets the
 * next T): 0 for a right batch. */
static long check_batch(const tokens_t *t, const int *order, long long first, int B, int T, const int *x,
                        const int *y) {
    long bad = 0;
    for (int b = 0; b < B; b++) {
        long long w = order[first + b];
        for (int i = 0; i < T; i++) {
            bad += x[(long long)b * T + i] != t->tok[w * T + i];
            bad += y[(long long)b * T + i] != t->tok[w * T + i + 1];
        }
    }
    return bad;
}

static int is_permutation(const int *p, int n) {
    char *seen = calloc((size_t)n, 1);
    int ok = seen != NULL;
    for (int i = 0; ok && i < n; i++) ok = p[i] >= 0 && p[i] < n && !seen[p[i]]++;
    free(seen);
    return ok;
}

static void test_sampler(void) {
    spec_t s = good_spec();
    const char *path = write_file("sampler.bin", &s);
    tokens_t t;
    char err[1024] = "";
    if (tokens_load(path, &t, err, sizeof err)) { EXPECT(0, "%s", err); return; }
    enum { T = 16, B = 5 };
    tokens_sampler_t a, b;
    EXPECT(tokens_sampler_init(&a, &t, T, err, sizeof err) == 0, "%s", err);
    EXPECT(tokens_sampler_init(&b, &t, T, err, sizeof err) == 0, "%s", err);
    EXPECT(a.n_windows == (N - 1) / T, "%d windows, expected %d", a.n_windows, (N - 1) / T);
    int x[B * T], y[B * T], x2[B * T], y2[B * T];

    /* before a shuffle: the file in order (the held-out split's reading) */
    EXPECT(tokens_sampler_batch(&a, 0, B, x, y) == 0 && check_batch(&t, a.order, 0, B, T, x, y) == 0 &&
           x[0] == (int)EOT && y[0] == good_tok[1], "unshuffled batch is not the file's first windows");

    /* every row of every batch of an epoch is a window inside the file, and the epoch takes each window once */
    tokens_sampler_shuffle(&a, 42, 3);
    EXPECT(is_permutation(a.order, a.n_windows), "the epoch's order is not a permutation of the windows");
    long bad = 0;
    for (long long first = 0; first + B <= a.n_windows; first += B) {
        EXPECT(tokens_sampler_batch(&a, first, B, x, y) == 0, "batch at %lld refused", first);
        bad += check_batch(&t, a.order, first, B, T, x, y);
    }
    EXPECT(bad == 0, "%ld tokens of the epoch's batches differ from their windows", bad);
    long long last_target = (long long)(a.n_windows - 1) * T + T;
    EXPECT(last_target < t.n, "a window's last target %lld is outside the file's %lld tokens", last_target, t.n);

    /* deterministic per (seed, epoch); another epoch or seed is another order */
    tokens_sampler_shuffle(&b, 42, 3);
    EXPECT(memcmp(a.order, b.order, sizeof(int) * (size_t)a.n_windows) == 0, "same seed and epoch, another order");
    tokens_sampler_batch(&a, 7, B, x, y);
    tokens_sampler_batch(&b, 7, B, x2, y2);
    EXPECT(memcmp(x, x2, sizeof x) == 0 && memcmp(y, y2, sizeof y) == 0, "same seed and epoch, another batch");
    tokens_sampler_shuffle(&b, 42, 4);
    EXPECT(memcmp(a.order, b.order, sizeof(int) * (size_t)a.n_windows) != 0, "the next epoch repeats the order");
    tokens_sampler_shuffle(&b, 43, 3);
    EXPECT(memcmp(a.order, b.order, sizeof(int) * (size_t)a.n_windows) != 0, "another seed repeats the order");

    /* rows outside the order are refused */
    EXPECT(tokens_sampler_batch(&a, a.n_windows - B + 1, B, x, y) == -1, "a batch past the last window was served");
    EXPECT(tokens_sampler_batch(&a, -1, B, x, y) == -1, "a batch before the first window was served");

    /* negative controls: check_batch sees one wrong token, and targets not shifted by one */
    tokens_sampler_batch(&a, 0, B, x, y);
    x[3 * T + 5] ^= 1;
    EXPECT(check_batch(&t, a.order, 0, B, T, x, y) == 1, "control: a changed input token is not seen");
    x[3 * T + 5] ^= 1;
    EXPECT(check_batch(&t, a.order, 0, B, T, x, x) > 0, "control: targets equal to the inputs are not seen");

    /* a file with no whole window of T + 1 tokens */
    tokens_sampler_t c;
    EXPECT(tokens_sampler_init(&c, &t, N, err, sizeof err) == -1 && strstr(err, path) && !strchr(err, '\n'),
           "a context as long as the file was accepted: '%s'", err);
    printf("  %-20s -> %s\n", "no_window", err);
    tokens_sampler_free(&a);
    tokens_sampler_free(&b);
    tokens_free(&t);
}

/* The corpus as setup.sh writes it: the counts of scripts/text_tokens.js, and GPT-2's ids of the first address's
 * opening words ("Fellow-Citizens of the Senate": " of" is 286, " the" 262 in OpenAI's vocabulary). */
static void test_corpus(void) {
    static const struct { const char *name; long long n; uint32_t docs; } split[2] = {
        {"train.bin", 1872374, 210}, {"val.bin", 201927, 23},
    };
    static const uint16_t opening[] = {50256, 37, 5037, 12, 34, 34100, 286, 262, 3845};
    for (int k = 0; k < 2; k++) {
        char path[1024], err[1024] = "";
        snprintf(path, sizeof path, "%s/sotu/%s", DATA_ROOT, split[k].name);
        tokens_t t;
        if (tokens_load(path, &t, err, sizeof err)) { EXPECT(0, "%s (scripts/setup.sh writes it)", err); continue; }
        EXPECT(t.n == split[k].n && t.docs == split[k].docs && t.vocab == VOCAB && t.eot == EOT,
               "%s: %lld tokens, %u documents, vocabulary %u", path, t.n, t.docs, t.vocab);
        if (k == 0)
            EXPECT(t.n > 9 && memcmp(t.tok, opening, sizeof opening) == 0, "%s: not GPT-2's tokens of 1790's opening",
                   path);
        printf("  %s: %lld tokens, %u documents\n", path, t.n, t.docs);
        tokens_free(&t);
    }
}

/* A language model's data set: the corpus's two splits as windows of the model's context (GPT-2 small's 1024, tiny's
 * 64); a folder without them, a split of another vocabulary and a context past the file refused in one line naming
 * the file; the synthetic corpus's tokens below its vocabulary, the same for the same seed. */
static void test_corpus_set(void) {
    char dir[1024], err[1024] = "";
    snprintf(dir, sizeof dir, "%s/sotu", DATA_ROOT);
    tokens_corpus_t c;
    static const struct { int T, train, val; } want[] = {{1024, 1828, 197}, {64, 29255, 3155}};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        if (tokens_corpus_load(&c, dir, want[i].T, err, sizeof err)) { EXPECT(0, "%s", err); return; }
        int tr = tokens_corpus_windows(&c.train, c.T), va = tokens_corpus_windows(&c.val, c.T);
        EXPECT(c.T == want[i].T && !c.synthetic && tr == want[i].train && va == want[i].val,
               "T %d: %d training windows (want %d), %d held-out (want %d)", c.T, tr, want[i].train, va, want[i].val);
        tokens_corpus_free(&c);
    }
    EXPECT(tokens_corpus_load(&c, tmpdir, 1024, err, sizeof err) == -1 && strstr(err, "train.bin: cannot open") &&
           !strchr(err, '\n') && c.train.tok == NULL, "a folder without the corpus: '%s'", err);
    /* train.bin good, val.bin of another vocabulary */
    spec_t s = good_spec();
    write_file("train.bin", &s);
    s.vocab = VOCAB + 1;
    write_file("val.bin", &s);
    EXPECT(tokens_corpus_load(&c, tmpdir, 4, err, sizeof err) == -1 && strstr(err, "vocabulary of 50257 and val.bin's "
           "of 50258 differ"), "vocabularies that differ: '%s'", err);
    EXPECT(tokens_corpus_load(&c, tmpdir, N, err, sizeof err) == -1 && strstr(err, "fewer than one window"),
           "a context past the file: '%s'", err);
    tokens_corpus_t a, b;
    tokens_corpus_synthetic(&a, 64, 512, 1);
    tokens_corpus_synthetic(&b, 64, 512, 1);
    int below = 1;
    for (long long i = 0; i < a.train.n; i++) below &= a.train.tok[i] < 512;
    EXPECT(a.synthetic && a.train.n == TOKENS_SYNTH_TRAIN && a.val.n == TOKENS_SYNTH_VAL && below &&
           memcmp(a.train.tok, b.train.tok, (size_t)a.train.n * 2) == 0, "the synthetic corpus");
    tokens_corpus_free(&a);
    tokens_corpus_free(&b);
}

int main(void) {
    snprintf(tmpdir, sizeof tmpdir, "/tmp/test_tokens.XXXXXX");
    if (!mkdtemp(tmpdir)) { perror("mkdtemp"); return 2; }
    test_good_file();
    test_bad_files();
    test_sampler();
    test_corpus();
    test_corpus_set();
    test_scratch_remove(tmpdir);
    return test_summary();
}
