/* markdown.c — REPORT.md's study parts: the header, the all-reduce fits, and per model and dataset the figures, the
 * one-GPU section (one_gpu.c), the summary tables (summary.c), the maths side by side (precision.c) and the runs that
 * did not end ok. The projection is project.c. */
#include "report.h"
#include "answer.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static void not_ok(const report_t *r, FILE *md, int g) {
    const study_runs_t *s = &r->st;
    int nf = 0;
    for (int i = 0; i < s->nr; i++) {
        const study_run_t *u = &s->run[i];
        if (u->group != g || strcmp(u->fstat, "ok") == 0) continue;
        if (!nf++)
            fprintf(md,
                    "### Runs that did not end ok\n\n| strategy | GPUs | batch | lr | M | status | last epoch | run |\n"
                    "|---|---:|---:|---:|---:|---|---:|---|\n");
        bytes_t w = {0};
        text_printf(&w, "%s", u->strategy);
        report_with_prec(&w, s, u);
        if (*u->variant) text_printf(&w, ", %s", u->variant);
        fprintf(md, "| %s | %d | %d | %s | %s | %s | %d | `%s` |\n", w.s, u->gpus, u->global_batch, u->lr,
                *u->mb ? u->mb : "—", u->fstat, u->last, u->run_id);
        free(w.s);
    }
    if (nf) fprintf(md, "\n");
}

char *report_bench_command(const report_t *r) {
    bytes_t b = {0};
    int last = 1;   /* the study's GPU counts from 2 up, in order: a benchmark on one GPU measures nothing */
    for (;;) {
        int next = 0;
        for (int i = 0; i < r->st.nr; i++)
            if (r->st.run[i].gpus > last && (!next || r->st.run[i].gpus < next)) next = r->st.run[i].gpus;
        if (!next) break;
        text_printf(&b, "%s%d", b.len ? "," : "", next);
        last = next;
    }
    char *cmd = mem_printf("./scaling --bench allreduce --gpus %s --out %s", b.len ? b.s : "2", r->bench_default);
    free(b.s);
    return cmd;
}

static void allreduce_model(const report_t *r, FILE *md) {
    fprintf(md, "## All-reduce model\n\n");
    if (!r->have_bench) {
        char *cmd = report_bench_command(r);
        char *c = report_md_code(cmd, 0);
        fprintf(md, "no all-reduce benchmark: model line omitted (run %s, or pass `--allreduce FILE`).\n\n", c);
        free(cmd), free(c);
        return;
    }
    char *src = report_md_code(r->bench_src, 0);
    if (*r->bench_err || r->nfit_bench == 0) {
        char *why = *r->bench_err ? report_md_code(r->bench_err, 0) : NULL;
        fprintf(md, "%s: %s: model line omitted.\n\n", src,
                why ? why : "no usable rows (gpus >= 2, bytes and time_us > 0, wrong = 0)");
        free(why), free(src);
        return;
    }
    fprintf(md, "α-β fit to %s (least squares on the relative error; t in µs, S in bytes):\n\n", src);
    free(src);
    fprintf(md, "| strategy | model t(n, S) | α (µs) | 1/β (GB/s) | points | GPU counts | sizes | max error |\n"
                "|---|---|---:|---:|---:|---|---|---:|\n");
    for (int i = 0; i < r->nfit_bench; i++) {
        const fit_t *k = &r->fits.fit[i];
        if (k->bad) {
            fprintf(md, "| %s | — | — | — | %d | %s | | not enough distinct points |\n", k->name, k->n, k->gpus);
            continue;
        }
        fprintf(md, "| %s | %s | %.2f | %s | %d | %s | %s–%s B | %.1f %% |\n", k->name,
                k->ring ? "2(n−1)α + 2(n−1)/n·S·β (ring)" : "2(n−1)α + 2(n−1)·S·β (in and out of GPU 0)", k->alpha,
                k->beta > 0 ? report_f1(1e-3 / k->beta).s : "—", k->n, k->gpus, report_num(k->bmin).s,
                report_num(k->bmax).s, 100 * k->err);
    }
    fprintf(md,
            "\nThe model epoch time is steps × (%s's median step at the same per-GPU batch and math + t(n, S)), "
            "with S the gradient bytes reduced per step (the bytes on the wire) and t the fit of the gradients' type: "
            "no overlap of communication with backward, so an overlapping strategy can beat it.\n\n",
            study_ref(&r->st));
}

