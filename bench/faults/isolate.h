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
} isolate_result_t;

/* Every line the child sends (without its newline), for the caller's own keys; may be NULL. */
typedef void (*isolate_line_fn)(const char *line, void *ctx);

/* Forks; the child runs child(arg) with SCALING_REPORT_FD naming its end of a pipe (engine/check.h's check_report
 * writes there) and exits with its return value. The parent reads the child's lines (on_line gets each) until the
 * child ends, kills it (SIGKILL) when no line came for timeout_s seconds (<= 0: no deadline), and fills r.
 * 0, or -1 with a message in err when the pipe or the fork failed (nothing ran). */
int isolate_run(int (*child)(void *arg), void *arg, double timeout_s, isolate_line_fn on_line, void *ctx,
                isolate_result_t *r, char *err, size_t errlen);
/* The row's status for a child that died without its outcome (study/schema.h's run_status_t): interrupted (a signal
 * reached the parent: the second one killed it), timeout (killed for silence), oom (its reason says out of memory),
 * else failed. */
int isolate_status(const isolate_result_t *r);
/* The row's reason for it: its CHECK line, "killed by SIGSEGV", "no progress for 300 s", "SIGTERM twice". */
void isolate_describe(const isolate_result_t *r, double timeout_s, char *buf, size_t len);
/* 1 when the reason says the device ran out of memory (then the row is oom, not failed). */
int isolate_is_oom(const isolate_result_t *r);

/* SIGINT and SIGTERM: the first is recorded (isolate_signal) and passed on to a running child; a second ends a
 * running child at once (SIGKILL), or, in a process without one, the process itself (exit 128 + signal). A child
 * only records: its parent decides when to escalate. */
void isolate_signals_install(void);
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
