/* answer.c — a study's answer in words (answer.h): the one table writer that REPORT.md (Markdown) and the default
 * study (text) both print through, and the words under it, of the rows and picks study/answer.c chose. */
#include "answer.h"
#include "report.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

void answer_stop_helping(bytes_t *b, const study_answer_t *a, int g, int gpus) {
    double tt;
    int batch, best = study_answer_soonest_gpus(a, g, &tt, &batch);
    if (best > 0 && best < gpus)
        text_printf(b, "; more GPUs stop helping past %d GPU%s (global batch %d), the soonest to the target at %.2f s",
                    best, best == 1 ? "" : "s", batch, tt);
}

/* ---- the writer: one table of cells, as Markdown or as aligned text */

enum { NCOL = 13 };
enum { QCOL = 8 };     /* the trained model's columns, QCOL and the change beside it: report_quality's heads */
enum { TCOL = 4, TRANGE = 11 };   /* the throughput and its range: heads named by the group's unit */
enum { SPEEDUP = 6, EFFIC = 7, TARGET = 10, STATUS = NCOL - 1 };   /* columns the printed table may leave out */
static const char *const heads[NCOL] = {"strategy", "GPUs", "batch", "setting", NULL, "per GPU", "speedup",
                                        "efficiency", NULL, NULL, "to target (s)", NULL, "status"};
static const int right[NCOL] = {0, 1, 1, 0, 1, 1, 1, 1, 1, 1, 1, 0, 0};
/* The printed answer's compact table (ANSWER_TEXT_WIDTH): the columns it keeps, their shorter heads, and the
 * accuracy and time to target as medians alone; REPORT.md and summary.csv keep every column and range. */
static const int compact[NCOL] = {1, 1, 1, 1, 1, 0, 1, 1, 1, 0, 1, 0, 1};
static const char *const text_heads[NCOL] = {"strategy", "GPUs", "batch", "setting", NULL, NULL, "speedup",
                                             "effic.", NULL, NULL, "target s", NULL, "status"};


/* "nccl (2 nodes, NET=Socket, bf16 grads)": the strategy and what tells this row from its others. */
static void row_label(bytes_t *b, const study_runs_t *s, const study_run_t *u) {
    const study_group_t *g = &s->grp[u->group];
    text_printf(b, "%s", u->strategy);
    size_t at = b->len;
    const char *parts[4] = {u->link, u->variant, u->pipe ? u->sched : "", g->gds.n > 1 ? u->gd : ""};
    for (int i = 0; i < 4; i++)
        if (*parts[i]) text_printf(b, "%s%s%s", b->len > at ? ", " : " (", parts[i], i == 3 ? " grads" : "");
    if (b->len > at) text_printf(b, ")");
}

static void row_cells(char *cell[NCOL], const study_answer_t *a, const study_answer_table_t *t,
                      const study_answer_row_t *w, int markdown) {
    const study_run_t *u = w->run;
    bytes_t l = {0}, bw = {0};
    row_label(&l, a->s, u);
    report_batch_word(&bw, u);
    cell[0] = l.s;
    cell[1] = mem_printf("%d", u->gpus);
    cell[2] = bw.s;
    cell[3] = u->pipe ? mem_printf("lr %s, M=%d", u->lr, u->micro) : mem_printf("lr %s", u->lr);
    cell[4] = mem_printf("%s", report_f0(w->ips.med).s);
    cell[5] = mem_printf("%s", report_f0(w->ips.med / u->gpus).s);
    int self = w->ref >= 0 && &t->row[w->ref] == w;    /* the reference's own row: nothing to compare */
    cell[6] = isnan(w->speedup) || self ? mem_printf("—") : mem_printf("%.2f×", w->speedup);
    cell[7] = mem_printf("%s", report_pct(self ? NAN : 100 * w->efficiency).s);
    int lm = a->s->grp[t->group].tokens;
    const report_quality_t *q = report_quality(lm);
    study_stat_t qs = study_answer_quality(w, lm).st;
    double dq = study_answer_change(w, lm);
    cell[QCOL] = mem_printf("%s", markdown ? report_ranged(q->fmt, qs).s : report_fmt(q->fmt, qs.med).s);
    cell[QCOL + 1] = isnan(dq) || self ? mem_printf("—")
                                       : mem_printf("%s%s%s", report_fmt(q->dfmt, dq).s, w->fell ? " " : "",
                                                    w->fell ? q->fell : "");
    /* every seed's time, or how many reached it */
    cell[10] = !study_answer_has_target(w) ? mem_printf("—")
               : w->tt.n == w->n ? mem_printf("%s", markdown ? report_ranged("%.2f", w->tt).s : report_f2(w->tt.med).s)
                                 : mem_printf("%d/%d reached", w->tt.n, w->n);
    cell[11] = w->ips.n ? mem_printf("%s–%s (%d, %d)", report_f0(w->ips.min).s, report_f0(w->ips.max).s, w->ips.n, w->n)
                        : mem_printf("— (0, %d)", w->n);
    cell[12] = mem_printf("%s", w->status);
}

