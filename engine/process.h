/* process.h — the engine's mutable process state, in one place: what must be reached without a context, from the
 * CHECK_* macros at ~600 call sites that carry none (the command's signal state is bench/faults/isolate.c's).
 * Everything else a run needs is owned by a struct its caller holds. engine/ is the lowest floor, so every floor that
 * needs a piece of this reaches it here. Host-only (no CUDA headers). */
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

/* Peer access (gpu_enable_peer, gpu.h) is a property of the process's context on a device, not of any object of
 * ours: a pipeline's probes, its balancer's copy probe and its links each set it up, and enabling a pair twice is an
 * error compute-sanitizer reports. A bit per peer of each of the first 64 devices, set once the pair is enabled. */
typedef struct {
    unsigned long long enabled[64];
} process_peers_t;

typedef struct {
    process_faults_t faults;
    process_fail_hook_t fail_hook;
    process_peers_t peers;
} process_state_t;

/* The engine's one mutable global (beside it only engine/nvtx.h's cache of NVTX's domain handle, a value that never
 * changes once made, and the command's signal state, which only bench/faults/isolate.c's handlers reach). */
extern process_state_t process_state;

#ifdef __cplusplus
}
#endif
