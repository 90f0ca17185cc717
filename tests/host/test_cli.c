/* test_cli.c — the command line as a newcomer meets it: --help within a terminal's 80 columns and naming the
 * subcommands, "did you mean" for a mistyped option, a strategy's GPU bound refused up front, the warning on a
 * learning rate grown past its bound, and where --bench allreduce writes by default. */
#define _POSIX_C_SOURCE 200809L
#include "bench/options.h"
#include "bench/front.h"
#include "bench/sweep.h"
#include "test.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

static const strategy_info_t *const *registry(void) {
    static const strategy_info_t *infos[64];
    strategy_infos(infos, 64);
    return infos;
}

#include "host/parse_args.h"

/* Every line of --help as `scaling --help` prints it (the option table, then the strategies and the default study). */
static void test_help_width(void) {
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    options_usage(f, "scaling");
    front_help(f, registry());
    fclose(f);
    int lines = 0, wide = 0;
    for (char *p = text; *p;) {
        size_t n = strcspn(p, "\n");
        lines++;
        if (n > OPT_HELP_WIDTH) {
            wide++;
            EXPECT(0, "--help line %d is %zu columns: %.*s", lines, n, (int)n, p);
        }
        p += n + (p[n] == '\n');
    }
    EXPECT(lines > 100 && wide == 0, "%d lines, %d wider than %d", lines, wide, OPT_HELP_WIDTH);
    EXPECT(strstr(text, "Usage: scaling [options]") && strstr(text, "scaling report STUDY.csv") &&
           strstr(text, "scaling tsv FILE"), "the usage names the subcommands");
    /* wrapping keeps every word and an aligned table's columns */
    EXPECT(strstr(text, "--gpus x --batch x --lr x --seed x --math x --grad-dtype x --micro-batches") != NULL,
           "the sweep's order");
    EXPECT(strstr(text, "  resnet50   batch 256  image 224") != NULL, "the models' columns");
    EXPECT(strstr(text, "results/scaling_allreduce.csv") != NULL, "--out names the benchmark's default");
    free(text);
}

static void test_wrap(void) {
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    char words[400] = "";
    for (int i = 0; i < 40; i++) strcat(words, "word ");
    int col = opt_wrap(f, words, 70, 4);
    fclose(f);
    EXPECT(strncmp(text, "word", 4) == 0 && strstr(text, "\n    word word") && col <= OPT_HELP_WIDTH,
           "continuation lines indented, width kept: %s", text);
    for (char *p = text; *p; p += strcspn(p, "\n") + (p[strcspn(p, "\n")] == '\n'))
        EXPECT((int)strcspn(p, "\n") <= OPT_HELP_WIDTH - (p == text ? 70 : 0), "line within the width");
    free(text);
}

