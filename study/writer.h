/* writer.h — a study CSV written from the schema (schema.h): a fixed header checked on append, libcsv quoting, one
 * row per epoch, flushed and synced, so a killed sweep loses at most the epoch in progress. Host-only. */
#pragma once
#include <stdio.h>
#include <stddef.h>

#include "bytes.h"
#include "schema.h"

typedef struct {
    FILE *f;
    char path[4096];            /* PATH_MAX */
} study_csv_t;

/* Opens path for appending. A new or empty file gets the header; an existing file must have exactly this
 * header, otherwise returns 2 with a one-line message ("<path>: header differs from this version's ...").
 * Parent directories are created. */
int study_open(study_csv_t *r, const char *path, char *err, size_t errlen);
/* Read-only: 2 with study_open's one-line message when path exists with another header, else 0. Lets the
 * command refuse a foreign CSV before anything else (even on a machine without a GPU) while writing nothing. */
int study_check(const char *path, char *err, size_t errlen);
/* Writes one row with libcsv quoting, then fflush + fsync, under an exclusive flock (as study_open writes the
 * header), so sweeps appending to one file at once interleave whole rows under one header. 0 ok, -1 on an I/O error
 * (message in err). */
int study_write(study_csv_t *r, const study_row_t *row, char *err, size_t errlen);
void study_close(study_csv_t *r);
/* Formats one row to a caller buffer as the CSV line (without newline), for tests and the table. */
int study_format(const study_row_t *row, char *buf, size_t len);
/* Appends row's CSV line (without newline) to b, cells as study_write writes them (b->oom set when memory ran
 * out): what study_format copies and the configuration key (key.h) parses. */
void study_line(bytes_t *b, const study_row_t *row);
