/* gpu_arch.h — which NVIDIA GPUs a build runs on (its CUDA architectures, CMake's list), and the one-line reasons a
 * machine has no GPU to run on. Host-only (no CUDA headers): the probe reports numbers, these functions say words. */
#pragma once
#include <stddef.h>

#ifdef __cplusplus   /* engine/gpu.cu words the CUDA runtime's answer with gpu_arch_none */
extern "C" {
#endif

/* The oldest compute capability the engine supports (Ampere, 8.0): bf16, cp.async, 163 KB of shared memory per SM. */
#define GPU_ARCH_MIN_MAJOR 8
#define GPU_ARCH_MIN_MINOR 0

/* What runs without any GPU, in every message that says there is none. */
#define GPU_ARCH_WITHOUT_GPU "--dry-run, --version, `scaling report` and `scaling tsv` work without one"

/* Why no GPU can run the training, from what the CUDA runtime answered. */
typedef enum {
    GPU_NONE_NO_DRIVER = 0,   /* no NVIDIA driver loaded (the runtime reports its driver version as 0) */
    GPU_NONE_DRIVER_OLD,      /* a driver older than the CUDA runtime this build links */
    GPU_NONE_NO_DEVICE,       /* a driver, but no device visible (none installed, or CUDA_VISIBLE_DEVICES hides them) */
    GPU_NONE_OTHER            /* another error of the runtime, quoted */
} gpu_none_t;

/* archs: CMake's CUDA_ARCHITECTURES, space- or semicolon-separated ("80-real 90-real 120-virtual", "90", "all").
 * 1 where the build holds code that runs on a GPU of compute capability major.minor: a cubin sm_XY runs on X.Z with
 * Z >= Y, PTX compute_XY on any X.Y or newer (compiled by the driver at first launch); else 0. A list this cannot
 * read (all, native) counts as running everywhere: CUDA says otherwise at the first launch. */
int gpu_arch_runs(const char *archs, int major, int minor);
/* archs as people read it: "sm_80 sm_86 sm_90, PTX compute_90" (cubins, then PTX for newer GPUs). */
void gpu_arch_describe(const char *archs, char *buf, size_t len);
/* The one line (no newline) for a GPU too old (below the minimum) or one the build has no code for; 0 where the GPU
 * runs this build, else 2 with the line in err. name: the device's name, index: its number. */
int gpu_arch_check(const char *archs, int index, const char *name, int major, int minor, char *err, size_t errlen);
/* The one line (no newline) saying why there is no GPU: why, the driver's and the runtime's CUDA versions as the
 * runtime encodes them (1000 * major + 10 * minor; 0: none), and the runtime's own words for GPU_NONE_OTHER. */
void gpu_arch_none(gpu_none_t why, int driver, int runtime, const char *detail, char *buf, size_t len);
#ifdef __cplusplus
}
#endif
