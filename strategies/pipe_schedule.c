/* pipe_schedule.c — builds the plan of one pipeline step: GPipe / 1F1B order per stage, activation slots, the
 * events each op waits on (data dependencies and buffer reuse), and a host enqueue order that respects them. */
#include "pipe_schedule.h"
#include "../engine/errmsg.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>


int sched_slots(int stages, int stage, int micro, int one_f_one_b) {
    if (!one_f_one_b) return micro;
    int k = stages - stage;
    return k < micro ? k : micro;
}

double sched_ideal_bubble(int stages, int micro) { return (double)(stages - 1) / (double)(micro + stages - 1); }

void sched_ref_name(sched_ref_t r, char *buf, size_t len) {
    switch (r.kind) {
    case SCHED_FWD:  snprintf(buf, len, "fwd s%d mb%d", r.stage, r.mb); break;
    case SCHED_BWD:  snprintf(buf, len, "bwd s%d mb%d", r.stage, r.mb); break;
    case SCHED_ACT:  snprintf(buf, len, "act s%d->s%d mb%d", r.stage - 1, r.stage, r.mb); break;
    default:         snprintf(buf, len, "grad s%d->s%d mb%d", r.stage + 1, r.stage, r.mb); break;
    }
}

/* Stage s's compute order. GPipe: every forward, then every backward. 1F1B (PipeDream-flush, as Megatron-LM's
 * non-interleaved schedule): min(stages - s - 1, micro) warm-up forwards, then one forward and one backward in
 * turn, then the remaining backwards. Backwards run in micro-batch order under both. */
static int stage_order(int p, int s, int m, int f1b, sched_ref_t *out) {
    int n = 0;
    if (!f1b) {
        for (int j = 0; j < m; j++) out[n++] = (sched_ref_t){SCHED_FWD, s, j};
        for (int j = 0; j < m; j++) out[n++] = (sched_ref_t){SCHED_BWD, s, j};
        return n;
    }
    int warm = p - s - 1 < m ? p - s - 1 : m;
    for (int j = 0; j < warm; j++) out[n++] = (sched_ref_t){SCHED_FWD, s, j};
    for (int i = 0; i < m - warm; i++) {
        out[n++] = (sched_ref_t){SCHED_FWD, s, warm + i};
        out[n++] = (sched_ref_t){SCHED_BWD, s, i};
    }
    for (int i = m - warm; i < m; i++) out[n++] = (sched_ref_t){SCHED_BWD, s, i};
    return n;
}

/* The op's waits: what it reads must be written, and what it overwrites must have been read. A stage's own
 * compute stream orders its own forwards and backwards; only other streams need events. Backwards run in
 * micro-batch order, so the previous backward on a stage is mb - 1. */
static void fill_waits(sched_op_t *o, int p, const int *slots) {
    int s = o->op.stage, j = o->op.mb;
    o->n_wait = 0;
#define WAIT(k, st, mb) (o->wait[o->n_wait++] = (sched_ref_t){(k), (st), (mb)})
    switch (o->op.kind) {
    case SCHED_FWD:
        if (s > 0) WAIT(SCHED_ACT, s, j);                       /* its input has arrived */
        break;
    case SCHED_BWD:
        if (s < p - 1) WAIT(SCHED_GRAD, s, j);                  /* its output gradient has arrived */
        if (s > 0 && j > 0) WAIT(SCHED_GRAD, s - 1, j - 1);     /* the previous input gradient has been taken */
        break;
    case SCHED_ACT:
        WAIT(SCHED_FWD, s - 1, j);                              /* the sender has produced it */
        if (j >= slots[s]) WAIT(SCHED_BWD, s, j - slots[s]);    /* the slot's last user is done with its input */
        break;
    default:
        WAIT(SCHED_BWD, s + 1, j);                              /* the sender has produced it */
        if (j > 0) WAIT(SCHED_BWD, s, j - 1);                   /* the previous output gradient has been used */
        break;
    }
#undef WAIT
}

typedef struct {
    sched_ref_t *ops;
    int n, head;
} queue_t;

