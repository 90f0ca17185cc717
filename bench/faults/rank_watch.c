/* rank_watch.c — a rank's deadline outside its runs under mpirun/srun (rank_watch.h). */
#define _POSIX_C_SOURCE 200809L
#include "rank_watch.h"

#include <stdio.h>
#include <time.h>

#define RANK_WATCH_DEFAULT_S 300        /* --timeout's default, until the options are parsed */
#define RANK_WATCH_ROOT_FIRST_S 2       /* a rank other than 0 waiting in a collective gives rank 0 this long to end
                                         * the job first: one line then says where the job stood, not one per rank */

/* The deadline passed (the watchdog's thread): one line naming this rank and the phase, then every rank ends. */
static void rank_expire(void *ctx, const char *why, int timed_out) {
    rank_watch_t *w = ctx;
    (void)timed_out;
    if (!w->dist->is_root && !__atomic_load_n(&w->local, __ATOMIC_ACQUIRE)) {
        struct timespec t = {.tv_sec = RANK_WATCH_ROOT_FIRST_S, .tv_nsec = 0};
        while (nanosleep(&t, &t) != 0) {}
    }
    fprintf(stderr, "scaling: rank %d on %s: %s; ending every rank\n", w->dist->rank, w->dist->host, why);
    fflush(stderr);
    dist_abort(w->dist, 124);
}

int rank_watch_start(rank_watch_t *w, const dist_t *dist) {
    w->dist = dist;
    w->local = 0;
    w->wd.running = 0;
    if (!dist) return 0;
    if (watchdog_start(&w->wd, RANK_WATCH_DEFAULT_S, NULL, rank_expire, w) != 0) {
        fprintf(stderr, "scaling: error: rank %d: cannot start the deadline thread\n", dist->rank);
        return -1;
    }
    watchdog_phase(&w->wd, "the start-up");
    return 0;
}

void rank_watch_phase(rank_watch_t *w, const char *phase, int local) {
    if (!w || !w->wd.running) return;
    __atomic_store_n(&w->local, local, __ATOMIC_RELEASE);
    watchdog_phase(&w->wd, phase);
}

void rank_watch_timeout(rank_watch_t *w, double timeout_s) {
    if (w && w->wd.running) watchdog_set_timeout(&w->wd, timeout_s);
}

void rank_watch_stop(rank_watch_t *w) {
    if (w && w->wd.running) watchdog_stop(&w->wd);
}