static void header(const report_t *r, FILE *md) {
    const study_runs_t *s = &r->st;
    char *src = report_md_code(r->src, 0);
    fprintf(md, "# Scaling study: %s\n\n", src);
    free(src);
    for (int g = 0; g < s->ng; g++) {
        const study_group_t *gr = &s->grp[g];
        bytes_t gpus = {0}, hosts = {0}, commits = {0}, dates = {0};
        names_join(&gpus, &gr->gpus, ", ");
        names_join(&hosts, &gr->hosts, ", ");
        names_join(&commits, &gr->commits, ", ");
        report_study_dates(&dates, gr);
        fprintf(md, "- **%s**: %s; host %s; commit %s; %s\n", gr->sub, gpus.len ? gpus.s : "GPU unknown",
                hosts.len ? hosts.s : "?", commits.len ? commits.s : "?", text_str(&dates));
        free(gpus.s), free(hosts.s), free(commits.s), free(dates.s);
    }
    fprintf(md, "- %d rows, %d runs, %d configurations", s->nrow, s->allruns, s->nr);
    if (s->leftout > 0)
        fprintf(md,
                "; %d run(s) left out (killed part-way and run again later by `--resume`, or superseded by a later run "
                "of the same configuration)",
                s->leftout);
    fprintf(md, "\n");
    if (s->unknown.n) {
        bytes_t u = {0};
        names_join(&u, &s->unknown, ", ");
        fprintf(md,
                "- strategies this binary does not know: %s (no properties: not the reference, a pipeline where its "
                "rows have micro_batches, no model or projection)\n",
                u.s);
        free(u.s);
    }
    fprintf(md, "\n");
}

/* A figure where it was drawn, and under it the one sentence that says what it shows. */
static void figure(const report_t *r, FILE *md, const char *name, const char *alt, const char *what) {
    for (int i = 0; i < r->nfig; i++)
        if (strcmp(r->fig[i], name) == 0) {
            fprintf(md, "![%s](%s)\n\n*%s*\n\n", alt, name, what);
            return;
        }
}

static void figures(const report_t *r, FILE *md, const study_group_t *gr) {
    static const char *const figs[][3] = {
        {"epoch_time", "epoch time against GPU count",
         "The median steady epoch time of each strategy and batch against the GPU count: lower is faster; a line "
         "that flattens stopped gaining from GPUs."},
        {"speedup", "speedup and efficiency against GPU count",
         "Speedup T1/TN (left) and efficiency T1/(N·TN) (right) of each line against its ideal (dashed): the gap "
         "to the dashed line is what scaling costs."},
        {"throughput", "throughput against per-GPU batch",
         "Images per second against the batch per GPU, one line per strategy and GPU count: where a line flattens, "
         "a larger batch no longer fills the GPU better."},
        {"acc_batch", "final test accuracy against batch",
         "The final test accuracy against the batch: how far a batch can grow before accuracy falls."},
        {"breakdown", "per-step compute, exposed communication and idle time",
         "Where a step's time goes, one bar per configuration: compute, the communication the compute waited for, "
         "and idle time."},
        {"bubble", "pipeline bubble against micro-batches",
         "The pipeline's measured bubble (idle share of a step) against the micro-batch count, beside the ideal "
         "(p−1)/(M+p−1)."},
        {"acc_lr", "final test accuracy against learning rate",
         "The final test accuracy against the learning rate swept (ticks at the swept values), one line per "
         "strategy, GPU count and batch: the best learning rate and how sharp its optimum is."},
        {"batch", "steps to the target accuracy against the global batch",
         "Steps to the target (median over seeds, range as bars) against the global batch, one line per optimizer "
         "and schedule, with the fit S = S_min + E_min / B: where the line flattens, a larger batch no longer "
         "trains in fewer steps (the critical batch)."}};
    fprintf(md, "### Figures\n\n");
    for (size_t i = 0; i < sizeof figs / sizeof *figs; i++) {
        char *n = mem_printf("%s-%s.png", figs[i][0], gr->id);
        figure(r, md, n, figs[i][1], figs[i][2]);
        free(n);
    }
    char *prefix = mem_printf("acc_epoch-%s-", gr->id);
    for (int i = 0; i < r->nfig; i++)
        if (strncmp(r->fig[i], prefix, strlen(prefix)) == 0)
            figure(r, md, r->fig[i], "test accuracy against epoch",
                   "Test accuracy after each epoch of one strategy's runs: whether they converge alike.");
    free(prefix);
    if (r->nfig == 0) fprintf(md, "(no figures: %s)\n\n", r->figs_note ? r->figs_note : "none drawn");
}

