/* split.c — whether a model's layers can be cut into p pipeline stages, and the check of a split given by hand
 * against the model's valid cut points (split.h), with one-line messages that say what is wrong. */
#include "split.h"
#include "errmsg.h"

#include <stdio.h>

int split_feasible(int p, int n_layers, int n_cuts, char *err, size_t errlen) {
    if (p < 1) return errmsg(-1, err, errlen, "pipeline: %d stages", p);
    if (p > n_layers)
        return errmsg(-1, err, errlen, "pipeline: %d stages (GPUs) but the model has only %d layers: more stages than layers",
                    p, n_layers);
    if (p - 1 > n_cuts)
        return errmsg(-1, err, errlen, "pipeline: %d stages need %d cuts but the model has only %d valid cut points "
                    "(at most %d stages)", p, p - 1, n_cuts, n_cuts + 1);
    return 0;
}

static void layer_name(const char *const *labels, int i, char *buf, size_t len) {
    if (labels && labels[i]) snprintf(buf, len, "%d (%s)", i, labels[i]);
    else snprintf(buf, len, "%d", i);
}

int split_check(const int *split, int n_split, int n_layers, const int *cuts, int n_cuts, int p,
                const char *const *labels, int *starts, char *err, size_t errlen) {
    if (p > n_layers)
        return errmsg(-1, err, errlen, "--split: %d stages (GPUs) but the model has only %d layers: more stages than layers",
                    p, n_layers);
    if (n_split != p - 1)
        return errmsg(-1, err, errlen, "--split: %d value%s for %d GPU%s: give the first layer of stages 2..%d (%d value%s)",
                    n_split, n_split == 1 ? "" : "s", p, p == 1 ? "" : "s", p, p - 1, p - 1 == 1 ? "" : "s");
    starts[0] = 0;
    for (int k = 0; k < n_split; k++) {
        int v = split[k];
        if (v < 0 || v > n_layers)
            return errmsg(-1, err, errlen, "--split: layer %d is out of range (the model has layers 0..%d; stages start at "
                        "1..%d)", v, n_layers - 1, n_layers - 1);
        if (v == 0) return errmsg(-1, err, errlen, "--split: stage 2 starts at layer 0: stage 1 would be empty");
        if (v == n_layers)
            return errmsg(-1, err, errlen, "--split: stage %d starts at layer %d, past the last layer: it would be empty",
                        k + 2, v);
        if (v <= starts[k])
            return errmsg(-1, err, errlen, "--split: stage %d would be empty (%d does not come after %d: values must be "
                        "strictly increasing)", k + 1, v, starts[k]);
        int ok = 0;
        for (int c = 0; c < n_cuts; c++) ok |= cuts[c] == v;
        if (!ok) {
            char name[64], valid[256] = "";
            size_t used = 0;
            layer_name(labels, v, name, sizeof name);
            for (int c = 0; c < n_cuts && used < sizeof valid; c++) {
                int n = snprintf(valid + used, sizeof valid - used, "%s%d", c ? "," : "", cuts[c]);
                if (n < 0) break;
                used += (size_t)n;
            }
            return errmsg(-1, err, errlen, "--split: layer %s is not a valid cut: more tensors cross it than a stage "
                        "boundary carries, or it parts a batch norm from the convolution whose bias it folds (valid "
                        "cuts: %s)", name, valid);
        }
        starts[k + 1] = v;
    }
    return 0;
}
