/* test_isolate.c — the per-configuration child process (bench/faults/isolate.h) with fake children, no GPU: a clean run,
 * a CHECK_* failure (its reason reaches the parent; out of memory is told apart), a crash by signal, a silent child
 * past the deadline, SIGTERM ended at a step boundary and a second SIGTERM at once, a first SIGTERM where no
 * checkpoint is ahead (setup) ending the process and its child at once, a signal in a hung step judged interrupted,
 * a dead child whose pipe another process holds reaped, a child that outlives its SIGKILL given up after the grace,
 * a child starting with no peer access recorded, and SCALING_FAULT (engine/fault.h) failing the k-th call through the
 * CHECK_* macros' own fault path. */
#define _POSIX_C_SOURCE 200809L
#include "bench/faults/isolate.h"
#include "engine/check.h"
#include "study/schema.h"
#include "test.h"

#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static int child_ok(void *arg) {
    (void)arg;
    check_report("setup 1.25\n");
    check_report("epoch 1\n");
    check_report("custom 42\n");
    check_report("epoch 2\n");
    check_report("outcome 0\n");
    return 0;
}

static int child_check_fail(void *arg) {
    check_report("setup\n");
    check_report("epoch 1\n");
    check_report("mem 812 81559\n");
    check_fail("engine/layers/bn.cu", 169, "cudaMalloc(&p->dpre, layer_bytes(l, in))", (const char *)arg);
    return 0;
}

static int child_segv(void *arg) {
    (void)arg;
    check_report("setup\n");
    raise(SIGSEGV);
    return 0;
}

static int child_silent(void *arg) {
    (void)arg;
    check_report("setup\n");
    for (;;) pause();
    return 0;
}

/* A run loop: a "step" every 10 ms, the signal checked at each step boundary as scaling.c does (its setup over, a
 * checkpoint is ahead: isolate_defer). */
static int child_steps(void *arg) {
    int check_signal = *(int *)arg;
    check_report("setup\n");
    isolate_defer(1);
    for (int step = 0; step < 1000; step++) {
        usleep(10000);
        if (check_signal && isolate_signal()) {
            check_report("interrupted\n");
            return isolate_exit_status(isolate_signal());
        }
    }
    return 0;
}

#ifndef SCALING_NO_FAULT_INJECTION
/* A host stand-in for a cuDNN call behind the CHECK_* fast path: fails only when SCALING_FAULT says so. */
static int fake_calls(void *arg) {
    int n = *(int *)arg;
    check_report("setup\n");
    for (int i = 0; i < n; i++) {
        int e_ = 0;
        CHECK_FAULTY_(e_ == 0, FAULT_CUDNN, 8, check_fail("tests/host/test_isolate.c", 77, "fake_cudnn_call()",
                                                          "CUDNN_STATUS_EXECUTION_FAILED"));
    }
    return 0;
}

#endif

static int child_pid_then_wait(void *arg) {
    (void)arg;
    pid_t me = getpid();
    ssize_t w = write(atoi(getenv("WRITE_FD")), &me, sizeof me);
    (void)w;
    for (;;) pause();
    return 0;
}

/* A run whose step hangs (a kernel that never ends): its setup done, a checkpoint ahead that it never reaches. */
static int child_hung_step(void *arg) {
    (void)arg;
    check_report("setup\n");
    isolate_defer(1);
    for (;;) pause();
    return 0;
}

/* A child that starts a process of its own holding the pipe (as a driver's helper may), says its pid, and dies. */
static int child_leaves_holder(void *arg) {
    (void)arg;
    pid_t holder = fork();
    if (holder == 0) {
        sleep(60);
        _exit(0);
    }
    char line[64];
    snprintf(line, sizeof line, "holder %d\n", (int)holder);
    check_report(line);
    check_report("setup\n");
    for (;;) pause();
    return 0;
}

