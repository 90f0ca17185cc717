/* check.c — the failure path of the CHECK_* macros: one line naming host, pid, file:line, call and reason.
 * Kept out of line so the macros stay small in hot code. */
#include "check.h"
#include <unistd.h>

void check_fail(const char *file, int line, const char *what, const char *why) {
    char host[64] = "?";
    gethostname(host, sizeof host - 1);
    fprintf(stderr, "[%s pid %d] %s:%d: %s -> %s\n", host, (int)getpid(), file, line, what, why);
    fflush(stderr);
    exit(1);
}
