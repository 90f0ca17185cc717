/* runs.c — the runs of a study CSV (runs.h): libcsv's pass keeping only the run id, epoch, status and key cells of
 * each record, each run's progress, and --resume's decision. */
#define _POSIX_C_SOURCE 200809L
#include "runs.h"
#include "reader.h"
#include "grow.h"
#include "../engine/errmsg.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One record as libcsv delivers it: only the cells the scan needs are kept, each RESULTS_CELL_MAX bytes (the
 * longest a key cell can be, key.h). */
#define SCAN_MAXF 128
typedef struct {
    int nf;                                 /* fields in the current record */
    int want[SCAN_MAXF];                    /* column -> 1 if kept */
    char cell[SCAN_MAXF][RESULTS_CELL_MAX];
    int header_done, header_bad, header_col;
    char header_got[64];
    study_scan_t *s;
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

static study_scan_run_t *scan_run(study_scan_t *s, const char *run_id) {
    /* Rows of a run are consecutive in practice, so the last run is checked first. */
    for (int i = s->n - 1; i >= 0; i--)
        if (strcmp(s->runs[i].run_id, run_id) == 0) return &s->runs[i];
    study_scan_run_t *runs = grow(s->runs, &s->cap, s->n, sizeof *s->runs, 64);
    if (!runs) return NULL;
    s->runs = runs;
    study_scan_run_t *r = &s->runs[s->n++];
    memset(r, 0, sizeof *r);
    snprintf(r->run_id, sizeof r->run_id, "%s", run_id);
    study_progress_init(&r->progress);
    return r;
}

static void scan_row(int term, void *ctx_) {
    (void)term;
    scan_ctx_t *c = ctx_;
    int nf = c->nf, ncols = study_ncolumns();
    c->nf = 0;
    if (!c->header_done) {
        c->header_done = 1;
        for (int i = 0; i <= ncols; i++) {
            const char *got = i < nf && i < SCAN_MAXF ? c->cell[i] : NULL;
            const char *want = study_columns[i];
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
    study_scan_run_t *r = scan_run(c->s, c->cell[c->col_run]);
    if (!r) { c->oom = 1; return; }
    for (int k = 0; k < RESULTS_KEY_FIELDS; k++) memcpy(r->key.cell[k], c->cell[c->col_key[k]], sizeof r->key.cell[k]);
    study_progress_add(&r->progress, (int)epoch, c->cell[c->col_status]);
}

int study_scan_add_row(study_scan_t *s, const study_row_t *row) {
    study_scan_run_t *r = scan_run(s, row->run_id);
    if (!r) return -1;
    s->rows++;
    study_key_of_row(row, &r->key);
    study_progress_add(&r->progress, row->epoch, row->status);
    return 0;
}

int study_scan(const char *path, study_scan_t *s, char *err, size_t errlen) {
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
    c->col_run = study_column_index("run_id");
    c->col_epoch = study_column_index("epoch");
    c->col_status = study_column_index("status");
    c->want[c->col_run] = c->want[c->col_epoch] = c->want[c->col_status] = 1;
    for (int k = 0; k < RESULTS_KEY_FIELDS; k++) {
        c->col_key[k] = study_column_index(study_key_columns[k]);
        c->want[c->col_key[k]] = 1;
    }
    int rc = study_csv_feed(f, path, scan_field, scan_row, c, err, errlen);
    fclose(f);
    if (!rc && c->header_bad)
        rc = errmsg(2, err, errlen, "%s: header differs from this version's columns (first difference at column %d: "
                  "'%s' vs '%s')", path, c->header_col, c->header_got,
                  c->header_col <= study_ncolumns() ? study_columns[c->header_col - 1] : "(none)");
    if (!rc && c->oom) rc = errmsg(2, err, errlen, "%s: out of memory scanning", path);
    free(c);
    if (rc) study_scan_free(s);
    return rc;
}

void study_scan_free(study_scan_t *s) {
    free(s->runs);
    memset(s, 0, sizeof *s);
}

int study_scan_done(const study_scan_t *s, const study_key_t *k, int epochs, int retry_failed, int *best) {
    int most = 0, done = 0, last_faulted = 0;
    for (int i = 0; i < s->n; i++) {
        const study_scan_run_t *r = &s->runs[i];
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
