/* partition.h — where to cut a model's layers into pipeline stages: the cuts that minimise the slowest stage for
 * measured per-layer costs (a split given by hand is checked by engine/split.h). Host-only (no CUDA headers): CI
 * tests it. */
#pragma once
#include <stddef.h>

/* A balancing problem: each layer's cost, where stages may start, and optionally what each cut's copies cost and
 * which ranges may form a stage. */
typedef struct {
    const double *cost;         /* n_layers: a layer's forward + backward time for one micro-batch */
    int n_layers;
    const int *cuts;            /* n_cuts candidate stage starts, increasing, in 1..n_layers-1 */
    int n_cuts;
    const double *cut_cost;     /* n_cuts, or NULL (free): a cut's copies per micro-batch, activations and gradients */
    int micro;                  /* M, the micro-batches per step */
    /* NULL, or whether layers [first, end) may form a stage (a cut inside a residual block may not be followed by a
     * second one in the same block: the stage between would pass the shortcut through) */
    int (*stage_ok)(const void *ctx, int first, int end);
    const void *ctx;
} partition_t;

/* Stage starts of p stages: starts[0] = 0 and starts[1..p-1] = p - 1 of the cuts, every stage allowed by stage_ok,
 * minimising a 1F1B step: (M - 1) x the slowest stage's cost + the cost of the copies across the chosen cuts (the
 * sum over the stages is the same for every split; M - 1 at least 1). Without cut costs that is the exact min-max
 * (dynamic programming over the cuts). Among equally good splits the first found (earliest cuts) wins. Returns 0,
 * or -1 with a one-line message in err. */
int partition_balance(const partition_t *pb, int p, int *starts, char *err, size_t errlen);
/* The slowest stage's cost over the mean stage's (1: balanced). */
double partition_imbalance(const double *cost, int n_layers, const int *starts, int p);
/* The cost of stage k of starts (layers starts[k] .. starts[k+1]-1, the last one up to n_layers - 1). */
double partition_stage_cost(const double *cost, int n_layers, const int *starts, int p, int k);
/* "0,7" for starts {0, 7}: the split cell of a row. */
void partition_format(const int *starts, int p, char *buf, size_t len);
