/* config.h — "a configuration but its seed" between two runs of the loaded study (table.h): one order over the key's
 * columns (key.h), which the answer's rows, the summary's rows and the baseline's matching extend. Host-only. */
#pragma once
#include "table.h"

/* What study_cmp_config leaves out or adds. STUDY_CMP_SKIP(RESULTS_KEY_<name>) leaves a key column out (the answer
 * keeps a row's learning rates together); STUDY_CMP_COMMIT compares the commit last, as the run table tells two
 * commits' runs apart (within one study, two commits are two studies side by side). */
#define STUDY_CMP_SKIP(key_col) (1u << (key_col))
#define STUDY_CMP_COMMIT (1u << RESULTS_KEY_FIELDS)

/* Orders two runs by their first rows' key columns in the key's order, the seed left out: < 0, 0, > 0 as strcmp,
 * 0 for the seeds of one configuration. Numbers compare as numbers, math and grad_dtype in the study's order
 * (study_math_cmp). As in a key, an empty cell of a WILD column equals any value (a run that failed at setup has no
 * steps yet), so the order is total only among runs whose WILD cells are set alike; a sort keeps its ties adjacent.
 * nodes and nccl_transport compare as the link the run's GPUs talked over (study_run_t.nodes and .link, which leave
 * out NCCL_HOSTID: it names the nodes, so the same run on other hosts is the same configuration). */
int study_cmp_config(const study_run_t *a, const study_run_t *b, unsigned opts);

/* The run's learning rate as a number (its first row's; study_run_t.lr is the same as text), NAN where it has none. */
double study_run_lr(const study_run_t *r);

/* The orders a study reads in, for study_runs_sort (ties: the order the runs started): precision (math, then gradient
 * dtype); a strategy's place and a table's row key (the reference first, then replicas, then pipelines, each by
 * name; GPUs, schedule, batch, micro-batches, link). */
int study_cmp_prec(const study_run_t *a, const study_run_t *b);
int study_cmp_row(const study_run_t *a, const study_run_t *b);
/* A strategy's place in a study's tables: 0 the reference, 1 replicas, 2 a pipeline. */
int study_run_class(const study_run_t *r);
/* A summary table's row: study_cmp_row, then a configuration but its seed and commit (study_cmp_config). */
int study_cmp_row_config(const study_run_t *a, const study_run_t *b);
/* Sorts a[0..n) by cmp, keeping runs of one key in the order they are (a stable sort). */
void study_runs_sort(const study_run_t **a, int n, int (*cmp)(const study_run_t *, const study_run_t *));
/* The runs of group g (of all groups for g < 0) matching keep (NULL: all), sorted by cmp then by their order; *n
 * gets how many (the caller frees). */
const study_run_t **study_runs_sorted(const study_runs_t *s, int g, int (*keep)(const study_run_t *),
                                      int (*cmp)(const study_run_t *, const study_run_t *), int *n);
