/* partition.h — where to cut a model's layers into pipeline stages: the cuts that minimise the slowest stage for
 * measured per-layer costs (a split given by hand is checked by engine/split.h). Host-only (no CUDA headers): CI
 * tests it. */
#pragma once
#include <stddef.h>

/* Stage starts of p stages: starts[0] = 0 and starts[1..p-1] = the p - 1 cuts, chosen among the n_cuts valid cut
 * points (increasing layer indices in 1..n_layers-1), minimising the largest stage cost (the sum of cost[i] over
 * its layers). Exact (dynamic programming over the cut points); among equally slow splits the first one found
 * (earliest cuts) wins. Returns 0, or -1 with a one-line message in err. */
int partition_balance(const double *cost, int n_layers, const int *cuts, int n_cuts, int p, int *starts, char *err,
                      size_t errlen);
/* The cost of stage k of starts (layers starts[k] .. starts[k+1]-1, the last one up to n_layers - 1). */
double partition_stage_cost(const double *cost, int n_layers, const int *starts, int p, int k);
/* "0,7" for starts {0, 7}: the split cell of a row. */
void partition_format(const int *starts, int p, char *buf, size_t len);
