/* runs.c — the runs REPORT.md reports (study/table.h) as tables: `scaling report STUDY.csv --runs`, one TSV line each
 * with their steady medians, so that a script joining our numbers with another program's counts nothing itself; and
 * summary.csv beside REPORT.md, one CSV row per configuration with its key columns and what the report says of it. */
#include "report.h"

#include <csv.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* One cell: a tab or line break inside would split the line, so each becomes a space. */
static void put_text(FILE *f, int *col, const char *s) {
    if ((*col)++) fputc('\t', f);
    for (; s && *s; s++) fputc(*s == '\t' || *s == '\n' || *s == '\r' ? ' ' : *s, f);
}

/* A number as study_num_s prints it, but with the fewest digits that read back as the same double: a script rounds it
 * again, and the report's %.6g would move the last digit of a ratio (1.520557 / (2 x 0.785819) is 96.7 %, with
 * 1.52056 96.8 %). Empty for none (NAN, or < 0: the CSV's empty cell). */
static void shortest_num(char b[64], double x) {
    b[0] = '\0';
    if (!isnan(x) && x >= 0) {
        study_num_s(b, 64, x);
        for (int digits = 7; digits <= 17 && strtod(b, NULL) != x; digits++) snprintf(b, 64, "%.*g", digits, x);
    }
}
static void put_num(FILE *f, int *col, double x) {
    char b[64];
    shortest_num(b, x);
    put_text(f, col, b);
}

/* The table's columns, in order, each once: TEXT(name, cell) or NUM(name, cell), the cell an expression of the run r,
 * its last row `last` (may be NULL) and its environment `env`. */
#define RUN_COLUMNS(TEXT, NUM)                                                                                       \
    TEXT(run_id, r->run_id) TEXT(strategy, r->strategy) TEXT(model, r->model) TEXT(dataset, r->dataset)             \
    TEXT(math, r->math) TEXT(grad_dtype, r->gd) NUM(gpus, r->gpus) NUM(global_batch, r->global_batch)              \
    NUM(per_gpu_batch, r->pipe ? -1 : r->per_gpu) /* a pipeline's stages each see the whole batch: none per GPU */  \
    TEXT(lr, r->lr) TEXT(seed, r->seed) NUM(steps_median, r->med[RESULTS_COL_steps])                                \
    NUM(steady_epochs, study_steady_count(r, RESULTS_COL_epoch_s))                                                     \
    NUM(epoch_s_median, r->med[RESULTS_COL_epoch_s]) NUM(epoch_s_min, study_steady_min(r, RESULTS_COL_epoch_s))        \
    NUM(epoch_s_max, study_steady_max(r, RESULTS_COL_epoch_s))                                                         \
    NUM(images_per_s_median, r->med[RESULTS_COL_images_per_s])                                                       \
    NUM(images_per_s_min, study_steady_min(r, RESULTS_COL_images_per_s))                                               \
    NUM(images_per_s_max, study_steady_max(r, RESULTS_COL_images_per_s))                                               \
    NUM(tokens_per_s_median, r->med[RESULTS_COL_tokens_per_s]) /* a language model's; empty otherwise */            \
    NUM(step_ms_median, r->med[RESULTS_COL_step_ms])                                                                 \
    NUM(final_test_acc, last && !isnan(r->facc) ? last->test_acc : NAN) /* facc's cell, unscaled */                \
    NUM(final_comm_ms, last ? last->stats.comm_ms : NAN)                                                             \
    NUM(final_exposed_comm_ms, last ? last->stats.exposed_comm_ms : NAN)                                             \
    NUM(final_busbw_gbs, last ? last->stats.busbw_gbs : NAN) NUM(peak_mem_mb, r->peak_mb) TEXT(status, r->fstat)    \
    TEXT(gpu_name, env->gpu_name) TEXT(driver, env->driver) TEXT(cuda, env->cuda) TEXT(cudnn, env->cudnn)           \
    TEXT(nccl, env->nccl) TEXT(git_commit, env->git_commit)

