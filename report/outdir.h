/* outdir.h — the report's output folder, always one study's: a report locks it (a second waits), writes its whole
 * set into a private folder inside it, then removes the set the previous report wrote (by the list it left) and
 * moves the new one in, REPORT.md last; files it did not write are never touched. SIGINT, SIGTERM and SIGHUP are held
 * from outdir_begin to outdir_end, which removes the private folder before a held signal ends the process. */
#pragma once
#include <limits.h>
#include <signal.h>
#include <stddef.h>

typedef struct {
    char out[PATH_MAX];         /* the folder as named */
    char tmp[PATH_MAX];         /* the private folder the set is written into ("" once gone) */
    int fd;                     /* out, open and locked (flock), or -1 */
    sigset_t mask;              /* the signal mask before outdir_begin */
    int blocked;
} outdir_t;

/* 1 for a name the report writes in its folder (REPORT.md, summary.csv, *.dat, *.png, *.svg): the only names it
 * replaces or removes there. */
int outdir_writes(const char *name);
/* Locks the existing folder out (waiting, with one stderr line, while another report holds it), holds the signals,
 * removes what a killed report left, and makes the private folder. 0, or 1 with one line in err. */
int outdir_begin(outdir_t *d, const char *out, char *err, size_t errlen);
/* 1 when SIGINT, SIGTERM or SIGHUP is waiting: the report stops at its next step and leaves the folder as it was. */
int outdir_interrupted(void);
/* The previous set removed and the private folder's files moved in. 0, or 1 with one line in err (interrupted: the
 * folder is left as it was). */
int outdir_commit(outdir_t *d, char *err, size_t errlen);
/* The private folder removed (with what is left in it), the lock released, the signal mask restored: a signal held
 * since outdir_begin is delivered now. */
void outdir_end(outdir_t *d);