static void test_did_you_mean(void) {
    options_t o;
    char err[256];
    static const struct { const char *arg, *want; } cases[] = {
        {"--stratgy", "unknown option \"--stratgy\" (did you mean --strategy?)"},
        {"--bacth", "unknown option \"--bacth\" (did you mean --batch?)"},
        {"--epohcs", "(did you mean --epochs?)"},
        {"--dataset-dir", "(did you mean --data-dir?)"},
        {"--gpuz=2", "unknown option \"--gpuz\" (did you mean --gpus?)"},
        {"--lr-s", "ambiguous option \"--lr-s\" (--lr-schedule, --lr-scaling)"},
        {"--frobnicate", "unknown option \"--frobnicate\" (see --help)"},
        {"help", "unexpected argument \"help\" (did you mean --help?)"},
        {"gpus", "unexpected argument \"gpus\" (did you mean --gpus?)"},
        {"report2", "unexpected argument \"report2\" (options take the form --name VALUE)"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int rc = PARSE(&o, err, cases[i].arg, "2");
        EXPECT(rc == 2 && strstr(err, cases[i].want) && !strchr(err, '\n'), "%s: rc %d, '%s'", cases[i].arg, rc, err);
    }
    EXPECT(PARSE(&o, err, "--gpu", "2") == 0 && o.gpus[0] == 2, "a unique prefix is still taken: %s", err);
}

static void test_gpu_bound(void) {
    options_t o;
    char err[256];
    const strategy_info_t *const *infos = registry();
    EXPECT(PARSE(&o, err, "--strategy", "single", "--gpus", "2") == 0, "parse: %s", err);
    EXPECT(options_validate(&o, infos, -1, err, sizeof err) == 2 &&
           strcmp(err, "--gpus 2: strategy single runs on at most 1 GPU (another --strategy runs on more)") == 0,
           "single on 2 GPUs refused without asking the devices: '%s'", err);
    EXPECT(PARSE(&o, err, "--gpus", "1,4", "--dry-run") == 0 && options_validate(&o, infos, -1, err, sizeof err) == 2 &&
           strstr(err, "--gpus 4: strategy single"), "the default strategy, in a dry run: '%s'", err);
    EXPECT(PARSE(&o, err, "--strategy", "nccl", "--gpus", "1,2,8") == 0 &&
           options_validate(&o, infos, -1, err, sizeof err) == 0, "nccl has no bound: %s", err);
    EXPECT(PARSE(&o, err, "--bench", "allreduce", "--gpus", "2,4") == 0 &&
           options_validate(&o, infos, -1, err, sizeof err) == 0, "the benchmark picks reducing strategies: %s", err);
    /* the bound is a property: any strategy that declares one gets the check, by no name */
    static const strategy_info_t four = {.name = "four", .max_gpus = 4, .reduces = 1};
    static const strategy_info_t *const mine[] = {&four, NULL};
    EXPECT(PARSE(&o, err, "--strategy", "four", "--gpus", "2,4") == 0 &&
           options_validate(&o, mine, -1, err, sizeof err) == 0, "within the bound: %s", err);
    EXPECT(PARSE(&o, err, "--strategy", "four", "--gpus", "2,8") == 0 &&
           options_validate(&o, mine, -1, err, sizeof err) == 2 &&
           strstr(err, "--gpus 8: strategy four runs on at most 4 GPUs"), "past it: '%s'", err);
}

/* The warning's line for these options' sweep, "" where there is none. */
static const char *lr_warning(char *msg, size_t len, options_t *o) {
    sweep_point_t *pts = NULL;
    char err[256];
    int n = sweep_expand(o, &pts, err, sizeof err);
    msg[0] = '\0';
    if (n < 0) snprintf(msg, len, "expand: %s", err);
    else sweep_lr_warning(o, pts, n, msg, len);
    free(pts);
    return msg;
}

static void test_lr_bound(void) {
    options_t o;
    char err[256], msg[512];
    EXPECT(PARSE(&o, err, "--strategy", "nccl", "--gpus", "2,8") == 0 && !*lr_warning(msg, sizeof msg, &o),
           "8x: no warning (%s)", msg);
    EXPECT(PARSE(&o, err, "--strategy", "nccl", "--gpus", "8,16,32") == 0 &&
           strstr(lr_warning(msg, sizeof msg, &o), "--lr 0.1 grows to 3.2 at global batch 8192 (32x, --lr-scaling "
                  "linear), past 10x") && !strchr(msg, '\n'), "32 GPUs weak: '%s'", msg);
    EXPECT(PARSE(&o, err, "--strategy", "nccl", "--gpus", "32", "--lr-scaling", "sqrt") == 0 &&
           !*lr_warning(msg, sizeof msg, &o), "sqrt: 5.7x (%s)", msg);
    EXPECT(PARSE(&o, err, "--batch", "256,4096", "--lr-base-batch", "256") == 0 &&
           strstr(lr_warning(msg, sizeof msg, &o), "grows to 1.6 at global batch 4096 (16x"), "a batch sweep: '%s'",
           msg);
}

int main(void) {
    test_help_width();
    test_wrap();
    test_did_you_mean();
    test_gpu_bound();
    test_lr_bound();
    return test_summary();
}
