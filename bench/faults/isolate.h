/* isolate.h — one configuration per child process, so a fault that leaves a CUDA context unusable costs that
 * configuration and not the sweep; and SIGINT/SIGTERM ending a run at a step boundary. Host-only (no CUDA): the
 * parent never touches the GPU, the child does all of it. Protocol and design: doc/faults.md. */
#pragma once
#include <stddef.h>

/* What the parent learnt of one child: its lines and how it ended. */
typedef struct {
    int setup_done;             /* the child said "setup" (or "setup SECONDS"): its setup succeeded */
    int epochs;                 /* the last "epoch N" it sent: rows of epochs 1..N are written */
    int outcome;                /* its "outcome N" (a caller's code), -1 if it sent none */
    char reason[512];           /* its last "reason ..." line (a CHECK_* failure), "" if none */
    double mem_free_mb, mem_total_mb;   /* its last "mem FREE TOTAL" (an allocation that failed), -1 if none */
    int exit_code;              /* exit status, -1 if it was killed by a signal */
    int signal;                 /* the signal that killed it, 0 if it exited */
    int timed_out;              /* 1: no line for timeout_s, so the parent killed it */
    int interrupted;            /* SIGINT/SIGTERM reached the parent during the run: that signal, else 0 */
    int killed;                 /* 1: a second signal made the parent kill it at once */
    int unkillable;             /* 1: it did not end ISOLATE_KILL_GRACE_S after SIGKILL (stuck in a driver call, say):
                                 * the parent gave up waiting for it; it may still hold its GPU */
    int pid;                    /* its pid, where unkillable */
    double grace_s;             /* where unkillable: how long after its SIGKILL the parent waited */
} isolate_result_t;

/* How long the parent waits for a child to die after SIGKILL: one stuck in the kernel (a GPU driver call) does not. */
#define ISOLATE_KILL_GRACE_S 30

/* Every line the child sends (without its newline), for the caller's own keys; may be NULL. */
typedef void (*isolate_line_fn)(const char *line, void *ctx);

/* Forks; the child runs child(arg) with SCALING_REPORT_FD naming its end of a pipe (engine/check.h's check_report
 * writes there) and exits with its return value. The parent reads the child's lines (on_line gets each) until the
 * child ends (its pipe closes, or it is reaped while a process it started still holds the pipe), kills it (SIGKILL)
 * when no line came for timeout_s seconds (<= 0: no deadline), gives up on it ISOLATE_KILL_GRACE_S after a SIGKILL it
 * did not die of (r->unkillable), and fills r.
 * 0, or -1 with a message in err when the pipe or the fork failed (nothing ran). */
int isolate_run(int (*child)(void *arg), void *arg, double timeout_s, isolate_line_fn on_line, void *ctx,
                isolate_result_t *r, char *err, size_t errlen);
/* The row's status for a child that died without its outcome (study/schema.h's study_status_t): interrupted (a signal
 * reached the parent: whatever came after, a signal is no verdict on the configuration), timeout (killed for
 * silence), oom (its reason says out of memory), else failed. */
int isolate_status(const isolate_result_t *r);
/* The row's reason for it: its CHECK line, "killed by SIGSEGV", "no progress for 300 s", "SIGTERM twice". */
void isolate_describe(const isolate_result_t *r, double timeout_s, char *buf, size_t len);
/* 1 when the reason says the device ran out of memory (then the row is oom, not failed). */
int isolate_is_oom(const isolate_result_t *r);

/* SIGINT and SIGTERM. Where a checkpoint is ahead (isolate_defer(1): a run's steps, a sweep between runs) the first
 * is recorded (isolate_signal) and passed on to a running child, and a second ends a running child at once (SIGKILL)
 * or, in a process without one, the process itself (exit 128 + signal); a child only records. Where none is (setup,
 * data loading, the device probe, the benchmark, the report: a read of a hung file system may never return), the
 * first ends the process at once, exit 128 + signal, its child killed, one line on stderr saying so. */
void isolate_signals_install(void);
/* on 1: a checkpoint is ahead, the process stops there on a signal; 0: a signal ends it at once. A new process starts
 * at 0, a run's child too. */
void isolate_defer(int on);
/* A child started otherwise (posix_spawn: the report), for the signal handler to take along: pid, then 0 once it is
 * reaped. */
void isolate_track_child(int pid);
/* Tests only: the signal the deadline sends a silent child (SIGKILL; 0 sends none) and the grace after it
 * (ISOLATE_KILL_GRACE_S): a child that survives its kill, as one stuck in the driver survives SIGKILL. */
void isolate_test_kill(int sig, double grace_s);
/* The first SIGINT/SIGTERM received, or 0. A run checks it at each step boundary. */
int isolate_signal(void);
/* A process without a parent watching it (rank 0 under mpirun/srun, where the launcher answers a dead rank with
 * SIGTERM to the others and SIGKILL soon after): the first SIGINT/SIGTERM also writes `line` (len bytes, a whole CSV
 * row prepared in advance) to fd at once, from the handler. NULL line: nothing. The line must outlive the arming. */
void isolate_last_words(int fd, const char *line, size_t len);
/* 1 once the handler wrote the last words armed last (arming anew resets it). */
int isolate_last_words_spoken(void);
/* The exit status for a run ended by signal sig: 128 + sig (130 for SIGINT, 143 for SIGTERM). */
int isolate_exit_status(int sig);
