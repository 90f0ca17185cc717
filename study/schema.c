/* schema.c — the schema table from RESULTS_SCHEMA (schema.h): the column descriptions the writer and the readers
 * walk, the names in file order, a row with every cell "not applicable", the bytes a name cell may hold; the status
 * names, a row's phase and its timestamp. */
#define _POSIX_C_SOURCE 200809L
#include "schema.h"

#include <math.h>
#include <string.h>
#include <time.h>

#define COLUMN_DESC(name, type, member, fmt, flags)                                                               \
    {#name, RESULTS_##type, RESULTS_F_##flags, offsetof(study_row_t, member),                                    \
     sizeof(((study_row_t *)0)->member), fmt},
const study_column_t study_schema[] = {RESULTS_SCHEMA(COLUMN_DESC)};
#define NCOLS ((int)(sizeof study_schema / sizeof study_schema[0]))
_Static_assert(sizeof study_schema / sizeof study_schema[0] == RESULTS_NCOLS, "one entry per column");
_Static_assert(sizeof study_schema / sizeof study_schema[0] <= 128,
               "the runs' scan (runs.c) keeps at most 128 columns");

#define COLUMN_NAME(name, type, member, fmt, flags) #name,
const char *const study_columns[] = {RESULTS_SCHEMA(COLUMN_NAME) NULL};

int study_ncolumns(void) {
    return NCOLS;
}

void study_row_init(study_row_t *row) {
    memset(row, 0, sizeof *row);
    for (int i = 0; i < NCOLS; i++) {
        const study_column_t *c = &study_schema[i];
        if (c->type == RESULTS_INT || c->type == RESULTS_COUNT || c->type == RESULTS_REPLICAS)
            *RESULTS_MEMBER(row, c, int) = -1;
        else if (c->type == RESULTS_NUM) *RESULTS_MEMBER(row, c, double) = -1;
    }
}

int study_name_byte_ok(int flags, unsigned char b) {
    if (!(flags & (RESULTS_F_NAME | RESULTS_F_SET))) return 1;
    return (b && strchr(RESULTS_NAME_CHARS, b)) || (b == '|' && (flags & RESULTS_F_SET));
}

int study_column_index(const char *name) {
    for (int i = 0; study_columns[i]; i++)
        if (strcmp(study_columns[i], name) == 0) return i;
    return -1;
}

const char *const study_status_names[RUN_STATUSES + 1] = {"ok",          "diverged",   "oom", "failed", "timeout",
                                                        "interrupted", "replicas-differ", NULL};

int study_status_parse(const char *cell) {
    for (int i = 0; cell && i < RUN_STATUSES; i++)
        if (strcmp(study_status_names[i], cell) == 0) return i;
    return -1;
}

const char *study_phase(int epoch) { return epoch == 0 ? "setup" : epoch == 1 ? "warmup" : "steady"; }

int study_is_steady(const study_row_t *row) {
    return row->phase && strcmp(row->phase, study_phase(2)) == 0 && row->stats.epoch_s >= 0 &&
           isfinite(row->stats.epoch_s);
}

void study_stamp(study_row_t *row) {
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(row->timestamp, sizeof row->timestamp, "%Y-%m-%dT%H:%M:%SZ", &tm);
}
