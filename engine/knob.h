/* knob.h — benchmark knobs: environment variables that switch one implementation for another in the same binary, so
 * a benchmark can time both in one call, or set how a benchmark measures (SCALING_PROFILE_STEPS). Every knob is one
 * entry of knob.c's table (its variable, words or range, default and any old name); doc/engine.md,
 * doc/strategies.md and doc/profiling.md say what each changes. */
#pragma once
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif
/* The knobs. A word knob's value is the index of its word, in the order of the enum its reader maps it to. */
typedef enum {
    KNOB_BN,             /* SCALING_BN: own, cudnn, auto (gpu_bn_t) */
    KNOB_CONV,           /* SCALING_CONV: auto, legacy, backend (gpu_conv_t) */
    KNOB_COMM_PRIORITY,  /* SCALING_COMM_PRIORITY: high, normal */
    KNOB_WGRAD,          /* SCALING_WGRAD: direct, widen (formerly SCALING_DP_WGRAD) */
    KNOB_DP_UPDATE,      /* SCALING_DP_UPDATE: bucket, step */
    KNOB_NCCL_CTAS,      /* SCALING_NCCL_CTAS: 0 (NCCL's choice) to 64 */
    KNOB_PIPE_SPLIT,     /* SCALING_PIPE_SPLIT: balance, step */
    KNOB_PROFILE_STEPS,  /* SCALING_PROFILE_STEPS: 0 (no capture range) to 1000000 steps */
    KNOB_COUNT
} knob_t;

/* The knob's value: a word's index or the integer; unset or empty, its default. A value it does not take (a word
 * not listed; a sign, blank, suffix or out of range for an integer), or its old name set, stops the process with
 * knob_check's line, exit 2. */
int knob_get(knob_t k);
/* The word of value i of a word knob ("?" for none), for lines and ids that name it. */
const char *knob_word(knob_t k, int i);
/* 0 where every knob's value is good, else -1 with the first bad one's line in err: for a command's checks before
 * anything runs (a knob read at setup would otherwise stop each configuration of a sweep in turn). */
int knob_check(char *err, size_t len);
#ifdef __cplusplus
}
#endif
