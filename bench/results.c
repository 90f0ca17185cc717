/* results.c — the scaling-study CSV: a fixed header checked on append, one row per epoch built in memory,
 * quoted by libcsv where needed, written with one fwrite and fsync'd so a killed sweep leaves whole rows. */
#define _POSIX_C_SOURCE 200809L
#include "results.h"
#include "../engine/errmsg.h"

#include <csv.h>
#include <stdarg.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

const char *const results_columns[] = {
    "run_id", "timestamp", "strategy", "model", "dataset", "seed", "gpus", "global_batch", "per_gpu_batch",
    "lr", "momentum", "weight_decay", "math", "grad_dtype", "init", "epoch", "phase", "steps", "epoch_s",
    "images_per_s",
    "step_ms", "train_loss", "train_acc", "test_acc", "status", "reason",
    "compute_ms", "comm_ms", "exposed_comm_ms", "idle_ms", "bytes_per_step", "algbw_gbs", "busbw_gbs",
    "nccl_algo",
    "replicas",
    "stages", "micro_batches", "schedule", "split", "bubble", "bubble_ideal", "stage_busy_ms",
    "peak_mem_mb", "mem_free_mb", "mem_total_mb",
    "nodes", "gpus_per_node", "nccl_transport", "timeout_s",
    "gpu_name", "driver", "cuda", "cudnn", "nccl", "host", "git_commit",
    NULL,
};

int results_ncolumns(void) {
    int n = 0;
    while (results_columns[n]) n++;
    return n;
}


// ---- line builder: a growing buffer, so stage lists or long names never truncate a row

typedef struct {
    char *s;
    size_t len, cap;
    int ncells, oom;
} line_t;

static void line_reserve(line_t *l, size_t extra) {
    if (l->oom || l->len + extra + 1 <= l->cap) return;
    size_t cap = l->cap ? l->cap : 512;
    while (cap < l->len + extra + 1) cap *= 2;
    char *s = realloc(l->s, cap);
    if (!s) { l->oom = 1; return; }
    l->s = s;
    l->cap = cap;
}

static void line_raw(line_t *l, const char *s, size_t n) {
    line_reserve(l, n);
    if (l->oom) return;
    memcpy(l->s + l->len, s, n);
    l->len += n;
    l->s[l->len] = '\0';
}

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
    line_reserve(l, need);
    if (l->oom) return;
    l->len += csv_write(l->s + l->len, need, s, n);
    l->s[l->len] = '\0';
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

static void line_row(line_t *l, const results_row_t *r) {
    const results_env_t *e = r->env;
    cell_str(l, r->run_id);
    cell_str(l, r->timestamp);
    cell_str(l, r->strategy);
    cell_str(l, r->model);
    cell_str(l, r->dataset);
    cell_fmt(l, "%llu", r->seed);
    cell_int(l, r->gpus);
    cell_int(l, r->global_batch);
    cell_int(l, r->per_gpu_batch);
    cell_num(l, "%.6g", r->lr);
    cell_num(l, "%.6g", r->momentum);
    cell_num(l, "%.6g", r->weight_decay);
    cell_str(l, r->math);
    cell_str(l, r->grad_dtype);
    cell_str(l, r->init);
    cell_int(l, r->epoch);
    cell_str(l, r->phase);
    cell_int(l, r->steps);
    cell_num(l, "%.6f", r->epoch_s);
    cell_num(l, "%.6g", r->images_per_s);
    cell_num(l, "%.4f", r->step_ms);
    cell_num(l, "%.6g", r->train_loss);
    cell_num(l, "%.6g", r->train_acc);
    cell_num(l, "%.6g", r->test_acc);
    cell_str(l, r->status);
    cell_str(l, r->reason);
    cell_num(l, "%.6g", r->compute_ms);
    cell_num(l, "%.6g", r->comm_ms);
    cell_num(l, "%.6g", r->exposed_comm_ms);
    cell_num(l, "%.6g", r->idle_ms);
    cell_num(l, "%.0f", r->bytes_per_step);     /* a byte count: %.6g would round a 44 MB gradient */
    cell_num(l, "%.6g", r->algbw_gbs);
    cell_num(l, "%.6g", r->busbw_gbs);
    cell_str(l, r->nccl_algo);
    cell_str(l, r->replicas);
    cell_int(l, r->stages);
    cell_int(l, r->micro_batches);
    cell_str(l, r->schedule);
    cell_str(l, r->split);
    cell_num(l, "%.6g", r->bubble);
    cell_num(l, "%.6g", r->bubble_ideal);
    cell_str(l, r->stage_busy_ms);
    cell_num(l, "%.6g", r->peak_mem_mb);
    /* Device memory at a fault: only a row that measured it (total > 0) has these cells. */
    cell_num(l, "%.0f", r->mem_total_mb > 0 ? r->mem_free_mb : -1);
    cell_num(l, "%.0f", r->mem_total_mb > 0 ? r->mem_total_mb : -1);
    cell_int(l, r->nodes > 0 ? r->nodes : -1);     /* 0: a row built without them (tests), not a count */
    cell_int(l, r->gpus_per_node > 0 ? r->gpus_per_node : -1);
    cell_str(l, r->nccl_transport);
    cell_num(l, "%.6g", r->timeout_s > 0 ? r->timeout_s : -1);
    cell_str(l, e ? e->gpu_name : NULL);
    cell_str(l, e ? e->driver : NULL);
    cell_str(l, e ? e->cuda : NULL);
    cell_str(l, e ? e->cudnn : NULL);
    cell_str(l, e ? e->nccl : NULL);
    cell_str(l, e ? e->host : NULL);
    cell_str(l, e ? e->git_commit : NULL);
}

