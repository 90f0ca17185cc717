/* answer.c — a study's answer (answer.h): its rows chosen from the reported runs, the fastest per GPU count, and the
 * one table writer that REPORT.md (Markdown) and the default study (text) both print through; and the one-GPU facts
 * of REPORT.md's one-GPU section. */
#include "answer.h"
#include "report.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- rows */

/* One table: a group and a math. */
static int cmp_table(const study_run_t *a, const study_run_t *b) {
    int c = study_cmp_int(a->group, b->group);
    return c ? c : study_math_cmp(a->math, b->math);
}
/* One row: a strategy with what tells its runs apart, on a GPU count, at a batch: a configuration but its seed, its
 * learning rate and its micro-batches, which are its settings. */
static int cmp_answer_row(const study_run_t *a, const study_run_t *b) {
    int c = cmp_table(a, b);
    if (!c) c = study_cmp_int(report_run_class(a), report_run_class(b));
    if (!c) c = strcmp(a->strategy, b->strategy);
    if (!c) c = study_cmp_int(a->gpus, b->gpus);
    if (!c) c = study_cmp_int(a->line_batch, b->line_batch);
    if (!c) c = strcmp(a->link, b->link);
    if (!c) c = strcmp(a->sched, b->sched);
    const unsigned settings = STUDY_CMP_SKIP(RESULTS_KEY_lr) | STUDY_CMP_SKIP(RESULTS_KEY_micro_batches);
    return c ? c : study_cmp_config(a, b, settings | STUDY_CMP_COMMIT);
}
/* One setting of a row: a configuration but its seed (its runs are the seeds). */
static int cmp_setting(const study_run_t *a, const study_run_t *b) {
    int c = cmp_answer_row(a, b);
    return c ? c : study_cmp_config(a, b, STUDY_CMP_COMMIT);
}

/* The noise of a setting's accuracy: the range of its seeds' final accuracies, or with one seed its last epochs'. */
static void acc_noise(answer_row_t *w) {
    w->acc_lo = w->n > 1 ? w->acc.min : w->u[0]->acc_lo;
    w->acc_hi = w->n > 1 ? w->acc.max : w->u[0]->acc_hi;
}

/* Whether setting a (its time to target over its seeds, n runs) trains the model sooner than b: every seed reached the
 * target, in less median time. */
static int sooner(stat_t a, int na, stat_t b, int nb) {
    int a_all = a.n == na && na > 0, b_all = b.n == nb && nb > 0;
    return a_all && (!b_all || a.med < b.med);
}

/* The row of runs u[0..n) (one row key): its settings, and of them the soonest to the target where one was set
 * (every seed reached it), else the fastest within ANSWER_ACC_POINTS of the best accuracy. */
static void row_make(answer_row_t *w, const study_run_t *const *u, int n) {
    double best_acc = NAN;
    for (int i = 0; i < n;) {   /* the best accuracy of a setting */
        int j = i;
        while (j < n && cmp_setting(u[i], u[j]) == 0) j++;
        double a = report_stat_runs(u + i, j - i, report_run_facc).med;
        if (!isnan(a) && !(best_acc >= a)) best_acc = a;
        i = j;
    }
    memset(w, 0, sizeof *w);
    int chosen_held = 0;
    for (int i = 0; i < n;) {
        int j = i;
        while (j < n && cmp_setting(u[i], u[j]) == 0) j++;
        stat_t acc = report_stat_runs(u + i, j - i, report_run_facc),
        ips = report_stat_steady(u + i, j - i, study_run_tput_col(u[i]));
        stat_t tt = report_stat_runs(u + i, j - i, report_run_tt_s);
        int held = isnan(best_acc) || (!isnan(acc.med) && acc.med >= best_acc - ANSWER_ACC_POINTS);
        int faster = !isnan(ips.med) && !(w->ips.med >= ips.med);
        int pick = !w->u || sooner(tt, j - i, w->tt, w->n);
        if (!pick && !sooner(w->tt, w->n, tt, j - i))   /* neither reached the target sooner: by accuracy, speed */
            pick = (held && !chosen_held) || (held == chosen_held && faster);
        if (pick) {
            w->u = u + i, w->n = j - i, w->ips = ips, w->acc = acc, w->tt = tt;
            w->tt_steps = report_stat_runs(u + i, j - i, report_run_tt_steps);
            chosen_held = held;
        }
        i = j;
    }
    w->run = w->u[0];
    w->target = 100 * w->run->tt.target;
    acc_noise(w);
    w->status = "ok";
    for (int i = 0; i < w->n; i++)
        if (strcmp(w->u[i]->fstat, "ok") != 0) {
            w->status = w->u[i]->fstat;
            break;
        }
}

