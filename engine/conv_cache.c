/* conv_cache.c — the --conv-cache file: cudnnFind's choices per shape and GPU model, read before a model's layers
 * are set up and appended to after, so that runs sharing the file run the same convolution kernels. */
#define _POSIX_C_SOURCE 200809L
#include "conv_cache.h"
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <libgen.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#define N_CHOICE 9
#define LINE_MAX_ 4096
/* The longest line a save writes (an id of CONV_CACHE_ID_MAX - 1 bytes, every number at its widest, CONV_BE_KNOBS
 * knobs in each backend token, the checksum, the newline) fits the reader's buffer: 1024 bytes held only 8 such knobs
 * over the three directions. A line past it (a longer id) is not saved, with a warning. */
#define LINE_WORST (CONV_CACHE_ID_MAX + 12 * 12 + N_CHOICE * 21 + 3 * (33 + CONV_BE_KNOBS * 32) + 15 + 1)
_Static_assert(LINE_WORST < LINE_MAX_, "a saved line must fit the reader's buffer");
/* A line ends in its CRC-32 (zlib's, of the bytes before the tag): a line torn by a full disk or a killed writer and
 * later glued to another fails it. Lines of older versions have none and are read when whole. */
#define CRC_TAG "\tcrc32="
/* What a save appends to a last line left without its newline (under the lock): the line stays, marked torn. */
#define TORN_TAG "\t#torn"

/* open(2) of a regular file only, without blocking on a FIFO or a device named in its place; the descriptor is
 * left blocking. -1 with errno (EINVAL: not a regular file). */
static int open_regular(const char *path, int flags, mode_t mode) {
    int fd = open(path, flags | O_NONBLOCK | O_NOCTTY | O_CLOEXEC, mode);
    if (fd < 0) return -1;
    struct stat st;
    int fl = fcntl(fd, F_GETFL);
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) != 0) {
        int e = fstat(fd, &st) == 0 && !S_ISREG(st.st_mode) ? EINVAL : errno;
        close(fd);
        errno = e;
        return -1;
    }
    return fd;
}

static void warn(const char *path, int lineno, const char *what) {
    fprintf(stderr, "scaling: warning: --conv-cache %s:%d: %s\n", path, lineno, what);
}

/* Verifies and removes a line's checksum: 1 it matches, 0 the line has none (an older version's), -1 it differs. */
static int line_checksum(char *line) {
    char *tag = NULL;
    for (char *p = strstr(line, CRC_TAG); p; p = strstr(p + 1, CRC_TAG)) tag = p;
    if (!tag) return 0;
    char *end;
    errno = 0;
    unsigned long want = strtoul(tag + strlen(CRC_TAG), &end, 16);
    if (end == tag + strlen(CRC_TAG) || *end || errno) return -1;
    unsigned long got = crc32(0L, (const Bytef *)line, (uInt)(tag - line));
    *tag = '\0';
    return got == want ? 1 : -1;
}

/* conv_algo_t's choices in file order: per direction the algorithm, its math type and its workspace. */
static void choices_get(const conv_algo_t *e, long long v[N_CHOICE]) {
    long long w[N_CHOICE] = {e->fwd, e->fwd_math, (long long)e->ws_fwd, e->bwd_data, e->bwd_data_math,
                             (long long)e->ws_bwd_data, e->bwd_filter, e->bwd_filter_math, (long long)e->ws_bwd_filter};
    memcpy(v, w, sizeof w);
}

static int has_direction(const conv_algo_t *e, int d) {
    return (d == 0 ? e->fwd : d == 1 ? e->bwd_data : e->bwd_filter) >= 0;
}

/* Direction d (0 fwd, 1 bwd_data, 2 bwd_filter) of `from` into `to` where `to` lacks it: the backend config goes
 * with the algorithm it was timed against, never onto another line's. */
