/* table.h — the human-readable result table on stdout, in the manner of nccl-tests: a '#' header,
 * one fixed-width line per epoch, a per-run summary over steady epochs. Host-only. */
#pragma once
#include <stdio.h>
#include "../study/schema.h"

/* '#'-prefixed header naming the columns. */
void table_header(FILE *f);
/* One fixed-width line for an epoch row. */
void table_row(FILE *f, const study_row_t *row);
/* Summary of a run over its steady epochs (phase "steady"): mean epoch seconds, min-max spread, images/s,
 * final test accuracy. n may be 0 (no steady epoch: says so). */
void table_summary(FILE *f, const study_row_t *rows, int n);
/* A stdout whose reader went away (`scaling ... | head`): the table is a view of the study, whose result is the CSV,
 * so the study goes on without it (SIGPIPE is ignored, a write fails with EPIPE). Called between runs: the first time
 * it finds stdout's reader gone it says so in one stderr line and points stdout at /dev/null, which the next runs'
 * processes inherit. */
void table_stdout_check(const char *csv);