/* Characters of s[0..n) as a terminal shows them: UTF-8 continuation bytes take no column. */
static int width_n(const char *s, size_t n) {
    int w = 0;
    for (size_t i = 0; i < n; i++) w += ((unsigned char)s[i] & 0xc0) != 0x80;
    return w;
}
static int width(const char *s) { return width_n(s, strlen(s)); }

static void put_cells(FILE *f, char *const *cell, const int *w, const int *show, int markdown, int head) {
    if (markdown) {
        for (int c = 0; c < NCOL; c++) fprintf(f, "| %s ", cell[c]);
        fprintf(f, "|\n");
        if (head)
            for (int c = 0; c < NCOL; c++) fprintf(f, "|%s%s", right[c] ? "---:" : "---", c == NCOL - 1 ? "|\n" : "");
        return;
    }
    fprintf(f, "%s", head ? "#" : " ");
    int last = NCOL - 1;
    while (last > 0 && !show[last]) last--;
    for (int c = 0; c < NCOL; c++) {
        if (!show[c]) continue;
        int pad = w[c] - width(cell[c]);
        fprintf(f, "  %*s%s%*s", right[c] ? pad : 0, "", cell[c], right[c] || c == last ? 0 : pad, "");
    }
    fprintf(f, "\n");
}

/* 1 when column c says nothing in any row (rows: the heads' first): every cell "—", or a status "ok". */
static int says_nothing(char **cell, int rows, int c) {
    for (int r = 1; r < rows; r++)
        if (strcmp(cell[(size_t)r * NCOL + c], c == STATUS ? "ok" : "—")) return 0;
    return 1;
}

/* Cuts each label (column 0) past keep + 1 characters to keep and "…", keep what the excess over
 * ANSWER_TEXT_WIDTH asks but at least min (characters, not bytes: a UTF-8 one stays whole); the table's new width. */
static int cut_labels(char **cell, int rows, int *w, int total, int min) {
    if (total <= ANSWER_TEXT_WIDTH) return total;
    int keep = w[0] - (total - ANSWER_TEXT_WIDTH) - 1, w0 = 0;
    if (keep < min) keep = min;
    for (int r = 0; r < rows; r++) {
        char *l = cell[(size_t)r * NCOL];
        if (width(l) > keep + 1) {
            size_t at = 0;
            for (int n = 0; l[at] && n < keep; n++)
                for (at++; ((unsigned char)l[at] & 0xc0) == 0x80; at++) {}
            cell[(size_t)r * NCOL] = mem_printf("%.*s…", (int)at, l);
            free(l);
        }
        if (width(cell[(size_t)r * NCOL]) > w0) w0 = width(cell[(size_t)r * NCOL]);
    }
    total -= w[0] - w0;
    w[0] = w0;
    return total;
}

/* The compact table within ANSWER_TEXT_WIDTH (total: its width now), in this order while past it: the columns that
 * say nothing leave (a speedup, efficiency or time to target "—" in every row, as on one GPU; a status "ok" in every
 * row); the speedup (the efficiency and the GPU count give it back); the efficiency, where labels of 8 characters
 * would not make room; then the strategy's labels (the longest cells, the words in brackets) end in "…", as little
 * as fits, down to 8 characters, and past that as far as it takes. REPORT.md keeps every column and the full label.
 * cell: rows x NCOL, the heads' row first; w and show are updated. */
