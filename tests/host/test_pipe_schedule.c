/* test_pipe_schedule.c — the pipeline step plan: GPipe and 1F1B orders and slot counts, the ideal bubble, and a
 * race check. Three steps of the plan are replayed as CUDA would run them (streams in order, each event wait
 * bound to the latest record enqueued before it) and every read must see exactly the write it was meant to see,
 * for 1..6 stages and 1..12 micro-batches; a plan with one wait removed must fail the same check. */
#include "strategies/pipe_schedule.h"
#include "test.h"

#include <stdint.h>
#include <string.h>

static void test_slots_and_bubble(void) {
    EXPECT(sched_slots(4, 0, 8, 0) == 8 && sched_slots(4, 3, 8, 0) == 8, "gpipe keeps every micro-batch");
    int want[4] = {4, 3, 2, 1};
    for (int s = 0; s < 4; s++)
        EXPECT(sched_slots(4, s, 8, 1) == want[s], "1f1b stage %d: %d slots", s, sched_slots(4, s, 8, 1));
    EXPECT(sched_slots(4, 0, 2, 1) == 2 && sched_slots(4, 3, 2, 1) == 1, "1f1b with fewer micro-batches");
    EXPECT(fabs(sched_ideal_bubble(4, 8) - 3.0 / 11.0) < 1e-15, "bubble (p-1)/(m+p-1)");
    EXPECT(sched_ideal_bubble(1, 8) == 0, "one stage has no bubble");
    sched_t s;
    char err[256];
    EXPECT(sched_build(&s, 0, 4, 0, err, sizeof err) == -1 && strstr(err, "stages"), "0 stages: %s", err);
    EXPECT(sched_build(&s, SCHED_MAX_STAGES + 1, 4, 0, err, sizeof err) == -1, "too many stages");
    EXPECT(sched_build(&s, 2, 0, 0, err, sizeof err) == -1 && strstr(err, "micro-batches"), "0 micro: %s", err);
}

/* The order each stage computes in, and how many forwards are in flight (forwarded, not yet backwarded). */
static void test_orders(void) {
    for (int f1b = 0; f1b <= 1; f1b++)
        for (int p = 1; p <= 6; p++)
            for (int m = 1; m <= 12; m++) {
                sched_t s;
                char err[256];
                if (sched_build(&s, p, m, f1b, err, sizeof err) != 0) {
                    EXPECT(0, "build p=%d m=%d %s: %s", p, m, f1b ? "1f1b" : "gpipe", err);
                    continue;
                }
                EXPECT(s.n_ops == 2 * p * m + 2 * (p - 1) * m, "op count %d", s.n_ops);
                static char seen[SCHED_KINDS][SCHED_MAX_STAGES][16];
                memset(seen, 0, sizeof seen);
                int ok = 1, max_inflight[SCHED_MAX_STAGES] = {0}, inflight[SCHED_MAX_STAGES] = {0};
                int last_bwd[SCHED_MAX_STAGES], fwd_done_before_bwd[SCHED_MAX_STAGES];
                for (int i = 0; i < p; i++) last_bwd[i] = -1, fwd_done_before_bwd[i] = 0;
                for (int i = 0; i < s.n_ops; i++) {
                    const sched_op_t *o = &s.ops[i];
                    int st = o->op.stage;
                    ok &= !seen[o->op.kind][st][o->op.mb]++;
                    for (int w = 0; w < o->n_wait; w++) ok &= seen[o->wait[w].kind][o->wait[w].stage][o->wait[w].mb];
                    if (o->op.kind == SCHED_FWD) {
                        if (++inflight[st] > max_inflight[st]) max_inflight[st] = inflight[st];
                        if (last_bwd[st] < 0) fwd_done_before_bwd[st]++;
                    } else if (o->op.kind == SCHED_BWD) {
                        inflight[st]--;
                        ok &= o->op.mb == last_bwd[st] + 1;             /* backwards in micro-batch order */
                        ok &= o->first_bwd == (o->op.mb == 0);
                        last_bwd[st] = o->op.mb;
                    }
                }
                for (int st = 0; st < p; st++) {
                    ok &= max_inflight[st] <= s.slots[st];
                    int want_first = f1b ? (p - st < m ? p - st : m) : m;   /* forwards before the first backward */
                    ok &= fwd_done_before_bwd[st] == want_first;
                }
                EXPECT(ok, "p=%d m=%d %s: order, waits or in-flight count wrong", p, m, f1b ? "1f1b" : "gpipe");
                sched_free(&s);
            }
}

