/* select.c — the first pass of the table's load (select.h): runs found by id through a hash map, their keys and
 * machines kept once each, configurations found through a hash of the key cells that are no wildcard. */
#include "select.h"

#include <stdlib.h>
#include <string.h>

/* A configuration: its key, the most specific cells its runs wrote (study_key_merge), and the next configuration
 * of the same hash bucket, in the order they were made. */
typedef struct {
    const char *key[RESULTS_KEY_FIELDS], *commit;
    unsigned long long hash;
    int next;
} config_t;

void study_select_init(study_select_t *l, study_runs_t *s) {
    memset(l, 0, sizeof *l);
    l->s = s;
}

/* Cells joined into l->join with a unit separator, which no cell holds (names are checked, numbers formatted). */
static const char *join_cells(study_select_t *l, const char *const *cell, int n) {
    text_clear(&l->join);
    for (int f = 0; f < n; f++) text_printf(&l->join, "%s\x1f", cell[f]);
    return text_str(&l->join);
}

/* The row's key columns as read, into l->join: each key cell is formatted from its own member alone, so equal values
 * give an equal key and study_key_of_row (the whole row formatted and parsed again) runs once per distinct one,
 * not once per run. Numbers in %a, exact. */
static const char *key_values(study_select_t *l, const study_row_t *row) {
    text_clear(&l->join);
    for (int f = 0; f < RESULTS_KEY_FIELDS; f++) {
        const study_column_t *c = &study_schema[study_key_schema_cols[f]];
        switch (c->type) {
        case RESULTS_TEXT: text_printf(&l->join, "%s", RESULTS_CMEMBER(row, c, char)); break;
        case RESULTS_STR: text_printf(&l->join, "%s", *RESULTS_CMEMBER(row, c, const char *)); break;
        case RESULTS_U64: text_printf(&l->join, "%llu", *RESULTS_CMEMBER(row, c, unsigned long long)); break;
        case RESULTS_NUM: text_printf(&l->join, "%a", *RESULTS_CMEMBER(row, c, double)); break;
        default: text_printf(&l->join, "%d", *RESULTS_CMEMBER(row, c, int)); break;
        }
        text_printf(&l->join, "\x1f");
    }
    return text_str(&l->join);
}

static void cand_key(study_select_t *l, study_cand_t *c, const study_row_t *row) {
    const char *v = key_values(l, row);
    int i = smap_get(&l->keys, v);
    if (i < 0) {
        i = l->nkey;
        smap_put(&l->keys, pool_copy(&l->s->pool, v), i);
        study_key_t k;
        study_key_of_row(row, &k);
        const char **t = pool_alloc(&l->s->pool, sizeof *t * RESULTS_KEY_FIELDS);
        for (int f = 0; f < RESULTS_KEY_FIELDS; f++) t[f] = pool_str(&l->s->pool, k.cell[f]);
        *MEM_PUSH(l->key, l->nkey, l->capkey) = t;
    }
    c->key = l->key[i];
    c->commit = pool_str(&l->s->pool, row->env.git_commit);
    c->hash = study_key_hash_cells(c->key, c->commit);
}

/* The row's machine and build, kept once among the file's (s->envs). */
static void env_note(study_select_t *l, const study_env_t *e) {
    const char *cell[] = {e->gpu_name, e->driver, e->cuda, e->cudnn, e->nccl, e->host, e->git_commit,
                          e->nccl_transport, e->nccl_env};
    const char *j = join_cells(l, cell, (int)(sizeof cell / sizeof *cell));
    if (smap_get(&l->envs, j) >= 0) return;
    study_runs_t *s = l->s;
    study_env_t *c = pool_alloc(&s->pool, sizeof *c);
    *c = *e;
    *MEM_PUSH(s->envs, s->nenv, s->capenv) = c;
    smap_put(&l->envs, pool_copy(&s->pool, j), s->nenv - 1);
}

void study_select_row(const study_row_t *row, void *ctx) {
    study_select_t *l = ctx;
    env_note(l, &row->env);
    int i = smap_get(&l->ids, row->run_id);
    if (i < 0) {
        study_cand_t *x = MEM_PUSH(l->c, l->n, l->cap);
        i = l->n - 1;
        x->id = pool_copy(&l->s->pool, row->run_id);
        x->first_ts = pool_copy(&l->s->pool, row->timestamp);
        study_progress_init(&x->prog);
        cand_key(l, x, row);
        smap_put(&l->ids, x->id, i);
    }
    study_cand_t *x = &l->c[i];
    if (strcmp(row->timestamp, x->first_ts) < 0) x->first_ts = pool_copy(&l->s->pool, row->timestamp);
    if (row->epoch >= 0) study_progress_add(&x->prog, row->epoch, row->status);
}

