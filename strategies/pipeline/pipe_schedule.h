/* pipe_schedule.h — one pipeline training step as a host-side plan: the order in which each stage runs its
 * micro-batches (GPipe, 1F1B or zero bubble), the activation slot each uses, the copies between stages, the events
 * every op waits on, and one order for the single host thread to enqueue them in. Host-only: CI checks it for races.
 *
 * Streams: every stage has a compute stream (FWD, BWD, WGT, the update), an activation-copy stream (ACT: the
 * previous stage's output of a micro-batch into this stage's input slot) and a gradient-copy stream (GRAD: the next
 * stage's input gradient into this stage's output gradient). Every op records an event when done; another stream
 * waits on it. cudaStreamWaitEvent binds to the latest record, so the host order below enqueues every op after
 * the ops it waits on. */
#pragma once
#include <stddef.h>

#define SCHED_MAX_STAGES 16
#define SCHED_MAX_MICRO 1024

/* BWD: a micro-batch's whole backward, or under the zero-bubble schedule its data part (the input gradients, on
 * the critical path: B); WGT: the zero-bubble schedule's weight part (W), deferred into the bubbles. */
typedef enum {
    SCHED_FWD = 0, SCHED_BWD = 1, SCHED_WGT = 2, SCHED_ACT = 3, SCHED_GRAD = 4, SCHED_KINDS = 5
} sched_kind_t;

/* The orders: every forward then every backward (GPipe); 1F1B (PipeDream-flush); ZB-H1 of Qi et al., "Zero Bubble
 * Pipeline Parallelism" (2023): 1F1B's order with each backward split into B and W, stage s deferring its first s
 * W into the end of the step. SCHED_NAMES gives their --schedule names, in this order. */
typedef enum { SCHED_GPIPE = 0, SCHED_1F1B = 1, SCHED_ZB = 2, SCHED_ORDERS = 3 } sched_order_t;
#define SCHED_NAMES "gpipe", "1f1b", "zb"

/* An op, and the event recorded when it is done. */
typedef struct {
    sched_kind_t kind;
    int stage;              /* the stage whose stream runs it (a copy runs on the receiver's) */
    int mb;                 /* micro-batch */
} sched_ref_t;

typedef struct {
    sched_ref_t op;
    int slot;               /* the activation slot of op.stage that op.mb uses */
    int src_slot;           /* ACT: the sending stage's slot of op.mb */
    int first;              /* BWD, WGT: the stage's first of its kind in the step (weight gradients overwritten, not
                             * summed) */
    int n_wait;
    sched_ref_t wait[2];    /* ops on other streams that must be done first */
} sched_op_t;

typedef struct {
    int stages, micro;
    sched_order_t order;
    int slots[SCHED_MAX_STAGES];    /* activation slots per stage: the micro-batches it holds at once (sched_slots) */
    int grad_sets[SCHED_MAX_STAGES];/* boundary and deferred gradient buffers: 1, the stage's one set (GPipe, 1F1B),
                                     * or one per slot (zero bubble: a slot's W reads them after later B) */
    int n_ops;
    sched_op_t *ops;                /* the host enqueue order */
} sched_t;

/* Activation slots stage s needs, the micro-batches it holds from their forward to their last backward op: GPipe
 * every one; 1F1B min(micro, stages - s); zero bubble min(micro, stages) on every stage (stage s holds s W back),
 * which is 1F1B's peak, stage 0's. */
int sched_slots(int stages, int stage, int micro, sched_order_t order);
/* Builds the plan of one step. Returns 0, or -1 with a message in err (bad counts; a deadlock, which is a bug). */
int sched_build(sched_t *s, int stages, int micro, sched_order_t order, char *err, size_t errlen);
void sched_free(sched_t *s);
/* The bubble of plan s with every stage taking f, b and w for a micro-batch's forward, data gradient and weight
 * gradient (GPipe and 1F1B run b + w as one backward) and free communication: 1 - m (f + b + w) / T, T the plan's
 * critical path. GPipe and 1F1B: (p - 1) / (m + p - 1) whatever f, b, w. Zero bubble: (p - 1)(f + b - w) /
 * (m (f + b + w) + (p - 1)(f + b - w)) where w <= min(f, b) and m >= p (Qi et al.'s ZB-H1), more otherwise. */
double sched_ideal_bubble(const sched_t *s, double f, double b, double w);
/* The length of plan s's step where stage i takes f[i], b[i] and w[i] for a micro-batch's forward, data gradient and
 * weight gradient (GPipe and 1F1B run b + w as one backward) and a micro-batch's activations or their gradients take
 * copy[k] to cross from stage k to k + 1 or back (copy NULL: free), each stage running its ops in the plan's order as
 * soon as what they need has arrived: the step as the schedule itself would run it, uneven stages and copies
 * included. -1 on a failure to allocate. */
double sched_step_time(const sched_t *s, const double *f, const double *b, const double *w, const double *copy);
/* "fwd s1 mb3", "act s0->s1 mb3", ... for messages and tests. */
void sched_ref_name(sched_ref_t r, char *buf, size_t len);
/* The order's --schedule name. */
const char *sched_order_name(sched_order_t order);