/* The reference row at each row's batch; speedup, efficiency and the change of accuracy against it; whether the
 * accuracy held (against the reference; a row on one GPU, against the best of the group's rows on one GPU). */
static void table_finish(answer_table_t *t, const answer_row_t *best_one) {
    for (int i = 0; i < t->n; i++) {
        answer_row_t *w = &t->row[i];
        /* the reference row at its batch, of its own recipe where there are several (sgd and lars); a reference's
         * row is its own */
        w->ref = study_is_reference(w->run->info) ? i : -1;
        for (int k = 0; k < t->n && w->ref < 0; k++)
            if (study_is_reference(t->row[k].run->info) && t->row[k].run->line_batch == w->run->line_batch &&
                !study_cmp_recipe(t->row[k].run->rows[0], w->run->rows[0]))
                w->ref = k;
        for (int k = 0; k < t->n && w->ref < 0; k++)
            if (study_is_reference(t->row[k].run->info) && t->row[k].run->line_batch == w->run->line_batch)
                w->ref = k;
        const answer_row_t *r = w->ref >= 0 ? &t->row[w->ref] : NULL;
        w->speedup = r ? w->ips.med / r->ips.med : NAN;
        w->efficiency = w->speedup / w->run->gpus;
        w->dacc = r ? w->acc.med - r->acc.med : NAN;
        if (w->run->gpus == 1 && best_one && best_one != w) w->below = study_acc_fell(best_one->acc_lo, w->acc_hi);
        if (!study_is_reference(w->run->info) && r) w->fell = study_acc_fell(r->acc_lo, w->acc_hi);
    }
}

void answer_make(const study_runs_t *s, answer_t *a) {
    memset(a, 0, sizeof *a);
    a->s = s;
    int n, cap = 0;
    a->scratch = report_runs_sorted(s, -1, NULL, cmp_setting, &n);
    const study_run_t **u = a->scratch;
    for (int i = 0; i < n;) {   /* a table per group and math */
        int j = i;
        while (j < n && cmp_table(u[i], u[j]) == 0) j++;
        answer_table_t *t = MEM_PUSH(a->t, a->n, cap);
        t->group = u[i]->group;
        t->math = u[i]->math;
        int rcap = 0;
        for (int k = i; k < j;) {
            int e = k;
            while (e < j && cmp_answer_row(u[k], u[e]) == 0) e++;
            row_make(MEM_PUSH(t->row, t->n, rcap), u + k, e - k);
            k = e;
        }
        i = j;
    }
    for (int i = 0; i < a->n; i++) {   /* the best accuracy on one GPU of each group, across its maths */
        const answer_row_t *best = NULL;
        for (int k = 0; k < a->n; k++)
            for (int r = 0; a->t[k].group == a->t[i].group && r < a->t[k].n; r++) {
                const answer_row_t *w = &a->t[k].row[r];
                if (w->run->gpus == 1 && !isnan(w->acc.med) && (!best || w->acc.med > best->acc.med)) best = w;
            }
        table_finish(&a->t[i], best);
    }
}

void answer_free(answer_t *a) {
    for (int i = 0; i < a->n; i++) free(a->t[i].row);
    free(a->t);
    free(a->scratch);
    memset(a, 0, sizeof *a);
}

/* 1 when a row's runs were measured to a target. */
static int has_target(const answer_row_t *w) { return !isnan(w->target); }

/* The soonest to target on `gpus` GPUs (every seed reached it), and the row of the most images/s beside it where that
 * is another. 0 when no row there had a target. */
