/* env.c — collects GPU name, driver, CUDA/cuDNN/NCCL versions, host name, git commit and the NCCL settings in force
 * for the CSV.
 * The driver string comes from /proc/driver/nvidia/version when present (it names the exact kernel module). */
#include "env.h"
#include "git_version.h"
#include "../strategies/dist.h"
#include "../engine/gpu_arch.h"
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <cuda_runtime.h>
#include <cudnn.h>
#include <nccl.h>
#ifdef HAVE_MPI
#include <mpi.h>
#endif

static void driver_version(char *buf, size_t len) {
    FILE *f = fopen("/proc/driver/nvidia/version", "r");
    if (f) {
        char line[256] = "";
        if (fgets(line, sizeof line, f)) {
            /* "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.159.04  ..." : take the first dotted number */
            for (char *p = line; *p; p++) {
                int a, b;
                if (*p >= '0' && *p <= '9' && (p == line || p[-1] == ' ') && sscanf(p, "%d.%d", &a, &b) == 2) {
                    size_t n = strcspn(p, " \n");
                    snprintf(buf, len, "%.*s", (int)n, p);
                    fclose(f);
                    return;
                }
            }
        }
        fclose(f);
    }
    int v = 0;
    if (cudaDriverGetVersion(&v) == cudaSuccess) snprintf(buf, len, "cuda-driver-api %d.%d", v / 1000, (v % 1000) / 10);
    else snprintf(buf, len, "unknown");
}

void env_collect(study_env_t *e, const dist_t *dist) {
    memset(e, 0, sizeof *e);
    int device = dist ? dist->device : 0;
    struct cudaDeviceProp p;
    if (cudaGetDeviceProperties(&p, device) == cudaSuccess) snprintf(e->gpu_name, sizeof e->gpu_name, "%.95s", p.name);
    else snprintf(e->gpu_name, sizeof e->gpu_name, "unknown");
    driver_version(e->driver, sizeof e->driver);
    int rt = 0;
    if (cudaRuntimeGetVersion(&rt) == cudaSuccess) snprintf(e->cuda, sizeof e->cuda, "%d.%d", rt / 1000, (rt % 1000) / 10);
    size_t dn = cudnnGetVersion();   /* 90014 = 9.0.14; 91400 = 9.14.0 */
    snprintf(e->cudnn, sizeof e->cudnn, "%zu.%zu.%zu", dn / 10000, (dn % 10000) / 100, dn % 100);
    int nv = 0;
    if (ncclGetVersion(&nv) == ncclSuccess)
        snprintf(e->nccl, sizeof e->nccl, "%d.%d.%d", nv / 10000, (nv % 10000) / 100, nv % 100);
    else snprintf(e->nccl, sizeof e->nccl, "unknown");
    if (gethostname(e->host, sizeof e->host - 1) != 0) snprintf(e->host, sizeof e->host, "unknown");
    snprintf(e->git_commit, sizeof e->git_commit, "%s", GIT_VERSION);
    dist_nccl_transport(dist, e->nccl_transport, sizeof e->nccl_transport);
    if (dist_nccl_settings(dist, e->nccl_env, sizeof e->nccl_env) != 0)
        fprintf(stderr, "scaling: the NCCL_* settings in force are longer than the nccl_env column holds (%zu "
                "characters): the rows list those that fit, whole\n", sizeof e->nccl_env - 1);
}

void env_print_version(FILE *f) {
    char cudnn[32], nccl[32];
    size_t dn = cudnnGetVersion();
    snprintf(cudnn, sizeof cudnn, "%zu.%zu.%zu", dn / 10000, (dn % 10000) / 100, dn % 100);
    int nv = 0;
    if (ncclGetVersion(&nv) == ncclSuccess)
        snprintf(nccl, sizeof nccl, "%d.%d.%d", nv / 10000, (nv % 10000) / 100, nv % 100);
    else snprintf(nccl, sizeof nccl, "unknown");
    char built_cudnn[32], built_nccl[32];
    snprintf(built_cudnn, sizeof built_cudnn, "%d.%d.%d", CUDNN_MAJOR, CUDNN_MINOR, CUDNN_PATCHLEVEL);
    snprintf(built_nccl, sizeof built_nccl, "%d.%d.%d", NCCL_MAJOR, NCCL_MINOR, NCCL_PATCH);
    fprintf(f, "scaling %s\n", GIT_VERSION);
    fprintf(f, "built against: CUDA %d.%d, cuDNN %s, NCCL %s", CUDART_VERSION / 1000, (CUDART_VERSION % 1000) / 10,
            built_cudnn, built_nccl);
#if defined(HAVE_MPI) && defined(OMPI_MAJOR_VERSION)
    fprintf(f, ", Open MPI %d.%d.%d (MPI %d.%d)\n", OMPI_MAJOR_VERSION, OMPI_MINOR_VERSION, OMPI_RELEASE_VERSION,
            MPI_VERSION, MPI_SUBVERSION);
#elif defined(HAVE_MPI)
    fprintf(f, ", MPI %d.%d\n", MPI_VERSION, MPI_SUBVERSION);
#else
    fprintf(f, ", no MPI (one process per GPU under mpirun/srun is not built)\n");
#endif
    char archs[300];
    gpu_arch_describe(SCALING_CUDA_ARCHS, archs, sizeof archs);
    fprintf(f, "GPUs: NVIDIA, compute capability %d.%d or newer; code built: %s\n", GPU_ARCH_MIN_MAJOR,
            GPU_ARCH_MIN_MINOR, archs);
    /* A library found at run time may not be the one of the build (LD_LIBRARY_PATH, another install). */
    if (strcmp(cudnn, built_cudnn) != 0 || strcmp(nccl, built_nccl) != 0)
        fprintf(f, "loaded: cuDNN %s, NCCL %s\n", cudnn, nccl);
}
