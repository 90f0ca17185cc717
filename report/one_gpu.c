/* one_gpu.c — REPORT.md's section for a model and dataset whose runs are all on one GPU (the default study on one
 * GPU): throughput and final accuracy (a language model's: held-out loss) per batch and math, the fastest, the
 * largest batch that fit, and why there is nothing to scale; the numbers are study/one_gpu.h's, so the report and the
 * printed answer say the same; and the words of those facts (answer.h), which the printed answer shares. */
#include "report.h"
#include "answer.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void answer_one_fastest(FILE *f, const study_one_cell_t *c, const study_one_t *o) {
    const study_one_cell_t *b = &c[o->fastest];
    const char *unit = study_tput_unit(b->tokens);
    fprintf(f, "%s at batch %d, %.0f %s", b->math, b->batch, b->ips, unit);
    if (!b->tokens && !isnan(o->best))
        fprintf(f, ", the fastest within %.0f point of the best accuracy (%.1f %%)", STUDY_ACC_POINTS, 100 * o->best);
    else if (!isnan(o->best))
        fprintf(f, ", the fastest whose %s is within the noise of the best (%s)", report_quality(1)->name,
                report_fmt(report_quality(1)->fmt, o->best).s);
    for (int m = 0; m < o->n_math; m++)
        if (o->there[m] >= 0)
            fprintf(f, "; %s there: %.0f %s (%.2f× slower)", o->math[m], c[o->there[m]].ips, unit, o->slower[m]);
}

void answer_one_fit(FILE *f, const study_one_t *o, const char *sep) {
    for (int m = 0; m < o->n_math; m++) {
        fprintf(f, "%s %s ", m ? sep : "", o->math[m]);
        if (o->fit[m]) fprintf(f, "%d", o->fit[m]);
        else fprintf(f, "none");
        if (o->no_fit[m]) fprintf(f, " (%d did not: oom)", o->no_fit[m]);
        else fprintf(f, " (every batch tried fit)");
    }
}

void report_one_gpu(const report_t *r, FILE *md, int g) {
    const study_runs_t *s = &r->st;
    study_one_cell_t *c = mem_zalloc((size_t)(s->nr ? s->nr : 1), sizeof *c);
    int n = study_one_gpu_cells(s, g, c);
    study_one_t o;
    study_one_gpu(c, n, &o);
    int lm = s->grp[g].tokens;
    const report_quality_t *q = report_quality(lm);
    fprintf(md, "### One GPU\n\nEvery run of %s is on one GPU, so nothing scales: no epoch-time, speedup or "
                "breakdown figure, no all-reduce model and no projection. What one GPU can, per batch and math "
                "(%s: the median of a run's steady epochs; %s: its last epoch's):\n\n",
            s->grp[g].sub, study_tput_unit(lm), q->name);
    fprintf(md, "| batch | math | %s | %s | status |\n|---:|---|---:|---:|---|\n", study_tput_unit(lm), q->head);
    for (int i = 0; i < n; i++) {
        fprintf(md, "| %d | %s | %s | %s | %s |\n", c[i].batch, *c[i].math ? c[i].math : "—",
                report_f0(c[i].ips).s, report_fmt(q->fmt, lm ? c[i].loss : 100 * c[i].acc).s, c[i].status);
    }
    fprintf(md, "\n");
    if (o.fastest >= 0) {
        fprintf(md, "- **Fastest**: ");
        answer_one_fastest(md, c, &o);
        fprintf(md, ".\n");
    }
    fprintf(md, "- **Largest batch that fit**:");
    answer_one_fit(md, &o, ";");
    fprintf(md, ".\n- **A second GPU** would add the default study's scaling sweeps: every strategy of replicas on 2 "
                "GPUs at the same batch per GPU (weak scaling) and every staged one on 2 stages (`./scaling --help` "
                "lists them), each with its speedup and efficiency against these runs.\n\n");
    free(c);
}
