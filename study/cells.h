/* cells.h — the all-reduce benchmark's CSV (`scaling --bench allreduce`, any version of its header) read into rows
 * of cells by column name, a missing column as empty: report/fit.c's reader. Host-only. */
#pragma once
#include <stddef.h>

/* Not the schema's reader (study_read): that one maps a header onto RESULTS_SCHEMA and skips a record without a
 * run_id, and a benchmark row has neither (its columns: allreduce.h). */
typedef struct {
    int ncols, nrows;
    char **names; /* ncols column names */
    char **cells; /* nrows x ncols, row-major */
    int dropped;  /* records whose field count differs from the header's (a line cut short by a kill) */
} study_cells_t;

/* Reads path with libcsv. 0 ok; 2 with a one-line message when it cannot be read or is empty. */
int study_cells_read(study_cells_t *t, const char *path, char *err, size_t errlen);
void study_cells_free(study_cells_t *t);
/* The column's index, or -1 when the file has no such column. */
int study_cells_col(const study_cells_t *t, const char *name);
/* Row r's cell of column col ("" for col < 0). */
const char *study_cells_at(const study_cells_t *t, int r, int col);
