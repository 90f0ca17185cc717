/* runs.h — the runs of a study CSV (one per run_id): each run's configuration key and how far it got, scanned from a
 * file of this version's header; --resume's decision of what to run again. Host-only. */
#pragma once
#include <stddef.h>

#include "key.h"
#include "study.h"

/* One run (one run_id) found in the CSV. A run whose rows stop short (killed) is re-run from epoch 1 under a
 * new run_id; its rows stay in the CSV and summaries use the latest complete run of each configuration. */
typedef struct {
    char run_id[64];
    study_key_t key;
    study_progress_t progress;  /* how far it got: study.h's "complete" reads it */
} study_scan_run_t;

typedef struct {
    study_scan_run_t *runs;
    int n, cap;
    int rows;           /* data rows read */
    int bad_rows;       /* records with the wrong number of fields (a line cut short by a kill), skipped */
} study_scan_t;

/* Reads path with libcsv's parser. A missing or empty file is an empty scan. 0 ok; 2 with a one-line message
 * when the file cannot be read or its header is not this version's. */
int study_scan(const char *path, study_scan_t *s, char *err, size_t errlen);
void study_scan_free(study_scan_t *s);
/* Adds one row to its run (a new run for a new run_id), keyed as study_key_of_row keys it: the runs of rows in
 * memory (read by study_read, or written by a sweep), as study_scan finds them in a file. s starts zeroed. 0, or
 * -1 when out of memory. */
int study_scan_add_row(study_scan_t *s, const study_row_t *row);
/* The resume decision: 1 if a run of k's configuration is complete for `epochs` epochs (study_complete with
 * retry_failed: a faulted run is not), or its latest run faulted (failed, timeout, replicas-differ) and retry_failed
 * is 0, so the configuration is skipped; 0 if it must run (again): never run, killed or interrupted (a signal or a
 * time limit is no verdict on it). *best gets the most epochs any run of it trained. */
int study_scan_done(const study_scan_t *s, const study_key_t *k, int epochs, int retry_failed, int *best);