static void fit_width(char **cell, int rows, int *w, int *show, int total) {
    const int quiet[4] = {SPEEDUP, EFFIC, TARGET, STATUS};
    for (int i = 0; i < 4 && total > ANSWER_TEXT_WIDTH; i++)
        if (show[quiet[i]] && says_nothing(cell, rows, quiet[i])) show[quiet[i]] = 0, total -= 2 + w[quiet[i]];
    if (total > ANSWER_TEXT_WIDTH && show[SPEEDUP]) show[SPEEDUP] = 0, total -= 2 + w[SPEEDUP];
    int label_room = w[0] > 9 ? w[0] - 9 : 0;   /* what labels cut to 8 characters and "…" would give */
    if (total - label_room > ANSWER_TEXT_WIDTH && show[EFFIC]) show[EFFIC] = 0, total -= 2 + w[EFFIC];
    total = cut_labels(cell, rows, w, total, 8);
    cut_labels(cell, rows, w, total, 1);
}

static void table_write(FILE *f, const study_answer_t *a, const study_answer_table_t *t, int markdown) {
    char **cell = mem_alloc((size_t)(t->n + 1) * NCOL * sizeof *cell);
    int w[NCOL];
    const report_quality_t *q = report_quality(a->s->grp[t->group].tokens);
    const char *unit = study_tput_unit(a->s->grp[t->group].tokens);
    for (int c = 0; c < NCOL; c++)
        cell[c] = c == TCOL ? mem_printf("%s", unit)
                  : c == TRANGE ? mem_printf("%s range (epochs, runs)", unit)
                  : mem_printf("%s", c == QCOL ? (markdown ? q->head : q->text_head)
                                     : c == QCOL + 1 ? q->delta_head
                                     : markdown || !text_heads[c] ? heads[c] : text_heads[c]);
    for (int r = 0; r < t->n; r++) row_cells(cell + (size_t)(r + 1) * NCOL, a, t, &t->row[r], markdown);
    int total = 1, show[NCOL];
    for (int c = 0; c < NCOL; c++) {
        w[c] = 0;
        for (int r = 0; r <= t->n; r++)
            if (width(cell[(size_t)r * NCOL + c]) > w[c]) w[c] = width(cell[(size_t)r * NCOL + c]);
        show[c] = markdown || compact[c];
        total += compact[c] ? 2 + w[c] : 0;
    }
    if (!markdown) fit_width(cell, t->n + 1, w, show, total);
    const study_group_t *g = &a->s->grp[t->group];
    if (markdown) fprintf(f, "### %s, %s\n\n", g->sub, t->math);
    else fprintf(f, "# answer: %s, %s\n", g->sub, t->math);
    for (int r = 0; r <= t->n; r++) put_cells(f, cell + (size_t)r * NCOL, w, show, markdown, r == 0);
    if (markdown) fprintf(f, "\n");
    for (int i = 0; i < (t->n + 1) * NCOL; i++) free(cell[i]);
    free(cell);
}

/* "nccl (…) at 256/GPU in tf32, 163412 images/s" */
static void row_words(bytes_t *b, const study_answer_t *a, const study_answer_table_t *t, const study_answer_row_t *w) {
    row_label(b, a->s, w->run);
    text_printf(b, " at ");
    report_batch_word(b, w->run);
    text_printf(b, " in %s, %s %s", t->math, report_f0(w->ips.med).s, study_tput_unit(a->s->grp[t->group].tokens));
}

/* ", 1.90× single (95.1 % efficiency), final test accuracy 89.0 % (-2.7 points against single)"; a language model's
 * ", final held-out loss 5.231 (+0.012 against single)" */
