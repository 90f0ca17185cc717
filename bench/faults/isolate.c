/* isolate.c — configurations in child processes (isolate.h): fork, a pipe of one-line messages, a deadline on
 * silence, and the SIGINT/SIGTERM handling shared by parent, child and a process without children. */
#define _POSIX_C_SOURCE 200809L
#include "isolate.h"
#include "../../engine/errmsg.h"
#include "../../engine/process.h"
#include "../../study/schema.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* SIGINT/SIGTERM: the command's signal state, a global because a signal handler can reach nothing else. got: the first
 * signal; whether this is a run's child process; the child to pass a signal on to; the line a rank's handler writes at
 * once to last_fd (rank 0's interrupted row, prepared before each epoch), with whether it did; whether a checkpoint is
 * ahead (isolate_defer: else a signal ends the process at once); whether the handler SIGKILLed the child. Tests only
 * (isolate_test_kill): the signal a silent child is sent (0: SIGKILL; -1: none) and the grace after it (0: the
 * default). */
typedef struct {
    volatile sig_atomic_t got;
    volatile sig_atomic_t in_child;
    volatile pid_t child;
    volatile int last_fd;
    const char *volatile last_line;
    volatile size_t last_len;
    volatile sig_atomic_t last_spoken;
    volatile sig_atomic_t deferred;
    volatile sig_atomic_t child_killed;
    int test_kill_signal;
    double test_kill_grace_s;
} isolate_signals_t;
static isolate_signals_t sigs_state = {.last_fd = -1};
static isolate_signals_t *const sigs = &sigs_state;

/* "scaling: SIGTERM: stopped (setup: nothing of a run was under way)", with write(2) alone: async-signal-safe. */
static void say_stopped(int sig) {
    static const char head[] = "scaling: ", tail[] = ": stopped at once (no run was under way)\n";
    const char *name = sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : "a signal";
    ssize_t w = write(2, head, sizeof head - 1);
    w = write(2, name, strlen(name));
    w = write(2, tail, sizeof tail - 1);
    (void)w;
}

static void on_signal(int sig) {
    if (!sigs->got && !sigs->deferred) {
        /* No checkpoint ahead (setup, data loading, a probe, the benchmark, the report): the first signal ends the
         * process now, with the child it waits for, rather than after a blocked read that may never return. */
        sigs->got = sig;
        if (sigs->child > 0) kill(sigs->child, SIGKILL);
        if (!sigs->in_child) say_stopped(sig);
        _exit(128 + sig);
    }
    if (!sigs->got) {
        sigs->got = sig;
        if (sigs->child > 0) kill(sigs->child, sig);
        else if (!sigs->in_child && sigs->last_fd >= 0 && sigs->last_line) {
            static const char said[] = "scaling: rank 0: a signal from the launcher (a rank died, or the job was "
                                       "cancelled or ran out of time): the run's interrupted row is written\n";
            ssize_t w = write(sigs->last_fd, sigs->last_line, sigs->last_len);    /* async-signal-safe: a line prepared earlier */
            w = write(2, said, sizeof said - 1);
            (void)w;
            sigs->last_spoken = 1;
        }
        return;
    }
    if (sigs->child > 0) {
        kill(sigs->child, SIGKILL);    /* the parent still writes the row */
        sigs->child_killed = 1;
    } else if (!sigs->in_child) _exit(128 + sig);
}

void isolate_defer(int on) { sigs->deferred = on ? 1 : 0; }

void isolate_track_child(int pid) { sigs->child = (pid_t)pid; }

void isolate_test_kill(int sig, double grace_s) {
    sigs->test_kill_signal = sig ? sig : -1;
    sigs->test_kill_grace_s = grace_s;
}

/* The deadline's signal (0: none, a test's) and the grace after it. */
static int kill_signal(void) {
    return sigs->test_kill_signal < 0 ? 0 : sigs->test_kill_signal ? sigs->test_kill_signal : SIGKILL;
}
static double kill_grace_s(void) {
    return sigs->test_kill_grace_s > 0 ? sigs->test_kill_grace_s : ISOLATE_KILL_GRACE_S;
}

void isolate_signals_install(void) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sa.sa_flags = SA_RESTART;   /* a row's write or fsync goes on after the handler, never fails with EINTR */
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
}

