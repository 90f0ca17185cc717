/* fit.c — least-squares α-β fits of all-reduce benchmark rows (fit.h), minimising the relative error
 * Σ (α x1/t + β x2/t − 1)²: the normal equations of a two-parameter linear model. */
#include "fit.h"
#include "../study/cells.h"
#include "../study/table.h" /* study_isnum, mem */
#include "../study/allreduce.h"
#include "../engine/errmsg.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void fit_add(fit_t *k, int n, double S, double t) {
    int c1 = k->cap, c2 = k->cap;   /* three arrays, one capacity: each grows from the same one to the same one */
    mem_reserve((void **)&k->x1, &c1, k->n + 1, sizeof *k->x1);
    mem_reserve((void **)&k->x2, &c2, k->n + 1, sizeof *k->x2);
    mem_reserve((void **)&k->t, &k->cap, k->n + 1, sizeof *k->t);
    k->x1[k->n] = 2.0 * (n - 1);
    k->x2[k->n] = (k->ring ? 2.0 * (n - 1) / n : 2.0 * (n - 1)) * S;
    k->t[k->n] = t;
    k->n++;
    int seen = 0;
    for (const char *p = k->gpus; p && *p && !seen;) {
        char *end;
        seen = strtol(p, &end, 10) == n;
        p = end + strspn(end, ", ");
    }
    if (!seen) {
        char *g = mem_printf("%s%s%d", k->gpus ? k->gpus : "", k->gpus ? ", " : "", n);
        free(k->gpus);
        k->gpus = g;
    }
    if (k->n == 1 || S > k->bmax) k->bmax = S;
    if (k->n == 1 || S < k->bmin) k->bmin = S;
}

void fit_free(fit_t *k) {
    free(k->x1), free(k->x2), free(k->t);
    free(k->name), free(k->strategy), free(k->algo), free(k->type), free(k->gpus);
}

void fit_solve(fit_t *k) {
    double saa = 0, sab = 0, sbb = 0, sa = 0, sb = 0;
    for (int i = 0; i < k->n; i++) {
        double a = k->x1[i] / k->t[i], b = k->x2[i] / k->t[i];
        saa += a * a;
        sab += a * b;
        sbb += b * b;
        sa += a;
        sb += b;
    }
    double det = saa * sbb - sab * sab;
    if (k->n < 2 || det == 0) {
        k->bad = 1;
        return;
    }
    k->alpha = (sa * sbb - sb * sab) / det;
    k->beta = (saa * sb - sab * sa) / det;
    k->err = 0;
    for (int i = 0; i < k->n; i++) {
        double e = fabs((k->alpha * k->x1[i] + k->beta * k->x2[i]) / k->t[i] - 1);
        if (e > k->err) k->err = e;
    }
}

static fit_t *fit_find(fits_t *f, const char *name) {
    for (int i = 0; i < f->n; i++)
        if (strcmp(f->fit[i].name, name) == 0) return &f->fit[i];
    return NULL;
}

/* The cells a fit is named after go into REPORT.md's tables and code spans: as in a study CSV's name cells
 * (study/schema.h), a byte outside RESULTS_NAME_CHARS (HTML, a table's '|', a backtick) refuses the file. 0, or 2
 * with one line naming the record and the column. */
static int check_names(const study_cells_t *t, const char *path, const int *cols, int ncols, char *err, size_t errlen) {
    for (int r = 0; r < t->nrows; r++)
        for (int i = 0; i < ncols; i++)
            for (const unsigned char *p = (const unsigned char *)study_cells_at(t, r, cols[i]); *p; p++)
                if (!study_name_byte_ok(RESULTS_F_NAME, *p))
                    return errmsg(2, err, errlen,
                                  "%s: record %d, column %s: byte 0x%02x is not allowed in a name (" RESULTS_NAME_WORDS
                                  ")", path, r + 1, t->names[cols[i]], *p);
    return 0;
}

/* "no columns" and the columns a fit needs (ALLREDUCE_F_FIT), each with its older name: 1 with that in err. */
static int no_columns(char *err, size_t errlen) {
    bytes_t b = {0};
    text_printf(&b, "no columns");
    for (int c = 0, k = 0; c < ALLREDUCE_NCOLS; c++) {
        const allreduce_column_t *d = &allreduce_columns[c];
        if (!(d->flags & ALLREDUCE_F_FIT)) continue;
        text_printf(&b, "%s %s", k++ ? "," : "", d->name);
        if (d->old) text_printf(&b, " (or %s)", d->old);
    }
    int rc = errmsg(1, err, errlen, "%s", b.s);
    free(b.s);
    return rc;
}