/* The child's record of enabled peer pairs (engine/process.h): its exit code, the bits it starts with. */
static int child_peers(void *arg) {
    (void)arg;
    check_report("setup\n");
    return (int)(process_state.peers.enabled[0] | process_state.peers.enabled[3]);
}

static void on_holder(const char *line, void *ctx) {
    if (strncmp(line, "holder ", 7) == 0) *(int *)ctx = atoi(line + 7);
}

static void on_line(const char *line, void *ctx) {
    if (strncmp(line, "custom ", 7) == 0) *(int *)ctx = atoi(line + 7);
}

static void test_children(void) {
    isolate_result_t r;
    char err[256], why[600];
    int custom = 0;
    EXPECT(isolate_run(child_ok, NULL, 10, on_line, &custom, &r, err, sizeof err) == 0, "run: %s", err);
    EXPECT(r.exit_code == 0 && r.signal == 0 && r.setup_done && r.epochs == 2 && r.outcome == 0 && !r.reason[0],
           "clean child: exit %d epochs %d outcome %d", r.exit_code, r.epochs, r.outcome);
    EXPECT(custom == 42, "the caller's own line reached it: %d", custom);
    /* a CUDA context does not cross fork, so neither does the record of its peer access */
    process_state.peers.enabled[0] = 2, process_state.peers.enabled[3] = 1;
    EXPECT(isolate_run(child_peers, NULL, 10, NULL, NULL, &r, err, sizeof err) == 0 && r.exit_code == 0,
           "the child starts with no peer pair enabled: exit %d (the parent's bits: 3)", r.exit_code);
    EXPECT(process_state.peers.enabled[0] == 2 && process_state.peers.enabled[3] == 1, "the parent's record kept");
    memset(&process_state.peers, 0, sizeof process_state.peers);

    EXPECT(isolate_run(child_check_fail, "out of memory", 10, NULL, NULL, &r, err, sizeof err) == 0, "%s", err);
    EXPECT(r.exit_code == 1 && r.epochs == 1, "CHECK failure: exit %d after epoch %d", r.exit_code, r.epochs);
    EXPECT(strcmp(r.reason, "engine/layers/bn.cu:169: cudaMalloc(&p->dpre, layer_bytes(l, in)) -> out of memory") == 0,
           "the CHECK line is the reason: '%s'", r.reason);
    EXPECT(isolate_is_oom(&r) && r.mem_free_mb == 812 && r.mem_total_mb == 81559, "oom, with free %g of %g MiB",
           r.mem_free_mb, r.mem_total_mb);
    isolate_describe(&r, 10, why, sizeof why);
    EXPECT(strcmp(why, r.reason) == 0, "described by its reason: %s", why);
    EXPECT(isolate_status(&r) == RUN_OOM, "status oom: %s", study_status_name(isolate_status(&r)));

    EXPECT(isolate_run(child_check_fail, "an illegal memory access was encountered", 10, NULL, NULL, &r, err,
                       sizeof err) == 0, "%s", err);
    r.mem_free_mb = r.mem_total_mb = -1;    /* as a child that sent no mem line */
    EXPECT(r.exit_code == 1 && !isolate_is_oom(&r), "another CUDA error is not an oom: %s", r.reason);
    EXPECT(isolate_status(&r) == RUN_FAILED, "status failed: %s", study_status_name(isolate_status(&r)));

    EXPECT(isolate_run(child_segv, NULL, 10, NULL, NULL, &r, err, sizeof err) == 0, "%s", err);
    isolate_describe(&r, 10, why, sizeof why);
    EXPECT(r.signal == SIGSEGV && r.exit_code == -1 && r.setup_done, "crash: signal %d", r.signal);
    EXPECT(strstr(why, "SIGSEGV") != NULL, "the signal is named: %s", why);
    EXPECT(isolate_status(&r) == RUN_FAILED, "a crash is failed: %s", study_status_name(isolate_status(&r)));

    EXPECT(isolate_run(child_silent, NULL, 0.5, NULL, NULL, &r, err, sizeof err) == 0, "%s", err);
    isolate_describe(&r, 0.5, why, sizeof why);
    EXPECT(r.timed_out && r.signal == SIGKILL, "silent child killed past the deadline: timed_out %d signal %d",
           r.timed_out, r.signal);
    EXPECT(strstr(why, "no progress for") != NULL, "described: %s", why);
    EXPECT(isolate_status(&r) == RUN_TIMEOUT, "status timeout: %s", study_status_name(isolate_status(&r)));
}

