/* key.c — the configuration key (key.h): its columns, a row's key read back through libcsv from the line the writer
 * formats, and when two keys are one configuration. */
#include "key.h"
#include "writer.h"
#include "mem.h"

#include <csv.h>
#include <stdlib.h>
#include <string.h>

#define KEY_NAME(name) #name,
const char *const study_key_columns[RESULTS_KEY_FIELDS] = {RESULTS_KEY(KEY_NAME)};
#undef KEY_NAME
#define KEY_COL(name) RESULTS_COL_##name,
const study_col_t study_key_schema_cols[RESULTS_KEY_FIELDS] = {RESULTS_KEY(KEY_COL)};
#undef KEY_COL

/* One formatted row as libcsv splits it: the key columns' cells, cut to RESULTS_CELL_MAX as the scan cuts them. */
typedef struct {
    int nf;
    int col[RESULTS_KEY_FIELDS];    /* the schema column of each key cell */
    study_key_t *k;
} key_ctx_t;

static void key_field(void *data, size_t len, void *ctx_) {
    key_ctx_t *c = ctx_;
    int i = c->nf++;
    size_t n = len < RESULTS_CELL_MAX - 1 ? len : RESULTS_CELL_MAX - 1;
    for (int f = 0; f < RESULTS_KEY_FIELDS; f++)
        if (c->col[f] == i) {
            memcpy(c->k->cell[f], data ? data : "", n);
            c->k->cell[f][n] = '\0';
        }
}

/* The key is taken from the formatted row, through the same parser as the scan, so the two cannot format a
 * number differently. */
void study_key_of_row(const study_row_t *row, study_key_t *k) {
    memset(k, 0, sizeof *k);
    bytes_t b = {0};
    study_line(&b, row);
    key_ctx_t c = {.k = k};
    for (int f = 0; f < RESULTS_KEY_FIELDS; f++) c.col[f] = (int)study_key_schema_cols[f];
    struct csv_parser p;
    if (!b.oom && csv_init(&p, 0) == 0) {
        /* Parse fields only: the row callback is not needed, the cells go straight into k. */
        csv_parse(&p, b.s, b.len, key_field, NULL, &c);
        csv_fini(&p, key_field, NULL, &c);
        csv_free(&p);
    }
    free(b.s);
}

int study_key_wildcard(int column) {
    return column >= 0 && column < RESULTS_KEY_FIELDS &&
           (study_schema[study_key_schema_cols[column]].flags & RESULTS_F_WILD);
}

int study_key_match_cells(const char *const *a, const char *const *b) {
    for (int i = 0; i < RESULTS_KEY_FIELDS; i++) {
        if ((!*a[i] || !*b[i]) && study_key_wildcard(i)) continue;
        if (strcmp(a[i], b[i]) != 0) return 0;
    }
    return 1;
}

int study_key_match_commit(const char *const *a, const char *ca, const char *const *b, const char *cb) {
    return study_key_match_cells(a, b) && strcmp(ca, cb) == 0;
}

unsigned long long study_key_hash_cells(const char *const *k, const char *commit) {
    unsigned long long h = MEM_HASH_SEED;
    for (int f = 0; f < RESULTS_KEY_FIELDS; f++)
        if (!study_key_wildcard(f)) h = mem_hash(h, k[f], strlen(k[f]) + 1);
    return mem_hash(h, commit, strlen(commit));
}

int study_key_match(const study_key_t *a, const study_key_t *b) {
    const char *x[RESULTS_KEY_FIELDS], *y[RESULTS_KEY_FIELDS];
    for (int i = 0; i < RESULTS_KEY_FIELDS; i++) x[i] = a->cell[i], y[i] = b->cell[i];
    return study_key_match_cells(x, y);
}

void study_key_merge_cells(const char **into, const char *const *k) {
    for (int i = 0; i < RESULTS_KEY_FIELDS; i++)
        if (!*into[i]) into[i] = k[i];
}

void study_key_merge(study_key_t *into, const study_key_t *k) {
    for (int i = 0; i < RESULTS_KEY_FIELDS; i++)
        if (!into->cell[i][0]) memcpy(into->cell[i], k->cell[i], sizeof into->cell[i]);
}
