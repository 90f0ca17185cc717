/* process.h — the process's mutable state, all of it in one place: what must be reached without a context, from a
 * signal handler or from the CHECK_* macros at ~600 call sites that carry none. Everything else a run needs is owned
 * by a struct its caller holds. engine/ is the lowest floor, so every floor that needs a piece of this reaches it
 * here. Host-only (no CUDA headers). */
#pragma once
#include <signal.h>
#include <stddef.h>
#include <sys/types.h>

#include "fault.h"

#ifdef __cplusplus
extern "C" {
#endif

/* SCALING_FAULT (fault.h), test-only: the CHECK_* macros test `armed` at every call site, where threading a context
 * through ~600 calls would cost more than the branch (there is none where built with -DSCALING_FAULT_INJECTION=OFF).
 * The spec, and the calls counted per kind since the run began. */
typedef struct {
    int armed;
    fault_spec_t spec;
    long counts[FAULT_KINDS];
} process_faults_t;

/* check_fail's hook (check.h): check_fail is reached from call sites that carry no context, so a rank under
 * mpirun/srun that must leave its row before it exits registers it here. */
typedef struct {
    void (*fn)(const char *reason, void *ctx);
    void *ctx;
} process_fail_hook_t;

/* SIGINT/SIGTERM (bench/faults/isolate.h): a signal handler can reach nothing else. got: the first signal; whether
 * this is a run's child process; the child to pass a signal on to; the line a rank's handler writes at once to
 * last_fd (rank 0's interrupted row, prepared before each epoch), with whether it did; whether a checkpoint is ahead
 * (isolate_defer: else a signal ends the process at once); whether the handler SIGKILLed the child. Tests only
 * (isolate_test_kill): the signal a silent child is sent (0: SIGKILL; -1: none) and the grace after it (0: the
 * default). */
typedef struct {
    volatile sig_atomic_t got;
    volatile sig_atomic_t in_child;
    volatile pid_t child;
    volatile int last_fd;
    const char *volatile last_line;
    volatile size_t last_len;
    volatile sig_atomic_t last_spoken;
    volatile sig_atomic_t deferred;
    volatile sig_atomic_t child_killed;
    int test_kill_signal;
    double test_kill_grace_s;
} process_signals_t;

/* Peer access (gpu_enable_peer, gpu.h) is a property of the process's context on a device, not of any object of
 * ours: a pipeline's probes, its balancer's copy probe and its links each set it up, and enabling a pair twice is an
 * error compute-sanitizer reports. A bit per peer of each of the first 64 devices, set once the pair is enabled. */
typedef struct {
    unsigned long long enabled[64];
} process_peers_t;

typedef struct {
    process_faults_t faults;
    process_fail_hook_t fail_hook;
    process_signals_t signals;
    process_peers_t peers;
} process_state_t;

/* The one mutable global of the project (beside it only engine/nvtx.h's cache of NVTX's domain handle, a value that
 * never changes once made). */
extern process_state_t process_state;

#ifdef __cplusplus
}
#endif
