/* table.c — the loaded study's run table: a study CSV read in two passes of one row at a time (study_pass: the
 * schema's reader of any CSV version). The first (select.c) finds the runs and the one kept per configuration
 * (study_pick); the second copies only the kept runs' rows, so memory follows the configurations, not the rows.
 * Each kept run's rows are gathered: medians of its steady rows per column, final accuracy and status. */
#include "table.h"
#include "select.h"
#include "../engine/errmsg.h"
#include "../engine/math_mode.h" /* math_names: the maths' order */

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int study_cmp_int(long long a, long long b) { return (a > b) - (a < b); }
int study_cmp_num(double a, double b) {
    if (isnan(a)) a = 0;
    if (isnan(b)) b = 0;
    return (a > b) - (a < b);
}

/* The order --math lists the maths in (math_mode.h's table), so a new math takes its place with its table line; a
 * gradient dtype is one of those names too. A name outside the table (an older CSV's) comes last, by name. */
static int math_rank(const char *m) {
    for (int i = 0; i < MATH_COUNT; i++)
        if (!strcmp(m, math_names[i])) return i;
    return MATH_COUNT;
}
int study_math_cmp(const char *a, const char *b) {
    int c = study_cmp_int(math_rank(a), math_rank(b));
    return c ? c : strcmp(a, b);
}

int study_isnum(const char *s) {
    const char *p = s;
    if (*p == '+' || *p == '-') p++;
    int digits = 0;
    while (*p >= '0' && *p <= '9') p++, digits++;
    if (*p == '.') {
        p++;
        while (*p >= '0' && *p <= '9') p++, digits++;
    }
    if (!digits) return 0;
    if (*p == 'e' || *p == 'E') {
        p++;
        if (*p == '+' || *p == '-') p++;
        if (!(*p >= '0' && *p <= '9')) return 0;
        while (*p >= '0' && *p <= '9') p++;
    }
    return *p == '\0';
}

const char *study_num_s(char *buf, size_t len, double x) {
    if (x == (double)(long long)x && fabs(x) < 1e15)
        snprintf(buf, len, "%lld", (long long)x);
    else
        snprintf(buf, len, "%.6g", x);
    return buf;
}

const char *study_ref(const study_runs_t *s) { return text_str(&s->ref); }

/* ---- the kept runs' rows gathered */

/* The link tag: "2 nodes" and the NCCL settings without their NCCL_ prefix, less NCCL_HOSTID (it only names the
 * nodes); "" on one node with NCCL's default transports. */
static char *link_tag(int nodes, const char *tr) {
    bytes_t b = {0};
    if (nodes > 1) text_printf(&b, "%d nodes", nodes);
    if (*tr && strcmp(tr, "default") != 0) {
        char *copy = mem_printf("%s", tr);
        for (char *save = NULL, *p = strtok_r(copy, ";", &save); p; p = strtok_r(NULL, ";", &save)) {
            if (strncmp(p, "NCCL_HOSTID=", 12) == 0) continue;
            if (strncmp(p, "NCCL_", 5) == 0) p += 5;
            text_printf(&b, "%s%s", b.len ? ", " : "", p);
        }
        free(copy);
    }
    text_printf(&b, "%s", "");
    return b.s;
}

static int group_of(study_runs_t *s, const char *model, const char *dataset) {
    char *id = mem_printf("%s-%s", model, dataset);
    for (char *q = id; *q; q++)
        if (!((*q >= 'A' && *q <= 'Z') || (*q >= 'a' && *q <= 'z') || (*q >= '0' && *q <= '9') || *q == '.' ||
              *q == '_' || *q == '-'))
            *q = '_';
    for (int g = 0; g < s->ng; g++)
        if (strcmp(s->grp[g].id, id) == 0) {
            free(id);
            return g;
        }
    study_group_t *g = MEM_PUSH(s->grp, s->ng, s->capg);
    g->id = id;
    g->sub = mem_printf("%s on %s", model, dataset);
    return s->ng - 1;
}