/* Earliest first (timestamps are ISO 8601), then by run id. */
static int cand_cmp(const void *a, const void *b) {
    const study_cand_t *x = *(const study_cand_t *const *)a, *y = *(const study_cand_t *const *)b;
    int c = strcmp(x->first_ts, y->first_ts);
    return c ? c : strcmp(x->id, y->id);
}

/* Configurations in the order their runs started, each run joining the first whose key matches; returns how many.
 * Two runs can match only where every cell that is no wildcard is equal, so only one hash bucket is searched. */
static int assign_configs(int n, study_cand_t **order) {
    config_t *cfg = mem_alloc((size_t)(n ? n : 1) * sizeof *cfg);
    int nb = 64;
    while (nb < 2 * n) nb *= 2;
    int *head = mem_alloc((size_t)nb * sizeof *head), *tail = mem_alloc((size_t)nb * sizeof *tail);
    for (int b = 0; b < nb; b++) head[b] = tail[b] = -1;
    int nk = 0;
    for (int o = 0; o < n; o++) {
        study_cand_t *x = order[o];
        int b = (int)(x->hash & (unsigned long long)(nb - 1)), k = head[b];
        while (k >= 0 && !(cfg[k].hash == x->hash && study_key_match_commit(cfg[k].key, cfg[k].commit, x->key,
                                                                             x->commit)))
            k = cfg[k].next;
        if (k < 0) {
            k = nk++;
            memcpy(cfg[k].key, x->key, sizeof cfg[k].key);
            cfg[k].commit = x->commit;
            cfg[k].hash = x->hash;
            cfg[k].next = -1;
            if (tail[b] >= 0) cfg[tail[b]].next = k;
            else head[b] = k;
            tail[b] = k;
        } else
            study_key_merge_cells(cfg[k].key, x->key);
        x->config = k;
    }
    free(cfg);
    free(head);
    free(tail);
    return nk;
}

void study_select_runs(study_select_t *l) {
    study_runs_t *s = l->s;
    study_cand_t *c = l->c;
    int n = l->n;
    s->allruns = n;
    study_cand_t **order = mem_alloc((size_t)(n ? n : 1) * sizeof *order);
    for (int i = 0; i < n; i++) order[i] = &c[i];
    qsort(order, (size_t)n, sizeof *order, cand_cmp);
    int nk = assign_configs(n, order);
    /* each configuration's runs in start order (a counting sort), and its pick */
    int *start = mem_zalloc((size_t)nk + 1, sizeof *start);
    for (int i = 0; i < n; i++) start[c[i].config + 1]++;
    for (int k = 0; k < nk; k++) start[k + 1] += start[k];
    int *fill = mem_alloc((size_t)(nk ? nk : 1) * sizeof *fill);
    memcpy(fill, start, (size_t)nk * sizeof *fill);
    study_cand_t **members = mem_alloc((size_t)(n ? n : 1) * sizeof *members);
    for (int o = 0; o < n; o++) members[fill[order[o]->config]++] = order[o];
    const study_progress_t **p = mem_alloc((size_t)(n ? n : 1) * sizeof *p);
    for (int k = 0; k < nk; k++) {
        int m = start[k + 1] - start[k];
        for (int j = 0; j < m; j++) p[j] = &members[start[k] + j]->prog;
        int pick = study_pick(p, m);
        if (pick >= 0) members[start[k] + pick]->keep = 1;
    }
    s->leftout = n - nk;
    free(p);
    free(members);
    free(fill);
    free(start);
    free(order);
}

study_cand_t *study_select_find(const study_select_t *l, const char *run_id) {
    int i = smap_get(&l->ids, run_id);
    return i < 0 ? NULL : &l->c[i];
}

void study_select_free(study_select_t *l) {
    free(l->c);
    free(l->key);
    smap_free(&l->ids);
    smap_free(&l->keys);
    smap_free(&l->envs);
    free(l->join.s);
    memset(l, 0, sizeof *l);
}
