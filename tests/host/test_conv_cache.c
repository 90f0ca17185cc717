/* test_conv_cache.c — the --conv-cache file: choices saved by one run come back in the next for the same GPU id
 * only; a direction searched later is appended and merged, the first line for a shape and direction wins, the file
 * only grows (existing bytes kept), a malformed line or an unwritable place is refused with its path (and line)
 * before any run, a torn line (or one whose checksum differs) is skipped and closed by the next save, and a save that
 * cannot write is a warning. Backend engine configs travel with their direction's algorithm; lines of older versions
 * (without them) still load. */
#include "test.h"
#include "engine/conv_cache.h"
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

static conv_algo_t entry(int shape, int fwd, int bwd_data, int bwd_filter) {
    conv_algo_t e;
    memset(&e, 0, sizeof e);
    for (int k = 0; k < 12; k++) e.key[k] = shape * 100 + k;
    e.fwd = fwd; e.bwd_data = bwd_data; e.bwd_filter = bwd_filter;
    e.fwd_math = fwd >= 0 ? 2 : 0; e.bwd_data_math = bwd_data >= 0 ? 1 : 0; e.bwd_filter_math = bwd_filter >= 0 ? 2 : 0;
    e.ws_fwd = fwd >= 0 ? (size_t)5000000000ull + (size_t)shape : 0;   /* past 32 bits */
    e.ws_bwd_data = bwd_data >= 0 ? 4096 : 0;
    e.ws_bwd_filter = bwd_filter >= 0 ? 0 : 0;
    for (int d = 0; d < 3; d++) e.be[d].engine = -1;
    return e;
}

/* e with a backend config on direction d: n knobs whose values run past 32 bits and below zero. */
static conv_algo_t with_be(conv_algo_t e, int d, int engine, size_t ws, int n) {
    conv_be_cfg_t *b = &e.be[d];
    b->engine = engine;
    b->ws = ws;
    b->n_knobs = n;
    for (int j = 0; j < n; j++) {
        b->knob_type[j] = 2 * j + (engine % 7);
        b->knob_value[j] = j % 3 == 0 ? 7 + j : j % 3 == 1 ? -(1LL << 40) - j : 9000000000000000000LL + j;
    }
    return e;
}

static int same_be(const conv_be_cfg_t *a, const conv_be_cfg_t *b) {
    if (a->engine != b->engine) return 0;
    if (a->engine < 0) return 1;
    if (a->ws != b->ws || a->n_knobs != b->n_knobs) return 0;
    for (int j = 0; j < a->n_knobs; j++)
        if (a->knob_type[j] != b->knob_type[j] || a->knob_value[j] != b->knob_value[j]) return 0;
    return 1;
}

static int same(const conv_algo_t *a, const conv_algo_t *b) {
    return memcmp(a->key, b->key, sizeof a->key) == 0 && a->fwd == b->fwd && a->bwd_data == b->bwd_data &&
           a->bwd_filter == b->bwd_filter && a->fwd_math == b->fwd_math && a->bwd_data_math == b->bwd_data_math &&
           a->bwd_filter_math == b->bwd_filter_math && a->ws_fwd == b->ws_fwd && a->ws_bwd_data == b->ws_bwd_data &&
           a->ws_bwd_filter == b->ws_bwd_filter && same_be(&a->be[0], &b->be[0]) && same_be(&a->be[1], &b->be[1]) &&
           same_be(&a->be[2], &b->be[2]);
}

/* Writes text as path's only line after a comment, with its checksum where crc (as a save would). */
static void write_line(const char *path, const char *text, int crc) {
    FILE *f = fopen(path, "w");
    fprintf(f, "# comment\n%s", text);
    if (crc) fprintf(f, "\tcrc32=%08lx", crc32(0L, (const Bytef *)text, (uInt)strlen(text)));
    fputs("\n", f);
    fclose(f);
}

