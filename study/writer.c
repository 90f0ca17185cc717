/* writer.c — the scaling-study CSV from its one schema table: a fixed header checked on append, one row per epoch
 * built in memory, quoted by libcsv where needed, written with one fwrite and fsync'd so a killed sweep leaves whole
 * rows. */
#define _POSIX_C_SOURCE 200809L
#include "writer.h"
#include "paths.h"
#include "../engine/errmsg.h"

#include <csv.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/file.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define NCOLS study_ncolumns()

// ---- line builder: a growing buffer, so stage lists or long names never truncate a row

typedef struct {
    bytes_t b;
    int ncells;
} line_t;

static void line_raw(line_t *l, const char *s, size_t n) { bytes_add(&l->b, s, n); }

static void line_sep(line_t *l) {
    if (l->ncells++) line_raw(l, ",", 1);
}

/* Only cells that need it are quoted: numbers stay bare for gnuplot, names with commas or quotes
 * (a GPU name, a split list) go through libcsv's quoting. */
static void cell_str(line_t *l, const char *s) {
    line_sep(l);
    if (!s || !*s) return;
    size_t n = strlen(s);
    if (!strpbrk(s, ",\"\r\n") && s[0] != ' ' && s[n - 1] != ' ') { line_raw(l, s, n); return; }
    size_t need = csv_write(NULL, 0, s, n);
    if (bytes_reserve(&l->b, need) != 0) return;
    l->b.len += csv_write(l->b.s + l->b.len, need, s, n);
    l->b.s[l->b.len] = '\0';
}

static void cell_fmt(line_t *l, const char *fmt, ...) {
    char buf[64];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    line_sep(l);
    if (n > 0) line_raw(l, buf, (size_t)n < sizeof buf ? (size_t)n : sizeof buf - 1);
}

/* Negative means "not applicable" and becomes an empty cell; NaN is a measurement (a diverged loss) and
 * stays visible as "nan". */
static void cell_num(line_t *l, const char *fmt, double x) {
    if (x < 0) line_sep(l);
    else cell_fmt(l, fmt, x);
}

static void cell_int(line_t *l, int x) {
    if (x < 0) line_sep(l);
    else cell_fmt(l, "%d", x);
}

/* A NAME or SET cell as the reader will accept it: a byte outside its set (a host name, a GPU name or a commit
 * string from the environment) is written as '_'. */
static void cell_name(line_t *l, const char *s, int flags) {
    if (!s || !flags) { cell_str(l, s); return; }
    size_t n = strlen(s);
    char *t = malloc(n + 1);
    if (!t) { l->b.oom = 1; return; }
    for (size_t i = 0; i <= n; i++) t[i] = i == n || study_name_byte_ok(flags, (unsigned char)s[i]) ? s[i] : '_';
    cell_str(l, t);
    free(t);
}

static void line_row(line_t *l, const study_row_t *r) {
    for (int i = 0; i < NCOLS; i++) {
        const study_column_t *c = &study_schema[i];
        switch (c->type) {
        case RESULTS_TEXT: cell_name(l, RESULTS_CMEMBER(r, c, char), c->flags); break;
        case RESULTS_STR: cell_name(l, *RESULTS_CMEMBER(r, c, const char *), c->flags); break;
        case RESULTS_U64: cell_fmt(l, "%llu", *RESULTS_CMEMBER(r, c, unsigned long long)); break;
        case RESULTS_INT: cell_int(l, *RESULTS_CMEMBER(r, c, int)); break;
        case RESULTS_COUNT: {   /* 0: a row built without it (tests), not a count */
            int x = *RESULTS_CMEMBER(r, c, int);
            cell_int(l, x > 0 ? x : -1);
            break;
        }
        case RESULTS_NUM: cell_num(l, c->fmt, *RESULTS_CMEMBER(r, c, double)); break;
        case RESULTS_REPLICAS: {
            int x = *RESULTS_CMEMBER(r, c, int);
            cell_str(l, x < 0 ? NULL : x ? "identical" : "DIFFER");
            break;
        }
        }
    }
}

static void line_header(line_t *l) {
    for (int i = 0; study_columns[i]; i++) cell_str(l, study_columns[i]);
}

void study_line(bytes_t *b, const study_row_t *row) {
    line_t l = {.b = *b};
    line_row(&l, row);
    *b = l.b;
}

