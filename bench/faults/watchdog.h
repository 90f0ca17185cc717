/* watchdog.h — a deadline thread where no parent process can watch: one per run (a run's child process, or each rank
 * under mpirun/srun) that ends the run when it has made no progress for --timeout seconds (a rank stopped or dead, a
 * collective or a synchronisation that never completes) or when the run's health check reports a fault (an NCCL
 * asynchronous error); and, under mpirun/srun, one per process from MPI's start to its end, whose deadline covers
 * every named phase outside the runs (agreements, data loading, the CSV, the final barrier). Host-only (pthreads). */
#pragma once
#include <pthread.h>
#include <stddef.h>

/* 1 with a one-line reason when the run is broken (may be NULL). Runs on the watchdog thread. */
typedef int (*watchdog_check_fn)(void *ctx, char *why, size_t len);
/* Called every few seconds on the watchdog thread while the deadline holds (progress lines, watchdog_every). */
typedef void (*watchdog_tick_fn)(void *ctx);
/* Called once on the watchdog thread when the deadline passed (timed_out 1) or the check failed (0); ends the
 * process (it may return only in tests). */
typedef void (*watchdog_expire_fn)(void *ctx, const char *why, int timed_out);

typedef struct {
    double timeout_s;               /* read and written atomically (watchdog_set_timeout) */
    double poll_s;                  /* how often it looks: 0.2 s */
    long long last_ns;              /* the last beat (CLOCK_MONOTONIC), read and written atomically */
    int stop;                       /* under lock; wake signals it, so a stop never waits out a poll */
    pthread_mutex_t lock;
    pthread_cond_t wake;
    watchdog_check_fn check;
    watchdog_expire_fn expire;
    void *ctx;
    const char *phase;              /* watchdog_phase's, atomically: named in the reason; NULL: none */
    int paused;                     /* atomically: 1 while no deadline runs (watchdog_phase NULL) */
    watchdog_tick_fn tick;          /* watchdog_every's, under lock; NULL: none */
    double tick_s;
    long long last_tick_ns;         /* the watchdog thread's own */
    pthread_t thread;
    int running;
} watchdog_t;

/* Starts the thread; the deadline counts from now. 0, or -1 when the thread cannot be made. */
int watchdog_start(watchdog_t *w, double timeout_s, watchdog_check_fn check, watchdog_expire_fn expire, void *ctx);
/* Progress: the deadline starts again. One atomic store: cheap enough for every step. */
void watchdog_beat(watchdog_t *w);
/* A process's phases (one process per GPU, outside its runs): the deadline starts again and the reason will say
 * "in PHASE" (a string that outlives the phase, a literal); NULL pauses the deadline until the next phase, while a
 * run's own watchdog holds it. Either call may come from any thread. NULL w: nothing. */
void watchdog_phase(watchdog_t *w, const char *phase);
/* fn(ctx) on the watchdog thread every `seconds` from now on (the progress lines of a run: bench/progress.h), the
 * first `seconds` from now; NULL fn: no more. It must not block: the deadline waits for it. */
void watchdog_every(watchdog_t *w, double seconds, watchdog_tick_fn fn);
/* The deadline from now on (the --timeout parsed after the thread started). NULL w: nothing. */
void watchdog_set_timeout(watchdog_t *w, double timeout_s);
/* The phase named last, or NULL (for the expire callback). */
const char *watchdog_phase_name(watchdog_t *w);
/* Stops and joins the thread (after the run). */
void watchdog_stop(watchdog_t *w);
