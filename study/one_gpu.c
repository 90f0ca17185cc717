/* one_gpu.c — the facts of a one-GPU study (one_gpu.h): whether a group's runs are all on one GPU, a cell per run,
 * and per math the largest batch that fit, the fastest within the accuracy's (or held-out loss's) noise and the other
 * maths at its batch. */
#include "one_gpu.h"

#include <math.h>
#include <string.h>

int study_one_gpu_group(const study_runs_t *s, int g) {
    int any = 0;
    for (int i = 0; i < s->nr; i++) {
        if (s->run[i].group != g) continue;
        if (s->run[i].gpus > 1) return 0;
        any = 1;
    }
    return any;
}

int study_one_gpu_study(const study_runs_t *s) {
    for (int g = 0; g < s->ng; g++)
        if (!study_one_gpu_group(s, g)) return 0;
    return s->ng > 0;
}

int study_one_gpu_cells(const study_runs_t *s, int g, study_one_cell_t *c) {
    int n = 0;
    for (int i = 0; i < s->nr; i++) {
        const study_run_t *u = &s->run[i];
        if (u->group != g) continue;
        c[n++] = (study_one_cell_t){.math = u->math, .status = u->fstat, .batch = u->line_batch,
                                    .ips = study_run_tput(u), .acc = u->facc / 100, .loss = u->floss,
                                    .loss_lo = u->loss_lo, .loss_hi = u->loss_hi, .tokens = u->tokens};
    }
    return n;
}

study_quality_t study_one_cell_quality(const study_one_cell_t *c, int lower_is_better) {
    double v = lower_is_better ? c->loss : c->acc;
    study_quality_t q = {{v, v, v, !isnan(v)}, NAN, NAN, lower_is_better, 0.01};
    if (lower_is_better) q.lo = c->loss_lo, q.hi = c->loss_hi;
    return q;
}

int study_one_cell_at(const study_one_cell_t *c, int n, const char *m, int b) {
    for (int i = 0; i < n; i++)
        if (c[i].batch == b && c[i].ips >= 0 && strcmp(c[i].math, m) == 0) return i;
    return -1;
}

void study_one_gpu(const study_one_cell_t *c, int n, study_one_t *o) {
    memset(o, 0, sizeof *o);
    o->fastest = -1;
    const int lm = n > 0 && c[0].tokens;   /* the cells are one group's, of its kind */
    study_quality_best_t best = {0};   /* of the cells with a throughput */
    for (int i = 0; i < n; i++) {
        study_quality_t q = study_one_cell_quality(&c[i], lm);
        if (c[i].ips >= 0) study_quality_best_add(&best, &q);
    }
    const study_quality_t *b = study_quality_best(&best);
    o->best = b ? b->st.med : NAN;
    for (int i = 0; i < n; i++) {
        int m = 0;
        while (m < o->n_math && strcmp(o->math[m], c[i].math) != 0) m++;
        if (m == o->n_math) {
            if (m == STUDY_ONE_MAX_MATHS) continue;
            o->math[o->n_math++] = c[i].math;
        }
        int oom = strcmp(c[i].status, "oom") == 0;
        if (oom && (!o->no_fit[m] || c[i].batch < o->no_fit[m])) o->no_fit[m] = c[i].batch;
        if (!oom && c[i].ips >= 0 && c[i].batch > o->fit[m]) o->fit[m] = c[i].batch;
        /* a faster cell whose accuracy collapsed (whose held-out loss rose) is no answer */
        study_quality_t q = study_one_cell_quality(&c[i], lm);
        int held = study_quality_held(&q, b);
        if (c[i].ips >= 0 && held && (o->fastest < 0 || c[i].ips > c[o->fastest].ips)) o->fastest = i;
    }
    for (int m = 0; m < o->n_math; m++) {
        const study_one_cell_t *b = o->fastest >= 0 ? &c[o->fastest] : NULL;
        o->there[m] = b && strcmp(o->math[m], b->math) ? study_one_cell_at(c, n, o->math[m], b->batch) : -1;
        o->slower[m] = o->there[m] >= 0 ? b->ips / c[o->there[m]].ips : NAN;
    }
}