static void take_direction(conv_algo_t *to, const conv_algo_t *from, int d) {
    if (has_direction(to, d) || !has_direction(from, d)) return;
    if (d == 0) {
        to->fwd = from->fwd; to->fwd_math = from->fwd_math; to->ws_fwd = from->ws_fwd;
    } else if (d == 1) {
        to->bwd_data = from->bwd_data; to->bwd_data_math = from->bwd_data_math; to->ws_bwd_data = from->ws_bwd_data;
    } else {
        to->bwd_filter = from->bwd_filter; to->bwd_filter_math = from->bwd_filter_math;
        to->ws_bwd_filter = from->ws_bwd_filter;
    }
    to->be[d] = from->be[d];
}

/* A decimal integer at *s, '-' only where neg: strtoll alone would also take leading spaces and a '+'. */
static int parse_int(char **s, int neg, long long *v) {
    char *p = *s, *end;
    if (!isdigit((unsigned char)p[0]) && !(neg && p[0] == '-' && isdigit((unsigned char)p[1]))) return -1;
    errno = 0;
    *v = strtoll(p, &end, 10);
    if (errno) return -1;
    *s = end;
    return 0;
}

/* One backend token, "-" or "e<engine>,<ws>" then ",<type>=<value>" per knob, into *b. 0, or -1 with what is wrong
 * in err. */
static int parse_be(char *tok, conv_be_cfg_t *b, char *err, size_t errlen) {
    memset(b, 0, sizeof *b);
    b->engine = -1;
    if (strcmp(tok, "-") == 0) return 0;
    char *p = tok + 1;
    long long engine, ws, type, value;
    if (tok[0] != 'e' || parse_int(&p, 0, &engine) || engine > INT_MAX || *p++ != ',' || parse_int(&p, 0, &ws)) {
        snprintf(err, errlen, "not - or e<engine>,<ws>");
        return -1;
    }
    b->engine = (int)engine;
    b->ws = (size_t)ws;
    while (*p) {
        if (b->n_knobs == CONV_BE_KNOBS) { snprintf(err, errlen, "more than %d knobs", CONV_BE_KNOBS); return -1; }
        if (*p++ != ',' || parse_int(&p, 0, &type) || type > INT_MAX || *p++ != '=' || parse_int(&p, 1, &value)) {
            snprintf(err, errlen, "knob %d is not ,<type>=<value>", b->n_knobs + 1);
            return -1;
        }
        b->knob_type[b->n_knobs] = (int)type;
        b->knob_value[b->n_knobs++] = value;
    }
    return 0;
}

/* The three backend tokens after the choices (none: a line of an older version, no backend config) into e->be. 0,
 * or -1 with what is wrong in err. */
static int parse_be_tokens(char *p, conv_algo_t *e, char *err, size_t errlen) {
    char *tok[4], *save = NULL, what[80];
    int n = 0;
    for (int d = 0; d < 3; d++) e->be[d].engine = -1;
    for (char *t = strtok_r(p, " \t\r\n", &save); t && n < 4; t = strtok_r(NULL, " \t\r\n", &save)) tok[n++] = t;
    if (n == 0) return 0;
    if (n != 3) {
        snprintf(err, errlen, "backend tokens after the choices: %s%d, want 3", n > 3 ? "more than " : "",
                 n > 3 ? 3 : n);
        return -1;
    }
    for (int d = 0; d < 3; d++) {
        if (parse_be(tok[d], &e->be[d], what, sizeof what) != 0) {
            snprintf(err, errlen, "backend token %d \"%.24s\": %s", d, tok[d], what);
            return -1;
        }
        if (e->be[d].engine >= 0 && !has_direction(e, d)) {
            snprintf(err, errlen, "backend token %d \"%.24s\" for a direction not searched", d, tok[d]);
            return -1;
        }
    }
    return 0;
}

