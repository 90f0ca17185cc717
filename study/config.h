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
