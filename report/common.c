/* common.c — what the report's tables and figures share: numbers as text, the words of labels, and the orders runs
 * are read in (comparators on runs, and a stable sort that keeps runs of one key in the order they started). */
#include "report.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static numtext_t num_or_dash(const char *fmt, double x) {
    numtext_t t;
    if (isnan(x)) snprintf(t.s, sizeof t.s, "—");
    else snprintf(t.s, sizeof t.s, fmt, x);
    return t;
}
numtext_t report_f0(double x) { return num_or_dash("%.0f", x); }
numtext_t report_f1(double x) { return num_or_dash("%.1f", x); }
numtext_t report_f3(double x) { return num_or_dash("%.3f", x); }
numtext_t report_f2(double x) { return num_or_dash("%.2f", x); }
numtext_t report_pct(double x) { return num_or_dash("%.1f %%", x); }
numtext_t report_num(double x) {
    numtext_t t;
    study_num_s(t.s, sizeof t.s, x);
    return t;
}

char *report_md_code(const char *s, int in_table) {
    size_t run = 0, longest = 0;
    for (const char *p = s; *p; p++) {
        run = *p == '`' ? run + 1 : 0;
        if (run > longest) longest = run;
    }
    bytes_t b = {0};
    /* a space inside the fence where s starts or ends with a backtick (CommonMark strips one on each side) */
    int pad = *s == '`' || (*s && s[strlen(s) - 1] == '`');
    for (size_t i = 0; i <= longest; i++) text_printf(&b, "`");
    text_printf(&b, "%s", pad ? " " : "");
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        if (*p < 0x20 || *p == 0x7f) text_printf(&b, "?");
        else if (*p == '|' && in_table) text_printf(&b, "\\|");
        else text_printf(&b, "%c", *p);
    text_printf(&b, "%s", pad ? " " : "");
    for (size_t i = 0; i <= longest; i++) text_printf(&b, "`");
    return b.s;
}

void report_gpus_word(bytes_t *b, int g) { text_printf(b, g == 1 ? "1 GPU" : "%d GPUs", g); }
void report_batch_word(bytes_t *b,
                       const study_run_t *r) { text_printf(b, r->global ? "batch %d" : "%d/GPU", r->line_batch); }
void report_link_word(bytes_t *b, const study_run_t *r) { text_printf(b, "%s%s", *r->link ? ", " : "", r->link); }

void report_prec_word(bytes_t *b, const study_runs_t *s, const study_run_t *r) {
    const study_group_t *g = &s->grp[r->group];
    size_t at = b->len;
    if (g->maths.n > 1) text_printf(b, "%s", r->math);
    if (g->gds.n > 1 && *r->gd) text_printf(b, "%s%s grads", b->len > at ? ", " : "", r->gd);
}

void report_with_prec(bytes_t *b, const study_runs_t *s, const study_run_t *r) {
    bytes_t w = {0};
    report_prec_word(&w, s, r);
    if (w.len) text_printf(b, ", %s", w.s);
    free(w.s);
}

void report_study_dates(bytes_t *b, const study_group_t *g) {
    if (strcmp(g->d0, g->d1) == 0) text_printf(b, "%s", g->d0);
    else text_printf(b, "%s to %s", g->d0, g->d1);
}

int report_cmp_prec(const study_run_t *a, const study_run_t *b) {
    int c = study_math_cmp(a->math, b->math);
    return c ? c : study_math_cmp(a->gd, b->gd);
}

int report_run_class(const study_run_t *r) { return r->pipe ? 2 : study_is_reference(r->info) ? 0 : 1; }

int report_cmp_row(const study_run_t *a, const study_run_t *b) {
    int c = study_cmp_int(report_run_class(a), report_run_class(b));
    if (!c) c = strcmp(a->strategy, b->strategy);
    if (!c) c = study_cmp_int(a->gpus, b->gpus);
    if (!c) c = strcmp(a->sched, b->sched);
    if (!c) c = study_cmp_int(a->line_batch, b->line_batch);
    if (!c) c = study_cmp_int(a->micro, b->micro);
    if (!c) c = strcmp(a->link, b->link);
    return c;
}

int report_cmp_config(const study_run_t *a, const study_run_t *b) {
    int c = report_cmp_row(a, b);
    return c ? c : study_cmp_config(a, b, STUDY_CMP_COMMIT);
}