/* One line into *id (pointing into line) and *e. 0, or -1 with what is wrong in err. */
static int parse_line(char *line, const char **id, conv_algo_t *e, char *err, size_t errlen) {
    char *tab = strchr(line, '\t');
    if (!tab || tab == line) { snprintf(err, errlen, "no GPU id before a tab"); return -1; }
    *tab = '\0';
    *id = line;
    char *p = tab + 1, *end;
    long long v[12 + N_CHOICE];
    for (int i = 0; i < 12 + N_CHOICE; i++) {
        errno = 0;
        v[i] = strtoll(p, &end, 10);
        if (end == p || errno) { snprintf(err, errlen, "field %d is not an integer", i + 2); return -1; }
        p = end;
    }
    if (*p && !isspace((unsigned char)*p)) {    /* "...9x": the last choice is not an integer */
        snprintf(err, errlen, "field %d is not an integer", 13 + N_CHOICE);
        return -1;
    }
    /* Every field narrowed to an int must fit one: a hand-edited 4294967297 would otherwise become shape 1. The
     * workspaces (the third of each direction) are sizes, checked below. */
    for (int i = 0; i < 12 + N_CHOICE; i++)
        if ((i < 12 || (i - 12) % 3 != 2) && (v[i] < INT_MIN || v[i] > INT_MAX)) {
            snprintf(err, errlen, "field %d: %lld is out of range", i + 2, v[i]);
            return -1;
        }
    memset(e, 0, sizeof *e);
    for (int i = 0; i < 12; i++) e->key[i] = (int)v[i];
    const long long *c = v + 12;
    for (int d = 0; d < 3; d++)
        if (c[3 * d] < -1 || (c[3 * d] >= 0 && c[3 * d + 2] < 0)) {
            snprintf(err, errlen, "direction %d: algorithm %lld, workspace %lld", d, c[3 * d], c[3 * d + 2]);
            return -1;
        }
    e->fwd = (int)c[0]; e->fwd_math = (int)c[1]; e->ws_fwd = (size_t)(c[0] >= 0 ? c[2] : 0);
    e->bwd_data = (int)c[3]; e->bwd_data_math = (int)c[4]; e->ws_bwd_data = (size_t)(c[3] >= 0 ? c[5] : 0);
    e->bwd_filter = (int)c[6]; e->bwd_filter_math = (int)c[7]; e->ws_bwd_filter = (size_t)(c[6] >= 0 ? c[8] : 0);
    return parse_be_tokens(p, e, err, errlen);
}

/* Reads f from its start, merging the lines for id into the growable list (*e, *n, *cap): every line is parsed,
 * id NULL merges none. A torn line (no newline at the end of the file, marked torn, or a checksum that differs) is
 * skipped, with a warning unless quiet. */
static int read_lines(FILE *f, const char *path, const char *id, conv_algo_t **e, int *n, int *cap, int quiet,
                      char *err, size_t errlen) {
    char line[LINE_MAX_], what[160];
    int lineno = 0;
    rewind(f);
    while (fgets(line, sizeof line, f)) {
        lineno++;
        size_t len = strlen(line);
        int whole = len > 0 && line[len - 1] == '\n';
        if (len == sizeof line - 1 && !whole) {
            snprintf(err, errlen, "%s:%d: line longer than %d bytes", path, lineno, LINE_MAX_ - 2);
            return -1;
        }
        if (whole) line[--len] = '\0';
        if (line[0] == '#' || line[0] == '\0') continue;
        int torn = !whole || (len >= strlen(TORN_TAG) && strcmp(line + len - strlen(TORN_TAG), TORN_TAG) == 0);
        if (!torn && line_checksum(line) < 0) {
            if (!quiet) warn(path, lineno, "checksum differs (a torn or altered line): ignored");
            continue;
        }
        if (torn) {
            if (!quiet) warn(path, lineno, "torn line (its writer stopped mid-line): ignored");
            continue;
        }
        const char *lid;
        conv_algo_t got;
        if (parse_line(line, &lid, &got, what, sizeof what) != 0) {
            snprintf(err, errlen, "%s:%d: not a conv-cache line (%s); delete the file to search again", path, lineno,
                     what);
            return -1;
        }
        if (!id || strcmp(lid, id) != 0) continue;
        conv_algo_t *have = conv_algo_add(e, n, cap, got.key);
        if (!have) { snprintf(err, errlen, "%s: out of host memory", path); return -1; }
        for (int d = 0; d < 3; d++) take_direction(have, &got, d);
    }
    if (ferror(f)) { snprintf(err, errlen, "%s: %s", path, strerror(errno)); return -1; }
    return 0;
}

