/* test_answer.c — the default study's answer from rows: steady-epoch medians (warm-up left out), T1 from single at the
 * same batch (per GPU; the pipeline's global), each strategy at its largest GPU count, the fastest there, runs with no
 * steady epoch, and the one-GPU study. */
#include "report/answer.h"
#include "test.h"

#include <string.h>

/* The registry's properties that the answer asks (strategies/ files): single is the reference, the pipeline measures
 * against it at the global batch. */
static const strategy_info_t single = {.name = "single", .reference = 1}, naive = {.name = "naive", .reduces = 1},
                             nccl = {.name = "nccl", .reduces = 1},
                             pipeline = {.name = "pipeline", .staged = 1, .t1_global_batch = 1};
static const strategy_info_t *const infos[] = {&single, &naive, &nccl, &pipeline, NULL};

/* Adds a run: one warm-up epoch of 9 s (which must never count) then the steady epoch times given; none: a setup row. */
static void add_run(answer_t *ans, const char *id, const char *strategy, int gpus, int per_gpu, int micro,
                    const double *steady, int n, const char *status) {
    results_row_t r = {.strategy = strategy, .gpus = gpus, .per_gpu_batch = per_gpu, .stats.micro_batches = micro};
    r.global_batch = micro > 0 ? per_gpu : per_gpu * gpus;     /* the pipeline: strong scaling, per_gpu = global */
    snprintf(r.run_id, sizeof r.run_id, "%s", id);
    if (n == 0)     /* a run that could not be set up: its one row */
        r.epoch = 0, r.phase = "setup", r.stats.epoch_s = -1, r.status = status;
    else
        r.epoch = 1, r.phase = "warmup", r.stats.epoch_s = 9, r.status = "ok";
    EXPECT(answer_add(ans, &r) == 0, "add");
    for (int i = 0; i < n; i++) {
        r.epoch = i + 2, r.phase = "steady", r.stats.epoch_s = steady[i], r.status = i + 1 == n ? status : "ok";
        EXPECT(answer_add(ans, &r) == 0, "add");
    }
}

static const answer_line_t *line_of(const answer_summary_t *s, const char *strategy, int batch) {
    for (int i = 0; i < s->n; i++)
        if (strcmp(s->line[i].strategy, strategy) == 0 && (batch < 0 || s->line[i].batch == batch)) return &s->line[i];
    return NULL;
}

static int near(double a, double b) { return fabs(a - b) < 1e-12; }

/* What answer_print writes for ans (malloc'd). */
static char *printed(const answer_t *ans, const char *what, const char *report) {
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f) return strdup("");
    answer_print(f, ans, what, report);
    fclose(f);
    return text;
}

static void test_median(void) {
    double odd[] = {3, 1, 2}, even[] = {4, 1, 3, 2};
    EXPECT(answer_median(odd, 3) == 2, "median of 3");
    EXPECT(answer_median(even, 4) == 2.5, "median of 4");
    EXPECT(answer_median(NULL, 0) < 0, "no values: < 0");
}