static void row_numbers(bytes_t *b, const study_answer_t *a, const study_answer_table_t *t,
                        const study_answer_row_t *w) {
    const char *ref = study_ref(a->s);
    int lm = a->s->grp[t->group].tokens;
    const report_quality_t *q = report_quality(lm);
    study_stat_t qs = study_answer_quality(w, lm).st;
    double dq = study_answer_change(w, lm);
    if (!isnan(w->speedup) && w->run->gpus > 1)
        text_printf(b, ", %.2f× %s (%s efficiency)", w->speedup, ref, report_pct(100 * w->efficiency).s);
    if (!isnan(dq) && w->ref >= 0 && &t->row[w->ref] != w)
        text_printf(b, ", %s %s (%s%s against %s)", q->words, report_fmt(q->fmt, qs.med).s, report_fmt(q->dfmt, dq).s,
                    q->dunit, ref);
    else if (!isnan(qs.med)) text_printf(b, ", %s %s", q->words, report_fmt(q->fmt, qs.med).s);
}

/* ", 92 % in 4.21 s of training (1404 steps; 3 of 3 seeds)", or ", never reached 92 % (0 of 3 seeds)". */
static void tt_words(bytes_t *b, const study_answer_row_t *w) {
    if (!study_answer_has_target(w)) return;
    if (w->tt.n == w->n)
        text_printf(b, ", %s in %s s of training (%s steps; %d of %d seeds)", report_pct(w->target).s,
                    report_ranged("%.2f", w->tt).s, report_f0(w->tt_steps.med).s, w->tt.n, w->n);
    else if (w->tt.n) text_printf(b, ", %s in %d of %d seeds only", report_pct(w->target).s, w->tt.n, w->n);
    else text_printf(b, ", never reached %s (%d seed%s)", report_pct(w->target).s, w->n, w->n == 1 ? "" : "s");
}

/* The pick on one GPU count, and the row beside it (study_answer_fastest). */
static void fastest_line(bytes_t *b, const study_answer_t *a, int g, int gpus) {
    int ti, ri, at, ar, tm = study_answer_target_mode(a, g, gpus), lm = a->s->grp[g].tokens;
    const report_quality_t *q = report_quality(lm);
    report_gpus_word(b, gpus);
    text_printf(b, ": ");
    if (!study_answer_fastest(a, g, gpus, &ti, &ri, &at, &ar)) {
        if (tm) text_printf(b, "no row reached the target in every seed");
        else if (at >= 0)
            text_printf(b, "none with a steady epoch and %s %s not %s the best past its noise", lm ? "a" : "an",
                        q->name, q->worse);
        else text_printf(b, "none with a steady epoch");
        if (tm && at >= 0) text_printf(b, "; the most %s: ", study_tput_unit(a->s->grp[g].tokens));
    } else {
        row_words(b, a, &a->t[ti], &a->t[ti].row[ri]);
        tt_words(b, &a->t[ti].row[ri]);
        row_numbers(b, a, &a->t[ti], &a->t[ti].row[ri]);
        if (at >= 0 && tm) text_printf(b, "; the most %s: ", study_tput_unit(a->s->grp[g].tokens));
        else if (at >= 0 && gpus == 1)
            text_printf(b, "; faster, but %s the best %s past the noise: ", q->worse, q->name);
        else if (at >= 0) text_printf(b, "; the fastest whose %s held: ", q->name);
    }
    if (at >= 0) {
        row_words(b, a, &a->t[at], &a->t[at].row[ar]);
        tt_words(b, &a->t[at].row[ar]);
        row_numbers(b, a, &a->t[at], &a->t[at].row[ar]);
    }
}

static int by_int(const void *x, const void *y) { return study_cmp_int(*(const int *)x, *(const int *)y); }

/* The finding with a target: on the most GPUs, the soonest to it, against one GPU's soonest, and the GPU count past
 * which more stop helping. */