static int soonest(const answer_t *a, int g, int gpus, int *ti, int *ri, int *at, int *ar) {
    int any = 0;
    for (int t = 0; t < a->n; t++)
        for (int r = 0; a->t[t].group == g && r < a->t[t].n; r++) {
            const answer_row_t *w = &a->t[t].row[r];
            if (w->run->gpus != gpus || !has_target(w)) continue;
            any = 1;
            if (sooner(w->tt, w->n, *ti < 0 ? (stat_t){NAN, NAN, NAN, 0} : a->t[*ti].row[*ri].tt,
                       *ti < 0 ? 0 : a->t[*ti].row[*ri].n))
                *ti = t, *ri = r;
            if (!isnan(w->ips.med) && (*at < 0 || w->ips.med > a->t[*at].row[*ar].ips.med)) *at = t, *ar = r;
        }
    if (*ti >= 0 && *at == *ti && *ar == *ri) *at = *ar = -1;
    return any;
}

int answer_fastest(const answer_t *a, int g, int gpus, int *ti, int *ri, int *at, int *ar) {
    *ti = *ri = *at = *ar = -1;
    if (soonest(a, g, gpus, ti, ri, at, ar)) return *ti >= 0;
    for (int t = 0; t < a->n; t++)
        for (int r = 0; a->t[t].group == g && r < a->t[t].n; r++) {
            const answer_row_t *w = &a->t[t].row[r];
            if (w->run->gpus != gpus || isnan(w->ips.med)) continue;
            /* one GPU: a row below the best accuracy is no answer; more: the fastest is, and a held one beside it */
            int alt = gpus == 1 ? w->below : 0;
            int *bt = alt ? at : ti, *br = alt ? ar : ri;
            if (*bt < 0 || w->ips.med > a->t[*bt].row[*br].ips.med) *bt = t, *br = r;
            if (gpus > 1 && !w->fell && (*at < 0 || w->ips.med > a->t[*at].row[*ar].ips.med)) *at = t, *ar = r;
        }
    if (*ti < 0) return 0;
    const answer_row_t *pick = &a->t[*ti].row[*ri];
    if (*at >= 0 && (gpus > 1 ? !pick->fell : a->t[*at].row[*ar].ips.med <= pick->ips.med)) *at = *ar = -1;
    return 1;
}

/* ---- the writer: one table of cells, as Markdown or as aligned text */

enum { NCOL = 13 };
static const char *const heads[NCOL] = {"strategy", "GPUs", "batch", "setting", "images/s", "per GPU", "speedup",
                                        "efficiency", "final test acc", "Δ acc (points)", "to target (s)",
                                        "images/s range (epochs, runs)", "status"};
static const int right[NCOL] = {0, 1, 1, 0, 1, 1, 1, 1, 1, 1, 1, 0, 0};
/* The printed answer's compact table (ANSWER_TEXT_WIDTH): the columns it keeps, their shorter heads, and the
 * accuracy and time to target as medians alone; REPORT.md and summary.csv keep every column and range. */
static const int compact[NCOL] = {1, 1, 1, 1, 1, 0, 1, 1, 1, 0, 1, 0, 1};
static const char *const text_heads[NCOL] = {"strategy", "GPUs", "batch", "setting", "images/s", NULL, "speedup",
                                             "effic.", "test acc", NULL, "target s", NULL, "status"};

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

