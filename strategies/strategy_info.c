/* strategy_info.c — the command's strategies' properties, one definition each for the CUDA build and the host-only
 * build alike, and looking a strategy's properties up by name (options, default plan, answer). */
#include "strategy_info.h"
#include <string.h>

const strategy_info_t *strategy_info_find(const strategy_info_t *const *infos, const char *name) {
    for (int i = 0; infos && name && infos[i]; i++)
        if (strcmp(infos[i]->name, name) == 0) return infos[i];
    return NULL;
}

const strategy_info_t strategy_info_single = {
    .name = "single", .summary = "one GPU, no communication (the reference)", .reference = 1,
    .noise_scale = STRATEGY_GNS_HALVES, .lm = 1, .max_gpus = 1};
const strategy_info_t strategy_info_naive = {
    .name = "naive",
    .summary = "data parallel: gradients gathered on GPU 0, summed there, sent back after backward (--naive-path)",
    .reduces = 1, .path_is_algo = 1, .allreduce = STRATEGY_AR_CENTRAL, .noise_scale = STRATEGY_GNS_REPLICAS, .lm = 1};
const strategy_info_t strategy_info_nccl = {
    .name = "nccl",
    .summary = "data parallel: NCCL ring all-reduce in buckets, overlapped with backward (--bucket-mb, --overlap)",
    .reduces = 1, .multi_process = 1, .uses_nccl = 1, .allreduce = STRATEGY_AR_NCCL,
    .noise_scale = STRATEGY_GNS_REPLICAS, .lm = 1};
const strategy_info_t strategy_info_pipeline = {
    .name = "pipeline",
    .summary = "model split into consecutive stages, one per GPU; micro-batches in GPipe, 1F1B or zero-bubble order",
    .staged = 1, .t1_global_batch = 1, .lm = 1};