/* The run's cells from its first row. */
static void run_start(study_runs_t *s, study_run_t *r, const study_row_t *row) {
    r->group = group_of(s, row->model, row->dataset);
    study_group_t *g = &s->grp[r->group];
    r->run_id = row->run_id;
    r->strategy = row->strategy;
    r->model = row->model;
    r->dataset = row->dataset;
    r->env = &row->env;
    r->gpus = row->gpus;
    r->global_batch = row->global_batch;
    r->per_gpu = row->per_gpu_batch;
    /* lr, seed and micro_batches as their cells read (the writer's formats) */
    if (row->lr >= 0) snprintf(r->lr, sizeof r->lr, "%.6g", row->lr);
    snprintf(r->seed, sizeof r->seed, "%llu", row->seed);
    if (row->stats.micro_batches >= 0) snprintf(r->mb, sizeof r->mb, "%d", row->stats.micro_batches);
    r->micro = row->stats.micro_batches > 0 ? row->stats.micro_batches : 0;
    r->sched = row->stats.schedule;
    r->info = strategy_info_find(s->infos, r->strategy);
    /* a micro_batches cell stands for a pipeline's only where the strategy is unknown */
    r->pipe = study_is_pipeline(r->info, r->micro);
    r->global = study_t1_global(r->info, r->micro);
    r->line_batch = study_line_batch(r->global, r->per_gpu, r->global_batch);
    if (!r->info && *r->strategy) names_add(&s->unknown, r->strategy);
    r->algo = row->stats.nccl_algo;
    r->math = row->math;
    r->gd = row->grad_dtype;
    r->tr = row->env.nccl_transport;
    r->link = link_tag(row->nodes, r->tr);
    r->nodes = row->nodes > 0 ? row->nodes : 1;
    r->gpn = row->gpus_per_node > 0 ? row->gpus_per_node : r->gpus;
    r->facc = r->floss = NAN;
    r->peak_mb = NAN;
    r->last = -1;
    names_add(&g->maths, r->math);
    if (*r->gd) names_add(&g->gds, r->gd);
    names_add(&g->seeds, r->seed);
}

static void run_row(study_runs_t *s, study_run_t *r, const study_row_t *row) {
    study_group_t *g = &s->grp[r->group];
    *MEM_PUSH(r->rows, r->nrows, r->caprows) = row;
    if (*row->env.gpu_name) names_add(&g->gpus, row->env.gpu_name);
    if (*row->env.host) names_add(&g->hosts, row->env.host);
    if (*row->env.git_commit) names_add(&g->commits, row->env.git_commit);
    char d[16];
    snprintf(d, sizeof d, "%.10s", row->timestamp);
    if (*d) {
        if (!*g->d0 || strcmp(d, g->d0) < 0) snprintf(g->d0, sizeof g->d0, "%s", d);
        if (!*g->d1 || strcmp(d, g->d1) > 0) snprintf(g->d1, sizeof g->d1, "%s", d);
    }
    int e = row->epoch;
    double acc = row->test_acc; /* < 0: none; NaN stays NaN */
    if (e >= 0 && (r->last < 0 || e >= r->last)) {
        r->last = e;
        r->final = row;
        r->facc = !(acc < 0) && !isnan(acc) ? 100 * acc : NAN;
        r->floss = row->test_loss >= 0 ? row->test_loss : NAN;    /* < 0: none; NaN stays none */
    }
    if (row->stats.peak_mem_mb >= 0 && !(r->peak_mb >= row->stats.peak_mem_mb)) r->peak_mb = row->stats.peak_mem_mb;
    if (row->tokens_per_s >= 0) g->tokens = 1;
}

/* Column c of a row as a number; < 0 (or NAN) where the cell is empty or not a number column. */
static double cell_num(const study_row_t *row, study_col_t c) {
    const study_column_t *col = &study_schema[c];
    if (col->type == RESULTS_NUM) return *RESULTS_CMEMBER(row, col, double);
    if (col->type == RESULTS_INT || col->type == RESULTS_COUNT) return *RESULTS_CMEMBER(row, col, int);
    return -1;
}

/* The steady values of column c (>= 0: an empty cell is < 0, and NaN, a diverged loss, is no value either) into x;
 * returns how many. */
static int steady_values(const study_run_t *r, study_col_t c, double *x) {
    int n = 0;
    for (int i = 0; i < r->nrows; i++) {
        double v = cell_num(r->rows[i], c);
        if (study_is_steady(r->rows[i]) && v >= 0) x[n++] = v;
    }
    return n;
}

double study_steady_min(const study_run_t *r, study_col_t c) {
    double m = NAN;
    for (int i = 0; i < r->nrows; i++) {
        double v = cell_num(r->rows[i], c);
        if (study_is_steady(r->rows[i]) && v >= 0 && !(m <= v)) m = v;
    }
    return m;
}

double study_steady_max(const study_run_t *r, study_col_t c) {
    double m = NAN;
    for (int i = 0; i < r->nrows; i++) {
        double v = cell_num(r->rows[i], c);
        if (study_is_steady(r->rows[i]) && v >= 0 && !(m >= v)) m = v;
    }
    return m;
}