/* Loads path's lines for id into a fresh list (*got, freed first). */
static int load(const char *path, const char *id, conv_algo_t **got, int *n, char *err, size_t errlen) {
    free(*got);
    *got = NULL;
    *n = 0;
    int cap = 0;
    return conv_cache_load(path, id, got, n, &cap, err, errlen);
}

static int count_lines(const char *path) {
    size_t len;
    char *s = test_slurp(path, &len);
    int n = 0;
    for (size_t i = 0; i < len; i++) n += s[i] == '\n';
    free(s);
    return n;
}

int main(void) {
    char dir[] = "/tmp/test_conv_cache_XXXXXX";
    if (!mkdtemp(dir)) { perror("mkdtemp"); return 1; }
    char path[256], err[512];
    snprintf(path, sizeof path, "%s/algos.tsv", dir);
    const char *h200 = "NVIDIA H200|cudnn 91400", *h100 = "NVIDIA H100 80GB HBM3|cudnn 91400";

    /* No file yet: an empty cache, a valid place, and nothing written by either. */
    conv_algo_t *got = NULL;
    int n = 0;
    EXPECT(load(path, h200, &got, &n, err, sizeof err) == 0 && n == 0, "missing file: n %d, %s", n, err);
    EXPECT(conv_cache_check(path, err, sizeof err) == 0, "new file in a writable folder refused: %s", err);
    EXPECT(access(path, F_OK) != 0, "load or check created the file");

    /* A run searched two shapes (shape 2 without backward data: the network's first layer); a backend engine beat
     * cudnnFind's choice in shape 1's forward and backward filter. */
    conv_algo_t run1[2] = {with_be(with_be(entry(1, 1, 0, 1), 0, 62, 4129040, 2), 2, 9, 0, 0), entry(2, 0, -1, 3)};
    EXPECT(conv_cache_save(path, h200, run1, 2, err, sizeof err) == 0, "save: %s", err);
    int lines1 = count_lines(path);
    EXPECT(lines1 == 3, "comment + 2 lines, got %d", lines1);
    EXPECT(load(path, h200, &got, &n, err, sizeof err) == 0 && n == 2, "load: n %d, %s", n, err);
    EXPECT(n == 2 && same(&got[0], &run1[0]) && same(&got[1], &run1[1]), "loaded entries differ from the saved");
    EXPECT(load(path, h100, &got, &n, err, sizeof err) == 0 && n == 0, "another GPU's id used: n %d", n);

    /* Saving what the file already has appends nothing. */
    EXPECT(conv_cache_save(path, h200, run1, 2, err, sizeof err) == 0 && count_lines(path) == lines1,
           "a save of known choices grew the file to %d lines", count_lines(path));

    /* A later run that loaded them searched shape 2's backward data (and timed shape 1 otherwise: ignored, the
     * file's first choice stands) and a new shape 3. */
    conv_algo_t run2[3] = {with_be(entry(1, 6, 5, 4), 0, 7, 1, 1), with_be(entry(2, 0, 1, 3), 1, 41, 1ull << 33, 3),
                           entry(3, 2, 2, 2)};
    EXPECT(conv_cache_save(path, h200, run2, 3, err, sizeof err) == 0, "save 2: %s", err);
    EXPECT(count_lines(path) == lines1 + 2, "want 2 lines appended (shape 2's new direction, shape 3), file has %d",
           count_lines(path));
    EXPECT(load(path, h200, &got, &n, err, sizeof err) == 0 && n == 3, "load 2: n %d, %s", n, err);
    conv_algo_t want2 = with_be(entry(2, 0, 1, 3), 1, 41, 1ull << 33, 3);
    EXPECT(n == 3 && same(&got[0], &run1[0]), "shape 1: the first line must win (its backend configs too)");
    EXPECT(n == 3 && same(&got[1], &want2), "shape 2: directions of two lines merged, the later one's backend config "
           "with it: engine %d", n == 3 ? got[1].be[1].engine : -2);
    EXPECT(n == 3 && same(&got[2], &run2[2]), "shape 3");

    /* Entries already in the caller's cache keep their choices; only missing directions are filled. */
    conv_algo_t *mine = malloc(sizeof *mine);
    int n_mine = 1, cap_mine = 1;
    mine[0] = with_be(entry(2, 9, -1, -1), 0, 3, 5, 1);
    EXPECT(conv_cache_load(path, h200, &mine, &n_mine, &cap_mine, err, sizeof err) == 0 && n_mine == 3,
           "merge into a cache: n %d", n_mine);
    EXPECT(mine[0].fwd == 9 && mine[0].bwd_data == 1 && mine[0].bwd_filter == 3,
           "merge: fwd %d bwd_data %d bwd_filter %d", mine[0].fwd, mine[0].bwd_data, mine[0].bwd_filter);
    EXPECT(mine[0].be[0].engine == 3 && same_be(&mine[0].be[1], &want2.be[1]) && mine[0].be[2].engine == -1,
           "merge: backend engines %d %d %d", mine[0].be[0].engine, mine[0].be[1].engine, mine[0].be[2].engine);
    free(mine);

    /* A file of many shapes (a study's: ResNet-18 at three batches and both maths, LeNet, ...) comes back whole, and
     * a run's own shapes after them are saved: a fixed-size cache once dropped what did not fit, and those shapes
     * were searched again in every run. */
    char many_path[300];
    snprintf(many_path, sizeof many_path, "%s/many.tsv", dir);
    conv_algo_t many[150];
    for (int i = 0; i < 150; i++) many[i] = entry(10 + i, i % 7, i % 5, i % 3);
    EXPECT(conv_cache_save(many_path, h200, many, 100, err, sizeof err) == 0, "save 100: %s", err);
    EXPECT(load(many_path, h200, &got, &n, err, sizeof err) == 0 && n == 100, "100 shapes: %d loaded", n);
    EXPECT(conv_cache_save(many_path, h200, many, 150, err, sizeof err) == 0 && count_lines(many_path) == 151,
           "50 more appended: %d lines", count_lines(many_path));
    EXPECT(load(many_path, h200, &got, &n, err, sizeof err) == 0 && n == 150 && same(&got[149], &many[149]),
           "150 shapes: %d loaded", n);

    /* Another GPU's lines go beside, and the file only grows: every earlier byte is still there. */
    size_t len_before, len_after;
    char *before = test_slurp(path, &len_before);
    EXPECT(conv_cache_save(path, h100, run1, 2, err, sizeof err) == 0, "save h100: %s", err);
    char *after = test_slurp(path, &len_after);
    EXPECT(before && after && len_after > len_before && memcmp(before, after, len_before) == 0,
           "a save rewrote earlier bytes");
    free(before);
    free(after);

    /* A line torn by a full disk (a save writes its lines in one write(2), so only a short write tears one): the
     * loader and the check skip it (a warning), and the next save closes it, marked torn, under the lock, before
     * appending its own lines, which then load. */
    FILE *f = fopen(path, "a");
    fputs("NVIDIA H200|cudnn 91400\t1 2 3", f);
    fclose(f);
    size_t len_torn;
    char *torn_text = test_slurp(path, &len_torn);
    EXPECT(load(path, h200, &got, &n, err, sizeof err) == 0 && n == 3, "a torn last line is skipped: n %d, %s", n, err);
    EXPECT(conv_cache_check(path, err, sizeof err) == 0, "check with a torn last line: \"%s\"", err);
    conv_algo_t run3 = entry(4, 1, 1, 1);
    EXPECT(conv_cache_save(path, h200, &run3, 1, err, sizeof err) == 0, "save after a torn line: %s", err);
    size_t len_now;
    char *now = test_slurp(path, &len_now);
    EXPECT(now && len_now > len_torn && memcmp(now, torn_text, len_torn) == 0 &&
           strncmp(now + len_torn, "\t#torn\n", 7) == 0, "the torn line is closed and marked, nothing else changed");
    free(torn_text);
    free(now);
    EXPECT(load(path, h200, &got, &n, err, sizeof err) == 0 && n == 4 && same(&got[3], &run3),
           "the line saved after the torn one loads: n %d, %s", n, err);

    /* A line whose checksum differs (torn and glued, or edited) is skipped; a whole line of an older version, without
     * a checksum, is read. */
    char sum_path[300];
    snprintf(sum_path, sizeof sum_path, "%s/sum.tsv", dir);
    conv_algo_t one = with_be(entry(5, 2, 2, 2), 2, 12, 3, 1);
    EXPECT(conv_cache_save(sum_path, h200, &one, 1, err, sizeof err) == 0, "save: %s", err);
    size_t len_sum;
    char *sum = test_slurp(sum_path, &len_sum);
    char *tag = sum ? strstr(sum, "\tcrc32=") : NULL;
    EXPECT(tag != NULL, "a saved line carries its checksum");
    if (tag) {
        char *digit = tag - 1;          /* the last knob value's last digit: what a torn write loses */
        *digit = *digit == '1' ? '2' : '1';
        f = fopen(sum_path, "w");
        fwrite(sum, 1, len_sum, f);
        fprintf(f, "%s\t1 2 3 4 5 6 7 8 9 10 11 12\t0 0 64 -1 0 0 -1 0 0\n", h200);     /* an older version's line */
        fclose(f);
        EXPECT(load(sum_path, h200, &got, &n, err, sizeof err) == 0 && n == 1 && got[0].key[0] == 1 &&
               got[0].ws_fwd == 64 && got[0].be[0].engine == -1 && got[0].be[1].engine == -1 &&
               got[0].be[2].engine == -1, "the altered line skipped, the old one read: n %d, %s", n, err);
    }
    free(sum);

    /* A line of the version before backend configs, with its checksum: read, no direction has a backend config. */
    char old[200];
    snprintf(old, sizeof old, "%s\t1 2 3 4 5 6 7 8 9 10 11 12\t0 1 64 -1 0 0 2 1 128", h200);
    write_line(sum_path, old, 1);
    EXPECT(load(sum_path, h200, &got, &n, err, sizeof err) == 0 && n == 1 && got[0].fwd == 0 &&
           got[0].bwd_filter == 2 && got[0].ws_bwd_filter == 128 && got[0].be[0].engine == -1 &&
           got[0].be[1].engine == -1 && got[0].be[2].engine == -1, "an older checksummed line: n %d, %s", n, err);

    /* The longest line a save writes (the longest id, 16 knobs in every direction, every number at its widest)
     * reads back; so does a shape with backend configs beside one without. */
    char edge_path[300], long_id[CONV_CACHE_ID_MAX];
    snprintf(edge_path, sizeof edge_path, "%s/edge.tsv", dir);
    memset(long_id, 'G', sizeof long_id - 1);
    long_id[sizeof long_id - 1] = '\0';
    conv_algo_t edge[2] = {entry(6, 1, 1, 1), entry(7, 3, 4, 5)};
    for (int d = 0; d < 3; d++) {
        edge[0] = with_be(edge[0], d, 2147483647, (size_t)9223372036854775807LL, CONV_BE_KNOBS);
        for (int j = 0; j < CONV_BE_KNOBS; j++) {
            edge[0].be[d].knob_type[j] = j ? 2147483647 : 0;
            edge[0].be[d].knob_value[j] = j % 2 ? -9223372036854775807LL - 1 : 9223372036854775807LL;
        }
    }
    for (int k = 0; k < 12; k++) edge[0].key[k] = -2147483647 - 1;
    EXPECT(conv_cache_save(edge_path, long_id, edge, 2, err, sizeof err) == 0 && count_lines(edge_path) == 3,
           "the longest line saved: %d lines", count_lines(edge_path));
    EXPECT(load(edge_path, long_id, &got, &n, err, sizeof err) == 0 && n == 2 && same(&got[0], &edge[0]) &&
           same(&got[1], &edge[1]), "the longest line read back: n %d, %s", n, err);

    /* What a line cannot hold is not written (a warning; the rest of the save goes on): a backend config the reader
     * would refuse (one bad line would stop every later run), an id too long for a line. A backend config on a
     * direction not searched means nothing: saved as "-". */
    conv_algo_t odd[3] = {with_be(entry(8, 1, 1, 1), 1, 4, 0, 1), with_be(entry(9, 1, -1, 1), 1, 4, 0, 1),
                          entry(10, 1, 1, 1)};
    odd[0].be[1].n_knobs = CONV_BE_KNOBS + 1;
    EXPECT(conv_cache_save(edge_path, h200, odd, 3, err, sizeof err) == 0 && count_lines(edge_path) == 5,
           "shapes 9 and 10 saved, 8 not: %d lines", count_lines(edge_path));
    conv_algo_t want9 = entry(9, 1, -1, 1);
    EXPECT(load(edge_path, h200, &got, &n, err, sizeof err) == 0 && n == 2 && same(&got[0], &want9) &&
           same(&got[1], &odd[2]), "an unsearched direction's backend config not kept: n %d, %s", n, err);
    char huge_id[5000];
    memset(huge_id, 'H', sizeof huge_id - 1);
    huge_id[sizeof huge_id - 1] = '\0';
    EXPECT(conv_cache_save(edge_path, huge_id, odd + 2, 1, err, sizeof err) == 0 && count_lines(edge_path) == 5,
           "a line past the reader's limit written: %d lines", count_lines(edge_path));
    EXPECT(conv_cache_check(edge_path, err, sizeof err) == 0, "the file still parses: %s", err);

    /* A save that cannot write (a full disk) is a warning, not a failure: the sweep goes on. */
    if (access("/dev/full", W_OK) == 0) {
        EXPECT(conv_cache_save("/dev/full", h200, &one, 1, err, sizeof err) == 0, "a device is a warning");
    }
    char ro_path[300];
    snprintf(ro_path, sizeof ro_path, "%s/nodir/algos.tsv", dir);
    EXPECT(conv_cache_save(ro_path, h200, &one, 1, err, sizeof err) == 0, "an unwritable place is a warning");

    /* A FIFO named as the cache is refused without blocking. */
    char fifo[300];
    snprintf(fifo, sizeof fifo, "%s/fifo", dir);
    if (mkfifo(fifo, 0600) == 0) {
        EXPECT(load(fifo, h200, &got, &n, err, sizeof err) == -1 && strstr(err, "not a regular file"), "FIFO: %s", err);
        EXPECT(conv_cache_check(fifo, err, sizeof err) == -1 && strstr(err, "not a regular file"), "FIFO: %s", err);
        unlink(fifo);
    }

    /* Malformed files and unusable places, each with its own message; lines with and without a checksum. */
#define L "id\t1 2 3 4 5 6 7 8 9 10 11 12\t"
    static const struct { const char *text, *why; } bad[] = {
        {"no tab at all", "no GPU id"},
        {"id\t4294967297 2 3 4 5 6 7 8 9 10 11 12\t1 0 5 -1 0 0 1 0 0", "field 2: 4294967297 is out of range"},
        {L "1 2147483648 5 -1 0 0 1 0 0", "field 15: 2147483648 is out of range"},
        {L "1 0 5 -1 0 0 -4294967296 0 0", "field 20: -4294967296 is out of range"},
        {L "1 2 3 4 5 6 7 8 x", "not an integer"},
        {L "1 2 3 4 5 6 7 8 9x - - -", "field 22 is not an integer"},
        {L "1 2 3 4 5 6 7 8 9 10", "backend tokens after the choices: 1, want 3"},
        {L "-2 0 0 -1 0 0 -1 0 0", "direction 0"},
        {L "1 0 -5 -1 0 0 -1 0 0", "direction 0"},
        {L "1 0 5 1 0 0 1 0 0\tx62,5 - -", "backend token 0 \"x62,5\": not - or e<engine>,<ws>"},
        {L "1 0 5 1 0 0 1 0 0\t- e62 -", "backend token 1 \"e62\": not - or e<engine>,<ws>"},
        {L "1 0 5 1 0 0 1 0 0\t- e62, -", "backend token 1"},
        {L "1 0 5 1 0 0 1 0 0\t- - e-1,0", "backend token 2"},
        {L "1 0 5 1 0 0 1 0 0\t- - e1,-4", "backend token 2"},
        {L "1 0 5 1 0 0 1 0 0\t- - e1, 4", "backend tokens after the choices: more than 3"},
        {L "1 0 5 1 0 0 1 0 0\t- - e99999999999,4", "backend token 2"},
        {L "1 0 5 1 0 0 1 0 0\te1,4,2=7,3 - -", "knob 2 is not ,<type>=<value>"},
        {L "1 0 5 1 0 0 1 0 0\te1,4,-2=7 - -", "knob 1 is not"},
        {L "1 0 5 1 0 0 1 0 0\te1,4,2=+7 - -", "knob 1 is not"},
        {L "1 0 5 1 0 0 1 0 0\te1,4,2=99999999999999999999 - -", "knob 1 is not"},
        {L "1 0 5 1 0 0 1 0 0\te1,4,2=7, - -", "knob 2 is not"},
        {L "1 0 5 1 0 0 1 0 0\t- -", "backend tokens after the choices: 2, want 3"},
        {L "1 0 5 1 0 0 1 0 0\t- - - -", "backend tokens after the choices: more than 3"},
        {L "1 0 5 -1 0 0 1 0 0\t- e62,0 -", "backend token 1 \"e62,0\" for a direction not searched"},
        {L "1 0 5 1 0 0 1 0 0\t- - e1,4,1=1,2=2,3=3,4=4,5=5,6=6,7=7,8=8,9=9,10=10,11=11,12=12,13=13,14=14,15=15,16=16,"
           "17=17", "more than 16 knobs"},
    };
#undef L
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        write_line(path, bad[i].text, (int)(i % 2));
        EXPECT(conv_cache_check(path, err, sizeof err) == -1 && strstr(err, ":2: ") && strstr(err, bad[i].why),
               "bad line %zu: \"%s\"", i, err);
    }
    /* The same tokens well formed (16 knobs, a direction without one, "\r\n" as an editor may leave) are read. */
    write_line(path, "id\t1 2 3 4 5 6 7 8 9 10 11 12\t1 0 5 -1 0 0 1 0 0\te1,4,1=1,2=2,3=3,4=4,5=5,6=6,7=7,8=8,9=9,"
               "10=10,11=11,12=12,13=13,14=14,15=15,16=-16 - e0,0\r", 0);
    EXPECT(load(path, "id", &got, &n, err, sizeof err) == 0 && n == 1 && got[0].be[0].engine == 1 &&
           got[0].be[0].n_knobs == 16 && got[0].be[0].knob_value[15] == -16 && got[0].be[1].engine == -1 &&
           got[0].be[2].engine == 0 && got[0].be[2].n_knobs == 0, "well-formed tokens: n %d, %s", n, err);
    char nodir[300];
    snprintf(nodir, sizeof nodir, "%s/missing/algos.tsv", dir);
    EXPECT(conv_cache_check(nodir, err, sizeof err) == -1 && strstr(err, "missing"), "missing folder: \"%s\"", err);
    EXPECT(conv_cache_check("", err, sizeof err) == -1 && strstr(err, "empty"), "empty path: \"%s\"", err);
    if (geteuid() != 0) {   /* root reads and writes whatever the mode says */
        f = fopen(path, "w");
        fclose(f);
        chmod(path, 0444);
        EXPECT(conv_cache_check(path, err, sizeof err) == -1, "a read-only file was accepted");
    }
    free(got);
    test_scratch_remove(dir);
    return test_summary();
}
