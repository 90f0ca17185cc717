/* env.c — collects GPU name, driver, CUDA/cuDNN/NCCL versions, host name, git commit and the NCCL settings in force
 * for the CSV.
 * The driver string comes from /proc/driver/nvidia/version when present (it names the exact kernel module). */
#include "env.h"
#include "git_version.h"
#include "../strategies/dist.h"
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <cuda_runtime.h>
#include <cudnn.h>
#include <nccl.h>

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

void env_collect(results_env_t *e, const dist_t *dist) {
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
