/* key.h — a configuration: the key columns that define one experiment, taken from a row as the writer formats it,
 * and when two keys are one configuration (wildcard cells). Used by --resume's scan (runs.h), the default study's
 * answer and the report. Host-only. */
#pragma once
#include "schema.h"

/* A configuration is the columns that define one experiment, as the CSV cells (numbers formatted as study_write
 * formats them): strategy, model, dataset, seed, gpus, global_batch, lr, momentum, weight_decay, math, grad_dtype,
 * init, lr_schedule, warmup_epochs, lr_epochs, optimizer and gns_every (how the rate moves, what steps with it, and
 * whether some steps also measure the noise scale, which costs time), micro_batches, schedule, steps (per epoch: a
 * --steps smoke test is not the full study), nodes, nccl_transport (the same run over another link is another
 * experiment) and nccl_algo (NCCL's algorithm, or naive's copy path: p2p, host). Not part of it: the per-GPU batch
 * (follows from gpus and global_batch), the pipeline split (measured when automatic), and timings. An empty cell of a
 * WILD column (RESULTS_SCHEMA's flag) matches any value, in a row or in the query: an nccl_algo not known before the
 * run is set up (NCCL's choice, --naive-path auto) matches alike. */
#define RESULTS_KEY(X)                                                                                                 \
    X(strategy) X(model) X(dataset) X(seed) X(gpus) X(global_batch) X(lr) X(momentum) X(weight_decay) X(math)         \
    X(grad_dtype) X(init) X(lr_schedule) X(warmup_epochs) X(lr_epochs) X(optimizer) X(gns_every) X(micro_batches)     \
    X(schedule) X(steps) X(nodes) X(nccl_transport) X(nccl_algo)
/* Every key column as a constant, RESULTS_KEY_<name>: its index in study_key_columns and study_key_t. */
#define RESULTS_KEY_ENUM(name) RESULTS_KEY_##name,
typedef enum { RESULTS_KEY(RESULTS_KEY_ENUM) RESULTS_KEY_FIELDS } study_key_col_t;
#undef RESULTS_KEY_ENUM
/* A key cell holds the longest value a row can have in a key column (nccl_transport: up to 255 characters), so two
 * configurations never compare equal on a cut-off prefix. */
#define RESULTS_CELL_MAX 256
typedef struct {
    char cell[RESULTS_KEY_FIELDS][RESULTS_CELL_MAX];
} study_key_t;

/* Column names of the key, in study_key_t order, and each one's schema column (RESULTS_COL_*). */
extern const char *const study_key_columns[RESULTS_KEY_FIELDS];
extern const study_col_t study_key_schema_cols[RESULTS_KEY_FIELDS];

/* The key of a row about to be written (the same cells study_write would write). */
void study_key_of_row(const study_row_t *row, study_key_t *k);
/* 1 when key cell `column` (study_key_columns' index) is of a WILD column of RESULTS_SCHEMA. */
int study_key_wildcard(int column);
/* Two keys are one configuration when every cell is equal, or empty in either key where study_key_wildcard. */
int study_key_match(const study_key_t *a, const study_key_t *b);
/* Fills the empty cells of into from k (after study_key_match(into, k)): a configuration's key keeps the most
 * specific cells its runs wrote, so a later run matches it by what it knows. */
void study_key_merge(study_key_t *into, const study_key_t *k);
/* The same two on keys held as RESULTS_KEY_FIELDS cell pointers (the run table's first pass); merge points into k's
 * cells. */
int study_key_match_cells(const char *const *a, const char *const *b);
void study_key_merge_cells(const char **into, const char *const *k);
/* The run table's configurations are keys of one commit each: a CSV holding two commits' runs is two studies side by
 * side, not one superseding the other. 1 when key a of commit ca and key b of commit cb are one configuration
 * (study_key_match_cells, and the same commit). */
int study_key_match_commit(const char *const *a, const char *ca, const char *const *b, const char *cb);
/* A hash of key k and its commit, equal for two keys wherever study_key_match_commit holds: of the cells that are no
 * wildcard, then the commit. */
unsigned long long study_key_hash_cells(const char *const *k, const char *commit);
