/* env.h — the machine facts recorded in every CSV row: GPU, driver, CUDA, cuDNN and NCCL versions, host and
 * git commit, so a row read months later still says what produced it. */
#pragma once
#include "results.h"

/* Fills e for CUDA device `device`. Never fails: unknown facts become "?". */
void env_collect(results_env_t *e, int device);