#ifndef SCALING_NO_FAULT_INJECTION
static void test_fault_parse(void) {
    fault_spec_t f;
    char err[256];
    EXPECT(fault_parse("alloc:3", &f, err, sizeof err) == 0 && f.kind == FAULT_ALLOC && f.k == 3 && f.rank == -1 &&
           f.run == 0, "alloc:3: %s", err);
    EXPECT(fault_parse("stall:10:rank=1", &f, err, sizeof err) == 0 && f.kind == FAULT_STALL && f.k == 10 &&
           f.rank == 1, "stall:10:rank=1: %s", err);
    EXPECT(fault_parse("collective:2:run=2:rank=0", &f, err, sizeof err) == 0 && f.kind == FAULT_COLLECTIVE &&
           f.run == 2 && f.rank == 0, "collective with run and rank: %s", err);
    static const char *const bad[] = {"oom:1", "cuda", "cuda:0", "cuda:-1", "cuda:x", "cuda:1:rank=", "cuda:1:node=2",
                                      "nccl:1:run=0", "", "cuda:99999999999999999999", "cuda:1:rank=4294967296",
                                      "cuda: 1", "cuda:1:run=+2"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        EXPECT(fault_parse(bad[i], &f, err, sizeof err) == 2 && strncmp(err, "SCALING_FAULT: ", 15) == 0,
               "'%s' refused: %s", bad[i], err);
}

static void test_fault_injection(void) {
    isolate_result_t r;
    char err[256];
    int n = 5;
    unsetenv("SCALING_FAULT");
    EXPECT(fault_begin_run(0, 1, err, sizeof err) == 0 && !process_state.faults.armed, "unset: not armed");
    EXPECT(isolate_run(fake_calls, &n, 10, NULL, NULL, &r, err, sizeof err) == 0 && r.exit_code == 0,
           "unset: five calls pass (exit %d)", r.exit_code);

    setenv("SCALING_FAULT", "cudnn:3", 1);
    EXPECT(fault_begin_run(0, 1, err, sizeof err) == 0 && process_state.faults.armed, "cudnn:3 armed: %s", err);
    EXPECT(isolate_run(fake_calls, &n, 10, NULL, NULL, &r, err, sizeof err) == 0, "%s", err);
    EXPECT(r.exit_code == 1 && strstr(r.reason, "test_isolate.c:77: fake_cudnn_call() -> CUDNN_STATUS") != NULL &&
           !isolate_is_oom(&r), "the third call failed: exit %d, reason '%s'", r.exit_code, r.reason);
    n = 2;
    EXPECT(fault_begin_run(0, 1, err, sizeof err) == 0 &&
           isolate_run(fake_calls, &n, 10, NULL, NULL, &r, err, sizeof err) == 0 && r.exit_code == 0,
           "a run of two calls never reaches the third");
    n = 5;
    EXPECT(fault_begin_run(0, 1, err, sizeof err) == 0 && fault_take(FAULT_CUDA) == 0 && fault_take(FAULT_CUDA) == 0 &&
           fault_take(FAULT_CUDA) == 0, "other kinds are not counted");

    setenv("SCALING_FAULT", "cudnn:1:run=2", 1);
    EXPECT(fault_begin_run(0, 1, err, sizeof err) == 0 && !process_state.faults.armed, "run=2: run 1 untouched");
    EXPECT(fault_begin_run(0, 2, err, sizeof err) == 0 && process_state.faults.armed, "run=2: run 2 armed");
    setenv("SCALING_FAULT", "cudnn:1:rank=1", 1);
    EXPECT(fault_begin_run(0, 1, err, sizeof err) == 0 && !process_state.faults.armed, "rank=1: rank 0 untouched");
    EXPECT(fault_begin_run(1, 1, err, sizeof err) == 0 && process_state.faults.armed, "rank=1: rank 1 armed");
    setenv("SCALING_FAULT", "cudnn:zero", 1);
    EXPECT(fault_begin_run(0, 1, err, sizeof err) == 2 && !process_state.faults.armed, "malformed: an error, not armed: %s", err);
    unsetenv("SCALING_FAULT");
    fault_begin_run(0, 1, err, sizeof err);
}

#else
/* A build without fault injection (-DSCALING_FAULT_INJECTION=OFF) refuses SCALING_FAULT, even a valid one, and never
 * arms it. */
static void test_no_fault_injection(void) {
    fault_spec_t f;
    char err[256];
    EXPECT(fault_parse("cudnn:3", &f, err, sizeof err) == 2 && strstr(err, "no fault injection"), "refused: %s", err);
    setenv("SCALING_FAULT", "cudnn:3", 1);
    EXPECT(fault_begin_run(0, 1, err, sizeof err) == 2 && !process_state.faults.armed, "not armed: %s", err);
    unsetenv("SCALING_FAULT");
    EXPECT(fault_inject(FAULT_CUDNN) == 0, "fault_inject is 0");
}
#endif

/* 1 when pid is gone or a zombie (an orphan's reaper may be slow, or absent in a container). */
static int gone_or_zombie(pid_t pid) {
    if (kill(pid, 0) != 0) return 1;
    char path[64], buf[256] = "";
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "r");
    if (!f) return 1;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    const char *close_paren = strrchr(buf, ')');
    return close_paren && close_paren[1] == ' ' && close_paren[2] == 'Z';
}