static void finding_target(bytes_t *b, const study_answer_t *a, int g, int gpus) {
    int ti, ri, at, ar, t1, r1, x, y;
    if (!study_answer_fastest(a, g, gpus, &ti, &ri, &at, &ar)) {
        text_printf(b, "on %d GPU%s no setting reached the target in every seed", gpus, gpus == 1 ? "" : "s");
        answer_stop_helping(b, a, g, gpus);
        return;
    }
    const study_answer_row_t *w = &a->t[ti].row[ri];
    text_printf(b, "on %d GPU%s the soonest to %s test accuracy is ", gpus, gpus == 1 ? "" : "s",
                report_pct(w->target).s);
    row_words(b, a, &a->t[ti], w);
    text_printf(b, ": %.2f s of training (%s of %d seed%s, %s steps)", w->tt.med, w->n > 1 ? "median" : "the run",
                w->n, w->n == 1 ? "" : "s", report_f0(w->tt_steps.med).s);
    if (gpus > 1 && study_answer_fastest(a, g, 1, &t1, &r1, &x, &y) && a->t[t1].row[r1].tt.med > 0) {
        double one = a->t[t1].row[r1].tt.med;
        text_printf(b, ", %.2f× %s than 1 GPU's %.2f s", one >= w->tt.med ? one / w->tt.med : w->tt.med / one,
                    one >= w->tt.med ? "sooner" : "later", one);
    }
    if (at >= 0) {
        const study_answer_row_t *f = &a->t[at].row[ar];
        text_printf(b, "; the most %s, ", study_tput_unit(a->s->grp[g].tokens));
        row_words(b, a, &a->t[at], f);
        if (f->tt.n == f->n) text_printf(b, ", took %.2f s", f->tt.med);
        else text_printf(b, ", reached it in %d of %d seeds", f->tt.n, f->n);
    }
    answer_stop_helping(b, a, g, gpus);
}

/* The finding in one sentence: with a target, finding_target; else on the most GPUs the study ran, the fastest row
 * with its numbers (and whether its accuracy held); on one GPU, the fastest setting not below the best accuracy past
 * the noise (a language model's: by its held-out loss, report_quality). */
static void finding(bytes_t *b, const study_answer_t *a, int g, int gpus) {
    int ti, ri, at, ar, lm = a->s->grp[g].tokens;
    const char *ref = study_ref(a->s);
    const report_quality_t *q = report_quality(lm);
    if (study_answer_target_mode(a, g, gpus)) return finding_target(b, a, g, gpus);
    if (!study_answer_fastest(a, g, gpus, &ti, &ri, &at, &ar)) {
        text_printf(b, "on %d GPU%s no row has a steady epoch", gpus, gpus == 1 ? "" : "s");
        return;
    }
    const study_answer_table_t *t = &a->t[ti];
    const study_answer_row_t *w = &t->row[ri];
    if (gpus > 1) {
        text_printf(b, "on %d GPUs the fastest is ", gpus);
        row_words(b, a, t, w);
        if (!isnan(w->speedup))
            text_printf(b, ", %.2f× %s at the same batch (%s efficiency)", w->speedup, ref,
                        report_pct(100 * w->efficiency).s);
        double dq = study_answer_change(w, lm);
        if (!isnan(dq))
            text_printf(b, ", its %s %s, %s%s against %s's (%s%s%s)", q->words,
                        report_fmt(q->fmt, study_answer_quality(w, lm).st.med).s, report_fmt(q->dfmt, dq).s, q->dunit,
                        ref, w->fell ? "it " : "within noise", w->fell ? q->fell : "",
                        w->fell ? ", past the noise" : "");
        if (at >= 0) {
            text_printf(b, "; the fastest whose %s held is ", q->name);
            row_words(b, a, &a->t[at], &a->t[at].row[ar]);
        }
        return;
    }
    text_printf(b, "on 1 GPU the fastest setting whose %s is within the noise of the best is ", q->name);
    row_words(b, a, t, w);
    double best = study_answer_quality(w, lm).st.med,
           other = at >= 0 ? study_answer_quality(&a->t[at].row[ar], lm).st.med : NAN;
    if (!isnan(best) && lm) text_printf(b, ", %s %s", q->words, report_fmt(q->fmt, best).s);
    else if (!isnan(best)) text_printf(b, " at %s", report_fmt(q->fmt, best).s);
    if (at >= 0) {
        text_printf(b, "; ");
        row_words(b, a, &a->t[at], &a->t[at].row[ar]);
        if (lm) text_printf(b, " is faster but its %s is %s", q->words, report_fmt(q->fmt, other).s);
        else text_printf(b, " is faster but reached %s", report_fmt(q->fmt, other).s);
    }
}

