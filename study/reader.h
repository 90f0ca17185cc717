/* reader.h — any study CSV of this schema or an older one read by column name into rows (schema.h), whole or one
 * row at a time (committed studies have older headers); and the libcsv pass that both this reader and the runs' scan
 * (runs.h) make over a file. Host-only. */
#pragma once
#include <stdio.h>
#include <stddef.h>

#include "schema.h"


/* Rows read from a file: string members point into storage the table owns; a column the file lacks reads as a
 * missing value (numbers -1, strings "", seed 0). */
typedef struct {
    study_row_t *row;
    int n, cap;
    char **text;                /* per row, the block its strings point into */
    int bad_rows;               /* records with the wrong field count or a cell that does not parse, skipped */
    int missing;                /* schema columns the file's header lacks (an older version's file) */
    int unknown;                /* header columns this schema does not know, ignored */
    int oom;                    /* a copy ran out of memory */
} study_rows_t;

/* What one pass over a study CSV (study_pass) found besides its rows. */
typedef struct {
    long long bytes;            /* the bytes it read: a second pass given them as its limit reads the same records,
                                 * whatever a sweep has appended since */
    int rows;                   /* rows handed on */
    int bad_rows, missing, unknown;    /* as study_rows_t counts them */
} study_pass_t;

/* Reads path (libcsv) by column name. 0; 2 with a one-line message when the file cannot be read or its header has no
 * run_id column (not a scaling CSV). A missing or empty file is an error here: a report of nothing is a mistake. */
int study_read(const char *path, study_rows_t *t, char *err, size_t errlen);
/* Reads f from its start by column name, at most limit bytes (< 0: to its end), and hands each good row to fn as it
 * is parsed: its strings live until fn returns, so memory does not grow with the file. want (NULL: every row) is
 * asked first with the record's run_id, and a record it declines is not parsed: a second pass reads only the runs it
 * keeps. Checks and messages as study_read's, which is this pass with every row copied; fn may have seen rows of
 * a CSV that is refused in the end. */
int study_pass(FILE *f, const char *path, long long limit, int (*want)(const char *, void *),
               void (*fn)(const study_row_t *, void *), void *ctx, study_pass_t *p, char *err, size_t errlen);
/* Both readers' pass over a CSV file: libcsv's parser fed from f, field and row callbacks with ctx. 0, or 2 with
 * "PATH: why" in err (the parser, a read error). */
int study_csv_feed(FILE *f, const char *path, void (*field)(void *, size_t, void *), void (*row)(int, void *),
                   void *ctx, char *err, size_t errlen);
void study_rows_free(study_rows_t *t);
