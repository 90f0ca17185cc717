/* check.c — the failure path of the CHECK_* macros: one line naming host, pid, file:line, call and reason, on
 * stderr and, where a parent isolates this run, to that parent as the run's reason. Kept out of line so the macros
 * stay small in hot code. */
#include "check.h"
#include "process.h"
#include <string.h>
#include <unistd.h>

void check_report(const char *line) {
    const char *s = getenv("SCALING_REPORT_FD");
    if (!s || !*s) return;
    int fd = atoi(s);
    size_t n = strlen(line);
    /* One write per line: under PIPE_BUF, so the parent never reads half a line. */
    if (fd > 2 && n < 4096) {
        ssize_t w = write(fd, line, n);
        (void)w;
    }
}

void check_on_fail(void (*fn)(const char *reason, void *ctx), void *ctx) {
    process_state.fail_hook.fn = fn;
    process_state.fail_hook.ctx = ctx;
}

void check_fail(const char *file, int line, const char *what, const char *why) {
    char host[64] = "?", msg[1024];
    gethostname(host, sizeof host - 1);
    fprintf(stderr, "[%s pid %d] %s:%d: %s -> %s\n", host, (int)getpid(), file, line, what, why);
    fflush(stderr);
    /* The reason cell: file:line and the error; the call itself is cut to keep the row one readable line. */
    snprintf(msg, sizeof msg, "reason %s:%d: %.200s -> %.300s\n", file, line, what, why);
    for (char *p = msg + 7; *p && p[1]; p++)
        if (*p == '\n' || *p == '\r') *p = ' ';
    check_report(msg);
    process_fail_hook_t hook = process_state.fail_hook;
    process_state.fail_hook.fn = NULL;   /* a failure inside the hook exits plainly */
    if (hook.fn) {
        msg[strlen(msg) - 1] = '\0';
        hook.fn(msg + 7, hook.ctx);
    }
    exit(1);
}
