/* config.c — "a configuration but its seed" (config.h): the key's columns of two runs compared in the key's order,
 * each by its schema type. */
#include "config.h"

#include <math.h>
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
