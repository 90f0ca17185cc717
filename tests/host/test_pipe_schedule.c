/* test_pipe_schedule.c — the pipeline step plan: GPipe, 1F1B and zero-bubble orders and slot counts, the ideal
 * bubble, and a race check. Three steps of the plan are replayed as CUDA would run them (streams in order, each
 * event wait bound to the latest record enqueued before it) and every read must see exactly the write it was meant
 * to see, for 1..6 stages and 1..12 micro-batches; a plan with one wait removed must fail the same check. The zero-
 * bubble order keeps every op after what it needs, its activations within 1F1B's peak, and its W fill the bubbles:
 * run with fixed op times its step is Qi et al.'s, shorter than 1F1B's by (p - 1) W. The step with uneven stages and
 * copies (sched_step_time): exact on a one-micro-batch chain, never under the busiest stage's work or one
 * micro-batch's way there and back, never shortened by a slower copy, equal stages giving the ideal bubble's step. */
#include "strategies/pipeline/pipe_schedule.h"
#include "test.h"

#include <stdint.h>
#include <string.h>

static const sched_order_t orders[SCHED_ORDERS] = {SCHED_GPIPE, SCHED_1F1B, SCHED_ZB};

static void test_slots_and_errors(void) {
    EXPECT(sched_slots(4, 0, 8, SCHED_GPIPE) == 8 && sched_slots(4, 3, 8, SCHED_GPIPE) == 8,
           "gpipe keeps every micro-batch");
    int want[4] = {4, 3, 2, 1};
    for (int s = 0; s < 4; s++) {
        EXPECT(sched_slots(4, s, 8, SCHED_1F1B) == want[s], "1f1b stage %d: %d slots", s,
               sched_slots(4, s, 8, SCHED_1F1B));
        EXPECT(sched_slots(4, s, 8, SCHED_ZB) == 4, "zb stage %d: %d slots", s, sched_slots(4, s, 8, SCHED_ZB));
    }
    EXPECT(sched_slots(4, 0, 2, SCHED_1F1B) == 2 && sched_slots(4, 3, 2, SCHED_1F1B) == 1,
           "1f1b with fewer micro-batches");
    EXPECT(strcmp(sched_order_name(SCHED_ZB), "zb") == 0 && strcmp(sched_order_name(SCHED_GPIPE), "gpipe") == 0,
           "names");
    sched_t s;
    char err[256];
    EXPECT(sched_build(&s, 0, 4, SCHED_GPIPE, err, sizeof err) == -1 && strstr(err, "stages"), "0 stages: %s", err);
    EXPECT(sched_build(&s, SCHED_MAX_STAGES + 1, 4, SCHED_GPIPE, err, sizeof err) == -1, "too many stages");
    EXPECT(sched_build(&s, 2, 0, SCHED_ZB, err, sizeof err) == -1 && strstr(err, "micro-batches"), "0 micro: %s", err);
}

/* The order each stage computes in: every op once and after what it waits on, backwards and Ws in micro-batch
 * order, W after its B; how many micro-batches a stage holds (forwarded, last op not yet run) against its slots;
 * zero bubble: 1F1B's forwards before the first backward, at most s + 1 W pending on stage s, and no stage holding
 * more than 1F1B's busiest stage. */
