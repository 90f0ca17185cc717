/* select.h — the first of the table's two passes over a study CSV (table.h): every run found by id with its key,
 * progress and first time, the runs grouped into configurations and the one kept for each (study_pick). Host-only. */
#pragma once
#include "table.h"

/* A run of the file before selection: its key (the cells --resume's key holds, and its commit: a CSV holding two
 * commits' runs is two studies side by side, not one superseding the other), progress and first timestamp. The
 * strings live in the table's pool: what a run costs here does not grow with its rows. */
typedef struct {
    const char *id, *first_ts, *commit;
    const char *const *key;                 /* the key's cells, shared by the runs that wrote the same ones */
    unsigned long long hash;                /* study_key_hash_cells of key and commit: equal for one configuration */
    study_progress_t prog;
    int config, keep;
    int run;                                /* its index among the table's runs, -1: not reported */
} study_cand_t;

typedef struct {
    study_runs_t *s;                        /* the table: its pool, machines (envs), allruns and leftout */
    study_cand_t *c;                        /* the file's runs, in the order of their first row */
    int n, cap;
    smap_t ids;                             /* run id -> its index in c */
    smap_t keys;                            /* a key's values as read (select.c) -> its index in key */
    const char ***key;
    int nkey, capkey;
    smap_t envs;                            /* a machine's cells joined -> its index in s->envs */
    bytes_t join;                           /* the cells being joined */
} study_select_t;

void study_select_init(study_select_t *l, study_runs_t *s);
/* The first pass's row (study_pass's fn, ctx the study_select_t): its run found, or made at its first row, and the
 * row's progress, time and machine noted. */
void study_select_row(const study_row_t *row, void *ctx);
/* After the pass: the runs grouped into configurations, keep set on the one that stands for each; s->allruns and
 * s->leftout. */
void study_select_runs(study_select_t *l);
/* The run of this id, or NULL. */
study_cand_t *study_select_find(const study_select_t *l, const char *run_id);
void study_select_free(study_select_t *l);