static void test_two_gpus(void) {
    answer_t ans = {.strategies = infos};
    add_run(&ans, "s256", "single", 1, 256, -1, (const double[]){1.50, 1.48, 1.52, 1.49}, 4, "ok");   /* median 1.495 */
    add_run(&ans, "s1024", "single", 1, 1024, -1, (const double[]){1.25, 1.26, 1.24, 1.25}, 4, "ok"); /* median 1.25 */
    add_run(&ans, "n1", "naive", 2, 256, -1, (const double[]){0.79, 0.78, 0.78, 0.80}, 4, "ok");      /* median 0.785 */
    add_run(&ans, "c1", "nccl", 2, 256, -1, (const double[]){0.77, 0.78, 0.76}, 3, "ok");             /* median 0.77 */
    add_run(&ans, "p1", "pipeline", 2, 1024, 4, (const double[]){0.96, 0.95, 0.97, 0.96}, 4, "ok");   /* median 0.96 */
    answer_summary_t s;
    answer_summarise(&ans, &s);
    EXPECT(s.gpus == 2 && s.n == 5, "gpus %d, lines %d", s.gpus, s.n);
    const answer_line_t *l = line_of(&s, "single", 256);
    EXPECT(l && near(l->t, 1.495) && near(l->speedup, 1), "single 256: %g", l ? l->t : -1);
    l = line_of(&s, "naive", -1);
    EXPECT(l && near(l->t, 0.785) && near(l->t1, 1.495) && near(l->speedup, 1.495 / 0.785) &&
           near(l->efficiency, 1.495 / 0.785 / 2), "naive: t %g t1 %g", l ? l->t : -1, l ? l->t1 : -1);
    /* The pipeline's reference is single at its global batch 1024, not at 256 */
    l = line_of(&s, "pipeline", -1);
    EXPECT(l && l->pipeline && l->batch == 1024 && near(l->t1, 1.25) && near(l->speedup, 1.25 / 0.96),
           "pipeline: batch %d t1 %g", l ? l->batch : -1, l ? l->t1 : -1);
    EXPECT(s.fastest >= 0 && strcmp(s.line[s.fastest].strategy, "nccl") == 0, "fastest: %s",
           s.fastest >= 0 ? s.line[s.fastest].strategy : "none");

    char *text = printed(&ans, "resnet18 on fashion-mnist", "results/x/REPORT.md");
    EXPECT(strstr(text, "# answer: resnet18 on fashion-mnist"), "title:\n%s", text);
    EXPECT(strstr(text, "  naive         2   256/GPU    0.785     1.495    1.90x     95.2 %  ok\n"), "naive line:\n%s", text);
    EXPECT(strstr(text, "  pipeline      2      1024    0.960     1.250    1.30x     65.1 %  ok\n"), "pipeline line:\n%s",
           text);
    EXPECT(strstr(text, "# fastest on 2 GPUs: nccl, 0.770 s per epoch\n"), "fastest line:\n%s", text);
    EXPECT(strstr(text, "# report: results/x/REPORT.md\n"), "report line:\n%s", text);
    free(text);
    answer_free(&ans);
}

/* 4 GPUs: each strategy at its largest count, the best run there; one that never reached a steady epoch. */
static void test_four_gpus(void) {
    answer_t ans = {.strategies = infos};
    add_run(&ans, "s", "single", 1, 256, -1, (const double[]){2.0, 2.0}, 2, "ok");
    add_run(&ans, "s1024", "single", 1, 1024, -1, (const double[]){1.6, 1.6}, 2, "ok");
    add_run(&ans, "n2", "naive", 2, 256, -1, (const double[]){1.0, 1.0}, 2, "ok");
    add_run(&ans, "n4", "naive", 4, 256, -1, (const double[]){0.6, 0.6}, 2, "ok");
    add_run(&ans, "c2", "nccl", 2, 256, -1, (const double[]){1.0, 1.0}, 2, "ok");
    add_run(&ans, "c4", "nccl", 4, 256, -1, (const double[]){0.52, 0.54}, 2, "ok");
    add_run(&ans, "c4b", "nccl", 4, 256, -1, (const double[]){0.55, 0.55}, 2, "ok");   /* slower repeat: the best counts */
    add_run(&ans, "p2", "pipeline", 2, 1024, 4, (const double[]){1.0, 1.0}, 2, "ok");
    add_run(&ans, "p4", "pipeline", 4, 1024, 4, NULL, 0, "oom");
    answer_summary_t s;
    answer_summarise(&ans, &s);
    EXPECT(s.gpus == 4, "gpus %d", s.gpus);
    const answer_line_t *l = line_of(&s, "nccl", -1);
    EXPECT(l && l->gpus == 4 && near(l->t, 0.53) && near(l->speedup, 2.0 / 0.53), "nccl at 4: %g", l ? l->t : -1);
    l = line_of(&s, "pipeline", -1);
    EXPECT(l && l->gpus == 4 && l->t < 0 && l->speedup < 0 && strcmp(l->status, "oom") == 0,
           "pipeline at 4 without a steady epoch: t %g, status %s", l ? l->t : 0, l ? l->status : "?");
    EXPECT(s.fastest >= 0 && strcmp(s.line[s.fastest].strategy, "nccl") == 0, "fastest nccl");

    char *text = printed(&ans, "m on d", "r");
    EXPECT(strstr(text, "  pipeline      4      1024        -     1.600        -          -  oom\n"),
           "an untimed run prints '-':\n%s", text);
    EXPECT(strstr(text, "# fastest on 4 GPUs: nccl, 0.530 s per epoch\n"), "fastest:\n%s", text);
    free(text);
    answer_free(&ans);
}

/* A one-GPU run of the default study: a 9 s warm-up epoch (never counted) then steady epochs at the given images/s,
 * the last epoch's test accuracy acc; no ips: one setup row of status oom. */
