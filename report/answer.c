/* answer.c — the default study's answer: each run's steady-epoch median, gathered per strategy at the largest GPU
 * count it ran, against T1 at the same batch and math: the medians, T1 and line batches of study/study.h, which the
 * report's tables use too. */
#include "answer.h"
#include "../study/study.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static answer_run_t *run_of(answer_t *a, const results_row_t *row) {
    for (int i = a->n - 1; i >= 0; i--)
        if (strcmp(a->runs[i].run_id, row->run_id) == 0) return &a->runs[i];
    if (a->n == a->cap) {
        int cap = a->cap ? 2 * a->cap : 16;
        answer_run_t *r = realloc(a->runs, (size_t)cap * sizeof *r);
        if (!r) return NULL;
        a->runs = r;
        a->cap = cap;
    }
    answer_run_t *r = &a->runs[a->n++];
    memset(r, 0, sizeof *r);
    snprintf(r->run_id, sizeof r->run_id, "%s", row->run_id);
    snprintf(r->strategy, sizeof r->strategy, "%s", row->strategy ? row->strategy : "?");
    snprintf(r->math, sizeof r->math, "%s", row->math ? row->math : "");
    r->gpus = row->gpus;
    r->info = strategy_info_find(a->strategies, r->strategy);
    r->pipeline = study_t1_global(r->info, row->stats.micro_batches);
    r->batch = study_line_batch(r->pipeline, row->per_gpu_batch, row->global_batch);
    r->acc = -1;
    return r;
}

int answer_add(answer_t *a, const results_row_t *row) {
    answer_run_t *r = run_of(a, row);
    if (!r) return -1;
    snprintf(r->status, sizeof r->status, "%s", row->status ? row->status : "");
    if (row->phase && strcmp(row->phase, "steady") == 0 && row->stats.epoch_s >= 0 && r->n_steady < ANSWER_MAX_STEADY) {
        r->steady_ips[r->n_steady] = row->images_per_s;
        r->steady[r->n_steady++] = row->stats.epoch_s;
    }
    if (row->epoch > 0) r->acc = row->test_acc;
    return 0;
}

void answer_free(answer_t *a) {
    free(a->runs);
    memset(a, 0, sizeof *a);
}

double answer_median(double *x, int n) {
    double m = study_median(x, n);
    return isnan(m) ? -1 : m;
}

static double run_median(const answer_run_t *r) {
    double x[ANSWER_MAX_STEADY];
    memcpy(x, r->steady, (size_t)r->n_steady * sizeof *x);
    return answer_median(x, r->n_steady);
}

/* The fastest timed run of strategy s on g GPUs (at batch b and math m, or any for b < 0 and m NULL); else the last
 * untimed one. */
static int best_run(const answer_t *a, const char *s, int g, int b, const char *m, double *t) {
    int best = -1;
    *t = -1;
    if (!s) return -1;
    for (int i = 0; i < a->n; i++) {
        const answer_run_t *r = &a->runs[i];
        if (strcmp(r->strategy, s) != 0 || r->gpus != g || (b >= 0 && r->batch != b) || (m && strcmp(r->math, m)))
            continue;
        double med = run_median(r);
        if (med >= 0 && (*t < 0 || med < *t)) best = i, *t = med;
        else if (*t < 0) best = i;
    }
    return best;
}

/* T1 at batch b and math m (study.h); < 0 without one. */
static double t1_of(const answer_t *a, int b, const char *m) {
    study_t1_t t1;
    study_t1_init(&t1);
    for (int i = 0; i < a->n; i++)
        if (a->runs[i].batch == b && strcmp(a->runs[i].math, m) == 0) {
            double t = run_median(&a->runs[i]);
            study_t1_offer(&t1, a->runs[i].info, i, t < 0 ? NAN : t);
        }
    return t1.run < 0 ? -1 : t1.t;
}

/* Appends run's line (its time t); NULL when the summary is full. */
static const answer_line_t *add_line(answer_summary_t *s, const answer_t *a, int run, double t) {
    if (s->n == ANSWER_MAX_LINES) return NULL;
    const answer_run_t *r = &a->runs[run];
    answer_line_t *l = &s->line[s->n++];
    l->strategy = r->strategy;
    l->status = r->status;
    l->gpus = r->gpus;
    l->batch = r->batch;
    l->pipeline = r->pipeline;
    l->t = t;
    l->t1 = t1_of(a, r->batch, r->math);
    l->speedup = t > 0 && l->t1 > 0 ? l->t1 / t : -1;
    l->efficiency = l->speedup > 0 ? l->speedup / r->gpus : -1;
    return l;
}

