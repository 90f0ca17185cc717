/* schema.c — the schema table from RESULTS_SCHEMA (schema.h): the column descriptions the writer and the readers
 * walk, the names in file order, a row with every cell "not applicable", the bytes a name cell may hold; the status
 * names, a row's phase and its timestamp. */
#define _POSIX_C_SOURCE 200809L
#include "schema.h"

#include <math.h>
#include <string.h>
#include <time.h>

#define COLUMN_DESC(name, type, member, fmt, flags)                                                               \
    {#name, RESULTS_##type, RESULTS_F_##flags, offsetof(results_row_t, member),                                    \
     sizeof(((results_row_t *)0)->member), fmt},
const results_column_t results_schema[] = {RESULTS_SCHEMA(COLUMN_DESC)};
#define NCOLS ((int)(sizeof results_schema / sizeof results_schema[0]))
_Static_assert(sizeof results_schema / sizeof results_schema[0] == RESULTS_NCOLS, "one entry per column");
_Static_assert(sizeof results_schema / sizeof results_schema[0] <= 128,
               "the runs' scan (runs.c) keeps at most 128 columns");

#define COLUMN_NAME(name, type, member, fmt, flags) #name,
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

int results_name_byte_ok(int flags, unsigned char b) {
    if (!(flags & (RESULTS_F_NAME | RESULTS_F_SET))) return 1;
    return (b && strchr(RESULTS_NAME_CHARS, b)) || (b == '|' && (flags & RESULTS_F_SET));
}

int results_column_index(const char *name) {
    for (int i = 0; results_columns[i]; i++)
        if (strcmp(results_columns[i], name) == 0) return i;
    return -1;
}

const char *const run_status_names[RUN_STATUSES + 1] = {"ok",          "diverged",   "oom", "failed", "timeout",
                                                        "interrupted", "replicas-differ", NULL};

int run_status_parse(const char *cell) {
    for (int i = 0; cell && i < RUN_STATUSES; i++)
        if (strcmp(run_status_names[i], cell) == 0) return i;
    return -1;
}

const char *results_phase(int epoch) { return epoch == 0 ? "setup" : epoch == 1 ? "warmup" : "steady"; }

int results_is_steady(const results_row_t *row) {
    return row->phase && strcmp(row->phase, results_phase(2)) == 0 && row->stats.epoch_s >= 0 &&
           isfinite(row->stats.epoch_s);
}

void results_stamp(results_row_t *row) {
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(row->timestamp, sizeof row->timestamp, "%Y-%m-%dT%H:%M:%SZ", &tm);
}
