/* pipe_schedule.h — one pipeline training step as a host-side plan: the order in which each stage runs its
 * micro-batches (GPipe or 1F1B), the activation slot each uses, the copies between stages, the events every op
 * waits on, and one order for the single host thread to enqueue them in. Host-only: CI checks it for races.
 *
 * Streams: every stage has a compute stream (FWD, BWD, the update), an activation-copy stream (ACT: the previous
 * stage's output of a micro-batch into this stage's input slot) and a gradient-copy stream (GRAD: the next
 * stage's input gradient into this stage's output gradient). Every op records an event when done; another stream
 * waits on it. cudaStreamWaitEvent binds to the latest record, so the host order below enqueues every op after
 * the ops it waits on. */
#pragma once
#include <stddef.h>

#define SCHED_MAX_STAGES 16
#define SCHED_MAX_MICRO 1024

typedef enum { SCHED_FWD = 0, SCHED_BWD = 1, SCHED_ACT = 2, SCHED_GRAD = 3, SCHED_KINDS = 4 } sched_kind_t;

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
    int first_bwd;          /* BWD: the stage's first backward of the step (weight gradients overwritten, not summed) */
    int n_wait;
    sched_ref_t wait[2];    /* ops on other streams that must be done first */
} sched_op_t;

typedef struct {
    int stages, micro, one_f_one_b;
    int slots[SCHED_MAX_STAGES];    /* activation slots per stage: micro (GPipe), min(micro, stages - s) (1F1B) */
    int n_ops;
    sched_op_t *ops;                /* the host enqueue order */
} sched_t;

/* Activation slots stage s needs: GPipe keeps every micro-batch's activations until the backward pass; 1F1B
 * starts a micro-batch's backward before the stage's (stages - s)-th next forward, so it keeps at most that many. */
int sched_slots(int stages, int stage, int micro, int one_f_one_b);
/* Builds the plan of one step. Returns 0, or -1 with a message in err (bad counts; a deadlock, which is a bug). */
int sched_build(sched_t *s, int stages, int micro, int one_f_one_b, char *err, size_t errlen);
void sched_free(sched_t *s);
/* The bubble of p balanced stages over m micro-batches with free communication: (p - 1) / (m + p - 1). */
double sched_ideal_bubble(int stages, int micro);
/* "fwd s1 mb3", "act s0->s1 mb3", ... for messages and tests. */
void sched_ref_name(sched_ref_t r, char *buf, size_t len);