/* 1 if a run before run i has its strategy (and, with same_config, its batch and math). */
static int seen_before(const answer_t *a, int i, int same_config) {
    const answer_run_t *r = &a->runs[i];
    for (int j = 0; j < i; j++)
        if (strcmp(a->runs[j].strategy, r->strategy) == 0 &&
            (!same_config || (a->runs[j].batch == r->batch && strcmp(a->runs[j].math, r->math) == 0)))
            return 1;
    return 0;
}

void answer_summarise(const answer_t *a, answer_summary_t *s) {
    memset(s, 0, sizeof *s);
    s->fastest = -1;
    for (int i = 0; i < a->n; i++)
        if (a->runs[i].gpus > s->gpus) s->gpus = a->runs[i].gpus;
    double t;
    /* single: one reference line per batch and math on 1 GPU */
    for (int i = 0; i < a->n; i++)
        if (study_is_reference(a->runs[i].info) && a->runs[i].gpus == 1 && !seen_before(a, i, 1)) {
            int best = best_run(a, a->runs[i].strategy, 1, a->runs[i].batch, a->runs[i].math, &t);
            add_line(s, a, best, t);
        }
    /* every other strategy at the largest GPU count it ran */
    for (int i = 0; i < a->n; i++) {
        const answer_run_t *r = &a->runs[i];
        if (study_is_reference(r->info) || seen_before(a, i, 0)) continue;
        int g = 0;
        for (int j = 0; j < a->n; j++)
            if (strcmp(a->runs[j].strategy, r->strategy) == 0 && a->runs[j].gpus > g) g = a->runs[j].gpus;
        int best = best_run(a, r->strategy, g, -1, NULL, &t);
        const answer_line_t *l = add_line(s, a, best, t);
        if (l && g == s->gpus && g > 1 && l->t >= 0 && (s->fastest < 0 || l->t < s->line[s->fastest].t))
            s->fastest = s->n - 1;
    }
}

int answer_cell_at(const answer_cell_t *c, int n, const char *m, int b) {
    for (int i = 0; i < n; i++)
        if (c[i].batch == b && c[i].ips >= 0 && strcmp(c[i].math, m) == 0) return i;
    return -1;
}

void answer_one_gpu(const answer_cell_t *c, int n, answer_one_t *o) {
    memset(o, 0, sizeof *o);
    o->fastest = -1;
    for (int i = 0; i < n; i++) {
        int m = 0;
        while (m < o->n_math && strcmp(o->math[m], c[i].math) != 0) m++;
        if (m == o->n_math) {
            if (m == ANSWER_MAX_MATHS) continue;
            o->math[o->n_math++] = c[i].math;
        }
        int oom = strcmp(c[i].status, "oom") == 0;
        if (oom && (!o->no_fit[m] || c[i].batch < o->no_fit[m])) o->no_fit[m] = c[i].batch;
        if (!oom && c[i].ips >= 0 && c[i].batch > o->fit[m]) o->fit[m] = c[i].batch;
        if (c[i].ips >= 0 && (o->fastest < 0 || c[i].ips > c[o->fastest].ips)) o->fastest = i;
    }
    for (int m = 0; m < o->n_math; m++) {
        const answer_cell_t *b = o->fastest >= 0 ? &c[o->fastest] : NULL;
        o->there[m] = b && strcmp(o->math[m], b->math) ? answer_cell_at(c, n, o->math[m], b->batch) : -1;
        o->slower[m] = o->there[m] >= 0 ? b->ips / c[o->there[m]].ips : -1;
    }
}

void answer_one_fastest(FILE *f, const answer_cell_t *c, const answer_one_t *o, const char *colon, const char *times) {
    const answer_cell_t *b = &c[o->fastest];
    fprintf(f, "%s at batch %d, %.0f images/s", b->math, b->batch, b->ips);
    for (int m = 0; m < o->n_math; m++)
        if (o->there[m] >= 0)
            fprintf(f, "; %s there%s %.0f images/s (%.2f%s slower)", o->math[m], colon, c[o->there[m]].ips,
                    o->slower[m], times);
}

void answer_one_fit(FILE *f, const answer_one_t *o, const char *sep) {
    for (int m = 0; m < o->n_math; m++) {
        fprintf(f, "%s %s ", m ? sep : "", o->math[m]);
        if (o->fit[m]) fprintf(f, "%d", o->fit[m]);
        else fprintf(f, "none");
        if (o->no_fit[m]) fprintf(f, " (%d did not: oom)", o->no_fit[m]);
        else fprintf(f, " (every batch tried fit)");
    }
}

