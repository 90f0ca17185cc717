/* results.c — the scaling-study CSV from its one schema table: a fixed header checked on append, one row per epoch
 * built in memory, quoted by libcsv where needed, written with one fwrite and fsync'd so a killed sweep leaves whole
 * rows; and --resume's scan (results_read.c reads any version's CSV into rows). */
#define _POSIX_C_SOURCE 200809L
#include "results.h"
#include "bytes.h"
#include "paths.h"
#include "study.h"
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

#define COLUMN_DESC(name, type, member, fmt, flags) \
    {name, RESULTS_##type, RESULTS_F_##flags, offsetof(results_row_t, member), sizeof(((results_row_t *)0)->member), fmt},
const results_column_t results_schema[] = {RESULTS_SCHEMA(COLUMN_DESC)};
#define NCOLS ((int)(sizeof results_schema / sizeof results_schema[0]))
_Static_assert(sizeof results_schema / sizeof results_schema[0] <= 128, "the scan keeps at most 128 columns");

#define COLUMN_NAME(name, type, member, fmt, flags) name,
const char *const results_columns[] = {RESULTS_SCHEMA(COLUMN_NAME) NULL};

int results_ncolumns(void) {
    return NCOLS;
}

void results_row_init(results_row_t *row) {
    memset(row, 0, sizeof *row);
    for (int i = 0; i < NCOLS; i++) {
        const results_column_t *c = &results_schema[i];
        if (c->type == RESULTS_INT || c->type == RESULTS_COUNT || c->type == RESULTS_REPLICAS)
            *RESULTS_MEMBER(row, c, int) = -1;
        else if (c->type == RESULTS_NUM) *RESULTS_MEMBER(row, c, double) = -1;
    }
}

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

int results_name_byte_ok(int flags, unsigned char b) {
    if (!(flags & (RESULTS_F_NAME | RESULTS_F_SET))) return 1;
    return (b && strchr(RESULTS_NAME_CHARS, b)) || (b == '|' && (flags & RESULTS_F_SET));
}

/* A NAME or SET cell as the reader will accept it: a byte outside its set (a host name, a GPU name or a commit
 * string from the environment) is written as '_'. */
static void cell_name(line_t *l, const char *s, int flags) {
    if (!s || !flags) { cell_str(l, s); return; }
    size_t n = strlen(s);
    char *t = malloc(n + 1);
    if (!t) { l->b.oom = 1; return; }
    for (size_t i = 0; i <= n; i++) t[i] = i == n || results_name_byte_ok(flags, (unsigned char)s[i]) ? s[i] : '_';
    cell_str(l, t);
    free(t);
}

static void line_row(line_t *l, const results_row_t *r) {
    for (int i = 0; i < NCOLS; i++) {
        const results_column_t *c = &results_schema[i];
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
    for (int i = 0; results_columns[i]; i++) cell_str(l, results_columns[i]);
}

int results_format(const results_row_t *row, char *buf, size_t len) {
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

/* mkdir -p of the directory part of path. */
static int make_parents(const char *path, char *err, size_t errlen) {
    char dir[PATH_MAX];
    if (strlen(path) >= sizeof dir) return errmsg(2, err, errlen, "%s: path too long", path);
    strcpy(dir, path);
    char *slash = strrchr(dir, '/');
    if (!slash || slash == dir) return 0;
    *slash = '\0';
    for (char *p = dir + 1;; p++) {
        if (*p != '/' && *p != '\0') continue;
        char c = *p;
        *p = '\0';
        if (mkdir(dir, 0777) != 0 && errno != EEXIST)
            return errmsg(2, err, errlen, "%s: cannot create directory: %s", dir, strerror(errno));
        *p = c;
        if (!c) break;
    }
    struct stat st;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
        return errmsg(2, err, errlen, "%s: not a directory", dir);
    return 0;
}

/* Compares a header line with ours column by column, to name the first difference. Column names never
 * need quoting, so splitting on ',' is exact for our header; anything else differs anyway. */
static int header_diff(const char *path, const char *have, char *err, size_t errlen) {
    const char *p = have;
    int done = 0;
    for (int i = 0;; i++) {
        const char *want = results_columns[i];
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

int results_check(const char *path, char *err, size_t errlen) {
    if (err && errlen) err[0] = '\0';
    if (!path || !*path) return errmsg(2, err, errlen, "--out: empty path");
    int fd = paths_open_regular(path, O_RDONLY, 0);
    if (fd < 0 && errno == EINVAL) return errmsg(2, err, errlen, "%s: not a regular file", path);
    FILE *f = fd >= 0 ? fdopen(fd, "r") : NULL;
    if (!f) {   /* absent (or unreadable: results_open will say why when it is time to write) */
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

int results_open(results_t *r, const char *path, char *err, size_t errlen) {
    memset(r, 0, sizeof *r);
    if (err && errlen) err[0] = '\0';
    if (!path || !*path) return errmsg(2, err, errlen, "--out: empty path");
    if (strlen(path) >= sizeof r->path) return errmsg(2, err, errlen, "%s: path too long", path);
    if (make_parents(path, err, errlen)) return 2;
    /* O_APPEND never truncates, so a file we reject is left byte-identical; a FIFO or device is refused unopened
     * for I/O (paths_open_regular). */
    int fd = paths_open_regular(path, O_RDWR | O_APPEND | O_CREAT, 0666);
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

int results_write(results_t *r, const results_row_t *row, char *err, size_t errlen) {
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

void results_close(results_t *r) {
    if (r->f) fclose(r->f);
    r->f = NULL;
}

// ---- resume: scan an existing CSV

const char *const results_key_columns[RESULTS_KEY_FIELDS] = {
    "strategy", "model", "dataset", "seed", "gpus", "global_batch", "lr", "momentum", "weight_decay", "math",
    "grad_dtype", "init", "micro_batches", "schedule", "steps", "nodes", "nccl_transport", "nccl_algo",
};

int results_column_index(const char *name) {
    for (int i = 0; results_columns[i]; i++)
        if (strcmp(results_columns[i], name) == 0) return i;
    return -1;
}

/* One record as libcsv delivers it: only the cells the scan needs are kept, each RESULTS_CELL_MAX bytes (the
 * longest a key cell can be, results.h). */
#define SCAN_MAXF 128
typedef struct {
    int nf;                                 /* fields in the current record */
    int want[SCAN_MAXF];                    /* column -> 1 if kept */
    char cell[SCAN_MAXF][RESULTS_CELL_MAX];
    int header_done, header_bad, header_col;
    char header_got[64];
    results_scan_t *s;
    int col_run, col_epoch, col_status, col_key[RESULTS_KEY_FIELDS];
    int oom;
} scan_ctx_t;

static void scan_field(void *data, size_t len, void *ctx_) {
    scan_ctx_t *c = ctx_;
    int i = c->nf++;
    if (i >= SCAN_MAXF || (!c->want[i] && c->header_done)) return;
    size_t n = len < sizeof c->cell[i] - 1 ? len : sizeof c->cell[i] - 1;
    memcpy(c->cell[i], data ? data : "", n);
    c->cell[i][n] = '\0';
}

static results_run_t *scan_run(results_scan_t *s, const char *run_id) {
    /* Rows of a run are consecutive in practice, so the last run is checked first. */
    for (int i = s->n - 1; i >= 0; i--)
        if (strcmp(s->runs[i].run_id, run_id) == 0) return &s->runs[i];
    if (s->n == s->cap) {
        int cap = s->cap ? 2 * s->cap : 64;
        results_run_t *r = realloc(s->runs, (size_t)cap * sizeof *r);
        if (!r) return NULL;
        s->runs = r;
        s->cap = cap;
    }
    results_run_t *r = &s->runs[s->n++];
    memset(r, 0, sizeof *r);
    snprintf(r->run_id, sizeof r->run_id, "%s", run_id);
    study_progress_init(&r->progress);
    return r;
}

static void scan_row(int term, void *ctx_) {
    (void)term;
    scan_ctx_t *c = ctx_;
    int nf = c->nf, ncols = results_ncolumns();
    c->nf = 0;
    if (!c->header_done) {
        c->header_done = 1;
        for (int i = 0; i <= ncols; i++) {
            const char *got = i < nf && i < SCAN_MAXF ? c->cell[i] : NULL;
            const char *want = results_columns[i];
            if (!got && !want) break;
            if (got && want && strcmp(got, want) == 0) continue;
            c->header_bad = 1;
            c->header_col = i + 1;
            snprintf(c->header_got, sizeof c->header_got, "%s", got ? got : "(none)");
            break;
        }
        return;
    }
    if (c->header_bad) return;
    if (nf != ncols) { c->s->bad_rows++; return; }
    char *end;
    long epoch = strtol(c->cell[c->col_epoch], &end, 10);
    if (!c->cell[c->col_run][0] || end == c->cell[c->col_epoch] || *end || epoch < 0) { c->s->bad_rows++; return; }
    c->s->rows++;
    results_run_t *r = scan_run(c->s, c->cell[c->col_run]);
    if (!r) { c->oom = 1; return; }
    for (int k = 0; k < RESULTS_KEY_FIELDS; k++) memcpy(r->key.cell[k], c->cell[c->col_key[k]], sizeof r->key.cell[k]);
    study_progress_add(&r->progress, (int)epoch, c->cell[c->col_status]);
}

int results_scan(const char *path, results_scan_t *s, char *err, size_t errlen) {
    memset(s, 0, sizeof *s);
    if (err && errlen) err[0] = '\0';
    FILE *f = fopen(path, "rb");
    if (!f) {
        if (errno == ENOENT) return 0;
        return errmsg(2, err, errlen, "%s: cannot read: %s", path, strerror(errno));
    }
    scan_ctx_t *c = calloc(1, sizeof *c);
    if (!c) { fclose(f); return errmsg(2, err, errlen, "%s: out of memory scanning", path); }
    c->s = s;
    c->col_run = results_column_index("run_id");
    c->col_epoch = results_column_index("epoch");
    c->col_status = results_column_index("status");
    c->want[c->col_run] = c->want[c->col_epoch] = c->want[c->col_status] = 1;
    for (int k = 0; k < RESULTS_KEY_FIELDS; k++) {
        c->col_key[k] = results_column_index(results_key_columns[k]);
        c->want[c->col_key[k]] = 1;
    }
    int rc = results_csv_feed(f, path, scan_field, scan_row, c, err, errlen);
    fclose(f);
    if (!rc && c->header_bad)
        rc = errmsg(2, err, errlen, "%s: header differs from this version's columns (first difference at column %d: "
                  "'%s' vs '%s')", path, c->header_col, c->header_got,
                  c->header_col <= results_ncolumns() ? results_columns[c->header_col - 1] : "(none)");
    if (!rc && c->oom) rc = errmsg(2, err, errlen, "%s: out of memory scanning", path);
    free(c);
    if (rc) results_scan_free(s);
    return rc;
}

void results_scan_free(results_scan_t *s) {
    free(s->runs);
    memset(s, 0, sizeof *s);
}

/* The key is taken from the formatted row, through the same parser as the scan, so the two cannot format a
 * number differently. */
void results_key_of_row(const results_row_t *row, results_key_t *k) {
    memset(k, 0, sizeof *k);
    line_t l = {0};
    line_row(&l, row);
    scan_ctx_t *c = calloc(1, sizeof *c);
    struct csv_parser p;
    if (!l.b.oom && c && csv_init(&p, 0) == 0) {
        c->header_done = 1;
        for (int i = 0; i < SCAN_MAXF; i++) c->want[i] = 1;
        /* Parse fields only: the row callback is not needed, the cells stay in c. */
        csv_parse(&p, l.b.s, l.b.len, scan_field, NULL, c);
        csv_fini(&p, scan_field, NULL, c);
        csv_free(&p);
        for (int i = 0; i < RESULTS_KEY_FIELDS; i++) {
            int col = results_column_index(results_key_columns[i]);
            if (col >= 0 && col < c->nf) memcpy(k->cell[i], c->cell[col], sizeof k->cell[i]);
        }
    }
    free(c);
    free(l.b.s);
}

int results_scan_done(const results_scan_t *s, const results_key_t *k, int epochs, int retry_failed, int *best) {
    int most = 0, done = 0, last_faulted = 0;
    for (int i = 0; i < s->n; i++) {
        const results_run_t *r = &s->runs[i];
        if (!study_key_match(&r->key, k)) continue;
        if (r->progress.epochs > most) most = r->progress.epochs;
        if (study_complete(&r->progress, epochs, 1)) done = 1;
        last_faulted = r->progress.faulted;     /* runs are in file order: the last one seen is the latest */
    }
    if (best) *best = most;
    /* A configuration that faulted last time would most likely fault again: the sweep goes on past it unless the
     * user asks for the retry. An interrupted run (a signal, a time limit) is no verdict on it and runs again. */
    return done || (last_faulted && !retry_failed);
}