int conv_cache_load(const char *path, const char *id, conv_algo_t **e, int *n, int *cap, char *err, size_t errlen) {
    int fd = open_regular(path, O_RDONLY, 0);
    FILE *f = fd >= 0 ? fdopen(fd, "r") : NULL;
    if (!f) {
        if (fd >= 0) close(fd);
        if (errno == ENOENT) return 0;
        snprintf(err, errlen, "%s: %s", path, errno == EINVAL ? "not a regular file" : strerror(errno));
        return -1;
    }
    int rc = flock(fileno(f), LOCK_SH) == 0 ? read_lines(f, path, id, e, n, cap, 0, err, errlen)
                                             : (snprintf(err, errlen, "%s: lock: %s", path, strerror(errno)), -1);
    fclose(f);   /* releases the lock */
    return rc;
}

/* Appends printf's text at *k of a line of cap bytes; past the end *k still grows, so the caller sees it did not
 * fit. */
static void add(char *text, size_t cap, size_t *k, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int w = vsnprintf(text + (*k < cap ? *k : cap), *k < cap ? cap - *k : 0, fmt, ap);
    va_end(ap);
    *k += w > 0 ? (size_t)w : 0;
}

/* e's line, without its checksum, into text[cap]: 0, or -1 with why in err where the reader would refuse it (a
 * whole file's choices lost to one line): too long, or a backend config the format cannot hold. A direction not
 * searched gets "-": a backend config means nothing without the algorithm it was timed against. */
static int format_line(const char *id, const conv_algo_t *e, char *text, size_t cap, char *err, size_t errlen) {
    size_t k = 0;
    add(text, cap, &k, "%s\t", id);
    for (int j = 0; j < 12; j++) add(text, cap, &k, "%d ", e->key[j]);
    long long v[N_CHOICE];
    choices_get(e, v);
    for (int j = 0; j < N_CHOICE; j++) add(text, cap, &k, j ? " %lld" : "\t%lld", v[j]);
    for (int d = 0; d < 3; d++) {
        const conv_be_cfg_t *b = &e->be[d];
        add(text, cap, &k, d ? " " : "\t");
        if (b->engine < 0 || !has_direction(e, d)) { add(text, cap, &k, "-"); continue; }
        int bad = b->n_knobs < 0 || b->n_knobs > CONV_BE_KNOBS || b->ws > (size_t)LLONG_MAX;
        for (int j = 0; !bad && j < b->n_knobs; j++) bad = b->knob_type[j] < 0;
        if (bad) {
            snprintf(err, errlen, "direction %d: backend engine %d's knobs or workspace out of range", d, b->engine);
            return -1;
        }
        add(text, cap, &k, "e%d,%lld", b->engine, (long long)b->ws);
        for (int j = 0; j < b->n_knobs; j++) add(text, cap, &k, ",%d=%lld", b->knob_type[j], b->knob_value[j]);
    }
    if (k + strlen(CRC_TAG) + 8 + 2 > cap) {     /* with the checksum and the newline, what read_lines takes */
        snprintf(err, errlen, "%zu bytes, longer than %d", k + strlen(CRC_TAG) + 8, LINE_MAX_ - 2);
        return -1;
    }
    return 0;
}

/* Appends the new lines (see conv_cache.h); 0, or -1 with the reason in err, which conv_cache_save turns into a
 * warning. */