static void line_header(line_t *l) {
    for (int i = 0; results_columns[i]; i++) cell_str(l, results_columns[i]);
}

int results_format(const results_row_t *row, char *buf, size_t len) {
    line_t l = {0};
    line_row(&l, row);
    int rc = -1;
    if (!l.oom && l.len < len) {
        memcpy(buf, l.s, l.len + 1);
        rc = (int)l.len;
    } else if (len) {
        buf[0] = '\0';
    }
    free(l.s);
    return rc;
}

// ---- file

/* mkdir -p of the directory part of path. */
static int make_parents(const char *path, char *err, size_t errlen) {
    char dir[512];
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
    FILE *f = fopen(path, "r");
    if (!f) return 0;   /* absent (or unreadable: results_open will say why when it is time to write) */
    char *first = NULL;
    int ends_nl = 1, open_quote = 0, rc = 0;
    struct stat st;
    if (fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 &&
        read_existing(f, &first, &ends_nl, &open_quote) == 0 && header_diff(path, first, err, errlen) != 0)
        rc = 2;
    free(first);
    fclose(f);
    return rc;
}

int results_open(results_t *r, const char *path, char *err, size_t errlen) {
    memset(r, 0, sizeof *r);
    if (err && errlen) err[0] = '\0';
    if (!path || !*path) return errmsg(2, err, errlen, "--out: empty path");
    if (strlen(path) >= sizeof r->path) return errmsg(2, err, errlen, "%s: path too long", path);
    if (make_parents(path, err, errlen)) return 2;
    /* "a+" never truncates, so a file we reject is left byte-identical. */
    FILE *f = fopen(path, "a+");
    if (!f) return errmsg(2, err, errlen, "%s: cannot open for appending: %s", path, strerror(errno));
    struct stat st;
    if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode)) {
        fclose(f);
        return errmsg(2, err, errlen, "%s: not a regular file", path);
    }
    line_t l = {0};
    int rc = 0;
    if (st.st_size > 0) {
        char *first = NULL;
        int ends_nl = 1, open_quote = 0;
        if (read_existing(f, &first, &ends_nl, &open_quote) != 0) {
            rc = errmsg(2, err, errlen, "%s: cannot read the existing header: %s", path, strerror(errno));
        } else if (header_diff(path, first, err, errlen) != 0) {
            rc = 2;
        } else if (!ends_nl && write_synced(f, open_quote ? "\"\n" : "\n", open_quote ? 2 : 1) != 0) {
            /* A writer killed mid-row leaves no final newline; without one our first row would be glued
             * onto the partial line and both would be lost. A row cut inside a quoted cell (a GPU name with
             * a comma) also gets its quote closed, or every later row would be read as part of that cell. */
            rc = errmsg(2, err, errlen, "%s: cannot repair the missing final newline: %s", path, strerror(errno));
        }
        free(first);
    } else {
        line_header(&l);
        line_raw(&l, "\n", 1);
        if (l.oom || write_synced(f, l.s, l.len) != 0)
            rc = errmsg(2, err, errlen, "%s: cannot write the header: %s", path, strerror(errno));
    }
    free(l.s);
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
    int rc = 0;
    if (l.oom) rc = errmsg(-1, err, errlen, "%s: out of memory formatting a row", r->path);
    else if (write_synced(r->f, l.s, l.len) != 0)
        rc = errmsg(-1, err, errlen, "%s: write failed: %s", r->path, strerror(errno));
    free(l.s);
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

