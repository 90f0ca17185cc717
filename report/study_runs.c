/* study_runs.c — a study CSV read (results_read: the schema's reader of any CSV version), its runs grouped into
 * configurations by study/key.h's key, one run kept per configuration (study_pick), and each kept run's rows
 * gathered: steady lists, medians, final accuracy and status. */
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
        if (!p) {   /* a median over fewer epochs than measured would be a wrong number, printed as a right one */
            fprintf(stderr, "scaling report: out of host memory keeping a run's epochs\n");
            exit(1);
        }
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
static void link_tag(char *out, size_t len, int nodes, const char *tr) {
    out[0] = '\0';
    if (nodes > 1) snprintf(out, len, "%d nodes", nodes);
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
static int select_runs(study_runs_t *s, char *err, size_t errlen) {
    cand_t *c = NULL;
    int n = 0, cap = 0;
    for (int r = 0; r < s->rows.n; r++) {
        const results_row_t *row = &s->rows.row[r];
        int i = cand_of(&c, &n, &cap, row->run_id);
        if (i < 0) {
            free(c);
            return errmsg(2, err, errlen, "out of memory");
        }
        if (!c[i].first_ts) {
            c[i].first_ts = row->timestamp;
            results_key_of_row(row, &c[i].key); /* the cells --resume's key holds */
        }
        if (strcmp(row->timestamp, c[i].first_ts) < 0) c[i].first_ts = row->timestamp;
        if (row->epoch >= 0) study_progress_add(&c[i].prog, row->epoch, row->status);
    }
    s->allruns = n;
    /* Configurations in the order their runs started, each run joining the first whose key matches. */
    int *order = malloc((size_t)(n ? n : 1) * sizeof *order);
    results_key_t *keys = malloc((size_t)(n ? n : 1) * sizeof *keys);
    const study_progress_t **p = malloc((size_t)(n ? n : 1) * sizeof *p);
    int *members = malloc((size_t)(n ? n : 1) * sizeof *members);
    s->run = calloc((size_t)(n ? n : 1), sizeof *s->run);   /* at most one kept run per run */
    if (!order || !keys || !p || !members || !s->run) {
        free(s->run);
        s->run = NULL;
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
    for (int i = 0; i < n; i++)
        if (c[i].keep) {
            s->run[s->nr].run_id = c[i].id;
            snprintf(s->run[s->nr++].fstat, sizeof s->run[0].fstat, "%s", study_verdict(&c[i].prog));
        }
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

static void push_num(vec_t *v, double x) {
    if (x >= 0) vec_push(v, x); /* < 0: an empty cell; NaN (a diverged loss) is no time either */
}

static void gather_row(study_runs_t *s, run_t *r, const results_row_t *row, int fresh) {
    group_t *g;
    if (fresh) {
        r->group = group_of(s, row->model, row->dataset);
        g = &s->grp[r->group];
        r->strategy = row->strategy;
        r->model = row->model;
        r->dataset = row->dataset;
        r->env = &row->env;
        r->gpus = row->gpus;
        r->G = row->global_batch;
        r->b = row->per_gpu_batch;
        /* lr, seed and micro_batches as their cells read (the writer's formats) */
        if (row->lr >= 0) snprintf(r->lr_s, sizeof r->lr_s, "%.6g", row->lr);
        snprintf(r->seed_s, sizeof r->seed_s, "%llu", row->seed);
        if (row->stats.micro_batches >= 0) snprintf(r->mb_s, sizeof r->mb_s, "%d", row->stats.micro_batches);
        r->lr = r->lr_s;
        r->seed = r->seed_s;
        r->mb = r->mb_s;
        r->M = row->stats.micro_batches > 0 ? row->stats.micro_batches : 0;
        r->sched = row->stats.schedule;
        r->info = strategy_info_find(s->infos, r->strategy);
        /* a micro_batches cell stands for a pipeline's only where the strategy is unknown */
        r->pipe = study_is_pipeline(r->info, r->M);
        r->global = study_t1_global(r->info, r->M);
        r->bk = study_line_batch(r->global, r->b, r->G);
        if (!r->info) fact(s->unknown, sizeof s->unknown, r->strategy);
        r->algo = row->stats.nccl_algo;
        r->math = row->math;
        r->gd = row->grad_dtype;
        r->tr = row->env.nccl_transport;
        link_tag(r->link, sizeof r->link, row->nodes, r->tr);
        r->nodes = row->nodes > 0 ? row->nodes : 1;
        r->gpn = row->gpus_per_node > 0 ? row->gpus_per_node : r->gpus;
        r->facc = NAN;
        r->peak_mb = NAN;
        r->last = -1;
        add_distinct(g->maths, &g->nm, 8, r->math);
        if (*r->gd) add_distinct(g->gds, &g->ngd, 8, r->gd);
        if (*r->seed) {
            int k = 0;
            while (k < g->nseeds && strcmp(g->seeds[k], r->seed)) k++;
            if (k == g->nseeds && k < 64) snprintf(g->seeds[g->nseeds++], 32, "%s", r->seed);
        }
    }
    g = &s->grp[r->group];
    fact(g->gpus, sizeof g->gpus, row->env.gpu_name);
    fact(g->hosts, sizeof g->hosts, row->env.host);
    fact(g->commits, sizeof g->commits, row->env.git_commit);
    char d[16];
    snprintf(d, sizeof d, "%.10s", row->timestamp);
    if (*d) {
        if (!*g->d0 || strcmp(d, g->d0) < 0) snprintf(g->d0, sizeof g->d0, "%s", d);
        if (!*g->d1 || strcmp(d, g->d1) > 0) snprintf(g->d1, sizeof g->d1, "%s", d);
    }
    int e = row->epoch;
    double acc = row->test_acc; /* < 0: none; NaN stays NaN */
    int has_acc = !(acc < 0) && !isnan(acc);
    if (e >= 1 && has_acc) vec_push(&r->acc_e, e), vec_push(&r->acc_v, 100 * acc);
    if (e >= 0 && (r->last < 0 || e >= r->last)) {
        r->last = e;
        r->final = row;
        r->facc = has_acc ? 100 * acc : NAN;
    }
    if (row->stats.peak_mem_mb >= 0 && !(r->peak_mb >= row->stats.peak_mem_mb)) r->peak_mb = row->stats.peak_mem_mb;
    if (strcmp(row->phase, "steady") == 0) {
        const epoch_stats_t *st = &row->stats;
        push_num(&r->T, st->epoch_s);
        push_num(&r->I, row->images_per_s);
        push_num(&r->S, st->step_ms);
        push_num(&r->C, st->compute_ms);
        push_num(&r->X, st->exposed_comm_ms);
        push_num(&r->D, st->idle_ms);
        push_num(&r->Q, st->comm_ms);
        push_num(&r->Y, st->bytes_per_step);
        push_num(&r->B, st->bubble);
        push_num(&r->BI, st->bubble_ideal);
        push_num(&r->N, st->steps);
        char sb[sizeof st->stage_busy_ms];
        snprintf(sb, sizeof sb, "%s", st->stage_busy_ms);
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
            if (isnum(p)) vec_push(&r->sb[k], atof(p));
            k++;
            if (!q) break;
        }
    }
}

int study_load(study_runs_t *s, const char *path, const strategy_info_t *const *infos, char *err, size_t errlen) {
    memset(s, 0, sizeof *s);
    s->infos = infos;
    int rc = results_read(path, &s->rows, err, errlen);
    if (rc) return rc;
    if ((rc = select_runs(s, err, errlen))) {
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
    for (int r = 0; r < s->rows.n; r++) {
        int i = run_index(s, s->rows.row[r].run_id, &hint);
        if (i < 0) continue;
        gather_row(s, &s->run[i], &s->rows.row[r], !seen[i]);
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
    results_rows_free(&s->rows);
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