int study_steady_count(const study_run_t *r, study_col_t c) {
    int n = 0;
    for (int i = 0; i < r->nrows; i++) n += study_is_steady(r->rows[i]) && cell_num(r->rows[i], c) >= 0;
    return n;
}

/* Per stage, the median of the stage_busy_ms parts of its steady rows (";"-separated, empty parts kept in place, as
 * awk's split keeps them). */
static void run_busy(study_run_t *r) {
    double **v = NULL;
    int *nv = NULL, ns = 0, cap = 0;
    for (int i = 0; i < r->nrows; i++) {
        if (!study_is_steady(r->rows[i]) || !*r->rows[i]->stats.stage_busy_ms) continue;
        char *copy = mem_printf("%s", r->rows[i]->stats.stage_busy_ms);
        int k = 0;
        for (char *p = copy, *q;; p = q + 1, k++) {
            q = strchr(p, ';');
            if (q) *q = '\0';
            if (k >= ns) {
                int c = cap;   /* two arrays, one capacity */
                mem_reserve((void **)&v, &c, k + 1, sizeof *v);
                mem_reserve((void **)&nv, &cap, k + 1, sizeof *nv);
                v[k] = mem_alloc((size_t)r->nrows * sizeof **v);
                nv[k] = 0;
                ns = k + 1;
            }
            if (study_isnum(p)) v[k][nv[k]++] = atof(p);
            if (!q) break;
        }
        free(copy);
    }
    r->busy = mem_alloc((size_t)(ns ? ns : 1) * sizeof *r->busy);
    for (int k = 0; k < ns; k++) {
        r->busy[k] = study_median(v[k], nv[k]);
        free(v[k]);
    }
    r->nbusy = ns;
    free(v);
    free(nv);
}

static void run_medians(study_run_t *r) {
    double *x = mem_alloc((size_t)(r->nrows ? r->nrows : 1) * sizeof *x);
    for (int c = 0; c < RESULTS_NCOLS; c++) r->med[c] = study_median(x, steady_values(r, (study_col_t)c, x));
    free(x);
    run_busy(r);
    study_time_to_target(r->rows, r->nrows, NAN, &r->tt);
    study_acc_spread(r->rows, r->nrows, STUDY_SPREAD_EPOCHS, &r->acc_lo, &r->acc_hi);
    r->acc_lo *= 100, r->acc_hi *= 100;
    study_loss_spread(r->rows, r->nrows, STUDY_SPREAD_EPOCHS, &r->loss_lo, &r->loss_hi);
    double g2, trace;
    study_noise_scale(r->rows, r->nrows, &g2, &trace, &r->gns_b);
}

/* ---- what tells a run from its strategy's others: the key columns that differ among them and are no column of
 * the tables already (GPUs, batch, lr, schedule, micro-batches, precision and link have theirs) */

typedef struct {
    const char *what;                   /* the label's words before the value ("%s" the value) */
    const char *(*cell)(const study_run_t *, char *, size_t);
} variant_col_t;

static const char *algo_cell(const study_run_t *r, char *b, size_t n) { (void)b, (void)n; return r->algo; }
static const char *init_cell(const study_run_t *r, char *b, size_t n) { (void)b, (void)n; return r->rows[0]->init; }
static const char *commit_cell(const study_run_t *r, char *b, size_t n) {
    (void)b, (void)n;
    return r->env->git_commit;
}
static const char *number_cell(double x, char *b, size_t n) {
    if (x < 0) return "";
    snprintf(b, n, "%.6g", x);
    return b;
}
static const char *momentum_cell(const study_run_t *r, char *b, size_t n) {
    return number_cell(r->rows[0]->momentum, b, n);
}
static const char *optimizer_cell(const study_run_t *r, char *b, size_t n) {
    (void)b, (void)n;
    return r->rows[0]->optimizer ? r->rows[0]->optimizer : "";
}
static const char *lr_schedule_cell(const study_run_t *r, char *b, size_t n) {
    (void)b, (void)n;
    return r->rows[0]->lr_schedule ? r->rows[0]->lr_schedule : "";
}
static const char *warmup_cell(const study_run_t *r, char *b, size_t n) {
    return number_cell(r->rows[0]->warmup_epochs, b, n);
}
static const char *wd_cell(const study_run_t *r, char *b, size_t n) {
    return number_cell(r->rows[0]->weight_decay, b, n);
}

