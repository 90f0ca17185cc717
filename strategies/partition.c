/* partition.c — balancing pipeline stages over a model's valid cut points (exact, by dynamic programming); which
 * splits are valid is the model's (engine/split.h). */
#include "partition.h"
#include "../engine/errmsg.h"
#include "../engine/split.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>


static double range_cost(const double *cost, int a, int b) {
    double c = 0;
    for (int i = a; i < b; i++) c += cost[i];
    return c;
}

double partition_stage_cost(const double *cost, int n_layers, const int *starts, int p, int k) {
    return range_cost(cost, starts[k], k + 1 < p ? starts[k + 1] : n_layers);
}

void partition_format(const int *starts, int p, char *buf, size_t len) {
    size_t used = 0;
    if (len) buf[0] = '\0';
    for (int k = 0; k < p; k++) {
        int n = snprintf(buf + used, len - used, "%s%d", k ? "," : "", starts[k]);
        if (n < 0 || (size_t)n >= len - used) break;
        used += (size_t)n;
    }
}

int partition_balance(const double *cost, int n_layers, const int *cuts, int n_cuts, int p, int *starts, char *err,
                      size_t errlen) {
    if (split_feasible(p, n_layers, n_cuts, err, errlen)) return -1;
    /* Positions 0 .. n_cuts + 1: layer 0, the cut points, the end. best[q][k]: the slowest stage of the best split
     * of layers [0, pos[k]) into q stages; from[q][k]: where its last stage starts. */
    int npos = n_cuts + 2;
    int *pos = malloc((size_t)npos * sizeof *pos);
    double *best = malloc((size_t)(p + 1) * npos * sizeof *best);
    int *from = malloc((size_t)(p + 1) * npos * sizeof *from);
    if (!pos || !best || !from) {
        free(pos); free(best); free(from);
        return errmsg(-1, err, errlen, "pipeline: out of host memory balancing stages");
    }
    pos[0] = 0;
    for (int i = 0; i < n_cuts; i++) pos[i + 1] = cuts[i];
    pos[npos - 1] = n_layers;
#define BEST(q, k) best[(size_t)(q) * npos + (k)]
#define FROM(q, k) from[(size_t)(q) * npos + (k)]
    for (int k = 0; k < npos; k++) {
        BEST(1, k) = range_cost(cost, 0, pos[k]);
        FROM(1, k) = 0;
    }
    for (int q = 2; q <= p; q++)
        for (int k = 0; k < npos; k++) {
            BEST(q, k) = -1;
            FROM(q, k) = -1;
            /* The previous q - 1 stages end at pos[j]; each needs at least one layer. */
            for (int j = q - 1; j < k; j++) {
                if (BEST(q - 1, j) < 0) continue;
                double c = range_cost(cost, pos[j], pos[k]);
                double worst = c > BEST(q - 1, j) ? c : BEST(q - 1, j);
                if (BEST(q, k) < 0 || worst < BEST(q, k)) {
                    BEST(q, k) = worst;
                    FROM(q, k) = j;
                }
            }
        }
    int k = npos - 1;
    for (int q = p; q >= 1; q--) {
        starts[q - 1] = pos[FROM(q, k)];
        k = FROM(q, k);
    }
#undef BEST
#undef FROM
    free(pos);
    free(best);
    free(from);
    return 0;
}
