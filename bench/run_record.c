/* run_record.c — what a run records besides its rows (run_record.h): the profiler range, the --trace timeline, the
 * parameter dump, and the clock and stamps of its rows and progress lines. */
#include "run_record.h"
#include "trace_json.h"
#include "../study/paths.h"
#include "../engine/check.h"
#include "../engine/knob.h"
#include <cuda_runtime.h>
#include <cuda_profiler_api.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

double wall_now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

void utc_stamp(char *buf, size_t len, const char *fmt) {
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(buf, len, fmt, &tm);
}

void profile_init(profile_t *p) {
    p->steps = knob_get(KNOB_PROFILE_STEPS);   /* checked before anything ran (knob_check) */
    p->state = 0;
}

void profile_before_step(profile_t *p, int epoch, int step) {
    if (p->steps <= 0 || p->state != 0 || epoch != 2 || step != 0) return;
    CHECK_CUDA(cudaProfilerStart());
    p->state = 1;
}

void profile_after_step(profile_t *p, int step, int last, const run_cfg_t *cfg) {
    if (p->state != 1 || (step + 1 < p->steps && !last)) return;
    /* The captured steps finish on every GPU before the range closes; the current device is restored. */
    int cur;
    CHECK_CUDA(cudaGetDevice(&cur));
    for (int g = 0; g < cfg->n_gpus; g++) {
        CHECK_CUDA(cudaSetDevice(cfg->devices[g]));
        CHECK_CUDA(cudaDeviceSynchronize());
    }
    CHECK_CUDA(cudaSetDevice(cur));
    CHECK_CUDA(cudaProfilerStop());
    p->state = 2;
}

/* SCALING_DUMP_PARAMS=PATH: the run's final flat parameters (replica 0's; rank 0's under mpirun/srun) as raw
 * float32, so two modes can be compared parameter by parameter (tests/cli/gpu_mpi.sh). Each run replaces it whole
 * (a temporary file renamed over it). */
void dump_params(const strategy_t *st, void *state, const dist_t *dist) {
    const char *path = getenv("SCALING_DUMP_PARAMS");
    if (!path || !*path || (dist && !dist->is_root)) return;
    if (!st->params) {
        fprintf(stderr, "scaling: SCALING_DUMP_PARAMS: strategy %s cannot hand out its parameters; nothing written\n",
                st->info->name);
        return;
    }
    size_t n = st->params(state, NULL, 0);
    float *h = malloc(n * sizeof *h);
    if (!h) { fprintf(stderr, "scaling: error: SCALING_DUMP_PARAMS: out of host memory\n"); exit(1); }
    st->params(state, h, n);
    paths_replace_t r;
    char err[PATH_MAX + 200];
    int rc = paths_replace_begin(&r, path, err, sizeof err);
    if (rc == 0 && fwrite(h, sizeof *h, n, r.f) != n) snprintf(err, sizeof err, "%s: %s", path, strerror(errno));
    if (rc == 0) rc = paths_replace_end(&r, err, sizeof err);
    if (rc != 0) {
        fprintf(stderr, "scaling: error: SCALING_DUMP_PARAMS %s\n", err);
        exit(1);
    }
    free(h);
}

/* --trace: TRACE_STEPS steps from the middle of epoch 2 (epoch 1 with --epochs 1) are recorded per run, written
 * after that epoch; with several runs the file name gets "-run<N>" before its extension. */
void trace_after_epoch(trace_t *tr, const options_t *o, const sweep_point_t *pt, int n_points, const char *strategy,
                       int is_root) {
    trace_event_t *ev = malloc((size_t)(tr->n ? tr->n : 1) * sizeof *ev);
    if (!ev) { fprintf(stderr, "scaling: --trace: out of host memory\n"); exit(1); }
    int n = trace_resolve(tr, ev);
    char path[PATH_MAX], title[160], err[PATH_MAX + 200];
    trace_json_run_path(path, sizeof path, o->trace, n_points, pt->index);    /* fits: checked with the options */
    snprintf(title, sizeof title, "%s %s, %d GPU(s), global batch %d, %d steps", strategy, o->model, pt->gpus,
             pt->global_batch, TRACE_STEPS);
    if (is_root) {
        if (tr->dropped)
            fprintf(stderr, "scaling: --trace: %d ranges did not fit the recorder and are missing\n", tr->dropped);
        if (trace_json_write(path, ev, n, title, err, sizeof err) != 0) fprintf(stderr, "scaling: --trace: %s\n", err);
        else fprintf(stderr, "scaling: timeline of %d ranges in %s\n", n, path);
    }
    free(ev);
    trace_reset(tr);
}