/* ---- the race check ---- */

enum { B_IN, B_V, B_LBL, B_IG, B_OG, B_W, B_G, B_TYPES };
#define MAX_NODES 4096
#define MAX_ACC 8
#define WORDS (MAX_NODES / 64)

typedef struct { int buf, write, writer; } access_t;   /* writer: the node a read must see, -1 the initial value */
typedef struct {
    int stream;
    int n_acc;
    access_t acc[MAX_ACC];
} node_t;

typedef struct {
    const sched_t *s;
    int n;
    node_t node[MAX_NODES];
    uint64_t reach[MAX_NODES][WORDS];               /* reach[n]: the nodes that happen before n */
    int last_on_stream[3 * SCHED_MAX_STAGES];
    int latest[SCHED_KINDS][SCHED_MAX_STAGES][16];  /* latest enqueued node of each op (the event's last record) */
    int id[8][SCHED_KINDS][SCHED_MAX_STAGES][16];   /* [step] node of each op */
    int upd[8][SCHED_MAX_STAGES];
} sim_t;

static int buf_id(const sim_t *x, int type, int stage, int slot) {
    return (type * SCHED_MAX_STAGES + stage) * x->s->micro + slot;
}

static void after(sim_t *x, int n, int pred) {
    if (pred < 0) return;
    for (int w = 0; w < WORDS; w++) x->reach[n][w] |= x->reach[pred][w];
    x->reach[n][pred / 64] |= 1ULL << (pred % 64);
}

static int hb(const sim_t *x, int a, int b) { return (x->reach[b][a / 64] >> (a % 64)) & 1; }

static int add_node(sim_t *x, int stream, const sched_ref_t *waits, int n_wait, const int *wait_nodes, int n_wn) {
    int n = x->n++;
    memset(&x->node[n], 0, sizeof x->node[n]);
    memset(x->reach[n], 0, sizeof x->reach[n]);
    x->node[n].stream = stream;
    after(x, n, x->last_on_stream[stream]);
    for (int w = 0; w < n_wait; w++) after(x, n, x->latest[waits[w].kind][waits[w].stage][waits[w].mb]);
    for (int w = 0; w < n_wn; w++) after(x, n, wait_nodes[w]);
    x->last_on_stream[stream] = n;
    return n;
}

static void acc(sim_t *x, int n, int buf, int write, int writer) {
    node_t *d = &x->node[n];
    d->acc[d->n_acc++] = (access_t){buf, write, writer};
}

