/* watchdog.c — the per-run deadline thread of one process per GPU (watchdog.h). */
#define _POSIX_C_SOURCE 200809L
#include "watchdog.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

static long long now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

static void *watch(void *arg) {
    watchdog_t *w = arg;
    struct timespec nap = {.tv_sec = (time_t)w->poll_s, .tv_nsec = (long)((w->poll_s - (double)(time_t)w->poll_s) * 1e9)};
    while (!__atomic_load_n(&w->stop, __ATOMIC_ACQUIRE)) {
        nanosleep(&nap, NULL);
        char why[512] = "";
        if (w->check && w->check(w->ctx, why, sizeof why)) {
            w->expire(w->ctx, why, 0);
            return NULL;
        }
        double idle = (double)(now_ns() - __atomic_load_n(&w->last_ns, __ATOMIC_ACQUIRE)) * 1e-9;
        if (idle > w->timeout_s) {
            snprintf(why, sizeof why, "no progress for %.0f s (--timeout %g): a rank stopped or died, or a collective "
                     "or a synchronisation never completed", idle, w->timeout_s);
            w->expire(w->ctx, why, 1);
            return NULL;
        }
    }
    return NULL;
}

int watchdog_start(watchdog_t *w, double timeout_s, watchdog_check_fn check, watchdog_expire_fn expire, void *ctx) {
    memset(w, 0, sizeof *w);
    w->timeout_s = timeout_s;
    w->poll_s = timeout_s < 1 ? timeout_s / 5 : 0.2;
    w->check = check;
    w->expire = expire;
    w->ctx = ctx;
    watchdog_beat(w);
    if (pthread_create(&w->thread, NULL, watch, w) != 0) return -1;
    w->running = 1;
    return 0;
}

void watchdog_beat(watchdog_t *w) {
    __atomic_store_n(&w->last_ns, now_ns(), __ATOMIC_RELEASE);
}

void watchdog_stop(watchdog_t *w) {
    if (!w->running) return;
    __atomic_store_n(&w->stop, 1, __ATOMIC_RELEASE);
    pthread_join(w->thread, NULL);
    w->running = 0;
}