int isolate_signal(void) { return sigs->got; }

void isolate_last_words(int fd, const char *line, size_t len) {
    sigs->last_fd = -1;       /* never half-updated from the handler's view: disarmed while it changes */
    sigs->last_line = line;
    sigs->last_len = len;
    if (line) sigs->last_spoken = 0;      /* armed anew: what it says is about what comes */
    sigs->last_fd = line ? fd : -1;
}

int isolate_last_words_spoken(void) { return sigs->last_spoken; }

int isolate_exit_status(int sig) { return 128 + sig; }

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* One complete line from the child. */
static void take_line(char *line, isolate_result_t *r, isolate_line_fn on_line, void *ctx) {
    if (strncmp(line, "setup", 5) == 0 && (line[5] == '\0' || line[5] == ' ')) r->setup_done = 1;
    else if (strncmp(line, "epoch ", 6) == 0) r->epochs = atoi(line + 6);
    else if (strncmp(line, "outcome ", 8) == 0) r->outcome = atoi(line + 8);
    else if (strncmp(line, "reason ", 7) == 0) snprintf(r->reason, sizeof r->reason, "%s", line + 7);
    else if (strncmp(line, "mem ", 4) == 0 && sscanf(line + 4, "%lf %lf", &r->mem_free_mb, &r->mem_total_mb) != 2)
        r->mem_free_mb = r->mem_total_mb = -1;
    if (on_line) on_line(line, ctx);
}

static void child_main(int (*child)(void *), void *arg, int fd, pid_t parent) {
    sigs->in_child = 1;
    sigs->child = 0;
    sigs->deferred = 0;       /* until its run says where it stops (isolate_defer) */
    /* CUDA contexts do not cross fork: whatever peer access the parent set up, the child has none yet */
    memset(&process_state.peers, 0, sizeof process_state.peers);
    /* A parent killed outright (SIGKILL, the OOM killer) takes its run along: an orphan would go on writing rows
     * into a CSV that a --resume may be appending to already. */
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(1);
    char s[16];
    snprintf(s, sizeof s, "%d", fd);
    setenv("SCALING_REPORT_FD", s, 1);
    fflush(NULL);
    int rc = child(arg);
    fflush(NULL);
    /* _exit: the parent's atexit handlers and stdio buffers (copied at fork) are the parent's to run. */
    _exit(rc & 0xff);
}

int isolate_run(int (*child)(void *arg), void *arg, double timeout_s, isolate_line_fn on_line, void *ctx,
                isolate_result_t *r, char *err, size_t errlen) {
    memset(r, 0, sizeof *r);
    r->outcome = -1;
    r->mem_free_mb = r->mem_total_mb = -1;
    int fds[2];
    if (pipe(fds) != 0) return errmsg(-1, err, errlen, "cannot make a pipe for the run's process: %s", strerror(errno));
    fflush(NULL);   /* the child starts with empty stdio buffers: nothing is written twice */
    pid_t parent = getpid(), pid = fork();
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        return errmsg(-1, err, errlen, "cannot fork the run's process: %s", strerror(errno));
    }
    if (pid == 0) {
        close(fds[0]);
        child_main(child, arg, fds[1], parent);
    }
    sigs->child = pid;
    sigs->child_killed = 0;
    if (sigs->got) kill(pid, sigs->got);  /* a signal that came between the check and the fork */
    close(fds[1]);
    char buf[8192];
    size_t have = 0;
    double last = now_s(), killed_at = 0;
    int status = 0, reaped = 0;
    for (;;) {
        struct pollfd p = {.fd = fds[0], .events = POLLIN};
        int n = poll(&p, 1, reaped ? 0 : 200);
        if (n < 0 && errno != EINTR) break;
        if (n > 0) {
            ssize_t got = read(fds[0], buf + have, sizeof buf - 1 - have);
            if (got < 0 && errno == EINTR) continue;
            if (got <= 0) break;    /* EOF: the child is gone (its pipe end closed with it) */
            have += (size_t)got;
            buf[have] = '\0';
            char *start = buf, *nl;
            while ((nl = strchr(start, '\n'))) {
                *nl = '\0';
                take_line(start, r, on_line, ctx);
                start = nl + 1;
            }
            have = strlen(start);
            memmove(buf, start, have + 1);
            if (have == sizeof buf - 1) have = 0;   /* a line longer than the buffer: dropped */
            last = now_s();
            continue;
        }
        if (reaped) break;      /* its lines read to the last one there is */
        /* A child that died while a process it started still holds the pipe: no EOF comes, its status does. */
        pid_t w = waitpid(pid, &status, WNOHANG);
        if (w == pid) { reaped = 1; continue; }
        if (timeout_s > 0 && !r->timed_out && now_s() - last > timeout_s) {
            r->timed_out = 1;
            if (kill_signal()) kill(pid, kill_signal());
        }
        if (!killed_at && (r->timed_out || sigs->child_killed)) killed_at = now_s();
        /* A child stuck in the driver does not die of SIGKILL: past the grace the parent gives up on it. */
        if (killed_at && now_s() - killed_at > kill_grace_s()) {
            r->unkillable = 1;
            r->pid = (int)pid;
            r->grace_s = kill_grace_s();
            break;
        }
    }
    close(fds[0]);
    while (!reaped && !r->unkillable && waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
    sigs->child = 0;
    if (r->unkillable) r->exit_code = -1;
    else if (WIFSIGNALED(status)) r->exit_code = -1, r->signal = WTERMSIG(status);
    else r->exit_code = WEXITSTATUS(status);
    r->killed = sigs->child_killed;
    r->interrupted = sigs->got;
    return 0;
}