/* Replays `steps` steps; the accesses each op makes are written down as pipeline.c makes them. */
static void simulate(sim_t *x, const sched_t *s, int steps) {
    memset(x, 0, sizeof *x);
    x->s = s;
    int p = s->stages, m = s->micro;
    memset(x->last_on_stream, -1, sizeof x->last_on_stream);
    memset(x->latest, -1, sizeof x->latest);
    memset(x->id, -1, sizeof x->id);
    for (int k = 0; k < steps; k++) {
        for (int i = 0; i < s->n_ops; i++) {
            const sched_op_t *o = &s->ops[i];
            int st = o->op.stage, j = o->op.mb, a = o->slot, kind = o->op.kind;
            int stream = 3 * st + (kind == SCHED_ACT ? 1 : kind == SCHED_GRAD ? 2 : 0);
            int n = add_node(x, stream, o->wait, o->n_wait, NULL, 0);
            x->id[k][kind][st][j] = n;
            x->latest[kind][st][j] = n;
            int prev_upd = k ? x->upd[k - 1][st] : -1;
#define ID(kd, sg, mb) x->id[k][kd][sg][mb]
            switch (kind) {
            case SCHED_FWD:
                if (st == 0) { acc(x, n, buf_id(x, B_IN, 0, a), 1, -1); acc(x, n, buf_id(x, B_LBL, 0, a), 1, -1); }
                else acc(x, n, buf_id(x, B_IN, st, a), 0, ID(SCHED_ACT, st, j));
                acc(x, n, buf_id(x, B_W, st, 0), 0, prev_upd);
                acc(x, n, buf_id(x, B_V, st, a), 1, -1);
                break;
            case SCHED_BWD:
                acc(x, n, buf_id(x, B_V, st, a), 0, ID(SCHED_FWD, st, j));
                acc(x, n, buf_id(x, B_IN, st, a), 0, st == 0 ? ID(SCHED_FWD, 0, j) : ID(SCHED_ACT, st, j));
                if (st < p - 1) acc(x, n, buf_id(x, B_OG, st, 0), 0, ID(SCHED_GRAD, st, j));
                else acc(x, n, buf_id(x, B_LBL, st, a), 0, p == 1 ? ID(SCHED_FWD, 0, j) : ID(SCHED_ACT, st, j));
                acc(x, n, buf_id(x, B_W, st, 0), 0, prev_upd);
                if (j > 0) acc(x, n, buf_id(x, B_G, st, 0), 0, ID(SCHED_BWD, st, j - 1));
                acc(x, n, buf_id(x, B_G, st, 0), 1, -1);
                if (st > 0) acc(x, n, buf_id(x, B_IG, st, 0), 1, -1);
                break;
            case SCHED_ACT:
                acc(x, n, buf_id(x, B_V, st - 1, o->src_slot), 0, ID(SCHED_FWD, st - 1, j));
                acc(x, n, buf_id(x, B_IN, st, a), 1, -1);
                if (st == p - 1) {   /* the labels travel from stage 0 with the last stage's input */
                    acc(x, n, buf_id(x, B_LBL, 0, j % s->slots[0]), 0, ID(SCHED_FWD, 0, j));
                    acc(x, n, buf_id(x, B_LBL, st, a), 1, -1);
                }
                break;
            default:
                acc(x, n, buf_id(x, B_IG, st + 1, 0), 0, ID(SCHED_BWD, st + 1, j));
                acc(x, n, buf_id(x, B_OG, st, 0), 1, -1);
                break;
            }
        }
        /* The update of every stage, then stage 0 waits for all of them: the step's end. */
        int upd[SCHED_MAX_STAGES];
        for (int st = 0; st < p; st++) {
            int n = add_node(x, 3 * st, NULL, 0, NULL, 0);
            acc(x, n, buf_id(x, B_G, st, 0), 0, ID(SCHED_BWD, st, m - 1));
            acc(x, n, buf_id(x, B_W, st, 0), 0, k ? x->upd[k - 1][st] : -1);
            acc(x, n, buf_id(x, B_W, st, 0), 1, -1);
            x->upd[k][st] = upd[st] = n;
        }
        add_node(x, 0, NULL, 0, upd + 1, p - 1);
#undef ID
    }
}

/* Every read sees its intended write: that write happens before it, and every other write of the buffer happens
 * before that write or after the read. Writes of one buffer are ordered. Returns the number of violations. */
typedef struct { int node, idx; access_t a; } flat_t;

static int cmp_buf(const void *p, const void *q) {
    const flat_t *a = p, *b = q;
    return a->a.buf != b->a.buf ? (a->a.buf > b->a.buf) - (a->a.buf < b->a.buf) : (a->node > b->node) - (a->node < b->node);
}

