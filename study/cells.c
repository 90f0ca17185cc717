/* cells.c — reads an all-reduce benchmark CSV with libcsv into rows of cells (cells.h); tabs and line breaks inside a
 * cell become spaces, as the report's fits write cells into Markdown tables. */
#include "cells.h"
#include "grow.h"
#include "../engine/errmsg.h"

#include <csv.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    study_cells_t *t;
    char **rec; /* the record being read */
    int nf, cap;
    size_t ncell, capcell;
    int header_done, oom;
} reader_t;

static void on_field(void *data, size_t len, void *ctx) {
    reader_t *r = ctx;
    if (r->oom) return;
    char **p = grow(r->rec, &r->cap, r->nf, sizeof *p, 64);
    if (!p) {
        r->oom = 1;
        return;
    }
    r->rec = p;
    char *s = malloc(len + 1);
    if (!s) {
        r->oom = 1;
        return;
    }
    if (len) memcpy(s, data, len);
    s[len] = '\0';
    for (char *c = s; *c; c++)
        if (*c == '\t' || *c == '\n' || *c == '\r') *c = ' ';
    r->rec[r->nf++] = s;
}

static void drop(reader_t *r) {
    for (int i = 0; i < r->nf; i++) free(r->rec[i]);
    r->nf = 0;
}

static void on_record(int term, void *ctx) {
    (void)term;
    reader_t *r = ctx;
    study_cells_t *t = r->t;
    if (r->oom) {
        drop(r);
        return;
    }
    if (!r->header_done) {
        r->header_done = 1;
        t->ncols = r->nf;
        t->names = malloc((size_t)r->nf * sizeof *t->names);
        if (!t->names) {
            r->oom = 1;
            drop(r);
            return;
        }
        memcpy(t->names, r->rec, (size_t)r->nf * sizeof *t->names);
        r->nf = 0;
        return;
    }
    if (r->nf != t->ncols) {
        t->dropped++;
        drop(r);
        return;
    }
    if (r->ncell + (size_t)t->ncols > r->capcell) {
        size_t cap = r->capcell ? 2 * r->capcell : 4096;
        while (cap < r->ncell + (size_t)t->ncols) cap *= 2;
        char **p = realloc(t->cells, cap * sizeof *p);
        if (!p) {
            r->oom = 1;
            drop(r);
            return;
        }
        t->cells = p;
        r->capcell = cap;
    }
    memcpy(t->cells + r->ncell, r->rec, (size_t)t->ncols * sizeof *t->cells);
    r->ncell += (size_t)t->ncols;
    t->nrows++;
    r->nf = 0;
}

int study_cells_read(study_cells_t *t, const char *path, char *err, size_t errlen) {
    memset(t, 0, sizeof *t);
    FILE *f = fopen(path, "rb");
    if (!f) return errmsg(2, err, errlen, "%s: cannot read: %s", path, strerror(errno));
    reader_t r = {.t = t};
    struct csv_parser p;
    if (csv_init(&p, 0) != 0) {
        fclose(f);
        return errmsg(2, err, errlen, "%s: cannot initialise the CSV parser", path);
    }
    int rc = 0;
    char buf[65536];
    size_t n;
    while (!rc && (n = fread(buf, 1, sizeof buf, f)) > 0)
        if (csv_parse(&p, buf, n, on_field, on_record, &r) != n)
            rc = errmsg(2, err, errlen, "%s: %s", path, csv_strerror(csv_error(&p)));
    if (!rc && ferror(f)) rc = errmsg(2, err, errlen, "%s: read error: %s", path, strerror(errno));
    if (!rc) csv_fini(&p, on_field, on_record, &r);
    csv_free(&p);
    fclose(f);
    drop(&r);
    free(r.rec);
    if (!rc && r.oom) rc = errmsg(2, err, errlen, "%s: out of memory", path);
    if (!rc && !r.header_done) rc = errmsg(2, err, errlen, "%s: empty file", path);
    if (rc) study_cells_free(t);
    return rc;
}

void study_cells_free(study_cells_t *t) {
    for (int i = 0; t->names && i < t->ncols; i++) free(t->names[i]);
    for (size_t i = 0; t->cells && i < (size_t)t->nrows * (size_t)t->ncols; i++) free(t->cells[i]);
    free(t->names);
    free(t->cells);
    memset(t, 0, sizeof *t);
}

int study_cells_col(const study_cells_t *t, const char *name) {
    for (int i = 0; i < t->ncols; i++)
        if (strcmp(t->names[i], name) == 0) return i;
    return -1;
}

const char *study_cells_at(const study_cells_t *t, int r, int col) {
    if (col < 0 || r < 0 || r >= t->nrows) return "";
    return t->cells[(size_t)r * (size_t)t->ncols + (size_t)col];
}
