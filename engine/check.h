/* check.h — file:line error checks for every CUDA, cuDNN, cuBLAS, NCCL and MPI call.
 * A failed call ends the process (a CUDA context that faulted is not reused): report where, hand the line to the
 * parent that isolates the configuration (doc/faults.md), exit(1). */
#pragma once
#include <stdio.h>
#include <stdlib.h>
#include "fault.h"
#include "process.h"

#ifdef __cplusplus
extern "C" {
#endif
/* Prints "[host pid] file:line: what -> why" to stderr, sends it as the run's reason to the parent process where
 * one isolates this run (SCALING_REPORT_FD), and exits 1. */
void check_fail(const char *file, int line, const char *what, const char *why);
/* A failed CUDA call: an out-of-memory error also reports the device's free and total memory (check_cuda.c). */
void check_fail_cuda(const char *file, int line, const char *what, int error);
/* Sends one line ("KEY value...") to the isolating parent; nothing when there is none. Async-signal-safe. */
void check_report(const char *line);
/* Where no parent isolates the run (one process per GPU): fn(reason, ctx) runs once in check_fail, after the line
 * is printed and before the exit, to leave the configuration's row. NULL fn: none. */
void check_on_fail(void (*fn)(const char *reason, void *ctx), void *ctx);
#ifdef __cplusplus
}
#endif

#if defined(__GNUC__)
#define CHECK_UNLIKELY_(x) __builtin_expect(!!(x), 0)
#else
#define CHECK_UNLIKELY_(x) (x)
#endif

#ifndef SCALING_NO_FAULT_INJECTION
/* 1 when this call of `kind` is the one SCALING_FAULT makes fail (fault.h); unarmed, one predictable branch. */
static inline int fault_inject(fault_kind_t kind) { return process_state.faults.armed && fault_take(kind); }
/* Each macro tests one condition on its fast path: the call failed, or a test armed SCALING_FAULT (fault.h). */
#define CHECK_FAULTY_(ok, kind, injected, fail) do { if (CHECK_UNLIKELY_(!(ok) || process_state.faults.armed)) { \
    e_ = (ok) && fault_take(kind) ? (injected) : e_; if (!(ok)) { fail; } } } while (0)
#else
/* Built without fault injection (-DSCALING_FAULT_INJECTION=OFF): the plain check, nothing of the tests' machinery. */
static inline int fault_inject(fault_kind_t kind) { (void)kind; return 0; }
#define CHECK_FAULTY_(ok, kind, injected, fail) do { if (CHECK_UNLIKELY_(!(ok))) { fail; } } while (0)
#endif
#define CHECK_CUDA(call) do { cudaError_t e_ = (call); CHECK_FAULTY_(e_ == cudaSuccess, FAULT_CUDA, \
    cudaErrorLaunchFailure, check_fail_cuda(__FILE__, __LINE__, #call, (int)e_)); } while (0)
/* Device allocations: counted apart from other CUDA calls, so a test can fail the k-th allocation of a run. */
#define CHECK_ALLOC(call) do { cudaError_t e_ = (call); CHECK_FAULTY_(e_ == cudaSuccess, FAULT_ALLOC, \
    cudaErrorMemoryAllocation, check_fail_cuda(__FILE__, __LINE__, #call, (int)e_)); } while (0)
#define CHECK_CUDNN(call) do { cudnnStatus_t e_ = (call); CHECK_FAULTY_(e_ == CUDNN_STATUS_SUCCESS, FAULT_CUDNN, \
    CUDNN_STATUS_EXECUTION_FAILED, check_fail(__FILE__, __LINE__, #call, cudnnGetErrorString(e_))); } while (0)
#define CHECK_CUBLAS(call) do { cublasStatus_t e_ = (call); \
    if (e_ != CUBLAS_STATUS_SUCCESS) check_fail(__FILE__, __LINE__, #call, cublasGetStatusString(e_)); } while (0)
#define CHECK_NCCL(call) do { ncclResult_t e_ = (call); CHECK_FAULTY_(e_ == ncclSuccess, FAULT_NCCL, \
    ncclSystemError, check_fail(__FILE__, __LINE__, #call, ncclGetErrorString(e_))); } while (0)
#define CHECK_MPI(call) do { int e_ = (call); if (e_ != 0 /* MPI_SUCCESS */) { \
    char m_[256]; int l_ = 0; MPI_Error_string(e_, m_, &l_); check_fail(__FILE__, __LINE__, #call, m_); } } while (0)
/* After every kernel launch: launch-configuration errors surface here, not steps later. */
#define CHECK_LAUNCH() CHECK_CUDA(cudaGetLastError())