/* A sweep in a child process (isolate_signals_install'ed with `signals`) whose own isolated child reports its pid
 * through a pipe, then idles: the sweep's pid, the grandchild's in *child; -1 where the pipe or the report failed. */
static pid_t fork_sweep_with_child(int signals, pid_t *child) {
    int fds[2];
    if (pipe(fds) != 0) { EXPECT(0, "pipe"); return -1; }
    pid_t pid = fork();
    if (pid == 0) {
        close(fds[0]);
        char s[16];
        snprintf(s, sizeof s, "%d", fds[1]);
        setenv("WRITE_FD", s, 1);
        if (signals) isolate_signals_install();
        isolate_result_t r;
        char err[64];
        isolate_run(child_pid_then_wait, NULL, 60, NULL, NULL, &r, err, sizeof err);
        _exit(1);
    }
    close(fds[1]);
    *child = 0;
    EXPECT(read(fds[0], child, sizeof *child) == (ssize_t)sizeof *child && *child > 0, "child pid %d", (int)*child);
    close(fds[0]);
    return pid;
}

/* 1 once pid is gone (or a zombie), polled every 20 ms at most `polls` times; 0 if it is still there. */
static int wait_gone(pid_t pid, int polls) {
    int gone = 0;
    for (int i = 0; i < polls && !gone; i++) {
        gone = gone_or_zombie(pid);
        if (!gone) usleep(20000);
    }
    return gone;
}