int report_runs(const study_runs_t *s, FILE *f) {
    int col = 0;
#define HEAD(name, cell) put_text(f, &col, #name);
    RUN_COLUMNS(HEAD, HEAD)
#undef HEAD
    fputc('\n', f);
    for (int i = 0; i < s->nr; i++) {
        const study_run_t *r = &s->run[i];
        const study_row_t *last = r->final;
        const study_env_t *env = r->env;
        col = 0;
#define CELL_TEXT(name, cell) put_text(f, &col, cell);
#define CELL_NUM(name, cell) put_num(f, &col, cell);
        RUN_COLUMNS(CELL_TEXT, CELL_NUM)
#undef CELL_TEXT
#undef CELL_NUM
        fputc('\n', f);
    }
    return fflush(f) != 0 || ferror(f) ? 1 : 0;
}

/* ---- summary.csv: one row per configuration (reported run), its key columns as the study CSV writes them, then what
 * the report says of it, written with libcsv's quoting (only where a cell needs it), for pandas and CI */

static void csv_cell(FILE *f, int *col, const char *s) {
    if ((*col)++) fputc(',', f);
    size_t n = strlen(s);
    if (!n) return;
    if (!strpbrk(s, ",\"\r\n") && s[0] != ' ' && s[n - 1] != ' ') {
        fputs(s, f);
        return;
    }
    csv_fwrite(f, s, n);
}

static void csv_num(FILE *f, int *col, double x) {   /* as --runs writes it (shortest_num) */
    char b[64];
    shortest_num(b, x);
    csv_cell(f, col, b);
}

/* What the report says of a configuration beside its key: its steady epochs, images/s (median, extremes, per GPU; a
 * language model's sequences/s), a language model's tokens/s (median, per GPU; empty for an image model), epoch time,
 * speedup and efficiency against T1, final test accuracy (a fraction, as the CSV's), a language model's final
 * held-out loss in its place (nats, as the CSV's test_loss; empty for an image model) and how it ended. */
#define SUMMARY_COLUMNS(TEXT, NUM)                                                                                   \
    TEXT(run_id, r->run_id) TEXT(git_commit, r->env->git_commit) TEXT(variant, r->variant)                           \
    NUM(steady_epochs, study_steady_count(r, RESULTS_COL_epoch_s))                                                     \
    NUM(images_per_s, r->med[RESULTS_COL_images_per_s])                                                              \
    NUM(images_per_s_min, study_steady_min(r, RESULTS_COL_images_per_s))                                               \
    NUM(images_per_s_max, study_steady_max(r, RESULTS_COL_images_per_s))                                               \
    NUM(images_per_s_per_gpu, r->med[RESULTS_COL_images_per_s] / r->gpus)                                          \
    NUM(tokens_per_s, r->med[RESULTS_COL_tokens_per_s])                                                            \
    NUM(tokens_per_s_per_gpu, r->med[RESULTS_COL_tokens_per_s] / r->gpus) NUM(epoch_s, r->med[RESULTS_COL_epoch_s]) \
    NUM(speedup, t1 >= 0 ? s->run[t1].med[RESULTS_COL_epoch_s] / r->med[RESULTS_COL_epoch_s] : NAN)                  \
    NUM(efficiency, t1 >= 0 ? s->run[t1].med[RESULTS_COL_epoch_s] / r->med[RESULTS_COL_epoch_s] / r->gpus : NAN)     \
    NUM(final_test_acc, isnan(r->facc) ? NAN : r->facc / 100) NUM(final_test_loss, r->floss)                      \
    TEXT(status, r->fstat)

int report_summary_csv(const study_runs_t *s, FILE *f) {
    int col = 0;
    for (int k = 0; k < RESULTS_KEY_FIELDS; k++) csv_cell(f, &col, study_key_columns[k]);
#define HEAD(name, cell) csv_cell(f, &col, #name);
    SUMMARY_COLUMNS(HEAD, HEAD)
#undef HEAD
    fputc('\n', f);
    for (int i = 0; i < s->nr; i++) {
        const study_run_t *r = &s->run[i];
        int t1 = study_t1_run(s, r->group, r->line_batch, r->math);
        study_key_t k;
        study_key_of_row(r->rows[0], &k);
        col = 0;
        for (int c = 0; c < RESULTS_KEY_FIELDS; c++) csv_cell(f, &col, k.cell[c]);
#define CELL_TEXT(name, cell) csv_cell(f, &col, cell);
#define CELL_NUM(name, cell) csv_num(f, &col, cell);
        SUMMARY_COLUMNS(CELL_TEXT, CELL_NUM)
#undef CELL_TEXT
#undef CELL_NUM
        fputc('\n', f);
    }
    return fflush(f) != 0 || ferror(f) ? 1 : 0;
}