int sched_build(sched_t *s, int stages, int micro, int one_f_one_b, char *err, size_t errlen) {
    memset(s, 0, sizeof *s);
    if (stages < 1 || stages > SCHED_MAX_STAGES)
        return errmsg(-1, err, errlen, "pipeline: %d stages (1..%d supported)", stages, SCHED_MAX_STAGES);
    if (micro < 1 || micro > SCHED_MAX_MICRO)
        return errmsg(-1, err, errlen, "pipeline: %d micro-batches (1..%d supported)", micro, SCHED_MAX_MICRO);
    int p = stages, m = micro;
    s->stages = p;
    s->micro = m;
    s->one_f_one_b = one_f_one_b;
    for (int i = 0; i < p; i++) s->slots[i] = sched_slots(p, i, m, one_f_one_b);

    /* Queues: per stage its compute order, its incoming activations and its incoming gradients (micro-batch order). */
    int n_queues = 3 * p, total = 0;
    queue_t *q = calloc((size_t)n_queues, sizeof *q);
    sched_ref_t *pool = calloc((size_t)p * 4 * m, sizeof *pool);
    char *done = calloc((size_t)SCHED_KINDS * p * m, 1);
    s->ops = calloc((size_t)p * 4 * m, sizeof *s->ops);
    if (!q || !pool || !done || !s->ops) {
        free(q); free(pool); free(done); sched_free(s);
        return errmsg(-1, err, errlen, "pipeline: out of host memory for the schedule");
    }
    sched_ref_t *next = pool;
    for (int st = 0; st < p; st++) {
        queue_t *c = &q[3 * st], *a = &q[3 * st + 1], *g = &q[3 * st + 2];
        c->ops = next; c->n = stage_order(p, st, m, one_f_one_b, c->ops); next += c->n;
        a->ops = next; a->n = st > 0 ? m : 0; next += a->n;
        g->ops = next; g->n = st < p - 1 ? m : 0; next += g->n;
        for (int j = 0; j < a->n; j++) a->ops[j] = (sched_ref_t){SCHED_ACT, st, j};
        for (int j = 0; j < g->n; j++) g->ops[j] = (sched_ref_t){SCHED_GRAD, st, j};
        total += c->n + a->n + g->n;
        /* A slot is reused only after the backward of its previous micro-batch, on the stage's own stream. */
        int seen_bwd = -1;
        for (int k = 0; k < c->n; k++) {
            if (c->ops[k].kind == SCHED_BWD) seen_bwd = c->ops[k].mb;
            else if (c->ops[k].mb >= s->slots[st] && seen_bwd < c->ops[k].mb - s->slots[st]) {
                free(q); free(pool); free(done); sched_free(s);
                return errmsg(-1, err, errlen, "pipeline: internal error: stage %d reuses a slot too early", st);
            }
        }
    }

    /* Enqueue order: one op per queue per pass (a unit-time simulation, so the host interleaves the stages as the
     * GPUs will run them), and an op only once everything it waits on has been enqueued. */
#define DONE(r) done[((size_t)(r).kind * p + (r).stage) * m + (r).mb]
    while (s->n_ops < total) {
        int progress = 0;
        for (int k = 0; k < n_queues; k++) {
            queue_t *qu = &q[k];
            if (qu->head >= qu->n) continue;
            sched_op_t o = {0};
            o.op = qu->ops[qu->head];
            fill_waits(&o, p, s->slots);
            int ready = 1;
            for (int w = 0; w < o.n_wait; w++) ready &= DONE(o.wait[w]);
            if (!ready) continue;
            o.slot = o.op.mb % s->slots[o.op.stage];
            o.src_slot = o.op.kind == SCHED_ACT ? o.op.mb % s->slots[o.op.stage - 1] : -1;
            o.first_bwd = o.op.kind == SCHED_BWD && o.op.mb == 0;
            s->ops[s->n_ops++] = o;
            DONE(o.op) = 1;
            qu->head++;
            progress = 1;
        }
        if (!progress) {
            free(q); free(pool); free(done); sched_free(s);
            return errmsg(-1, err, errlen, "pipeline: internal error: schedule deadlock (%d stages, %d micro-batches, %s)",
                        p, m, one_f_one_b ? "1f1b" : "gpipe");
        }
    }
#undef DONE
    free(q);
    free(pool);
    free(done);
    return 0;
}

void sched_free(sched_t *s) {
    free(s->ops);
    s->ops = NULL;
    s->n_ops = 0;
}