/* Signal cases run in a subprocess of their own: the first signal a process gets stays recorded. */
static int signal_case(int second, int check_signal) {
    pid_t pid = fork();
    if (pid == 0) {
        isolate_signals_install();
        isolate_defer(1);       /* a sweep: the parent stops between runs */
        isolate_result_t r;
        char err[256];
        pid_t me = getpid();
        if (fork() == 0) {      /* the user: SIGTERM to the parent once the run is under way, twice if asked */
            usleep(200000);
            kill(me, SIGTERM);
            if (second) { usleep(200000); kill(me, SIGTERM); }
            _exit(0);
        }
        int rc = isolate_run(child_steps, &check_signal, 30, NULL, NULL, &r, err, sizeof err);
        while (wait(NULL) > 0) {}
        if (rc) _exit(1);
        if (!second) _exit(r.interrupted == SIGTERM && r.exit_code == 143 && r.signal == 0 ? 0 : 2);
        char why[600];
        isolate_describe(&r, 30, why, sizeof why);
        _exit(r.interrupted == SIGTERM && r.signal == SIGKILL && isolate_status(&r) == RUN_INTERRUPTED &&
              strstr(why, "SIGTERM twice") ? 0 : 3);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static void test_signals(void) {
    int rc = signal_case(0, 1);
    EXPECT(rc == 0, "SIGTERM: passed to the child, which stopped at a step boundary with 143 (case rc %d)", rc);
    rc = signal_case(1, 0);
    EXPECT(rc == 0, "a second SIGTERM kills a child that does not stop (case rc %d)", rc);
    /* A process without a child, a checkpoint ahead: the second signal ends it at once with 128 + signal. */
    pid_t pid = fork();
    if (pid == 0) {
        isolate_signals_install();
        isolate_defer(1);
        raise(SIGTERM);
        if (isolate_signal() != SIGTERM) _exit(1);
        raise(SIGTERM);
        _exit(2);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    EXPECT(WIFEXITED(status) && WEXITSTATUS(status) == 143, "no child: second SIGTERM exits 143 (status %d)",
           WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    /* No checkpoint ahead (setup, data loading on a hung file system): the first signal ends it, 143, at once. */
    pid = fork();
    if (pid == 0) {
        isolate_signals_install();
        raise(SIGTERM);
        _exit(1);
    }
    waitpid(pid, &status, 0);
    EXPECT(WIFEXITED(status) && WEXITSTATUS(status) == 143, "setup: the first SIGTERM exits 143 (status %d)",
           WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    /* ... and with a child (the device probe, the benchmark) it takes the child along: both gone at once. */
    pid_t child = 0;
    pid = fork_sweep_with_child(1, &child);
    if (pid < 0) return;
    kill(pid, SIGTERM);
    waitpid(pid, &status, 0);
    int gone = wait_gone(child, 250);   /* 5 s at most: generous on a loaded machine */
    EXPECT(WIFEXITED(status) && WEXITSTATUS(status) == 143 && gone, "setup with a child: parent 143 (status %d), "
           "child gone (%d)", WIFEXITED(status) ? WEXITSTATUS(status) : -1, gone);
    if (!gone && child > 0) kill(child, SIGKILL);
}

/* A signal during a step that hangs: the parent's deadline kills the silent child, and the verdict is the signal's
 * (interrupted: --resume runs it again), not the deadline's. In a subprocess: the signal stays recorded. */
static void test_signal_in_hung_step(void) {
    pid_t pid = fork();
    if (pid == 0) {
        isolate_signals_install();
        isolate_defer(1);
        pid_t me = getpid();
        if (fork() == 0) {
            usleep(200000);
            kill(me, SIGTERM);
            _exit(0);
        }
        isolate_result_t r;
        char err[64], why[600];
        int rc = isolate_run(child_hung_step, NULL, 1.0, NULL, NULL, &r, err, sizeof err);
        while (wait(NULL) > 0) {}
        isolate_describe(&r, 1.0, why, sizeof why);
        _exit(rc == 0 && r.timed_out && r.interrupted == SIGTERM && isolate_status(&r) == RUN_INTERRUPTED &&
              strstr(why, "SIGTERM, then no progress for 1 s") ? 0 : 2);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    EXPECT(WIFEXITED(status) && WEXITSTATUS(status) == 0, "signal in a hung step: interrupted, not timeout (rc %d)",
           WIFEXITED(status) ? WEXITSTATUS(status) : -1);
}

/* The deadline's SIGKILL, and after it: a child that died while a process it started holds the pipe is reaped (no
 * EOF ever comes); a child that outlives its kill (stuck in a driver call: a test plays it with a signal it survives)
 * is given up after the grace, said so, its pid given. In subprocesses with an alarm: the code before this hung. */
static void test_kill_grace(void) {
    pid_t pid = fork();
    if (pid == 0) {
        alarm(20);
        isolate_result_t r;
        char err[64];
        int holder = 0;
        int rc = isolate_run(child_leaves_holder, NULL, 0.5, on_holder, &holder, &r, err, sizeof err);
        if (holder > 0) kill(holder, SIGKILL);
        _exit(rc == 0 && r.timed_out && !r.unkillable && r.signal == SIGKILL ? 0 : 2);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    EXPECT(WIFEXITED(status) && WEXITSTATUS(status) == 0, "a dead child whose pipe another process holds is reaped "
           "(status %d: 14 is the alarm of a hang)", WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));

    pid = fork();
    if (pid == 0) {
        alarm(20);
        isolate_test_kill(SIGCONT, 1.0);
        isolate_result_t r;
        char err[64], why[600];
        int rc = isolate_run(child_silent, NULL, 0.5, NULL, NULL, &r, err, sizeof err);
        isolate_describe(&r, 0.5, why, sizeof why);
        int ok = rc == 0 && r.timed_out && r.unkillable && r.pid > 0 && kill(r.pid, 0) == 0 &&
                 strstr(why, "(pid ") &&
                 strstr(why, "was sent SIGKILL and had not ended 1 s later: it may still hold the GPU") != NULL;
        if (r.pid > 0) kill(r.pid, SIGKILL);
        _exit(ok ? 0 : 2);
    }
    waitpid(pid, &status, 0);
    EXPECT(WIFEXITED(status) && WEXITSTATUS(status) == 0, "a child that outlives its kill is given up after the grace "
           "(status %d)", WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
}

/* A parent killed outright takes its child along (no orphan writing rows). */
static void test_orphan(void) {
    pid_t child = 0, parent = fork_sweep_with_child(0, &child);   /* the sweep is killed */
    if (parent < 0) return;
    kill(parent, SIGKILL);
    waitpid(parent, NULL, 0);
    int gone = wait_gone(child, 100);
    EXPECT(gone, "the child %d is gone within 2 s of its parent's SIGKILL", (int)child);
    if (!gone) kill(child, SIGKILL);
}

/* Rank 0's last words: the prepared row is written by the first signal's handler, once; disarmed, nothing. */
static void test_last_words(void) {
    char path[] = "/tmp/test_isolate_words.XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0) { EXPECT(0, "mkstemp"); return; }
    pid_t pid = fork();
    if (pid == 0) {
        isolate_signals_install();
        isolate_defer(1);       /* a rank in its run */
        static const char row[] = "run-1,interrupted\n";
        isolate_last_words(fd, row, sizeof row - 1);
        isolate_last_words(-1, NULL, 0);        /* disarmed and armed again, as every epoch does */
        isolate_last_words(fd, row, sizeof row - 1);
        int before = isolate_last_words_spoken();
        raise(SIGTERM);
        _exit(!before && isolate_last_words_spoken() && isolate_signal() == SIGTERM ? 0 : 1);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    EXPECT(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the handler spoke once (status %d)", status);
    size_t len;
    char *text = test_slurp(path, &len);
    EXPECT(text && strcmp(text, "run-1,interrupted\n") == 0, "the prepared row, whole: '%s'", text ? text : "");
    free(text);
    close(fd);
    unlink(path);
}

int main(void) {
    test_children();
    test_last_words();
    test_orphan();
#ifndef SCALING_NO_FAULT_INJECTION
    test_fault_parse();
    test_fault_injection();
#else
    test_no_fault_injection();
#endif
    test_signals();
    test_signal_in_hung_step();
    test_kill_grace();
    return test_summary();
}
