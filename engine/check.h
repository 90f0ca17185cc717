/* check.h — file:line error checks for every CUDA, cuDNN, cuBLAS, NCCL and MPI call.
 * A failed call is a bug or a broken machine, not bad user input: report where and exit(1). */
#pragma once
#include <stdio.h>
#include <stdlib.h>

#ifdef __cplusplus
extern "C" {
#endif
/* Prints "[host pid] file:line: what -> why" to stderr and exits 1. */
void check_fail(const char *file, int line, const char *what, const char *why);
#ifdef __cplusplus
}
#endif

#define CHECK_CUDA(call) do { cudaError_t e_ = (call); \
    if (e_ != cudaSuccess) check_fail(__FILE__, __LINE__, #call, cudaGetErrorString(e_)); } while (0)
#define CHECK_CUDNN(call) do { cudnnStatus_t e_ = (call); \
    if (e_ != CUDNN_STATUS_SUCCESS) check_fail(__FILE__, __LINE__, #call, cudnnGetErrorString(e_)); } while (0)
#define CHECK_CUBLAS(call) do { cublasStatus_t e_ = (call); \
    if (e_ != CUBLAS_STATUS_SUCCESS) check_fail(__FILE__, __LINE__, #call, cublasGetStatusString(e_)); } while (0)
#define CHECK_NCCL(call) do { ncclResult_t e_ = (call); \
    if (e_ != ncclSuccess) check_fail(__FILE__, __LINE__, #call, ncclGetErrorString(e_)); } while (0)
#define CHECK_MPI(call) do { int e_ = (call); if (e_ != 0 /* MPI_SUCCESS */) { \
    char m_[256]; int l_ = 0; MPI_Error_string(e_, m_, &l_); check_fail(__FILE__, __LINE__, #call, m_); } } while (0)
/* After every kernel launch: launch-configuration errors surface here, not steps later. */
#define CHECK_LAUNCH() CHECK_CUDA(cudaGetLastError())