/* How the tables below read their runs. */
static void definitions(const report_t *r, FILE *md) {
    const study_runs_t *s = &r->st;
    fprintf(md, "## Definitions\n\n");
    fprintf(
        md,
        "Times are medians over each run's steady epochs (epoch 1 is warmup). A table row is one configuration but "
        "its seed: strategy, GPU count, batch, learning rate, math, gradient dtype, link and, in a column of its own, "
        "what else differs between a strategy's rows (copy path, NCCL algorithm, initialisation, momentum, weight "
        "decay, commit); its epoch time and final test accuracy are the medians over its seeds, with their range in "
        "parentheses where they differ. Speedup T1/TN and efficiency T1/(N·TN) take T1 from the strategy `%s` at the "
        "same batch and math (weak scaling: the same batch per GPU), its fastest run there.\n\n",
        study_ref(s));
}

/* The answer first: per model and math the table of answer.h and its findings. */
static void answer(const report_t *r, FILE *md) {
    study_answer_t a;
    study_answer_make(&r->st, &a);
    int lm = 0;     /* a language model's group: its speeds are tokens/s */
    for (int g = 0; g < r->st.ng; g++) lm |= r->st.grp[g].tokens;
    fprintf(md, "## Answer\n\n");
    fprintf(md,
            "Per model and math, a row per strategy, GPU count and batch, at its setting (learning rate, "
            "micro-batches) soonest to the target accuracy where the runs had one (every seed reaching it), else its "
            "fastest whose final test accuracy is within %.0f point of its best. %s: over the steady "
            "epochs of that setting's runs (its seeds), the median, and the range with the number of epochs and runs; "
            "per GPU: divided by the GPU count. Speedup and efficiency: %s over `%s`'s at the same batch (per GPU; "
            "a pipeline's: global) and math, and that over the GPU count. Δ acc: the final test accuracy (median over "
            "seeds) less `%s`'s there, in points; it fell only past the noise of both (the seeds' range, or one seed's "
            "last %d epochs), else it is within noise; on one GPU, against the best row. To target: the training "
            "time (CUDA events, evaluation apart) to the first epoch at the target, over the seeds (doc/report.md). "
            "`summary.csv` beside this file has every configuration as a row.",
            STUDY_ACC_POINTS, lm ? "images/s (a language model's: tokens/s)" : "images/s",
            lm ? "throughput" : "images/s", study_ref(&r->st), study_ref(&r->st), STUDY_SPREAD_EPOCHS);
    /* a language model has no accuracy: what stands in its place, and how its rule reads */
    if (lm)
        fprintf(md, " A language model's rows show its %s in place of accuracy (the mean cross-entropy on the held-out "
                    "split, nats, lower is better; the median over seeds and their range), its setting the fastest "
                    "whose %s is within the noise of the best, and Δ loss its change against `%s`'s; it rose only past "
                    "the noise of both, as accuracy falls.",
                report_quality(1)->words, report_quality(1)->name, study_ref(&r->st));
    fprintf(md, "\n\n");
    for (int g = 0; g < r->st.ng; g++) answer_write(md, &a, g, 1);
    study_answer_free(&a);
}

void report_markdown(report_t *r, FILE *md) {
    const study_runs_t *s = &r->st;
    header(r, md);
    answer(r, md);
    if (r->base) report_baseline(r, md);
    definitions(r, md);
    if (!study_one_gpu_study(s)) allreduce_model(r, md);
    for (int g = 0; g < s->ng; g++) {
        fprintf(md, "## %s\n\n", s->grp[g].sub);
        figures(r, md, &s->grp[g]);
        if (study_one_gpu_group(s, g)) report_one_gpu(r, md, g);
        report_summary(r, md, g);
        report_batch_section(r, md, g);
        report_precision(r, md, g);
        not_ok(r, md, g);
    }
}
