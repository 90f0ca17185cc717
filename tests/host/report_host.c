/* report_host.c — `scaling report` built without the GPU parts: `report_host report STUDY.csv [options]` is
 * report_main with the command's strategy properties (host_infos.c), so the report runs where CUDA code is not built:
 * the sanitized build (tests/cli/asan_ubsan.sh) and the fuzz test run it in place of `scaling`. */
#include "host_infos.h"
#include "report/report.h"

#include <stdio.h>
#include <string.h>

int main(int argc, char **argv) {
    if (argc < 2 || strcmp(argv[1], "report") != 0) {
        fprintf(stderr, "usage: %s report STUDY.csv [options] (the options of scaling report)\n", argv[0]);
        return 2;
    }
    return report_main(argc - 1, argv + 1, SCALING_SOURCE_DIR, argv[0], host_infos);
}
