/* test_gpu_arch.c — which GPUs a build's CUDA architectures run on (engine/gpu_arch.c): cubins within their major
 * version, PTX on anything as new or newer, a GPU below 8.0 refused in one line, and the no-GPU reasons told apart. */
#include "engine/gpu_arch.h"
#include "test.h"

#include <string.h>

/* The default build's list (CMakeLists.txt) as CMake hands it to the code. */
#define DEFAULT_ARCHS "80-real 86-real 89-real 90-real 100-real 120-real 120-virtual"

int main(void) {
    char buf[512];

    /* cubins: the same major, the same or a later minor */
    EXPECT(gpu_arch_runs("80-real", 8, 0) && gpu_arch_runs("80-real", 8, 6) && gpu_arch_runs("80-real", 8, 9),
           "sm_80 runs on 8.0, 8.6, 8.9");
    EXPECT(!gpu_arch_runs("90-real", 10, 0) && !gpu_arch_runs("86-real", 8, 0), "sm_90 not on 10.0, sm_86 not on 8.0");
    /* PTX: the same or a later GPU, whatever its major */
    EXPECT(gpu_arch_runs("80-virtual", 8, 0) && gpu_arch_runs("80-virtual", 9, 0) && gpu_arch_runs("80-virtual", 12, 1),
           "compute_80 PTX runs on 8.0, 9.0 and 12.1");
    EXPECT(!gpu_arch_runs("90-virtual", 8, 9), "compute_90 PTX not on 8.9");
    /* a plain number is both; a semicolon list as CMake writes it */
    EXPECT(gpu_arch_runs("90", 9, 0) && gpu_arch_runs("90", 12, 0) && !gpu_arch_runs("90", 8, 6), "90: sm_90 + PTX");
    EXPECT(gpu_arch_runs("80-real;90-real", 9, 0) && !gpu_arch_runs("80-real;90-real", 10, 0), "a CMake list");
    /* the default build: every supported GPU, and newer ones through the PTX (11.x, Jetson Thor, runs no x86 binary) */
    int ccs[][2] = {{8, 0}, {8, 6}, {8, 7}, {8, 9}, {9, 0}, {10, 0}, {10, 3}, {12, 0}, {12, 1}, {13, 0}};
    for (size_t i = 0; i < sizeof ccs / sizeof ccs[0]; i++)
        EXPECT(gpu_arch_runs(DEFAULT_ARCHS, ccs[i][0], ccs[i][1]), "the default build runs on %d.%d", ccs[i][0],
               ccs[i][1]);
    /* what CMake leaves to the driver is not second-guessed */
    EXPECT(gpu_arch_runs("native", 8, 0) && gpu_arch_runs("all-major", 7, 5), "native, all-major: not read");

    gpu_arch_describe(DEFAULT_ARCHS, buf, sizeof buf);
    EXPECT(strcmp(buf, "sm_80 sm_86 sm_89 sm_90 sm_100 sm_120, PTX compute_120") == 0, "described: %s", buf);
    gpu_arch_describe("80-virtual", buf, sizeof buf);
    EXPECT(strcmp(buf, "PTX compute_80") == 0, "PTX only: %s", buf);

    /* a GPU too old: one line naming its capability and the minimum; the control, an H200, passes */
    EXPECT(gpu_arch_check(DEFAULT_ARCHS, 0, "Tesla V100", 7, 0, buf, sizeof buf) == 2 &&
               strstr(buf, "GPU 0 (Tesla V100) is compute capability 7.0; scaling needs 8.0 or newer") &&
               !strchr(buf, '\n'), "V100: %s", buf);
    EXPECT(gpu_arch_check(DEFAULT_ARCHS, 0, "NVIDIA H200", 9, 0, buf, sizeof buf) == 0, "H200 runs the default");
    EXPECT(gpu_arch_check("90-real", 1, "NVIDIA A100", 8, 0, buf, sizeof buf) == 2 &&
               strstr(buf, "GPU 1 (NVIDIA A100, compute capability 8.0) has no code in this build (sm_90)") &&
               strstr(buf, "SCALING_LOCAL_GPU"), "a Hopper-only build on an A100: %s", buf);

    /* no GPU: the three reasons told apart, each saying what works without one */
    gpu_arch_none(GPU_NONE_NO_DRIVER, 0, 13000, "CUDA driver version is insufficient", buf, sizeof buf);
    EXPECT(strstr(buf, "no CUDA device: no NVIDIA driver is loaded") && strstr(buf, "13.0") &&
               strstr(buf, "scaling report"), "no driver: %s", buf);
    gpu_arch_none(GPU_NONE_DRIVER_OLD, 12020, 13000, "CUDA driver version is insufficient", buf, sizeof buf);
    EXPECT(strstr(buf, "supports CUDA 12.2, this build needs 13.0 or newer: update the driver") &&
               strstr(buf, "--dry-run"), "driver too old: %s", buf);
    gpu_arch_none(GPU_NONE_NO_DEVICE, 13000, 13000, "no CUDA-capable device is detected", buf, sizeof buf);
    EXPECT(strstr(buf, "the driver sees no GPU") && strstr(buf, "scaling tsv"), "no device: %s", buf);
    gpu_arch_none(GPU_NONE_OTHER, 13000, 13000, "initialization error", buf, sizeof buf);
    EXPECT(strstr(buf, "no CUDA device: initialization error;") != NULL, "another error quoted: %s", buf);
    return test_summary();
}