static void test_orders(void) {
    for (int oi = 0; oi < SCHED_ORDERS; oi++)
        for (int p = 1; p <= 6; p++)
            for (int m = 1; m <= 12; m++) {
                sched_order_t order = orders[oi];
                int zb = order == SCHED_ZB;
                sched_t s;
                char err[256];
                if (sched_build(&s, p, m, order, err, sizeof err) != 0) {
                    EXPECT(0, "build p=%d m=%d %s: %s", p, m, sched_order_name(order), err);
                    continue;
                }
                EXPECT(s.n_ops == (zb ? 3 : 2) * p * m + 2 * (p - 1) * m, "op count %d", s.n_ops);
                static char seen[SCHED_KINDS][SCHED_MAX_STAGES][16];
                memset(seen, 0, sizeof seen);
                int ok = 1, most[SCHED_MAX_STAGES] = {0}, held[SCHED_MAX_STAGES] = {0};
                int pending_most[SCHED_MAX_STAGES] = {0};
                int last_b[SCHED_MAX_STAGES], last_w[SCHED_MAX_STAGES], fwd_before_bwd[SCHED_MAX_STAGES];
                for (int i = 0; i < p; i++) last_b[i] = last_w[i] = -1, fwd_before_bwd[i] = 0;
                for (int i = 0; i < s.n_ops; i++) {
                    const sched_op_t *o = &s.ops[i];
                    int st = o->op.stage, j = o->op.mb;
                    ok &= !seen[o->op.kind][st][j]++;
                    for (int w = 0; w < o->n_wait; w++) ok &= seen[o->wait[w].kind][o->wait[w].stage][o->wait[w].mb];
                    if (o->op.kind == SCHED_FWD) {
                        if (++held[st] > most[st]) most[st] = held[st];
                        if (last_b[st] < 0) fwd_before_bwd[st]++;
                    } else if (o->op.kind == SCHED_BWD) {
                        held[st] -= !zb;
                        ok &= j == last_b[st] + 1 && o->first == (j == 0);
                        last_b[st] = j;
                        if (last_b[st] - last_w[st] > pending_most[st]) pending_most[st] = last_b[st] - last_w[st];
                    } else if (o->op.kind == SCHED_WGT) {
                        held[st]--;
                        ok &= zb && j == last_w[st] + 1 && j <= last_b[st] && o->first == (j == 0);
                        last_w[st] = j;
                    }
                }
                int peak_1f1b = p < m ? p : m;
                for (int st = 0; st < p; st++) {
                    ok &= most[st] <= s.slots[st] && s.slots[st] == sched_slots(p, st, m, order);
                    ok &= s.grad_sets[st] == (zb ? s.slots[st] : 1);
                    int want_first = order == SCHED_GPIPE ? m : (p - st < m ? p - st : m);
                    ok &= fwd_before_bwd[st] == want_first;
                    ok &= !zb || (s.slots[st] <= peak_1f1b && pending_most[st] <= (st + 1 < m ? st + 1 : m) &&
                                  last_w[st] == m - 1);
                }
                EXPECT(ok, "p=%d m=%d %s: order, waits, slots or in-flight count wrong", p, m, sched_order_name(order));
                sched_free(&s);
            }
}

/* The ideal bubble: the classic (p - 1) / (m + p - 1) for GPipe and 1F1B whatever the op times; zero bubble at Qi
 * et al.'s (p - 1)(F + B - W) / (m (F + B + W) + (p - 1)(F + B - W)) where W <= min(F, B) and m >= p, always at most
 * 1F1B's, and below it wherever there is a bubble and a W to fill it. */
static void test_ideal_bubble(void) {
    static const double times[][3] = {{1, 1, 1}, {1, 1.3, 0.7}, {1, 2, 0.5}, {1, 0.8, 1.2}, {0.5, 1, 1}, {1, 1, 0.1}};
    int bad = 0, n = 0;
    for (int p = 1; p <= 6; p++)
        for (int m = 1; m <= 12; m++)
            for (size_t k = 0; k < sizeof times / sizeof times[0]; k++) {
                double f = times[k][0], b = times[k][1], w = times[k][2];
                sched_t g, o, z;
                char err[256];
                if (sched_build(&g, p, m, SCHED_GPIPE, err, sizeof err) ||
                    sched_build(&o, p, m, SCHED_1F1B, err, sizeof err) ||
                    sched_build(&z, p, m, SCHED_ZB, err, sizeof err)) { bad++; continue; }
                double classic = (double)(p - 1) / (m + p - 1);
                double bg = sched_ideal_bubble(&g, f, b, w), bo = sched_ideal_bubble(&o, f, b, w);
                double bz = sched_ideal_bubble(&z, f, b, w);
                int ok = fabs(bg - classic) < 1e-12 && fabs(bo - classic) < 1e-12 && bz <= bo + 1e-12;
                if (p > 1) ok &= bz < bo - 1e-9;
                if (w <= f && w <= b && m >= p) {
                    double x = (p - 1) * (f + b - w);
                    ok &= fabs(bz - x / (m * (f + b + w) + x)) < 1e-12;
                }
                if (!ok) {
                    bad++;
                    printf("p=%d m=%d F=%g B=%g W=%g: gpipe %.6f 1f1b %.6f zb %.6f (classic %.6f)\n", p, m, f, b, w,
                           bg, bo, bz, classic);
                }
                n++;
                sched_free(&g); sched_free(&o); sched_free(&z);
            }
    EXPECT(bad == 0 && n == 6 * 12 * 6, "%d of %d ideal bubbles wrong", bad, n);
    sched_t s;
    char err[256];
    EXPECT(sched_build(&s, 4, 8, SCHED_ZB, err, sizeof err) == 0, "%s", err);
    EXPECT(fabs(sched_ideal_bubble(&s, 1, 1, 1) - 3.0 / 27.0) < 1e-12, "zb 4 stages, 8 micro-batches, equal thirds: "
           "3 / 27, got %.6f", sched_ideal_bubble(&s, 1, 1, 1));
    sched_free(&s);
}

/* ---- the step with uneven stages and copies (sched_step_time) ---- */