int study_format(const study_row_t *row, char *buf, size_t len) {
    line_t l = {0};
    line_row(&l, row);
    int rc = -1;
    if (!l.b.oom && l.b.len < len) {
        memcpy(buf, l.b.s, l.b.len + 1);
        rc = (int)l.b.len;
    } else if (len) {
        buf[0] = '\0';
    }
    free(l.b.s);
    return rc;
}

// ---- file

/* Compares a header line with ours column by column, to name the first difference. Column names never
 * need quoting, so splitting on ',' is exact for our header; anything else differs anyway. */
static int header_diff(const char *path, const char *have, char *err, size_t errlen) {
    const char *p = have;
    int done = 0;
    for (int i = 0;; i++) {
        const char *want = study_columns[i];
        const char *col = done ? NULL : p;
        size_t n = done ? 0 : strcspn(p, ",");
        if (!done) {
            if (p[n] == ',') p += n + 1;
            else done = 1;
        }
        if (!want && !col) return 0;
        if (want && col && strlen(want) == n && strncmp(col, want, n) == 0) continue;
        return errmsg(2, err, errlen,
                    "%s: existing header differs from this version's columns (first difference at column %d: "
                    "'%.*s' vs '%s'); write to a new --out file",
                    path, i + 1, col ? (int)n : 6, col ? col : "(none)", want ? want : "(none)");
    }
}

/* Reads the first line (without its line ending), whether the file ends in '\n', and whether its last line
 * leaves a quoted field open (an odd number of '"' since the last '\n', read from the last 64 KiB). */
static int read_existing(FILE *f, char **first, int *ends_nl, int *open_quote) {
    size_t cap = 0;
    *first = NULL;
    *open_quote = 0;
    if (fseek(f, 0, SEEK_SET) != 0) return -1;
    ssize_t n = getline(first, &cap, f);
    if (n < 0) return -1;
    while (n > 0 && ((*first)[n - 1] == '\n' || (*first)[n - 1] == '\r')) (*first)[--n] = '\0';
    if (fseek(f, -1, SEEK_END) != 0) return -1;
    *ends_nl = fgetc(f) == '\n';
    if (*ends_nl) return 0;
    enum { TAIL = 65536 };
    long size = ftell(f);
    long take = size < TAIL ? size : TAIL;
    char *tail = malloc(TAIL);
    if (!tail || size < 0 || fseek(f, size - take, SEEK_SET) != 0) { free(tail); return -1; }
    size_t got = fread(tail, 1, (size_t)take, f);
    int quotes = 0;
    for (size_t i = got; i > 0 && tail[i - 1] != '\n'; i--) quotes += tail[i - 1] == '"';
    *open_quote = quotes % 2;
    free(tail);
    return 0;
}

static int write_synced(FILE *f, const char *s, size_t n) {
    if (n && fwrite(s, 1, n, f) != n) return -1;
    if (fflush(f) != 0) return -1;
    return fsync(fileno(f));
}

int study_check(const char *path, char *err, size_t errlen) {
    if (err && errlen) err[0] = '\0';
    if (!path || !*path) return errmsg(2, err, errlen, "--out: empty path");
    int fd = paths_open_regular(path, O_RDONLY, 0);
    if (fd < 0 && errno == EINVAL) return errmsg(2, err, errlen, "%s: not a regular file", path);
    FILE *f = fd >= 0 ? fdopen(fd, "r") : NULL;
    if (!f) {   /* absent (or unreadable: study_open will say why when it is time to write) */
        if (fd >= 0) close(fd);
        return 0;
    }
    char *first = NULL;
    int ends_nl = 1, open_quote = 0, rc = 0;
    struct stat st;
    if (fstat(fileno(f), &st) == 0 && st.st_size > 0 && read_existing(f, &first, &ends_nl, &open_quote) == 0 &&
        header_diff(path, first, err, errlen) != 0)
        rc = 2;
    free(first);
    fclose(f);
    return rc;
}

/* A writer killed mid-row leaves no final newline; without one the next row would be glued onto the partial line
 * and both would be lost. A row cut inside a quoted cell (a GPU name with a comma) also gets its quote closed, or
 * every later row would be read as part of that cell. Called under the lock. 0, or -1 with errno. */
