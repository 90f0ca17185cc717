/* config.c — "a configuration but its seed" (config.h): the key's columns of two runs compared in the key's order,
 * each by its schema type; the orders of a study's tables that extend it, and a stable sort of runs. */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Key column k of two rows, by its schema column's type. */
static int cmp_cell(const study_row_t *a, const study_row_t *b, int k) {
    const study_column_t *col = &study_schema[study_key_schema_cols[k]];
    switch (col->type) {
    case RESULTS_TEXT: return strcmp(RESULTS_CMEMBER(a, col, char), RESULTS_CMEMBER(b, col, char));
    case RESULTS_STR: {
        const char *x = study_cell(*RESULTS_CMEMBER(a, col, const char *));
        const char *y = study_cell(*RESULTS_CMEMBER(b, col, const char *));
        return k == RESULTS_KEY_math || k == RESULTS_KEY_grad_dtype ? study_math_cmp(x, y) : strcmp(x, y);
    }
    case RESULTS_U64: {
        unsigned long long x = *RESULTS_CMEMBER(a, col, unsigned long long);
        unsigned long long y = *RESULTS_CMEMBER(b, col, unsigned long long);
        return (x > y) - (x < y);
    }
    case RESULTS_NUM: return study_cmp_num(*RESULTS_CMEMBER(a, col, double), *RESULTS_CMEMBER(b, col, double));
    default: return study_cmp_int(*RESULTS_CMEMBER(a, col, int), *RESULTS_CMEMBER(b, col, int));
    }
}

/* Whether key column k of a row is an empty cell (as the writer writes "not applicable"). */
static int cell_empty(const study_row_t *r, int k) {
    const study_column_t *col = &study_schema[study_key_schema_cols[k]];
    switch (col->type) {
    case RESULTS_TEXT: return !*RESULTS_CMEMBER(r, col, char);
    case RESULTS_STR: return !*study_cell(*RESULTS_CMEMBER(r, col, const char *));
    case RESULTS_NUM: return *RESULTS_CMEMBER(r, col, double) < 0;
    case RESULTS_INT: return *RESULTS_CMEMBER(r, col, int) < 0;
    case RESULTS_COUNT: return *RESULTS_CMEMBER(r, col, int) <= 0;
    default: return 0;
    }
}

int study_cmp_config(const study_run_t *a, const study_run_t *b, unsigned opts) {
    opts |= STUDY_CMP_SKIP(RESULTS_KEY_seed);
    int c = 0;
    for (int k = 0; !c && k < RESULTS_KEY_FIELDS; k++) {
        if (opts & STUDY_CMP_SKIP(k)) continue;
        if (k == RESULTS_KEY_nodes) c = study_cmp_int(a->nodes, b->nodes);
        else if (k == RESULTS_KEY_nccl_transport) c = strcmp(a->link, b->link);
        else if (!study_key_wildcard(k) || !(cell_empty(a->rows[0], k) || cell_empty(b->rows[0], k)))
            c = cmp_cell(a->rows[0], b->rows[0], k);
    }
    if (!c && (opts & STUDY_CMP_COMMIT)) c = strcmp(a->env->git_commit, b->env->git_commit);
    return c;
}

double study_run_lr(const study_run_t *r) { return r->rows[0]->lr >= 0 ? r->rows[0]->lr : NAN; }

int study_cmp_prec(const study_run_t *a, const study_run_t *b) {
    int c = study_math_cmp(a->math, b->math);
    return c ? c : study_math_cmp(a->gd, b->gd);
}

int study_run_class(const study_run_t *r) { return r->pipe ? 2 : study_is_reference(r->info) ? 0 : 1; }

int study_cmp_row(const study_run_t *a, const study_run_t *b) {
    int c = study_cmp_int(study_run_class(a), study_run_class(b));
    if (!c) c = strcmp(a->strategy, b->strategy);
    if (!c) c = study_cmp_int(a->gpus, b->gpus);
    if (!c) c = strcmp(a->sched, b->sched);
    if (!c) c = study_cmp_int(a->line_batch, b->line_batch);
    if (!c) c = study_cmp_int(a->micro, b->micro);
    if (!c) c = strcmp(a->link, b->link);
    return c;
}

int study_cmp_row_config(const study_run_t *a, const study_run_t *b) {
    int c = study_cmp_row(a, b);
    return c ? c : study_cmp_config(a, b, STUDY_CMP_COMMIT);
}

/* A stable merge sort: runs of one key stay in the order they started. */
static void merge_sort(const study_run_t **a, const study_run_t **tmp, int n,
                       int (*cmp)(const study_run_t *, const study_run_t *)) {
    if (n < 2) return;
    int h = n / 2;
    merge_sort(a, tmp, h, cmp);
    merge_sort(a + h, tmp, n - h, cmp);
    int i = 0, j = h, k = 0;
    while (i < h && j < n) tmp[k++] = cmp(a[j], a[i]) < 0 ? a[j++] : a[i++];
    while (i < h) tmp[k++] = a[i++];
    while (j < n) tmp[k++] = a[j++];
    memcpy(a, tmp, (size_t)n * sizeof *a);
}

void study_runs_sort(const study_run_t **a, int n, int (*cmp)(const study_run_t *, const study_run_t *)) {
    const study_run_t **tmp = mem_alloc((size_t)(n ? n : 1) * sizeof *tmp);
    merge_sort(a, tmp, n, cmp);
    free(tmp);
}

const study_run_t **study_runs_sorted(const study_runs_t *s, int g, int (*keep)(const study_run_t *),
                                       int (*cmp)(const study_run_t *, const study_run_t *), int *n) {
    const study_run_t **a = mem_alloc((size_t)(s->nr ? s->nr : 1) * sizeof *a);
    *n = 0;
    for (int i = 0; i < s->nr; i++)
        if ((g < 0 || s->run[i].group == g) && (!keep || keep(&s->run[i]))) a[(*n)++] = &s->run[i];
    if (cmp) study_runs_sort(a, *n, cmp);
    return a;
}