static void test_step_time(void) {
    sched_t s;
    char err[256];
    /* GPipe, 2 stages, 1 micro-batch: a chain, forward there and backward back, a copy each way */
    EXPECT(sched_build(&s, 2, 1, SCHED_GPIPE, err, sizeof err) == 0, "%s", err);
    double f[2] = {1, 2}, b[2] = {3, 4}, w[2] = {0.5, 0.25}, c[1] = {0.1};
    double t = sched_step_time(&s, f, b, w, c), want = 1 + 0.1 + 2 + 4.25 + 0.1 + 3.5;
    EXPECT(fabs(t - want) < 1e-12, "gpipe 2 x 1: step %.6f, want %.6f", t, want);
    EXPECT(fabs(sched_step_time(&s, f, b, w, NULL) - (want - 0.2)) < 1e-12, "gpipe 2 x 1 without copies");
    sched_free(&s);
    /* every order, 4 stages, 8 micro-batches, uneven stages: never shorter than the busiest stage's work or than
     * one micro-batch's way there and back; a slower copy never shortens it, and equal stages without copies give
     * sched_ideal_bubble's step */
    for (int o = 0; o < SCHED_ORDERS; o++) {
        EXPECT(sched_build(&s, 4, 8, (sched_order_t)o, err, sizeof err) == 0, "%s", err);
        double F[4] = {1.2, 1.6, 1.1, 1.6}, B[4] = {1.1, 1.5, 1.0, 1.4}, W[4] = {0.9, 1.2, 0.8, 1.3};
        double C[3] = {0.17, 0.09, 0.04}, busiest = 0, chain = 0;
        for (int i = 0; i < 4; i++) {
            if (8 * (F[i] + B[i] + W[i]) > busiest) busiest = 8 * (F[i] + B[i] + W[i]);
            chain += F[i] + B[i] + (o == SCHED_ZB ? 0 : W[i]);
        }
        chain += 2 * (C[0] + C[1] + C[2]);
        double t0 = sched_step_time(&s, F, B, W, C);
        EXPECT(t0 >= busiest - 1e-9 && t0 >= chain - 1e-9, "%s: step %.4f under the busiest stage %.4f or the chain "
               "%.4f", sched_order_name((sched_order_t)o), t0, busiest, chain);
        for (int k = 0; k < 3; k++) {
            double C2[3] = {C[0], C[1], C[2]};
            C2[k] += 0.5;
            double t1 = sched_step_time(&s, F, B, W, C2);
            EXPECT(t1 >= t0 - 1e-12, "%s: a slower copy at boundary %d shortened the step (%.4f < %.4f)",
                   sched_order_name((sched_order_t)o), k, t1, t0);
        }
        double e[4] = {1, 1, 1, 1};
        double te = sched_step_time(&s, e, e, e, NULL), bub = sched_ideal_bubble(&s, 1, 1, 1);
        EXPECT(fabs((1.0 - 8 * 3 / te) - bub) < 1e-12, "%s: equal stages %.6f against the ideal bubble %.6f",
               sched_order_name((sched_order_t)o), 1.0 - 24 / te, bub);
        sched_free(&s);
    }
}

/* ---- the race check ---- */

/* Buffers: a slot's input and activations, labels, a gradient set's input and output gradients and the gradients
 * a deferred W reads (zero bubble), the parameters, the gradients backwards (B) and Ws accumulate. */
enum { B_IN, B_V, B_LBL, B_IG, B_OG, B_D, B_W, B_G, B_GW, B_TYPES };
#define MAX_NODES 4096
#define MAX_ACC 10
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

