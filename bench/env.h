/* env.h — the machine facts recorded in every CSV row: GPU, driver, CUDA, cuDNN and NCCL versions, host and
 * git commit, so a row read months later still says what produced it. */
#pragma once
#include "../study/schema.h"

#include <stdio.h>

struct dist;   /* strategies/dist.h */

/* Fills e for this process's CUDA device (dist's, or device 0), and the NCCL transport and other settings in force
 * over every rank of dist (collective under mpirun/srun; dist NULL: this process's). Never fails: unknown facts
 * become "?"; settings that do not fit their cell are left out whole, said on stderr. */
void env_collect(study_env_t *e, const struct dist *dist);
/* --version: the commit, and the CUDA, cuDNN, NCCL and MPI versions this build was compiled against (with the cuDNN
 * and NCCL that the dynamic linker loaded, where they differ from those). No GPU, no CUDA context. */
void env_print_version(FILE *f);
