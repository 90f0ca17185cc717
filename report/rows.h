/* rows.h — the all-reduce benchmark's CSV (`scaling --bench allreduce`, any version of its header) read into rows
 * of cells looked up by column name, a column the file lacks reading as empty: fit.c's reader. The study CSV is read
 * by the schema's reader (study_read), which maps a header onto RESULTS_SCHEMA and skips a record without a run_id:
 * a benchmark row has neither (its columns: study/allreduce.h). Host-only. */
#pragma once
#include <stddef.h>

typedef struct {
    int ncols, nrows;
    char **names; /* ncols column names */
    char **cells; /* nrows x ncols, row-major */
    int dropped;  /* records whose field count differs from the header's (a line cut short by a kill) */
} rows_t;

/* Reads path with libcsv. 0 ok; 2 with a one-line message when it cannot be read or is empty. */
int rows_read(rows_t *t, const char *path, char *err, size_t errlen);
void rows_free(rows_t *t);
/* The column's index, or -1 when the file has no such column. */
int rows_col(const rows_t *t, const char *name);
/* Row r's cell of column col ("" for col < 0). */
const char *rows_cell(const rows_t *t, int r, int col);