static const char *signal_name(int sig) {
    switch (sig) {
    case SIGSEGV: return "SIGSEGV";
    case SIGBUS: return "SIGBUS";
    case SIGABRT: return "SIGABRT";
    case SIGFPE: return "SIGFPE";
    case SIGILL: return "SIGILL";
    case SIGKILL: return "SIGKILL";
    case SIGTERM: return "SIGTERM";
    case SIGINT: return "SIGINT";
    case SIGPIPE: return "SIGPIPE";
    default: return "a signal";
    }
}

int isolate_status(const isolate_result_t *r) {
    /* A signal is no verdict on the configuration, even where the run then hung and had to be killed: --resume runs
     * it again. */
    if (r->interrupted) return RUN_INTERRUPTED;
    if (r->timed_out) return RUN_TIMEOUT;
    return isolate_is_oom(r) ? RUN_OOM : RUN_FAILED;
}

void isolate_describe(const isolate_result_t *r, double timeout_s, char *buf, size_t len) {
    const char *sig = signal_name(r->interrupted);
    char fate[160];     /* what the parent's SIGKILL did */
    if (r->unkillable)
        snprintf(fate, sizeof fate, "the run's process (pid %d) was sent SIGKILL and had not ended %g s later: it may "
                 "still hold the GPU", r->pid, r->grace_s);
    else snprintf(fate, sizeof fate, "the run's process was killed%s", r->killed ? " at once" : "");
    if (r->interrupted && r->killed) snprintf(buf, len, "%s twice: %s", sig, fate);
    else if (r->interrupted && r->timed_out)
        snprintf(buf, len, "%s, then no progress for %.0f s (--timeout): %s", sig, timeout_s, fate);
    else if (r->interrupted && r->exit_code == 128 + r->interrupted)
        snprintf(buf, len, "%s during the run's setup: it stopped at once", sig);
    else if (r->interrupted)
        snprintf(buf, len, "%s: the run's process ended before its row (%s)", sig, r->reason[0] ? r->reason
                 : r->signal ? signal_name(r->signal) : "no reason given");
    else if (r->timed_out)
        snprintf(buf, len, "no progress for %.0f s (--timeout): %s", timeout_s, fate);
    else if (r->reason[0]) snprintf(buf, len, "%s", r->reason);
    else if (r->signal) snprintf(buf, len, "the run's process was killed by %s (signal %d)", signal_name(r->signal),
                                 r->signal);
    else snprintf(buf, len, "the run's process exited with status %d", r->exit_code);
}

int isolate_is_oom(const isolate_result_t *r) {
    return strstr(r->reason, "out of memory") != NULL || r->mem_total_mb > 0;
}
