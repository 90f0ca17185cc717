/* pipe_schedule.c — builds the plan of one pipeline step: GPipe / 1F1B / zero-bubble order per stage, activation
 * slots, the events each op waits on (data dependencies and buffer reuse), and a host enqueue order that respects
 * them. */
#include "pipe_schedule.h"
#include "../../engine/errmsg.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const order_names[SCHED_ORDERS] = {SCHED_NAMES};

const char *sched_order_name(sched_order_t order) {
    return order >= 0 && order < SCHED_ORDERS ? order_names[order] : "?";
}

int sched_slots(int stages, int stage, int micro, sched_order_t order) {
    int k = order == SCHED_GPIPE ? micro : order == SCHED_1F1B ? stages - stage : stages;
    return k < micro ? k : micro;
}

void sched_ref_name(sched_ref_t r, char *buf, size_t len) {
    switch (r.kind) {
    case SCHED_FWD:  snprintf(buf, len, "fwd s%d mb%d", r.stage, r.mb); break;
    case SCHED_BWD:  snprintf(buf, len, "bwd s%d mb%d", r.stage, r.mb); break;
    case SCHED_WGT:  snprintf(buf, len, "wgt s%d mb%d", r.stage, r.mb); break;
    case SCHED_ACT:  snprintf(buf, len, "act s%d->s%d mb%d", r.stage - 1, r.stage, r.mb); break;
    default:         snprintf(buf, len, "grad s%d->s%d mb%d", r.stage + 1, r.stage, r.mb); break;
    }
}

#define OP(k, j) (sched_ref_t){(k), s, (j)}

/* Stage s's compute order. GPipe: every forward, then every backward. 1F1B (PipeDream-flush, as Megatron-LM's
 * non-interleaved schedule): min(stages - s - 1, micro) warm-up forwards, then one forward and one backward in
 * turn, then the remaining backwards. Zero bubble (ZB-H1, as PyTorch's ScheduleInterleavedZeroBubble runs it with
 * one stage per rank): 1F1B's order of forwards and data gradients B, each B followed by the oldest pending W from
 * the stage's (s + 1)-th B on, the s W held back run at the end. Backwards and Ws run in micro-batch order. */
static int stage_order(int p, int s, int m, sched_order_t order, sched_ref_t *out) {
    int n = 0;
    if (order == SCHED_GPIPE) {
        for (int j = 0; j < m; j++) out[n++] = OP(SCHED_FWD, j);
        for (int j = 0; j < m; j++) out[n++] = OP(SCHED_BWD, j);
        return n;
    }
    int warm = p - s - 1 < m ? p - s - 1 : m, f = 0, b = 0, w = 0, zb = order == SCHED_ZB;
    while (f < warm) out[n++] = OP(SCHED_FWD, f++);
    while (b < m) {
        if (f < m) out[n++] = OP(SCHED_FWD, f++);
        out[n++] = OP(SCHED_BWD, b++);
        if (zb && b > s) out[n++] = OP(SCHED_WGT, w++);
    }
    while (zb && w < m) out[n++] = OP(SCHED_WGT, w++);
    return n;
}
#undef OP

/* The op's waits: what it reads must be written, and what it overwrites must have been read. A stage's own
 * compute stream orders its own forwards, backwards and Ws; only other streams need events. Backwards run in
 * micro-batch order. A slot's activations are free after its micro-batch's last op on the stage (BWD, or WGT under
 * zero bubble); gradient buffers come one per stage (reused by the next backward) or one per slot. */
static void fill_waits(sched_op_t *o, const sched_t *sc) {
    int s = o->op.stage, j = o->op.mb, p = sc->stages, slots = sc->slots[s], sets = sc->grad_sets[s];
    sched_kind_t last = sc->order == SCHED_ZB ? SCHED_WGT : SCHED_BWD;
    o->n_wait = 0;
#define WAIT(k, st, mb) (o->wait[o->n_wait++] = (sched_ref_t){(k), (st), (mb)})
    switch (o->op.kind) {
    case SCHED_FWD:
        if (s > 0) WAIT(SCHED_ACT, s, j);                               /* its input has arrived */
        break;
    case SCHED_BWD:
        if (s < p - 1) WAIT(SCHED_GRAD, s, j);                          /* its output gradient has arrived */
        if (s > 0 && j >= sets) WAIT(SCHED_GRAD, s - 1, j - sets);      /* the input gradient buffer was taken */
        break;
    case SCHED_WGT:                                                     /* after its B, on the same stream */
        break;
    case SCHED_ACT:
        WAIT(SCHED_FWD, s - 1, j);                                      /* the sender has produced it */
        if (j >= slots) WAIT(last, s, j - slots);                       /* the slot's last user is done with it */
        break;
    default:
        WAIT(SCHED_BWD, s + 1, j);                                      /* the sender has produced it */
        if (j >= sets) WAIT(sets == 1 ? SCHED_BWD : last, s, j - sets); /* the buffer's last reader is done */
        break;
    }
#undef WAIT
}

