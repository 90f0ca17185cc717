/* test_watchdog.c — the deadline thread of one process per GPU (bench/faults/watchdog.h): beats keep a run alive, silence
 * past --timeout expires it once with a reason naming the timeout, a failing health check expires it at once, and
 * a stopped watchdog never fires. */
#define _POSIX_C_SOURCE 200809L
#include "bench/faults/watchdog.h"
#include "test.h"

#include <string.h>
#include <time.h>
#include <unistd.h>

typedef struct {
    int fired, timed_out, broken, ticks;
    char why[512];
} seen_t;

static void expire(void *ctx, const char *why, int timed_out) {
    seen_t *s = ctx;
    s->fired++;
    s->timed_out = timed_out;
    snprintf(s->why, sizeof s->why, "%s", why);
}

static int check(void *ctx, char *why, size_t len) {
    seen_t *s = ctx;
    if (!s->broken) return 0;
    snprintf(why, len, "NCCL asynchronous error: remote process exited or there was a network error");
    return 1;
}

static void ticked(void *ctx) { __atomic_add_fetch(&((seen_t *)ctx)->ticks, 1, __ATOMIC_RELAXED); }

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

int main(void) {
    seen_t s = {0};
    watchdog_t w;
    EXPECT(watchdog_start(&w, 0.5, check, expire, &s) == 0, "started");
    for (int i = 0; i < 10; i++) { usleep(100000); watchdog_beat(&w); }   /* 1 s of steps of 0.1 s */
    EXPECT(s.fired == 0, "beating every 0.1 s under a 0.5 s deadline: not fired (%d)", s.fired);
    double t0 = now();
    while (!__atomic_load_n(&s.fired, __ATOMIC_ACQUIRE) && now() - t0 < 5) usleep(10000);
    double took = now() - t0;
    watchdog_stop(&w);
    EXPECT(s.fired == 1 && s.timed_out, "silence: fired once, as a timeout (%d, %d)", s.fired, s.timed_out);
    EXPECT(took > 0.45 && took < 1.0, "after the deadline, within a poll: %.2f s", took);
    EXPECT(strstr(s.why, "no progress for") && strstr(s.why, "--timeout 0.5"), "reason: %s", s.why);

    memset(&s, 0, sizeof s);
    s.broken = 1;
    EXPECT(watchdog_start(&w, 60, check, expire, &s) == 0, "started");
    t0 = now();
    while (!__atomic_load_n(&s.fired, __ATOMIC_ACQUIRE) && now() - t0 < 5) usleep(10000);
    watchdog_stop(&w);
    EXPECT(s.fired == 1 && !s.timed_out && strstr(s.why, "NCCL asynchronous error"),
           "a failed health check fires at once, not as a timeout: %s (%.2f s)", s.why, now() - t0);

    /* a tick every 0.4 s while the run beats: at most 4 in 1.5 s (3 on time; 1 at least on a loaded machine), none
     * after it is turned off, and the deadline untouched */
    memset(&s, 0, sizeof s);
    EXPECT(watchdog_start(&w, 60, NULL, expire, &s) == 0, "started");
    watchdog_every(&w, 0.4, ticked);
    t0 = now();
    while (now() - t0 < 1.5) { usleep(50000); watchdog_beat(&w); }
    int ticks = __atomic_load_n(&s.ticks, __ATOMIC_RELAXED);
    watchdog_every(&w, 0.4, NULL);
    usleep(900000);
    int later = __atomic_load_n(&s.ticks, __ATOMIC_RELAXED);
    watchdog_stop(&w);
    EXPECT(ticks >= 1 && ticks <= 4, "ticks every 0.4 s over 1.5 s: %d", ticks);
    EXPECT(later == ticks && s.fired == 0, "turned off: no more ticks (%d after %d), never fired", later, ticks);

    memset(&s, 0, sizeof s);
    EXPECT(watchdog_start(&w, 0.3, check, expire, &s) == 0, "started");
    watchdog_stop(&w);
    usleep(500000);
    EXPECT(s.fired == 0, "stopped: never fires");
    return test_summary();
}