/* Key cells that may be empty, in the row or in the query, matching any value (see results.h). */
static int key_wildcard(int i) {
    const char *c = results_key_columns[i];
    return strcmp(c, "grad_dtype") == 0 || strcmp(c, "micro_batches") == 0 || strcmp(c, "schedule") == 0 ||
           strcmp(c, "steps") == 0 || strcmp(c, "nccl_algo") == 0;
}

static int column_index(const char *name) {
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
    const char *st = c->cell[c->col_status];
    int ended = strcmp(st, "diverged") == 0 || strcmp(st, "oom") == 0;
    /* replicas-differ is a failed run, retried like "failed" rows: only ok epochs count as done. */
    int measured = ended || strcmp(st, "ok") == 0;
    if (measured && epoch > r->epochs) r->epochs = (int)epoch;
    if (ended) r->ended = 1;
    /* Any such row: under mpirun/srun a failing rank's failed row may be followed by rank 0's interrupted one. */
    if (strcmp(st, "failed") == 0 || strcmp(st, "timeout") == 0 || strcmp(st, "replicas-differ") == 0) r->faulted = 1;
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
    c->col_run = column_index("run_id");
    c->col_epoch = column_index("epoch");
    c->col_status = column_index("status");
    c->want[c->col_run] = c->want[c->col_epoch] = c->want[c->col_status] = 1;
    for (int k = 0; k < RESULTS_KEY_FIELDS; k++) {
        c->col_key[k] = column_index(results_key_columns[k]);
        c->want[c->col_key[k]] = 1;
    }
    /* Not CSV_STRICT: a line cut by a kill is one short record to skip, not a reason to stop reading. */
    struct csv_parser p;
    int rc = 0;
    if (csv_init(&p, 0) != 0) rc = errmsg(2, err, errlen, "%s: cannot initialise the CSV parser", path);
    char buf[65536];
    size_t n;
    while (!rc && (n = fread(buf, 1, sizeof buf, f)) > 0)
        if (csv_parse(&p, buf, n, scan_field, scan_row, c) != n)
            rc = errmsg(2, err, errlen, "%s: %s", path, csv_strerror(csv_error(&p)));
    if (!rc && ferror(f)) rc = errmsg(2, err, errlen, "%s: read error: %s", path, strerror(errno));
    if (!rc) csv_fini(&p, scan_field, scan_row, c);
    csv_free(&p);
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
    if (!l.oom && c && csv_init(&p, 0) == 0) {
        c->header_done = 1;
        for (int i = 0; i < SCAN_MAXF; i++) c->want[i] = 1;
        /* Parse fields only: the row callback is not needed, the cells stay in c. */
        csv_parse(&p, l.s, l.len, scan_field, NULL, c);
        csv_fini(&p, scan_field, NULL, c);
        csv_free(&p);
        for (int i = 0; i < RESULTS_KEY_FIELDS; i++) {
            int col = column_index(results_key_columns[i]);
            if (col >= 0 && col < c->nf) memcpy(k->cell[i], c->cell[col], sizeof k->cell[i]);
        }
    }
    free(c);
    free(l.s);
}

static int key_match(const results_key_t *row, const results_key_t *want) {
    for (int i = 0; i < RESULTS_KEY_FIELDS; i++) {
        if ((!row->cell[i][0] || !want->cell[i][0]) && key_wildcard(i)) continue;
        if (strcmp(row->cell[i], want->cell[i]) != 0) return 0;
    }
    return 1;
}

int results_scan_done(const results_scan_t *s, const results_key_t *k, int epochs, int retry_failed, int *best) {
    int most = 0, done = 0, last_faulted = 0;
    for (int i = 0; i < s->n; i++) {
        const results_run_t *r = &s->runs[i];
        if (!key_match(&r->key, k)) continue;
        if (r->epochs > most) most = r->epochs;
        if (r->ended || r->epochs >= epochs) done = 1;
        last_faulted = r->faulted;     /* runs are in file order: the last one seen is the latest */
    }
    if (best) *best = most;
    /* A configuration that faulted last time would most likely fault again: the sweep goes on past it unless the
     * user asks for the retry. An interrupted run (a signal, a time limit) is no verdict on it and runs again. */
    return done || (last_faulted && !retry_failed);
}
