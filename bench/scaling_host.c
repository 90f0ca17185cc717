/* scaling_host.c — the `scaling` command of the host-only build (configured where no CUDA toolkit was found):
 * `scaling report`, `scaling tsv`, --help, --version and --dry-run as the CUDA build's (front.h, the same code); any
 * command that would train gets one line saying this build has no CUDA, and exit 2. */
#include "front.h"
#include "dry_run.h"
#include "sweep.h"
#include "tsv.h"
#include "git_version.h"
#include "../study/writer.h"
#include "../engine/conv_cache.h"
#include "../engine/errmsg.h"
#include "../report/report.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fail(const char *msg) {
    errmsg_line(stderr, "scaling: error: ", "%s", msg);
    return 2;
}

/* --dry-run: the checks of the CUDA build that need no GPU, then the runs. A hand --split's cut is checked against
 * the model's layer graph, which only the CUDA build holds, when that build runs it. 0, or 2 after a message. */
static int dry_run(const options_t *o, const strategy_info_t *const *infos) {
    char err[512] = "";
    sweep_point_t *pts = NULL;
    int n_points = 0;
    if (options_validate(o, infos, -1, err, sizeof err) || front_check_env(err, sizeof err) ||
        (n_points = sweep_expand(o, &pts, err, sizeof err)) < 0 ||
        front_check_outputs(o, n_points, err, sizeof err) || study_check(o->out, err, sizeof err) ||
        (o->conv_cache && conv_cache_check(o->conv_cache, err, sizeof err))) {
        free(pts);
        return fail(err);
    }
    if (sweep_lr_warning(o, pts, n_points, err, sizeof err)) errmsg_line(stderr, "scaling: warning: ", "%s", err);
    idx_dataset_t data;
    if (front_load_data(o, &data, err, sizeof err)) {
        free(pts);
        return fail(err);
    }
    study_env_t env;
    memset(&env, 0, sizeof env);
    int rc = dry_run_print(o, strategy_info_find(infos, o->strategy), pts, n_points, &data, &env, stdout);
    idx_free(&data);
    free(pts);
    return rc;
}

int main(int argc, char **argv) {
    unsetenv("SCALING_REPORT_FD");   /* as the CUDA build: only a run's child reports on a pipe */
    const strategy_info_t *infos[64];
    strategy_infos(infos, 64);
    if (argc >= 2 && strcmp(argv[1], "report") == 0)
        return report_main(argc - 1, argv + 1, SCALING_SOURCE_DIR, argv[0], infos);
    if (argc >= 2 && strcmp(argv[1], "tsv") == 0) return tsv_main(argc, argv);
    if (argc == 1) return fail(FRONT_NO_CUDA);   /* the default study trains */
    options_t o;
    char err[512] = "";
    int rc = options_parse(&o, argc, argv, err, sizeof err);
    if (rc == 1) {
        front_help(stdout, infos);
        return 0;
    }
    if (rc) return fail(err);
    if (o.version) {
        printf("scaling %s\nbuilt without CUDA (host-only): no training; --dry-run, `scaling report` and "
               "`scaling tsv` work\n", GIT_VERSION);
        return 0;
    }
    if (o.dry_run) return dry_run(&o, infos);
    return fail(FRONT_NO_CUDA);
}