/* The rows of group g that missed the target in some seed, under their heading. */
static void missed(FILE *f, const study_answer_t *a, int g, int markdown, const char *item) {
    int k = 0;
    for (int t = 0; t < a->n; t++)
        for (int r = 0; a->t[t].group == g && r < a->t[t].n; r++) {
            const study_answer_row_t *w = &a->t[t].row[r];
            if (!study_answer_has_target(w) || w->tt.n == w->n) continue;
            if (!k++)
                fprintf(f, markdown ? "\n**Missed the target** (%s test accuracy) in some seed:\n\n"
                                    : "# missed the target (%s test accuracy) in some seed:\n",
                                    report_pct(w->target).s);
            bytes_t b = {0};
            row_words(&b, a, &a->t[t], w);
            text_printf(&b, ": %d of %d seeds reached it; final test accuracy %s", w->tt.n, w->n,
                        report_ranged("%.1f %%", w->acc).s);
            fprintf(f, "%s%s\n", item, b.s);
            free(b.s);
        }
}

/* The answer's words under its tables: the fastest (or soonest to target) per GPU count, the rows that missed the
 * target, the rows whose accuracy fell (a language model's held-out loss rose) past the noise, and the finding. */
static void findings(FILE *f, const study_answer_t *a, int g, int markdown) {
    int *gpus = NULL, n = 0, cap = 0, lm = a->s->grp[g].tokens;
    const report_quality_t *q = report_quality(lm);
    for (int t = 0; t < a->n; t++)
        for (int r = 0; a->t[t].group == g && r < a->t[t].n; r++) *MEM_PUSH(gpus, n, cap) = a->t[t].row[r].run->gpus;
    qsort(gpus, (size_t)n, sizeof *gpus, by_int);
    const char *item = markdown ? "- " : "#   ";
    int tm = n && study_answer_target_mode(a, g, gpus[0]);
    if (tm) fprintf(f, markdown ? "**Soonest to the target** per GPU count (every seed reached it; training time, "
                                  "evaluation apart):\n\n"
                                : "# soonest to the target per GPU count (every seed reached it):\n");
    else fprintf(f, markdown ? "**Fastest** per GPU count (on one GPU, not %s the best %s past its noise):\n\n"
                             : "# fastest per GPU count (on one GPU, not %s the best %s past its noise):\n",
                 q->worse, q->name);
    for (int i = 0; i < n; i++) {
        if (i && gpus[i] == gpus[i - 1]) continue;
        bytes_t b = {0};
        fastest_line(&b, a, g, gpus[i]);
        fprintf(f, "%s%s\n", item, b.s);
        free(b.s);
    }
    missed(f, a, g, markdown, item);
    int fell = 0, one = study_one_gpu_group(a->s, g);
    for (int t = 0; t < a->n; t++)
        for (int r = 0; a->t[t].group == g && r < a->t[t].n; r++) {
            const study_answer_row_t *w = &a->t[t].row[r];
            if (!w->fell && !(w->below && one)) continue;
            if (!fell++)
                fprintf(f, markdown ? "\n**%c%s %s** past the noise of both (against `%s` at the same batch; "
                                      "on one GPU, against the best; the noise: the seeds' range, or one seed's last "
                                      "%d epochs):\n\n"
                                    : "# %c%s %s past the noise of both (against %s at the same batch; on one "
                                      "GPU, against the best; the noise: the seeds' range, or one seed's last %d "
                                      "epochs):\n",
                        markdown ? toupper((unsigned char)q->name[0]) : q->name[0], q->name + 1, q->fell,
                        study_ref(a->s), STUDY_SPREAD_EPOCHS);
            bytes_t b = {0};
            row_words(&b, a, &a->t[t], w);
            study_quality_t wq = study_answer_quality(w, lm);
            text_printf(&b, lm ? ": %s %s (noise %.3f–%.3f)" : ": %s %s (noise %.1f–%.1f %%)", q->words,
                        report_fmt(q->fmt, wq.st.med).s, wq.lo, wq.hi);
            if (w->fell)
                text_printf(&b, ", %s%s against %s at the same batch",
                            report_fmt(q->dfmt, study_answer_change(w, lm)).s, q->dunit, study_ref(a->s));
            else text_printf(&b, ", %s the best on one GPU", q->worse);
            fprintf(f, "%s%s\n", item, b.s);
            free(b.s);
        }
    bytes_t b = {0};
    finding(&b, a, g, n ? gpus[n - 1] : 1);
    fprintf(f, markdown ? "\n**Answer**: %s.\n\n" : "# answer: %s\n", b.s);
    free(b.s);
    free(gpus);
}

