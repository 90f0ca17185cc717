/* host_infos.c — the command's strategy properties as the report asks them (strategies/<name>.c, .info), for a
 * report built without CUDA; test_host_infos fails where one differs from the registry, so they cannot drift. */
#include "host_infos.h"

#include <stddef.h>

static const strategy_info_t single = {.name = "single", .reference = 1},
                             naive = {.name = "naive", .reduces = 1, .path_is_algo = 1,
                                      .allreduce = STRATEGY_AR_CENTRAL},
                             nccl = {.name = "nccl", .reduces = 1, .multi_process = 1, .uses_nccl = 1,
                                     .allreduce = STRATEGY_AR_NCCL},
                             pipeline = {.name = "pipeline", .staged = 1, .t1_global_batch = 1};
const strategy_info_t *const host_infos[] = {&single, &naive, &nccl, &pipeline, NULL};