static flat_t flat[MAX_NODES * MAX_ACC];

static int races(const sim_t *x, char *first, size_t len) {
    int nf = 0, bad = 0;
    for (int n = 0; n < x->n; n++)
        for (int i = 0; i < x->node[n].n_acc; i++) flat[nf++] = (flat_t){n, i, x->node[n].acc[i]};
    qsort(flat, (size_t)nf, sizeof flat[0], cmp_buf);
    for (int lo = 0, hi; lo < nf; lo = hi) {
        for (hi = lo; hi < nf && flat[hi].a.buf == flat[lo].a.buf; hi++) {}
        for (int r = lo; r < hi; r++)
            for (int w = lo; w < hi; w++) {
                const access_t *ra = &flat[r].a, *wa = &flat[w].a;
                int rn = flat[r].node, wn = flat[w].node;
                if (!wa->write || r == w) continue;
                int ok;
                if (ra->write) ok = wn == rn || hb(x, wn, rn) || hb(x, rn, wn);
                else if (wn == ra->writer) ok = hb(x, wn, rn);
                else ok = wn == rn || (ra->writer >= 0 && hb(x, wn, ra->writer)) || hb(x, rn, wn);
                if (!ok && !bad++) snprintf(first, len, "buffer %d: node %d (%s) vs write at node %d", ra->buf, rn,
                                            ra->write ? "write" : "read", wn);
            }
    }
    return bad;
}

static sim_t sim;   /* large: static storage of the test, not shared state */

static void test_races(void) {
    int checked = 0;
    for (int f1b = 0; f1b <= 1; f1b++)
        for (int p = 1; p <= 6; p++)
            for (int m = 1; m <= 12; m++) {
                sched_t s;
                char err[256], why[160] = "";
                if (sched_build(&s, p, m, f1b, err, sizeof err) != 0) continue;
                simulate(&sim, &s, 3);
                int n = races(&sim, why, sizeof why);
                EXPECT(n == 0, "p=%d m=%d %s: %d races, first: %s", p, m, f1b ? "1f1b" : "gpipe", n, why);
                checked++;
                sched_free(&s);
            }
    EXPECT(checked == 2 * 6 * 12, "plans checked: %d", checked);
}

/* The check must catch a missing wait: drop each kind of wait in turn where it matters. */
static void test_negative_control(void) {
    struct { int f1b, p, m; sched_kind_t kind; int wait; const char *what; } cases[] = {
        {1, 4, 8, SCHED_ACT, 1, "act: slot reuse"},
        {0, 3, 4, SCHED_ACT, 0, "act: sender's forward"},
        {0, 3, 4, SCHED_GRAD, 0, "grad: sender's backward"},
        {0, 3, 4, SCHED_GRAD, 1, "grad: output gradient still in use"},
        {0, 3, 4, SCHED_BWD, 1, "bwd: input gradient not yet taken"},
        {0, 3, 4, SCHED_FWD, 0, "fwd: input not arrived"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        sched_t s;
        char err[256], why[160];
        if (sched_build(&s, cases[c].p, cases[c].m, cases[c].f1b, err, sizeof err) != 0) { EXPECT(0, "%s", err); continue; }
        for (int i = 0; i < s.n_ops; i++) {
            sched_op_t *o = &s.ops[i];
            if (o->op.kind != cases[c].kind || o->n_wait <= cases[c].wait) continue;
            o->wait[cases[c].wait] = o->wait[o->n_wait - 1];
            o->n_wait--;
        }
        simulate(&sim, &s, 3);
        EXPECT(races(&sim, why, sizeof why) > 0, "without the wait \"%s\" the check finds no race", cases[c].what);
        sched_free(&s);
    }
}

int main(void) {
    test_slots_and_bubble();
    test_orders();
    test_races();
    test_negative_control();
    return test_summary();
}
