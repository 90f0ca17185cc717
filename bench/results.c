/* results.c — the scaling-study CSV: a fixed header checked on append, one row per epoch built in memory,
 * quoted by libcsv where needed, written with one fwrite and fsync'd so a killed sweep leaves whole rows. */
#define _POSIX_C_SOURCE 200809L
#include "results.h"

#include <csv.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

const char *const results_columns[] = {
    "run_id", "timestamp", "strategy", "model", "dataset", "seed", "gpus", "global_batch", "per_gpu_batch",
    "lr", "momentum", "weight_decay", "math", "init", "epoch", "phase", "steps", "epoch_s", "images_per_s",
    "step_ms", "train_loss", "train_acc", "test_acc", "status",
    "compute_ms", "comm_ms", "exposed_comm_ms", "bytes_per_step", "algbw_gbs", "busbw_gbs", "nccl_algo",
    "replicas",
    "stages", "micro_batches", "schedule", "split", "bubble", "bubble_ideal", "stage_busy_ms",
    "peak_mem_mb",
    "gpu_name", "driver", "cuda", "cudnn", "nccl", "host", "git_commit",
    NULL,
};

int results_ncolumns(void) {
    int n = 0;
    while (results_columns[n]) n++;
    return n;
}

static int fail(char *err, size_t errlen, int rc, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    if (err && errlen) vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return rc;
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
    cell_num(l, "%.6g", r->compute_ms);
    cell_num(l, "%.6g", r->comm_ms);
    cell_num(l, "%.6g", r->exposed_comm_ms);
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
    if (strlen(path) >= sizeof dir) return fail(err, errlen, 2, "%s: path too long", path);
    strcpy(dir, path);
    char *slash = strrchr(dir, '/');
    if (!slash || slash == dir) return 0;
    *slash = '\0';
    for (char *p = dir + 1;; p++) {
        if (*p != '/' && *p != '\0') continue;
        char c = *p;
        *p = '\0';
        if (mkdir(dir, 0777) != 0 && errno != EEXIST)
            return fail(err, errlen, 2, "%s: cannot create directory: %s", dir, strerror(errno));
        *p = c;
        if (!c) break;
    }
    struct stat st;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
        return fail(err, errlen, 2, "%s: not a directory", dir);
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
        return fail(err, errlen, 2,
                    "%s: existing header differs from this version's columns (first difference at column %d: "
                    "'%.*s' vs '%s'); write to a new --out file",
                    path, i + 1, col ? (int)n : 6, col ? col : "(none)", want ? want : "(none)");
    }
}

/* Reads the first line (without its line ending) and whether the file ends in '\n'. */
static int read_existing(FILE *f, char **first, int *ends_nl) {
    size_t cap = 0;
    *first = NULL;
    if (fseek(f, 0, SEEK_SET) != 0) return -1;
    ssize_t n = getline(first, &cap, f);
    if (n < 0) return -1;
    while (n > 0 && ((*first)[n - 1] == '\n' || (*first)[n - 1] == '\r')) (*first)[--n] = '\0';
    if (fseek(f, -1, SEEK_END) != 0) return -1;
    *ends_nl = fgetc(f) == '\n';
    return 0;
}

static int write_synced(FILE *f, const char *s, size_t n) {
    if (n && fwrite(s, 1, n, f) != n) return -1;
    if (fflush(f) != 0) return -1;
    return fsync(fileno(f));
}

int results_open(results_t *r, const char *path, char *err, size_t errlen) {
    memset(r, 0, sizeof *r);
    if (err && errlen) err[0] = '\0';
    if (!path || !*path) return fail(err, errlen, 2, "--out: empty path");
    if (strlen(path) >= sizeof r->path) return fail(err, errlen, 2, "%s: path too long", path);
    if (make_parents(path, err, errlen)) return 2;
    /* "a+" never truncates, so a file we reject is left byte-identical. */
    FILE *f = fopen(path, "a+");
    if (!f) return fail(err, errlen, 2, "%s: cannot open for appending: %s", path, strerror(errno));
    struct stat st;
    if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode)) {
        fclose(f);
        return fail(err, errlen, 2, "%s: not a regular file", path);
    }
    line_t l = {0};
    int rc = 0;
    if (st.st_size > 0) {
        char *first = NULL;
        int ends_nl = 1;
        if (read_existing(f, &first, &ends_nl) != 0) {
            rc = fail(err, errlen, 2, "%s: cannot read the existing header: %s", path, strerror(errno));
        } else if (header_diff(path, first, err, errlen) != 0) {
            rc = 2;
        } else if (!ends_nl && write_synced(f, "\n", 1) != 0) {
            /* A writer killed mid-row leaves no final newline; without one our first row would be glued
             * onto the partial line and both would be lost. */
            rc = fail(err, errlen, 2, "%s: cannot repair the missing final newline: %s", path, strerror(errno));
        }
        free(first);
    } else {
        line_header(&l);
        line_raw(&l, "\n", 1);
        if (l.oom || write_synced(f, l.s, l.len) != 0)
            rc = fail(err, errlen, 2, "%s: cannot write the header: %s", path, strerror(errno));
    }
    free(l.s);
    if (rc) { fclose(f); return rc; }
    r->f = f;
    strcpy(r->path, path);
    return 0;
}

int results_write(results_t *r, const results_row_t *row, char *err, size_t errlen) {
    if (!r->f) return fail(err, errlen, -1, "results file not open");
    line_t l = {0};
    line_row(&l, row);
    line_raw(&l, "\n", 1);
    int rc = 0;
    if (l.oom) rc = fail(err, errlen, -1, "%s: out of memory formatting a row", r->path);
    else if (write_synced(r->f, l.s, l.len) != 0)
        rc = fail(err, errlen, -1, "%s: write failed: %s", r->path, strerror(errno));
    free(l.s);
    return rc;
}

void results_close(results_t *r) {
    if (r->f) fclose(r->f);
    r->f = NULL;
}