static int repair_tail(FILE *f) {
    struct stat st;
    if (fflush(f) != 0 || fstat(fileno(f), &st) != 0) return -1;
    if (st.st_size == 0) return 0;
    char *first = NULL;
    int ends_nl = 1, open_quote = 0;
    int rc = read_existing(f, &first, &ends_nl, &open_quote);
    free(first);
    if (rc == 0) rc = fseek(f, 0, SEEK_END);    /* from reading to writing: a seek between (C11 7.21.5.3) */
    if (rc == 0 && !ends_nl) rc = write_synced(f, open_quote ? "\"\n" : "\n", open_quote ? 2 : 1);
    return rc;
}

int study_open(study_csv_t *r, const char *path, char *err, size_t errlen) {
    memset(r, 0, sizeof *r);
    if (err && errlen) err[0] = '\0';
    if (!path || !*path) return errmsg(2, err, errlen, "--out: empty path");
    if (strlen(path) >= sizeof r->path) return errmsg(2, err, errlen, "%s: path too long", path);
    if (paths_make_parents(path, err, errlen)) return 2;
    /* O_APPEND never truncates, so a file we reject is left byte-identical; a FIFO or device is refused unopened
     * for I/O, and a new file is created with O_EXCL, never through a dangling link (paths_open_append). */
    int fd = paths_open_append(path, O_RDWR | O_APPEND, 0666);
    if (fd < 0 && errno == EINVAL) return errmsg(2, err, errlen, "%s: not a regular file", path);
    FILE *f = fd >= 0 ? fdopen(fd, "a+") : NULL;
    if (!f) {
        int e = errno;
        if (fd >= 0) close(fd);
        return errmsg(2, err, errlen, "%s: cannot open for appending: %s", path, strerror(e));
    }
    /* Under the lock, so that sweeps starting together on a new file write one header and whole rows. */
    if (flock(fd, LOCK_EX) != 0) {
        fclose(f);
        return errmsg(2, err, errlen, "%s: cannot lock: %s", path, strerror(errno));
    }
    struct stat st;
    line_t l = {0};
    int rc = 0;
    if (fstat(fd, &st) != 0) {
        rc = errmsg(2, err, errlen, "%s: %s", path, strerror(errno));
    } else if (st.st_size > 0) {
        char *first = NULL;
        int ends_nl = 1, open_quote = 0;
        if (read_existing(f, &first, &ends_nl, &open_quote) != 0)
            rc = errmsg(2, err, errlen, "%s: cannot read the existing header: %s", path, strerror(errno));
        else if (header_diff(path, first, err, errlen) != 0)
            rc = 2;
        else if (repair_tail(f) != 0)
            rc = errmsg(2, err, errlen, "%s: cannot repair the missing final newline: %s", path, strerror(errno));
        free(first);
    } else {
        line_header(&l);
        line_raw(&l, "\n", 1);
        if (l.b.oom || write_synced(f, l.b.s, l.b.len) != 0)
            rc = errmsg(2, err, errlen, "%s: cannot write the header: %s", path, strerror(errno));
    }
    free(l.b.s);
    flock(fd, LOCK_UN);
    if (rc) { fclose(f); return rc; }
    r->f = f;
    strcpy(r->path, path);
    return 0;
}

int study_write(study_csv_t *r, const study_row_t *row, char *err, size_t errlen) {
    if (!r->f) return errmsg(-1, err, errlen, "results file not open");
    line_t l = {0};
    line_row(&l, row);
    line_raw(&l, "\n", 1);
    int rc = 0, fd = fileno(r->f);
    if (l.b.oom) rc = errmsg(-1, err, errlen, "%s: out of memory formatting a row", r->path);
    else if (flock(fd, LOCK_EX) != 0) rc = errmsg(-1, err, errlen, "%s: cannot lock: %s", r->path, strerror(errno));
    else {
        /* Another process appending to the file may have been killed mid-row since our last row. */
        if (repair_tail(r->f) != 0 || write_synced(r->f, l.b.s, l.b.len) != 0)
            rc = errmsg(-1, err, errlen, "%s: write failed: %s", r->path, strerror(errno));
        flock(fd, LOCK_UN);
    }
    free(l.b.s);
    return rc;
}

void study_close(study_csv_t *r) {
    if (r->f) fclose(r->f);
    r->f = NULL;
}
