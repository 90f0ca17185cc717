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
numtext_t f0(double x) { return num_or_dash("%.0f", x); }
numtext_t f1(double x) { return num_or_dash("%.1f", x); }
numtext_t f3(double x) { return num_or_dash("%.3f", x); }
numtext_t f2(double x) { return num_or_dash("%.2f", x); }
numtext_t pct(double x) { return num_or_dash("%.1f %%", x); }
numtext_t num(double x) {
    numtext_t t;
    num_s(t.s, sizeof t.s, x);
    return t;
}

void gpus_word(bytes_t *b, int g) { text_printf(b, g == 1 ? "1 GPU" : "%d GPUs", g); }
void batch_word(bytes_t *b, const run_t *r) { text_printf(b, r->global ? "batch %d" : "%d/GPU", r->line_batch); }
void link_word(bytes_t *b, const run_t *r) { text_printf(b, "%s%s", *r->link ? ", " : "", r->link); }

void prec_word(bytes_t *b, const study_runs_t *s, const run_t *r) {
    const group_t *g = &s->grp[r->group];
    size_t at = b->len;
    if (g->maths.n > 1) text_printf(b, "%s", r->math);
    if (g->gds.n > 1 && *r->gd) text_printf(b, "%s%s grads", b->len > at ? ", " : "", r->gd);
}

void with_prec(bytes_t *b, const study_runs_t *s, const run_t *r) {
    bytes_t w = {0};
    prec_word(&w, s, r);
    if (w.len) text_printf(b, ", %s", w.s);
    free(w.s);
}

void study_dates(bytes_t *b, const group_t *g) {
    if (strcmp(g->d0, g->d1) == 0) text_printf(b, "%s", g->d0);
    else text_printf(b, "%s to %s", g->d0, g->d1);
}

int cmp_prec(const run_t *a, const run_t *b) {
    int c = math_cmp(a->math, b->math);
    return c ? c : math_cmp(a->gd, b->gd);
}

/* The reference first, then replicas, then pipelines. */
static int strategy_class(const run_t *r) { return r->pipe ? 2 : study_is_reference(r->info) ? 0 : 1; }

int cmp_row(const run_t *a, const run_t *b) {
    int c = cmp_int(strategy_class(a), strategy_class(b));
    if (!c) c = strcmp(a->strategy, b->strategy);
    if (!c) c = cmp_int(a->gpus, b->gpus);
    if (!c) c = strcmp(a->sched, b->sched);
    if (!c) c = cmp_int(a->line_batch, b->line_batch);
    if (!c) c = cmp_int(a->micro, b->micro);
    if (!c) c = strcmp(a->link, b->link);
    return c;
}

/* A stable merge sort: runs of one key stay in the order they started. */
static void merge_sort(const run_t **a, const run_t **tmp, int n, int (*cmp)(const run_t *, const run_t *)) {
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

void runs_sort(const run_t **a, int n, int (*cmp)(const run_t *, const run_t *)) {
    const run_t **tmp = mem_alloc((size_t)(n ? n : 1) * sizeof *tmp);
    merge_sort(a, tmp, n, cmp);
    free(tmp);
}

const run_t **runs_sorted(const study_runs_t *s, int g, int (*keep)(const run_t *),
                          int (*cmp)(const run_t *, const run_t *), int *n) {
    const run_t **a = mem_alloc((size_t)(s->nr ? s->nr : 1) * sizeof *a);
    *n = 0;
    for (int i = 0; i < s->nr; i++)
        if ((g < 0 || s->run[i].group == g) && (!keep || keep(&s->run[i]))) a[(*n)++] = &s->run[i];
    if (cmp) runs_sort(a, *n, cmp);
    return a;
}
