/* pipe_lm.c — a language model's pipeline stages (pipe_lm.h): GPT-2's units balanced by their training FLOPs, or a
 * hand split checked against them. */
#include "pipe_lm.h"
#include "partition.h"
#include "../../engine/errmsg.h"
#include "../../engine/split.h"
#include <stdio.h>
#include <stdlib.h>

void pipe_lm_unit_name(const gpt2_shape_t *s, int unit, char *buf, size_t len) {
    if (unit == 0) snprintf(buf, len, "embeddings");
    else if (unit <= s->layers) snprintf(buf, len, "block %d", unit - 1);
    else snprintf(buf, len, "head");
}

int pipe_lm_split(const gpt2_shape_t *s, int T, int p, const int *split, int n_split, int *starts, char *err,
                  size_t errlen) {
    int n = GPT2_UNITS(s->layers), rc = -1;
    double *cost = malloc((size_t)n * sizeof *cost);
    int *cuts = malloc((size_t)n * sizeof *cuts);
    char (*names)[32] = malloc((size_t)n * sizeof *names);
    const char **labels = malloc((size_t)n * sizeof *labels);
    if (!cost || !cuts || !names || !labels) {
        errmsg(-1, err, errlen, "pipeline: out of host memory splitting GPT-2");
        goto out;
    }
    for (int j = 0; j < n; j++) {
        cost[j] = gpt2_shape_unit_flops(s, T, j);
        cuts[j] = j + 1;   /* cuts[0 .. n - 2]: every boundary between two units */
        pipe_lm_unit_name(s, j, names[j], sizeof names[j]);
        labels[j] = names[j];
    }
    if (split) {
        rc = split_check(split, n_split, n, cuts, n - 1, p, labels, starts, err, errlen);
    } else {
        partition_t pb = {.cost = cost, .n_layers = n, .cuts = cuts, .n_cuts = n - 1, .micro = 1};
        rc = partition_balance(&pb, p, starts, err, errlen);
    }
    if (rc == 0) starts[p] = n;
out:
    free(cost);
    free(cuts);
    free(names);
    free(labels);
    return rc;
}
