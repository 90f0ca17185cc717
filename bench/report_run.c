/* report_run.c — runs `scaling report` on a study CSV in a child process: argv straight to posix_spawn (no shell, so
 * any path is safe), its exit status checked, the CSV only ever read. */
#include "report_run.h"
#include "../engine/errmsg.h"
#include "faults/isolate.h"

#include <errno.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

int report_run(const char *script, const char *csv, const char *out_dir, char *err, size_t errlen) {
    char *argv[] = {(char *)script, "report", (char *)csv, "--out", (char *)out_dir, NULL};
    posix_spawn_file_actions_t fa;
    if (posix_spawn_file_actions_init(&fa) != 0) return errmsg(-1, err, errlen, "%s: cannot start: out of memory", script);
    if (posix_spawn_file_actions_adddup2(&fa, STDERR_FILENO, STDOUT_FILENO) != 0) {
        posix_spawn_file_actions_destroy(&fa);
        return errmsg(-1, err, errlen, "%s: cannot start: out of memory", script);
    }
    /* The report gets SIGPIPE's default back (scaling ignores it: a closed stdout is no fault of a study). */
    posix_spawnattr_t at;
    sigset_t def;
    sigemptyset(&def);
    sigaddset(&def, SIGPIPE);
    if (posix_spawnattr_init(&at) != 0 || posix_spawnattr_setsigdefault(&at, &def) != 0 ||
        posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGDEF) != 0) {
        posix_spawn_file_actions_destroy(&fa);
        return errmsg(-1, err, errlen, "%s: cannot start: out of memory", script);
    }
    fflush(NULL);   /* our buffered output first, so it stays in order with the report's */
    pid_t pid;
    int rc = posix_spawn(&pid, script, &fa, &at, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&at);
    if (rc != 0) return errmsg(-1, err, errlen, "%s: cannot start: %s", script, strerror(rc));
    isolate_track_child((int)pid);      /* a signal now ends the report with the command */
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) {
            isolate_track_child(0);
            return errmsg(-1, err, errlen, "%s: waitpid: %s", script, strerror(errno));
        }
    isolate_track_child(0);
    if (WIFEXITED(status)) {
        if (WEXITSTATUS(status)) errmsg(0, err, errlen, "%s exited with status %d", script, WEXITSTATUS(status));
        return WEXITSTATUS(status);
    }
    return errmsg(-1, err, errlen, "%s was killed by signal %d", script, WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}