int fits_read(fits_t *f, const char *path, const char *tag, const strategy_info_t *const *infos, char *err,
              size_t errlen) {
    study_cells_t t;
    int rc = study_cells_read(&t, path, err, errlen);
    if (rc) return rc;
    int col[ALLREDUCE_NCOLS], missing = 0;
    for (int c = 0; c < ALLREDUCE_NCOLS; c++) {
        const allreduce_column_t *d = &allreduce_columns[c];
        col[c] = study_cells_col(&t, d->name);
        if (col[c] < 0 && d->old) col[c] = study_cells_col(&t, d->old);
        missing |= col[c] < 0 && (d->flags & ALLREDUCE_F_FIT);
    }
    if (missing) {
        study_cells_free(&t);
        return no_columns(err, errlen);
    }
    const int cs = col[ALLREDUCE_COL_strategy], cg = col[ALLREDUCE_COL_gpus], cb = col[ALLREDUCE_COL_size_bytes],
              ct = col[ALLREDUCE_COL_time_us], ca = col[ALLREDUCE_COL_algo], cy = col[ALLREDUCE_COL_type],
              cw = col[ALLREDUCE_COL_wrong];
    const int names[] = {cs, ca, cy};
    if (check_names(&t, path, names, 3, err, errlen)) {
        study_cells_free(&t);
        return 2;
    }
    int first = f->n;
    for (int r = 0; r < t.nrows; r++) {
        const char *strat = study_cells_at(&t, r, cs), *algo = study_cells_at(&t, r, ca);
        const char *type = study_cells_at(&t, r, cy);
        const char *wrong = study_cells_at(&t, r, cw);
        if (!*type) type = "float";
        int n = atoi(study_cells_at(&t, r, cg));
        double S = atof(study_cells_at(&t, r, cb)), us = atof(study_cells_at(&t, r, ct));
        if (n < 2 || S <= 0 || us <= 0 || (study_isnum(wrong) && atof(wrong) > 0)) continue;
        char *par = mem_printf("%s%s%s", algo, strcmp(type, "float") ? (*algo ? ", " : "") : "",
                               strcmp(type, "float") ? type : "");
        char *name = mem_printf("%s%s%s%s%s", tag, strat, *par ? " (" : "", par, *par ? ")" : "");
        free(par);
        fit_t *k = fit_find(f, name);
        if (k) free(name);
        else {
            k = MEM_PUSH(f->fit, f->n, f->cap);
            k->name = name;
            k->strategy = mem_printf("%s%s", tag, strat);
            k->algo = mem_printf("%s", algo);
            k->type = mem_printf("%s", type);
            k->tag = tag;
            const strategy_info_t *info = strategy_info_find(infos, strat);
            k->ring = !info || info->allreduce != STRATEGY_AR_CENTRAL;
            k->nccl = info && info->allreduce == STRATEGY_AR_NCCL;
        }
        fit_add(k, n, S, us);
    }
    study_cells_free(&t);
    for (int i = first; i < f->n; i++) fit_solve(&f->fit[i]);
    return 0;
}

void fits_free(fits_t *f) {
    for (int i = 0; i < f->n; i++) fit_free(&f->fit[i]);
    free(f->fit);
    memset(f, 0, sizeof *f);
}

static const fit_t *find3(const fits_t *f, const char *s, const char *algo, const char *type) {
    for (int i = 0; i < f->n; i++)
        if (!strcmp(f->fit[i].strategy, s) && !strcmp(f->fit[i].algo, algo) && !strcmp(f->fit[i].type, type))
            return &f->fit[i];
    return NULL;
}
static const fit_t *first_of(const fits_t *f, const char *s, const char *type, int cast) {
    for (int i = 0; i < f->n; i++) {
        const fit_t *k = &f->fit[i];
        size_t l = strlen(k->algo);
        if (!strcmp(k->strategy, s) && !strcmp(k->type, type) &&
            (!cast || (l >= 5 && !strcmp(k->algo + l - 5, "+cast"))))
            return k;
    }
    return NULL;
}

const fit_t *fit_of(const fits_t *f, const char *s, const char *algo, const char *type) {
    if (!*type) type = "float";
    const fit_t *k = find3(f, s, algo, type);
    return k ? k : first_of(f, s, type, 0);
}

const fit_t *fit_of_grads(const fits_t *f, const char *s, const char *algo, const char *gd, int *lent) {
    *lent = 0;
    int bf16 = strcmp(gd, "bf16") == 0 || strcmp(gd, "fp16") == 0;
    char *cast = mem_printf("%s+cast", algo);
    const fit_t *k = bf16 ? find3(f, s, cast, "bfloat16") : NULL;
    free(cast);
    if (k) return k;
    if (bf16 && (k = first_of(f, s, "bfloat16", 1))) return k;
    k = fit_of(f, s, algo, bf16 ? "bfloat16" : "float");
    if (k || !bf16) return k;
    k = fit_of(f, s, algo, "float");
    *lent = k != NULL;
    return k;
}

const fit_t *fit_nccl(const fits_t *f, const char *tag, const char *type) {
    const fit_t *first = NULL;
    for (int i = 0; i < f->n; i++) {
        const fit_t *k = &f->fit[i];
        if (!k->nccl || strcmp(k->tag, tag) || strcmp(k->type, type)) continue;
        if (first && strcmp(k->strategy, first->strategy)) continue; /* the first such strategy's only */
        if (!*k->algo) return k;
        if (!first) first = k;
    }
    return first;
}

double fit_allreduce_ms(const fit_t *k, int n, double S) {
    if (n < 2) return 0;
    if (!k || k->bad || isnan(S)) return NAN;
    return (2.0 * (n - 1) * k->alpha + (k->ring ? 2.0 * (n - 1) / n : 2.0 * (n - 1)) * S * k->beta) / 1e3;
}

int fit_usable(const fit_t *k) { return k && !k->bad && k->alpha >= 0 && k->beta > 0; }