typedef struct {
    sched_ref_t *ops;
    int n, head;
} queue_t;

/* The stage's slots (the most micro-batches between their forward and their last op) from its compute order, and a
 * check that each forward finds its slot free. -1 on a slot reused too early (a bug). */
static int order_slots(const queue_t *c, int m, sched_order_t order, int *slots) {
    sched_kind_t last = order == SCHED_ZB ? SCHED_WGT : SCHED_BWD;
    int held = 0, most = 0;
    for (int k = 0; k < c->n; k++) {
        if (c->ops[k].kind == SCHED_FWD && ++held > most) most = held;
        if (c->ops[k].kind == last) held--;
    }
    *slots = most < m ? most : m;
    for (int k = 0, seen = -1; k < c->n; k++) {
        if (c->ops[k].kind == last) seen = c->ops[k].mb;
        else if (c->ops[k].kind == SCHED_FWD && c->ops[k].mb >= *slots && seen < c->ops[k].mb - *slots) return -1;
    }
    return 0;
}

static int build_fail(sched_t *s, queue_t *q, sched_ref_t *pool, char *done, int rc) {
    free(q); free(pool); free(done);
    if (rc) sched_free(s);
    return rc;
}

int sched_build(sched_t *s, int stages, int micro, sched_order_t order, char *err, size_t errlen) {
    memset(s, 0, sizeof *s);
    if (stages < 1 || stages > SCHED_MAX_STAGES)
        return errmsg(-1, err, errlen, "pipeline: %d stages (1..%d supported)", stages, SCHED_MAX_STAGES);
    if (micro < 1 || micro > SCHED_MAX_MICRO)
        return errmsg(-1, err, errlen, "pipeline: %d micro-batches (1..%d supported)", micro, SCHED_MAX_MICRO);
    if (order < 0 || order >= SCHED_ORDERS) return errmsg(-1, err, errlen, "pipeline: schedule %d unknown", order);
    int p = stages, m = micro;
    s->stages = p;
    s->micro = m;
    s->order = order;

    /* Queues: per stage its compute order, its incoming activations and its incoming gradients (micro-batch order). */
    int n_queues = 3 * p, total = 0;
    queue_t *q = calloc((size_t)n_queues, sizeof *q);
    sched_ref_t *pool = calloc((size_t)p * 5 * m, sizeof *pool);
    char *done = calloc((size_t)SCHED_KINDS * p * m, 1);
    s->ops = calloc((size_t)p * 5 * m, sizeof *s->ops);
    if (!q || !pool || !done || !s->ops) {
        build_fail(s, q, pool, done, -1);
        return errmsg(-1, err, errlen, "pipeline: out of host memory for the schedule");
    }
    sched_ref_t *next = pool;
    for (int st = 0; st < p; st++) {
        queue_t *c = &q[3 * st], *a = &q[3 * st + 1], *g = &q[3 * st + 2];
        c->ops = next; c->n = stage_order(p, st, m, order, c->ops); next += c->n;
        a->ops = next; a->n = st > 0 ? m : 0; next += a->n;
        g->ops = next; g->n = st < p - 1 ? m : 0; next += g->n;
        for (int j = 0; j < a->n; j++) a->ops[j] = (sched_ref_t){SCHED_ACT, st, j};
        for (int j = 0; j < g->n; j++) g->ops[j] = (sched_ref_t){SCHED_GRAD, st, j};
        total += c->n + a->n + g->n;
        if (order_slots(c, m, order, &s->slots[st]) != 0) {
            build_fail(s, q, pool, done, -1);
            return errmsg(-1, err, errlen, "pipeline: internal error: stage %d reuses a slot too early", st);
        }
        s->grad_sets[st] = order == SCHED_ZB ? s->slots[st] : 1;
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
            fill_waits(&o, s);
            int ready = 1;
            for (int w = 0; w < o.n_wait; w++) ready &= DONE(o.wait[w]);
            if (!ready) continue;
            o.slot = o.op.mb % s->slots[o.op.stage];
            o.src_slot = o.op.kind == SCHED_ACT ? o.op.mb % s->slots[o.op.stage - 1] : -1;
            o.first = (o.op.kind == SCHED_BWD || o.op.kind == SCHED_WGT) && o.op.mb == 0;   /* micro-batch order */
            s->ops[s->n_ops++] = o;
            DONE(o.op) = 1;
            qu->head++;
            progress = 1;
        }
        if (!progress) {
            build_fail(s, q, pool, done, -1);
            return errmsg(-1, err, errlen, "pipeline: internal error: schedule deadlock (%d stages, %d micro-batches, "
                          "%s)", p, m, sched_order_name(order));
        }
    }
