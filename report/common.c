/* common.c — what the report's tables and figures share: numbers as text, a path as a code span, the words of
 * labels and of what a trained model is judged by. The orders of runs and their statistics are study/'s. */
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
numtext_t report_fmt(const char *fmt, double x) { return num_or_dash(fmt, x); }
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

numtext_t report_ranged(const char *fmt, study_stat_t st) {
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

const report_quality_t *report_quality(int tokens) {
    static const report_quality_t acc = {"final test acc", "test acc", "Δ acc (points)", "final test accuracy",
                                         "accuracy", "fell", "below", "%.1f %%", "%+.1f", " points"},
                                  loss = {"held-out loss", "loss", "Δ loss (nats)", "final held-out loss",
                                          "held-out loss", "rose", "above", "%.3f", "%+.3f", ""};
    return tokens ? &loss : &acc;
}