static void row_cells(char *cell[NCOL], const answer_t *a, const answer_table_t *t, const answer_row_t *w,
                      int markdown) {
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
    cell[8] = markdown ? mem_printf("%s", report_ranged("%.1f %%", w->acc).s) : mem_printf("%s",
                                                                                           report_pct(w->acc.med).s);
    cell[9] = isnan(w->dacc) || self ? mem_printf("—") : mem_printf("%+.1f%s", w->dacc, w->fell ? " fell" : "");
    /* every seed's time, or how many reached it */
    cell[10] = !has_target(w) ? mem_printf("—")
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

static void put_cells(FILE *f, char *const *cell, const int *w, int markdown, int head) {
    if (markdown) {
        for (int c = 0; c < NCOL; c++) fprintf(f, "| %s ", cell[c]);
        fprintf(f, "|\n");
        if (head)
            for (int c = 0; c < NCOL; c++) fprintf(f, "|%s%s", right[c] ? "---:" : "---", c == NCOL - 1 ? "|\n" : "");
        return;
    }
    fprintf(f, "%s", head ? "#" : " ");
    for (int c = 0; c < NCOL; c++) {
        if (!compact[c]) continue;
        int pad = w[c] - width(cell[c]);
        fprintf(f, "  %*s%s%*s", right[c] ? pad : 0, "", cell[c], right[c] ? 0 : (c == NCOL - 1 ? 0 : pad), "");
    }
    fprintf(f, "\n");
}

static void table_write(FILE *f, const answer_t *a, const answer_table_t *t, int markdown) {
    char **cell = mem_alloc((size_t)(t->n + 1) * NCOL * sizeof *cell);
    int w[NCOL];
    for (int c = 0; c < NCOL; c++) cell[c] = mem_printf("%s", markdown || !text_heads[c] ? heads[c] : text_heads[c]);
    if (a->s->grp[t->group].tokens) {    /* a language model's speeds: the heads name its unit */
        const char *unit = study_tput_unit(1);
        free(cell[4]), free(cell[11]);
        cell[4] = mem_printf("%s", unit);
        cell[11] = mem_printf("%s range (epochs, runs)", unit);
    }
    for (int r = 0; r < t->n; r++) row_cells(cell + (size_t)(r + 1) * NCOL, a, t, &t->row[r], markdown);
    int total = 1;
    for (int c = 0; c < NCOL; c++) {
        w[c] = 0;
        for (int r = 0; r <= t->n; r++)
            if (width(cell[(size_t)r * NCOL + c]) > w[c]) w[c] = width(cell[(size_t)r * NCOL + c]);
        total += compact[c] ? 2 + w[c] : 0;
    }
    /* Past the width, the strategy's label (its longest cell, the words in brackets) gives way, ending in "…"; the
     * full label is REPORT.md's. */
    for (int r = 0; !markdown && total > ANSWER_TEXT_WIDTH && r <= t->n; r++) {
        char *l = cell[(size_t)r * NCOL];
        int keep = w[0] - (total - ANSWER_TEXT_WIDTH) - 1;
        if (keep < 8 || width(l) <= keep + 1) continue;
        size_t at = 0;
        for (int n = 0; l[at] && n < keep; n++)     /* keep characters, not bytes: a UTF-8 one stays whole */
            for (at++; ((unsigned char)l[at] & 0xc0) == 0x80; at++) {}
        cell[(size_t)r * NCOL] = mem_printf("%.*s…", (int)at, l);
        free(l);
    }
    if (!markdown) {
        int w0 = 0;
        for (int r = 0; r <= t->n; r++)
            if (width(cell[(size_t)r * NCOL]) > w0) w0 = width(cell[(size_t)r * NCOL]);
        w[0] = w0;
    }
    const study_group_t *g = &a->s->grp[t->group];
    if (markdown) fprintf(f, "### %s, %s\n\n", g->sub, t->math);
    else fprintf(f, "# answer: %s, %s\n", g->sub, t->math);
    for (int r = 0; r <= t->n; r++) put_cells(f, cell + (size_t)r * NCOL, w, markdown, r == 0);
    if (markdown) fprintf(f, "\n");
    for (int i = 0; i < (t->n + 1) * NCOL; i++) free(cell[i]);
    free(cell);
}

/* "nccl (…) at 256/GPU in tf32, 163412 images/s" */
static void row_words(bytes_t *b, const answer_t *a, const answer_table_t *t, const answer_row_t *w) {
    row_label(b, a->s, w->run);
    text_printf(b, " at ");
    report_batch_word(b, w->run);
    text_printf(b, " in %s, %s %s", t->math, report_f0(w->ips.med).s, study_tput_unit(a->s->grp[t->group].tokens));
}

/* ", 1.90× single (95.1 % efficiency), final test accuracy 89.0 % (-2.7 points against single)" */
static void row_numbers(bytes_t *b, const answer_t *a, const answer_table_t *t, const answer_row_t *w) {
    const char *ref = study_ref(a->s);
    if (!isnan(w->speedup) && w->run->gpus > 1)
        text_printf(b, ", %.2f× %s (%s efficiency)", w->speedup, ref, report_pct(100 * w->efficiency).s);
    if (!isnan(w->dacc) && w->ref >= 0 && &t->row[w->ref] != w)
        text_printf(b, ", final test accuracy %s (%+.1f points against %s)", report_pct(w->acc.med).s, w->dacc, ref);
    else if (!isnan(w->acc.med)) text_printf(b, ", final test accuracy %s", report_pct(w->acc.med).s);
}

/* ", 92 % in 4.21 s of training (1404 steps; 3 of 3 seeds)", or ", never reached 92 % (0 of 3 seeds)". */
static void tt_words(bytes_t *b, const answer_row_t *w) {
    if (!has_target(w)) return;
    if (w->tt.n == w->n)
        text_printf(b, ", %s in %s s of training (%s steps; %d of %d seeds)", report_pct(w->target).s,
                    report_ranged("%.2f", w->tt).s, report_f0(w->tt_steps.med).s, w->tt.n, w->n);
    else if (w->tt.n) text_printf(b, ", %s in %d of %d seeds only", report_pct(w->target).s, w->tt.n, w->n);
    else text_printf(b, ", never reached %s (%d seed%s)", report_pct(w->target).s, w->n, w->n == 1 ? "" : "s");
}

/* Whether group g's rows on `gpus` GPUs were measured to a target: the answer is then the soonest to it. */
static int target_mode(const answer_t *a, int g, int gpus) {
    for (int t = 0; t < a->n; t++)
        for (int r = 0; a->t[t].group == g && r < a->t[t].n; r++)
            if (a->t[t].row[r].run->gpus == gpus && has_target(&a->t[t].row[r])) return 1;
    return 0;
}

/* The pick on one GPU count, and the row beside it (answer_fastest). */
static void fastest_line(bytes_t *b, const answer_t *a, int g, int gpus) {
    int ti, ri, at, ar, tm = target_mode(a, g, gpus);
    report_gpus_word(b, gpus);
    text_printf(b, ": ");
    if (!answer_fastest(a, g, gpus, &ti, &ri, &at, &ar)) {
        text_printf(b, tm ? "no row reached the target in every seed"
                          : at >= 0 ? "none with a steady epoch and an accuracy not below the best past its noise"
                                    : "none with a steady epoch");
        if (tm && at >= 0) text_printf(b, "; the most %s: ", study_tput_unit(a->s->grp[g].tokens));
    } else {
        row_words(b, a, &a->t[ti], &a->t[ti].row[ri]);
        tt_words(b, &a->t[ti].row[ri]);
        row_numbers(b, a, &a->t[ti], &a->t[ti].row[ri]);
        if (at >= 0 && tm) text_printf(b, "; the most %s: ", study_tput_unit(a->s->grp[g].tokens));
        else if (at >= 0)
            text_printf(b, gpus == 1 ? "; faster, but below the best accuracy past the noise: "
                                     : "; the fastest whose accuracy held: ");
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
static void finding_target(bytes_t *b, const answer_t *a, int g, int gpus) {
    int ti, ri, at, ar, t1, r1, x, y;
    if (!answer_fastest(a, g, gpus, &ti, &ri, &at, &ar)) {
        text_printf(b, "on %d GPU%s no setting reached the target in every seed", gpus, gpus == 1 ? "" : "s");
        answer_stop_helping(b, a, g, gpus);
        return;
    }
    const answer_row_t *w = &a->t[ti].row[ri];
    text_printf(b, "on %d GPU%s the soonest to %s test accuracy is ", gpus, gpus == 1 ? "" : "s",
                report_pct(w->target).s);
    row_words(b, a, &a->t[ti], w);
    text_printf(b, ": %.2f s of training (%s of %d seed%s, %s steps)", w->tt.med, w->n > 1 ? "median" : "the run",
                w->n, w->n == 1 ? "" : "s", report_f0(w->tt_steps.med).s);
    if (gpus > 1 && answer_fastest(a, g, 1, &t1, &r1, &x, &y) && a->t[t1].row[r1].tt.med > 0) {
        double one = a->t[t1].row[r1].tt.med;
        text_printf(b, ", %.2f× %s than 1 GPU's %.2f s", one >= w->tt.med ? one / w->tt.med : w->tt.med / one,
                    one >= w->tt.med ? "sooner" : "later", one);
    }
    if (at >= 0) {
        const answer_row_t *f = &a->t[at].row[ar];
        text_printf(b, "; the most %s, ", study_tput_unit(a->s->grp[g].tokens));
        row_words(b, a, &a->t[at], f);
        if (f->tt.n == f->n) text_printf(b, ", took %.2f s", f->tt.med);
        else text_printf(b, ", reached it in %d of %d seeds", f->tt.n, f->n);
    }
    answer_stop_helping(b, a, g, gpus);
}

/* The finding in one sentence: with a target, finding_target; else on the most GPUs the study ran, the fastest row
 * with its numbers (and whether its accuracy held); on one GPU, the fastest setting not below the best accuracy past
 * the noise. */
static void finding(bytes_t *b, const answer_t *a, int g, int gpus) {
    int ti, ri, at, ar;
    const char *ref = study_ref(a->s);
    if (target_mode(a, g, gpus)) return finding_target(b, a, g, gpus);
    if (!answer_fastest(a, g, gpus, &ti, &ri, &at, &ar)) {
        text_printf(b, "on %d GPU%s no row has a steady epoch", gpus, gpus == 1 ? "" : "s");
        return;
    }
    const answer_table_t *t = &a->t[ti];
    const answer_row_t *w = &t->row[ri];
    if (gpus > 1) {
        text_printf(b, "on %d GPUs the fastest is ", gpus);
        row_words(b, a, t, w);
        if (!isnan(w->speedup))
            text_printf(b, ", %.2f× %s at the same batch (%s efficiency)", w->speedup, ref,
                        report_pct(100 * w->efficiency).s);
        if (!isnan(w->dacc))
            text_printf(b, ", its final test accuracy %s, %+.1f points against %s's (%s)", report_pct(w->acc.med).s,
                        w->dacc,
                        ref, w->fell ? "it fell, past the noise" : "within noise");
        if (at >= 0) {
            text_printf(b, "; the fastest whose accuracy held is ");
            row_words(b, a, &a->t[at], &a->t[at].row[ar]);
        }
        return;
    }
    text_printf(b, "on 1 GPU the fastest setting whose accuracy is within the noise of the best is ");
    row_words(b, a, t, w);
    if (!isnan(w->acc.med)) text_printf(b, " at %s", report_pct(w->acc.med).s);
    if (at >= 0) {
        text_printf(b, "; ");
        row_words(b, a, &a->t[at], &a->t[at].row[ar]);
        text_printf(b, " is faster but reached %s", report_pct(a->t[at].row[ar].acc.med).s);
    }
}

/* The rows of group g that missed the target in some seed, under their heading. */
static void missed(FILE *f, const answer_t *a, int g, int markdown, const char *item) {
    int k = 0;
    for (int t = 0; t < a->n; t++)
        for (int r = 0; a->t[t].group == g && r < a->t[t].n; r++) {
            const answer_row_t *w = &a->t[t].row[r];
            if (!has_target(w) || w->tt.n == w->n) continue;
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
 * target, the rows whose accuracy fell past the noise, and the finding. */
static void findings(FILE *f, const answer_t *a, int g, int markdown) {
    int *gpus = NULL, n = 0, cap = 0;
    for (int t = 0; t < a->n; t++)
        for (int r = 0; a->t[t].group == g && r < a->t[t].n; r++) *MEM_PUSH(gpus, n, cap) = a->t[t].row[r].run->gpus;
    qsort(gpus, (size_t)n, sizeof *gpus, by_int);
    const char *item = markdown ? "- " : "#   ";
    int tm = n && target_mode(a, g, gpus[0]);
    if (tm) fprintf(f, markdown ? "**Soonest to the target** per GPU count (every seed reached it; training time, "
                                  "evaluation apart):\n\n"
                                : "# soonest to the target per GPU count (every seed reached it):\n");
    else if (markdown) fprintf(f, "**Fastest** per GPU count (on one GPU, not below the best accuracy past its noise)"
                                  ":\n\n");
    else fprintf(f, "# fastest per GPU count (on one GPU, not below the best accuracy past its noise):\n");
    for (int i = 0; i < n; i++) {
        if (i && gpus[i] == gpus[i - 1]) continue;
        bytes_t b = {0};
        fastest_line(&b, a, g, gpus[i]);
        fprintf(f, "%s%s\n", item, b.s);
        free(b.s);
    }
    missed(f, a, g, markdown, item);
    int fell = 0, one = report_one_gpu_group(a->s, g);
    for (int t = 0; t < a->n; t++)
        for (int r = 0; a->t[t].group == g && r < a->t[t].n; r++) {
            const answer_row_t *w = &a->t[t].row[r];
            if (!w->fell && !(w->below && one)) continue;
            if (!fell++)
                fprintf(f, markdown ? "\n**Accuracy fell** past the noise of both (against `%s` at the same batch; "
                                      "on one GPU, against the best; the noise: the seeds' range, or one seed's last "
                                      "%d epochs):\n\n"
                                    : "# accuracy fell past the noise of both (against %s at the same batch; on one "
                                      "GPU, against the best; the noise: the seeds' range, or one seed's last %d "
                                      "epochs):\n",
                        study_ref(a->s), STUDY_SPREAD_EPOCHS);
            bytes_t b = {0};
            row_words(&b, a, &a->t[t], w);
            text_printf(&b, ": final test accuracy %s (noise %.1f–%.1f %%)", report_pct(w->acc.med).s, w->acc_lo,
                        w->acc_hi);
            if (w->fell) text_printf(&b, ", %+.1f points against %s at the same batch", w->dacc, study_ref(a->s));
            else text_printf(&b, ", below the best on one GPU");
            fprintf(f, "%s%s\n", item, b.s);
            free(b.s);
        }
    bytes_t b = {0};
    finding(&b, a, g, n ? gpus[n - 1] : 1);
    fprintf(f, markdown ? "\n**Answer**: %s.\n\n" : "# answer: %s\n", b.s);
    free(b.s);
    free(gpus);
}

/* Writes text with each '#' line past ANSWER_TEXT_WIDTH wrapped at its blanks, the continuation lines indented
 * ("#     "); other lines (the table's rows, which fit by construction) as they are. */
static void text_wrapped(FILE *f, const char *text) {
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
                int unit = q + len + 1 < end && q[len + 1] == '%' ? 2 : 0;    /* "91.0 %" stays on one line */
                if (q > p && w && *q != '%' && col > INDENT && col + 1 + w + unit > ANSWER_TEXT_WIDTH) {
                    fprintf(f, "\n#%*s", INDENT - 1, "");
                    col = INDENT;
                } else if (q > p) {
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

void answer_write(FILE *f, const answer_t *a, int g, int markdown) {
    char *text = NULL;
    size_t len = 0;
    FILE *m = markdown ? f : open_memstream(&text, &len);
    if (!m) m = f;      /* no memory to wrap in: the lines as they are */
    for (int t = 0; t < a->n; t++)
        if (a->t[t].group == g) table_write(m, a, &a->t[t], markdown);
    findings(m, a, g, markdown);
    if (m == f) return;
    fclose(m);
    text_wrapped(f, text);
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
    answer_t a;
    answer_make(&s, &a);
    char *text = NULL;
    size_t len = 0;
    FILE *out = f;      /* the lines below are wrapped as the answer's are */
    if (!(f = open_memstream(&text, &len))) f = out;
    for (int g = 0; g < s.ng; g++) {
        answer_write(f, &a, g, 0);
        if (!report_one_gpu_group(&s, g)) continue;
        answer_cell_t *c = mem_zalloc((size_t)(s.nr ? s.nr : 1), sizeof *c);
        int n = report_one_gpu_cells(&s, g, c);
        answer_one_t o;
        answer_one_gpu(c, n, &o);
        fprintf(f, "# largest batch that fit:");
        answer_one_fit(f, &o, ",");
        fprintf(f, "\n");
        if (second_gpu) fprintf(f, "# a second GPU would add: %s\n", second_gpu);
        free(c);
    }
    fprintf(f, "# report: %s\n", report);
    if (f != out) {
        fclose(f);
        text_wrapped(out, text);
        free(text);
    }
    answer_free(&a);
    study_free(&s);
    return 0;
}
