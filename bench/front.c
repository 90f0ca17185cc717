/* front.c — the `scaling` command before any GPU work, for the CUDA and the host-only build alike (front.h). */
#include "front.h"
#include "trace_json.h"
#include "default/default_plan.h"
#include "../engine/errmsg.h"
#include "../engine/fault.h"
#include "../engine/knob.h"
#include "../engine/model_info.h"
#include "../engine/tokens.h"
#include <limits.h>
#include <stdlib.h>
#include <string.h>

void front_help(FILE *f, const strategy_info_t *const *infos) {
    fprintf(f, "\nStrategies (--strategy):\n");
    for (int i = 0; infos[i]; i++) {
        fprintf(f, "  %-10s ", infos[i]->name);
        opt_wrap(f, infos[i]->summary, 13, 13);
        fputc('\n', f);
    }
    default_plan_usage(f, infos);
}

/* The environment's values that runs read: SCALING_FAULT (test-only, engine/fault.h) and the knobs (engine/knob.h),
 * each read where what it configures is made, in every run: refused here, once, before anything runs, rather than
 * failing every configuration in turn. 0, or 2 with a message. */
int front_check_env(char *err, size_t errlen) {
    const char *inject = getenv("SCALING_FAULT");
    fault_spec_t spec;
    if (inject && *inject && fault_parse(inject, &spec, err, errlen)) return 2;
    return knob_check(err, errlen) ? 2 : 0;
}

/* SCALING_DUMP_PARAMS as a file the command will write (study/paths.h): 1 where set, with *u filled; else 0. */
int front_dump_use(paths_use_t *u) {
    const char *dump = getenv("SCALING_DUMP_PARAMS");
    *u = (paths_use_t){"SCALING_DUMP_PARAMS", dump, 1};
    return dump && *dump;
}

/* Every file the command will write (study/paths.h): --out, --conv-cache, SCALING_DUMP_PARAMS and each run's --trace
 * file (the runs' names differ from one another by construction, so each is checked against the others only).
 * 0, or 2 with a message. */
int front_check_outputs(const options_t *o, int n_points, char *err, size_t errlen) {
    paths_use_t u[4];
    char trace[PATH_MAX];
    int n = 0;
    u[n++] = (paths_use_t){"--out", o->out, 0};
    if (o->conv_cache) u[n++] = (paths_use_t){"--conv-cache", o->conv_cache, 0};
    n += front_dump_use(&u[n]);
    if (!o->trace) return paths_check(u, n, err, errlen);
    u[n] = (paths_use_t){"--trace", trace, 1};
    for (int i = 0; i < (n_points > 1 ? n_points : 1); i++) {
        if (trace_json_run_path(trace, sizeof trace, o->trace, n_points, i) != 0)
            return errmsg(2, err, errlen, "--trace: path longer than the limit of %d characters", PATH_MAX - 1);
        if (paths_check(u, n + 1, err, errlen)) return 2;
    }
    return 0;
}


/* A language model's corpus into data: sotu's token files, or random tokens; its windows as the splits' counts. */
static int load_corpus(const options_t *o, const model_info_t *mi, idx_dataset_t *data, char *err, size_t errlen) {
    memset(data, 0, sizeof *data);
    tokens_corpus_t *c = calloc(1, sizeof *c);
    if (!c) return errmsg(2, err, errlen, "out of host memory");
    int T = model_info_context(mi, o->model_size);
    if (options_dataset_kind(o->dataset) < 0)
        tokens_corpus_synthetic(c, T, (uint32_t)model_info_vocab(mi, o->model_size), 1);
    else if (tokens_corpus_load(c, o->data_dir, T, err, errlen) != 0) {
        free(c);
        if (strstr(err, ": cannot open: "))    /* most often never fetched, or a relative --data-dir elsewhere */
            snprintf(err + strlen(err), errlen - strlen(err), "; give --data-dir DIR, or train on --dataset synthetic");
        return 2;
    }
    data->corpus = c;
    data->synthetic = c->synthetic;
    data->train.n = tokens_corpus_windows(&c->train, T);
    data->test.n = tokens_corpus_windows(&c->val, T);
    for (int b = 0; b < o->n_batch; b++)    /* a step takes a batch of windows: none would make an epoch of 0 steps */
        if (o->batch[b] > data->train.n) {
            int n = data->train.n;
            idx_free(data);
            return errmsg(2, err, errlen, "--batch %d: the training split has %d windows of %d tokens, so a step "
                          "takes at most %d sequences", o->batch[b], n, T, n);
        }
    return 0;
}

int front_load_data(const options_t *o, idx_dataset_t *data, char *err, size_t errlen) {
    const model_info_t *mi = model_info(o->model);
    if (model_info_lm(mi)) return load_corpus(o, mi, data, err, errlen);
    int synthetic = options_dataset_kind(o->dataset) < 0;   /* the table's kind: either model's, generated */
    if (synthetic && model_info_imagenet(mi))   /* generated on the GPU, at the image size */
        idx_synthetic_generated(data, 1, o->image_size, mi->synth_channels, mi->synth_classes);
    else if (synthetic) idx_synthetic(data, 1);
    else if (idx_load_dataset(o->data_dir, data, err, errlen) != 0) {
        /* a file that is not there: most often the data was never fetched, or the command runs outside the checkout
         * with the default --data-dir, which is relative */
        if (strstr(err, ": not found"))
            snprintf(err + strlen(err), errlen - strlen(err), "; run scripts/setup.sh (it fetches the data sets), "
                     "give --data-dir DIR, or train on --dataset synthetic");
        return 2;
    }
    data->image = o->image_size;   /* a side other than the stored one is resized at gather time */
    return 0;
}
