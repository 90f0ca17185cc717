/* table.c — the human-readable result table on stdout, after nccl-tests: '#' comment lines that any plot
 * or grep skips, fixed-width epoch lines, and a per-run summary over the steady epochs (their median). */
#include "table.h"
#include "../study/study.h"

#include <math.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Column widths shared by the header and the rows, so they cannot drift apart. */
#define W_GPUS   6
#define W_GBATCH 7
#define W_LR     9
#define W_MATH   6
#define W_GRADS  6
#define W_EPOCH  6
#define W_PHASE  7
#define W_EPOCHS 9
#define W_IMGS   9
#define W_LOSS   8
#define W_TACC   10
#define W_TEST   9
#define W_STATUS 9

void table_header(FILE *f) {
    fprintf(f, "#%*s%*s%*s%*s%*s%*s%*s%*s%*s%*s%*s%*s%*s\n", W_GPUS - 1, "gpus", W_GBATCH, "gbatch", W_LR, "lr",
            W_MATH, "math", W_GRADS, "grads", W_EPOCH, "epoch", W_PHASE, "phase", W_EPOCHS, "epoch_s", W_IMGS, "img/s",
            W_LOSS, "loss",
            W_TACC, "train_acc", W_TEST, "test_acc", W_STATUS, "status");
}

/* Not-applicable numbers (negative) print as '-', like nccl-tests' "N/A", keeping the columns aligned. */
static void put_num(FILE *f, int width, int prec, double x) {
    if (x < 0) fprintf(f, "%*s", width, "-");
    else fprintf(f, "%*.*f", width, prec, x);
}

void table_row(FILE *f, const study_row_t *r) {
    fprintf(f, "%*d%*d%*.4g%*s%*s%*d%*s", W_GPUS, r->gpus, W_GBATCH, r->global_batch, W_LR, r->lr, W_MATH,
            r->math && *r->math ? r->math : "-", W_GRADS, r->grad_dtype && *r->grad_dtype ? r->grad_dtype : "-",
            W_EPOCH, r->epoch, W_PHASE, r->phase ? r->phase : "-");
    put_num(f, W_EPOCHS, 3, r->stats.epoch_s);
    put_num(f, W_IMGS, 0, r->images_per_s);
    put_num(f, W_LOSS, 4, r->stats.train_loss);
    put_num(f, W_TACC, 4, r->stats.train_acc);
    put_num(f, W_TEST, 4, r->test_acc);
    fprintf(f, "%*s\n", W_STATUS, r->status ? r->status : "-");
}

/* One statistic per run, as the report and the answer take it (study/study.h): the median of the steady epochs, with
 * their extremes. */
void table_summary(FILE *f, const study_row_t *rows, int n) {
    double *t = malloc((size_t)(n ? n : 1) * sizeof *t), *ips = malloc((size_t)(n ? n : 1) * sizeof *ips);
    double *tps = malloc((size_t)(n ? n : 1) * sizeof *tps);
    int steady = 0, n_imgs = 0, n_tok = 0;
    double test_acc = -1, test_loss = -1;
    const char *status = NULL;
    for (int i = 0; i < n; i++) {
        const study_row_t *r = &rows[i];
        if (r->test_acc >= 0) test_acc = r->test_acc;
        if (r->test_loss >= 0) test_loss = r->test_loss;
        if (r->status) status = r->status;
        if (!study_is_steady(r) || !t || !ips || !tps) continue;
        t[steady++] = r->stats.epoch_s;
        if (r->images_per_s >= 0) ips[n_imgs++] = r->images_per_s;
        if (r->tokens_per_s >= 0) tps[n_tok++] = r->tokens_per_s;   /* a language model's: its unit */
    }
    const study_row_t *first = n > 0 ? &rows[0] : NULL;
    if (first) {
        fprintf(f, "# summary gpus %d gbatch %d lr %.4g", first->gpus, first->global_batch, first->lr);
        if (first->math && *first->math) fprintf(f, " math %s", first->math);
        if (first->grad_dtype && *first->grad_dtype) fprintf(f, " grads %s", first->grad_dtype);
        fputc(':', f);
    } else
        fprintf(f, "# summary:");
    if (!steady) {
        /* Epoch 1 pays for algorithm search and first touch, so it is never counted. */
        fprintf(f, " no steady epoch (epoch 1 is warmup; use --epochs 2 or more to time)");
    } else {
        double med = study_median(t, steady);   /* sorts t: t[0] and t[steady - 1] are the extremes */
        fprintf(f, " epoch_s median %.3f min-max %.3f-%.3f (spread %.1f%%) over %d steady epoch%s", med, t[0],
                t[steady - 1], med > 0 ? 100.0 * (t[steady - 1] - t[0]) / med : 0.0, steady, steady == 1 ? "" : "s");
        if (n_tok) fprintf(f, ", tok/s median %.0f", study_median(tps, n_tok));
        else if (n_imgs) fprintf(f, ", img/s median %.0f", study_median(ips, n_imgs));
    }
    if (test_acc >= 0) fprintf(f, ", test_acc %.4f", test_acc);
    if (test_loss >= 0) fprintf(f, ", test_loss %.4f", test_loss);
    if (status) fprintf(f, ", status %s", status);
    fputc('\n', f);
    free(t);
    free(ips);
    free(tps);
}

void table_stdout_check(const char *csv) {
    /* A pipe's write end polls POLLERR once its last reader has closed: no write is needed to find out. */
    struct pollfd p = {.fd = STDOUT_FILENO, .events = POLLOUT};
    if (poll(&p, 1, 0) != 1 || !(p.revents & POLLERR)) return;
    fprintf(stderr, "scaling: stdout is closed (its reader went away): the table is no longer printed; the study goes "
            "on, its rows in %s\n", csv);
    if (!freopen("/dev/null", "w", stdout)) clearerr(stdout);
}