#undef DONE
    return build_fail(s, q, pool, done, 0);
}

void sched_free(sched_t *s) {
    free(s->ops);
    s->ops = NULL;
    s->n_ops = 0;
}

/* ---- the ideal bubble: the plan's stage orders run with fixed op times and no copies ---- */

double sched_step_time(const sched_t *s, const double *f, const double *b, const double *w, const double *copy) {
    int p = s->stages, m = s->micro, zb = s->order == SCHED_ZB;
    if (!s->ops) return -1;
    double *end = malloc((size_t)SCHED_KINDS * p * m * sizeof *end);   /* when each compute op ends, < 0 not yet */
    int *next = calloc((size_t)p, sizeof *next), left = 0;
    if (!end || !next) { free(end); free(next); return -1; }
    for (size_t i = 0; i < (size_t)SCHED_KINDS * p * m; i++) end[i] = -1;
#define END(k, st, j) end[((size_t)(k) * p + (st)) * m + (j)]
    double free_at[SCHED_MAX_STAGES] = {0}, t = 0;
    for (int i = 0; i < s->n_ops; i++) left += s->ops[i].op.kind <= SCHED_WGT;
    while (left > 0) {
        int progress = 0;
        for (int st = 0; st < p; st++) {
            /* the stage's next compute op in the plan's order, if what it needs has ended (and, from another
             * stage, arrived: the boundary's copy after it) */
            while (next[st] < s->n_ops) {
                const sched_ref_t *r = &s->ops[next[st]].op;
                if (r->stage != st || r->kind > SCHED_WGT) { next[st]++; continue; }
                double ready = r->kind == SCHED_FWD ? (st > 0 ? END(SCHED_FWD, st - 1, r->mb) : 0)
                             : r->kind == SCHED_BWD ? (st < p - 1 ? END(SCHED_BWD, st + 1, r->mb)
                                                                  : END(SCHED_FWD, st, r->mb))
                                                    : END(SCHED_BWD, st, r->mb);
                if (ready < 0) break;
                if (copy && r->kind == SCHED_FWD && st > 0) ready += copy[st - 1];
                if (copy && r->kind == SCHED_BWD && st < p - 1) ready += copy[st];
                double cost = r->kind == SCHED_FWD ? f[st] : r->kind == SCHED_WGT ? w[st] : zb ? b[st] : b[st] + w[st];
                double begin = ready > free_at[st] ? ready : free_at[st];
                END(r->kind, st, r->mb) = free_at[st] = begin + cost;
                if (free_at[st] > t) t = free_at[st];
                next[st]++;
                left--;
                progress = 1;
            }
        }
        if (!progress) break;   /* cannot happen for a plan sched_build made */
    }
#undef END
    free(end);
    free(next);
    return left == 0 ? t : -1;
}

double sched_ideal_bubble(const sched_t *s, double f, double b, double w) {
    int p = s->stages, m = s->micro;
    if (p <= 1 || !s->ops) return 0;
    double fs[SCHED_MAX_STAGES], bs[SCHED_MAX_STAGES], ws[SCHED_MAX_STAGES];
    for (int i = 0; i < p; i++) fs[i] = f, bs[i] = b, ws[i] = w;
    double t = sched_step_time(s, fs, bs, ws, NULL);
    return t > 0 ? 1.0 - m * (f + b + w) / t : -1;
}
