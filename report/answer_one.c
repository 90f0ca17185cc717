/* answer_one.c — the facts of a one-GPU study (answer.h): per batch and math the fastest within the accuracy's noise,
 * what the other maths do there and the largest batch that fit, for REPORT.md's one-GPU section and the answer. */
#include "answer.h"
#include "report.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- one GPU: per batch and math */

int answer_cell_at(const answer_cell_t *c, int n, const char *m, int b) {
    for (int i = 0; i < n; i++)
        if (c[i].batch == b && c[i].ips >= 0 && strcmp(c[i].math, m) == 0) return i;
    return -1;
}

void answer_one_gpu(const answer_cell_t *c, int n, answer_one_t *o) {
    memset(o, 0, sizeof *o);
    o->fastest = -1;
    o->best_acc = -1;
    for (int i = 0; i < n; i++)
        if (c[i].ips >= 0 && c[i].acc > o->best_acc) o->best_acc = c[i].acc;
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
        /* a faster cell whose accuracy collapsed is no answer: within ANSWER_ACC_POINTS of the best (a fraction) */
        int held = o->best_acc < 0 || c[i].acc >= o->best_acc - ANSWER_ACC_POINTS / 100;
        if (c[i].ips >= 0 && held && (o->fastest < 0 || c[i].ips > c[o->fastest].ips)) o->fastest = i;
    }
    for (int m = 0; m < o->n_math; m++) {
        const answer_cell_t *b = o->fastest >= 0 ? &c[o->fastest] : NULL;
        o->there[m] = b && strcmp(o->math[m], b->math) ? answer_cell_at(c, n, o->math[m], b->batch) : -1;
        o->slower[m] = o->there[m] >= 0 ? b->ips / c[o->there[m]].ips : -1;
    }
}

void answer_one_fastest(FILE *f, const answer_cell_t *c, const answer_one_t *o) {
    const answer_cell_t *b = &c[o->fastest];
    const char *unit = study_tput_unit(b->tokens);
    fprintf(f, "%s at batch %d, %.0f %s", b->math, b->batch, b->ips, unit);
    if (o->best_acc >= 0)
        fprintf(f, ", the fastest within %.0f point of the best accuracy (%.1f %%)", ANSWER_ACC_POINTS,
                100 * o->best_acc);
    for (int m = 0; m < o->n_math; m++)
        if (o->there[m] >= 0)
            fprintf(f, "; %s there: %.0f %s (%.2f× slower)", o->math[m], c[o->there[m]].ips, unit, o->slower[m]);
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
