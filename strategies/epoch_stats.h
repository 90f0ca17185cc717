/* epoch_stats.h — what a strategy measures in one epoch: its epoch_end fills it and the CSV row embeds it as it is
 * (study/schema.h), so a measurement reaches its column without a copy. Host-only: no CUDA headers. */
#pragma once

/* Fields a strategy does not measure stay < 0 (empty cells): epoch_stats_init sets them so. */
typedef struct {
    int steps;
    double epoch_s;             /* from CUDA events around the epoch's steps */
    double step_ms;             /* median step, from per-step CUDA events */
    double train_loss, train_acc;
    /* fp16's dynamic loss scale (math_loss_scaled) at the epoch's end, and the steps of the epoch it skipped for an
     * inf or a NaN in their gradients; < 0 for a math without one */
    double loss_scale;
    int skipped_steps;
    double compute_ms, comm_ms, exposed_comm_ms, bytes_per_step;
    double idle_ms;             /* step - compute - exposed (strategies/breakdown.h) */
    int replicas_identical;     /* 1 yes, 0 no, -1 not applicable */
    double peak_mem_mb;         /* max over the run's GPUs */
    double algbw_gbs, busbw_gbs;        /* achieved by the gradient reduction (nccl-tests' definitions) */
    char nccl_algo[64];         /* "" if not applicable */
    /* pipeline; stages < 0: not applicable */
    int stages, micro_batches;
    char schedule[8], split[64], stage_busy_ms[128];
    double bubble, bubble_ideal;
    double stage_balance;       /* the slowest stage's busy time over the mean stage's (1: balanced) */
    double lr_now;              /* the learning rate of the epoch's last step (engine/schedule.h) */
    /* The gradient noise scale's inputs (engine/gns.h): the epoch's means of |G|^2 at batches gns_b_small and
     * gns_b_big, measured on the same parameters every --gns-every steps; < 0 where not measured. */
    double gns_small_sq, gns_big_sq;
    int gns_b_small, gns_b_big;
} epoch_stats_t;

static inline void epoch_stats_init(epoch_stats_t *s) {
    *s = (epoch_stats_t){.steps = -1, .epoch_s = -1, .step_ms = -1, .train_loss = -1, .train_acc = -1,
                         .loss_scale = -1, .skipped_steps = -1,
                         .compute_ms = -1, .comm_ms = -1, .exposed_comm_ms = -1, .bytes_per_step = -1, .idle_ms = -1,
                         .replicas_identical = -1, .peak_mem_mb = -1, .algbw_gbs = -1, .busbw_gbs = -1,
                         .stages = -1, .micro_batches = -1, .bubble = -1, .bubble_ideal = -1,
                         .stage_balance = -1, .lr_now = -1, .gns_small_sq = -1, .gns_big_sq = -1,
                         .gns_b_small = -1, .gns_b_big = -1};
}