/* The one-GPU study's cells, one per run (the caller frees); NULL when out of memory. */
static answer_cell_t *cells_of(const answer_t *a) {
    answer_cell_t *c = calloc((size_t)(a->n ? a->n : 1), sizeof *c);
    for (int i = 0; c && i < a->n; i++) {
        const answer_run_t *r = &a->runs[i];
        double x[ANSWER_MAX_STEADY];
        memcpy(x, r->steady_ips, (size_t)r->n_steady * sizeof *x);
        c[i] = (answer_cell_t){.math = r->math, .status = r->status, .batch = r->batch,
                               .ips = answer_median(x, r->n_steady), .acc = r->acc};
    }
    return c;
}

/* What one GPU can: throughput and accuracy per batch and math, the fastest, the largest batch that fit. */
static void print_one_gpu(FILE *f, const answer_t *a, const char *what) {
    answer_cell_t *c = cells_of(a);
    if (!c) return;
    answer_one_t o;
    answer_one_gpu(c, a->n, &o);
    fprintf(f, "# answer: %s on 1 GPU; images/s is the median of a run's steady epochs, test_acc its last epoch's\n",
            what);
    fprintf(f, "# %7s %5s %10s %9s  %s\n", "batch", "math", "images/s", "test_acc", "status");
    for (int i = 0; i < a->n; i++) {
        fprintf(f, "  %7d %5s", c[i].batch, c[i].math);
        if (c[i].ips < 0) fprintf(f, " %10s", "-");
        else fprintf(f, " %10.0f", c[i].ips);
        if (c[i].acc < 0) fprintf(f, " %9s", "-");
        else fprintf(f, " %7.1f %%", 100 * c[i].acc);
        fprintf(f, "  %s\n", c[i].ips < 0 && !c[i].status[0] ? "no steady epoch" : c[i].status);
    }
    if (o.fastest >= 0) {
        fprintf(f, "# fastest: ");
        answer_one_fastest(f, c, &o, ":", "x");
        fprintf(f, "\n");
    } else
        fprintf(f, "# fastest: none (no run finished a steady epoch)\n");
    fprintf(f, "# largest batch that fit:");
    answer_one_fit(f, &o, ",");
    fprintf(f, "\n");
    if (a->second_gpu) fprintf(f, "# a second GPU would add: %s\n", a->second_gpu);
    free(c);
}

/* One right-aligned column after a blank; '-' where there is no number. */
static void put(FILE *f, int width, double x) {
    if (x < 0) fprintf(f, " %*s", width, "-");
    else fprintf(f, " %*.3f", width, x);
}

void answer_print(FILE *f, const answer_t *a, const char *what, const char *report) {
    answer_summary_t s;
    answer_summarise(a, &s);
    if (s.gpus <= 1) {
        print_one_gpu(f, a, what);
        fprintf(f, "# report: %s\n", report);
        return;
    }
    fprintf(f, "# answer: %s; epoch_s is the median of a run's steady epochs; speedup and efficiency are against\n"
               "# single on 1 GPU at the same batch (per GPU; the pipeline's is global)\n", what);
    fprintf(f, "# %-10s %4s %9s %8s %9s %8s %10s  %s\n", "strategy", "gpus", "batch", "epoch_s", "single_s", "speedup",
            "efficiency", "status");
    for (int i = 0; i < s.n; i++) {
        const answer_line_t *l = &s.line[i];
        char batch[32];
        snprintf(batch, sizeof batch, l->pipeline ? "%d" : "%d/GPU", l->batch);
        fprintf(f, "  %-10s %4d %9s", l->strategy, l->gpus, batch);
        put(f, 8, l->t);
        put(f, 9, l->t1);
        if (l->speedup < 0) fprintf(f, " %8s %10s", "-", "-");
        else fprintf(f, " %7.2fx %8.1f %%", l->speedup, 100 * l->efficiency);
        fprintf(f, "  %s\n", l->t < 0 && !l->status[0] ? "no steady epoch" : l->status);
    }
    if (s.fastest >= 0)
        fprintf(f, "# fastest on %d GPUs: %s, %.3f s per epoch\n", s.gpus, s.line[s.fastest].strategy,
                s.line[s.fastest].t);
    else
        fprintf(f, "# fastest on %d GPUs: none (no strategy finished a steady epoch there)\n", s.gpus);
    fprintf(f, "# report: %s\n", report);
}