static void add_one(answer_t *ans, const char *id, const char *math, int batch, const double *ips, int n, double acc) {
    results_row_t r = {.strategy = "single", .math = math, .gpus = 1, .per_gpu_batch = batch, .global_batch = batch,
                       .stats.micro_batches = -1, .test_acc = -1};
    snprintf(r.run_id, sizeof r.run_id, "%s", id);
    if (n == 0) {
        r.epoch = 0, r.phase = "setup", r.stats.epoch_s = -1, r.images_per_s = -1, r.status = "oom";
        EXPECT(answer_add(ans, &r) == 0, "add");
        return;
    }
    r.epoch = 1, r.phase = "warmup", r.stats.epoch_s = 9, r.images_per_s = 1, r.status = "ok", r.test_acc = 0.5;
    EXPECT(answer_add(ans, &r) == 0, "add");
    for (int i = 0; i < n; i++) {
        r.epoch = i + 2, r.phase = "steady", r.images_per_s = ips[i], r.stats.epoch_s = 60000 / ips[i];
        r.test_acc = i + 1 == n ? acc : 0.6;
        EXPECT(answer_add(ans, &r) == 0, "add");
    }
}

/* The one-GPU study: per batch and math the median steady images/s and the last test accuracy, the fastest cell and
 * the other math at its batch, the largest batch that fit per math and the smallest that did not (an oom row). */
static void test_one_gpu(void) {
    answer_t ans = {.strategies = infos, .second_gpu = "naive and nccl on 2 GPUs at 256 per GPU (weak scaling)"};
    add_one(&ans, "t64", "tf32", 64, (const double[]){22000, 21000, 22500}, 3, 0.912);      /* median 22000 */
    add_one(&ans, "b64", "bf16", 64, (const double[]){33000, 32000, 32500}, 3, 0.910);      /* 32500 */
    add_one(&ans, "t4k", "tf32", 4096, (const double[]){50000, 51000, 49000}, 3, 0.801);    /* 50000 */
    add_one(&ans, "b4k", "bf16", 4096, (const double[]){101000, 99000, 100000}, 3, 0.795);  /* 100000: fastest */
    add_one(&ans, "t16k", "tf32", 16384, NULL, 0, -1);                                      /* did not fit */
    add_one(&ans, "b16k", "bf16", 16384, (const double[]){90000, 95000, 91000}, 3, 0.402);  /* 91000 */
    add_one(&ans, "t60k", "tf32", 60000, NULL, 0, -1);
    add_one(&ans, "b60k", "bf16", 60000, NULL, 0, -1);
    answer_summary_t s;
    answer_summarise(&ans, &s);
    EXPECT(s.gpus == 1 && s.fastest == -1, "one GPU: gpus %d, fastest %d", s.gpus, s.fastest);

    answer_cell_t c[8];
    for (int i = 0; i < 8; i++) {
        double x[ANSWER_MAX_STEADY];
        memcpy(x, ans.runs[i].steady_ips, sizeof(double) * (size_t)ans.runs[i].n_steady);
        c[i] = (answer_cell_t){ans.runs[i].math, ans.runs[i].status, ans.runs[i].batch,
                               answer_median(x, ans.runs[i].n_steady), ans.runs[i].acc};
    }
    answer_one_t o;
    answer_one_gpu(c, 8, &o);
    EXPECT(o.n_math == 2 && strcmp(o.math[0], "tf32") == 0 && strcmp(o.math[1], "bf16") == 0, "maths: %d", o.n_math);
    EXPECT(o.fit[0] == 4096 && o.no_fit[0] == 16384, "tf32: fit %d, did not %d", o.fit[0], o.no_fit[0]);
    EXPECT(o.fit[1] == 16384 && o.no_fit[1] == 60000, "bf16: fit %d, did not %d", o.fit[1], o.no_fit[1]);
    EXPECT(o.fastest == 3 && near(c[3].ips, 100000), "fastest: cell %d", o.fastest);
    EXPECT(answer_cell_at(c, 8, "tf32", 4096) == 2 && answer_cell_at(c, 8, "tf32", 16384) == -1, "cell lookup");

    char *text = printed(&ans, "resnet18 on fashion-mnist", "r/REPORT.md");
    EXPECT(strstr(text, "# answer: resnet18 on fashion-mnist on 1 GPU;"), "title:\n%s", text);
    EXPECT(strstr(text, "       64  tf32      22000    91.2 %  ok\n"), "64, tf32:\n%s", text);
    EXPECT(strstr(text, "    16384  bf16      91000    40.2 %  ok\n"), "16384, bf16:\n%s", text);
    EXPECT(strstr(text, "    16384  tf32          -         -  oom\n"), "the oom row:\n%s", text);
    EXPECT(strstr(text, "# fastest: bf16 at batch 4096, 100000 images/s; tf32 there: 50000 images/s (2.00x slower)\n"),
           "fastest:\n%s", text);
    EXPECT(strstr(text, "# largest batch that fit: tf32 4096 (16384 did not: oom), bf16 16384 (60000 did not: oom)\n"),
           "largest:\n%s", text);
    EXPECT(strstr(text, "# a second GPU would add: naive and nccl on 2 GPUs"), "second GPU:\n%s", text);
    EXPECT(strstr(text, "# report: r/REPORT.md\n"), "report:\n%s", text);
    EXPECT(!strstr(text, "speedup"), "no speedup column on one GPU:\n%s", text);
    free(text);

    /* every batch fit: said so */
    answer_t one = {.strategies = infos};
    add_one(&one, "x", "tf32", 256, (const double[]){40000}, 1, 0.9);
    text = printed(&one, "m on d", "r");
    EXPECT(strstr(text, "# largest batch that fit: tf32 256 (every batch tried fit)\n"), "all fit:\n%s", text);
    EXPECT(!strstr(text, "second GPU"), "no second-GPU line when the caller gives none:\n%s", text);
    free(text);
    answer_free(&one);
    answer_free(&ans);
}

