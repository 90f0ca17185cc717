/* one_gpu.c — REPORT.md's section for a model and dataset whose runs are all on one GPU (the default study on one
 * GPU): throughput and final accuracy per batch and math, the fastest, the largest batch that fit, and why there is
 * nothing to scale; the numbers are answer.h's, so the report and the printed answer say the same. */
#include "report.h"
#include "answer.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int report_one_gpu_group(const study_runs_t *s, int g) {
    int any = 0;
    for (int i = 0; i < s->nr; i++) {
        if (s->run[i].group != g) continue;
        if (s->run[i].gpus > 1) return 0;
        any = 1;
    }
    return any;
}

int report_one_gpu_study(const study_runs_t *s) {
    for (int g = 0; g < s->ng; g++)
        if (!report_one_gpu_group(s, g)) return 0;
    return s->ng > 0;
}

int report_one_gpu_cells(const study_runs_t *s, int g, answer_cell_t *c) {
    int n = 0;
    for (int i = 0; i < s->nr; i++) {
        const study_run_t *u = &s->run[i];
        if (u->group != g) continue;
        c[n++] = (answer_cell_t){.math = u->math, .status = u->fstat, .batch = u->line_batch,
                                 .ips = report_run_tput(u), .acc = u->facc / 100, .tokens = u->tokens};
    }
    return n;
}

void report_one_gpu(const report_t *r, FILE *md, int g) {
    const study_runs_t *s = &r->st;
    answer_cell_t *c = mem_zalloc((size_t)(s->nr ? s->nr : 1), sizeof *c);
    int n = report_one_gpu_cells(s, g, c);
    answer_one_t o;
    answer_one_gpu(c, n, &o);
    fprintf(md, "### One GPU\n\nEvery run of %s is on one GPU, so nothing scales: no epoch-time, speedup or "
                "breakdown figure, no all-reduce model and no projection. What one GPU can, per batch and math "
                "(%s: the median of a run's steady epochs; accuracy: its last epoch's):\n\n",
            s->grp[g].sub, study_tput_unit(s->grp[g].tokens));
    fprintf(md, "| batch | math | %s | final test acc | status |\n|---:|---|---:|---:|---|\n",
            study_tput_unit(s->grp[g].tokens));
    for (int i = 0; i < n; i++) {
        fprintf(md, "| %d | %s | %s | %s | %s |\n", c[i].batch, *c[i].math ? c[i].math : "—",
                report_f0(c[i].ips).s, report_pct(100 * c[i].acc).s, c[i].status);
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
