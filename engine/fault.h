/* fault.h — test-only fault injection: SCALING_FAULT makes the k-th allocation, cuDNN call, CUDA call, NCCL call
 * or collective of a run fail, or a rank stall at its k-th step, so every fault path is exercised without a faulty
 * machine (doc/faults.md). Unset, it costs one predictable branch in each CHECK_* macro and nothing else; a build
 * with -DSCALING_FAULT_INJECTION=OFF has none (check.h: fault_inject) and refuses SCALING_FAULT. Its state is in
 * process.h. */
#pragma once
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum { FAULT_ALLOC, FAULT_CUDNN, FAULT_CUDA, FAULT_NCCL, FAULT_COLLECTIVE, FAULT_STALL, FAULT_KINDS } fault_kind_t;

/* SCALING_FAULT=KIND:K[:rank=R][:run=N]: KIND one of alloc, cudnn, cuda, nccl, collective, stall; K >= 1 counts
 * that kind's calls (steps for stall) from the start of each run; rank=R: only on rank R (mpirun/srun; 0 in one
 * process); run=N: only in the sweep's N-th configuration (1-based, as --resume numbers them). */
typedef struct {
    fault_kind_t kind;
    long k;
    int rank;           /* -1: every rank */
    int run;            /* 0: every run */
} fault_spec_t;

/* Parses a SCALING_FAULT value. 0, or 2 with a one-line message in err. */
int fault_parse(const char *s, fault_spec_t *f, char *err, size_t errlen);
/* At the start of each run: arms the injection where SCALING_FAULT is set and names this rank and run, and zeroes
 * the counts. 0, or 2 with a one-line message (a malformed SCALING_FAULT) in err. */
int fault_begin_run(int rank, int run, char *err, size_t errlen);
/* Counts one call of `kind`; 1 when it is the one to fail (a line on stderr says so). Called only when armed
 * (check.h: fault_inject). */
int fault_take(fault_kind_t kind);
/* A stalled rank: sleeps until killed. */
void fault_stall(void);

#ifdef __cplusplus
}
#endif