/* Replays `steps` steps; the accesses each op makes are written down as pipe_run.c makes them. */
static void simulate(sim_t *x, const sched_t *s, int steps) {
    memset(x, 0, sizeof *x);
    x->s = s;
    int p = s->stages, m = s->micro, zb = s->order == SCHED_ZB;
    memset(x->last_on_stream, -1, sizeof x->last_on_stream);
    memset(x->latest, -1, sizeof x->latest);
    memset(x->id, -1, sizeof x->id);
    for (int k = 0; k < steps; k++) {
        for (int i = 0; i < s->n_ops; i++) {
            const sched_op_t *o = &s->ops[i];
            int st = o->op.stage, j = o->op.mb, a = o->slot, kind = o->op.kind;
            int gs = j % s->grad_sets[st];
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
                if (st < p - 1) acc(x, n, buf_id(x, B_OG, st, gs), 0, ID(SCHED_GRAD, st, j));
                else acc(x, n, buf_id(x, B_LBL, st, a), 0, p == 1 ? ID(SCHED_FWD, 0, j) : ID(SCHED_ACT, st, j));
                acc(x, n, buf_id(x, B_W, st, 0), 0, prev_upd);
                if (j > 0) acc(x, n, buf_id(x, B_G, st, 0), 0, ID(SCHED_BWD, st, j - 1));
                acc(x, n, buf_id(x, B_G, st, 0), 1, -1);
                if (st > 0) acc(x, n, buf_id(x, B_IG, st, gs), 1, -1);
                if (zb) acc(x, n, buf_id(x, B_D, st, gs), 1, -1);
                break;
            case SCHED_WGT:     /* the layers' inputs and output gradients, the boundary's among them */
                acc(x, n, buf_id(x, B_V, st, a), 0, ID(SCHED_FWD, st, j));
                acc(x, n, buf_id(x, B_IN, st, a), 0, st == 0 ? ID(SCHED_FWD, 0, j) : ID(SCHED_ACT, st, j));
                acc(x, n, buf_id(x, B_D, st, gs), 0, ID(SCHED_BWD, st, j));
                if (st < p - 1) acc(x, n, buf_id(x, B_OG, st, gs), 0, ID(SCHED_GRAD, st, j));
                acc(x, n, buf_id(x, B_W, st, 0), 0, prev_upd);
                if (j > 0) acc(x, n, buf_id(x, B_GW, st, 0), 0, ID(SCHED_WGT, st, j - 1));
                acc(x, n, buf_id(x, B_GW, st, 0), 1, -1);
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
                acc(x, n, buf_id(x, B_IG, st + 1, j % s->grad_sets[st + 1]), 0, ID(SCHED_BWD, st + 1, j));
                acc(x, n, buf_id(x, B_OG, st, gs), 1, -1);
                break;
            }
        }
        /* The update of every stage, then stage 0 waits for all of them: the step's end. */
        int upd[SCHED_MAX_STAGES];
        for (int st = 0; st < p; st++) {
            int n = add_node(x, 3 * st, NULL, 0, NULL, 0);
            acc(x, n, buf_id(x, B_G, st, 0), 0, ID(SCHED_BWD, st, m - 1));
            if (zb) acc(x, n, buf_id(x, B_GW, st, 0), 0, ID(SCHED_WGT, st, m - 1));
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
    for (int oi = 0; oi < SCHED_ORDERS; oi++)
        for (int p = 1; p <= 6; p++)
            for (int m = 1; m <= 12; m++) {
                sched_t s;
                char err[256], why[160] = "";
                if (sched_build(&s, p, m, orders[oi], err, sizeof err) != 0) continue;
                simulate(&sim, &s, 3);
                int n = races(&sim, why, sizeof why);
                EXPECT(n == 0, "p=%d m=%d %s: %d races, first: %s", p, m, sched_order_name(orders[oi]), n, why);
                checked++;
                sched_free(&s);
            }
    EXPECT(checked == SCHED_ORDERS * 6 * 12, "plans checked: %d", checked);
}

/* The check must catch a missing wait: drop each kind of wait in turn where it matters. (Under zero bubble a
 * gradient set's reuse waits are also implied by its slot's: one set per slot, and a slot's next forward waits for
 * its W.) */
static void test_negative_control(void) {
    struct { sched_order_t order; int p, m; sched_kind_t kind; int wait; const char *what; } cases[] = {
        {SCHED_1F1B, 4, 8, SCHED_ACT, 1, "act: slot reuse"},
        {SCHED_GPIPE, 3, 4, SCHED_ACT, 0, "act: sender's forward"},
        {SCHED_GPIPE, 3, 4, SCHED_GRAD, 0, "grad: sender's backward"},
        {SCHED_GPIPE, 3, 4, SCHED_GRAD, 1, "grad: output gradient still in use"},
        {SCHED_GPIPE, 3, 4, SCHED_BWD, 1, "bwd: input gradient not yet taken"},
        {SCHED_GPIPE, 3, 4, SCHED_FWD, 0, "fwd: input not arrived"},
        {SCHED_ZB, 4, 8, SCHED_ACT, 1, "zb act: slot reuse before its W"},
        {SCHED_ZB, 3, 8, SCHED_GRAD, 0, "zb grad: sender's B"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        sched_t s;
        char err[256], why[160];
        if (sched_build(&s, cases[c].p, cases[c].m, cases[c].order, err, sizeof err) != 0) {
            EXPECT(0, "%s", err);
            continue;
        }
        int dropped = 0;
        for (int i = 0; i < s.n_ops; i++) {
            sched_op_t *o = &s.ops[i];
            if (o->op.kind != cases[c].kind || o->n_wait <= cases[c].wait) continue;
            o->wait[cases[c].wait] = o->wait[o->n_wait - 1];
            o->n_wait--;
            dropped++;
        }
        simulate(&sim, &s, 3);
        EXPECT(dropped > 0 && races(&sim, why, sizeof why) > 0, "without the wait \"%s\" the check finds no race",
               cases[c].what);
        sched_free(&s);
    }
}

int main(void) {
    test_slots_and_errors();
    test_orders();
    test_ideal_bubble();
    test_step_time();
    test_races();
    test_negative_control();
    return test_summary();
}