stat_t report_stat_of(double *x, int n) {
    int k = 0;
    for (int i = 0; i < n; i++)
        if (!isnan(x[i])) x[k++] = x[i];
    stat_t st = {study_median(x, k), NAN, NAN, k};
    if (k) st.min = x[0], st.max = x[k - 1];   /* study_median sorted them */
    return st;
}

stat_t report_stat_runs(const study_run_t *const *u, int n, double (*f)(const study_run_t *)) {
    double *x = mem_alloc((size_t)(n ? n : 1) * sizeof *x);
    for (int i = 0; i < n; i++) x[i] = f(u[i]);
    stat_t st = report_stat_of(x, n);
    free(x);
    return st;
}

stat_t report_stat_steady(const study_run_t *const *u, int n, study_col_t c) {
    const study_column_t *col = &study_schema[c];
    int m = 0;
    for (int i = 0; i < n; i++) m += u[i]->nrows;
    double *x = mem_alloc((size_t)(m ? m : 1) * sizeof *x);
    int k = 0;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < u[i]->nrows; j++) {
            const study_row_t *row = u[i]->rows[j];
            double v = *RESULTS_MEMBER(row, col, const double);
            if (study_is_steady(row) && v >= 0) x[k++] = v;
        }
    stat_t st = report_stat_of(x, k);
    free(x);
    return st;
}

numtext_t report_ranged(const char *fmt, stat_t st) {
    numtext_t t = num_or_dash(fmt, st.med);
    if (st.n > 1 && st.min < st.max) {
        numtext_t lo = num_or_dash(fmt, st.min), hi = num_or_dash(fmt, st.max);
        size_t l = strlen(t.s);
        if (!strcmp(fmt, "%.1f %%")) {   /* "90.4 % (90.1–90.6)": the unit once */
            lo.s[strlen(lo.s) - 2] = hi.s[strlen(hi.s) - 2] = '\0';
        }
        snprintf(t.s + l, sizeof t.s - l, " (%.40s–%.40s)", lo.s, hi.s);
    }
    return t;
}

double report_run_epoch_s(const study_run_t *r) { return r->med[RESULTS_COL_epoch_s]; }
double report_run_tput(const study_run_t *r) { return r->med[study_run_tput_col(r)]; }
double report_run_step_ms(const study_run_t *r) { return r->med[RESULTS_COL_step_ms]; }
double report_run_facc(const study_run_t *r) { return r->facc; }
double report_run_tt_s(const study_run_t *r) { return r->tt.reached ? r->tt.train_s : NAN; }
double report_run_tt_steps(const study_run_t *r) { return r->tt.reached ? r->tt.steps : NAN; }

/* A stable merge sort: runs of one key stay in the order they started. */
static void merge_sort(const study_run_t **a, const study_run_t **tmp, int n,
                       int (*cmp)(const study_run_t *, const study_run_t *)) {
    if (n < 2) return;
    int h = n / 2;
    merge_sort(a, tmp, h, cmp);
    merge_sort(a + h, tmp, n - h, cmp);
    int i = 0, j = h, k = 0;
    while (i < h && j < n) tmp[k++] = cmp(a[j], a[i]) < 0 ? a[j++] : a[i++];
    while (i < h) tmp[k++] = a[i++];
    while (j < n) tmp[k++] = a[j++];
    memcpy(a, tmp, (size_t)n * sizeof *a);
}

void report_runs_sort(const study_run_t **a, int n, int (*cmp)(const study_run_t *, const study_run_t *)) {
    const study_run_t **tmp = mem_alloc((size_t)(n ? n : 1) * sizeof *tmp);
    merge_sort(a, tmp, n, cmp);
    free(tmp);
}

const study_run_t **report_runs_sorted(const study_runs_t *s, int g, int (*keep)(const study_run_t *),
                                       int (*cmp)(const study_run_t *, const study_run_t *), int *n) {
    const study_run_t **a = mem_alloc((size_t)(s->nr ? s->nr : 1) * sizeof *a);
    *n = 0;
    for (int i = 0; i < s->nr; i++)
        if ((g < 0 || s->run[i].group == g) && (!keep || keep(&s->run[i]))) a[(*n)++] = &s->run[i];
    if (cmp) report_runs_sort(a, *n, cmp);
    return a;
}
