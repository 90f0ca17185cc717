/* report_run.c — finds scripts/report.sh for the running binary and runs it on a study CSV: argv straight to
 * posix_spawn (no shell, so any path is safe), its exit status checked, the CSV only ever read. */
#include "report_run.h"
#include "../engine/errmsg.h"

#include <errno.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

#define REPORT_SCRIPT "scripts/report.sh"

int report_find(char *path, size_t len, const char *source_dir, const char *exe, char *err, size_t errlen) {
    char tried[2][1024] = {"", ""};
    if (source_dir && *source_dir) {
        snprintf(tried[0], sizeof tried[0], "%s/" REPORT_SCRIPT, source_dir);
        if (access(tried[0], X_OK) == 0) return snprintf(path, len, "%s", tried[0]) < (int)len ? 0 : -1;
    }
    const char *slash = exe ? strrchr(exe, '/') : NULL;
    if (slash) {
        snprintf(tried[1], sizeof tried[1], "%.*s/../" REPORT_SCRIPT, (int)(slash - exe), exe);
        if (access(tried[1], X_OK) == 0) return snprintf(path, len, "%s", tried[1]) < (int)len ? 0 : -1;
    }
    return errmsg(-1, err, errlen, REPORT_SCRIPT " not found (looked for %s%s%s)", tried[0][0] ? tried[0] : "",
                  tried[0][0] && tried[1][0] ? " and " : "", tried[1][0] ? tried[1] : "");
}

int report_run(const char *script, const char *csv, const char *out_dir, char *err, size_t errlen) {
    char *argv[] = {(char *)script, (char *)csv, "--out", (char *)out_dir, NULL};
    posix_spawn_file_actions_t fa;
    if (posix_spawn_file_actions_init(&fa) != 0) return errmsg(-1, err, errlen, "%s: cannot start: out of memory", script);
    if (posix_spawn_file_actions_adddup2(&fa, STDERR_FILENO, STDOUT_FILENO) != 0) {
        posix_spawn_file_actions_destroy(&fa);
        return errmsg(-1, err, errlen, "%s: cannot start: out of memory", script);
    }
    fflush(NULL);   /* our buffered output first, so it stays in order with the script's */
    pid_t pid;
    int rc = posix_spawn(&pid, script, &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0) return errmsg(-1, err, errlen, "%s: cannot start: %s", script, strerror(rc));
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) return errmsg(-1, err, errlen, "%s: waitpid: %s", script, strerror(errno));
    if (WIFEXITED(status)) {
        if (WEXITSTATUS(status)) errmsg(0, err, errlen, "%s exited with status %d", script, WEXITSTATUS(status));
        return WEXITSTATUS(status);
    }
    return errmsg(-1, err, errlen, "%s was killed by signal %d", script, WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}