static const variant_col_t variant_cols[] = {
    {NULL, algo_cell}, {"init %s", init_cell}, {"momentum %s", momentum_cell}, {"weight decay %s", wd_cell},
    {"%s", optimizer_cell}, {"%s rate", lr_schedule_cell}, {"warm-up %s epochs", warmup_cell},
    {"commit %s", commit_cell},
};
#define NVARIANT ((int)(sizeof variant_cols / sizeof *variant_cols))

void study_algo_words(bytes_t *b, const study_run_t *r, const char *v) {
    if (r->info && r->info->path_is_algo) text_printf(b, "%s copies", v);
    else if (r->info && r->info->uses_nccl) text_printf(b, "NCCL %s", v);
    else text_printf(b, "%s", v);
}

static int by_group_strategy(const void *a, const void *b) {
    const study_run_t *x = *(const study_run_t *const *)a, *y = *(const study_run_t *const *)b;
    int c = study_cmp_int(x->group, y->group);
    return c ? c : strcmp(x->strategy, y->strategy);
}

static void variants(study_runs_t *s) {
    const study_run_t **u = mem_alloc((size_t)(s->nr ? s->nr : 1) * sizeof *u);
    for (int i = 0; i < s->nr; i++) u[i] = &s->run[i];
    qsort(u, (size_t)s->nr, sizeof *u, by_group_strategy);
    for (int i = 0; i < s->nr;) {
        int j = i, differs[NVARIANT] = {0};
        char a[64], *first[NVARIANT] = {0};
        /* an empty cell (a run on one GPU has no algorithm) tells nothing apart, as the key's wildcards */
        for (; j < s->nr && by_group_strategy(&u[i], &u[j]) == 0; j++)
            for (int c = 0; c < NVARIANT; c++) {
                const char *v = variant_cols[c].cell(u[j], a, sizeof a);
                if (!*v) continue;
                if (!first[c]) first[c] = mem_printf("%s", v);
                else differs[c] |= strcmp(first[c], v) != 0;
            }
        for (int c = 0; c < NVARIANT; c++) free(first[c]);
        for (int k = i; k < j; k++) {
            bytes_t l = {0};
            for (int c = 0; c < NVARIANT; c++) {
                const char *v = variant_cols[c].cell(u[k], a, sizeof a);
                if (!differs[c] || !*v) continue;
                if (l.len) text_printf(&l, ", ");
                if (variant_cols[c].what) text_printf(&l, variant_cols[c].what, v);
                else study_algo_words(&l, u[k], v);
            }
            text_printf(&l, "%s", "");
            ((study_run_t *)u[k])->variant = l.s;
        }
        i = j;
    }
    free(u);
}

/* T1's index: the reference runs with a steady time, by group, line batch and math, the fastest (then the first)
 * first in each. */
static int t1_cmp(const void *a, const void *b) {
    const study_run_t *x = *(const study_run_t *const *)a, *y = *(const study_run_t *const *)b;
    int c = study_cmp_int(x->group, y->group);
    if (!c) c = study_cmp_int(x->line_batch, y->line_batch);
    if (!c) c = strcmp(x->math, y->math);
    if (!c) c = study_cmp_num(x->med[RESULTS_COL_epoch_s], y->med[RESULTS_COL_epoch_s]);
    return c ? c : (x > y) - (x < y);
}

static void t1_index(study_runs_t *s) {
    s->t1 = mem_alloc((size_t)(s->nr ? s->nr : 1) * sizeof *s->t1);
    for (int i = 0; i < s->nr; i++) {
        study_t1_t t1;
        study_t1_init(&t1);
        study_t1_offer(&t1, s->run[i].info, i, s->run[i].med[RESULTS_COL_epoch_s]);
        if (t1.run >= 0) s->t1[s->nt1++] = &s->run[i];
    }
    qsort(s->t1, (size_t)s->nt1, sizeof *s->t1, t1_cmp);
}

int study_t1_run(const study_runs_t *s, int g, int bk, const char *m) {
    int lo = 0, hi = s->nt1;
    while (lo < hi) {   /* the first entry not before (g, bk, m) */
        int mid = (lo + hi) / 2;
        const study_run_t *r = s->t1[mid];
        int c = study_cmp_int(r->group, g);
        if (!c) c = study_cmp_int(r->line_batch, bk);
        if (!c) c = strcmp(r->math, m);
        if (c < 0) lo = mid + 1;
        else hi = mid;
    }
    if (lo == s->nt1) return -1;
    const study_run_t *r = s->t1[lo];
    return r->group == g && r->line_batch == bk && strcmp(r->math, m) == 0 ? (int)(r - s->run) : -1;
}

