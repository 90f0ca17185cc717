/* split.h — a model's pipeline split: whether p stages fit its layers and cut points (model_cut_points), and the check
 * of a split given by hand. Cut points are a property of the model, so the engine validates a split; the balancing of
 * measured costs is the pipeline's (strategies/pipeline/partition.h). Host-only (no CUDA headers): CI tests it. */
#pragma once
#include <stddef.h>

/* Whether p stages fit n_layers layers with n_cuts valid cut points: 0, or -1 with a one-line message in err. */
int split_feasible(int p, int n_layers, int n_cuts, char *err, size_t errlen);
/* Checks a hand split for p stages: split[0..n_split) are the first layers of stages 1..p-1. labels (may be NULL)
 * name the layers in messages. On success fills starts (starts[0] = 0) and returns 0; otherwise -1 with a one-line
 * message in err: wrong count, more stages than layers, a value out of range, an empty stage, not a cut point. */
int split_check(const int *split, int n_split, int n_layers, const int *cuts, int n_cuts, int p,
                const char *const *labels, int *starts, char *err, size_t errlen);
