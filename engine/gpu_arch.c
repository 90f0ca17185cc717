/* gpu_arch.c — reading a build's CUDA architectures (which GPUs it runs on) and wording why a machine has no GPU
 * to run on (gpu_arch.h). */
#include "gpu_arch.h"
#include "errmsg.h"
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    int cc;        /* 10 * major + minor: 80, 86, 90, 100, 120 */
    int cubin;     /* sm_XY code */
    int ptx;       /* compute_XY PTX */
} arch_t;

/* The next entry of archs from *at into a; 1 with a filled, 0 at the end, -1 for an entry that is not a number
 * (all, all-major, native). */
static int arch_next(const char **at, arch_t *a) {
    const char *p = *at;
    while (*p == ' ' || *p == ';') p++;
    if (!*p) return 0;
    const char *end = p;
    while (*end && *end != ' ' && *end != ';') end++;
    *at = end;
    if (!isdigit((unsigned char)*p)) return -1;
    char *rest;
    long cc = strtol(p, &rest, 10);
    a->cc = (int)cc;
    size_t n = (size_t)(end - rest);
    a->cubin = n == 0 || (n == 5 && strncmp(rest, "-real", 5) == 0);
    a->ptx = n == 0 || (n == 8 && strncmp(rest, "-virtual", 8) == 0);
    return 1;
}

int gpu_arch_runs(const char *archs, int major, int minor) {
    const char *at = archs ? archs : "";
    arch_t a;
    int r, any = 0;
    while ((r = arch_next(&at, &a)) != 0) {
        if (r < 0) return 1;
        any = 1;
        /* a cubin runs within its major version on the same or a later minor; PTX on the same or a later GPU */
        if (a.cubin && a.cc / 10 == major && a.cc % 10 <= minor) return 1;
        if (a.ptx && a.cc <= 10 * major + minor) return 1;
    }
    return !any;
}

void gpu_arch_describe(const char *archs, char *buf, size_t len) {
    char sm[256] = "", ptx[256] = "";
    const char *at = archs ? archs : "";
    arch_t a;
    int r;
    while ((r = arch_next(&at, &a)) != 0) {
        if (r < 0) {
            snprintf(buf, len, "%s", archs);
            return;
        }
        if (a.cubin) snprintf(sm + strlen(sm), sizeof sm - strlen(sm), "%ssm_%d", *sm ? " " : "", a.cc);
        if (a.ptx) snprintf(ptx + strlen(ptx), sizeof ptx - strlen(ptx), "%scompute_%d", *ptx ? " " : "", a.cc);
    }
    snprintf(buf, len, "%s%s%s%s", sm, *sm && *ptx ? ", " : "", *ptx ? "PTX " : "", ptx);
}

int gpu_arch_check(const char *archs, int index, const char *name, int major, int minor, char *err, size_t errlen) {
    if (10 * major + minor < 10 * GPU_ARCH_MIN_MAJOR + GPU_ARCH_MIN_MINOR)
        return errmsg(2, err, errlen, "GPU %d (%s) is compute capability %d.%d; scaling needs %d.%d or newer (Ampere, "
                      "Ada, Hopper, Blackwell); %s", index, name, major, minor, GPU_ARCH_MIN_MAJOR,
                      GPU_ARCH_MIN_MINOR, GPU_ARCH_WITHOUT_GPU);
    if (gpu_arch_runs(archs, major, minor)) return 0;
    char built[300];
    gpu_arch_describe(archs, built, sizeof built);
    return errmsg(2, err, errlen, "GPU %d (%s, compute capability %d.%d) has no code in this build (%s): configure "
                  "again without CMAKE_CUDA_ARCHITECTURES, or with SCALING_LOCAL_GPU=ON on this machine", index, name,
                  major, minor, built);
}

void gpu_arch_none(gpu_none_t why, int driver, int runtime, const char *detail, char *buf, size_t len) {
    char what[300];
    switch (why) {
    case GPU_NONE_NO_DRIVER:
        snprintf(what, sizeof what, "no NVIDIA driver is loaded (install one for CUDA %d.%d or newer)",
                 runtime / 1000, runtime % 1000 / 10);
        break;
    case GPU_NONE_DRIVER_OLD:
        snprintf(what, sizeof what, "the NVIDIA driver supports CUDA %d.%d, this build needs %d.%d or newer: update "
                 "the driver", driver / 1000, driver % 1000 / 10, runtime / 1000, runtime % 1000 / 10);
        break;
    case GPU_NONE_NO_DEVICE:
        snprintf(what, sizeof what, "the driver sees no GPU (none installed, or CUDA_VISIBLE_DEVICES hides them)");
        break;
    default:
        snprintf(what, sizeof what, "%.250s", detail && *detail ? detail : "the CUDA runtime failed");
    }
    snprintf(buf, len, "no CUDA device: %s; %s", what, GPU_ARCH_WITHOUT_GPU);
}
