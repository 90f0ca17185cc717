/* watchdog.c — the deadline thread of a run, and of a process's phases under mpirun/srun (watchdog.h). */
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

/* Sleeps one poll, or less when stopped; 1 when stopped. */
static int nap(watchdog_t *w) {
    struct timespec until;
    clock_gettime(CLOCK_MONOTONIC, &until);
    long long ns = until.tv_nsec + (long long)(w->poll_s * 1e9);
    until.tv_sec += (time_t)(ns / 1000000000LL);
    until.tv_nsec = (long)(ns % 1000000000LL);
    pthread_mutex_lock(&w->lock);
    while (!w->stop && pthread_cond_timedwait(&w->wake, &w->lock, &until) == 0) {}
    int stop = w->stop;
    pthread_mutex_unlock(&w->lock);
    return stop;
}

/* The tick where one is due. */
static void tick(watchdog_t *w) {
    pthread_mutex_lock(&w->lock);
    watchdog_tick_fn fn = w->tick;
    int due = fn && (double)(now_ns() - w->last_tick_ns) * 1e-9 >= w->tick_s;
    if (due) w->last_tick_ns = now_ns();
    pthread_mutex_unlock(&w->lock);
    if (due) fn(w->ctx);
}

static void *watch(void *arg) {
    watchdog_t *w = arg;
    while (!nap(w)) {
        char why[512] = "";
        tick(w);
        if (w->check && w->check(w->ctx, why, sizeof why)) {
            w->expire(w->ctx, why, 0);
            return NULL;
        }
        if (__atomic_load_n(&w->paused, __ATOMIC_ACQUIRE)) continue;
        double idle = (double)(now_ns() - __atomic_load_n(&w->last_ns, __ATOMIC_ACQUIRE)) * 1e-9, timeout;
        __atomic_load(&w->timeout_s, &timeout, __ATOMIC_RELAXED);
        const char *phase = watchdog_phase_name(w);
        if (idle > timeout && !__atomic_load_n(&w->paused, __ATOMIC_ACQUIRE)) {
            if (phase)
                snprintf(why, sizeof why, "no progress for %.0f s in %s (--timeout %g): a rank stopped or died, or a "
                         "file system or a device does not answer", idle, phase, timeout);
            else
                snprintf(why, sizeof why, "no progress for %.0f s (--timeout %g): a rank stopped or died, or a "
                         "collective or a synchronisation never completed", idle, timeout);
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
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);     /* the deadline's clock, not the settable wall clock */
    pthread_cond_init(&w->wake, &attr);
    pthread_condattr_destroy(&attr);
    pthread_mutex_init(&w->lock, NULL);
    if (pthread_create(&w->thread, NULL, watch, w) != 0) return -1;
    w->running = 1;
    return 0;
}

void watchdog_beat(watchdog_t *w) {
    __atomic_store_n(&w->last_ns, now_ns(), __ATOMIC_RELEASE);
}

void watchdog_phase(watchdog_t *w, const char *phase) {
    if (!w) return;
    if (!phase) {
        __atomic_store_n(&w->paused, 1, __ATOMIC_RELEASE);
        return;
    }
    __atomic_store_n(&w->phase, phase, __ATOMIC_RELEASE);
    watchdog_beat(w);
    __atomic_store_n(&w->paused, 0, __ATOMIC_RELEASE);
}

void watchdog_every(watchdog_t *w, double seconds, watchdog_tick_fn fn) {
    if (!w || !w->running) return;
    pthread_mutex_lock(&w->lock);
    w->tick = fn;
    w->tick_s = seconds;
    w->last_tick_ns = now_ns();
    pthread_mutex_unlock(&w->lock);
}

void watchdog_set_timeout(watchdog_t *w, double timeout_s) {
    if (!w) return;
    __atomic_store(&w->timeout_s, &timeout_s, __ATOMIC_RELAXED);
    watchdog_beat(w);
}

const char *watchdog_phase_name(watchdog_t *w) { return __atomic_load_n(&w->phase, __ATOMIC_ACQUIRE); }

void watchdog_stop(watchdog_t *w) {
    if (!w->running) return;
    pthread_mutex_lock(&w->lock);
    w->stop = 1;
    pthread_cond_signal(&w->wake);
    pthread_mutex_unlock(&w->lock);
    pthread_join(w->thread, NULL);
    pthread_cond_destroy(&w->wake);
    pthread_mutex_destroy(&w->lock);
    w->running = 0;
}