/* T1 is single in the same math: a tf32 run's speedup is over single in tf32, not over the faster bf16 single. */
static void test_math(void) {
    answer_t ans = {.strategies = infos};
    const char *maths[] = {"tf32", "bf16", "tf32"}, *strategies[] = {"single", "single", "nccl"};
    const double t[] = {1.40, 0.80, 0.75};
    for (int k = 0; k < 3; k++) {
        int gpus = k == 2 ? 2 : 1;
        results_row_t r = {.strategy = strategies[k], .math = maths[k], .gpus = gpus, .per_gpu_batch = 256,
                           .global_batch = 256 * gpus, .stats.micro_batches = -1, .epoch = 2,
                           .phase = "steady", .stats.epoch_s = t[k], .status = "ok"};
        snprintf(r.run_id, sizeof r.run_id, "m%d", k);
        EXPECT(answer_add(&ans, &r) == 0, "add");
    }
    answer_summary_t s;
    answer_summarise(&ans, &s);
    const answer_line_t *c = line_of(&s, "nccl", -1);
    EXPECT(c && near(c->t1, 1.40) && near(c->speedup, 1.40 / 0.75), "nccl tf32: t1 %.3f, want single tf32's 1.400",
           c ? c->t1 : -1);
    int singles = 0;
    for (int i = 0; i < s.n; i++) singles += strcmp(s.line[i].strategy, "single") == 0;
    EXPECT(singles == 2, "%d single lines, want one per math", singles);
    answer_free(&ans);
}

/* Strategies the registry lacks (an older or foreign CSV): no properties, so never T1 however fast, measured
 * against single at the per-GPU batch, or at the global batch where micro_batches says they are a pipeline. */
static void test_unknown(void) {
    answer_t ans = {.strategies = infos};
    add_run(&ans, "s256", "single", 1, 256, -1, (const double[]){1.5}, 1, "ok");
    add_run(&ans, "s1024", "single", 1, 1024, -1, (const double[]){1.2}, 1, "ok");
    add_run(&ans, "x1", "foreign", 1, 256, -1, (const double[]){0.5}, 1, "ok"); /* faster than single: not T1 */
    add_run(&ans, "x2", "foreign", 2, 256, -1, (const double[]){1.0}, 1, "ok");
    add_run(&ans, "y2", "staged", 2, 1024, 4, (const double[]){0.8}, 1, "ok");
    answer_summary_t s;
    answer_summarise(&ans, &s);
    const answer_line_t *l = line_of(&s, "foreign", -1);
    EXPECT(l && l->gpus == 2 && !l->pipeline && l->batch == 256 && near(l->t1, 1.5) && near(l->speedup, 1.5),
           "foreign: against single at 256/GPU, t1 %g", l ? l->t1 : -1);
    l = line_of(&s, "staged", -1);
    EXPECT(l && l->pipeline && l->batch == 1024 && near(l->t1, 1.2) && near(l->speedup, 1.5),
           "micro_batches: a pipeline at the global batch, t1 %g", l ? l->t1 : -1);
    answer_free(&ans);
}

int main(void) {
    test_median();
    test_unknown();
    test_math();
    test_two_gpus();
    test_four_gpus();
    test_one_gpu();
    return test_summary();
}
