/* study_runs.c — a study CSV read, its runs grouped into configurations by bench/study.h's key, one run kept per
 * configuration (study_pick), and each kept run's rows gathered: steady lists, medians, final accuracy and status. */
#include "study_runs.h"
#include "../engine/errmsg.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void vec_push(vec_t *v, double x) {
    if (v->n == v->cap) {
        int cap = v->cap ? 2 * v->cap : 8;
        double *p = realloc(v->v, (size_t)cap * sizeof *p);
        if (!p) return; /* out of memory: the value is lost, the report goes on */
        v->v = p;
        v->cap = cap;
    }
    v->v[v->n++] = x;
}

static double vec_median(const vec_t *v) {
    if (!v->n) return NAN;
    double *x = malloc((size_t)v->n * sizeof *x);
    if (!x) return NAN;
    memcpy(x, v->v, (size_t)v->n * sizeof *x);
    double m = study_median(x, v->n);
    free(x);
    return m;
}

int isnum(const char *s) {
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

const char *num_s(char *buf, size_t len, double x) {
    if (x == (double)(long long)x && fabs(x) < 1e15)
        snprintf(buf, len, "%lld", (long long)x);
    else
        snprintf(buf, len, "%.6g", x);
    return buf;
}

/* Each field after a \034: a key compares field by field, an empty field before any text. */
void key_num(char *k, size_t len, double x) {
    size_t n = strlen(k);
    if (n < len) snprintf(k + n, len - n, "\034%025.10f", isnan(x) ? 0 : x);
}
void key_str(char *k, size_t len, const char *s) {
    size_t n = strlen(k);
    if (n < len) snprintf(k + n, len - n, "\034%s", s);
}

void study_math_rank(char *out, size_t len, const char *m) {
    if (strcmp(m, "fp32") == 0)
        snprintf(out, len, "1");
    else if (strcmp(m, "tf32") == 0)
        snprintf(out, len, "2");
    else if (strcmp(m, "bf16") == 0)
        snprintf(out, len, "3");
    else
        snprintf(out, len, "4%s", m);
}

/* The link tag: "2 nodes" and the NCCL settings without their NCCL_ prefix, less NCCL_HOSTID (it only names the
 * nodes); "" on one node with NCCL's default transports. */
static void link_tag(char *out, size_t len, const char *nodes, const char *tr) {
    out[0] = '\0';
    if (isnum(nodes) && atof(nodes) > 1) snprintf(out, len, "%s nodes", nodes);
    if (!*tr || strcmp(tr, "default") == 0) return;
    char copy[300];
    snprintf(copy, sizeof copy, "%s", tr);
    for (char *save = NULL, *p = strtok_r(copy, ";", &save); p; p = strtok_r(NULL, ";", &save)) {
        if (strncmp(p, "NCCL_HOSTID=", 12) == 0) continue;
        if (strncmp(p, "NCCL_", 5) == 0) p += 5;
        size_t n = strlen(out);
        snprintf(out + n, len - n, "%s%s", n ? ", " : "", p);
    }
}

static void fact(char *list, size_t len, const char *v) {
    if (!*v) return;
    /* distinct values, comma-separated, in the order first seen */
    size_t vl = strlen(v);
    for (const char *p = list; *p;) {
        const char *e = strstr(p, ", ");
        size_t n = e ? (size_t)(e - p) : strlen(p);
        if (n == vl && strncmp(p, v, n) == 0) return;
        if (!e) break;
        p = e + 2;
    }
    size_t n = strlen(list);
    snprintf(list + n, len - n, "%s%s", n ? ", " : "", v);
}

static int add_distinct(char (*list)[16], int *n, int max, const char *v) {
    for (int i = 0; i < *n; i++)
        if (strcmp(list[i], v) == 0) return 0;
    if (*n < max) snprintf(list[(*n)++], 16, "%s", v);
    return 1;
}

enum {
    C_RUN,
    C_TS,
    C_STRAT,
    C_MODEL,
    C_DATA,
    C_SEED,
    C_GPUS,
    C_G,
    C_B,
    C_LR,
    C_MATH,
    C_GD,
    C_MB,
    C_SCHED,
    C_ALGO,
    C_NODES,
    C_GPN,
    C_TR,
    C_EPOCH,
    C_PHASE,
    C_ACC,
    C_STATUS,
    C_GPU,
    C_HOST,
    C_COMMIT,
    C_EPS,
    C_IPS,
    C_STEP,
    C_COMP,
    C_EXPO,
    C_IDLE,
    C_COMM,
    C_BYTES,
    C_BUB,
    C_BUBI,
    C_STEPS,
    C_SB,
    NCOL
};
static const char *const colname[NCOL] = {
    "run_id",        "timestamp",    "strategy",       "model",   "dataset",       "seed",
    "gpus",          "global_batch", "per_gpu_batch",  "lr",      "math",          "grad_dtype",
    "micro_batches", "schedule",     "nccl_algo",      "nodes",   "gpus_per_node", "nccl_transport",
    "epoch",         "phase",        "test_acc",       "status",  "gpu_name",      "host",
    "git_commit",    "epoch_s",      "images_per_s",   "step_ms", "compute_ms",    "exposed_comm_ms",
    "idle_ms",       "comm_ms",      "bytes_per_step", "bubble",  "bubble_ideal",  "steps",
    "stage_busy_ms"};

/* Runs of the file before selection: their key, progress and first timestamp. */
typedef struct {
    const char *id, *first_ts;
    results_key_t key;
    study_progress_t prog;
    int config, keep;
} cand_t;

static int cand_of(cand_t **c, int *n, int *cap, const char *id) {
    for (int i = *n - 1; i >= 0; i--)
        if (strcmp((*c)[i].id, id) == 0) return i;
    if (*n == *cap) {
        int nc = *cap ? 2 * *cap : 64;
        cand_t *p = realloc(*c, (size_t)nc * sizeof *p);
        if (!p) return -1;
        *c = p;
        *cap = nc;
    }
    memset(&(*c)[*n], 0, sizeof **c);
    (*c)[*n].id = id;
    study_progress_init(&(*c)[*n].prog);
    return (*n)++;
}

/* Earliest first (timestamps are ISO 8601), then by run id. */
static int cand_before(const cand_t *a, const cand_t *b) {
    int c = strcmp(a->first_ts, b->first_ts);
    return c < 0 || (c == 0 && strcmp(a->id, b->id) < 0);
}

/* Groups the file's runs into configurations and marks the one run that stands for each (study_pick). */
static int select_runs(study_runs_t *s, const int *col, char *err, size_t errlen) {
    cand_t *c = NULL;
    int n = 0, cap = 0;
    int kcol[RESULTS_KEY_FIELDS];
    for (int k = 0; k < RESULTS_KEY_FIELDS; k++) kcol[k] = rows_col(&s->rows, results_key_columns[k]);
    for (int r = 0; r < s->rows.nrows; r++) {
        int i = cand_of(&c, &n, &cap, rows_cell(&s->rows, r, col[C_RUN]));
        if (i < 0) {
            free(c);
            return errmsg(2, err, errlen, "out of memory");
        }
        const char *ts = rows_cell(&s->rows, r, col[C_TS]), *e = rows_cell(&s->rows, r, col[C_EPOCH]);
        if (!c[i].first_ts) {
            c[i].first_ts = ts;
            for (int k = 0; k < RESULTS_KEY_FIELDS; k++)
                snprintf(c[i].key.cell[k], RESULTS_CELL_MAX, "%s", rows_cell(&s->rows, r, kcol[k]));
        }
        if (strcmp(ts, c[i].first_ts) < 0) c[i].first_ts = ts;
        if (isnum(e)) study_progress_add(&c[i].prog, atoi(e), rows_cell(&s->rows, r, col[C_STATUS]));
    }
    s->allruns = n;
    /* Configurations in the order their runs started, each run joining the first whose key matches. */
    int *order = malloc((size_t)(n ? n : 1) * sizeof *order);
    results_key_t *keys = malloc((size_t)(n ? n : 1) * sizeof *keys);
    const study_progress_t **p = malloc((size_t)(n ? n : 1) * sizeof *p);
    int *members = malloc((size_t)(n ? n : 1) * sizeof *members);
    if (!order || !keys || !p || !members) {
        free(order);
        free(keys);
        free(p);
        free(members);
        free(c);
        return errmsg(2, err, errlen, "out of memory");
    }
    for (int i = 0; i < n; i++) {
        int j = i;
        while (j > 0 && cand_before(&c[i], &c[order[j - 1]])) order[j] = order[j - 1], j--;
        order[j] = i;
    }
    int nk = 0;
    for (int o = 0; o < n; o++) {
        cand_t *x = &c[order[o]];
        int k = 0;
        while (k < nk && !study_key_match(&keys[k], &x->key)) k++;
        if (k == nk)
            keys[nk++] = x->key;
        else
            study_key_merge(&keys[k], &x->key);
        x->config = k;
    }
    for (int k = 0; k < nk; k++) {
        int m = 0;
        for (int o = 0; o < n; o++)
            if (c[order[o]].config == k) members[m] = order[o], p[m++] = &c[order[o]].prog;
        int pick = study_pick(p, m);
        if (pick >= 0) c[members[pick]].keep = 1;
    }
    s->leftout = n - nk;
    /* The kept runs, in the order of their first row. */
    s->run = calloc((size_t)(nk ? nk : 1), sizeof *s->run);
    if (!s->run) {
        free(order);
        free(keys);
        free(p);
        free(members);
        free(c);
        return errmsg(2, err, errlen, "out of memory");
    }
    for (int i = 0; i < n; i++)
        if (c[i].keep) s->run[s->nr++].run_id = c[i].id;
    free(order);
    free(keys);
    free(p);
    free(members);
    free(c);
    return 0;
}

static int run_index(const study_runs_t *s, const char *id, int *hint) {
    if (*hint >= 0 && *hint < s->nr && strcmp(s->run[*hint].run_id, id) == 0) return *hint;
    for (int i = 0; i < s->nr; i++)
        if (strcmp(s->run[i].run_id, id) == 0) return *hint = i;
    return -1;
}

static int group_of(study_runs_t *s, const char *model, const char *dataset) {
    char id[200];
    snprintf(id, sizeof id, "%s-%s", model, dataset);
    for (char *q = id; *q; q++)
        if (!((*q >= 'A' && *q <= 'Z') || (*q >= 'a' && *q <= 'z') || (*q >= '0' && *q <= '9') || *q == '.' ||
              *q == '_' || *q == '-'))
            *q = '_';
    for (int g = 0; g < s->ng; g++)
        if (strcmp(s->grp[g].id, id) == 0) return g;
    group_t *p = realloc(s->grp, (size_t)(s->ng + 1) * sizeof *p);
    if (!p) return -1;
    s->grp = p;
    group_t *g = &s->grp[s->ng];
    memset(g, 0, sizeof *g);
    snprintf(g->id, sizeof g->id, "%s", id);
    snprintf(g->sub, sizeof g->sub, "%s on %s", model, dataset);
    return s->ng++;
}

static void push_num(vec_t *v, const char *cell) {
    if (isnum(cell)) vec_push(v, atof(cell));
}

static void gather_row(study_runs_t *s, run_t *r, int row, const int *col, int fresh) {
    const rows_t *t = &s->rows;
#define CELL(c) rows_cell(t, row, col[c])
    group_t *g;
    if (fresh) {
        r->group = group_of(s, CELL(C_MODEL), CELL(C_DATA));
        g = &s->grp[r->group];
        r->strategy = CELL(C_STRAT);
        r->dataset = CELL(C_DATA);
        r->gpus = atoi(CELL(C_GPUS));
        r->G = atoi(CELL(C_G));
        r->b = atoi(CELL(C_B));
        r->lr = CELL(C_LR);
        r->seed = CELL(C_SEED);
        r->mb = CELL(C_MB);
        r->M = atoi(r->mb);
        r->sched = CELL(C_SCHED);
        r->info = strategy_info_find(s->infos, r->strategy);
        /* a micro_batches cell stands for a pipeline's only where the strategy is unknown */
        r->pipe = study_is_pipeline(r->info, r->M);
        r->global = study_t1_global(r->info, r->M);
        r->bk = study_line_batch(r->global, r->b, r->G);
        if (!r->info) fact(s->unknown, sizeof s->unknown, r->strategy);
        r->algo = CELL(C_ALGO);
        r->math = CELL(C_MATH);
        r->gd = CELL(C_GD);
        r->tr = CELL(C_TR);
        link_tag(r->link, sizeof r->link, CELL(C_NODES), r->tr);
        r->nodes = isnum(CELL(C_NODES)) ? atoi(CELL(C_NODES)) : 1;
        r->gpn = isnum(CELL(C_GPN)) ? atoi(CELL(C_GPN)) : r->gpus;
        r->facc = NAN;
        r->last = -1;
        r->fstat = "";
        add_distinct(g->maths, &g->nm, 8, r->math);
        if (*r->gd) add_distinct(g->gds, &g->ngd, 8, r->gd);
        if (*r->seed) {
            int k = 0;
            while (k < g->nseeds && strcmp(g->seeds[k], r->seed)) k++;
            if (k == g->nseeds && k < 64) snprintf(g->seeds[g->nseeds++], 32, "%s", r->seed);
        }
    }
    g = &s->grp[r->group];
    fact(g->gpus, sizeof g->gpus, CELL(C_GPU));
    fact(g->hosts, sizeof g->hosts, CELL(C_HOST));
    fact(g->commits, sizeof g->commits, CELL(C_COMMIT));
    char d[16];
    snprintf(d, 11, "%s", CELL(C_TS));
    if (*d) {
        if (!*g->d0 || strcmp(d, g->d0) < 0) snprintf(g->d0, sizeof g->d0, "%s", d);
        if (!*g->d1 || strcmp(d, g->d1) > 0) snprintf(g->d1, sizeof g->d1, "%s", d);
    }
    const char *e = CELL(C_EPOCH), *acc = CELL(C_ACC);
    if (isnum(e) && atof(e) >= 1 && isnum(acc)) vec_push(&r->acc_e, atof(e)), vec_push(&r->acc_v, 100 * atof(acc));
    if (isnum(e) && (r->last < 0 || atof(e) >= r->last)) {
        r->last = (int)atof(e);
        r->facc = isnum(acc) ? 100 * atof(acc) : NAN;
        r->fstat = CELL(C_STATUS);
    }
    if (strcmp(CELL(C_PHASE), "steady") == 0) {
        push_num(&r->T, CELL(C_EPS));
        push_num(&r->I, CELL(C_IPS));
        push_num(&r->S, CELL(C_STEP));
        push_num(&r->C, CELL(C_COMP));
        push_num(&r->X, CELL(C_EXPO));
        push_num(&r->D, CELL(C_IDLE));
        push_num(&r->Q, CELL(C_COMM));
        push_num(&r->Y, CELL(C_BYTES));
        push_num(&r->B, CELL(C_BUB));
        push_num(&r->BI, CELL(C_BUBI));
        push_num(&r->N, CELL(C_STEPS));
        char sb[1024];
        snprintf(sb, sizeof sb, "%s", CELL(C_SB));
        int k = 0;
        /* ";"-separated, empty parts kept in place (awk's split) */
        for (char *p = sb, *q; *sb; p = q + 1) {
            q = strchr(p, ';');
            if (q) *q = '\0';
            if (k >= r->ns) {
                vec_t *nv = realloc(r->sb, (size_t)(k + 1) * sizeof *nv);
                if (!nv) break;
                r->sb = nv;
                memset(&r->sb[k], 0, sizeof *nv);
                r->ns = k + 1;
            }
            push_num(&r->sb[k], p);
            k++;
            if (!q) break;
        }
    }
#undef CELL
}

int study_load(study_runs_t *s, const char *path, const strategy_info_t *const *infos, char *err, size_t errlen) {
    memset(s, 0, sizeof *s);
    s->infos = infos;
    int rc = rows_read(&s->rows, path, err, errlen);
    if (rc) return rc;
    int col[NCOL];
    for (int i = 0; i < NCOL; i++) col[i] = rows_col(&s->rows, colname[i]);
    if (col[C_RUN] < 0) {
        study_free(s);
        return errmsg(2, err, errlen, "%s: no column run_id: not a scaling results CSV", path);
    }
    if ((rc = select_runs(s, col, err, errlen))) {
        study_free(s);
        return rc;
    }
    char *seen = calloc((size_t)(s->nr ? s->nr : 1), 1);
    if (!seen) {
        study_free(s);
        return errmsg(2, err, errlen, "out of memory");
    }
    /* runs in the order of their first row (select_runs kept file order of first appearance) */
    int hint = -1;
    for (int r = 0; r < s->rows.nrows; r++) {
        int i = run_index(s, rows_cell(&s->rows, r, col[C_RUN]), &hint);
        if (i < 0) continue;
        gather_row(s, &s->run[i], r, col, !seen[i]);
        seen[i] = 1;
    }
    free(seen);
    /* the references among the reported runs, else the registry's first: the name the report gives T1 */
    for (int i = 0; i < s->nr; i++)
        if (study_is_reference(s->run[i].info)) fact(s->ref, sizeof s->ref, s->run[i].strategy);
    for (int i = 0; !*s->ref && infos && infos[i]; i++)
        if (study_is_reference(infos[i])) snprintf(s->ref, sizeof s->ref, "%s", infos[i]->name);
    if (!*s->ref) snprintf(s->ref, sizeof s->ref, "the reference strategy");
    for (int i = 0; i < s->nr; i++) {
        run_t *r = &s->run[i];
        r->tmed = vec_median(&r->T);
        r->imed = vec_median(&r->I);
        r->smed = vec_median(&r->S);
        r->cmed = vec_median(&r->C);
        r->xmed = vec_median(&r->X);
        r->dmed = vec_median(&r->D);
        r->qmed = vec_median(&r->Q);
        r->ymed = vec_median(&r->Y);
        r->bmed = vec_median(&r->B);
        r->bimed = vec_median(&r->BI);
        r->nmed = vec_median(&r->N);
    }
    return 0;
}

void study_free(study_runs_t *s) {
    for (int i = 0; s->run && i < s->nr; i++) {
        run_t *r = &s->run[i];
        vec_t *v[] = {&r->T, &r->I, &r->S,  &r->C, &r->X,     &r->D,    &r->Q,
                      &r->Y, &r->B, &r->BI, &r->N, &r->acc_e, &r->acc_v};
        for (size_t k = 0; k < sizeof v / sizeof *v; k++) free(v[k]->v);
        for (int k = 0; k < r->ns; k++) free(r->sb[k].v);
        free(r->sb);
    }
    free(s->run);
    free(s->grp);
    rows_free(&s->rows);
    memset(s, 0, sizeof *s);
}

int study_t1_run(const study_runs_t *s, int g, int bk, const char *m) {
    study_t1_t t1;
    study_t1_init(&t1);
    for (int i = 0; i < s->nr; i++) {
        const run_t *r = &s->run[i];
        if (r->group == g && r->bk == bk && strcmp(r->math, m) == 0) study_t1_offer(&t1, r->info, i, r->tmed);
    }
    return t1.run;
}