/* The second pass reads only the reported runs' rows. */
static int kept(const char *run_id, void *ctx) {
    const study_cand_t *c = study_select_find(ctx, run_id);
    return c && c->run >= 0;
}

/* The second pass's row: a row of a reported run copied into the pool, its strings kept once, and gathered. */
static void keep_row(const study_row_t *row, void *ctx) {
    study_select_t *l = ctx;
    study_runs_t *s = l->s;
    const study_cand_t *c = study_select_find(l, row->run_id);
    if (!c || c->run < 0) return;
    study_row_t *k = pool_alloc(&s->pool, sizeof *k);
    *k = *row;
    for (int i = 0; i < RESULTS_NCOLS; i++)
        if (study_schema[i].type == RESULTS_STR) {
            const char **m = RESULTS_MEMBER(k, &study_schema[i], const char *);
            *m = pool_str(&s->pool, *m);
        }
    study_run_t *r = &s->run[c->run];
    if (!r->rows) run_start(s, r, k);
    run_row(s, r, k);
}

int study_load(study_runs_t *s, const char *path, const strategy_info_t *const *infos, char *err, size_t errlen) {
    memset(s, 0, sizeof *s);
    s->infos = infos;
    FILE *f = fopen(path, "rb");
    if (!f) return errmsg(2, err, errlen, "%s: cannot read: %s", path, strerror(errno));
    study_select_t l;
    study_select_init(&l, s);
    study_pass_t p;
    int rc = study_pass(f, path, -1, NULL, study_select_row, &l, &p, err, errlen);
    if (!rc) {
        s->nrow = p.rows, s->bad_rows = p.bad_rows;
        study_select_runs(&l);
        s->run = mem_zalloc((size_t)(l.n ? l.n : 1), sizeof *s->run);   /* at most one kept run per run */
        for (int i = 0; i < l.n; i++) {
            l.c[i].run = l.c[i].keep ? s->nr++ : -1;
            if (l.c[i].keep) snprintf(s->run[l.c[i].run].fstat, sizeof s->run[0].fstat, "%s",
                                      study_verdict(&l.c[i].prog));
        }
        /* the kept runs' rows, in file order, from the bytes the first pass read */
        study_pass_t again;
        rc = study_pass(f, path, p.bytes, kept, keep_row, &l, &again, err, errlen);
    }
    fclose(f);
    study_select_free(&l);
    if (rc) {
        study_free(s);
        return rc;
    }
    /* the references among the reported runs, else the registry's first: the name the report gives T1 */
    names_t refs = {0};
    for (int i = 0; i < s->nr; i++)
        if (study_is_reference(s->run[i].info) && *s->run[i].strategy) names_add(&refs, s->run[i].strategy);
    for (int i = 0; !refs.n && infos && infos[i]; i++)
        if (study_is_reference(infos[i])) names_add(&refs, infos[i]->name);
    if (!refs.n) names_add(&refs, "the reference strategy");
    names_join(&s->ref, &refs, ", ");
    names_free(&refs);
    /* A language model is its group's kind, decided once: a run of the group whose rows hold no tokens/s (one that
     * failed at setup, or ended before its first epoch) is still one, and reads its speed and quality as one. */
    for (int i = 0; i < s->nr; i++) s->run[i].tokens = s->grp[s->run[i].group].tokens;
    for (int i = 0; i < s->nr; i++) run_medians(&s->run[i]);
    variants(s);
    t1_index(s);
    return 0;
}

void study_free(study_runs_t *s) {
    for (int i = 0; s->run && i < s->nr; i++) {
        free(s->run[i].rows);
        free(s->run[i].link);
        free(s->run[i].variant);
        free(s->run[i].busy);
    }
    for (int g = 0; g < s->ng; g++) {
        study_group_t *gr = &s->grp[g];
        free(gr->id);
        free(gr->sub);
        names_t *l[] = {&gr->gpus, &gr->hosts, &gr->commits, &gr->maths, &gr->gds, &gr->seeds};
        for (size_t k = 0; k < sizeof l / sizeof *l; k++) names_free(l[k]);
    }
    free(s->run);
    free(s->grp);
    free(s->t1);
    free(s->envs);
    names_free(&s->unknown);
    free(s->ref.s);
    pool_free(&s->pool);
    memset(s, 0, sizeof *s);
}