static int save(const char *path, const char *id, const conv_algo_t *e, int n, char *err, size_t errlen) {
    int fd = open_regular(path, O_RDWR | O_CREAT | O_APPEND, 0644);
    if (fd < 0) {
        snprintf(err, errlen, "%s: %s", path, errno == EINVAL ? "not a regular file" : strerror(errno));
        return -1;
    }
    FILE *f = fdopen(fd, "a+");
    if (!f) { snprintf(err, errlen, "%s: %s", path, strerror(errno)); close(fd); return -1; }
    if (flock(fd, LOCK_EX) != 0) {
        snprintf(err, errlen, "%s: lock: %s", path, strerror(errno));
        fclose(f);
        return -1;
    }
    conv_algo_t *file = NULL;   /* what the file holds for id now (another process may have appended) */
    int n_file = 0, cap_file = 0;
    int rc = read_lines(f, path, id, &file, &n_file, &cap_file, 1, err, errlen);
    /* Every new line in one write(2) on an O_APPEND descriptor: a killed writer leaves whole lines or none. */
    char *buf = NULL;
    size_t len = 0;
    FILE *m = rc == 0 ? open_memstream(&buf, &len) : NULL;
    if (rc == 0 && !m) { snprintf(err, errlen, "out of host memory"); rc = -1; }
    if (m) {
        struct stat st;
        char last = '\n';
        if (fstat(fd, &st) == 0 && st.st_size > 0 && pread(fd, &last, 1, st.st_size - 1) == 1 && last != '\n') {
            /* A line torn by an earlier writer (a full disk): closed and marked, so ours are not glued onto it. */
            fputs(TORN_TAG "\n", m);
            fprintf(stderr, "scaling: warning: --conv-cache %s: its last line was torn; marked torn and ignored\n",
                    path);
        }
        if (fstat(fd, &st) == 0 && st.st_size == 0)
            fprintf(m, "# scaling --conv-cache: cudnnFind's choices (and faster backend engine configs) per convolution"
                       " shape; lines are appended, the first for a shape and direction wins (engine/conv_cache.h)\n");
        for (int i = 0; i < n; i++) {
            const conv_algo_t *had = conv_algo_find(file, n_file, e[i].key);
            int adds = 0;
            for (int d = 0; d < 3; d++) adds |= has_direction(&e[i], d) && !(had && has_direction(had, d));
            if (!adds) continue;
            char text[LINE_MAX_], what[160];
            if (format_line(id, &e[i], text, sizeof text, what, sizeof what) != 0) {
                fprintf(stderr, "scaling: warning: --conv-cache %s: a shape's line not saved (%s)\n", path, what);
                continue;
            }
            fprintf(m, "%s" CRC_TAG "%08lx\n", text, crc32(0L, (const Bytef *)text, (uInt)strlen(text)));
        }
        fclose(m);
        ssize_t wrote = len ? write(fd, buf, len) : 0;
        if (wrote != (ssize_t)len) {
            snprintf(err, errlen, "%s: %s", path, wrote < 0 ? strerror(errno) : "short write (disk full?)");
            rc = -1;
        }
        free(buf);
    }
    free(file);
    if (fclose(f) != 0 && rc == 0) { snprintf(err, errlen, "%s: %s", path, strerror(errno)); rc = -1; }
    return rc;
}

int conv_cache_save(const char *path, const char *id, const conv_algo_t *e, int n, char *err, size_t errlen) {
    if (save(path, id, e, n, err, errlen) != 0)
        fprintf(stderr, "scaling: warning: --conv-cache: choices not saved (%s); later runs search again\n", err);
    if (err && errlen) err[0] = '\0';
    return 0;
}

int conv_cache_check(const char *path, char *err, size_t errlen) {
    if (!path[0]) { snprintf(err, errlen, "--conv-cache: empty path"); return -1; }
    struct stat st;
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {    /* a FIFO would block the reader below */
        snprintf(err, errlen, "--conv-cache %s: not a regular file", path);
        return -1;
    }
    if (access(path, F_OK) == 0) {
        if (access(path, R_OK | W_OK) != 0) {
            snprintf(err, errlen, "--conv-cache %s: %s", path, strerror(errno));
            return -1;
        }
        conv_algo_t *none = NULL;
        int n = 0, cap = 0;
        char e2[400];
        if (conv_cache_load(path, NULL, &none, &n, &cap, e2, sizeof e2) != 0) {
            snprintf(err, errlen, "--conv-cache %s", e2);
            return -1;
        }
        return 0;
    }
    char *copy = strdup(path);
    if (!copy) { snprintf(err, errlen, "out of host memory"); return -1; }
    const char *dir = dirname(copy);
    int ok = access(dir, W_OK) == 0;
    if (!ok) snprintf(err, errlen, "--conv-cache %s: directory %s: %s", path, dir, strerror(errno));
    free(copy);
    return ok ? 0 : -1;
}