void answer_wrap(FILE *f, const char *text) {
    enum { INDENT = 6 };
    for (const char *p = text; *p;) {
        size_t n = strcspn(p, "\n");
        const char *end = p + n;
        if (*p != '#' || width_n(p, n) <= ANSWER_TEXT_WIDTH) {
            fwrite(p, 1, n, f);
        } else {
            int col = 0;
            for (const char *q = p; q <= end;) {     /* word by word; an empty word is one more blank */
                size_t len = strcspn(q, " \n");
                if (q + len > end) len = (size_t)(end - q);
                int w = width_n(q, len);
                /* a number stays with its unit, the whole word after it ("91.0 %", "93.6 %),") */
                const char *u = q + len + 1;
                size_t ul = u < end && *u == '%' ? strcspn(u, " \n") : 0;
                if (ul > (size_t)(end - u)) ul = (size_t)(end - u);
                int unit = ul ? 1 + width_n(u, ul) : 0;
                if (q > p && w && *q != '%' && col > INDENT && col + 1 + w + unit > ANSWER_TEXT_WIDTH) {
                    fprintf(f, "\n#%*s", INDENT - 1, "");
                    col = INDENT;
                } else if (q > p && (w || col < ANSWER_TEXT_WIDTH)) {   /* an extra blank only within the width */
                    fputc(' ', f);
                    col++;
                }
                fwrite(q, 1, len, f);
                col += w;
                q += len + 1;
            }
        }
        fputc('\n', f);
        p = *end ? end + 1 : end;
    }
}

void answer_write(FILE *f, const study_answer_t *a, int g, int markdown) {
    char *text = NULL;
    size_t len = 0;
    FILE *m = markdown ? f : open_memstream(&text, &len);
    if (!m) m = f;      /* no memory to wrap in: the lines as they are */
    for (int t = 0; t < a->n; t++)
        if (a->t[t].group == g) table_write(m, a, &a->t[t], markdown);
    findings(m, a, g, markdown);
    if (m == f) return;
    fclose(m);
    answer_wrap(f, text);
    free(text);
}

int answer_print_csv(FILE *f, const char *path, const strategy_info_t *const *infos, const char *report,
                     const char *second_gpu) {
    study_runs_t s;
    char err[REPORT_ERR];
    if (study_load(&s, path, infos, err, sizeof err)) {
        fprintf(stderr, "scaling: error: %s\n", err);
        return 2;
    }
    study_answer_t a;
    study_answer_make(&s, &a);
    char *text = NULL;
    size_t len = 0;
    FILE *out = f;      /* the lines below are wrapped as the answer's are */
    if (!(f = open_memstream(&text, &len))) f = out;
    for (int g = 0; g < s.ng; g++) {
        answer_write(f, &a, g, 0);
        if (!study_one_gpu_group(&s, g)) continue;
        study_one_cell_t *c = mem_zalloc((size_t)(s.nr ? s.nr : 1), sizeof *c);
        int n = study_one_gpu_cells(&s, g, c);
        study_one_t o;
        study_one_gpu(c, n, &o);
        fprintf(f, "# largest batch that fit:");
        answer_one_fit(f, &o, ",");
        fprintf(f, "\n");
        if (second_gpu) fprintf(f, "# a second GPU would add: %s\n", second_gpu);
        free(c);
    }
    fprintf(f, "# report: %s\n", report);
    if (f != out) {
        fclose(f);
        answer_wrap(out, text);
        free(text);
    }
    study_answer_free(&a);
    study_free(&s);
    return 0;
}
